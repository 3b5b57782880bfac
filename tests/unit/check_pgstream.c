/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The replication connection's pure rule: how often status updates go out. Its I/O (reads,
 * status updates, a hang-up while reading is paused) is exercised against a real server in
 * tests/integration and tests/fault.
 */
#include <check.h>
#include <stdlib.h>

#include "outboxd/pg/pgstream.h"

/* status.update.interval.ms is kept while it is within a quarter of the server's timeout. */
START_TEST(test_configured_interval_within_a_quarter_is_kept)
{
	ck_assert_int_eq(pgstream_status_interval_ms(10000, 60000), 10000);
	ck_assert_int_eq(pgstream_status_interval_ms(300, 10000), 300);
	ck_assert_int_eq(pgstream_status_interval_ms(2500, 10000), 2500);
}
END_TEST

/*
 * The default 10 s against a server timing out after 10 s (the case: one late turn and
 * the walsender is gone) or less: a quarter of the server's timeout, whatever was configured.
 */
START_TEST(test_capped_at_a_quarter_of_wal_sender_timeout)
{
	ck_assert_int_eq(pgstream_status_interval_ms(10000, 10000), 2500);
	ck_assert_int_eq(pgstream_status_interval_ms(10000, 5000), 1250);
	ck_assert_int_eq(pgstream_status_interval_ms(INT64_C(86400000), 60000), 15000);
}
END_TEST

/* wal_sender_timeout = 0 turns the server's timeout off: the configured interval stands. */
START_TEST(test_no_server_timeout_keeps_the_configured_interval)
{
	ck_assert_int_eq(pgstream_status_interval_ms(10000, 0), 10000);
	ck_assert_int_eq(pgstream_status_interval_ms(INT64_C(86400000), 0), INT64_C(86400000));
}
END_TEST

/* Settings at their limits: never 0 (a status update at every turn), never negative. */
START_TEST(test_limits)
{
	ck_assert_int_eq(pgstream_status_interval_ms(1, 1), 1);
	ck_assert_int_eq(pgstream_status_interval_ms(10000, 3), 1);
	ck_assert_int_eq(pgstream_status_interval_ms(10000, 4), 1);
	ck_assert_int_eq(pgstream_status_interval_ms(10000, 8), 2);
	ck_assert_int_eq(pgstream_status_interval_ms(0, 10000), 1);
}
END_TEST

static Suite *
pgstream_suite(void)
{
	Suite *s = suite_create("pgstream");
	TCase *t = tcase_create("status_interval");

	tcase_add_test(t, test_configured_interval_within_a_quarter_is_kept);
	tcase_add_test(t, test_capped_at_a_quarter_of_wal_sender_timeout);
	tcase_add_test(t, test_no_server_timeout_keeps_the_configured_interval);
	tcase_add_test(t, test_limits);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(pgstream_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
