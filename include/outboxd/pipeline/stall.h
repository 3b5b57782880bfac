/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PIPELINE_STALL_H
#define OUTBOXD_PIPELINE_STALL_H

/*
 * The stall watchdog (outboxd.stall.warn.ms): delivery timeouts are off (message.timeout.ms=0),
 * so a stuck broker shows only as records that wait without a delivery report. The clock starts
 * when records begin to wait and starts over only at progress (a successful delivery report or a
 * confirmed LSN that moved), not at a restart: a broker outage that outlives a session is one
 * stall, measured from the oldest wait. After stall.warn.ms it warns once, naming the producer
 * queue and what librdkafka last said about the brokers, sets outboxd_stalled and /health's
 * reason, and says when deliveries resume. Pure but for the log line and the metrics it sets.
 */

#include <stdbool.h>
#include <stdint.h>

#include "outboxd/obs/metrics.h"

/* What the watchdog looks at, read by the caller at one moment. */
struct stall_view {
	int64_t now_us;	  /* monotonic */
	int64_t warn_ms;  /* outboxd.stall.warn.ms */
	uint64_t waiting; /* records produced and not reported, plus one waiting for queue room */
	bool progress;	  /* a successful delivery report, or the confirmed LSN moved, since last */
	int queue_len;	  /* the producer's queue */
	const char *broker; /* what librdkafka last reported about the brokers, or NULL */
};

/* The relay's watchdog, kept across sessions; zero-initialised = nothing waits. */
struct stall {
	int64_t since_us; /* records wait without progress since then; 0 = nothing waits */
	bool stalled;
};

/*
 * stall_check() - judge @v, log and update @m (borrowed) when the verdict changes.
 * Return: true while stalled.
 */
bool stall_check(struct stall *st, const struct stall_view *v, struct metrics *m);

#endif
