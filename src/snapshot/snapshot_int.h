/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_SNAPSHOT_INT_H
#define OUTBOXD_SNAPSHOT_INT_H

/*
 * The pieces of the initial snapshot (run/snapshot.h): snapshot.c decides, creates the slot,
 * keeps the exported snapshot and retries; snapshot_read.c waits for commands while serving
 * signals, plans the reads and publishes the rows. Private to the two files.
 */

#include <libpq-fe.h>
#include <stdint.h>

#include "outboxd/pg/relcache.h"
#include "outboxd/pipeline/publish.h"
#include "outboxd/snapshot/snapshot.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/lsn.h"

/* One table whose rows the snapshot publishes, named as the stream names its rows. */
struct snap_member {
	uint32_t oid;
	const struct relcache_rel *rel; /* borrowed from snap.rc */
	bool *notnull;			/* rel's NOT NULL facts */
	char **defaults;		/* and DEFAULTs */
	int *colmap;			/* rel column -> column of the read's result */
	struct buf where;		/* "of <schema>.<table> in the initial snapshot at" */
};

/*
 * One read: a table (FROM ONLY), a partitioned table through its partitions (the publication
 * publishes via the root), or the partitions of one tree that the publication names one by one
 * (publish_via_partition_root=false), merged into one ordered read.
 */
struct snap_group {
	struct snap_member *m;
	int n;
	bool only;
	uint32_t root_oid;  /* partitions named one by one: their tree's root; else 0 */
	char *order_column; /* a column a sequence fills, or NULL: transaction order */
	int64_t order_cache;
	uint64_t rows;
};

struct snap {
	const struct snapshot_params *p;
	const struct config *cfg;
	PGconn *sql;
	struct publish_params pp;
	struct publish *pub; /* NULL between rounds */
	uint64_t produced, acked, failed;
	char failure[512];
	lsn_t lsn; /* the slot's consistent point: the rows' position */
	struct relcache *rc;
	struct snap_group *g;
	int ng;
	char why[2048];
};

/**
 * snap_query() - run @sql on @c (several statements allowed) while serving signals: a command
 * may wait for a lock or, CREATE_REPLICATION_SLOT, for every running transaction to end.
 * Return: OUTCOME_OK with *@ret the first failed result, else the last one (caller PQclear()s;
 * NULL when the connection failed before any; @ret NULL: cleared), OUTCOME_STOP when a stop
 * was asked for (the command is cancelled, the connection is busy: only PQfinish() it), or
 * OUTCOME_HALT when waiting failed (text in @s->why).
 */
enum outcome snap_query(struct snap *s, PGconn *c, const char *sql, PGresult **ret);

/**
 * snap_sql() - snap_query() on the ordinary connection, wanting success.
 * Return: OUTCOME_OK (*@ret as snap_query()'s, may be NULL), OUTCOME_STOP, or OUTCOME_HALT with
 * the failure's line in @s->why.
 */
enum outcome snap_sql(struct snap *s, const char *sql, PGresult **ret);

/**
 * snap_plan() - the reads of every table the publication names and the router selects, with
 * their relations described as pgoutput would (inside the imported snapshot).
 * Return: OUTCOME_OK, or OUTCOME_PRECONDITION with the reason in @s->why.
 */
enum outcome snap_plan(struct snap *s);

/* snap_plan_free() - free what snap_plan() made. */
void snap_plan_free(struct snap *s);

/**
 * snap_publish_all() - read every planned table through a cursor (bounded memory), in the
 * order of its ordering column, and publish each row through @s->pub.
 * Return: OUTCOME_OK, OUTCOME_STOP, OUTCOME_RESTART (the delivery path failed: read again),
 * OUTCOME_HALT (a poison row), or OUTCOME_PRECONDITION (a statement or the connection failed:
 * the snapshot is lost), with the reason in @s->why.
 */
enum outcome snap_publish_all(struct snap *s, uint64_t *ret_rows);

/**
 * snap_await_acks() - wait until every produced row has its delivery report.
 * Return: OUTCOME_OK, OUTCOME_STOP, or OUTCOME_RESTART when some were not delivered.
 */
enum outcome snap_await_acks(struct snap *s);

#endif
