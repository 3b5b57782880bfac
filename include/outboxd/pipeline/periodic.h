/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PIPELINE_PERIODIC_H
#define OUTBOXD_PIPELINE_PERIODIC_H

/*
 * The periodic work of a session (redis's serverCron and run_with_period): the heartbeat, the
 * slot statistics, the cleanup, the poller's upkeep, the gauges. A source declares its jobs in
 * one table, each with its cadence, and runs them through periodic_run() once per turn of its
 * loop; the loop's wait ends at periodic_next_us(), the earliest due job.
 *
 * The rule that keeps the loop turning: a job's step does at most one bounded piece of work (a
 * batch, one statement queued) and says what is left. Work left that is ready at once
 * (PERIODIC_MORE) runs again at the next turn and the loop does not sleep meanwhile; work that
 * waits on something outside (a queued statement's result, the slot's confirmation) runs again
 * at the next turn, whenever that comes. Between two steps the loop serves signals, delivery
 * reports and the liveness clock, so no job holds the loop thread longer than one step, and a
 * job runs at most once per turn, however late the turn is.
 *
 * A job whose work can fail without ending the session (side work: a count, a cleanup) says so
 * (PERIODIC_FAILED) and backs off on its own: it waits its cadence after the first failure in
 * a row, twice that after the second, and so on up to its periodic_backoff(), while the other
 * jobs keep their cadences; a step that leaves nothing ends the run of failures.
 *
 * Pure: the clock is the caller's (a fake one in the tests), and nothing is logged.
 */

#include <stdbool.h>
#include <stdint.h>

#include "outboxd/pipeline/outcome.h"

/* The most jobs a table holds (the relay has four, the poller five). */
#define PERIODIC_MAX_JOBS 8

/* What a step leaves. */
enum periodic_left {
	PERIODIC_DONE, /* nothing: the job runs again one cadence after this step ended */
	PERIODIC_MORE, /* work ready at once: again at the next turn, which comes without a wait */
	PERIODIC_WAITING, /* work that waits on something outside: again at the next turn */
	PERIODIC_FAILED,  /* the work failed, the job goes on: again after its backoff */
};

/**
 * periodic_step_fn - one bounded step of a job, due at @now_us (the table's clock).
 * @ret_left: what is left (see enum periodic_left); set on every return.
 * Return: OUTCOME_OK, or what ends the session (the reason is the job's to record).
 */
typedef enum outcome (*periodic_step_fn)(void *arg, int64_t now_us, enum periodic_left *ret_left);

/* One job as its source declares it. */
struct periodic_job {
	const char *name;      /* for messages: "heartbeat", "cleanup", ... */
	int64_t every_us;      /* the cadence; 0 = the job is off */
	int64_t first_us;      /* from periodic_start() to its first run; 0 = at the first turn */
	periodic_step_fn step; /* borrowed */
	void *arg;	       /* borrowed: the step's own */
};

/* A table of jobs and their clocks: periodic_start() it; zeroed, it holds no job. */
struct periodic {
	struct periodic_job job[PERIODIC_MAX_JOBS];
	int64_t next_us[PERIODIC_MAX_JOBS];	    /* when each is due (the table's clock) */
	enum periodic_left left[PERIODIC_MAX_JOBS]; /* what its last step left (never FAILED) */
	int failures[PERIODIC_MAX_JOBS];	    /* its steps that failed in a row */
	int64_t backoff_max_us[PERIODIC_MAX_JOBS];  /* periodic_backoff()'s */
	int njobs;
	int64_t (*clock)(void); /* monotonic microseconds */
};

/**
 * periodic_start() - take the @njobs (at most PERIODIC_MAX_JOBS) jobs of @jobs (copied), in the
 * order a turn runs them, each first due @first_us after @clock's now; @clock is borrowed.
 */
void periodic_start(struct periodic *p, const struct periodic_job *jobs, int njobs,
		    int64_t (*clock)(void));

/**
 * periodic_run() - one turn: each job that is due, or has work left, runs one step, in the
 * table's order; none runs twice. A job whose step leaves nothing is due again one cadence
 * after the step ended; one whose step failed (PERIODIC_FAILED), after its backoff.
 * Return: OUTCOME_OK, or the first step's outcome that is not (the later jobs wait for the
 * next turn).
 */
enum outcome periodic_run(struct periodic *p);

/**
 * periodic_run_job() - job @i alone, if it is due or has work left: for a job that keeps its
 * cadence while the turn's main work waits (the poller's stall watchdog while a cycle waits for
 * its delivery reports). Return: as periodic_run().
 */
enum outcome periodic_run_job(struct periodic *p, int i);

/**
 * periodic_next_us() - when the loop should wake for the periodic work: the earliest due job;
 * the clock's now while a job has work ready at once (PERIODIC_MORE), so the loop does not
 * sleep; 0 when no job is on. A job waiting on something outside adds no deadline.
 */
int64_t periodic_next_us(const struct periodic *p);

/* periodic_job_next_us() - job @i's part of periodic_next_us(). */
int64_t periodic_job_next_us(const struct periodic *p, int i);

/**
 * periodic_backoff() - job @i, when its steps fail in a row, waits up to @max_us between them
 * (never less than its cadence); until this is called, its cadence.
 */
void periodic_backoff(struct periodic *p, int i, int64_t max_us);

/**
 * periodic_retry_us() - how long job @i waits after its step if that step fails (leaves
 * PERIODIC_FAILED): for the step's message, which says when it is tried again.
 */
int64_t periodic_retry_us(const struct periodic *p, int i);

/* periodic_poke() - job @i is due at the next turn (a notification asked for its work). */
void periodic_poke(struct periodic *p, int i);

#endif
