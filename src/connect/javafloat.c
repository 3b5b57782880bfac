/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/connect/javafloat.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "javafloat_int.h"

/*
 * Java 17's Double.toString and Float.toString (jdk.internal.math.FloatingDecimal) are a
 * Steele & White / dtoa-style digit generator with shortcuts whose results are not always the
 * shortest or closest decimal. Kafka Connect on Java 17 writes those bytes, so this file
 * reproduces the behaviour, quirks included, from a description of the algorithm:
 *
 * 1. Integers below 2^63 (no fraction bits) are printed from their exact 64-bit value, with
 *    only as many low digits rounded off as the distance to 2^(exponent - precision) allows.
 *    That is why 2^53 and above print 17-19 digits ("2.82879384806159008E17").
 * 2. Everything else generates digits from B / S with a margin M (half an ulp), stopping at
 *    the first digit where the remainder is within M of either neighbour. The margin is
 *    symmetric: for a power of two Java uses the narrower lower half-gap on both sides, so
 *    those print longer than needed ("7.1202363472230444E-307").
 * 3. The decimal exponent comes from a floating-point estimate of log10 that may be one too
 *    high; a leading zero quotient is then dropped unless the value is within the margin of
 *    the next power of ten.
 * 4. Outside the plain range (10^-3 .. 10^7) a second digit is always developed before the
 *    stop test applies, because Java never prints "1E5".
 * 5. B, S and M are held in 32-bit ints, 64-bit longs or big integers depending on estimated
 *    sizes, and the three variants do not agree: the int and long ones test "B + M > 10S"
 *    strictly and detect overflow of M * 10^k only by its sign, the big one tests ">=". Which
 *    variant runs therefore changes the output (1e23 takes the long one and prints
 *    "9.999999999999999E22"), so the size estimates and the wrapping arithmetic are replicated
 *    exactly below.
 *
 * The big integers are javafloat_big.c's; the shortest form of Java 19+ is
 * javafloat_shortest.c, which shares the layout below (javafloat_int.h).
 */

/*
 * ceil(log2(5^i)) for i = 0..26. Java sizes its arithmetic with this table and with 3 * i
 * beyond it (a loose bound), so both are kept as they are rather than computed exactly.
 */
static const int pow5_bits[27] = {
	0,  3,	5,  7,	10, 12, 14, 17, 19, 21, 24, 26, 28, 31,
	33, 35, 38, 40, 42, 45, 47, 49, 52, 54, 56, 59, 61,
};

static int
n5bits(int i)
{
	return i < 27 ? pow5_bits[i] : i * 3;
}

/* Java int and long arithmetic wraps; do it in unsigned types and reinterpret. */
static int32_t
j32(uint32_t v)
{
	int32_t r;

	memcpy(&r, &v, sizeof(r));
	return r;
}

static int64_t
j64(uint64_t v)
{
	int64_t r;

	memcpy(&r, &v, sizeof(r));
	return r;
}

/*
 * floor(log10(v)) estimated the way Java does it, from a linear fit of log10 on [1, 2) plus
 * the binary exponent. It can be one too high (never too low) and the output depends on when
 * it is, so the arithmetic must be the same rounded IEEE double operations in the same order.
 * The products go through volatile so that no compiler fuses them into an FMA (GCC does with
 * -std=gnu11 -march=native, which would change the rounding).
 */
static int
estimate_exp10(uint64_t fract, int bexp)
{
	uint64_t bits = 0x3FF0000000000000ULL | (fract & 0x000FFFFFFFFFFFFFULL);
	volatile double p1, p2;
	double d2;

	memcpy(&d2, &bits, sizeof(d2));
	p1 = (d2 - 1.5) * 0.289529654;
	p2 = (double)bexp * 0.301029995663981;
	return (int)floor(p1 + 0.176091259 + p2);
}

/* floor(log10(2^p)) for 2 <= p < 64, else 0 (Java's table has no entries there). */
static int
pow2_exp10(int p)
{
	uint64_t v;
	int i = 0;

	if (p < 2 || p > 63) {
		return 0;
	}
	for (v = 1ULL << p; v >= 10; v /= 10) {
		i++;
	}
	return i;
}

