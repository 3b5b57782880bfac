/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_OBS_METRICS_H
#define OUTBOXD_OBS_METRICS_H

/*
 * Folder obs/: observability: the counters and gauges, their Prometheus and /health renderings,
 * the HTTP endpoint, the process' own figures, and the registry through which the other folders
 * add their own families (metrics_section_add). It may call: util, pg, connect, config (never
 * kafka/, its peer: librdkafka's statistics are a section that pipeline/ registers).
 */

/*
 * The relay's counters and gauges, and their two renderings: Prometheus text (/metrics) and a
 * small JSON health document (/health). The relay's thread writes, the HTTP thread reads; every
 * function takes the module's own mutex, so callers need no locking of their own.
 *
 * Pure: no I/O and no logging. It reads the monotonic clock (through a replaceable function,
 * for tests) to age the last delivery report.
 *
 * It renders its own core families only. A subsystem with families of its own (the poller, the
 * slot's statistics, librdkafka's) registers a section: a struct of its figures, copied here
 * under the lock by the thread that owns them, and a function that renders the copy on the HTTP
 * thread outside the lock. So this file knows none of their names or types.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/util/buf.h"

struct metrics;

/* Monotonically increasing counters (outboxd_*_total). */
enum metrics_counter {
	METRICS_RECORDS_PUBLISHED,    /* records handed to the producer */
	METRICS_RECORDS_ACKNOWLEDGED, /* successful delivery reports; also resets the ack age */
	METRICS_TRANSACTIONS,	      /* commits received */
	METRICS_PIPELINE_RESTARTS,
	METRICS_STATUS_UPDATES,	    /* standby status updates sent to PostgreSQL */
	METRICS_HEARTBEAT_FAILURES, /* heartbeat records the broker refused */
	METRICS_DEAD_LETTERS,	    /* poison rows produced to the dead-letter topic */
	METRICS_CLEANUP_DELETED,    /* confirmed outbox rows deleted (outboxd.cleanup.*) */
	METRICS_CLEANUP_PARTITIONS, /* partitions dropped or detached (outboxd.cleanup.partitions) */
	METRICS_PRODUCER_FATAL_ERRORS, /* librdkafka's fatal errors, a discarded producer's too */
	METRICS_COUNTER_COUNT_
};

/* Why a received row published nothing (outboxd_rows_skipped_total{reason}). */
enum metrics_skip_reason {
	METRICS_SKIP_UPDATE,
	METRICS_SKIP_DELETE,
	METRICS_SKIP_TRUNCATE,
	METRICS_SKIP_OTHER_TABLE,
	METRICS_SKIP_COUNT_
};

/* Values that go up and down. */
enum metrics_gauge {
	METRICS_CONFIRMED_LSN,		/* the LSN last confirmed to the slot, as a number */
	METRICS_RECEIVED_LSN,		/* the highest LSN received, as a number */
	METRICS_IN_FLIGHT_RECORDS,	/* produced, delivery report awaited; see last_ack_age */
	METRICS_PENDING_TRANSACTIONS,	/* received and not yet confirmable */
	METRICS_PRODUCER_QUEUE_RECORDS, /* librdkafka's out queue length */
	METRICS_GAUGE_COUNT_
};

/* The relay's life cycle (outboxd_state{state}). */
enum metrics_state {
	METRICS_STATE_STARTING,
	METRICS_STATE_STREAMING,
	METRICS_STATE_RESTARTING,
	METRICS_STATE_HALTED,
	METRICS_STATE_STOPPING,
	METRICS_STATE_COUNT_
};

/* Why the relay halted (outboxd_halts_total{reason}): a bounded set. */
enum metrics_halt_reason {
	METRICS_HALT_POISON_ROW, /* a row no record can be made of, without a dead-letter topic */
	METRICS_HALT_DELIVERY_REFUSED, /* outboxd.halt.after.failures restarts on one transaction */
	METRICS_HALT_INVALID_CHANGE, /* table.op.invalid.behavior=fatal, a malformed stream, ... */
	METRICS_HALT_PRECONDITION,   /* slot, publication, role, settings: exit 2 */
	METRICS_HALT_COUNT_
};

/* A clock returning microseconds from an arbitrary fixed origin; @arg is the caller's. */
typedef int64_t (*metrics_clock)(void *arg);

/**
 * metrics_new() - every counter and gauge at 0, state "starting", not stalled.
 * Return: caller-frees with metrics_free().
 */
struct metrics *metrics_new(void);

/* metrics_free() - NULL allowed. No other thread may still use @m. */
void metrics_free(struct metrics *m);

/**
 * metrics_set_clock() - replace the monotonic clock (tests).
 * @now_us: NULL restores CLOCK_MONOTONIC.
 * @arg: borrowed; passed to @now_us, must outlive @m or the next call.
 */
void metrics_set_clock(struct metrics *m, metrics_clock now_us, void *arg);

/* metrics_count() - add @n to @c. METRICS_RECORDS_ACKNOWLEDGED with @n > 0 also stamps the time. */
void metrics_count(struct metrics *m, enum metrics_counter c, uint64_t n);

/* metrics_skipped() - one row published nothing, for @reason. */
void metrics_skipped(struct metrics *m, enum metrics_skip_reason reason);

/**
 * metrics_gauge() - set @g to @v. LSNs are passed as (int64_t)lsn and printed unsigned.
 * METRICS_IN_FLIGHT_RECORDS going from 0 to more stamps the time, so the ack age counts from
 * the later of the last delivery report and the moment something went in flight.
 */
