/* SPDX-License-Identifier: Apache-2.0 */
/* The supervisor's rules (supervise.h): the restart backoff and halt-after-failures. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pipeline/supervise.h"

#define MINUTE_US (INT64_C(60) * 1000000)

START_TEST(test_backoff_doubles_from_500_ms_to_the_cap)
{
	struct supervise sv;

	supervise_init(&sv, 30000, 5, false);
	ck_assert_int_eq(supervise_wait_ms(&sv, 0), 500);
	ck_assert_int_eq(supervise_wait_ms(&sv, 0), 1000);
	ck_assert_int_eq(supervise_wait_ms(&sv, 1000), 2000);
	ck_assert_int_eq(supervise_wait_ms(&sv, 0), 4000);
	ck_assert_int_eq(supervise_wait_ms(&sv, 0), 8000);
	ck_assert_int_eq(supervise_wait_ms(&sv, 0), 16000);
	ck_assert_int_eq(supervise_wait_ms(&sv, 0), 30000);
	ck_assert_int_eq(supervise_wait_ms(&sv, 0), 30000);
}
END_TEST

/* A failure after a session that ran a healthy minute waits 500 ms again, then doubles anew. */
START_TEST(test_a_healthy_session_starts_the_backoff_over)
{
	struct supervise sv;

	supervise_init(&sv, 30000, 5, false);
	for (int i = 0; i < 10; i++) {
		(void)supervise_wait_ms(&sv, 0);
	}
	ck_assert_int_eq(supervise_wait_ms(&sv, MINUTE_US - 1), 30000);
	ck_assert_int_eq(supervise_wait_ms(&sv, MINUTE_US), 500);
	ck_assert_int_eq(supervise_wait_ms(&sv, 0), 1000);
}
END_TEST

/* The cap holds from the first wait on, and at its limits. */
START_TEST(test_cap_below_the_first_wait)
{
	struct supervise sv;

	supervise_init(&sv, 200, 5, false);
	ck_assert_int_eq(supervise_wait_ms(&sv, 0), 200);
	ck_assert_int_eq(supervise_wait_ms(&sv, 0), 200);
	supervise_init(&sv, INT64_MAX, 5, false);
	for (int i = 0; i < 100; i++) {
		ck_assert_int_gt(supervise_wait_ms(&sv, 0), 0);
	}
}
END_TEST

START_TEST(test_the_same_culprit_halts_after_n_failures_in_a_row)
{
	struct supervise sv;
	int64_t n = -1;

	supervise_init(&sv, 30000, 3, false);
	ck_assert_int_eq(supervise_failed(&sv, "0/16B3748", NULL, &n), SUPERVISE_RETRY);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(supervise_failed(&sv, "0/16B3748", NULL, &n), SUPERVISE_RETRY);
	ck_assert_int_eq(supervise_failed(&sv, "0/16B3748", NULL, &n), SUPERVISE_HALT);
	ck_assert_int_eq(n, 3);
}
END_TEST

/* Another culprit, or a failure that concerns none (a cut connection), starts the count over. */
START_TEST(test_other_failures_start_the_count_over)
{
	struct supervise sv;
	int64_t n = -1;

	supervise_init(&sv, 30000, 3, false);
	ck_assert_int_eq(supervise_failed(&sv, "a", NULL, &n), SUPERVISE_RETRY);
	ck_assert_int_eq(supervise_failed(&sv, "a", NULL, &n), SUPERVISE_RETRY);
	ck_assert_int_eq(supervise_failed(&sv, NULL, NULL, &n), SUPERVISE_RETRY);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(supervise_failed(&sv, "a", NULL, &n), SUPERVISE_RETRY);
	ck_assert_int_eq(supervise_failed(&sv, "b", NULL, &n), SUPERVISE_RETRY);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(supervise_failed(&sv, "", NULL, &n), SUPERVISE_RETRY);
	ck_assert_int_eq(supervise_failed(&sv, "b", NULL, &n), SUPERVISE_RETRY);
	ck_assert_int_eq(supervise_failed(&sv, "b", NULL, &n), SUPERVISE_RETRY);
	ck_assert_int_eq(supervise_failed(&sv, "b", NULL, &n), SUPERVISE_HALT);
}
END_TEST

