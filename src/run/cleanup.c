/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/run/cleanup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgconn.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/now.h"

#define MOD "cleanup"

/* A failed statement is logged at most this often. */
#define WARN_EVERY_US (INT64_C(60) * 1000000)

/*
 * A row's xmin (32 bits) as the xid8 pg_visible_in_snapshot() takes: the epoch of the
 * snapshot's xmax, or the one before when the row's xid is not below xmax's low half (it was
 * assigned before xmax, so it wrapped). A row older than 2^32 xids (frozen long ago) may come
 * out in the future, which keeps it: never a row deleted that should stay.
 */
#define VISIBLE                                                                                    \
	"pg_visible_in_snapshot(((((pg_snapshot_xmax($1::pg_snapshot)::text::bigint >> 32) - "     \
	"(xmin::text::bigint >= (pg_snapshot_xmax($1::pg_snapshot)::text::bigint & 4294967295))"   \
	"::int) << 32) | xmin::text::bigint)::text::xid8, $1::pg_snapshot)"

static int
query_failed(PGresult *r, char *why, size_t whylen)
{
	enum pgconn_failure f = pgconn_result_failure(r, why, whylen);

	PQclear(r);
	return f == PGCONN_TRANSIENT ? OUTCOME_RESTART : OUTCOME_PRECONDITION;
}

/* outboxd.cleanup.retention is an interval PostgreSQL reads, and longer than nothing. */
static enum outcome
check_retention(PGconn *sql, const char *retention, char *why, size_t whylen)
{
	const char *params[1] = { retention };
	PGresult *r = PQexecParams(sql, "SELECT $1::interval > interval '0'", 1, NULL, params, NULL,
				   NULL, 0);
	const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	bool ok;

	if (PQresultStatus(r) != PGRES_TUPLES_OK && !(state && strncmp(state, "22", 2) == 0)) {
		return query_failed(r, why, whylen);
	}
	ok = PQresultStatus(r) == PGRES_TUPLES_OK && strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	PQclear(r);
	if (!ok) {
		errbuf_set(
			why, whylen,
			"outboxd.cleanup.retention=%s is not a positive PostgreSQL interval: "
			"write it as PostgreSQL reads an interval, e.g. \"7 days\" or \"12 hours\"",
			retention);
		return OUTCOME_PRECONDITION;
	}
	return OUTCOME_OK;
}

/* The role may DELETE from @t, and @t has the created column. */
static enum outcome
check_table(PGconn *sql, const struct cleanup_params *p, const struct cleanup_table *t, char *why,
	    size_t whylen)
{
	const char *params[3] = { t->schema, t->table, p->created };
	PGresult *r = PQexecParams(
		sql,
		"SELECT has_table_privilege(c.oid, 'DELETE'), EXISTS (SELECT FROM pg_attribute a "
		"WHERE a.attrelid = c.oid AND a.attname = $3 AND a.attnum > 0 AND NOT "
		"a.attisdropped) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
		"WHERE n.nspname = $1 AND c.relname = $2",
		3, NULL, params, NULL, NULL, 0);
	enum outcome o = OUTCOME_OK;

	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		return query_failed(r, why, whylen);
	}
	if (PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "t") != 0) {
		errbuf_set(why, whylen,
			   "outboxd.cleanup.retention is set but the role may not DELETE from "
			   "%s.%s: GRANT DELETE ON %s.%s TO <the role> (sql/role.sql), or unset "
			   "outboxd.cleanup.retention",
			   t->schema, t->table, t->schema, t->table);
		o = OUTCOME_PRECONDITION;
	} else if (PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 1), "t") != 0) {
		errbuf_set(why, whylen,
			   "outboxd.cleanup.retention is set but %s.%s has no column \"%s\" "
			   "(outboxd.cleanup.created.column): ALTER TABLE %s.%s ADD COLUMN %s "
			   "timestamptz NOT NULL DEFAULT now(), or name the column that holds the "
			   "insert time",
			   t->schema, t->table, p->created, t->schema, t->table, p->created);
		o = OUTCOME_PRECONDITION;
	}
	PQclear(r);
	return o;
}

