/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_UTIL_CIVIL_H
#define OUTBOXD_UTIL_CIVIL_H

/*
 * Calendar dates and days since 1970-01-01, with no time zone: the proleptic Gregorian calendar
 * (PostgreSQL's, java.time's) and the Julian one (java.util.Date's before 1582-10-15). By hand:
 * libc's timegm()/gmtime_r() stop at time_t and the Julian calendar is not in any C library.
 * Pure.
 */

#include <stdint.h>

/* civil_days() - days from 1970-01-01 to @y-@m-@d (Gregorian, @m 1..12, @d 1..31). */
int64_t civil_days(int64_t y, unsigned m, unsigned d);

/* civil_from_days() - the Gregorian date @days after 1970-01-01 (before it when negative). */
void civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

/* civil_julian_from_days() - the same day in the Julian calendar. */
void civil_julian_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

/* civil_floor_div() - @a / @b rounded towards negative infinity (@b > 0). */
int64_t civil_floor_div(int64_t a, int64_t b);

#endif