void metrics_gauge(struct metrics *m, enum metrics_gauge g, int64_t v);

/**
 * metrics_set_state() - enter @state.
 * @reason: the caller's text, or NULL for none. Not kept: /health answers whoever reaches the
 *          port, so while not streaming it shows a fixed code for the state entered with a
 *          reason ("session_failed" restarting, "halted"), never the text, which the caller
 *          logs. Replaces the previous code.
 */
void metrics_set_state(struct metrics *m, enum metrics_state state, const char *reason);

/**
 * metrics_halted() - enter the halted state for @reason (counted in outboxd_halts_total), which
 * /health shows as its code ("poison_row", "delivery_refused", "invalid_change",
 * "precondition"). @why, the caller's text, is not kept (see metrics_set_state()).
 */
void metrics_halted(struct metrics *m, enum metrics_halt_reason reason, const char *why);

/* metrics_state() - the current state. */
enum metrics_state metrics_state(const struct metrics *m);

/**
 * metrics_set_stalled() - the stall watchdog's verdict (outboxd.stall.warn.ms).
 * @reason: the watchdog's text; not kept: /health shows "delivery_stalled" while streaming and
 * stalled (see metrics_set_state()). The flag is independent of the state: the relay clears it (false, NULL) when it recovers or
 * restarts.
 */
void metrics_set_stalled(struct metrics *m, bool stalled, const char *reason);

/**
 * metrics_observe_ack() - a record's delivery report came @us after its transaction committed
 * (PostgreSQL's commit time against this host's clock; a negative skew counts as 0): one
 * observation of the outboxd_commit_to_ack_seconds histogram (1 ms to 60 s).
 */
void metrics_observe_ack(struct metrics *m, int64_t us);

/**
 * metrics_lag() - the relay's lag at @now_unix_us: @oldest_commit_us, the commit time of the
 * oldest transaction received and not yet confirmed (0: none pending, the lag is 0), and
 * @confirmed_commit_us, that of the newest confirmed one (0: none yet). Renders
 * outboxd_lag_seconds and outboxd_last_confirmed_commit_timestamp_seconds from the first call.
 */
void metrics_lag(struct metrics *m, int64_t now_unix_us, int64_t oldest_commit_us,
		 int64_t confirmed_commit_us);

/*
 * metrics_loop_turned() - the main loop turned now (loop_wait() returned): the liveness
 * endpoint's evidence that the process is not wedged. Lock-free: called on every turn.
 */
void metrics_loop_turned(struct metrics *m);

/* metrics_set_live_bound() - the longest the loop may go without turning (outboxd.health.live.ms). */
void metrics_set_live_bound(struct metrics *m, int64_t ms);

/**
 * metrics_liveness() - the body of /health/live into @out: the seconds since the loop last
 * turned, and whether that is within the bound. It says nothing of PostgreSQL or Kafka: a
 * relay that waits for either is alive (its backoff sleeps and waits turn the loop).
 * Return: 200 while the loop turned within the bound, 503 when it did not (wedged).
 */
int metrics_liveness(const struct metrics *m, struct buf *out);

/*
 * A subsystem's families: @name (unique: "slot", "kafka", "poll") identifies the section,
 * metrics_section_set() copies @size bytes of its figures, and @render appends their families
 * to @out from that copy, on the HTTP thread, outside every lock: @data is the copy (@size
 * bytes, aligned for any type), @now_us the metrics clock now, @set_us its reading at the last
 * metrics_section_set(). The families must be the section's alone (a family announced twice
 * breaks the exposition format).
 */
struct metrics_section {
	const char *name;
	size_t size;
	void (*render)(const void *data, int64_t now_us, int64_t set_us, struct buf *out);
};

/**
 * metrics_section_add() - register @s, rendered by metrics_render() after the core gauges and
 * before outboxd_up, in the order of registration, from its first metrics_section_set() on.
 * Idempotent by name: adding a name again returns the first registration's id and changes
 * nothing, so a subsystem that starts over (a restarted producer) may add its section again.
 * @s: borrowed and copied (the name too).
 * Return: the section's id, for metrics_section_set().
 */
int metrics_section_add(struct metrics *m, const struct metrics_section *s);

/**
 * metrics_section_set() - copy the section's size bytes from @data (borrowed) and stamp the
 * time; rendered from this copy until the next set. An unknown @id is ignored.
 */
void metrics_section_set(struct metrics *m, int id, const void *data);

/**
 * metrics_now_us() - the clock that @render's @now_us and @set_us come from (metrics_set_clock),
 * for a section that ages one of its own events (the poller's last cycle).
 */
int64_t metrics_now_us(const struct metrics *m);

/**
 * metrics_render() - append every metric in Prometheus text exposition format 0.0.4, with
 * "# HELP" and "# TYPE" lines, to @out.
 * @m: borrowed; read under its mutex (the const only means no metric changes).
 * @out: borrowed; appended to.
 */
void metrics_render(const struct metrics *m, struct buf *out);

/**
 * metrics_health() - append the /health document to @out:
 * {"status":"streaming","stalled":false,"reason":null}. "reason" is a fixed code: the state's
 * while not streaming (null for starting and stopping without one), else "delivery_stalled"
 * while stalled, else null.
 * @m: borrowed. @out: borrowed; appended to.
 * Return: the HTTP status: 200 when streaming and not stalled, 503 otherwise.
 */
int metrics_health(const struct metrics *m, struct buf *out);

/* metrics_state_name() - "starting", "streaming", ...; static storage; "unknown" if invalid. */
const char *metrics_state_name(enum metrics_state state);

#endif
