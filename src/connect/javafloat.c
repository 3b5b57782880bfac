/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/connect/javafloat.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
 */

/* A decimal 0.d[0] d[1] ... d[n-1] x 10^exp10, digits in ASCII, possibly with trailing '0'. */
struct jf_dec {
	char d[32];
	int n;
	int exp10;
};

/* 5^i, i = 0..26: every power of five below 2^63. */
static const uint64_t pow5_u64[27] = {
	1ULL, 5ULL, 25ULL, 125ULL, 625ULL, 3125ULL, 15625ULL, 78125ULL, 390625ULL, 1953125ULL,
	9765625ULL, 48828125ULL, 244140625ULL, 1220703125ULL, 6103515625ULL, 30517578125ULL,
	152587890625ULL, 762939453125ULL, 3814697265625ULL, 19073486328125ULL,
	95367431640625ULL, 476837158203125ULL, 2384185791015625ULL, 11920928955078125ULL,
	59604644775390625ULL, 298023223876953125ULL, 1490116119384765625ULL,
};

/*
 * ceil(log2(5^i)) for i = 0..26. Java sizes its arithmetic with this table and with 3 * i
 * beyond it (a loose bound), so both are kept as they are rather than computed exactly.
 */
static const int pow5_bits[27] = {
	0, 3, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28, 31, 33, 35, 38, 40, 42, 45, 47, 49, 52,
	54, 56, 59, 61,
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
 * Big naturals for the slow paths: little-endian 32-bit limbs. The largest value met is about
 * 2^1140 (four times the smallest subnormal scaled by 10^324, times 10), so 48 limbs leave room.
 */
#define BIG_LIMBS 48

struct big {
	uint32_t w[BIG_LIMBS];
	int n; /* limbs in use; w[n - 1] != 0 unless n == 0 */
};

static void
big_trim(struct big *a)
{
	while (a->n > 0 && a->w[a->n - 1] == 0) {
		a->n--;
	}
}

static void
big_set(struct big *a, uint64_t v)
{
	a->w[0] = (uint32_t)v;
	a->w[1] = (uint32_t)(v >> 32);
	a->n = 2;
	big_trim(a);
}

static void
big_mul_small(struct big *a, uint32_t m)
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
static void
big_mul_big(struct big *a, const struct big *b)
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

static void
big_shl(struct big *a, int s)
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
static void
big_pow52(struct big *a, uint64_t v, int e5, int e2)
{
	big_set(a, v);
	while (e5 >= 13) {
		big_mul_small(a, 1220703125u); /* 5^13, the largest power of 5 in 32 bits */
		e5 -= 13;
	}
	if (e5 > 0) {
		big_mul_small(a, (uint32_t)pow5_u64[e5]);
	}
	big_shl(a, e2);
}

static int
big_cmp(const struct big *a, const struct big *b)
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

static void
big_add(struct big *r, const struct big *a, const struct big *b)
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
static int
big_quorem10(struct big *b, const struct big *s)
{
	int sh = big_bitlen(s) > 60 ? big_bitlen(s) - 60 : 0;
	uint64_t q = big_bits_at(b, sh) / big_bits_at(s, sh);

	if (q) {
		struct big t = *s;

		big_mul_small(&t, (uint32_t)q);
		while (big_cmp(&t, b) > 0) {
			big_sub(&t, s);
			q--;
		}
		big_sub(b, &t);
	}
	big_mul_small(b, 10);
	return (int)q;
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

static void
add_digit(struct jf_dec *r, int q)
{
	if (r->n < (int)sizeof(r->d)) {
		r->d[r->n++] = (char)('0' + q);
	}
}

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
		add_digit(r, q);
	}
	if (g->e10 < -3 || g->e10 >= 8) {
		g->low = g->high = false;
	}
}

static void
gen_int32(struct jf_dec *r, struct jf_gen *g, uint64_t f, int B5, int B2, int S5, int S2,
	  int M2)
{
	int32_t b = j32(((uint32_t)f * (uint32_t)pow5_u64[B5]) << (B2 & 31));
	int32_t s = j32((uint32_t)pow5_u64[S5] << (S2 & 31));
	int32_t m = j32((uint32_t)pow5_u64[B5] << (M2 & 31));
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
		add_digit(r, q);
	}
	{
		int32_t diff = j32(((uint32_t)b << 1) - (uint32_t)tens);

		g->lowdiff = diff > 0 ? 1 : diff < 0 ? -1 : 0;
	}
}

static void
gen_int64(struct jf_dec *r, struct jf_gen *g, uint64_t f, int B5, int B2, int S5, int S2,
	  int M2)
{
	int64_t b = j64((f * pow5_u64[B5]) << (B2 & 63));
	int64_t s = j64(pow5_u64[S5] << (S2 & 63));
	int64_t m = j64(pow5_u64[B5] << (M2 & 63));
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
		add_digit(r, q);
	}
	{
		int64_t diff = j64(((uint64_t)b << 1) - (uint64_t)tens);

		g->lowdiff = diff > 0 ? 1 : diff < 0 ? -1 : 0;
	}
}