/* Digits of the integer @v after rounding off @insig low digits half-up. */
static void
long_digits(struct jf_dec *r, uint64_t v, int insig)
{
	char tmp[24];
	int k = 0, e = 0;

	if (insig) {
		uint64_t p = 1;

		for (int i = 0; i < insig; i++) {
			p *= 10;
		}
		if (v % p >= p / 2) {
			v = v / p + 1;
		} else {
			v /= p;
		}
		e = insig;
	}
	while (v % 10 == 0) {
		v /= 10;
		e++;
	}
	while (v) {
		tmp[k++] = (char)('0' + v % 10);
		v /= 10;
	}
	for (int i = 0; i < k; i++) {
		r->d[i] = tmp[k - 1 - i];
	}
	r->n = k;
	r->exp10 = k + e;
}

/* The state of digit generation when it stops, shared by the three arithmetic variants. */
struct jf_gen {
	int e10;     /* decimal exponent of the first digit, after the leading-zero fix */
	bool low;    /* remainder below the margin: rounding down stays inside */
	bool high;   /* remainder plus margin reaches the next digit: rounding up stays inside */
	int lowdiff; /* sign of 2 * remainder - 10S, used when both hold */
};

/*
 * The first quotient can be 0 when the exponent estimate was one too high. Java drops it and
 * lowers the exponent unless the stop test already fired, in which case the '0' stays and the
 * final round-up turns it into a '1' (the value is within half an ulp of 10^e10).
 */
static void
first_digit(struct jf_dec *r, struct jf_gen *g, int q)
{
	if (q == 0 && !g->high) {
		g->e10--;
	} else {
		javafloat_add_digit(r, q);
	}
	if (g->e10 < -3 || g->e10 >= 8) {
		g->low = g->high = false;
	}
}

static void
gen_int32(struct jf_dec *r, struct jf_gen *g, uint64_t f, int B5, int B2, int S5, int S2, int M2)
{
	int32_t b = j32(((uint32_t)f * (uint32_t)javafloat_pow5[B5]) << (B2 & 31));
	int32_t s = j32((uint32_t)javafloat_pow5[S5] << (S2 & 31));
	int32_t m = j32((uint32_t)javafloat_pow5[B5] << (M2 & 31));
	int32_t tens = j32((uint32_t)s * 10u);
	int q;

	q = b / s;
	b = j32(10u * (uint32_t)(b % s));
	m = j32((uint32_t)m * 10u);
	g->low = b < m;
	g->high = j32((uint32_t)b + (uint32_t)m) > tens;
	first_digit(r, g, q);
	while (!g->low && !g->high) {
		q = b / s;
		b = j32(10u * (uint32_t)(b % s));
		m = j32((uint32_t)m * 10u);
		if (m > 0) {
			g->low = b < m;
			g->high = j32((uint32_t)b + (uint32_t)m) > tens;
		} else {
			/* Java takes a non-positive (overflowed) margin as "certainly stop" */
			g->low = g->high = true;
		}
		javafloat_add_digit(r, q);
	}
	{
		int32_t diff = j32(((uint32_t)b << 1) - (uint32_t)tens);

		g->lowdiff = diff > 0 ? 1 : diff < 0 ? -1 : 0;
	}
}

static void
gen_int64(struct jf_dec *r, struct jf_gen *g, uint64_t f, int B5, int B2, int S5, int S2, int M2)
{
	int64_t b = j64((f * javafloat_pow5[B5]) << (B2 & 63));
	int64_t s = j64(javafloat_pow5[S5] << (S2 & 63));
	int64_t m = j64(javafloat_pow5[B5] << (M2 & 63));
	int64_t tens = j64((uint64_t)s * 10u);
	int q;

	q = (int)(b / s);
	b = j64(10u * (uint64_t)(b % s));
	m = j64((uint64_t)m * 10u);
	g->low = b < m;
	g->high = j64((uint64_t)b + (uint64_t)m) > tens;
	first_digit(r, g, q);
	while (!g->low && !g->high) {
		q = (int)(b / s);
		b = j64(10u * (uint64_t)(b % s));
		m = j64((uint64_t)m * 10u);
		if (m > 0) {
			g->low = b < m;
			g->high = j64((uint64_t)b + (uint64_t)m) > tens;
		} else {
			g->low = g->high = true;
		}
		javafloat_add_digit(r, q);
	}
	{
		int64_t diff = j64(((uint64_t)b << 1) - (uint64_t)tens);

		g->lowdiff = diff > 0 ? 1 : diff < 0 ? -1 : 0;
	}
}

