/* SPDX-License-Identifier: Apache-2.0 */
/*
 * date, timestamp, timestamptz, time and timetz, as Debezium's PostgresValueConverter converts
 * them under time.precision.mode, from the text PostgreSQL writes under DateStyle=ISO (which
 * outboxd pins): parsed strictly, by hand, since no C library reads PostgreSQL's years past 9999
 * and its offsets with seconds, and none writes Java's fraction widths.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "outboxd/connect/pgvalue.h"
#include "outboxd/pg/pgtype.h"
#include "pgvalue_int.h"

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

/*
 * "HH:MM:SS[.f]" (1 to 6 fraction digits): seconds of the day and microseconds; 24:00:00, the
 * end of the day a time column may hold, only when @end_of_day.
 */
static bool
tcur_hms(struct tcur *c, bool end_of_day, int64_t *ret_secs, int64_t *ret_us)
{
	int64_t h, mi, sec, frac = 0;
	const char *f;

	if (!tcur_digits(c, 2, 2, &h) || !tcur_lit(c, ':') || !tcur_digits(c, 2, 2, &mi) ||
	    !tcur_lit(c, ':') || !tcur_digits(c, 2, 2, &sec) || h > 24 || mi > 59 || sec > 59) {
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
	if (h == 24 && (!end_of_day || mi || sec || frac)) {
		return false;
	}
	*ret_secs = h * 3600 + mi * 60 + sec;
	*ret_us = frac;
	return true;
}

/* " HH:MM:SS[.f]" of a timestamp. */
static bool
tcur_time(struct tcur *c, int64_t *ret_secs, int64_t *ret_us)
{
	return tcur_lit(c, ' ') && tcur_hms(c, false, ret_secs, ret_us);
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
 * "HH:MM:SS" of @sod seconds of the day, then exactly @width (0..6) fraction digits of @frac
 * microseconds (Java's DateTimeFormatter.appendFraction(NANO_OF_SECOND, width, width, true), as
 * ZonedTimestamp writes them), or the fewest when @width is -1 (appendFraction(NANO_OF_SECOND,
 * 0, 9, true), ISO_LOCAL_TIME's, as ZonedTime writes them), and "Z".
 */
static void
format_clock(int64_t sod, int64_t frac, int width, struct buf *out)
{
	buf_add_fmt(out, "%02d:%02d:%02d", (int)(sod / 3600), (int)(sod / 60 % 60),
		    (int)(sod % 60));
	if (width < 0) {
		/* the fewest digits: none for a whole second */
		for (width = 6; width > 0 && frac % 10 == 0; width--) {
			frac /= 10;
		}
		for (int k = width; k < 6; k++) {
			frac *= 10;
		}
	}
	if (width > 0) {
		char f[8];

		/* PostgreSQL rounded the value to the column's precision: the rest is zeros */
		snprintf(f, sizeof(f), "%06lld", (long long)frac);
		buf_add_char(out, '.');
		buf_add(out, f, (size_t)(width < 6 ? width : 6));
	}
	buf_add_char(out, 'Z');
}

/* ZonedTimestamp text: ISO-8601 in UTC with exactly @width (0..6) fraction digits. */
static void
format_zoned(int64_t secs, int64_t frac, int width, struct buf *out)
{
	int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
	int64_t sod = secs - days * 86400, y;
	unsigned m, d;

	civil_from_days(days, &y, &m, &d);
	buf_add_fmt(out, y > 9999 ? "+%lld-%02u-%02uT" : "%04lld-%02u-%02uT", (long long)y, m, d);
	format_clock(sod, frac, width, out);
}

/*
 * time and timetz: Time (INT32 milliseconds of the day) for time(0) to time(3) in adaptive
 * mode, else MicroTime (INT64 microseconds of the day), 24:00:00 the whole day; timetz
 * ZonedTime, the time moved to UTC with the fewest fraction digits. An offset with seconds
 * fails Debezium's parser (DateTimeParseException, the compat suite's ob_times_bad): refused.
 */
static int
convert_clock(const struct relcache_col *col, struct slice t, enum pgvalue_time mode,
	      struct pgvalue *pv)
{
	bool zone = col->type_oid == PGTYPE_TIMETZ;
	bool millis =
		!zone && mode == PGVALUE_TIME_ADAPTIVE && col->typmod >= 0 && col->typmod <= 3;
	struct tcur c = { t.p, t.p + t.len };
	int64_t secs, us, off = 0;

	pv->v.type = zone ? CVALUE_STRING : millis ? CVALUE_INT32 : CVALUE_INT64;
	pv->v.name = zone   ? "io.debezium.time.ZonedTime" :
		     millis ? "io.debezium.time.Time" :
			      "io.debezium.time.MicroTime";
	pv->v.version = 1;
	if (pv->v.is_null) {
		return 0;
	}
	if (!tcur_hms(&c, true, &secs, &us) || (zone && !tcur_zone(&c, &off)) || c.p != c.end ||
	    off % 60) {
		return -EINVAL;
	}
	if (zone) {
		format_clock(((secs - off) % 86400 + 86400) % 86400, us, -1, &pv->data);
		pv->v.u.s = (struct slice){ pv->data.data, pv->data.len };
	} else {
		pv->v.u.i = millis ? secs * 1000 + us / 1000 : secs * 1000000 + us;
	}
	return 0;
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

int
pgvalue_datetime(const struct relcache_col *col, struct slice t, enum pgvalue_time mode,
		 struct pgvalue *pv)
{
	int64_t secs = 0, us = 0;
	bool zone = col->type_oid == PGTYPE_TIMESTAMPTZ, date = col->type_oid == PGTYPE_DATE;
	bool millis = !date && !zone && col->typmod >= 0 && col->typmod <= 3;

	if (col->type_oid == PGTYPE_TIME || col->type_oid == PGTYPE_TIMETZ) {
		return convert_clock(col, t, mode, pv);
	}
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
