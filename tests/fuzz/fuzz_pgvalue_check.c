/* SPDX-License-Identifier: Apache-2.0 */
#include "fuzz_pgvalue_check.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgtype.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/utf8.h"

/*
 * The model: the text PostgreSQL writes under the session outboxd pins (DateStyle=ISO,
 * TimeZone=UTC, bytea_output=hex), read strictly. Where the model says the text is valid, the
 * conversion must succeed with the value the model computes; where it says invalid, the
 * conversion must fail with a message. Years are 1 to 7 digits' worth of AD (PostgreSQL's
 * dates end in 5874897, its timestamps in 294276).
 */

#define US_PER_DAY 86400000000LL

/* Wide enough for any 7-digit year in microseconds, so the model itself never overflows. */
__extension__ typedef __int128 i128;

static void
expect(bool ok)
{
	if (!ok) {
		abort();
	}
}

static bool
text_is(struct slice t, const char *s)
{
	return t.len == strlen(s) && memcmp(t.p, s, t.len) == 0;
}

/* --- numeric -------------------------------------------------------------------------------- */

/* Decimal digits of the magnitude of big-endian two's complement @b (minimal, else NULL). */
static char *
twos_to_digits(const unsigned char *b, size_t n, bool *ret_neg)
{
	unsigned char *mag = malloc(n ? n : 1);
	struct buf rev = BUF_INIT, out = BUF_INIT;
	bool neg = n && (b[0] & 0x80), carry = true, zero = false;

	expect(mag != NULL && n > 0);
	expect(n == 1 || !((b[0] == 0 && !(b[1] & 0x80)) || (b[0] == 0xff && (b[1] & 0x80))));
	for (size_t i = n; i-- > 0;) {
		mag[i] = neg ? (unsigned char)~b[i] : b[i];
		if (neg && carry) {
			carry = ++mag[i] == 0;
		}
	}
	while (!zero) {
		unsigned rem = 0;

		zero = true;
		for (size_t i = 0; i < n; i++) {
			unsigned cur = rem << 8 | mag[i];

			mag[i] = (unsigned char)(cur / 10);
			rem = cur % 10;
			zero = zero && mag[i] == 0;
		}
		buf_add_char(&rev, (char)('0' + rem));
	}
	for (size_t i = rev.len; i-- > 0;) {
		buf_add_char(&out, rev.data[i]);
	}
	buf_fini(&rev);
	free(mag);
	*ret_neg = neg;
	return buf_steal(&out);
}

/*
 * numeric text: [-]digits[.digits], as PostgreSQL writes it; the digits and the scale, trailing
 * fraction zeros stripped when the column has no scale (@want < 0), as Debezium's
 * VariableScaleDecimal.
 */
static bool
numeric_model(struct slice t, int want, struct buf *digits, int *ret_scale, bool *ret_neg)
{
	size_t i = 0, nd = 0, nd_whole = 0;
	int scale = 0;
	bool point = false;

	*ret_neg = t.len && t.p[0] == '-';
	if (*ret_neg) {
		i = 1;
	}
	for (; i < t.len; i++) {
		if (t.p[i] == '.' && !point && nd) {
			point = true;
			nd_whole = nd;
		} else if (t.p[i] >= '0' && t.p[i] <= '9') {
			if (digits->len || t.p[i] != '0') {
				buf_add_char(digits, t.p[i]);
			}
			nd++;
			scale += point;
		} else {
			return false;
		}
	}
	if (!nd || (point && nd == nd_whole) || (want >= 0 && scale > want)) {
		return false;
	}
	for (; want < 0 && scale > 0 && (!digits->len || digits->data[digits->len - 1] == '0');
	     scale--) {
		if (digits->len) {
			digits->data[--digits->len] = '\0'; /* buf_cstr() reads up to the NUL */
		}
	}
	for (; want >= 0 && scale < want; scale++) {
		if (digits->len) {
			buf_add_char(digits, '0');
		}
	}
	if (!digits->len) {
		buf_add_char(digits, '0');
		*ret_neg = false;
	}
	*ret_scale = scale;
	return true;
}

