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
#include "outboxd/util/civil.h"
#include "pgvalue_int.h"

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
	*ret_days = civil_days(y, (unsigned)m, (unsigned)d);
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

/* java.time's ISO year: four digits at least, '+' beyond 9999, '-' before year 0. */
static void
format_year(int64_t y, struct buf *out)
{
	buf_add_fmt(out,
		    y > 9999 ? "+%lld" :
		    y < 0    ? "-%04lld" :
			       "%04lld",
		    (long long)(y < 0 ? -y : y));
}

/* "YYYY-MM-DD" of @days since the epoch. */
static void
format_date(int64_t days, struct buf *out)
{
	int64_t y;
	unsigned m, d;

	civil_from_days(days, &y, &m, &d);
	format_year(y, out);
	buf_add_fmt(out, "-%02u-%02u", m, d);
}

/*
 * ZonedTimestamp (and IsoTimestamp) text: ISO-8601 in UTC with exactly @width (0..6) fraction
 * digits, or the fewest when @width is -1.
 */
static void
format_zoned(int64_t secs, int64_t frac, int width, struct buf *out)
{
	int64_t days = civil_floor_div(secs, 86400);

	format_date(days, out);
	buf_add_char(out, 'T');
	format_clock(secs - days * 86400, frac, width, out);
}

/* How a time or timestamp column is written under a time.precision.mode. */
enum unit {
	UNIT_MILLIS, /* Time, Timestamp, Connect's Time and Timestamp */
	UNIT_MICROS, /* MicroTime, MicroTimestamp */
	UNIT_NANOS,  /* NanoTime, NanoTimestamp: beyond a long's nanoseconds null */
	UNIT_ISO,    /* IsoTime, IsoTimestamp: the fewest fraction digits, "Z" */
};

/*
 * The unit and schema name of a time (@clock) or timestamp column of precision @typmod:
 * adaptive takes milliseconds up to precision 3 (adaptive_time_microseconds only for a
 * timestamp), connect always, microseconds, nanoseconds and isostring their own.
 */
static enum unit
pick_unit(bool clock, int32_t typmod, enum pgvalue_time mode, const char **name)
{
	bool small = typmod >= 0 && typmod <= 3;

	switch (mode) {
	case PGVALUE_TIME_CONNECT:
		*name = clock ? CVALUE_TIME_NAME : CVALUE_TIMESTAMP_NAME;
		return UNIT_MILLIS;
	case PGVALUE_TIME_ISOSTRING:
		*name = clock ? "io.debezium.time.IsoTime" : "io.debezium.time.IsoTimestamp";
		return UNIT_ISO;
	case PGVALUE_TIME_NANOSECONDS:
		*name = clock ? "io.debezium.time.NanoTime" : "io.debezium.time.NanoTimestamp";
		return UNIT_NANOS;
	case PGVALUE_TIME_ADAPTIVE_TIME_MICROSECONDS:
	case PGVALUE_TIME_ADAPTIVE:
		if (small && (!clock || mode == PGVALUE_TIME_ADAPTIVE)) {
			*name = clock ? "io.debezium.time.Time" : "io.debezium.time.Timestamp";
			return UNIT_MILLIS;
		}
		break;
	case PGVALUE_TIME_MICROSECONDS: break;
	}
	*name = clock ? "io.debezium.time.MicroTime" : "io.debezium.time.MicroTimestamp";
	return UNIT_MICROS;
}

static enum cvalue_type
unit_type(enum unit u, bool clock)
{
	return u == UNIT_ISO		 ? CVALUE_STRING :
	       u == UNIT_MILLIS && clock ? CVALUE_INT32 :
					   CVALUE_INT64;
}

/*
 * @secs and @us (0..999999) in @u into @pv: milliseconds rounded down as
 * Instant.toEpochMilli() does; nanoseconds null beyond a long, as Debezium writes them; ISO
 * text as a timestamp, or as a time of day when @clock (24:00:00 is LocalTime's 00:00:00).
 * Return: 0, or -EINVAL (microseconds beyond a long: year 294247).
 */
static int
put_unit(enum unit u, bool clock, int64_t secs, int64_t us, struct pgvalue *pv)
{
	switch (u) {
	case UNIT_MILLIS: pv->v.u.i = secs * 1000 + us / 1000; return 0;
	case UNIT_MICROS:
		return __builtin_mul_overflow(secs, 1000000, &pv->v.u.i) ||
				       __builtin_add_overflow(pv->v.u.i, us, &pv->v.u.i) ?
			       -EINVAL :
			       0;
	case UNIT_NANOS:
		pv->v.is_null = __builtin_mul_overflow(secs, 1000000000, &pv->v.u.i) ||
				__builtin_add_overflow(pv->v.u.i, us * 1000, &pv->v.u.i);
		return 0;
	case UNIT_ISO:
		if (clock) {
			format_clock(secs % 86400, us, -1, &pv->data);
		} else {
			format_zoned(secs, us, -1, &pv->data);
		}
		pv->v.u.s = (struct slice){ pv->data.data, pv->data.len };
		return 0;
	}
	return -EINVAL;
}

/*
 * time and timetz: Time (INT32 milliseconds of the day) for time(0) to time(3) in adaptive
 * mode, Connect's Time (the same milliseconds, rounded down) for every time in connect mode,
 * MicroTime (INT64 microseconds of the day), NanoTime, or IsoTime text (pick_unit()),
 * 24:00:00 the whole day but in IsoTime; timetz ZonedTime, the time moved to UTC with the
 * fewest fraction digits, in every mode. An offset with seconds fails Debezium's parser
 * (DateTimeParseException, the compat suite's ob_times_bad): refused.
 */
