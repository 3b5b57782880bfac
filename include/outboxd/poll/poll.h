/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_POLL_POLL_H
#define OUTBOXD_POLL_POLL_H

/*
 * Folder poll/: `outboxd poll`: partitions and their locks, batches oldest first, marking,
 * upkeep and cleanup, `outboxd check --poll`. It may call: util, pg, connect, config, sink,
 * obs, pipeline (never relay/ or snapshot/).
 */

/*
 * The polling publisher (`outboxd poll`, DESIGN.md "The polling publisher"): the outbox rows
 * that table.include.list selects, read with SQL instead of logical replication, through the
 * same publish path as `outboxd run`, so the records are the same.
 *
 * Ordered mode: rows are hashed by their key column (hashtext(aggregateid), 0 for a NULL key)
 * into outboxd.poll.partitions partitions. A partition is served only while this process' session
 * holds its advisory lock (pg_try_advisory_lock on the table, and the partition with the count:
 * under another count it is other rows); partitions another session holds are tried again
 * every outboxd.poll.interval.ms, so they are taken over when that session ends. No partition
 * of a table is taken while sessions with another count hold some (a rolling update that
 * changes it: the new processes wait, saying so, until the old ones end), so an aggregate has
 * one owner at a time. Within a partition a batch always starts at the oldest
 * unpublished row in outboxd.poll.order.column order, never after the last row seen (a
 * transaction with a lower number may commit later). The rule of marking: a row's
 * outboxd.poll.published.column is set (or, with outboxd.poll.after=delete, the row deleted)
 * only after its delivery report, and only for the acknowledged rows that precede the first
 * unacknowledged one of their partition's batch; a failure restarts from the oldest
 * unpublished row (duplicates, never loss). LISTEN on outboxd.poll.notify.channel wakes the
 * poll at once; the interval is the fallback. A row is marked by its mark key (a unique index
 * of NOT NULL columns with the id; none is a precondition) and a mark that misses a row still
 * there is that row's poison verdict. A partitioned table is read, marked and cleaned through
 * its root: every partition in one order. A batch is read through a cursor in chunks up to
 * outboxd.poll.batch.max.bytes, in a transaction committed before it is published (ordered);
 * an unordered claim ends after outboxd.poll.claim.timeout.ms even if reports are missing, so
 * that no transaction holds the database's xmin horizon through a broker outage.
 */

#include <stdbool.h>

#include "outboxd/config/config.h"
#include "outboxd/connect/router.h"
#include "outboxd/obs/metrics.h"
#include "outboxd/pipeline/loop.h"
#include "outboxd/pipeline/outcome.h"

struct poll_params {
	const struct config *cfg; /* borrowed: connection, producer, outboxd.poll.* */
	struct router *router;	  /* borrowed */
	struct metrics *metrics;  /* borrowed */
	struct loop *loop;	  /* SIGTERM/SIGINT stop between statements and at every wait */
};

/**
 * poll_run() - poll until a signal, a halt or a failed precondition. A transient failure (the
 * database or the broker away) restarts the session after a backoff capped at
 * outboxd.restart.backoff.max.ms.
 * @p: borrowed.
 * Return: OUTCOME_STOP (exit 0), OUTCOME_HALT (a poison row: exit 1) or OUTCOME_PRECONDITION
 * (a missing table, column or privilege: exit 2); the reason is logged.
 */
enum outcome poll_run(const struct poll_params *p);

/* A line of `outboxd check --poll`: @level 0 ok, 1 a warning, 2 a failure. */
typedef void (*poll_check_diag)(void *arg, int level, const char *what, const char *detail);

/**
 * poll_check() - what `outboxd poll` needs of the database: the connection, the tables
 * table.include.list selects, their columns, the cleanup settings, the privileges the statements
 * need, the partial index, the NOTIFY trigger and, in ordered mode, partitions held with another
 * outboxd.poll.partitions (the last three warnings only). Each finding
 * goes to @diag (with @arg). Kafka is not checked here.
 * @p: borrowed; ->loop may be NULL.
 * Return: true when nothing failed.
 */
bool poll_check(const struct poll_params *p, poll_check_diag diag, void *arg);

#endif
