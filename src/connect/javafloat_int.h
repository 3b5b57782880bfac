/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_JAVAFLOAT_INT_H
#define OUTBOXD_JAVAFLOAT_INT_H

/*
 * Private to javafloat: javafloat.c (Java 17's FloatingDecimal, and the decimal layout both
 * generations share), javafloat_shortest.c (Java 19+'s shortest form) and javafloat_big.c (the
 * big naturals both use). Calls go one way: shortest -> javafloat -> big, shortest -> big.
 */

#include <stdbool.h>
#include <stdint.h>

#include "outboxd/util/buf.h"

/* A decimal 0.d[0] d[1] ... d[n-1] x 10^exp10, digits in ASCII, possibly with trailing '0'. */
struct jf_dec {
	char d[32];
	int n;
	int exp10;
};

/*
 * javafloat_add_digit() - append digit @q to @r (silently full at 32 digits). Inline: both
 * digit generators call it once per digit.
 */
static inline void
javafloat_add_digit(struct jf_dec *r, int q)
{
	if (r->n < (int)sizeof(r->d)) {
		r->d[r->n++] = (char)('0' + q);
	}
}

/* javafloat_round_up() - add one to the last digit; a carry out of all nines keeps the count. */
void javafloat_round_up(struct jf_dec *r);

/*
 * javafloat_layout() - append @r as Java prints it: plain for 10^-3 <= |x| < 10^7, else
 * d.dddE[-]n, at least one digit after the '.'.
 */
void javafloat_layout(struct buf *b, bool neg, const struct jf_dec *r);

/* javafloat_special() - append NaN, an infinity or a signed zero; false if @x is none. */
bool javafloat_special(double x, struct buf *b);

/* 5^i, i = 0..26: every power of five below 2^63 (javafloat_big.c). */
extern const uint64_t javafloat_pow5[27];

/*
 * Big naturals for the slow paths: little-endian 32-bit limbs. The largest value met is about
 * 2^1140 (four times the smallest subnormal scaled by 10^324, times 10), so 48 limbs leave room.
 */
#define BIG_LIMBS 48

struct big {
	uint32_t w[BIG_LIMBS];
	int n; /* limbs in use; w[n - 1] != 0 unless n == 0 */
};

/* javafloat_big_set() - a = v. */
void javafloat_big_set(struct big *a, uint64_t v);

/* javafloat_big_mul_small() - a *= m. */
void javafloat_big_mul_small(struct big *a, uint32_t m);

/* javafloat_big_mul_big() - a *= b. */
void javafloat_big_mul_big(struct big *a, const struct big *b);

/* javafloat_big_shl() - a <<= s. */
void javafloat_big_shl(struct big *a, int s);

/* javafloat_big_pow52() - a = v * 5^e5 * 2^e2. */
void javafloat_big_pow52(struct big *a, uint64_t v, int e5, int e2);

/*
 * javafloat_big_cmp() - -1, 0 or 1 as a <, == or > b. Inline: the digit loops of both
 * generators compare on every digit.
 */
static inline int
javafloat_big_cmp(const struct big *a, const struct big *b)
{
	if (a->n != b->n) {
		return a->n < b->n ? -1 : 1;
	}
	for (int i = a->n - 1; i >= 0; i--) {
		if (a->w[i] != b->w[i]) {
			return a->w[i] < b->w[i] ? -1 : 1;
		}
	}
	return 0;
}

/* javafloat_big_add() - r = a + b. */
void javafloat_big_add(struct big *r, const struct big *a, const struct big *b);

/* javafloat_big_quorem10() - returns floor(b / s) (a digit) and sets b = 10 * (b mod s). */
int javafloat_big_quorem10(struct big *b, const struct big *s);

#endif
