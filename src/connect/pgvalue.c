/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/connect/pgvalue.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/jsonw.h"
#include "outboxd/pg/pgtype.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/utf8.h"
#include "pgvalue_int.h"

/*
 * Built-in types Debezium does not map to a plain string and outboxd does not convert yet
 * (time, interval, money, bit strings, geometry, ranges, arrays...): refused rather than
 * bytes that differ from Debezium's.
 */
static bool
unsupported_oid(uint32_t oid)
{
	static const uint32_t deny[] = {
		600,  601,  602,  603,	604,  628,  718,  790,	1083, 1186, 1266,
		1560, 1562, 3904, 3906, 3908, 3910, 3912, 3926, 4451, 199,  3807,
		2951, 1115, 1182, 1183, 1185, 1187, 1231, 1270, 651,  1041,
	};

	if (oid >= 1000 && oid <= 1040) {
		return true; /* arrays of the basic types */
	}
	for (size_t i = 0; i < sizeof(deny) / sizeof(deny[0]); i++) {
		if (deny[i] == oid) {
			return true;
		}
	}
	return false;
}

bool
pgvalue_converts(uint32_t type_oid)
{
	return !unsupported_oid(type_oid);
}

bool
pgvalue_known(uint32_t type_oid)
{
	switch (type_oid) {
	case PGTYPE_BOOL:
	case PGTYPE_INT2:
	case PGTYPE_INT4:
	case PGTYPE_INT8:
	case PGTYPE_OID:
	case PGTYPE_FLOAT4:
	case PGTYPE_FLOAT8:
	case PGTYPE_NUMERIC:
	case PGTYPE_BYTEA:
	case PGTYPE_DATE:
	case PGTYPE_TIMESTAMP:
	case PGTYPE_TIMESTAMPTZ:
	case PGTYPE_UUID:
	case PGTYPE_JSON:
	case PGTYPE_JSONB:
	case PGTYPE_XML:
	case PGTYPE_TEXT:
	case PGTYPE_VARCHAR:
	case PGTYPE_BPCHAR:
	case PGTYPE_NAME:
	case PGTYPE_CHAR:
	case PGTYPE_INET:
	case PGTYPE_CIDR:
	case PGTYPE_MACADDR:
	case PGTYPE_MACADDR8: return true;
	default: return false;
	}
}

