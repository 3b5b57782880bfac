/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Double.toString and Float.toString of Java 19 and later (outboxd.java.double.format=shortest);
 * the layout and the special values are Java 17's (javafloat.c).
 */
#include "outboxd/connect/javafloat.h"

#include <math.h>
#include <string.h>

#include "javafloat_int.h"

/*
 * Shortest form (Java 19+, JDK-4511638): among the decimals that round back to x (round half
 * even, so the bounds count when the significand is even), those of minimal length, or of
 * length two when one digit would do; the closest to x; on a tie the even last digit. This is
 * free-format digit generation (Steele & White, Burger & Dybvig) with exact bounds: digits of
 * x are produced until truncating or rounding up stays inside the bounds, and the first digit
 * is never allowed to stop it.
 */
static void
shortest_digits(uint64_t c, int q, bool narrow, double x, struct jf_dec *r)
{
	struct big rem, s, tens, mp, mm, sum;
	bool even = !(c & 1), lo, hi;
	int k = (int)floor(log10(x));
	int d;

	/* x = rem / s, half-gaps mp (up) and mm (down); the gap below 2^n is half as wide */
	if (q >= 0) {
		javafloat_big_pow52(&rem, c, 0, q + 1 + narrow);
		javafloat_big_set(&s, 2u << narrow);
		javafloat_big_pow52(&mp, 1, 0, q + narrow);
		javafloat_big_pow52(&mm, 1, 0, q);
	} else {
		javafloat_big_set(&rem, c << (1 + narrow));
		javafloat_big_pow52(&s, 1, 0, 1 - q + narrow);
		javafloat_big_set(&mp, 1u << narrow);
		javafloat_big_set(&mm, 1);
	}
	if (k >= 0) {
		javafloat_big_pow52(&tens, 1, k, k);
		javafloat_big_mul_big(&s, &tens);
	} else {
		javafloat_big_pow52(&tens, 1, -k, -k);
		javafloat_big_mul_big(&rem, &tens);
		javafloat_big_mul_big(&mp, &tens);
		javafloat_big_mul_big(&mm, &tens);
	}
	/* the log10 estimate can be one off either way: make 1 <= rem / s < 10 */
	tens = s;
	javafloat_big_mul_small(&tens, 10);
	if (javafloat_big_cmp(&rem, &tens) >= 0) {
		s = tens;
		k++;
	} else if (javafloat_big_cmp(&rem, &s) < 0) {
		javafloat_big_mul_small(&rem, 10);
		javafloat_big_mul_small(&mp, 10);
		javafloat_big_mul_small(&mm, 10);
		k--;
	}
	tens = s;
	javafloat_big_mul_small(&tens, 10);
	javafloat_big_mul_small(&mp, 10);
	javafloat_big_mul_small(&mm, 10);
	r->n = 0;
	r->exp10 = k + 1;
	for (;;) {
		d = javafloat_big_quorem10(&rem, &s);
		lo = even ? javafloat_big_cmp(&rem, &mm) <= 0 : javafloat_big_cmp(&rem, &mm) < 0;
		javafloat_big_add(&sum, &rem, &mp);
		hi = even ? javafloat_big_cmp(&sum, &tens) >= 0 :
			    javafloat_big_cmp(&sum, &tens) > 0;
		javafloat_add_digit(r, d);
		if (r->n >= 2 && (lo || hi)) {
			break;
		}
		javafloat_big_mul_small(&mp, 10);
		javafloat_big_mul_small(&mm, 10);
	}
	if (hi) {
		int c2 = 0;

		if (lo) {
			javafloat_big_shl(&rem, 1);
			c2 = javafloat_big_cmp(&rem, &tens);
		}
		if (!lo || c2 > 0 || (c2 == 0 && (d & 1))) {
			javafloat_round_up(r);
		}
	}
	while (r->n > 1 && r->d[r->n - 1] == '0') {
		r->n--;
	}
}

void
javafloat_double_shortest(double x, struct buf *b)
{
	struct jf_dec r;
	uint64_t bits, c;
	int bexp;

	if (javafloat_special(x, b)) {
		return;
	}
	memcpy(&bits, &x, sizeof(bits));
	bexp = (int)((bits >> 52) & 0x7FF);
	c = bits & 0x000FFFFFFFFFFFFFULL;
	if (bexp == 0) {
		shortest_digits(c, -1074, false, fabs(x), &r);
	} else {
		shortest_digits(c | 1ULL << 52, bexp - 1075, c == 0 && bexp > 1, fabs(x), &r);
	}
	javafloat_layout(b, bits >> 63, &r);
}

void
javafloat_float_shortest(float x, struct buf *b)
{
	struct jf_dec r;
	uint32_t bits, c;
	int bexp;

	if (javafloat_special(x, b)) {
		return;
	}
	memcpy(&bits, &x, sizeof(bits));
	bexp = (int)((bits >> 23) & 0xFF);
	c = bits & 0x7FFFFFu;
	if (bexp == 0) {
		shortest_digits(c, -149, false, fabs((double)x), &r);
	} else {
		shortest_digits(c | 1u << 23, bexp - 150, c == 0 && bexp > 1, fabs((double)x), &r);
	}
	javafloat_layout(b, bits >> 31, &r);
}