static void
check_numeric(const struct fuzz_pgvalue_case *c, struct slice t, const struct pgvalue *pv, int rc)
{
	int want = c->typmod >= 4 ? (((c->typmod - 4) & 0x7ff) ^ 1024) - 1024 : -1;
	struct buf digits = BUF_INIT;
	const struct cvalue *bytes;
	int scale = 0;
	bool neg = false, got_neg;
	char *got;

	if (c->typmod >= 4 && want < 0) {
		expect(rc < 0);
		return;
	}
	if (text_is(t, "NaN") || text_is(t, "Infinity") || text_is(t, "-Infinity")) {
		expect(rc == 0 && pv->v.is_null);
		return;
	}
	if (!numeric_model(t, c->typmod >= 4 ? want : -1, &digits, &scale, &neg)) {
		expect(rc < 0);
		buf_fini(&digits);
		return;
	}
	expect(rc == 0 && !pv->v.is_null);
	bytes = c->typmod >= 4 ? &pv->v : &pv->v.u.fields.v[1];
	expect(c->typmod >= 4 || pv->v.u.fields.v[0].u.i == scale);
	got = twos_to_digits((const unsigned char *)bytes->u.s.p, bytes->u.s.len, &got_neg);
	expect(strcmp(got, buf_cstr(&digits)) == 0 && got_neg == neg);
	free(got);
	buf_fini(&digits);
}

/* --- bytea ---------------------------------------------------------------------------------- */

static int
hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 :
				      -1;
}

static void
base64(const struct buf *raw, bool url, struct buf *out)
{
	const char *abc = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" :
				"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = (const unsigned char *)raw->data;

	for (size_t i = 0; i < raw->len; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < raw->len ? p[i + 1] << 8 : 0) |
			     (i + 2 < raw->len ? p[i + 2] : 0);

		buf_add_char(out, abc[v >> 18 & 63]);
		buf_add_char(out, abc[v >> 12 & 63]);
		buf_add_char(out, i + 1 < raw->len ? abc[v >> 6 & 63] : '=');
		buf_add_char(out, i + 2 < raw->len ? abc[v & 63] : '=');
	}
}

static void
check_bytea(const struct fuzz_pgvalue_case *c, struct slice t, const struct pgvalue *pv, int rc)
{
	struct buf raw = BUF_INIT, want = BUF_INIT;
	bool valid = t.len >= 2 && t.p[0] == '\\' && t.p[1] == 'x' && t.len % 2 == 0;

	for (size_t i = 2; valid && i < t.len; i += 2) {
		int a = hexval(t.p[i]), b = hexval(t.p[i + 1]);

		valid = a >= 0 && b >= 0;
		if (valid) {
			buf_add_char(&raw, (char)(a << 4 | b));
		}
	}
	expect(valid == (rc == 0));
	if (valid) {
		switch (c->binary) {
		case PGVALUE_BINARY_BYTES: buf_add(&want, raw.data, raw.len); break;
		case PGVALUE_BINARY_BASE64: base64(&raw, false, &want); break;
		case PGVALUE_BINARY_BASE64_URL_SAFE: base64(&raw, true, &want); break;
		case PGVALUE_BINARY_HEX:
			for (size_t i = 0; i < raw.len; i++) {
				buf_add_fmt(&want, "%02x", (unsigned char)raw.data[i]);
			}
			break;
		}
		expect(pv->v.type ==
		       (c->binary == PGVALUE_BINARY_BYTES ? CVALUE_BYTES : CVALUE_STRING));
		expect(pv->v.u.s.len == want.len &&
		       memcmp(pv->v.u.s.p, buf_cstr(&want), want.len) == 0);
	}
	buf_fini(&raw);
	buf_fini(&want);
}

/* --- dates and timestamps --------------------------------------------------------------------- */

struct dt {
	int64_t y;
	int64_t mo, d, h, mi, s;
	int64_t frac_us; /* the fraction in microseconds */
	int frac_digits;
	int64_t off_s; /* the offset east of UTC in seconds */
};

/* @min to @max decimal digits at *@p; false if fewer. */
static bool
digits(const char **p, const char *end, int min, int max, int64_t *ret, int *ret_n)
{
	int64_t v = 0;
	int n = 0;

	while (*p < end && n < max && **p >= '0' && **p <= '9') {
		v = v * 10 + (*(*p)++ - '0');
		n++;
	}
	if (ret_n) {
		*ret_n = n;
	}
	*ret = v;
	return n >= min && !(*p < end && n == max && **p >= '0' && **p <= '9');
}

static bool
lit(const char **p, const char *end, char c)
{
	if (*p < end && **p == c) {
		(*p)++;
		return true;
	}
	return false;
}

