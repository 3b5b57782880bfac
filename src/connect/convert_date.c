/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Connect's Date, Time and Timestamp (time.precision.mode=connect), whose Java values are
 * java.util.Date, as Java writes them in text. Checked against Debezium 3.6.1 on Kafka 4.3.0
 * (the compat suite's ob_connect_times): SimpleHeaderConverter's Values picks the pattern by
 * the value alone, so a date or timestamp before 1970-01-02 prints as a time of day
 * ("00:00:00.000Z" for 1970-01-01 and every date before it) and a timestamp at midnight as a
 * date; Struct.toString() prints Date.toString(), in the Julian calendar before 1582-10-15.
 * Both in UTC: Java takes its default time zone, which is UTC where Debezium's images run and
 * which outboxd pins.
 */
#include "convert_int.h"

#include <string.h>

#include "outboxd/util/civil.h"

#define DAY_MS INT64_C(86400000)
/* 1582-10-15T00:00:00Z, the first day of the Gregorian calendar in java.util.Date */
#define GREGORIAN_CUTOVER_MS INT64_C(-12219292800000)

bool
convert_date_millis(const struct cvalue *v, int64_t *ms)
{
	if (!v->name || v->is_null) {
		return false;
	}
	if (v->type == CVALUE_INT32 && strcmp(v->name, CVALUE_DATE_NAME) == 0) {
		*ms = v->u.i * DAY_MS;
	} else if ((v->type == CVALUE_INT32 && strcmp(v->name, CVALUE_TIME_NAME) == 0) ||
		   (v->type == CVALUE_INT64 && strcmp(v->name, CVALUE_TIMESTAMP_NAME) == 0)) {
		*ms = v->u.i;
	} else {
		return false;
	}
	return true;
}

/* "HH:mm:ss" of @ms's time of day, then ".SSS" when @fraction. */
static void
clock_text(int64_t ms, bool fraction, struct buf *out)
{
	int64_t tod = ms - civil_floor_div(ms, DAY_MS) * DAY_MS;

	buf_add_fmt(out, "%02d:%02d:%02d", (int)(tod / 3600000), (int)(tod / 60000 % 60),
		    (int)(tod / 1000 % 60));
	if (fraction) {
		buf_add_fmt(out, ".%03d", (int)(tod % 1000));
	}
}

void
convert_date_values(int64_t ms, struct buf *out)
{
	int64_t y;
	unsigned m, d;

	/* Values.dateFormatFor(): by the value, not by the schema */
	if (ms < DAY_MS) {
		clock_text(ms, true, out);
		buf_add_char(out, 'Z');
		return;
	}
	civil_from_days(ms / DAY_MS, &y, &m, &d);
	buf_add_fmt(out, "%04lld-%02u-%02u", (long long)y, m, d);
	if (ms % DAY_MS) {
		buf_add_char(out, 'T');
		clock_text(ms, true, out);
		buf_add_char(out, 'Z');
	}
}

void
convert_date_java(int64_t ms, struct buf *out)
{
	static const char *const wday[] = { "Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed" };
	static const char *const mon[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	int64_t days = civil_floor_div(ms, DAY_MS), y;
	unsigned m, d;

	if (ms < GREGORIAN_CUTOVER_MS) {
		civil_julian_from_days(days, &y, &m, &d);
	} else {
		civil_from_days(days, &y, &m, &d);
	}
	/* "EEE MMM dd HH:mm:ss zzz yyyy", the year unpadded; 1970-01-01 was a Thursday */
	buf_add_fmt(out, "%s %s %02u ", wday[days - civil_floor_div(days, 7) * 7], mon[m - 1], d);
	clock_text(ms, false, out);
	buf_add_fmt(out, " UTC %lld", (long long)y);
}