char *
cleanup_mark_sql(PGconn *sql, const struct cleanup_table *tables, int ntables)
{
	struct buf q = BUF_INIT;

	buf_add_str(&q, "SELECT pg_current_snapshot()::text, pg_current_wal_insert_lsn()::text, "
			"t.relid::regclass::text FROM (VALUES ");
	for (int i = 0; i < ntables; i++) {
		char *s = PQescapeLiteral(sql, tables[i].schema, strlen(tables[i].schema));
		char *n = PQescapeLiteral(sql, tables[i].table, strlen(tables[i].table));

		if (!s || !n) {
			PQfreemem(s);
			PQfreemem(n);
			buf_fini(&q);
			return NULL;
		}
		buf_add_fmt(&q, "%s(%s, %s)", i ? ", " : "", s, n);
		PQfreemem(s);
		PQfreemem(n);
	}
	/* pg_partition_tree() has no row for a table that is not partitioned */
	buf_add_str(&q,
		    ") AS r(s, n) CROSS JOIN LATERAL (SELECT format('%I.%I', r.s, r.n)::regclass "
		    "AS root) x CROSS JOIN LATERAL (SELECT p.relid FROM pg_partition_tree(x.root) "
		    "p WHERE p.isleaf UNION SELECT c.oid FROM pg_class c WHERE c.oid = x.root AND "
		    "c.relkind = 'r') t");
	return buf_steal(&q);
}

enum outcome
cleanup_open(struct cleanup *c, const struct cleanup_params *p, PGconn *sql,
	     const struct cleanup_table *tables, int ntables, char *why, size_t whylen)
{
	enum outcome o;
	char *created;

	*c = (struct cleanup){ .p = p, .next_us = now_monotonic_us() };
	if (!p->retention) {
		return OUTCOME_OK;
	}
	if ((o = check_retention(sql, p->retention, why, whylen)) != OUTCOME_OK) {
		return o;
	}
	for (int i = 0; i < ntables; i++) {
		if ((o = check_table(sql, p, &tables[i], why, whylen)) != OUTCOME_OK) {
			return o;
		}
	}
	created = PQescapeIdentifier(sql, p->created, strlen(p->created));
	if (!created || !(c->mark_sql = cleanup_mark_sql(sql, tables, ntables))) {
		PQfreemem(created);
		pgconn_error_line(sql, why, whylen);
		return OUTCOME_RESTART;
	}
	c->created = xstrdup(created);
	PQfreemem(created);
	return OUTCOME_OK;
}

static void
end_cycle(struct cleanup *c)
{
	for (int i = 0; i < c->nleaves; i++) {
		free(c->leaves[i]);
	}
	free(c->leaves);
	free(c->snapshot);
	c->leaves = NULL;
	c->snapshot = NULL;
	c->nleaves = c->leaf = 0;
	c->state = CLEANUP_IDLE;
	c->next_us = now_monotonic_us() + c->p->interval_ms * 1000;
}

void
cleanup_close(struct cleanup *c)
{
	if (c->p) {
		end_cycle(c);
	}
	free(c->mark_sql);
	free(c->created);
	*c = (struct cleanup){ 0 };
}

static void
warn(struct cleanup *c, const char *what, const PGresult *r)
{
	char err[512];
	int64_t now = now_monotonic_us();

	if (now < c->next_warn_us) {
		return;
	}
	c->next_warn_us = now + WARN_EVERY_US;
	pgconn_result_line(r, err, sizeof(err));
	log_warn(MOD, "%s failed: %s; the cleanup tries again in %lld ms", what, err,
		 (long long)c->p->interval_ms);
}

/* The mark's result (sqlq_result_fn). */
static enum outcome
on_mark(void *arg, const PGresult *r, char *why, size_t whylen)
{
	struct cleanup *c = arg;
	int n = PQntuples(r);

	(void)why, (void)whylen;
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		warn(c, "the cleanup's mark (pg_current_snapshot)", r);
		end_cycle(c);
		return OUTCOME_OK;
	}
	if (n == 0) {
		end_cycle(c); /* a partitioned outbox without partitions */
		return OUTCOME_OK;
	}
	c->snapshot = xstrdup(PQgetvalue(r, 0, 0));
	c->leaves = xcalloc((size_t)n, sizeof(*c->leaves));
	c->horizon = 0;
	for (int i = 0; i < n; i++) {
		lsn_t at = 0;

		(void)lsn_parse(PQgetvalue(r, i, 1), &at);
		c->horizon = at > c->horizon ? at : c->horizon;
		c->leaves[i] = xstrdup(PQgetvalue(r, i, 2));
	}
	c->nleaves = n;
	c->leaf = 0;
	c->deleted = 0;
	c->state = CLEANUP_WAITING;
	return OUTCOME_OK;
}

