/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RUN_POLL_INT_H
#define OUTBOXD_RUN_POLL_INT_H

/*
 * Private to the polling publisher: one session's state, shared by poll.c (the cycle: read,
 * publish, mark) and poll_upkeep.c (the side work on the same connection: the count and age of
 * the unpublished rows, the cleanup of published ones).
 */

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "outboxd/pg/relcache.h"
#include "outboxd/pipeline/outcome.h"
#include "outboxd/pipeline/periodic.h"
#include "outboxd/pipeline/publish.h"
#include "outboxd/pipeline/stall.h"
#include "outboxd/pipeline/supervise.h"
#include "outboxd/poll/poll.h"
#include "outboxd/poll/poll_metrics.h"
#include "outboxd/util/buf.h"

/* The poller's periodic jobs (poll.c's jobs_start() declares them), in a turn's order. */
enum poll_job { JOB_LOCKS, JOB_CYCLE, JOB_COUNT, JOB_CLEAN, JOB_WATCHDOG, POLL_NJOBS };

/*
 * One row produced in this cycle: its table, partition, id, its mark key (its part of the mark's
 * array literal; NULL when a key column is NULL: it cannot be marked), what its report said,
 * whether it is marked already (an unordered claim that ended early marks what it can).
 */
struct poll_pending {
	int table, part;
	char *id, *key;
	bool produced, acked, marked;
	bool marking; /* in the mark statement under way */
};

/* One table's batch as read (poll_batch_read()): the chunks' results, oldest row first. */
struct poll_batch {
	PGresult **res;
	int nres, cap;
	int64_t rows, bytes;
	bool more; /* rows may be left: the row or byte bound cut the read */
};

/* Rows whose delivery failed in consecutive sessions (outboxd.halt.after.failures). */
struct poll_failing {
	struct supervise sv; /* the backoff, the count, dead letter once */
	char *dead_lettered; /* the row handed to the dead-letter topic (any length), or NULL */
	char *unmarkable;    /* the row dead-lettered because it could not be marked, or NULL */
	char reason[2048];
	bool poison; /* the next session sends dead_lettered's dead letter */
};

/* One outbox table a session polls: as pgoutput would describe it, and its statements. */
struct poll_table {
	uint32_t oid;
	const struct relcache_rel *rel; /* borrowed from the session's relcache */
	bool *notnull;
	char **defaults;
	int ncols;
	struct buf name;   /* schema.table, for messages and the lock key */
	struct buf quoted; /* "schema"."table", for statements */
	struct buf where;  /* "of schema.table, polled, at" */
	bool partitioned;  /* a partitioned root: read through it (every leaf), never ONLY */
	const char *only;  /* "ONLY " for a plain table (not its inheritance children), else "" */
	struct buf select; /* the batch of one partition (or a claim), oldest unpublished first */
	struct buf tail;   /* ordered: what follows the owned partitions in select, then a limit */
	int *key;	   /* the mark key: the columns of a unique NOT NULL index with the id */
	int nkey;
	struct buf match; /* WHERE's condition: the rows whose mark key is in $1 */
	struct buf mark;  /* UPDATE (or DELETE) of acknowledged rows by their mark key */
	struct buf left;  /* of the rows of $1, the id of one the mark left unpublished */
	struct buf stats; /* count and age of the unpublished rows */
	struct buf clean; /* one batch of the cleanup; empty without outboxd.poll.retention */
	bool *owned;	  /* per partition: this session holds its advisory lock */
	int nowned;
	int held;      /* partitions held with another outboxd.poll.partitions, at the last look */
	char *waiting; /* what the last look logged about them (poll_locks.c), or NULL */
};

/*
 * One session: the connection (its advisory locks) and the tables table.include.list selects,
 * each polled and marked on its own; the producer and the pending rows are the session's.
 */
