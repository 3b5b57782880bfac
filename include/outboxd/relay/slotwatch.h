/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RELAY_SLOTWATCH_H
#define OUTBOXD_RELAY_SLOTWATCH_H

/*
 * outboxd.slot.poll.ms: the relay reads its slot's row of pg_replication_slots through the
 * session's statement queue (sqlq) on the ordinary connection, and hands it to the metrics as
 * their "slot" section, rendered by slotstat from the first read on. A failed read is logged
 * (at most once a minute) and changes nothing else: the metrics keep the last row, and
 * outboxd_slot_stats_age_seconds grows.
 */

#include <stdint.h>

#include "outboxd/obs/metrics.h"
#include "outboxd/pipeline/sqlq.h"

struct slotwatch {
	const char *slot;	 /* borrowed: slot.name */
	struct metrics *metrics; /* borrowed */
	int section;		 /* the metrics section "slot" */
	int64_t interval_us;	 /* 0 = off */
	int64_t next_us;	 /* the next read (monotonic) */
	int64_t next_warn_us;	 /* a failed read is logged again from then */
};

/*
 * slotwatch_init() - the first read is due at once; @interval_ms 0 turns the reads off. Registers
 * the section with @metrics (borrowed; must outlive @w), rendered from the first read on.
 */
void slotwatch_init(struct slotwatch *w, const char *slot, int64_t interval_ms,
		    struct metrics *metrics);

/* The metrics section "slot" (the outboxd_slot_* families): its data is a struct slotstat. */
extern const struct metrics_section slotwatch_section;

/* slotwatch_due() - queue a read on @q when one is due at @now_us (monotonic) and none pends. */
void slotwatch_due(struct slotwatch *w, struct sqlq *q, int64_t now_us);

#endif
