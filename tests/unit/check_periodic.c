/* SPDX-License-Identifier: Apache-2.0 */
/* The periodic-work seam (periodic.h), on a fake clock. */
#include <check.h>
#include <stdlib.h>

#include "outboxd/pipeline/periodic.h"

static int64_t fake_now;

static int64_t
fake_clock(void)
{
	return fake_now;
}

/* A scripted job: what each step leaves, how long it takes, what it returns. */
struct script {
	int runs;
	int64_t last_at;  /* the @now_us of the last step */
	int more;	  /* the next steps that leave PERIODIC_MORE */
	int failed;	  /* ... then PERIODIC_FAILED */
	int waiting;	  /* ... then PERIODIC_WAITING */
	int64_t takes_us; /* each step advances the clock this much */
	enum outcome ret; /* what each step returns */
};

static enum outcome
scripted(void *arg, int64_t now_us, enum periodic_left *ret_left)
{
	struct script *s = arg;

	s->runs++;
	s->last_at = now_us;
	fake_now += s->takes_us;
	if (s->more > 0) {
		s->more--;
		*ret_left = PERIODIC_MORE;
	} else if (s->failed > 0) {
		s->failed--;
		*ret_left = PERIODIC_FAILED;
	} else if (s->waiting > 0) {
		s->waiting--;
		*ret_left = PERIODIC_WAITING;
	} else {
		*ret_left = PERIODIC_DONE;
	}
	return s->ret;
}

static void
start(struct periodic *p, struct periodic_job *jobs, int n)
{
	fake_now = 1000000;
	periodic_start(p, jobs, n, fake_clock);
}

START_TEST(test_each_job_runs_at_its_cadence_from_its_first_run)
{
	struct script a = { 0 }, b = { 0 };
	struct periodic_job jobs[] = { { "a", 100, 100, scripted, &a },
				       { "b", 30, 0, scripted, &b } };
	struct periodic p;

	start(&p, jobs, 2);
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
	ck_assert_int_eq(a.runs, 0); /* first due 100 us after the start */
	ck_assert_int_eq(b.runs, 1); /* first due at the first turn */
	fake_now += 99;
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
	ck_assert_int_eq(a.runs, 0);
	ck_assert_int_eq(b.runs, 2); /* 99 >= 30 */
	fake_now += 1;
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
	ck_assert_int_eq(a.runs, 1);
	ck_assert_int_eq(b.runs, 2); /* 1 us after its last run */
	fake_now += 99;
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
	ck_assert_int_eq(a.runs, 1);
	fake_now += 1;
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
	ck_assert_int_eq(a.runs, 2);
}
END_TEST

/* The next run counts from the end of the step: a slow step does not bunch the next ones. */
START_TEST(test_the_cadence_counts_from_the_end_of_the_step)
{
	struct script a = { .takes_us = 40 };
	struct periodic_job jobs[] = { { "a", 100, 0, scripted, &a } };
	struct periodic p;

	start(&p, jobs, 1);
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
	ck_assert_int_eq(periodic_next_us(&p), 1000000 + 40 + 100);
}
END_TEST

START_TEST(test_a_job_with_more_work_runs_again_next_turn_without_waiting)
{
	struct script a = { .more = 2 }, b = { 0 };
	struct periodic_job jobs[] = { { "cleanup", 60000000, 0, scripted, &a },
				       { "gauges", 1000000, 1000000, scripted, &b } };
	struct periodic p;

	start(&p, jobs, 2);
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
	ck_assert_int_eq(a.runs, 1);
	/* the loop must not sleep: the wait ends now */
	ck_assert_int_eq(periodic_next_us(&p), fake_now);
	fake_now += 10;
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
	ck_assert_int_eq(a.runs, 2);
	ck_assert_int_eq(periodic_next_us(&p), fake_now);
	fake_now += 10;
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
	ck_assert_int_eq(a.runs, 3);				   /* the last batch: done */
	ck_assert_int_eq(periodic_next_us(&p), 1000000 + 1000000); /* the gauges' first */
	ck_assert_int_eq(periodic_job_next_us(&p, 0), fake_now + 60000000);
	fake_now += 10;
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
	ck_assert_int_eq(a.runs, 3);
	ck_assert_int_eq(b.runs, 0);
}
END_TEST

/*
 * A job never runs twice in one turn: not when it has more work, not when its step took longer
 * than its cadence; and the jobs after it still run in that turn.
 */
