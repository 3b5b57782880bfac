/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/relay/cleanup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgconn.h"
#include "outboxd/pg/pgsql.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/now.h"

#define MOD "cleanup"

/* A failed statement is logged at most this often. */
#define WARN_EVERY_US (INT64_C(60) * 1000000)

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
	PGresult *r = NULL;
	int yes = pgsql_positive_interval(sql, retention, &r);

	if (yes < 0) {
		return query_failed(r, why, whylen);
	}
	if (!yes) {
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

/* outboxd.cleanup.partitions: dropping or detaching a partition needs its owner's rights. */
static enum outcome
check_owner(PGconn *sql, const struct cleanup_params *p, const struct cleanup_table *t, char *why,
	    size_t whylen)
{
	const char *params[2] = { t->schema, t->table };
	PGresult *r;
	enum outcome o = OUTCOME_OK;

	if (strcmp(p->partitions, "off") == 0) {
		return OUTCOME_OK;
	}
	r = PQexecParams(sql,
			 "SELECT c.relkind = 'p' AND NOT pg_has_role(c.relowner, 'USAGE'), "
			 "pg_get_userbyid(c.relowner) FROM pg_class c JOIN pg_namespace n ON "
			 "n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2",
			 2, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		return query_failed(r, why, whylen);
	}
	if (PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "t") == 0) {
		errbuf_set(why, whylen,
			   "outboxd.cleanup.partitions=%s needs the rights of %s.%s's owner %s: "
			   "GRANT %s TO <the role>, or set outboxd.cleanup.partitions=off",
			   p->partitions, t->schema, t->table, PQgetvalue(r, 0, 1),
			   PQgetvalue(r, 0, 1));
		o = OUTCOME_PRECONDITION;
	}
	PQclear(r);
	return o;
}

enum outcome
cleanup_open(struct cleanup *c, const struct cleanup_params *p, PGconn *sql,
	     const struct cleanup_table *tables, int ntables, char *why, size_t whylen)
{
	enum outcome o;
	char *created;

	*c = (struct cleanup){ .p = p, .sql = sql };
	if (!p->retention) {
		return OUTCOME_OK;
	}
	if ((o = check_retention(sql, p->retention, why, whylen)) != OUTCOME_OK) {
		return o;
	}
	for (int i = 0; i < ntables; i++) {
		if ((o = check_table(sql, p, &tables[i], why, whylen)) != OUTCOME_OK ||
		    (o = check_owner(sql, p, &tables[i], why, whylen)) != OUTCOME_OK) {
			return o;
		}
	}
	created = PQescapeIdentifier(sql, p->created, strlen(p->created));
	if (!created ||
	    !(c->mark_sql = cleanup_sql_mark(sql, tables, ntables, p->created, p->retention))) {
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
		free(c->parents[i]);
	}
	free(c->leaves);
	free(c->parents);
	free(c->expired);
	free(c->snapshot);
	c->leaves = c->parents = NULL;
	c->expired = NULL;
	c->part_tried = false;
	c->snapshot = NULL;
	c->nleaves = c->leaf = 0;
	c->state = CLEANUP_ENDED;
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
	c->snapshot = xstrdup(PQgetvalue(r, 0, CLEANUP_MARK_SNAPSHOT));
	c->leaves = xcalloc((size_t)n, sizeof(*c->leaves));
	c->parents = xcalloc((size_t)n, sizeof(*c->parents));
	c->expired = xcalloc((size_t)n, sizeof(*c->expired));
	c->horizon = 0;
	for (int i = 0; i < n; i++) {
		lsn_t at = 0;

		(void)lsn_parse(PQgetvalue(r, i, CLEANUP_MARK_HORIZON), &at);
		c->horizon = at > c->horizon ? at : c->horizon;
		c->leaves[i] = xstrdup(PQgetvalue(r, i, CLEANUP_MARK_LEAF));
		c->expired[i] = strcmp(PQgetvalue(r, i, CLEANUP_MARK_EXPIRED), "t") == 0 &&
				!PQgetisnull(r, i, CLEANUP_MARK_PARENT);
		c->parents[i] = PQgetisnull(r, i, CLEANUP_MARK_PARENT) ?
					NULL :
					xstrdup(PQgetvalue(r, i, CLEANUP_MARK_PARENT));
	}
	c->nleaves = n;
	c->leaf = 0;
	c->deleted = 0;
	c->state = CLEANUP_WAITING;
	return OUTCOME_OK;
}

