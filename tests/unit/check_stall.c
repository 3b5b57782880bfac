/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outboxd/obs/metrics.h"
#include "outboxd/pipeline/stall.h"
#include "outboxd/util/buf.h"

#define S INT64_C(1000000)

static struct stall_view
at(int64_t t_s, uint64_t waiting, bool progress)
{
	return (struct stall_view){ .now_us = t_s * S,
				    .warn_ms = 60000,
				    .waiting = waiting,
				    .progress = progress,
				    .queue_len = 7,
				    .broker = NULL };
}

static bool
chk(struct stall *st, struct stall_view v, struct metrics *m)
{
	return stall_check(st, &v, m);
}

static char *
health(const struct metrics *m, int *status)
{
	struct buf b = BUF_INIT;

	*status = metrics_health(m, &b);
	return buf_steal(&b);
}

/* stall_check() on @v, with what it writes to stderr (the log) into @log (@size bytes). */
static bool
chk_logged(struct stall *st, const struct stall_view *v, struct metrics *m, char *log, size_t size)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;
	bool r;

	ck_assert_ptr_nonnull(tmp);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	r = stall_check(st, v, m);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(log, 1, size - 1, tmp);
	log[n] = '\0';
	fclose(tmp);
	return r;
}

START_TEST(test_stall_is_measured_from_the_first_wait_and_reported_once)
{
	struct metrics *m = metrics_new();
	struct stall st = { 0 };
	struct stall_view v;
	char log[2048];
	int status;
	char *j;

	metrics_set_state(m, METRICS_STATE_STREAMING, NULL);
	ck_assert(!chk(&st, at(100, 5, false), m));
	ck_assert(!chk(&st, at(160, 5, false), m));
	v = at(161, 5, false);
	v.broker = "1/1 brokers are down";
	ck_assert(chk_logged(&st, &v, m, log, sizeof(log)));
	/* the words go to the log; /health, which answers anyone, carries the code */
	ck_assert_ptr_nonnull(strstr(log, "no delivery report for 61 s while 5 records wait "
					  "(producer queue 7)"));
	ck_assert_ptr_nonnull(strstr(log, "the brokers: 1/1 brokers are down"));
	j = health(m, &status);
	ck_assert_int_eq(status, 503);
	ck_assert_ptr_nonnull(strstr(j, "\"stalled\":true"));
	ck_assert_ptr_nonnull(strstr(j, "\"reason\":\"delivery_stalled\""));
	ck_assert_ptr_null(strstr(j, "brokers"));
	free(j);
	ck_assert(chk(&st, at(400, 5, false), m));
	ck_assert(!chk(&st, at(401, 3, true), m));
	j = health(m, &status);
	ck_assert_int_eq(status, 200);
	free(j);
	metrics_free(m);
}
END_TEST

START_TEST(test_nothing_in_flight_between_sessions_does_not_start_the_clock_over)
{
	struct metrics *m = metrics_new();
	struct stall st = { 0 };

	ck_assert(!chk(&st, at(10, 100, false), m));
	/* a restart: the new session has not produced its replay yet */
	ck_assert(!chk(&st, at(40, 0, false), m));
	ck_assert(!chk(&st, at(50, 100, false), m));
	ck_assert(chk(&st, at(71, 100, false), m));
	metrics_free(m);
}
END_TEST

START_TEST(test_progress_starts_the_clock_over_and_idle_is_not_a_stall)
{
	struct metrics *m = metrics_new();
	struct stall st = { 0 };

	ck_assert(!chk(&st, at(0, 1, false), m));
	for (int t = 30; t < 600; t += 30) {
		ck_assert(!chk(&st, at(t, 1, true), m));
	}
	ck_assert(!chk(&st, at(600, 0, true), m));
	ck_assert_int_eq(st.since_us, 0);
	ck_assert(!chk(&st, at(10000, 0, false), m));
	/* records that wait again start a new clock */
	ck_assert(!chk(&st, at(10001, 2, false), m));
	ck_assert(!chk(&st, at(10061, 2, false), m));
	ck_assert(chk(&st, at(10062, 2, false), m));
	metrics_free(m);
}
END_TEST

static Suite *
stall_suite(void)
{
	Suite *s = suite_create("stall");
	TCase *t = tcase_create("stall");

	tcase_add_test(t, test_stall_is_measured_from_the_first_wait_and_reported_once);
	tcase_add_test(t, test_nothing_in_flight_between_sessions_does_not_start_the_clock_over);
	tcase_add_test(t, test_progress_starts_the_clock_over_and_idle_is_not_a_stall);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(stall_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
