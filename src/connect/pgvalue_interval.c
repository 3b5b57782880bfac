/* SPDX-License-Identifier: Apache-2.0 */
/*
 * interval, as Debezium's PostgresValueConverter converts it under interval.handling.mode, from
 * the text PostgreSQL writes under IntervalStyle=postgres (which outboxd pins): pgjdbc's
 * PGInterval fields (years, months, days, hours, minutes, seconds with microseconds, each with
 * its own sign), then MicroDuration (numeric) or Interval (ISO 8601 text). Parsed by hand: no C
 * library reads PostgreSQL's interval text.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "outboxd/connect/pgvalue.h"
#include "pgvalue_int.h"

/* Debezium's MicroDuration.DAYS_PER_MONTH_AVG: a Julian year's twelfth. */
#define DAYS_PER_MONTH_AVG (365.25 / 12.0)

struct ival {
	int64_t years, months, days, hours, minutes, seconds, micros;
};

struct icur {
	const char *p, *end;
};

/* An optional sign, then 1 to @max digits; false if none. */
static bool
icur_int(struct icur *c, int max, int64_t *ret)
{
	int64_t v = 0, sign = 1;
	int n = 0;

	if (c->p < c->end && (*c->p == '-' || *c->p == '+')) {
		sign = *c->p++ == '-' ? -1 : 1;
	}
	while (c->p < c->end && n < max && *c->p >= '0' && *c->p <= '9') {
		v = v * 10 + (*c->p++ - '0');
		n++;
	}
	*ret = sign * v;
	return n > 0 && !(c->p < c->end && *c->p >= '0' && *c->p <= '9');
}

static bool
icur_word(struct icur *c, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(c->end - c->p) >= n && memcmp(c->p, w, n) == 0) {
		c->p += n;
		return true;
	}
	return false;
}

/*
 * "[-+]H+:MM:SS[.f]": the sign applies to every field, as PGInterval reads it. Hours past
 * 2147483647 (PostgreSQL's clock goes to 2562047788) fail PGInterval's Integer.parseInt and
 * Debezium's event: refused.
 */
static bool
icur_clock(struct icur *c, struct ival *iv)
{
	int64_t sign = 1, h, m, s, frac = 0;
	const char *f;

	if (c->p < c->end && (*c->p == '-' || *c->p == '+')) {
		sign = *c->p++ == '-' ? -1 : 1;
	}
	if (c->p >= c->end || *c->p < '0' || *c->p > '9' || !icur_int(c, 10, &h) ||
	    !icur_word(c, ":") || !icur_int(c, 2, &m) || !icur_word(c, ":") ||
	    !icur_int(c, 2, &s) || h < 0 || h > INT32_MAX || m < 0 || m > 59 || s < 0 || s > 59) {
		return false;
	}
	if (icur_word(c, ".")) {
		f = c->p;
		while (c->p < c->end && c->p - f < 6 && *c->p >= '0' && *c->p <= '9') {
			frac = frac * 10 + (*c->p++ - '0');
		}
		if (c->p == f || (c->p < c->end && *c->p >= '0' && *c->p <= '9')) {
			return false;
		}
		for (ptrdiff_t n = c->p - f; n < 6; n++) {
			frac *= 10;
		}
	}
	iv->hours = sign * h;
	iv->minutes = sign * m;
	iv->seconds = sign * s;
	iv->micros = sign * frac;
	return true;
}

/*
 * PostgreSQL's IntervalStyle=postgres output: "[N year[s]] [N mon[s]] [N day[s]] [clock]",
 * space-separated, at least one part, each unit at most once and in that order; a clock
 * "00:00:00" for zero.
 */
static bool
parse_interval(struct slice t, struct ival *iv)
{
	static const char *const units[][2] = { { " years", " year" },
						{ " mons", " mon" },
						{ " days", " day" } };
	struct icur c = { t.p, t.p + t.len };
	int64_t *fields[] = { &iv->years, &iv->months, &iv->days };
	int next = 0, parts = 0;

	*iv = (struct ival){ 0 };
	while (c.p < c.end) {
		struct icur save = c;
		int64_t v;
		int u;

		if (parts && !icur_word(&c, " ")) {
			return false;
		}
		save = c;
		if (icur_int(&c, 10, &v)) {
			for (u = next; u < 3; u++) {
				if (icur_word(&c, units[u][0]) || icur_word(&c, units[u][1])) {
					break;
				}
			}
			if (u < 3) {
				*fields[u] = v;
				next = u + 1;
				parts++;
				continue;
			}
			c = save; /* digits then ':': the clock */
		}
		if (!icur_clock(&c, iv) || c.p != c.end) {
			return false;
		}
		parts++;
	}
	return parts > 0;
}

/*
 * MicroDuration.durationMicros(): months at DAYS_PER_MONTH_AVG days, in doubles, in the order
 * Debezium computes them, then Java's (long) cast (toward zero, saturating).
 */
static int64_t
duration_micros(const struct ival *iv)
{
	double days = (double)(iv->years * 12 + iv->months) * DAYS_PER_MONTH_AVG + (double)iv->days;
	double secs = ((days * 24 + (double)iv->hours) * 60 + (double)iv->minutes) * 60 +
		      (double)iv->seconds;
	double us = secs * 1e6 + (double)iv->micros;

	if (us != us) {
		return 0;
	}
	if (us >= 9223372036854775807.0) {
		return INT64_MAX;
	}
	if (us <= -9223372036854775808.0) {
		return INT64_MIN;
	}
	return (int64_t)us;
}

/* Interval.toIsoString(): "PnYnMnDTnHnMnS", every field, seconds with their fraction. */
static void
iso_interval(const struct ival *iv, struct buf *out)
{
	int64_t us = iv->seconds * 1000000 + iv->micros;
	int64_t whole = us / 1000000, frac = us % 1000000;

	buf_add_fmt(out, "P%" PRId64 "Y%" PRId64 "M%" PRId64 "DT%" PRId64 "H%" PRId64 "M",
		    iv->years, iv->months, iv->days, iv->hours, iv->minutes);
	if (us < 0 && whole == 0) {
		buf_add_char(out, '-');
	}
	buf_add_fmt(out, "%" PRId64, whole);
	if (frac) {
		char f[8];
		size_t n = 6;

		snprintf(f, sizeof(f), "%06" PRId64, frac < 0 ? -frac : frac);
		while (n > 0 && f[n - 1] == '0') {
			n--;
		}
		buf_add_char(out, '.');
		buf_add(out, f, n);
	}
	buf_add_char(out, 'S');
}

int
pgvalue_interval(struct slice t, enum pgvalue_interval mode, struct pgvalue *pv)
{
	struct ival iv;

	pv->v.type = mode == PGVALUE_INTERVAL_STRING ? CVALUE_STRING : CVALUE_INT64;
	pv->v.name = mode == PGVALUE_INTERVAL_STRING ? "io.debezium.time.Interval" :
						       "io.debezium.time.MicroDuration";
	pv->v.version = 1;
	if (pv->v.is_null) {
		return 0;
	}
	if (!parse_interval(t, &iv)) {
		return -EINVAL;
	}
	if (mode == PGVALUE_INTERVAL_STRING) {
		iso_interval(&iv, &pv->data);
		pv->v.u.s = (struct slice){ pv->data.data, pv->data.len };
	} else {
		pv->v.u.i = duration_micros(&iv);
	}
	return 0;
}