static int
convert_clock(const struct relcache_col *col, struct slice t, enum pgvalue_time mode, bool sql,
	      struct pgvalue *pv)
{
	bool zone = col->type_oid == PGTYPE_TIMETZ;
	enum unit u = pick_unit(true, col->typmod, mode, &pv->v.name);
	struct tcur c = { t.p, t.p + t.len };
	int64_t secs, us, off = 0;

	pv->v.type = zone ? CVALUE_STRING : unit_type(u, true);
	if (zone) {
		pv->v.name = "io.debezium.time.ZonedTime";
	}
	pv->v.version = 1;
	if (pv->v.is_null) {
		return 0;
	}
	if (!tcur_hms(&c, true, &secs, &us) || (zone && !tcur_zone(&c, &off)) || c.p != c.end ||
	    (off % 60 && !sql)) {
		return -EINVAL;
	}
	if (sql) {
		/* java.sql.Time: milliseconds of a day that ends before 24:00:00, none for timetz */
		us = zone ? 0 : us / 1000 * 1000;
		secs %= 86400;
	}
	if (zone) {
		format_clock(((secs - off) % 86400 + 86400) % 86400, us, -1, &pv->data);
		pv->v.u.s = (struct slice){ pv->data.data, pv->data.len };
		return 0;
	}
	return put_unit(u, true, secs, us, pv);
}

int
pgvalue_sqltime(const struct relcache_col *col, struct slice t, enum pgvalue_time mode,
		struct pgvalue *pv)
{
	return convert_clock(col, t, mode, true, pv);
}

/*
 * PostgreSQL's 'infinity' and '-infinity' as Debezium 3.6.1 writes them (the compat suite's
 * ob_types_inf tables): a timestamptz as that text; a timestamp as pgjdbc's
 * DATE_POSITIVE_INFINITY and DATE_NEGATIVE_INFINITY (9223372036825200000,
 * -9223372036832400000 microseconds) in its unit, nanoseconds saturated to a long's ends; a
 * date as -2147472692 and -2147472691 days (PostgreSQL's INT32_MAX and INT32_MIN day numbers
 * from 2000 moved to 1970 in wrapping int arithmetic), in IsoDate those days' text.
 * False if @t is neither.
 */
static bool
convert_infinity(bool date, bool zone, enum unit u, struct slice t, struct pgvalue *pv)
{
	bool pos = slice_eq_str(t, "infinity");
	int64_t ts = pos ? INT64_C(9223372036825200000) : INT64_C(-9223372036832400000);
	int32_t days = pos ? INT32_C(-2147472692) : INT32_C(-2147472691);

	if (!pos && !slice_eq_str(t, "-infinity")) {
		return false;
	}
	if (zone) {
		pv->v.u.s = t;
	} else if (date && u == UNIT_ISO) {
		format_date(days, &pv->data);
		buf_add_char(&pv->data, 'Z');
		pv->v.u.s = (struct slice){ pv->data.data, pv->data.len };
	} else if (date) {
		pv->v.u.i = days;
	} else if (u == UNIT_NANOS) {
		pv->v.u.i = pos ? INT64_MAX : INT64_MIN;
	} else {
		put_unit(u, false, civil_floor_div(ts, 1000000),
			 ts - civil_floor_div(ts, 1000000) * 1000000, pv);
	}
	return true;
}

int
pgvalue_datetime(const struct relcache_col *col, struct slice t, enum pgvalue_time mode,
		 struct pgvalue *pv)
{
	int64_t secs = 0, us = 0;
	bool zone = col->type_oid == PGTYPE_TIMESTAMPTZ, date = col->type_oid == PGTYPE_DATE;
	enum unit u = UNIT_MILLIS;

	if (col->type_oid == PGTYPE_TIME || col->type_oid == PGTYPE_TIMETZ) {
		return convert_clock(col, t, mode, false, pv);
	}
	if (date) {
		/* days: Debezium's Date, Connect's, or IsoDate's text */
		u = mode == PGVALUE_TIME_ISOSTRING ? UNIT_ISO : UNIT_MILLIS;
		pv->v.type = u == UNIT_ISO ? CVALUE_STRING : CVALUE_INT32;
		pv->v.name = mode == PGVALUE_TIME_CONNECT ? CVALUE_DATE_NAME :
			     u == UNIT_ISO		  ? "io.debezium.time.IsoDate" :
							    "io.debezium.time.Date";
	} else if (zone) {
		pv->v.type = CVALUE_STRING;
		pv->v.name = "io.debezium.time.ZonedTimestamp";
	} else {
		u = pick_unit(false, col->typmod, mode, &pv->v.name);
		pv->v.type = unit_type(u, false);
	}
	pv->v.version = 1;
	if (pv->v.is_null) {
		return 0;
	}
	if (convert_infinity(date, zone, u, t, pv)) {
		return 0;
	}
	if (parse_datetime(t.p, t.len, !date, zone, &secs, &us) < 0) {
		return -EINVAL;
	}
	if (date) {
		/* days since the epoch; PostgreSQL's last date fits an INT32 */
		if (secs / 86400 > INT32_MAX) {
			return -EINVAL;
		}
		if (u == UNIT_ISO) {
			format_date(secs / 86400, &pv->data);
			buf_add_char(&pv->data, 'Z');
			pv->v.u.s = (struct slice){ pv->data.data, pv->data.len };
		} else {
			pv->v.u.i = secs / 86400;
		}
		return 0;
	}
	if (zone) {
		/* unconstrained (-1): Debezium reads the column's scale as 6 */
		format_zoned(secs, us, col->typmod < 0 ? 6 : col->typmod, &pv->data);
		pv->v.u.s = (struct slice){ pv->data.data, pv->data.len };
		return 0;
	}
	return put_unit(u, false, secs, us, pv);
}
