/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_SNAPSHOT_H
#define OUTBOXD_SNAPSHOT_H

/*
 * The initial snapshot of snapshot.mode=initial when outboxd creates the slot
 * (outboxd.slot.create=true): the slot is created with an exported snapshot, the rows already
 * in the outbox tables are read inside that snapshot on the ordinary connection and published
 * as Debezium publishes snapshot rows (op "r", routed like inserts), and streaming then starts
 * at the slot's consistent point, so no row is missed or seen twice by the two phases.
 *
 * Crash safety without an offset store: a physical slot that reserves no WAL,
 * "<slot>_outboxd_snapshot", marks a snapshot in progress. It is created before the logical
 * slot and dropped only after every snapshot row was acknowledged. Finding it at start-up
 * means an earlier snapshot did not finish: the logical slot and the marker are dropped and the
 * snapshot starts over (duplicates, never loss).
 */

#include "outboxd/config/config.h"
#include "outboxd/connect/router.h"
#include "outboxd/run/loop.h"
#include "outboxd/run/metrics.h"
#include "outboxd/run/outcome.h"

struct snapshot_params {
	const struct config *cfg; /* borrowed: connection, slot, publication, producer, ... */
	struct router *router;	  /* borrowed */
	struct metrics *metrics;  /* borrowed: the rows count as records published */
	struct loop *loop;	  /* SIGTERM/SIGINT abort the snapshot (it reruns next time) */
};

/**
 * snapshot_run() - with outboxd.slot.create, take the initial snapshot if the slot does not
 * exist yet (creating it), or again if an earlier one did not finish; without it, only refuse to
 * stream from a slot whose initial snapshot did not finish. A transient failure (a delivery, a
 * connection, a server not up yet, a query the server fails transiently: pgconn_classify())
 * takes it again after a backoff capped at outboxd.restart.backoff.max.ms, with a warning.
 * @p: borrowed.
 * Return: OUTCOME_OK (taken and acknowledged, or not needed), OUTCOME_HALT (a poison row: exit
 * 1, it reruns next time), OUTCOME_PRECONDITION (exit 2), OUTCOME_STOP (a signal: exit 0, it
 * reruns next time). The reason is logged.
 */
enum outcome snapshot_run(const struct snapshot_params *p);

#endif
