/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RUN_STALL_H
#define OUTBOXD_RUN_STALL_H

/*
 * The stall watchdog (outboxd.stall.warn.ms): delivery timeouts are off (message.timeout.ms=0),
 * so a stuck broker shows only as records that wait without a delivery report. It warns, sets
 * outboxd_stalled and /health's reason, repeats the warning every stall.warn.ms, and says when
 * deliveries resume.
 */

#include <stdint.h>

#include "outboxd/run/metrics.h"

/* What the watchdog looks at, read by the caller at one moment. */
struct stall_view {
	int64_t now_us;		 /* monotonic */
	int64_t warn_ms;	 /* outboxd.stall.warn.ms */
	uint64_t waiting;	 /* records produced and not yet reported */
	int64_t last_ack_us;	 /* the last delivery report, or since when something waits */
	int64_t oldest_since_us; /* when the oldest waiting record was produced, 0 = none */
	int queue_len;		 /* the producer's queue */
};

/* A session's watchdog; zero-initialised = not stalled. */
struct stall {
	int64_t next_warn_us; /* 0 = not stalled */
};

/* stall_check() - judge @v, log and update @m (borrowed) when the verdict changes or repeats. */
void stall_check(struct stall *st, const struct stall_view *v, struct metrics *m);

#endif