static void submit_delete(struct cleanup *c, struct sqlq *q);

/* A DELETE's result (sqlq_result_fn): a full batch goes on with the same table. */
static enum outcome
on_delete(void *arg, const PGresult *r, char *why, size_t whylen)
{
	struct cleanup *c = arg;
	int64_t n;

	(void)why, (void)whylen;
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
		warn(c, "the cleanup's DELETE", r);
		end_cycle(c);
		return OUTCOME_OK;
	}
	if (strcmp(PQgetvalue(r, 0, 0), "t") != 0) {
		c->state = CLEANUP_WAITING; /* the slot has not taken the confirmation yet */
		return OUTCOME_OK;
	}
	n = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
	c->deleted += (uint64_t)n;
	metrics_count(c->p->metrics, METRICS_CLEANUP_DELETED, (uint64_t)n);
	if (n < c->p->batch && ++c->leaf >= c->nleaves) {
		if (c->deleted) {
			log_info(MOD, "deleted %llu confirmed outbox row(s) older than %s",
				 (unsigned long long)c->deleted, c->p->retention);
		}
		end_cycle(c);
		return OUTCOME_OK;
	}
	c->state = CLEANUP_WAITING; /* the next batch at the next turn */
	return OUTCOME_OK;
}

void
cleanup_delete_sql(const char *leaf, const char *created, struct buf *out)
{
	/*
	 * The slot itself, not only the relay, must have confirmed the horizon: the statement
	 * deletes nothing before the walsender took the status update (it answers false then).
	 * ctid: the batch's rows by their physical address, the cheapest way back to them.
	 */
	buf_add_fmt(
		out,
		"WITH ok AS (SELECT coalesce((SELECT confirmed_flush_lsn >= $5::pg_lsn FROM "
		"pg_replication_slots WHERE slot_name = $4), false) AS ok), d AS (DELETE FROM "
		"ONLY %s WHERE (SELECT ok FROM ok) AND ctid = ANY(ARRAY(SELECT ctid FROM ONLY %s "
		"WHERE %s < now() - $2::interval AND " VISIBLE " LIMIT $3::int)) RETURNING 1) "
		"SELECT (SELECT ok FROM ok), (SELECT count(*) FROM d)",
		leaf, leaf, created);
}

static void
submit_delete(struct cleanup *c, struct sqlq *q)
{
	struct buf sql = BUF_INIT;
	char batch[24], horizon[LSN_STRLEN];
	const char *params[5] = { c->snapshot, c->p->retention, batch, c->p->slot,
				  lsn_format(c->horizon, horizon) };

	snprintf(batch, sizeof(batch), "%lld", (long long)c->p->batch);
	cleanup_delete_sql(c->leaves[c->leaf], c->created, &sql);
	if (sqlq_submit(q, SQLQ_CLEANUP, buf_cstr(&sql), params, 5, on_delete, c)) {
		c->state = CLEANUP_DELETING;
	}
	buf_fini(&sql);
}

void
cleanup_turn(struct cleanup *c, struct sqlq *q, lsn_t confirmed, int64_t now_us)
{
	if (!c->p || !c->p->retention || sqlq_pending(q, SQLQ_CLEANUP)) {
		return;
	}
	switch (c->state) {
	case CLEANUP_IDLE:
		if (now_us >= c->next_us &&
		    sqlq_submit(q, SQLQ_CLEANUP, c->mark_sql, NULL, 0, on_mark, c)) {
			c->state = CLEANUP_MARKING;
		}
		break;
	case CLEANUP_WAITING:
		/* every row visible in the mark's snapshot committed before its horizon */
		if (confirmed >= c->horizon) {
			submit_delete(c, q);
		}
		break;
	case CLEANUP_MARKING:
	case CLEANUP_DELETING: break; /* its result sets the next state */
	}
}