/* The exact variant; note its "high" test is B + M >= 10S where the others use ">". */
static void
gen_big(struct jf_dec *r, struct jf_gen *g, uint64_t f, int B5, int B2, int S5, int S2,
	int M2)
{
	struct big b, s, m, tens, sum;
	int q;

	big_pow52(&s, 1, S5, S2);
	big_pow52(&b, f, B5, B2);
	big_pow52(&m, 1, B5 + 1, M2 + 1); /* M already times 10, like B after the first step */
	big_pow52(&tens, 1, S5 + 1, S2 + 1);

	q = big_quorem10(&b, &s);
	g->low = big_cmp(&b, &m) < 0;
	big_add(&sum, &b, &m);
	g->high = big_cmp(&tens, &sum) <= 0;
	first_digit(r, g, q);
	while (!g->low && !g->high) {
		q = big_quorem10(&b, &s);
		big_mul_small(&m, 10);
		g->low = big_cmp(&b, &m) < 0;
		big_add(&sum, &b, &m);
		g->high = big_cmp(&tens, &sum) <= 0;
		add_digit(r, q);
	}
	g->lowdiff = 0;
	if (g->high && g->low) {
		big_shl(&b, 1);
		g->lowdiff = big_cmp(&b, &tens);
	}
}

/* Add one to the last digit; a carry out of all nines keeps the digit count ("100"). */
static void
round_up(struct jf_dec *r)
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
			round_up(r);
		}
	}
}

/* Java's layout: plain for 10^-3 <= |x| < 10^7, else d.dddE[-]n; at least one digit after '.'. */
static void
java_layout(struct buf *b, bool neg, const struct jf_dec *r)
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
static bool
special(double x, struct buf *b)
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

	if (special(x, b)) {
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
	java_layout(b, bits >> 63, &r);
}

void
javafloat_float_jdk17(float x, struct buf *b)
{
	struct jf_dec r;
	uint32_t bits, fract;
	int bexp, nsig;

	if (special(x, b)) {
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
	java_layout(b, bits >> 31, &r);
}

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
		big_pow52(&rem, c, 0, q + 1 + narrow);
		big_set(&s, 2u << narrow);
		big_pow52(&mp, 1, 0, q + narrow);
		big_pow52(&mm, 1, 0, q);
	} else {
		big_set(&rem, c << (1 + narrow));
		big_pow52(&s, 1, 0, 1 - q + narrow);
		big_set(&mp, 1u << narrow);
		big_set(&mm, 1);
	}
	if (k >= 0) {
		big_pow52(&tens, 1, k, k);
		big_mul_big(&s, &tens);
	} else {
		big_pow52(&tens, 1, -k, -k);
		big_mul_big(&rem, &tens);
		big_mul_big(&mp, &tens);
		big_mul_big(&mm, &tens);
	}
	/* the log10 estimate can be one off either way: make 1 <= rem / s < 10 */
	tens = s;
	big_mul_small(&tens, 10);
	if (big_cmp(&rem, &tens) >= 0) {
		s = tens;
		k++;
	} else if (big_cmp(&rem, &s) < 0) {
		big_mul_small(&rem, 10);
		big_mul_small(&mp, 10);
		big_mul_small(&mm, 10);
		k--;
	}
	tens = s;
	big_mul_small(&tens, 10);
	big_mul_small(&mp, 10);
	big_mul_small(&mm, 10);
	r->n = 0;
	r->exp10 = k + 1;
	for (;;) {
		d = big_quorem10(&rem, &s);
		lo = even ? big_cmp(&rem, &mm) <= 0 : big_cmp(&rem, &mm) < 0;
		big_add(&sum, &rem, &mp);
		hi = even ? big_cmp(&sum, &tens) >= 0 : big_cmp(&sum, &tens) > 0;
		add_digit(r, d);
		if (r->n >= 2 && (lo || hi)) {
			break;
		}
		big_mul_small(&mp, 10);
		big_mul_small(&mm, 10);
	}
	if (hi) {
		int c2 = 0;

		if (lo) {
			big_shl(&rem, 1);
			c2 = big_cmp(&rem, &tens);
		}
		if (!lo || c2 > 0 || (c2 == 0 && (d & 1))) {
			round_up(r);
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

	if (special(x, b)) {
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
	java_layout(b, bits >> 63, &r);
}

void
javafloat_float_shortest(float x, struct buf *b)
{
	struct jf_dec r;
	uint32_t bits, c;
	int bexp;

	if (special(x, b)) {
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
	java_layout(b, bits >> 31, &r);
}