/* The exact variant; note its "high" test is B + M >= 10S where the others use ">". */
static void
gen_big(struct jf_dec *r, struct jf_gen *g, uint64_t f, int B5, int B2, int S5, int S2, int M2)
{
	struct big b, s, m, tens, sum;
	int q;

	javafloat_big_pow52(&s, 1, S5, S2);
	javafloat_big_pow52(&b, f, B5, B2);
	javafloat_big_pow52(&m, 1, B5 + 1,
			    M2 + 1); /* M already times 10, like B after the first step */
	javafloat_big_pow52(&tens, 1, S5 + 1, S2 + 1);

	q = javafloat_big_quorem10(&b, &s);
	g->low = javafloat_big_cmp(&b, &m) < 0;
	javafloat_big_add(&sum, &b, &m);
	g->high = javafloat_big_cmp(&tens, &sum) <= 0;
	first_digit(r, g, q);
	while (!g->low && !g->high) {
		q = javafloat_big_quorem10(&b, &s);
		javafloat_big_mul_small(&m, 10);
		g->low = javafloat_big_cmp(&b, &m) < 0;
		javafloat_big_add(&sum, &b, &m);
		g->high = javafloat_big_cmp(&tens, &sum) <= 0;
		javafloat_add_digit(r, q);
	}
	g->lowdiff = 0;
	if (g->high && g->low) {
		javafloat_big_shl(&b, 1);
		g->lowdiff = javafloat_big_cmp(&b, &tens);
	}
}

/* Add one to the last digit; a carry out of all nines keeps the digit count ("100"). */
void
javafloat_round_up(struct jf_dec *r)
{
	int i = r->n - 1;

	while (i > 0 && r->d[i] == '9') {
		r->d[i--] = '0';
	}
	if (r->d[i] == '9') {
		r->d[0] = '1';
		r->exp10++;
		return;
	}
	r->d[i]++;
}

/*
 * Digits of the positive finite value fract * 2^(bexp - 52), fract having bit 52 set;
 * @nsig is the precision in bits (53 or 24, fewer for subnormals).
 */
static void
fd_digits(struct jf_dec *r, int bexp, uint64_t fract, int nsig)
{
	int tz = __builtin_ctzll(fract);
	int nfract = 53 - tz;
	int ntiny = nfract - bexp - 1 > 0 ? nfract - bexp - 1 : 0;
	struct jf_gen g;
	int B5, B2, S5, S2, M2, c2, bbits, tensbits;
	uint64_t f;

	r->n = 0;
	if (ntiny == 0 && bexp <= 62) {
		int insig = bexp > nsig ? pow2_exp10(bexp - nsig - 1) : 0;

		f = bexp >= 52 ? fract << (bexp - 52) : fract >> (52 - bexp);
		long_digits(r, f, insig);
		return;
	}
	g.e10 = estimate_exp10(fract, bexp);
	B5 = g.e10 < 0 ? -g.e10 : 0;
	B2 = B5 + ntiny + bexp;
	S5 = g.e10 > 0 ? g.e10 : 0;
	S2 = S5 + ntiny;
	M2 = B2 - nsig;
	f = fract >> tz;
	B2 -= nfract - 1;
	c2 = B2 < S2 ? B2 : S2;
	B2 -= c2;
	S2 -= c2;
	M2 -= c2;
	/* below a power of two the lower gap is half as wide; Java narrows both sides */
	if (nfract == 1) {
		M2 -= 1;
	}
	if (M2 < 0) {
		B2 -= M2;
		S2 -= M2;
		M2 = 0;
	}
	bbits = nfract + B2 + n5bits(B5);
	tensbits = S2 + 1 + n5bits(S5 + 1);
	if (bbits < 32 && tensbits < 32) {
		gen_int32(r, &g, f, B5, B2, S5, S2, M2);
	} else if (bbits < 64 && tensbits < 64) {
		gen_int64(r, &g, f, B5, B2, S5, S2, M2);
	} else {
		gen_big(r, &g, f, B5, B2, S5, S2, M2);
	}
	r->exp10 = g.e10 + 1;
	if (g.high) {
		if (!g.low || g.lowdiff > 0 || (g.lowdiff == 0 && ((r->d[r->n - 1] - '0') & 1))) {
			javafloat_round_up(r);
		}
	}
}

