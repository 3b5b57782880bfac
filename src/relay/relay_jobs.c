/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The relay's periodic work (periodic.h): its jobs, their cadences in one table (relay_jobs_start()),
 * and their steps, each of which holds the loop for one bounded piece of work.
 */
#include "outboxd/obs/metrics.h"
#include "outboxd/util/now.h"
#include "relay_int.h"

/* The relay's periodic jobs, in the order a turn runs them. */
enum relay_job { JOB_HEARTBEAT, JOB_CLEANUP, JOB_GAUGES, JOB_SLOT, RELAY_NJOBS };

/* Once a second: the stall watchdog and the gauges (periodic_step_fn). */
static enum outcome
gauges(void *arg, int64_t now, enum periodic_left *ret_left)
{
	struct session *s = arg;
	struct metrics *m = s->r->p->metrics;
	struct acktrack *at = stream_acktrack(s->st);
	uint64_t published, delivered;
	lsn_t confirmed = acktrack_confirmed(at);
	char broker[512];
	struct stall_view v = {
		.now_us = now,
		.warn_ms = s->r->cfg->stall_warn_ms,
		.waiting = acktrack_in_flight(at) + (publish_waiting(s->pub) ? 1 : 0),
		.queue_len = publish_queue_len(s->pub),
		.broker = publish_broker_state(s->pub, now, broker, sizeof(broker)) ? broker : NULL,
	};

	stream_counts(s->st, &published, &delivered);
	v.progress = delivered != s->stall_delivered || confirmed != s->stall_confirmed;
	s->stall_delivered = delivered;
	s->stall_confirmed = confirmed;
	stall_check(&s->r->stall, &v, m);
	metrics_gauge(m, METRICS_CONFIRMED_LSN, (int64_t)confirmed);
	metrics_gauge(m, METRICS_RECEIVED_LSN, (int64_t)acktrack_received(at));
	metrics_gauge(m, METRICS_IN_FLIGHT_RECORDS, (int64_t)acktrack_in_flight(at));
	metrics_gauge(m, METRICS_PENDING_TRANSACTIONS, (int64_t)acktrack_pending_txns(at));
	metrics_gauge(m, METRICS_PRODUCER_QUEUE_RECORDS, publish_queue_len(s->pub));
	metrics_lag(m, now_unix_us(), acktrack_oldest_commit_time(at),
		    acktrack_confirmed_commit_time(at));
	*ret_left = PERIODIC_DONE;
	return OUTCOME_OK;
}

/* heartbeat.interval.ms (periodic_step_fn). */
static enum outcome
beat(void *arg, int64_t now, enum periodic_left *ret_left)
{
	struct session *s = arg;

	*ret_left = PERIODIC_DONE;
	return heartbeat_beat(&s->hb, s->pub, &s->q, s->why, sizeof(s->why));
}

/*
 * outboxd.cleanup.* (periodic_step_fn): a cycle under way goes on at every turn, its batches
 * following each other at the pace of their statements' results.
 */
static enum outcome
clean(void *arg, int64_t now, enum periodic_left *ret_left)
{
	struct session *s = arg;

	*ret_left =
		cleanup_step(&s->cl, &s->q, s->fb.flush_sent) ? PERIODIC_WAITING : PERIODIC_DONE;
	return OUTCOME_OK;
}

/* outboxd.slot.poll.ms (periodic_step_fn): the previous read still pending, again next turn. */
static enum outcome
slot_stats(void *arg, int64_t now, enum periodic_left *ret_left)
{
	struct session *s = arg;

	*ret_left = slotwatch_read(&s->r->sw, &s->q) ? PERIODIC_DONE : PERIODIC_WAITING;
	return OUTCOME_OK;
}

/*
 * The relay's periodic work, its cadences in one place: the heartbeat one interval after the
 * stream starts; the cleanup's and the slot's first at the first turn; the gauges a second in.
 */
void
relay_jobs_start(struct session *s)
{
	const struct config *cfg = s->r->cfg;
	int64_t heartbeat_us = cfg->heartbeat_interval_ms * 1000;
	const struct periodic_job jobs[RELAY_NJOBS] = {
		[JOB_HEARTBEAT] = { "heartbeat", heartbeat_us, heartbeat_us, beat, s },
		[JOB_CLEANUP] = { "cleanup",
				  cfg->cleanup_retention ? cfg->cleanup_interval_ms * 1000 : 0, 0,
				  clean, s },
		[JOB_GAUGES] = { "gauges", TICK_US, TICK_US, gauges, s },
		[JOB_SLOT] = { "slot statistics", cfg->slot_poll_ms * 1000, 0, slot_stats, s },
	};

	periodic_start(&s->jobs, jobs, RELAY_NJOBS, now_monotonic_us);
	loop_arm(&s->dl, LOOP_PERIODIC, periodic_next_us(&s->jobs));
}

enum outcome
relay_jobs_turn(struct session *s)
{
	enum outcome o = periodic_run(&s->jobs);

	if (o == OUTCOME_OK) {
		o = sqlq_poll(&s->q, s->why, sizeof(s->why));
	}
	loop_arm(&s->dl, LOOP_PERIODIC, periodic_next_us(&s->jobs));
	return o;
}
