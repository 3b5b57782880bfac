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

#include <stdbool.h>
#include <stdint.h>

#include "outboxd/obs/metrics.h"
#include "outboxd/pipeline/sqlq.h"

struct slotwatch {
	const char *slot;	 /* borrowed: slot.name */
	struct metrics *metrics; /* borrowed */
	int section;		 /* the metrics section "slot" */
	int64_t next_warn_us;	 /* a failed read is logged again from then */
};

/*
 * slotwatch_init() - @slot is borrowed; registers the section with @metrics (borrowed; must
 * outlive @w), rendered from the first read on.
 */
void slotwatch_init(struct slotwatch *w, const char *slot, struct metrics *metrics);

/* The metrics section "slot" (the outboxd_slot_* families): its data is a struct slotstat. */
extern const struct metrics_section slotwatch_section;

/*
 * slotwatch_read() - a read is due (the relay's periodic job, every outboxd.slot.poll.ms): queue
 * it on @q. Return: false when the previous read is still queued or running (try again later).
 */
bool slotwatch_read(struct slotwatch *w, struct sqlq *q);

#endif