struct poller {
	const struct poll_params *p;
	const struct config *cfg;
	bool unordered;		   /* outboxd.poll.mode=unordered: SKIP LOCKED, no partitions */
	struct stall *stall;	   /* the watchdog, kept across sessions as in `outboxd run` */
	struct poll_metrics *pm;   /* the poller's families, kept across sessions */
	const char *poison_id;	   /* borrowed: the row whose dead letter this session sends */
	const char *poison_reason; /* borrowed */
	PGconn *sql;
	const char *stage; /* what poll_session_prepare() was doing: postgresql, table, ... */
	struct publish_params pp;
	struct publish *pub;
	struct relcache *rc;
	struct poll_table *tables;
	int ntables;
	struct buf names;      /* the tables' names, for messages */
	int nowned;	       /* partitions owned, over every table */
	struct periodic jobs;  /* locks, the cycle, the count, the cleanup, the watchdog */
	int clean_at;	       /* the table a cleanup under way is at; -1 = none under way */
	long long clean_total; /* the rows that cleanup removed so far */
	bool clean_failed;     /* a table of that cleanup failed: the job backs off at its end */
	uint64_t tick_acked;   /* successful reports the watchdog has seen */
	struct poll_pending *rows;
	size_t nrows, cap;
	uint64_t produced, reported, acked, marked;
	bool notified;	     /* a NOTIFY arrived since the current cycle started */
	int64_t largest_row; /* bytes of the largest row this session read: the chunks' size */
	int64_t claim_until; /* unordered: when the open claim ends (monotonic us); 0 = none */
	bool claim_released; /* the cycle's claim ended early: it reads no further rows */
	char *fail_id;	     /* the first row whose delivery failed in this session, or NULL */
	bool unmarkable;     /* fail_id was published but its mark matched no row */
	char why[2048];
};

/*
 * poll_session_prepare() - connect, run database.initial.statements, find the tables
 * (poll_tables_find), describe each and build its statements (poll_table_prepare);
 * on failure s->stage names the step and s->why the reason. poll_session_close() undoes it
 * (and whatever the session did after it), on success and failure alike; @end as
 * publish_free() takes it (a restart waits up to PUBLISH_DISCARD_INFLIGHT_MS for what is in
 * flight, holding its partitions' locks meanwhile).
 */
enum outcome poll_session_prepare(struct poller *s);
void poll_session_close(struct poller *s, enum publish_end end);

/* poll_failed() - judge the failed result @r (may be NULL; cleared) of the statement @what, as
 * poll_exec() does: OUTCOME_PRECONDITION or OUTCOME_RESTART, the reason in s->why. */
enum outcome poll_failed(struct poller *s, PGresult *r, const char *what);

/* poll_exec() - run @q with @n text parameters; *@ret (may be NULL) the successful result. A
 * failure is a precondition (exit 2 with the fix) or transient (restart), its reason in s->why. */
enum outcome poll_exec(struct poller *s, const char *q, int n, const char *const *params,
		       const char *what, PGresult **ret);

/* poll_column() - the index of the column @name of @t, or -1. */
int poll_column(const struct poll_table *t, const char *name);

/* poll_add_ident() - append @name to @q as a quoted identifier. */
void poll_add_ident(struct poller *s, struct buf *q, const char *name);

/*
 * poll_key_prepare() - find @t's mark key (a unique, valid, non-partial index whose columns
 * include the id column @id, all NOT NULL; the fewest columns) and build t->match, t->mark
 * and t->left. None: OUTCOME_PRECONDITION, s->why naming the table, the column and the fix.
 */
enum outcome poll_key_prepare(struct poller *s, struct poll_table *t, const char *id);

/*
 * poll_key_of() - row @row of @r (a batch of @t) as its part of the mark's array literal, a
 * new string; NULL when a key column is NULL (such a row matches no mark).
 */
char *poll_key_of(const struct poll_table *t, const PGresult *r, int row);

/*
 * poll_key_unmarkable() - the row @id of table @ti was published and cannot be marked:
 * s->unmarkable, s->fail_id and s->why say so; OUTCOME_RESTART, for poll_run() to judge it.
 */
enum outcome poll_key_unmarkable(struct poller *s, int ti, const char *id);

/*
 * poll_key_missed() - after a mark of table @ti that reached fewer rows than its array
 * @arr (one parameter) named: one it left unpublished is unmarkable (poll_key_unmarkable());
 * none (deleted meanwhile, nothing to publish again) is OUTCOME_OK.
 */
