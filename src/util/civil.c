/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Days and calendar dates (civil.h), after Howard Hinnant's chrono-compatible low-level date
 * algorithms: eras of 400 years (146097 days) in the Gregorian calendar, of 4 years (1461 days)
 * in the Julian one, each counted from a March 1st so that the leap day ends the year.
 */
#include "outboxd/util/civil.h"

int64_t
civil_floor_div(int64_t a, int64_t b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

int64_t
civil_days(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = civil_floor_div(y, 400);
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* The month and day of day @doy of a year that starts on March 1st. */
static void
month_day(unsigned doy, unsigned *m, unsigned *d)
{
	unsigned mp = (5 * doy + 2) / 153;

	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
}

void
civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t z = days + 719468, era = civil_floor_div(z, 146097);
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;

	month_day(doe - (365 * yoe + yoe / 4 - yoe / 100), m, d);
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

void
civil_julian_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d)
{
	/* Julian 0000-03-01 is 719470 days before 1970-01-01 (Gregorian 0000-03-01 is 719468) */
	int64_t z = days + 719470, era = civil_floor_div(z, 1461);
	unsigned doe = (unsigned)(z - era * 1461);
	unsigned yoe = (doe - doe / 1460) / 365;

	month_day(doe - 365 * yoe, m, d);
	*y = (int64_t)yoe + era * 4 + (*m <= 2);
}
