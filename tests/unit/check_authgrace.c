/* SPDX-License-Identifier: Apache-2.0 */
/* The grace of a broker's refusal (authgrace.h): the rule, read as the test names. */
#include <check.h>
#include <stdlib.h>

#include "outboxd/kafka/authgrace.h"

#define S  1000000LL /* one second in microseconds */
#define T0 (1000 * S)

START_TEST(test_refusals_persisting_past_the_grace_are_the_configuration)
{
	struct authgrace g = { .grace_us = 60 * S };

	ck_assert(!authgrace_refused(&g, T0, "r"));
	ck_assert(!authgrace_refused(&g, T0 + S / 5, "r"));
	ck_assert(!authgrace_refused(&g, T0 + 30 * S, "r"));
	ck_assert_int_eq(authgrace_since_us(&g, T0 + 45 * S), 45 * S);
	ck_assert(authgrace_refused(&g, T0 + 60 * S, "r"));
}
END_TEST

START_TEST(test_a_success_ends_the_episode)
{
	struct authgrace g = { .grace_us = 60 * S };

	ck_assert(!authgrace_refused(&g, T0, "r"));
	ck_assert(!authgrace_refused(&g, T0 + 30 * S, "r"));
	authgrace_ok(&g);
	ck_assert_int_eq(authgrace_since_us(&g, T0 + 31 * S), 0);
	ck_assert(!authgrace_refused(&g, T0 + 61 * S, "r"));
	ck_assert(!authgrace_refused(&g, T0 + 91 * S, "r"));
	ck_assert(authgrace_refused(&g, T0 + 121 * S, "r"));
}
END_TEST

/* librdkafka repeats a standing refusal at least every 30 s: a longer silence ended it. */
START_TEST(test_a_refusal_long_after_the_last_starts_anew)
{
	struct authgrace g = { .grace_us = 60 * S };

	ck_assert(!authgrace_refused(&g, T0, "r"));
	ck_assert(!authgrace_refused(&g, T0 + 3600 * S, "r"));
	ck_assert_int_eq(authgrace_since_us(&g, T0 + 3601 * S), S);
	ck_assert(!authgrace_refused(&g, T0 + 3630 * S, "r"));
	ck_assert(authgrace_refused(&g, T0 + 3660 * S, "r"));
}
END_TEST

/* A short grace still waits for a second report, librdkafka's repeat 30 s later. */
START_TEST(test_a_short_grace_needs_the_repeat)
{
	struct authgrace g = { .grace_us = 2 * S };

	ck_assert(!authgrace_refused(&g, T0, "r"));
	ck_assert(authgrace_refused(&g, T0 + 30 * S, "r"));
}
END_TEST

START_TEST(test_no_grace_is_the_first_refusal)
{
	struct authgrace g = { .grace_us = 0 };

	ck_assert(authgrace_refused(&g, T0, "r"));
}
END_TEST

static Suite *
authgrace_suite(void)
{
	Suite *s = suite_create("authgrace");
	TCase *tc = tcase_create("rule");

	tcase_add_test(tc, test_refusals_persisting_past_the_grace_are_the_configuration);
	tcase_add_test(tc, test_a_success_ends_the_episode);
	tcase_add_test(tc, test_a_refusal_long_after_the_last_starts_anew);
	tcase_add_test(tc, test_a_short_grace_needs_the_repeat);
	tcase_add_test(tc, test_no_grace_is_the_first_refusal);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(authgrace_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
