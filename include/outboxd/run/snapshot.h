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

#include <stdbool.h>
#include <stdint.h>

#include "outboxd/util/kv.h"
#include "outboxd/connect/router.h"

struct snapshot_params {
	const struct kv *pg;	   /* libpq keywords */
	const char *slot;
	const char *publication;
	const struct kv *producer; /* librdkafka settings */
	struct router *router;	   /* borrowed */
	int signal_fd;		   /* SIGTERM/SIGINT abort the snapshot (it reruns next time) */
	bool create;		   /* outboxd.slot.create: false only checks for an unfinished one */
	const char *initial_statements; /* database.initial.statements, or NULL */
};

enum snapshot_result {
	SNAPSHOT_DONE = 0,	   /* taken and acknowledged, or not needed (the slot exists) */
	SNAPSHOT_HALT = 1,	   /* a poison row, or a failure: exit 1, it reruns next time */
	SNAPSHOT_PRECONDITION = 2, /* cannot start: exit 2 */
	SNAPSHOT_STOPPED = 3,	   /* a signal arrived: exit 0, it reruns next time */
	SNAPSHOT_RETRY = 4,	   /* a transient failure (delivery, connection): take it again */
};

/**
 * snapshot_run() - with @p->create, take the initial snapshot if the slot does not exist yet
 * (creating it), or again if an earlier one did not finish; without it, only refuse to stream
 * from a slot whose initial snapshot did not finish.
 * @p: borrowed.
 * Return: what happened; the reason is logged.
 */
enum snapshot_result snapshot_run(const struct snapshot_params *p);

#endif