/* Java's layout: plain for 10^-3 <= |x| < 10^7, else d.dddE[-]n; at least one digit after '.'. */
void
javafloat_layout(struct buf *b, bool neg, const struct jf_dec *r)
{
	int e = r->exp10;

	if (neg) {
		buf_add_char(b, '-');
	}
	if (e > 0 && e < 8) {
		if (r->n <= e) {
			buf_add(b, r->d, (size_t)r->n);
			for (int i = r->n; i < e; i++) {
				buf_add_char(b, '0');
			}
			buf_add_str(b, ".0");
		} else {
			buf_add(b, r->d, (size_t)e);
			buf_add_char(b, '.');
			buf_add(b, r->d + e, (size_t)(r->n - e));
		}
	} else if (e <= 0 && e > -3) {
		buf_add_str(b, "0.");
		for (int i = e; i < 0; i++) {
			buf_add_char(b, '0');
		}
		buf_add(b, r->d, (size_t)r->n);
	} else {
		buf_add_char(b, r->d[0]);
		buf_add_char(b, '.');
		if (r->n > 1) {
			buf_add(b, r->d + 1, (size_t)(r->n - 1));
		} else {
			buf_add_char(b, '0');
		}
		buf_add_fmt(b, "E%d", e - 1);
	}
}

/* NaN, infinities and zeros, common to both generations; true if @x was one of them. */
bool
javafloat_special(double x, struct buf *b)
{
	if (isnan(x)) {
		buf_add_str(b, "NaN");
		return true;
	}
	if (isinf(x)) {
		buf_add_str(b, x < 0 ? "-Infinity" : "Infinity");
		return true;
	}
	if (x == 0) {
		buf_add_str(b, signbit(x) ? "-0.0" : "0.0");
		return true;
	}
	return false;
}

void
javafloat_double_jdk17(double x, struct buf *b)
{
	struct jf_dec r;
	uint64_t bits, fract;
	int bexp, nsig;

	if (javafloat_special(x, b)) {
		return;
	}
	memcpy(&bits, &x, sizeof(bits));
	bexp = (int)((bits >> 52) & 0x7FF);
	fract = bits & 0x000FFFFFFFFFFFFFULL;
	if (bexp == 0) {
		/* subnormal: normalize, the precision is the bits actually present */
		int lz = __builtin_clzll(fract);

		fract <<= lz - 11;
		bexp = 1 - (lz - 11);
		nsig = 64 - lz;
	} else {
		fract |= 1ULL << 52;
		nsig = 53;
	}
	fd_digits(&r, bexp - 1023, fract, nsig);
	javafloat_layout(b, bits >> 63, &r);
}

void
javafloat_float_jdk17(float x, struct buf *b)
{
	struct jf_dec r;
	uint32_t bits, fract;
	int bexp, nsig;

	if (javafloat_special(x, b)) {
		return;
	}
	memcpy(&bits, &x, sizeof(bits));
	bexp = (int)((bits >> 23) & 0xFF);
	fract = bits & 0x7FFFFFu;
	if (bexp == 0) {
		int lz = __builtin_clz(fract);

		fract <<= lz - 8;
		bexp = 1 - (lz - 8);
		nsig = 32 - lz;
	} else {
		fract |= 1u << 23;
		nsig = 24;
	}
	/* Java runs floats through the double generator with the float's precision */
	fd_digits(&r, bexp - 127, (uint64_t)fract << 29, nsig);
	javafloat_layout(b, bits >> 31, &r);
}