static bool
leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int64_t
mdays(int64_t y, int64_t m)
{
	static const int n[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	return n[m - 1] + (m == 2 && leap(y));
}

/* Days from 1970-01-01 by counting years (year 0 and on), not pgvalue's era arithmetic. */
static int64_t
ref_days(int64_t y, int64_t m, int64_t d)
{
	int64_t z = y + 399, days;

	days = 365 * z + z / 4 - z / 100 + z / 400;
	for (int64_t k = 1; k < m; k++) {
		days += mdays(y, k);
	}
	return days + d - 1 - 146097 - 719162;
}

/* [+]YYYY-MM-DD[( |T)HH:MM:SS[.f]][zone], read strictly; @sep 0 for a date. */
static bool
parse_dt(struct slice t, char sep, bool zone, bool plus, struct dt *r)
{
	const char *p = t.p, *end = t.p + t.len;

	*r = (struct dt){ 0 };
	if (plus) {
		(void)lit(&p, end, '+');
	}
	if (!digits(&p, end, 4, 7, &r->y, NULL) || !lit(&p, end, '-') ||
	    !digits(&p, end, 2, 2, &r->mo, NULL) || !lit(&p, end, '-') ||
	    !digits(&p, end, 2, 2, &r->d, NULL)) {
		return false;
	}
	if (sep && (!lit(&p, end, sep) || !digits(&p, end, 2, 2, &r->h, NULL) ||
		    !lit(&p, end, ':') || !digits(&p, end, 2, 2, &r->mi, NULL) ||
		    !lit(&p, end, ':') || !digits(&p, end, 2, 2, &r->s, NULL))) {
		return false;
	}
	if (sep && lit(&p, end, '.')) {
		if (!digits(&p, end, 1, 6, &r->frac_us, &r->frac_digits)) {
			return false;
		}
		for (int k = r->frac_digits; k < 6; k++) {
			r->frac_us *= 10;
		}
	}
	if (zone == 1 && sep == ' ') {
		int64_t oh = 0, om = 0, os = 0;
		bool neg = p < end && *p == '-';

		if ((!lit(&p, end, '+') && !lit(&p, end, '-')) ||
		    !digits(&p, end, 2, 2, &oh, NULL)) {
			return false;
		}
		if (lit(&p, end, ':') &&
		    (!digits(&p, end, 2, 2, &om, NULL) ||
		     (lit(&p, end, ':') && !digits(&p, end, 2, 2, &os, NULL)))) {
			return false;
		}
		if (oh > 15 || om > 59 || os > 59) {
			return false;
		}
		r->off_s = (neg ? -1 : 1) * (oh * 3600 + om * 60 + os);
	}
	if (sep == 'T' && !lit(&p, end, 'Z')) {
		return false;
	}
	return p == end && r->mo >= 1 && r->mo <= 12 && r->d >= 1 && r->d <= mdays(r->y, r->mo) &&
	       r->h < 24 && r->mi < 60 && r->s < 60;
}

/* @a / @b rounded down, as Java's Instant.toEpochMilli() does. */
static i128
floor_div(i128 a, i128 b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* The instant of @r in microseconds since the epoch, without overflow. */
static i128
instant(const struct dt *r)
{
	return (i128)ref_days(r->y, r->mo, r->d) * US_PER_DAY +
	       ((r->h * 3600 + r->mi * 60 + r->s - r->off_s) * 1000000 + r->frac_us);
}

/* A ZonedTimestamp: ISO-8601 UTC, '+' before a 5-digit year, the fraction as wide as asked. */
static void
check_zoned(const struct fuzz_pgvalue_case *c, const struct dt *in, struct slice out)
{
	struct dt o;
	int64_t unit = 1;

	expect(parse_dt(out, 'T', false, true, &o));
	expect((out.p[0] == '+') == (o.y > 9999) && (o.y > 9999 || out.p[4] == '-'));
	/* as many digits as the precision; 6 without one (Debezium reads the scale as 6) */
	int width = c->typmod < 0 ? 6 : c->typmod;

	expect(o.frac_digits == width);
	for (int k = width; k < 6; k++) {
		unit *= 10;
	}
	/* the fraction is cut to the column's precision (PostgreSQL has rounded it already) */
	expect(instant(&o) == instant(in) - in->frac_us % unit);
}

static void
check_time(const struct fuzz_pgvalue_case *c, struct slice t, const struct pgvalue *pv, int rc)
{
	bool date = c->oid == PGTYPE_DATE, zone = c->oid == PGTYPE_TIMESTAMPTZ;
	bool millis = !date && !zone && c->typmod >= 0 && c->typmod <= 3;
	struct dt in;
	bool valid = parse_dt(t, date ? 0 : ' ', zone, false, &in) && in.y >= 1;
	i128 us = valid ? instant(&in) : 0;

	if (text_is(t, "infinity") || text_is(t, "-infinity")) {
		/* Debezium 3.6.1: a timestamptz's text, pgjdbc's constants, a wrapped day number */
		bool pos = t.p[0] == 'i';
		int64_t ts = pos ? INT64_C(9223372036825200000) : INT64_C(-9223372036832400000);

		expect(rc == 0);
		if (zone) {
			expect(pv->v.u.s.len == t.len && memcmp(pv->v.u.s.p, t.p, t.len) == 0);
		} else if (date) {
			expect(pv->v.u.i == (int32_t)((pos ? INT32_MAX : INT32_MIN) + 10957u));
		} else {
			expect(pv->v.u.i == (millis ? ts / 1000 : ts));
		}
		return;
	}
	if (valid && date) {
		valid = us / US_PER_DAY <= INT32_MAX;
	} else if (valid && !zone && !millis) {
		valid = us <= INT64_MAX;
	}
	expect(valid == (rc == 0));
	if (!valid) {
		return;
	}
	if (date) {
		expect(pv->v.type == CVALUE_INT32 && pv->v.u.i == us / US_PER_DAY);
	} else if (zone) {
		expect(pv->v.type == CVALUE_STRING);
		check_zoned(c, &in, pv->v.u.s);
	} else {
		expect(pv->v.type == CVALUE_INT64 &&
		       pv->v.u.i == (millis ? floor_div(us, 1000) : us));
	}
}

/* --- the rest ------------------------------------------------------------------------------- */

static void
check_int(struct slice t, const struct pgvalue *pv, int rc, int64_t lo, int64_t hi)
{
	char tmp[32], *end;
	long long v;
	bool plain = t.len > 0 && t.len < sizeof(tmp);

	for (size_t i = 0; plain && i < t.len; i++) {
		plain = (t.p[i] >= '0' && t.p[i] <= '9') || (i == 0 && t.p[i] == '-' && t.len > 1);
	}
	if (rc != 0) {
		/* a plain integer in range must be taken */
		if (plain) {
			memcpy(tmp, t.p, t.len);
			tmp[t.len] = '\0';
			errno = 0;
			v = strtoll(tmp, &end, 10);
			expect(errno == ERANGE || v < lo || v > hi);
		}
		return;
	}
	/* only PostgreSQL's form: no blank, no '+' (strtoll() would take both) */
	expect(plain && pv->v.u.i >= lo && pv->v.u.i <= hi);
}

/* [-]digits[.digits][(e|E)[+-]digits], NaN or [-]Infinity: PostgreSQL's float output. */
static bool
float_model(struct slice t)
{
	size_t i = t.len && t.p[0] == '-', n;

	if (text_is(t, "NaN") || text_is(t, "Infinity") || text_is(t, "-Infinity")) {
		return true;
	}
	for (n = 0; i < t.len && t.p[i] >= '0' && t.p[i] <= '9'; i++) {
		n++;
	}
	if (!n) {
		return false;
	}
	if (i < t.len && t.p[i] == '.') {
		for (n = 0, i++; i < t.len && t.p[i] >= '0' && t.p[i] <= '9'; i++) {
			n++;
		}
		if (!n) {
			return false;
		}
	}
	if (i < t.len && (t.p[i] == 'e' || t.p[i] == 'E')) {
		i++;
		if (i < t.len && (t.p[i] == '+' || t.p[i] == '-')) {
			i++;
		}
		for (n = 0; i < t.len && t.p[i] >= '0' && t.p[i] <= '9'; i++) {
			n++;
		}
		if (!n) {
			return false;
		}
	}
	return i == t.len;
}

/* 8-4-4-4-12 lower-case hex digits: PostgreSQL's uuid output. */
static bool
uuid_model(struct slice t)
{
	/* the layout: h stands for one hex digit */
	static const char form[] = "hhhhhhhh-hhhh-hhhh-hhhh-hhhhhhhhhhhh";

	if (t.len != sizeof(form) - 1) {
		return false;
	}
	for (size_t i = 0; i < t.len; i++) {
		bool hex = (t.p[i] >= '0' && t.p[i] <= '9') || (t.p[i] >= 'a' && t.p[i] <= 'f');

		if (form[i] == '-' ? t.p[i] != '-' : !hex) {
			return false;
		}
	}
	return true;
}

static bool
unsupported(uint32_t oid)
{
	switch (oid) {
	case 603: return true; /* box */
	default: return false;
	}
}

static void
check_text(const struct fuzz_pgvalue_case *c, struct slice t, const struct pgvalue *pv, int rc)
{
	switch (c->oid) {
	case PGTYPE_BOOL:
		expect((rc == 0) == (text_is(t, "t") || text_is(t, "f")));
		expect(rc != 0 || pv->v.u.b == text_is(t, "t"));
		break;
	case PGTYPE_INT2: check_int(t, pv, rc, INT16_MIN, INT16_MAX); break;
	case PGTYPE_INT4: check_int(t, pv, rc, INT32_MIN, INT32_MAX); break;
	case PGTYPE_INT8:
	case PGTYPE_OID: check_int(t, pv, rc, INT64_MIN, INT64_MAX); break;
	case PGTYPE_FLOAT4:
	case PGTYPE_FLOAT8:
		/* no PostgreSQL float output is anywhere near 64 characters */
		expect((rc == 0) == (float_model(t) && t.len < 64));
		break;
	case PGTYPE_UUID:
		expect((rc == 0) == uuid_model(t));
		expect(rc != 0 || (pv->v.u.s.p == t.p && pv->v.u.s.len == t.len));
		break;
	case PGTYPE_NUMERIC: check_numeric(c, t, pv, rc); break;
	case PGTYPE_BYTEA: check_bytea(c, t, pv, rc); break;
	case PGTYPE_DATE:
	case PGTYPE_TIMESTAMP:
	case PGTYPE_TIMESTAMPTZ: check_time(c, t, pv, rc); break;
	case PGTYPE_TIME:
		/* microseconds of the day, 24:00:00 the most (the fuzz case is unconstrained) */
		expect(rc != 0 || (pv->v.type == CVALUE_INT64 && pv->v.u.i >= 0 &&
				   pv->v.u.i <= INT64_C(86400000000)));
		break;
	case PGTYPE_INTERVAL: expect(rc != 0 || pv->v.type == CVALUE_INT64); break;
	case PGTYPE_POINT: expect(rc != 0 || pv->v.type == CVALUE_STRUCT); break;
	case PGTYPE_MONEY:
		/* a Decimal of money.fraction.digits (0 here): at least one byte */
		expect(rc != 0 || (pv->v.type == CVALUE_BYTES && pv->v.u.s.len > 0));
		break;
	case PGTYPE_INT4_ARRAY:
	case PGTYPE_TEXT_ARRAY:
	case PGTYPE_UUID_ARRAY:
	case PGTYPE_JSONB_ARRAY:
		/* an array of at most as many elements as the text has bytes */
		expect(rc != 0 || (pv->v.type == CVALUE_ARRAY && pv->v.u.array.n <= t.len));
		break;
	default:
		/* the string types: valid UTF-8 passes through unchanged */
		expect((rc == 0) == utf8_valid(t.p, t.len));
		expect(rc != 0 || (pv->v.type == CVALUE_STRING && pv->v.u.s.p == t.p &&
				   pv->v.u.s.len == t.len));
		break;
	}
}

void
fuzz_pgvalue_check(const struct fuzz_pgvalue_case *c, const struct pgoutput_col *pc,
		   const struct pgvalue *pv, int rc, const char *err)
{
	expect(rc == 0 || (rc == -EINVAL && err[0] != '\0'));
	if (unsupported(c->oid) || (c->oid == PGTYPE_NUMERIC && c->typmod == (int32_t)0x7ff0006)) {
		expect(rc < 0 || c->oid == PGTYPE_NUMERIC);
	}
	if (unsupported(c->oid)) {
		return;
	}
	if (rc == 0) {
		expect(pv->v.field && strcmp(pv->v.field, "col") == 0);
		if (pv->v.type == CVALUE_STRING && !pv->v.is_null) {
			expect(utf8_valid(pv->v.u.s.p, pv->v.u.s.len));
		}
	}
	if (pc->kind == 'n') {
		expect(c->oid == PGTYPE_NUMERIC || (rc == 0 && pv->v.is_null));
		return;
	}
	check_text(c, pc->value, pv, rc);
}