/*
 * With a dead-letter topic the row goes there once: its dead letter gets halt_after sessions of
 * its own, and the same row failing again halts. Another row of the same transaction (the
 * culprit) may go there too.
 */
START_TEST(test_dead_letter_once_then_halt)
{
	struct supervise sv;
	int64_t n = -1;

	supervise_init(&sv, 30000, 2, true);
	ck_assert_int_eq(supervise_failed(&sv, "0/1", "0/1 id-a", &n), SUPERVISE_RETRY);
	ck_assert_int_eq(supervise_failed(&sv, "0/1", "0/1 id-a", &n), SUPERVISE_DEAD_LETTER);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(supervise_failed(&sv, "0/1", "0/1 id-b", &n), SUPERVISE_RETRY);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(supervise_failed(&sv, "0/1", "0/1 id-b", &n), SUPERVISE_DEAD_LETTER);
	ck_assert_int_eq(supervise_failed(&sv, "0/1", "0/1 id-b", &n), SUPERVISE_RETRY);
	ck_assert_int_eq(supervise_failed(&sv, "0/1", "0/1 id-b", &n), SUPERVISE_HALT);
	/* without one, straight to the halt */
	supervise_init(&sv, 30000, 2, false);
	ck_assert_int_eq(supervise_failed(&sv, "id-a", NULL, &n), SUPERVISE_RETRY);
	ck_assert_int_eq(supervise_failed(&sv, "id-a", NULL, &n), SUPERVISE_HALT);
}
END_TEST

/* outboxd.halt.after.failures=1: the first failure of a culprit decides. */
START_TEST(test_halt_after_one)
{
	struct supervise sv;

	supervise_init(&sv, 30000, 1, true);
	ck_assert_int_eq(supervise_failed(&sv, NULL, NULL, NULL), SUPERVISE_RETRY);
	ck_assert_int_eq(supervise_failed(&sv, "x", NULL, NULL), SUPERVISE_DEAD_LETTER);
	ck_assert_int_eq(supervise_failed(&sv, "x", NULL, NULL), SUPERVISE_HALT);
}
END_TEST

/*
 * Row ids of any length (a text id is not bounded): one of 600 bytes is dead-lettered once and
 * then halts, as a short one does; another alike in its first 599 bytes is another row.
 */
START_TEST(test_long_ids_are_told_apart_whole)
{
	struct supervise sv;
	char a[601], b[601];
	int64_t n = -1;

	memset(a, 'L', 600);
	a[600] = '\0';
	memcpy(b, a, sizeof(a));
	b[599] = 'M';
	supervise_init(&sv, 30000, 1, true);
	ck_assert_int_eq(supervise_failed(&sv, a, NULL, &n), SUPERVISE_DEAD_LETTER);
	ck_assert_int_eq(supervise_failed(&sv, a, NULL, &n), SUPERVISE_HALT);
	supervise_init(&sv, 30000, 1, true);
	ck_assert_int_eq(supervise_failed(&sv, a, NULL, &n), SUPERVISE_DEAD_LETTER);
	ck_assert_int_eq(supervise_failed(&sv, b, NULL, &n), SUPERVISE_DEAD_LETTER);
	ck_assert_int_eq(supervise_failed(&sv, b, NULL, &n), SUPERVISE_HALT);
	/* the count, too, tells them apart */
	supervise_init(&sv, 30000, 2, false);
	ck_assert_int_eq(supervise_failed(&sv, a, NULL, &n), SUPERVISE_RETRY);
	ck_assert_int_eq(supervise_failed(&sv, b, NULL, &n), SUPERVISE_RETRY);
	ck_assert_int_eq(n, 1);
}
END_TEST

static Suite *
supervise_suite(void)
{
	Suite *s = suite_create("supervise");
	TCase *t = tcase_create("supervise");

	tcase_add_test(t, test_backoff_doubles_from_500_ms_to_the_cap);
	tcase_add_test(t, test_a_healthy_session_starts_the_backoff_over);
	tcase_add_test(t, test_cap_below_the_first_wait);
	tcase_add_test(t, test_the_same_culprit_halts_after_n_failures_in_a_row);
	tcase_add_test(t, test_other_failures_start_the_count_over);
	tcase_add_test(t, test_dead_letter_once_then_halt);
	tcase_add_test(t, test_halt_after_one);
	tcase_add_test(t, test_long_ids_are_told_apart_whole);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(supervise_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
