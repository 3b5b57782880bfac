/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RELAY_CLEANUP_H
#define OUTBOXD_RELAY_CLEANUP_H

/*
 * outboxd.cleanup.*: `outboxd run` deletes the outbox rows whose events are confirmed and that
 * are older than outboxd.cleanup.retention, in batches, through the session's statement queue
 * on the ordinary connection.
 *
 * How it knows a row is confirmed, without any bookkeeping per row: each cycle starts with a
 * mark, one statement that reads the server's current snapshot S and then its WAL insert
 * position W. A row whose xmin is below S's xmin (the oldest transaction running when S was
 * taken) was committed before S, with every subtransaction of its transaction, so its commit
 * record lies before W. Once the slot's confirmed position reaches W, every such row's event is
 * delivered (the relay confirms only what the broker acknowledged; each DELETE checks the slot's
 * confirmed_flush_lsn itself, in the same statement), and the cycle deletes those rows older
 * than the retention. A row committed after S is not taken, whatever its created_at says: a long
 * transaction that started before the retention bound and committed later stays, and so does a
 * row inserted under a SAVEPOINT (its xmin is the subtransaction's, which S's list of running
 * transactions does not hold: pg_visible_in_snapshot would call it committed). A row committed
 * before S while an older transaction still ran waits for a later mark. While the relay cannot
 * confirm (a broker outage), the confirmed position stays below W and nothing is deleted.
 *
 * Leaf tables: a partitioned outbox is cleaned partition by partition (pg_partition_tree, read
 * at each mark, so partitions added later are cleaned too). With outboxd.cleanup.partitions, a
 * range partition on the created column whose upper bound is older than the retention is
 * dropped or detached whole, under a lock of its parent, when every row in it ended before the
 * mark's snapshot and the slot confirmed the horizon; else its rows are deleted as any.
 */

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "outboxd/obs/metrics.h"
#include "outboxd/pipeline/outcome.h"
#include "outboxd/pipeline/sqlq.h"
#include "outboxd/relay/cleanup_sql.h"
#include "outboxd/util/lsn.h"

struct cleanup_params {
	const char *retention;	/* outboxd.cleanup.retention, a PostgreSQL interval; NULL = off */
	const char *created;	/* outboxd.cleanup.created.column */
	int64_t interval_ms;	/* outboxd.cleanup.interval.ms: between cycles */
	int64_t batch;		/* outboxd.cleanup.batch.size: rows per DELETE */
	const char *slot;	/* slot.name: its confirmed_flush_lsn guards every DELETE */
	const char *partitions; /* outboxd.cleanup.partitions: off, detach or drop */
	struct metrics *metrics;
};

/* CLEANUP_ENDED: a statement's result ended the cycle; the next cleanup_step() says so. */
enum cleanup_state {
	CLEANUP_IDLE,
	CLEANUP_MARKING,
	CLEANUP_WAITING,
	CLEANUP_DELETING,
	CLEANUP_ENDED,
};

/* One session's cleanup: zeroed, cleanup_open() it, cleanup_close() it. */
struct cleanup {
	const struct cleanup_params *p;
	PGconn *sql;	/* borrowed: quotes the partition step's values */
	char *mark_sql; /* owned: snapshot, insert position, the leaf tables */
	char *created;	/* owned: the column, quoted */
	enum cleanup_state state;
	char *snapshot; /* owned: the mark's pg_snapshot as text */
	lsn_t horizon;	/* the mark's WAL insert position */
	char **leaves;	/* owned: the mark's leaf tables, as regclass text */
	char **parents; /* owned: their parents (NULL: a table of its own) */
	bool *expired;	/* owned: a range partition past the retention (cleanup_sql.h) */
	int nleaves, leaf;
	bool part_tried;  /* the current leaf's partition step ran in this cycle */
	uint64_t deleted; /* this cycle's rows */
	int64_t next_warn_us;
};

/**
 * cleanup_open() - check the settings on @sql (the retention is an interval, the role may
 * DELETE from each table, the created column exists) and build the mark for @tables.
 * A cleanup without a retention is off and checks nothing.
 * Return: OUTCOME_OK; OUTCOME_PRECONDITION naming the setting or the GRANT in @why;
 * OUTCOME_RESTART when a query failed transiently.
 */
enum outcome cleanup_open(struct cleanup *c, const struct cleanup_params *p, PGconn *sql,
			  const struct cleanup_table *tables, int ntables, char *why,
			  size_t whylen);

/* cleanup_close() - free what the session's cleanup holds; @c may be opened again. */
void cleanup_close(struct cleanup *c);

/*
 * cleanup_step() - the cycle's next step on @q (the relay's periodic job, every
 * outboxd.cleanup.interval.ms): a new cycle starts with its mark; the DELETEs follow, one batch
 * at a time, once @confirmed (the slot's confirmed position) reached the mark's horizon.
 * Failures are logged (at most once a minute) and end the cycle; they never restart the relay.
 * Return: true while the cycle is under way (its statements' results carry it on: call again
 * at every turn), false once it ended (the next cycle is due one interval later).
 */
bool cleanup_step(struct cleanup *c, struct sqlq *q, lsn_t confirmed);

#endif