START_TEST(test_a_job_never_runs_more_than_once_per_turn)
{
	struct script a = { .more = 100, .takes_us = 5 }, b = { .takes_us = 500 }, c = { 0 };
	struct periodic_job jobs[] = { { "a", 1000, 0, scripted, &a },
				       { "b", 100, 0, scripted, &b },
				       { "c", 100, 0, scripted, &c } };
	struct periodic p;

	start(&p, jobs, 3);
	for (int turn = 1; turn <= 5; turn++) {
		ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
		fake_now += 1000;
		ck_assert_int_eq(a.runs, turn);
		ck_assert_int_eq(b.runs, turn);
		ck_assert_int_eq(c.runs, turn);
	}
}
END_TEST

/* The loop wakes for the earliest due job; a job that is off or waits outside adds nothing. */
START_TEST(test_the_wait_ends_at_the_earliest_due_job)
{
	struct script a = { 0 }, b = { 0 }, off = { 0 }, w = { .waiting = 1 };
	struct periodic_job jobs[] = { { "heartbeat", 5000, 5000, scripted, &a },
				       { "gauges", 1000, 1000, scripted, &b },
				       { "off", 0, 0, scripted, &off },
				       { "slot", 3000, 0, scripted, &w } };
	struct periodic p = { 0 };

	ck_assert_int_eq(periodic_next_us(&p), 0); /* no job: no deadline */
	start(&p, jobs, 4);
	ck_assert_int_eq(periodic_next_us(&p), 1000000); /* the slot's first run is due now */
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
	ck_assert_int_eq(w.runs, 1);
	/* the slot waits for its statement: the gauges are the earliest */
	ck_assert_int_eq(periodic_next_us(&p), 1000000 + 1000);
	ck_assert_int_eq(periodic_job_next_us(&p, 2), 0);
	ck_assert_int_eq(periodic_job_next_us(&p, 3), 0);
	fake_now += 1;
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
	ck_assert_int_eq(w.runs, 2); /* waiting: runs at every turn, without a deadline */
	ck_assert_int_eq(periodic_next_us(&p), 1000000 + 1000);
	ck_assert_int_eq(periodic_job_next_us(&p, 3), fake_now + 3000);
	ck_assert_int_eq(off.runs, 0);
	fake_now += 5000;
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
	ck_assert_int_eq(off.runs, 0);
	ck_assert_int_eq(a.runs, 1);
	ck_assert_int_eq(b.runs, 1);
}
END_TEST

/* A step that ends the session ends the turn: the jobs after it wait for the next one. */
START_TEST(test_an_outcome_ends_the_turn)
{
	struct script a = { .ret = OUTCOME_HALT }, b = { 0 };
	struct periodic_job jobs[] = { { "heartbeat", 100, 0, scripted, &a },
				       { "cleanup", 100, 0, scripted, &b } };
	struct periodic p;

	start(&p, jobs, 2);
	ck_assert_int_eq(periodic_run(&p), OUTCOME_HALT);
	ck_assert_int_eq(a.runs, 1);
	ck_assert_int_eq(b.runs, 0);
}
END_TEST

/* A job run on its own keeps its cadence; a poke makes a job due at once. */
START_TEST(test_one_job_alone_and_a_poke)
{
	struct script a = { 0 }, b = { 0 };
	struct periodic_job jobs[] = { { "cycle", 1000, 1000, scripted, &a },
				       { "watchdog", 100, 0, scripted, &b } };
	struct periodic p;

	start(&p, jobs, 2);
	ck_assert_int_eq(periodic_run_job(&p, 1), OUTCOME_OK);
	ck_assert_int_eq(periodic_run_job(&p, 1), OUTCOME_OK);
	ck_assert_int_eq(b.runs, 1);
	ck_assert_int_eq(a.runs, 0);
	ck_assert_int_eq(periodic_run_job(&p, 7), OUTCOME_OK); /* no such job */
	fake_now += 10;
	periodic_poke(&p, 0);
	ck_assert_int_eq(periodic_next_us(&p), fake_now);
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
	ck_assert_int_eq(a.runs, 1);
	ck_assert_int_eq(a.last_at, fake_now);
	ck_assert_int_eq(periodic_job_next_us(&p, 0), fake_now + 1000);
	periodic_poke(&p, 0); /* a poke never delays */
	ck_assert_int_eq(periodic_job_next_us(&p, 0), fake_now);
}
END_TEST

/*
 * A failed step backs its job off (issue 34): its cadence after the first failure in a row,
 * doubled after each further one up to its backoff_max_us; the turn and the other jobs go on
 * at their cadences; a step that leaves nothing brings the cadence back.
 */