/* The cycle goes on with the next leaf table, or ends after the last. */
static void
next_leaf(struct cleanup *c)
{
	c->part_tried = false;
	c->state = CLEANUP_WAITING;
	if (++c->leaf < c->nleaves) {
		return;
	}
	if (c->deleted) {
		log_info(MOD, "deleted %llu confirmed outbox row(s) older than %s",
			 (unsigned long long)c->deleted, c->p->retention);
	}
	end_cycle(c);
}

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
	if (n < c->p->batch) {
		next_leaf(c);
		return OUTCOME_OK;
	}
	c->state = CLEANUP_WAITING; /* the next batch at the next turn */
	return OUTCOME_OK;
}

/* The partition step's results (sqlq_result_fn): gone or detached, or its rows are deleted. */
static enum outcome
on_partition(void *arg, const PGresult *r, char *why, size_t whylen)
{
	struct cleanup *c = arg;

	(void)why, (void)whylen;
	if (PQresultStatus(r) == PGRES_COMMAND_OK) {
		return OUTCOME_OK; /* the DO block; the answer follows */
	}
	c->state = CLEANUP_WAITING;
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
		warn(c, "the cleanup's partition step", r);
		return OUTCOME_OK; /* its rows are deleted instead */
	}
	if (strcmp(PQgetvalue(r, 0, 0), "t") == 0) {
		log_info(MOD, "%s partition %s of %s: every row confirmed and older than %s",
			 strcmp(c->p->partitions, "drop") == 0 ? "dropped" : "detached",
			 c->leaves[c->leaf], c->parents[c->leaf], c->p->retention);
		metrics_count(c->p->metrics, METRICS_CLEANUP_PARTITIONS, 1);
		next_leaf(c);
	}
	return OUTCOME_OK;
}

static void
submit_partition(struct cleanup *c, struct sqlq *q)
{
	char horizon[LSN_STRLEN];
	char *sql = cleanup_sql_partition(c->sql, c->leaves[c->leaf], c->parents[c->leaf],
					  c->snapshot, c->p->slot, lsn_format(c->horizon, horizon),
					  strcmp(c->p->partitions, "drop") == 0);

	c->part_tried = true; /* once per leaf and cycle, whatever happens */
	if (sql && sqlq_submit(q, SQLQ_CLEANUP, sql, NULL, 0, on_partition, c)) {
		c->state = CLEANUP_DELETING;
	}
	free(sql);
}

static void
submit_delete(struct cleanup *c, struct sqlq *q)
{
	struct buf sql = BUF_INIT;
	char batch[24], horizon[LSN_STRLEN];
	const char *params[5] = { c->snapshot, c->p->retention, batch, c->p->slot,
				  lsn_format(c->horizon, horizon) };

	snprintf(batch, sizeof(batch), "%lld", (long long)c->p->batch);
	cleanup_sql_delete(c->leaves[c->leaf], c->created, &sql);
	if (sqlq_submit(q, SQLQ_CLEANUP, buf_cstr(&sql), params, 5, on_delete, c)) {
		c->state = CLEANUP_DELETING;
	}
	buf_fini(&sql);
}

bool
cleanup_step(struct cleanup *c, struct sqlq *q, lsn_t confirmed)
{
	if (!c->p || !c->p->retention) {
		return false;
	}
	if (c->state == CLEANUP_ENDED) {
		c->state = CLEANUP_IDLE; /* the next cycle starts with the next step */
		return false;
	}
	if (sqlq_pending(q, SQLQ_CLEANUP)) {
		return true;
	}
	switch (c->state) {
	case CLEANUP_IDLE:
		/* false: the queue's place is taken; the mark goes at the next turn */
		if (sqlq_submit(q, SQLQ_CLEANUP, c->mark_sql, NULL, 0, on_mark, c)) {
			c->state = CLEANUP_MARKING;
		}
		break;
	case CLEANUP_WAITING:
		/* every row visible in the mark's snapshot committed before its horizon */
		if (confirmed < c->horizon) {
			break;
		}
		if (c->expired[c->leaf] && !c->part_tried && strcmp(c->p->partitions, "off") != 0) {
			submit_partition(c, q);
		} else {
			submit_delete(c, q);
		}
		break;
	case CLEANUP_MARKING:
	case CLEANUP_DELETING:
	case CLEANUP_ENDED: break; /* its result sets the next state */
	}
	return true;
}
