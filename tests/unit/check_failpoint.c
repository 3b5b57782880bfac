/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "outboxd/util/failpoint.h"

START_TEST(test_spec_must_name_a_known_point_and_a_positive_count)
{
	ck_assert_int_eq(failpoint_init(NULL), 0);
	ck_assert_int_eq(failpoint_init(""), 0);
	ck_assert_int_eq(failpoint_init("after_begin"), 0);
	ck_assert_int_eq(failpoint_init("after_produce:12"), 0);
	ck_assert_int_eq(failpoint_init("shutdown_flush:1"), 0);
	ck_assert_int_eq(failpoint_init("after_beginning"), -EINVAL);
	ck_assert_int_eq(failpoint_init("after_begin:0"), -EINVAL);
	ck_assert_int_eq(failpoint_init("after_begin:x"), -EINVAL);
	ck_assert_int_eq(failpoint_init("after_begin:"), -EINVAL);
	ck_assert_int_eq(failpoint_init("after_begin:hang"), 0);
	ck_assert_int_eq(failpoint_init("after_begin:2:hang"), 0);
	ck_assert_int_eq(failpoint_init("after_begin:2:hung"), -EINVAL);
	ck_assert_int_eq(failpoint_init(":hang"), -EINVAL);
	ck_assert_str_eq(failpoint_name(FAILPOINT_MID_TRANSACTION), "mid_transaction");
	for (int i = 0; i < FAILPOINT_COUNT_; i++) {
		ck_assert_int_eq(failpoint_init(failpoint_name((enum failpoint)i)), 0);
	}
}
END_TEST

START_TEST(test_disarmed_is_inert)
{
	failpoint_init(NULL);
	for (int i = 0; i < FAILPOINT_COUNT_; i++) {
		failpoint_hit((enum failpoint)i);
	}
	/* armed elsewhere: other points pass */
	failpoint_init("after_status");
	failpoint_hit(FAILPOINT_AFTER_BEGIN);
	failpoint_hit(FAILPOINT_AFTER_PRODUCE);
}
END_TEST

/* Fires on the third pass: the test process must die by SIGKILL. */
START_TEST(test_fires_on_nth_pass)
{
	ck_assert_int_eq(failpoint_init("after_delivery:3"), 0);
	failpoint_hit(FAILPOINT_AFTER_DELIVERY);
	failpoint_hit(FAILPOINT_AFTER_DELIVERY);
	failpoint_hit(FAILPOINT_AFTER_DELIVERY);
	ck_abort_msg("still alive after the armed pass");
}
END_TEST

static atomic_bool reached, passed;

static void *
pass_hanging_point(void *arg)
{
	(void)arg;
	atomic_store(&reached, true);
	failpoint_hit(FAILPOINT_AFTER_DELIVERY);
	atomic_store(&passed, true);
	return NULL;
}

/* ":hang" stops the passing thread (for good) and kills nothing: the others go on. */
START_TEST(test_hang_stops_the_thread_not_the_process)
{
	pthread_t t;

	ck_assert_int_eq(failpoint_init("after_delivery:2:hang"), 0);
	failpoint_hit(FAILPOINT_AFTER_DELIVERY); /* the first pass goes through */
	ck_assert_int_eq(pthread_create(&t, NULL, pass_hanging_point, NULL), 0);
	for (int i = 0; i < 500 && !atomic_load(&reached); i++) {
		usleep(10 * 1000);
	}
	ck_assert(atomic_load(&reached));
	usleep(300 * 1000);
	ck_assert_msg(!atomic_load(&passed), "the thread went past the hanging point");
	/* the process ends with the test; the hanging thread with it */
}
END_TEST

static Suite *
failpoint_suite(void)
{
	Suite *s = suite_create("failpoint");
	TCase *tc = tcase_create("arm");

	tcase_add_test(tc, test_spec_must_name_a_known_point_and_a_positive_count);
	tcase_add_test(tc, test_disarmed_is_inert);
	tcase_add_test_raise_signal(tc, test_fires_on_nth_pass, SIGKILL);
	tcase_add_test(tc, test_hang_stops_the_thread_not_the_process);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(failpoint_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
