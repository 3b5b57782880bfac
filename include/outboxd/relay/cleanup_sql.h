/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RELAY_CLEANUP_SQL_H
#define OUTBOXD_RELAY_CLEANUP_SQL_H

/*
 * The statements of outboxd.cleanup.* (cleanup.h says why they are safe), as text: the mark,
 * one batch of DELETE, and the drop or detach of a partition. No I/O: a connection is taken
 * only to quote names and values with its encoding (PQescapeLiteral).
 */

#include <libpq-fe.h>
#include <stdbool.h>

#include "outboxd/util/buf.h"

/* One outbox table the publication holds and the relay selects. */
struct cleanup_table {
	const char *schema, *table; /* borrowed */
};

/* The mark's columns, one row per leaf table. */
enum cleanup_mark_col {
	CLEANUP_MARK_SNAPSHOT, /* pg_current_snapshot(), as text */
	CLEANUP_MARK_HORIZON,  /* pg_current_wal_insert_lsn(), read after it */
	CLEANUP_MARK_LEAF,     /* the leaf, as regclass text */
	CLEANUP_MARK_EXPIRED,  /* t: a range partition on the created column whose upper bound
				  is older than the retention */
	CLEANUP_MARK_PARENT,   /* its parent, as regclass text; NULL for a table of its own */
	CLEANUP_MARK_NCOLS,
};

/**
 * cleanup_sql_mark() - the mark for @tables, with @created (the column's name) and
 * @retention (an interval's text) quoted in.
 * Return: caller-frees; NULL when @sql could not quote a value.
 */
char *cleanup_sql_mark(PGconn *sql, const struct cleanup_table *tables, int ntables,
		       const char *created, const char *retention);

/*
 * cleanup_sql_delete() - append one batch's statement for @leaf (regclass text) and the quoted
 * @created column. Parameters: $1 the mark's snapshot, $2 the retention, $3 the batch size, $4
 * the slot's name, $5 the mark's horizon. It answers one row: whether the slot's
 * confirmed_flush_lsn reached the horizon (nothing is deleted otherwise), and the rows deleted.
 */
void cleanup_sql_delete(const char *leaf, const char *created, struct buf *out);

/**
 * cleanup_sql_partition() - the statements that drop (@drop) or detach @leaf from @parent
 * (regclass texts) when the slot @slot confirmed @horizon and every row of the leaf is visible
 * in @snapshot, under a lock of the parent that waits at most 5 s; then one row: t when the
 * leaf is gone or detached. The names and values are literals of SET LOCAL statements of their
 * own, never text of the DO block's body (cleanup_sql.c says why).
 * Return: caller-frees; NULL when @sql could not quote a value.
 */
char *cleanup_sql_partition(PGconn *sql, const char *leaf, const char *parent, const char *snapshot,
			    const char *slot, const char *horizon, bool drop);

#endif
