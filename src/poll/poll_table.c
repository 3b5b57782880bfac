/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The outbox tables a polling session serves: the ones table.include.list selects, each
 * described as pgoutput would describe it (so the publish path sees the relation `outboxd run`
 * sees), its columns checked and its statements built with every identifier quoted. Each table
 * has its own partitions (the advisory lock key names the table), batches and marks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgsql.h"
#include "outboxd/pipeline/typecheck.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"
#include "poll_int.h"

/* The table's columns as pgoutput would describe them. */
static enum outcome
describe(struct poller *s, struct poll_table *t, const char *schema, const char *table)
{
	struct pgsql_described d = { 0 };
	char err[512];
	int rc = pgsql_describe(s->sql, schema, table, t->oid, s->rc, &d, err, sizeof(err));

	if (rc < 0) {
		errbuf_set(s->why, sizeof(s->why), "reading the columns of %s.%s: %s", schema,
			   table, err);
		return rc == -EIO ? OUTCOME_RESTART : OUTCOME_PRECONDITION;
	}
	t->rel = d.rel;
	t->notnull = d.notnull;
	t->defaults = d.defaults;
	t->ncols = d.rel->ncols;
	return OUTCOME_OK;
}

/*
 * The columns the router converts, each of a type outboxd converts (typecheck.h): a placed
 * column of another type is exit 2 before the first batch rather than a poison row in it.
 */
static enum outcome
check_types(struct poller *s, const struct poll_table *t)
{
	int rc = typecheck_relation(s->sql, s->p->router, t->rel, s->why, sizeof(s->why));

	return rc == 0 ? OUTCOME_OK : rc == -EIO ? OUTCOME_RESTART : OUTCOME_PRECONDITION;
}

/* A column the poll needs: missing is exit 2 naming it, the setting and the fix. */
static bool
require_column(struct poller *s, struct poll_table *t, const char *name, const char *key,
	       const char *add)
{
	if (poll_column(t, name) >= 0) {
		return true;
	}
	errbuf_set(s->why, sizeof(s->why),
		   "table %s has no column \"%s\" (%s): add it as sql/outbox_poll.sql does "
		   "(ALTER TABLE %s ADD COLUMN %s %s) or set %s to the column that is",
		   buf_cstr(&t->name), name, key, buf_cstr(&t->name), name, add, key);
	return false;
}

static const char *
transform_column(const struct config *cfg, const char *key, const char *def)
{
	const char *v = kv_get(&cfg->transform, key);

	return v && *v ? v : def;
}

/* @t's partition of a row: (hash of the key & 2^31-1) % partitions. */
static void
add_partition_expr(struct poller *s, struct buf *q, const char *key)
{
	/*
	 * A NULL key (nullable in Debezium's outbox; the record's key is then null) has no hash:
	 * without the COALESCE its row would be in no partition, never read.
	 */
	buf_add_str(q, "(COALESCE(hashtext(");
	poll_add_ident(s, q, key);
	buf_add_fmt(q, "::text), 0) & 2147483647) %% %lld", (long long)s->cfg->poll_partitions);
}

/*
 * The batch's SELECT: every column, the oldest unpublished rows. Ordered: of every partition
 * the session owns in one statement, the row's partition as the last column; one statement
 * instead of one per partition keeps an idle poller at one query per interval and a woken one
 * at one round trip. Ordering column order over all the owned partitions is that order within
 * each of them. Its text ends where the owned partitions go; t->tail follows them, then the
 * row limit (both integers the cycle writes: poll_batch.c sends the statement with the
 * cursor's other statements in one round trip, which takes no parameters). Unordered: a claim.
 */
static void
build_select(struct poller *s, struct poll_table *t, const char *key)
{
	const struct config *cfg = s->cfg;

	buf_add_str(&t->select, "SELECT ");
	for (int c = 0; c < t->rel->ncols; c++) {
		buf_add_str(&t->select, c ? ", " : "");
		poll_add_ident(s, &t->select, t->rel->cols[c].name);
	}
	if (!s->unordered) {
		buf_add_str(&t->select, ", ");
		add_partition_expr(s, &t->select, key);
	}
	buf_add_fmt(&t->select, " FROM %s%s WHERE ", t->only, buf_cstr(&t->quoted));
	poll_add_ident(s, &t->select, cfg->poll_published_column);
	if (s->unordered) {
		/* a claim: the rows stay locked until the transaction that marks them commits */
		buf_add_str(&t->select, " IS NULL ORDER BY ");
		poll_add_ident(s, &t->select, cfg->poll_order_column);
		buf_add_fmt(&t->select, " LIMIT %lld FOR UPDATE SKIP LOCKED",
			    (long long)cfg->poll_batch_size);
		return;
	}
	buf_add_str(&t->select, " IS NULL AND ");
	add_partition_expr(s, &t->select, key);
	buf_add_str(&t->select, " = ANY(");
	buf_add_str(&t->tail, "::int[]) ORDER BY ");
	poll_add_ident(s, &t->tail, cfg->poll_order_column);
	buf_add_str(&t->tail, " LIMIT ");
}

/* The table's statements, with every identifier quoted. */
static enum outcome
build_sql(struct poller *s, struct poll_table *t)
{
	const struct config *cfg = s->cfg;
	const char *id = transform_column(cfg, "table.field.event.id", "id");
	const char *key = transform_column(cfg, "table.field.event.key", "aggregateid");

	if (!require_column(s, t, cfg->poll_order_column, "outboxd.poll.order.column",
			    "bigint GENERATED ALWAYS AS IDENTITY") ||
	    !require_column(s, t, cfg->poll_published_column, "outboxd.poll.published.column",
			    "timestamptz NULL") ||
	    !require_column(s, t, id, "table.field.event.id", "uuid") ||
	    !require_column(s, t, key, "table.field.event.key", "varchar(255)")) {
		return OUTCOME_PRECONDITION;
	}
	build_select(s, t, key);
	s->stage = "id";
	return poll_key_prepare(s, t, id);
}