void
pgvalue_fini(struct pgvalue *pv)
{
	buf_fini(&pv->data);
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t
days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void
civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t era;
	unsigned doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

/* A bounded cursor over a column's text: no read goes past @end (pgoutput.c's reader). */
struct tcur {
	const char *p, *end;
};

/* @min to @max decimal digits, not followed by another digit; false (cursor moved) if not. */
static bool
tcur_digits(struct tcur *c, int min, int max, int64_t *ret)
{
	int64_t v = 0;
	int n = 0;

	while (c->p < c->end && n < max && *c->p >= '0' && *c->p <= '9') {
		v = v * 10 + (*c->p++ - '0');
		n++;
	}
	*ret = v;
	return n >= min && !(c->p < c->end && *c->p >= '0' && *c->p <= '9');
}

static bool
tcur_lit(struct tcur *c, char ch)
{
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

static bool
is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* YYYY-MM-DD with a 4- to 7-digit year of AD (PostgreSQL's dates end in 5874897). */
static bool
tcur_date(struct tcur *c, int64_t *ret_days)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int64_t y, m, d;

	if (!tcur_digits(c, 4, 7, &y) || !tcur_lit(c, '-') || !tcur_digits(c, 2, 2, &m) ||
	    !tcur_lit(c, '-') || !tcur_digits(c, 2, 2, &d)) {
		return false;
	}
	if (y < 1 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1] + (m == 2 && is_leap(y))) {
		return false;
	}
	*ret_days = days_from_civil(y, (unsigned)m, (unsigned)d);
	return true;
}

/* " HH:MM:SS[.f]" (1 to 6 fraction digits): seconds of the day and microseconds. */
static bool
tcur_time(struct tcur *c, int64_t *ret_secs, int64_t *ret_us)
{
	int64_t h, mi, sec, frac = 0;
	const char *f;

	if (!tcur_lit(c, ' ') || !tcur_digits(c, 2, 2, &h) || !tcur_lit(c, ':') ||
	    !tcur_digits(c, 2, 2, &mi) || !tcur_lit(c, ':') || !tcur_digits(c, 2, 2, &sec) ||
	    h > 23 || mi > 59 || sec > 59) {
		return false;
	}
	if (tcur_lit(c, '.')) {
		f = c->p;
		if (!tcur_digits(c, 1, 6, &frac)) {
			return false;
		}
		for (ptrdiff_t n = c->p - f; n < 6; n++) {
			frac *= 10;
		}
	}
	*ret_secs = h * 3600 + mi * 60 + sec;
	*ret_us = frac;
	return true;
}

/* "+HH[:MM[:SS]]" or "-...": the offset east of UTC in seconds (at most 15:59:59, as PG). */
static bool
tcur_zone(struct tcur *c, int64_t *ret_secs)
{
	int64_t oh, om = 0, os = 0;
	int sign = c->p < c->end && *c->p == '-' ? -1 : 1;

	if ((!tcur_lit(c, '+') && !tcur_lit(c, '-')) || !tcur_digits(c, 2, 2, &oh)) {
		return false;
	}
	if (tcur_lit(c, ':') &&
	    (!tcur_digits(c, 2, 2, &om) || (tcur_lit(c, ':') && !tcur_digits(c, 2, 2, &os)))) {
		return false;
	}
	if (oh > 15 || om > 59 || os > 59) {
		return false;
	}
	*ret_secs = sign * (oh * 3600 + om * 60 + os);
	return true;
}

/*
 * Parse ISO "YYYY-MM-DD[ HH:MM:SS[.ffffff][+HH[:MM[:SS]]]]" as PostgreSQL writes it under
 * DateStyle=ISO, strictly: BC years, infinities (convert_infinity()) and anything else are
 * refused. Returns the
 * seconds since the epoch (UTC when an offset is given; whole days for a date) and the
 * microseconds within the second, apart: 7-digit years overflow int64 microseconds.
 */
static int
parse_datetime(const char *s, size_t len, bool want_time, bool want_zone, int64_t *ret_secs,
	       int64_t *ret_us)
{
	struct tcur c = { s, s + len };
	int64_t days, secs = 0, us = 0, off = 0;

	if (!tcur_date(&c, &days) || (want_time && !tcur_time(&c, &secs, &us)) ||
	    (want_zone && !tcur_zone(&c, &off)) || c.p != c.end) {
		return -EINVAL;
	}
	*ret_secs = days * 86400 + secs - off;
	*ret_us = us;
	return 0;
}

/*
 * ZonedTimestamp text: ISO-8601 in UTC with exactly @width (0..6) fraction digits, as Java's
 * DateTimeFormatter.appendFraction(NANO_OF_SECOND, width, width, true) writes it.
 */
static void
format_zoned(int64_t secs, int64_t frac, int width, struct buf *out)
{
	int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
	int64_t sod = secs - days * 86400, y;
	unsigned m, d;

	civil_from_days(days, &y, &m, &d);
	buf_add_fmt(out,
		    y > 9999 ? "+%lld-%02u-%02uT%02d:%02d:%02d" : "%04lld-%02u-%02uT%02d:%02d:%02d",
		    (long long)y, m, d, (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60));
	if (width > 0) {
		char f[8];

		/* PostgreSQL rounded the value to the column's precision: the rest is zeros */
		snprintf(f, sizeof(f), "%06lld", (long long)frac);
		buf_add_char(out, '.');
		buf_add(out, f, (size_t)(width < 6 ? width : 6));
	}
	buf_add_char(out, 'Z');
}

static int
convert_bytea(struct slice t, enum pgvalue_binary binary, struct pgvalue *pv)
{
	struct buf raw = BUF_INIT;

	pv->v.type = binary == PGVALUE_BINARY_BYTES ? CVALUE_BYTES : CVALUE_STRING;
	if (pv->v.is_null) {
		return 0;
	}
	if (t.len < 2 || t.p[0] != '\\' || t.p[1] != 'x' || t.len % 2) {
		return -EINVAL; /* bytea_output=escape: the session pins hex */
	}
	for (size_t i = 2; i < t.len; i += 2) {
		/* exactly, not by case folding: 0x14 | 0x20 would read as '4' */
		int a = utf8_hex_digit(t.p[i]), b = utf8_hex_digit(t.p[i + 1]);

		if (a < 0 || b < 0) {
			buf_fini(&raw);
			return -EINVAL;
		}
		buf_add_char(&raw, (char)(a << 4 | b));
	}
	switch (binary) {
	case PGVALUE_BINARY_BYTES: buf_add(&pv->data, raw.data, raw.len); break;
	case PGVALUE_BINARY_BASE64: jsonw_base64(&pv->data, raw.data, raw.len); break;
	case PGVALUE_BINARY_BASE64_URL_SAFE: jsonw_base64url(&pv->data, raw.data, raw.len); break;
	case PGVALUE_BINARY_HEX:
		/* from the bytes, not the text: Debezium's HexConverter writes lower case */
		for (size_t i = 0; i < raw.len; i++) {
			buf_add_fmt(&pv->data, "%02x", (unsigned char)raw.data[i]);
		}
		break;
	}
	buf_fini(&raw);
	pv->v.u.s = (struct slice){ pv->data.data ? pv->data.data : "", pv->data.len };
	return 0;
}

/* A number's text as a C string for strto*(); false if empty or longer than any valid one. */
static bool
number_cstr(struct slice t, char *tmp, size_t size)
{
	if (t.len == 0 || t.len >= size) {
		return false;
	}
	memcpy(tmp, t.p, t.len);
	tmp[t.len] = '\0';
	return true;
}

/* Advance @i over decimal digits of @t; how many there were. */
static size_t
skip_digits(struct slice t, size_t *i)
{
	size_t from = *i;

	while (*i < t.len && t.p[*i] >= '0' && t.p[*i] <= '9') {
		(*i)++;
	}
	return *i - from;
}

/* "-"? digits: PostgreSQL's integer output (strtoll() would also take blanks and '+'). */
static bool
int_text(struct slice t)
{
	size_t i = t.len && t.p[0] == '-';

	return skip_digits(t, &i) && i == t.len;
}

/*
 * PostgreSQL's float output: NaN, [-]Infinity, or "-"? digits ("." digits)? (e [+-]? digits)?.
 * strtod() would also take blanks, '+', hex floats, "inf" and "nan".
 */
static bool
float_text(struct slice t)
{
	static const char *const special[] = { "NaN", "Infinity", "-Infinity" };
	size_t i = t.len && t.p[0] == '-';

	for (size_t k = 0; k < sizeof(special) / sizeof(special[0]); k++) {
		if (t.len == strlen(special[k]) && memcmp(t.p, special[k], t.len) == 0) {
			return true;
		}
	}
	if (!skip_digits(t, &i)) {
		return false;
	}
	if (i < t.len && t.p[i] == '.' && (++i, !skip_digits(t, &i))) {
		return false;
	}
	if (i < t.len && (t.p[i] == 'e' || t.p[i] == 'E')) {
		i++;
		i += i < t.len && (t.p[i] == '+' || t.p[i] == '-');
		if (!skip_digits(t, &i)) {
			return false;
		}
	}
	return i == t.len;
}

static int
convert_int(struct slice t, enum cvalue_type type, struct pgvalue *pv)
{
	char tmp[32], *end;

	pv->v.type = type;
	if (pv->v.is_null) {
		return 0;
	}
	if (!int_text(t) || !number_cstr(t, tmp, sizeof(tmp))) {
		return -EINVAL;
	}
	errno = 0;
	pv->v.u.i = strtoll(tmp, &end, 10);
	if (*end || errno) {
		return -EINVAL;
	}
	/* int2 and int4 text beyond their range is not PostgreSQL's output: refused, not cut */
	if ((type == CVALUE_INT16 && (pv->v.u.i < INT16_MIN || pv->v.u.i > INT16_MAX)) ||
	    (type == CVALUE_INT32 && (pv->v.u.i < INT32_MIN || pv->v.u.i > INT32_MAX))) {
		return -EINVAL;
	}
	return 0;
}

static int
convert_float(struct slice t, enum cvalue_type type, struct pgvalue *pv)
{
	char tmp[64], *end;

	pv->v.type = type;
	if (pv->v.is_null) {
		return 0;
	}
	if (!float_text(t) || !number_cstr(t, tmp, sizeof(tmp))) {
		return -EINVAL;
	}
	pv->v.u.f = type == CVALUE_FLOAT32 ? (double)strtof(tmp, &end) : strtod(tmp, &end);
	return *end ? -EINVAL : 0;
}

/*
 * PostgreSQL's 'infinity' and '-infinity' as Debezium 3.6.1 writes them (the compat suite's
 * ob_types_inf tables): a timestamptz as that text; a timestamp as pgjdbc's
 * DATE_POSITIVE_INFINITY and DATE_NEGATIVE_INFINITY (9223372036825200000,
 * -9223372036832400000) in MicroTimestamp, divided by 1000 in Timestamp; a date as
 * -2147472692 and -2147472691 (PostgreSQL's INT32_MAX and INT32_MIN day numbers from 2000
 * moved to 1970 in wrapping int arithmetic). False if @t is neither.
 */
static bool
convert_infinity(bool date, bool zone, bool millis, struct slice t, struct pgvalue *pv)
{
	bool pos = slice_eq_str(t, "infinity");
	int64_t ts = pos ? INT64_C(9223372036825200000) : INT64_C(-9223372036832400000);

	if (!pos && !slice_eq_str(t, "-infinity")) {
		return false;
	}
	if (zone) {
		pv->v.u.s = t;
	} else if (date) {
		pv->v.u.i = pos ? INT32_C(-2147472692) : INT32_C(-2147472691);
	} else {
		pv->v.u.i = millis ? ts / 1000 : ts;
	}
	return true;
}

static int
convert_time(const struct relcache_col *col, struct slice t, struct pgvalue *pv)
{
	int64_t secs = 0, us = 0;
	bool zone = col->type_oid == PGTYPE_TIMESTAMPTZ, date = col->type_oid == PGTYPE_DATE;
	bool millis = !date && !zone && col->typmod >= 0 && col->typmod <= 3;

	if (date) {
		pv->v.type = CVALUE_INT32;
		pv->v.name = "io.debezium.time.Date";
	} else if (zone) {
		pv->v.type = CVALUE_STRING;
		pv->v.name = "io.debezium.time.ZonedTimestamp";
	} else {
		pv->v.type = CVALUE_INT64;
		pv->v.name =
			millis ? "io.debezium.time.Timestamp" : "io.debezium.time.MicroTimestamp";
	}
	pv->v.version = 1;
	if (pv->v.is_null) {
		return 0;
	}
	if (convert_infinity(date, zone, millis, t, pv)) {
		return 0;
	}
	if (parse_datetime(t.p, t.len, !date, zone, &secs, &us) < 0) {
		return -EINVAL;
	}
	if (date) {
		/* an INT32 of days since the epoch; PostgreSQL's last date fits */
		if (secs / 86400 > INT32_MAX) {
			return -EINVAL;
		}
		pv->v.u.i = secs / 86400;
	} else if (zone) {
		/* unconstrained (-1): Debezium reads the column's scale as 6 */
		format_zoned(secs, us, col->typmod < 0 ? 6 : col->typmod, &pv->data);
		pv->v.u.s = (struct slice){ pv->data.data, pv->data.len };
	} else if (millis) {
		/* Timestamp: epoch milliseconds, rounded down as Instant.toEpochMilli() does
		 * (@us is within the second, so this is the floor also before 1970) */
		pv->v.u.i = secs * 1000 + us / 1000;
	} else {
		/* MicroTimestamp: an INT64 of microseconds, which ends in year 294247 */
		if (__builtin_mul_overflow(secs, 1000000, &pv->v.u.i) ||
		    __builtin_add_overflow(pv->v.u.i, us, &pv->v.u.i)) {
			return -EINVAL;
		}
	}
	return 0;
}

static int
convert_string(struct slice t, const char *name, struct pgvalue *pv)
{
	pv->v.type = CVALUE_STRING;
	if (name) {
		pv->v.name = name;
		pv->v.version = 1;
	}
	if (!pv->v.is_null) {
		if (!utf8_valid(t.p, t.len)) {
			return -EILSEQ;
		}
		pv->v.u.s = t;
	}
	return 0;
}

/* PostgreSQL's uuid output: 8-4-4-4-12 lower-case hex digits. */
static bool
uuid_text(struct slice t)
{
	if (t.len != 36) {
		return false;
	}
	for (size_t i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		char ch = t.p[i];

		if (dash ? ch != '-' : !((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) {
			return false;
		}
	}
	return true;
}

static int
dispatch(const struct relcache_col *col, struct slice t, struct pgvalue_modes modes,
	 struct pgvalue *pv)
{
	switch (col->type_oid) {
	case PGTYPE_BOOL:
		pv->v.type = CVALUE_BOOLEAN;
		pv->v.u.b = t.len == 1 && t.p[0] == 't';
		return pv->v.is_null || (t.len == 1 && (t.p[0] == 't' || t.p[0] == 'f')) ? 0 :
											   -EINVAL;
	case PGTYPE_INT2: return convert_int(t, CVALUE_INT16, pv);
	case PGTYPE_INT4: return convert_int(t, CVALUE_INT32, pv);
	case PGTYPE_INT8:
	case PGTYPE_OID: return convert_int(t, CVALUE_INT64, pv);
	case PGTYPE_FLOAT4: return convert_float(t, CVALUE_FLOAT32, pv);
	case PGTYPE_FLOAT8: return convert_float(t, CVALUE_FLOAT64, pv);
	case PGTYPE_NUMERIC: return pgvalue_numeric(col, t, modes.decimal, pv);
	case PGTYPE_BYTEA: return convert_bytea(t, modes.binary, pv);
	case PGTYPE_DATE:
	case PGTYPE_TIMESTAMP:
	case PGTYPE_TIMESTAMPTZ: return convert_time(col, t, pv);
	case PGTYPE_UUID:
		if (!pv->v.is_null && !uuid_text(t)) {
			pv->v.type = CVALUE_STRING;
			return -EINVAL;
		}
		return convert_string(t, "io.debezium.data.Uuid", pv);
	case PGTYPE_JSON:
	case PGTYPE_JSONB: return convert_string(t, "io.debezium.data.Json", pv);
	case PGTYPE_XML: return convert_string(t, "io.debezium.data.Xml", pv);
	default: return convert_string(t, NULL, pv);
	}
}

int
pgvalue_convert(const struct relcache_col *col, const struct pgoutput_col *pc, bool notnull,
		struct pgvalue_modes modes, struct pgvalue *pv, char *errbuf, size_t errlen)
{
	int rc;

	buf_reset(&pv->data);
	pv->v = (struct cvalue){ .optional = !notnull, .field = col->name };
	if (unsupported_oid(col->type_oid)) {
		errbuf_set(
			errbuf, errlen,
			"column '%s' has type OID %u, which outboxd does not convert "
			"yet (Debezium does not write it as a plain string); use a text, varchar, "
			"uuid, jsonb, integer or timestamp column",
			col->name, col->type_oid);
		return -EINVAL;
	}
	if (pc->kind != 't' && pc->kind != 'n') {
		errbuf_set(errbuf, errlen, "column '%s' arrived as '%c' (%s), not as text",
			   col->name, pc->kind,
			   pc->kind == 'u' ? "unchanged TOAST value" : "binary format");
		return -EINVAL;
	}
	pv->v.is_null = pc->kind == 'n';
	rc = dispatch(col, pc->value, modes, pv);
	if (rc == -EILSEQ) {
		errbuf_set(errbuf, errlen,
			   "column '%s' is not valid UTF-8; set the database encoding "
			   "to UTF8 (outboxd pins client_encoding=UTF8)",
			   col->name);
		return -EINVAL;
	}
	if (rc < 0) {
		errbuf_set(
			errbuf, errlen,
			"column '%s' (type OID %u): value '%.*s' is not PostgreSQL's output of the "
			"type or cannot be converted (BC dates and negative numeric scales are not "
			"supported yet)",
			col->name, col->type_oid, (int)(pc->value.len > 64 ? 64 : pc->value.len),
			pc->value.p ? pc->value.p : "");
		return -EINVAL;
	}
	return 0;
}
