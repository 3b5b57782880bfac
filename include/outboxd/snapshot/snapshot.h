/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_SNAPSHOT_SNAPSHOT_H
#define OUTBOXD_SNAPSHOT_SNAPSHOT_H

/*
 * Folder snapshot/: the initial snapshot: the slot made with an exported snapshot, the rows
 * already there read and published through the pipeline. It may call: util, pg, connect, config,
 * sink, obs, pipeline (never relay/ or poll/).
 */

/*
 * The initial snapshot of snapshot.mode=initial when outboxd creates the slot
 * (outboxd.slot.create=true): the slot is created with an exported snapshot, the rows already
 * in the outbox tables are read inside that snapshot on the ordinary connection and published
 * as Debezium publishes snapshot rows (op "r", routed like inserts), and streaming then starts
 * at the slot's consistent point, so no row is missed or seen twice by the two phases.
 *
 * Rows are read as the stream names them: a partitioned table published via its root through
 * its partitions, partitions published one by one merged into one read; in the order of the
 * column a sequence fills (identity or serial), else of their inserting transactions.
 *
 * Crash safety without an offset store: a physical slot that reserves no WAL,
 * "<slot>_outboxd_snapshot", marks a snapshot in progress. It is created before the logical
 * slot and dropped only after every snapshot row was acknowledged. The exported snapshot lives
 * only as long as the transaction that imported it, so a failed delivery is published again
 * from that same snapshot; once it is gone (a stop, a crash, its connection failed) the rows as
 * they were cannot be read again, and a start that finds the marker with its slot refuses
 * (exit 2) and names the rows at risk and the fix instead of taking a snapshot that would
 * silently miss the rows deleted since. A marker without its slot means no snapshot was taken
 * from it: it is taken.
 */

#include "outboxd/config/config.h"
#include "outboxd/connect/router.h"
#include "outboxd/obs/metrics.h"
#include "outboxd/pipeline/loop.h"
#include "outboxd/pipeline/outcome.h"

struct snapshot_params {
	const struct config *cfg; /* borrowed: connection, slot, publication, producer, ... */
	struct router *router;	  /* borrowed */
	struct metrics *metrics;  /* borrowed: the rows count as records published */
	struct loop *loop;	  /* SIGTERM/SIGINT stop the snapshot at any wait */
};

/**
 * snapshot_run() - with outboxd.slot.create, take the initial snapshot if the slot does not
 * exist yet (creating it); without it, only refuse to stream from a slot whose initial
 * snapshot did not finish. Every wait serves SIGTERM and SIGINT, the wait of
 * CREATE_REPLICATION_SLOT for the running transactions included. A failure of the delivery
 * path publishes the rows again from the same snapshot after a backoff capped at
 * outboxd.restart.backoff.max.ms, at most outboxd.halt.after.failures times in a row. A
 * transient failure before the slot exists (a connection, a server not up yet, a query the
 * server fails transiently: pgconn_classify()) tries again after the same backoff; after it
 * exists, one that ends the snapshot's transaction is exit 2 with the fix.
 * @p: borrowed.
 * Return: OUTCOME_OK (taken and acknowledged, or not needed), OUTCOME_HALT (a poison row or
 * repeated failures: exit 1), OUTCOME_PRECONDITION (exit 2: an unfinished snapshot, or a
 * failure that lost the snapshot, with the fix), OUTCOME_STOP (a signal: exit 0). The reason
 * is logged.
 */
enum outcome snapshot_run(const struct snapshot_params *p);

#endif