/* One selected table: named, described, its statements built. */
static enum outcome
prepare(struct poller *s, struct poll_table *t, const char *schema, const char *table)
{
	enum outcome o;

	/*
	 * ONLY keeps a plain table's inheritance children out; on a partitioned root it would
	 * read no row at all (its rows are its partitions'), so the root is read whole: every
	 * partition in one statement, in one order.
	 */
	t->only = t->partitioned ? "" : "ONLY ";
	buf_add_fmt(&t->name, "%s.%s", schema, table);
	buf_add_fmt(&t->where, "of %s, polled, at", buf_cstr(&t->name));
	poll_add_ident(s, &t->quoted, schema);
	buf_add_char(&t->quoted, '.');
	poll_add_ident(s, &t->quoted, table);
	t->owned = xcalloc((size_t)s->cfg->poll_partitions, sizeof(bool));
	s->stage = "columns";
	o = describe(s, t, schema, table);
	o = o == OUTCOME_OK ? check_types(s, t) : o;
	o = o == OUTCOME_OK ? build_sql(s, t) : o;
	if (o == OUTCOME_OK) {
		s->stage = "cleanup";
		o = poll_upkeep_prepare(s, t, schema);
	}
	return o;
}

/* Row @i of the table list is a partition whose root the list selects too: read through it. */
static bool
read_by_root(struct poller *s, const PGresult *r, int i)
{
	return !PQgetisnull(r, i, 5) &&
	       router_selects(s->p->router, PQgetvalue(r, i, 4), PQgetvalue(r, i, 5));
}

/*
 * A partition selected without its root: polled alone it would be one "table" per partition,
 * each with its own order, and an aggregate whose rows span two partitions would lose its order.
 */
static enum outcome
leaf_refused(struct poller *s, const PGresult *r, int i)
{
	errbuf_set(s->why, sizeof(s->why),
		   "table.include.list selects %s.%s, a partition of %s.%s: list the partitioned "
		   "table %s.%s instead (outboxd poll reads every partition through it, in one "
		   "order, so an aggregate whose rows span partitions keeps its order)",
		   PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), PQgetvalue(r, i, 4),
		   PQgetvalue(r, i, 5), PQgetvalue(r, i, 4), PQgetvalue(r, i, 5));
	return OUTCOME_PRECONDITION;
}

enum outcome
poll_tables_find(struct poller *s)
{
	PGresult *r = NULL;
	enum outcome o;

	s->stage = "table";
	if (!s->cfg->table_include_list) {
		errbuf_set(s->why, sizeof(s->why),
			   "outboxd poll needs table.include.list naming the outbox table(s) "
			   "(table.include.list=public.outbox)");
		return OUTCOME_PRECONDITION;
	}
	o = poll_exec(
		s,
		"SELECT n.nspname, c.relname, c.oid, c.relkind = 'p', rn.nspname, r.relname FROM "
		"pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_class r ON "
		"c.relispartition AND r.oid = pg_partition_root(c.oid) LEFT JOIN pg_namespace rn ON "
		"rn.oid = r.relnamespace WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN "
		"('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' ORDER BY 1, 2",
		0, NULL, "listing the tables", &r);
	if (o != OUTCOME_OK) {
		return o;
	}
	s->tables = xcalloc((size_t)PQntuples(r) + 1, sizeof(*s->tables));
	for (int i = 0; i < PQntuples(r) && o == OUTCOME_OK; i++) {
		const char *schema = PQgetvalue(r, i, 0), *table = PQgetvalue(r, i, 1);
		struct poll_table *t = &s->tables[s->ntables];

		if (!router_selects(s->p->router, schema, table) || read_by_root(s, r, i)) {
			continue;
		}
		if (!PQgetisnull(r, i, 5)) {
			o = leaf_refused(s, r, i);
			break;
		}
		s->ntables++;
		t->oid = (uint32_t)strtoul(PQgetvalue(r, i, 2), NULL, 10);
		t->partitioned = strcmp(PQgetvalue(r, i, 3), "t") == 0;
		o = prepare(s, t, schema, table);
		buf_add_fmt(&s->names, "%s%s", s->ntables > 1 ? ", " : "", buf_cstr(&t->name));
	}
	PQclear(r);
	if (o == OUTCOME_OK && !s->ntables) {
		errbuf_set(s->why, sizeof(s->why),
			   "table.include.list \"%.200s\" selects no table of the database: create "
			   "the outbox table (sql/outbox_poll.sql) or fix the list",
			   s->cfg->table_include_list);
		o = OUTCOME_PRECONDITION;
	}
	return o;
}

void
poll_tables_free(struct poller *s)
{
	for (int i = 0; i < s->ntables; i++) {
		struct poll_table *t = &s->tables[i];

		free(t->notnull);
		pgsql_defaults_free(t->defaults, t->ncols);
		free(t->owned);
		free(t->waiting);
		buf_fini(&t->name);
		buf_fini(&t->quoted);
		buf_fini(&t->where);
		buf_fini(&t->select);
		buf_fini(&t->tail);
		buf_fini(&t->mark);
		buf_fini(&t->match);
		buf_fini(&t->left);
		free(t->key);
		buf_fini(&t->stats);
		buf_fini(&t->clean);
	}
	free(s->tables);
	s->tables = NULL;
	s->ntables = 0;
	buf_fini(&s->names);
}
