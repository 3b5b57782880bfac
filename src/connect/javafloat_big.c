/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The big naturals of javafloat's slow paths (javafloat_int.h): exact B, S and M for Java 17's
 * FloatingDecimal when 64 bits do not hold them, and the exact bounds of the shortest form.
 */
#include "javafloat_int.h"

#include <stdlib.h>
#include <string.h>

/* 5^i, i = 0..26: every power of five below 2^63. */
const uint64_t javafloat_pow5[27] = {
	1ULL,
	5ULL,
	25ULL,
	125ULL,
	625ULL,
	3125ULL,
	15625ULL,
	78125ULL,
	390625ULL,
	1953125ULL,
	9765625ULL,
	48828125ULL,
	244140625ULL,
	1220703125ULL,
	6103515625ULL,
	30517578125ULL,
	152587890625ULL,
	762939453125ULL,
	3814697265625ULL,
	19073486328125ULL,
	95367431640625ULL,
	476837158203125ULL,
	2384185791015625ULL,
	11920928955078125ULL,
	59604644775390625ULL,
	298023223876953125ULL,
	1490116119384765625ULL,
};

static void
big_trim(struct big *a)
{
	while (a->n > 0 && a->w[a->n - 1] == 0) {
		a->n--;
	}
}

void
javafloat_big_set(struct big *a, uint64_t v)
{
	a->w[0] = (uint32_t)v;
	a->w[1] = (uint32_t)(v >> 32);
	a->n = 2;
	big_trim(a);
}

void
javafloat_big_mul_small(struct big *a, uint32_t m)
{
	uint64_t carry = 0;

	for (int i = 0; i < a->n; i++) {
		carry += (uint64_t)a->w[i] * m;
		a->w[i] = (uint32_t)carry;
		carry >>= 32;
	}
	if (carry) {
		if (a->n == BIG_LIMBS) {
			abort();
		}
		a->w[a->n++] = (uint32_t)carry;
	}
}

/* a *= b */
void
javafloat_big_mul_big(struct big *a, const struct big *b)
{
	struct big r;

	memset(r.w, 0, sizeof(r.w));
	if (a->n + b->n > BIG_LIMBS) {
		abort(); /* cannot happen for IEEE doubles; a silent truncation would be worse */
	}
	for (int i = 0; i < a->n; i++) {
		uint64_t carry = 0;

		for (int j = 0; j < b->n; j++) {
			carry += (uint64_t)a->w[i] * b->w[j] + r.w[i + j];
			r.w[i + j] = (uint32_t)carry;
			carry >>= 32;
		}
		r.w[i + b->n] = (uint32_t)carry;
	}
	r.n = a->n + b->n;
	big_trim(&r);
	*a = r;
}

void
javafloat_big_shl(struct big *a, int s)
{
	int limbs = s / 32, bits = s % 32;

	if (a->n == 0 || s == 0) {
		return;
	}
	if (a->n + limbs + 1 > BIG_LIMBS) {
		abort(); /* cannot happen for IEEE doubles; a silent truncation would be worse */
	}
	a->w[a->n + limbs] = 0;
	for (int i = a->n - 1; i >= 0; i--) {
		uint32_t v = a->w[i];

		if (bits) {
			a->w[i + limbs + 1] |= v >> (32 - bits);
			a->w[i + limbs] = v << bits;
		} else {
			a->w[i + limbs] = v;
		}
	}
	for (int i = 0; i < limbs; i++) {
		a->w[i] = 0;
	}
	a->n += limbs + 1;
	big_trim(a);
}

/* a = v * 5^e5 * 2^e2 */
void
javafloat_big_pow52(struct big *a, uint64_t v, int e5, int e2)
{
	javafloat_big_set(a, v);
	while (e5 >= 13) {
		javafloat_big_mul_small(a,
					1220703125u); /* 5^13, the largest power of 5 in 32 bits */
		e5 -= 13;
	}
	if (e5 > 0) {
		javafloat_big_mul_small(a, (uint32_t)javafloat_pow5[e5]);
	}
	javafloat_big_shl(a, e2);
}

void
javafloat_big_add(struct big *r, const struct big *a, const struct big *b)
{
	const struct big *lo = a->n < b->n ? a : b, *hi = a->n < b->n ? b : a;
	uint64_t carry = 0;
	int i;

	for (i = 0; i < hi->n; i++) {
		carry += (uint64_t)hi->w[i] + (i < lo->n ? lo->w[i] : 0);
		r->w[i] = (uint32_t)carry;
		carry >>= 32;
	}
	r->n = hi->n;
	if (carry) {
		if (r->n == BIG_LIMBS) {
			abort();
		}
		r->w[r->n++] = (uint32_t)carry;
	}
}

/* a -= b; requires a >= b */
static void
big_sub(struct big *a, const struct big *b)
{
	int64_t borrow = 0;

	for (int i = 0; i < a->n; i++) {
		int64_t d = (int64_t)a->w[i] - (i < b->n ? b->w[i] : 0) - borrow;

		borrow = d < 0;
		a->w[i] = (uint32_t)(d + (borrow << 32));
	}
	big_trim(a);
}

static int
big_bitlen(const struct big *a)
{
	if (a->n == 0) {
		return 0;
	}
	return (a->n - 1) * 32 + 32 - __builtin_clz(a->w[a->n - 1]);
}

/* Bits [s, s + 64) of a. */
static uint64_t
big_bits_at(const struct big *a, int s)
{
	uint64_t r = 0;

	for (int k = 0; k < 64; k += 32) {
		int bit = s + k, i = bit / 32, sh = bit % 32;
		uint64_t limb = 0;

		if (i < a->n) {
			limb = a->w[i] >> sh;
			if (sh && i + 1 < a->n) {
				limb |= (uint64_t)a->w[i + 1] << (32 - sh);
			}
		}
		r |= (limb & 0xFFFFFFFFu) << k;
	}
	return r;
}

/*
 * One digit step: returns q = floor(b / s) and sets b = 10 * (b mod s). q is estimated from
 * the top 64 bits of both, aligned on s's top, which can only overshoot by one.
 */
int
javafloat_big_quorem10(struct big *b, const struct big *s)
{
	int sh = big_bitlen(s) > 60 ? big_bitlen(s) - 60 : 0;
	uint64_t q = big_bits_at(b, sh) / big_bits_at(s, sh);

	if (q) {
		struct big t = *s;

		javafloat_big_mul_small(&t, (uint32_t)q);
		while (javafloat_big_cmp(&t, b) > 0) {
			big_sub(&t, s);
			q--;
		}
		big_sub(b, &t);
	}
	javafloat_big_mul_small(b, 10);
	return (int)q;
}