enum outcome poll_key_missed(struct poller *s, int ti, const char *const *arr);

/*
 * poll_batch_read() - read table @ti's batch (ordered: of the partitions @owned, an int[]
 * literal; unordered: NULL; at most @max rows) in chunks through a cursor into @b, until about
 * outboxd.poll.batch.max.bytes (always one row at least). Ordered mode reads in a transaction
 * of its own, committed before this returns; unordered mode within the cycle's claim.
 * poll_batch_free() frees @b's results.
 */
enum outcome poll_batch_read(struct poller *s, int ti, const char *owned, int64_t max,
			     struct poll_batch *b);
void poll_batch_free(struct poll_batch *b);

/*
 * poll_mark_acked() - mark (or delete) the acknowledged rows of the cycle not marked yet: per
 * table one statement, per partition (ordered) only those before its first unacknowledged
 * row. poll_mark_forget() forgets the cycle's rows.
 */
enum outcome poll_mark_acked(struct poller *s);
void poll_mark_forget(struct poller *s);

/*
 * poll_claim_check() - unordered mode: once the cycle's claim is older than
 * outboxd.poll.claim.timeout.ms, mark what is acknowledged and commit, unlocking the rest
 * (s->claim_released); until then nothing.
 */
enum outcome poll_claim_check(struct poller *s);

/*
 * poll_tables_find() - the tables table.include.list selects into s->tables, each described
 * and its statements built (the columns checked: a missing one is OUTCOME_PRECONDITION with
 * the fix in s->why). poll_tables_free() frees them.
 */
enum outcome poll_tables_find(struct poller *s);
void poll_tables_free(struct poller *s);

/*
 * poll_locks_take() - the poller's periodic job (periodic_step_fn, @arg the poller): at the
 * start, then every outboxd.poll.interval.ms while some are not its own, the locks of every
 * table's partitions no session holds, unless sessions with another outboxd.poll.partitions
 * hold some of that table's (then it waits, saying why, once per change).
 */
enum outcome poll_locks_take(void *arg, int64_t now, enum periodic_left *ret_left);

/*
 * poll_locks_others() - the partitions of @t held by sessions with another
 * outboxd.poll.partitions (or an earlier outboxd, whose keys have no count): how many in
 * *@ret_held, who holds them appended to @who ("sessions with outboxd.poll.partitions=8").
 */
enum outcome poll_locks_others(struct poller *s, const struct poll_table *t, int *ret_held,
			       struct buf *who);

/*
 * poll_upkeep_prepare() - build @t's statements of the count and the cleanup, after its rel,
 * name and quoted; checks outboxd.poll.retention and outboxd.poll.archive.table with the
 * server (either wrong: OUTCOME_PRECONDITION with the fix in s->why).
 */
enum outcome poll_upkeep_prepare(struct poller *s, struct poll_table *t, const char *schema);

/*
 * The side jobs below fail without ending the session: a failed statement is a warning naming
 * the job, the table, the error and the fix, counted in outboxd_poll_upkeep_failures_total, and
 * the job backs off (PERIODIC_FAILED) while publishing goes on. Only a connection that is gone
 * (or left inside a transaction) ends the session, as the cycle's next statement would anyway.
 */

/*
 * poll_upkeep_count() - the poller's periodic job (periodic_step_fn, @arg the poller) every
 * outboxd.poll.stats.interval.ms: every table's unpublished rows counted, the oldest's age.
 */
enum outcome poll_upkeep_count(void *arg, int64_t now_us, enum periodic_left *ret_left);

/*
 * poll_upkeep_clean() - the poller's periodic job (periodic_step_fn, @arg the poller) every
 * outboxd.poll.cleanup.interval.ms: one batch of the cleanup, its own short transaction; more
 * is left (PERIODIC_MORE) until every table is done, so that the loop goes on between batches
 * (publishing, signals, the liveness clock) however many rows a cleanup has to remove. A table
 * whose batch fails is left for the next cleanup, which starts again from the first table.
 */
enum outcome poll_upkeep_clean(void *arg, int64_t now_us, enum periodic_left *ret_left);

#endif
