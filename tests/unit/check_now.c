/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdlib.h>
#include <time.h>

#include "outboxd/util/now.h"

/* 2000-01-01T00:00:00Z is 946684800 s after the Unix epoch (10957 days of 86400 s). */
START_TEST(test_pg_epoch_offset_is_2000_01_01)
{
	struct tm tm = { .tm_year = 100, .tm_mon = 0, .tm_mday = 1 };

	ck_assert_int_eq(NOW_PG_EPOCH_OFFSET_US, (int64_t)10957 * 86400 * 1000000);
	ck_assert_int_eq((int64_t)timegm(&tm) * 1000000, NOW_PG_EPOCH_OFFSET_US);
}
END_TEST

/* The wall clocks agree with each other and with time(2), in their own units. */
START_TEST(test_wall_clocks_agree_in_their_units)
{
	int64_t before = (int64_t)time(NULL);
	int64_t us = now_unix_us(), ms = now_unix_ms(), pg = now_pg_us();
	int64_t after = (int64_t)time(NULL);

	ck_assert_int_ge(us / 1000000, before);
	ck_assert_int_le(us / 1000000, after);
	ck_assert_int_ge(ms, us / 1000);
	ck_assert_int_le(ms - us / 1000, 1000);
	ck_assert_int_ge(pg + NOW_PG_EPOCH_OFFSET_US, us);
	ck_assert_int_le(pg + NOW_PG_EPOCH_OFFSET_US - us, 1000000);
}
END_TEST

/* The monotonic clock never goes backwards and counts microseconds, not nanoseconds. */
START_TEST(test_monotonic_never_goes_back)
{
	struct timespec pause = { 0, 2000000 };
	int64_t a = now_monotonic_us(), b;

	nanosleep(&pause, NULL);
	b = now_monotonic_us();
	ck_assert_int_ge(b - a, 2000);
	ck_assert_int_lt(b - a, 2000000);
}
END_TEST

static Suite *
now_suite(void)
{
	Suite *s = suite_create("now");
	TCase *tc = tcase_create("clocks");

	tcase_add_test(tc, test_pg_epoch_offset_is_2000_01_01);
	tcase_add_test(tc, test_wall_clocks_agree_in_their_units);
	tcase_add_test(tc, test_monotonic_never_goes_back);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(now_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