START_TEST(test_a_failed_step_backs_off_up_to_its_cap_until_one_succeeds)
{
	struct script a = { .failed = 4 }, b = { 0 };
	struct periodic_job jobs[] = { { "cleanup", 100, 0, scripted, &a },
				       { "cycle", 1, 0, scripted, &b } };
	const int64_t waits[] = { 100, 200, 350, 350 };
	struct periodic p;

	start(&p, jobs, 2);
	periodic_backoff(&p, 0, 350);
	periodic_backoff(&p, 7, 350); /* no such job: nothing */
	for (int k = 0; k < 4; k++) {
		ck_assert_int_eq(periodic_retry_us(&p, 0), waits[k]);
		ck_assert_int_eq(periodic_run(&p), OUTCOME_OK); /* fails, the turn goes on */
		ck_assert_int_eq(a.runs, k + 1);
		ck_assert_int_eq(b.runs, 2 * k + 1);
		ck_assert_int_eq(periodic_job_next_us(&p, 0), fake_now + waits[k]);
		fake_now += waits[k] - 1;
		ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
		ck_assert_int_eq(a.runs, k + 1);     /* not before its wait */
		ck_assert_int_eq(b.runs, 2 * k + 2); /* the other job keeps its cadence */
		fake_now += 1;
	}
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK); /* succeeds */
	ck_assert_int_eq(a.runs, 5);
	ck_assert_int_eq(periodic_job_next_us(&p, 0), fake_now + 100);
	ck_assert_int_eq(periodic_retry_us(&p, 0), 100); /* a new run of failures */
	ck_assert_int_eq(periodic_retry_us(&p, 9), 0);	 /* no such job */
}
END_TEST

/* A job without a backoff, or with one below its cadence, retries at its cadence. */
START_TEST(test_a_failed_step_never_retries_sooner_than_the_cadence)
{
	struct script a = { .failed = 3 }, b = { .failed = 3 };
	struct periodic_job jobs[] = { { "count", 100, 0, scripted, &a },
				       { "cleanup", 100, 0, scripted, &b } };
	struct periodic p;

	start(&p, jobs, 2);
	periodic_backoff(&p, 1, 50);
	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(periodic_run(&p), OUTCOME_OK);
		ck_assert_int_eq(periodic_job_next_us(&p, 0), fake_now + 100);
		ck_assert_int_eq(periodic_job_next_us(&p, 1), fake_now + 100);
		fake_now += 100;
	}
	ck_assert_int_eq(a.runs, 3);
	ck_assert_int_eq(b.runs, 3);
}
END_TEST

/*
 * A job of several steps (a cleanup over several tables) whose last step fails counts one
 * failure per pass: the steps it has left in between keep the run of failures, only a step
 * that leaves nothing ends it.
 */
START_TEST(test_more_work_keeps_the_run_of_failures)
{
	struct script a = { .more = 1, .failed = 1 };
	struct periodic_job jobs[] = { { "cleanup", 100, 0, scripted, &a } };
	struct periodic p;

	start(&p, jobs, 1);
	periodic_backoff(&p, 0, 1000);
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK); /* more */
	ck_assert_int_eq(periodic_next_us(&p), fake_now);
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK); /* failed: the cadence */
	ck_assert_int_eq(periodic_next_us(&p), fake_now + 100);
	fake_now += 100;
	a.more = 1;
	a.failed = 1;
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK); /* more */
	ck_assert_int_eq(periodic_retry_us(&p, 0), 200);
	ck_assert_int_eq(periodic_run(&p), OUTCOME_OK); /* failed again: twice the cadence */
	ck_assert_int_eq(periodic_next_us(&p), fake_now + 200);
	ck_assert_int_eq(a.runs, 4);
}
END_TEST

static Suite *
periodic_suite(void)
{
	Suite *s = suite_create("periodic");
	TCase *t = tcase_create("periodic");

	tcase_add_test(t, test_each_job_runs_at_its_cadence_from_its_first_run);
	tcase_add_test(t, test_the_cadence_counts_from_the_end_of_the_step);
	tcase_add_test(t, test_a_job_with_more_work_runs_again_next_turn_without_waiting);
	tcase_add_test(t, test_a_job_never_runs_more_than_once_per_turn);
	tcase_add_test(t, test_the_wait_ends_at_the_earliest_due_job);
	tcase_add_test(t, test_an_outcome_ends_the_turn);
	tcase_add_test(t, test_one_job_alone_and_a_poke);
	tcase_add_test(t, test_a_failed_step_backs_off_up_to_its_cap_until_one_succeeds);
	tcase_add_test(t, test_a_failed_step_never_retries_sooner_than_the_cadence);
	tcase_add_test(t, test_more_work_keeps_the_run_of_failures);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(periodic_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
