/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The initial snapshot's reads (snapshot_int.h): commands that serve signals while they wait,
 * the plan of which tables are read how and in which order, and the rows through the publish
 * path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgconn.h"
#include "outboxd/pg/pgsql.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "snapshot_int.h"

#define MOD	   "snapshot"
#define FETCH_ROWS 1000
#define FETCH_SQL  "FETCH FORWARD 1000 FROM outboxd_snapshot"
/* The token of every snapshot row: the snapshot counts reports, it tracks no row. */
#define SNAPSHOT_TOKEN 1
/* A command's wait looks at the stop flag at least this often. */
#define QUERY_POLL_US INT64_C(1000000)

/* Asks the server to cancel what @c runs; the server has the request when this returns. */
static void
cancel(PGconn *c)
{
	PGcancel *k = PQgetCancel(c);
	char err[256];

	if (k && !PQcancel(k, err, sizeof(err))) {
		log_warn(MOD, "could not cancel the running command: %s", err);
	}
	PQfreeCancel(k);
}

/* Waits until @c has a result to hand out, serving signals; a stop cancels the command. */
static enum outcome
wait_ready(struct snap *s, PGconn *c)
{
	while (PQisBusy(c)) {
		struct loop_wait w = { .source_fd = PQsocket(c),
				       .source_read = true,
				       .wake_fd = -1,
				       .max_us = QUERY_POLL_US };

		if (s->p->loop->stopping) {
			cancel(c);
			return OUTCOME_STOP;
		}
		if (loop_wait(s->p->loop, &w, s->why, sizeof(s->why)) < 0) {
			return OUTCOME_HALT;
		}
		if (w.source_ready && !PQconsumeInput(c)) {
			return OUTCOME_OK; /* the connection failed: PQgetResult() says how */
		}
	}
	return OUTCOME_OK;
}

static bool
failed(const PGresult *r)
{
	return PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK;
}

enum outcome
snap_query(struct snap *s, PGconn *c, const char *sql, PGresult **ret)
{
	PGresult *r, *keep = NULL;
	enum outcome o = OUTCOME_OK;

	if (ret) {
		*ret = NULL;
	}
	if (!PQsendQuery(c, sql)) {
		return OUTCOME_OK; /* no result: the caller reads PQerrorMessage() */
	}
	while ((o = wait_ready(s, c)) == OUTCOME_OK && (r = PQgetResult(c)) != NULL) {
		if (keep && failed(keep)) {
			PQclear(r); /* the first failure is the one that explains */
			continue;
		}
		PQclear(keep);
		keep = r;
	}
	if (o == OUTCOME_OK && ret) {
		*ret = keep;
	} else {
		PQclear(keep);
	}
	return o;
}

enum outcome
snap_sql(struct snap *s, const char *sql, PGresult **ret)
{
	PGresult *r = NULL;
	enum outcome o = snap_query(s, s->sql, sql, &r);

	if (ret) {
		*ret = NULL;
	}
	if (o != OUTCOME_OK) {
		return o;
	}
	if (!r || failed(r)) {
		if (r) {
			pgconn_result_line(r, s->why, sizeof(s->why));
		} else {
			pgconn_error_line(s->sql, s->why, sizeof(s->why));
		}
		PQclear(r);
		return OUTCOME_HALT;
	}
	if (ret) {
		*ret = r;
	} else {
		PQclear(r);
	}
	return OUTCOME_OK;
}

/* Serves delivery reports and signals, waiting at most @ms for either. */
static enum outcome
serve(struct snap *s, int64_t ms)
{
	struct loop_wait w = { .source_fd = -1,
			       .wake_fd = publish_wake_fd(s->pub),
			       .max_us = ms * 1000 };

	if (loop_wait(s->p->loop, &w, s->why, sizeof(s->why)) < 0) {
		return OUTCOME_HALT;
	}
	if (s->p->loop->stopping) {
		return OUTCOME_STOP;
	}
	return publish_serve(s->pub, s->why, sizeof(s->why));
}

/* One row through the publish path, waiting for queue space (the snapshot has no stream to
 * keep alive, so waiting here is fine). */
static enum outcome
publish_one(struct snap *s, const struct publish_row *row)
{
	enum outcome o = publish_row(s->pub, row, SNAPSHOT_TOKEN, s->why, sizeof(s->why));

	while (o == OUTCOME_OK && publish_waiting(s->pub)) {
		if ((o = serve(s, 100)) == OUTCOME_OK) {
			o = publish_retry(s->pub, s->why, sizeof(s->why));
		}
	}
	return o;
}

/* @m's relation as pgoutput would describe it, cached in s->rc under its oid. */
static bool
describe(struct snap *s, struct snap_member *m, const char *schema, const char *table)
{
	struct pgsql_described d = { 0 };
	char err[512];

	if (pgsql_describe(s->sql, schema, table, m->oid, s->rc, &d, err, sizeof(err)) < 0) {
		errbuf_set(s->why, sizeof(s->why), "reading the columns of %s.%s: %s", schema,
			   table, err);
		return false;
	}
	m->rel = d.rel;
	m->notnull = d.notnull;
	m->defaults = d.defaults;
	return true;
}

/*
 * Adds @schema.@table to @g. Its result columns are those of @g's first member, by name (the
 * partitions of one tree have the same columns, perhaps in another order).
 */
static bool
add_member(struct snap *s, struct snap_group *g, const char *schema, const char *table,
	   uint32_t oid)
{
	struct snap_member *m;

	g->m = xrealloc(g->m, ((size_t)g->n + 1) * sizeof(*g->m));
	m = &g->m[g->n++];
	*m = (struct snap_member){ .oid = oid };
	buf_add_fmt(&m->where, "of %s.%s in the initial snapshot at", schema, table);
	if (!describe(s, m, schema, table)) {
		return false;
	}
	m->colmap = xcalloc((size_t)m->rel->ncols + 1, sizeof(int));
	for (int c = 0; c < m->rel->ncols; c++) {
		const struct relcache_rel *first = g->m[0].rel;
		int j = 0;

		while (j < first->ncols && strcmp(first->cols[j].name, m->rel->cols[c].name) != 0) {
			j++;
		}
		if (j == first->ncols) {
			errbuf_set(s->why, sizeof(s->why), "%s.%s has column %s, which %s.%s lacks",
				   schema, table, m->rel->cols[c].name, first->nspname,
				   first->relname);
			return false;
		}
		m->colmap[c] = 1 + j; /* result column 0 is tableoid */
	}
	return true;
}

/* Puts @schema.@table into its read: a read of its own, or that of its partition tree. */
static enum outcome
plan_table(struct snap *s, const char *schema, const char *table)
{
	struct pgsql_relation rel;
	struct snap_group *g = NULL;
	bool leaf;
	char err[512];

	if (pgsql_relation_facts(s->sql, schema, table, &rel, err, sizeof(err)) < 0) {
		errbuf_set(s->why, sizeof(s->why), "%s", err);
		return OUTCOME_PRECONDITION;
	}
	leaf = rel.partition && rel.relkind != 'p';
	for (int i = 0; leaf && i < s->ng && !g; i++) {
		g = s->g[i].root_oid == rel.root_oid ? &s->g[i] : NULL;
	}
	if (g) {
		free(rel.order_column);
	} else {
		s->g = xrealloc(s->g, ((size_t)s->ng + 1) * sizeof(*s->g));
		g = &s->g[s->ng++];
		*g = (struct snap_group){ .only = rel.relkind != 'p',
					  .root_oid = leaf ? rel.root_oid : 0,
					  .order_column = rel.order_column,
					  .order_cache = rel.order_cache };
	}
	return add_member(s, g, schema, table, rel.oid) ? OUTCOME_OK : OUTCOME_PRECONDITION;
}

enum outcome
snap_plan(struct snap *s)
{
	struct pgsql_pubtable *tables = NULL;
	enum outcome res = OUTCOME_OK;
	char err[512];
	int n = 0;

	if (pgsql_publication_tables(s->sql, s->cfg->publication_name, &tables, &n, err,
				     sizeof(err)) < 0) {
		errbuf_set(s->why, sizeof(s->why), "%s", err);
		return OUTCOME_PRECONDITION;
	}
	for (int i = 0; i < n && res == OUTCOME_OK; i++) {
		if (router_selects(s->p->router, tables[i].schema, tables[i].table)) {
			res = plan_table(s, tables[i].schema, tables[i].table);
		}
	}
	pgsql_pubtables_free(tables, n);
	return res;
}

void
snap_plan_free(struct snap *s)
{
	for (int i = 0; i < s->ng; i++) {
		struct snap_group *g = &s->g[i];

		for (int j = 0; j < g->n; j++) {
			free(g->m[j].notnull);
			pgsql_defaults_free(g->m[j].defaults, g->m[j].rel ? g->m[j].rel->ncols : 0);
			free(g->m[j].colmap);
			buf_fini(&g->m[j].where);
		}
		free(g->m);
		free(g->order_column);
	}
	free(s->g);
	s->g = NULL;
	s->ng = 0;
}

/* Appends @name to @q as an identifier. */
static void
add_ident(struct snap *s, struct buf *q, const char *name)
{
	char *id = PQescapeIdentifier(s->sql, name, strlen(name));

	buf_add_str(q, id);
	PQfreemem(id);
}

/*
 * The cursor over @g: tableoid, the columns of its first member, then the ordering key. Rows
 * come in the order of the column a sequence fills, else in the order of their inserting
 * transactions (the age of xmin, which wraps at 2^32: an age below zero is 2^32 older), then
 * partition by partition in heap order within one transaction.
 */
static void
cursor_sql(struct snap *s, const struct snap_group *g, struct buf *q)
{
	const struct relcache_rel *first = g->m[0].rel;
	int key = first->ncols + 2;

	buf_add_str(q, "DECLARE outboxd_snapshot NO SCROLL CURSOR FOR ");
	for (int i = 0; i < g->n; i++) {
		buf_add_str(q, i ? " UNION ALL SELECT tableoid" : "SELECT tableoid");
		for (int c = 0; c < first->ncols; c++) {
			buf_add_str(q, ", ");
			add_ident(s, q, first->cols[c].name);
		}
		if (g->order_column) {
			buf_add_str(q, ", ");
			add_ident(s, q, g->order_column);
		} else {
			buf_add_str(q,
				    ", CASE WHEN age(xmin) < 0 THEN age(xmin)::int8 + 4294967296 "
				    "ELSE age(xmin) END, ctid");
		}
		buf_add_str(q, g->only ? " FROM ONLY " : " FROM ");
		add_ident(s, q, g->m[i].rel->nspname);
		buf_add_char(q, '.');
		add_ident(s, q, g->m[i].rel->relname);
	}
	if (g->order_column) {
		buf_add_fmt(q, " ORDER BY %d", key);
	} else {
		buf_add_fmt(q, " ORDER BY %d DESC, 1, %d", key, key + 1);
	}
}

/* The member a fetched row belongs to: by tableoid when the read merges partitions. */
static const struct snap_member *
member_of(const struct snap_group *g, PGresult *r, int row)
{
	uint32_t oid;

	if (g->n == 1) {
		return &g->m[0]; /* a partitioned table's rows are its own, whichever partition */
	}
	oid = (uint32_t)strtoul(PQgetvalue(r, row, 0), NULL, 10);
	for (int i = 0; i < g->n; i++) {
		if (g->m[i].oid == oid) {
			return &g->m[i];
		}
	}
	return NULL;
}

/* One fetched row through the publish path. */
static enum outcome
snapshot_row(struct snap *s, const struct snap_member *m, PGresult *r, int row,
	     struct pgoutput_col *cols)
{
	const struct relcache_rel *rel = m->rel;
	struct pgoutput_tuple tup = { .ncols = rel->ncols, .cols = cols };
	struct publish_row pr = { .rel = rel,
				  .notnull = m->notnull,
				  .defaults = (const char *const *)m->defaults,
				  .op = 'r',
				  .tup = &tup,
				  .where = buf_cstr(&m->where),
				  .lsn = s->lsn };

	for (int c = 0; c < rel->ncols; c++) {
		int j = m->colmap[c];
		bool null = PQgetisnull(r, row, j);

		cols[c].kind = null ? 'n' : 't';
		cols[c].value = null ? SLICE_NULL :
				       (struct slice){ PQgetvalue(r, row, j),
						       (size_t)PQgetlength(r, row, j) };
	}
	return publish_one(s, &pr);
}

/* The rows of one FETCH. */
static enum outcome
publish_fetched(struct snap *s, struct snap_group *g, PGresult *r, struct pgoutput_col *cols)
{
	enum outcome res = OUTCOME_OK;

	for (int i = 0; i < PQntuples(r) && res == OUTCOME_OK; i++) {
		const struct snap_member *m = member_of(g, r, i);

		if (!m) {
			errbuf_set(s->why, sizeof(s->why),
				   "a row of table oid %s, which the snapshot does not read",
				   PQgetvalue(r, i, 0));
			return OUTCOME_HALT;
		}
		res = snapshot_row(s, m, r, i, cols);
		g->rows++;
	}
	return res == OUTCOME_OK ? serve(s, 0) : res;
}

/* A statement of the read: its failure aborted the transaction that holds the snapshot. */
static enum outcome
read_sql(struct snap *s, const char *sql, PGresult **ret)
{
	enum outcome o = snap_sql(s, sql, ret);

	return o == OUTCOME_HALT ? OUTCOME_PRECONDITION : o;
}

/* Reads one group through a cursor (bounded memory) and publishes its rows. */
static enum outcome
read_group(struct snap *s, struct snap_group *g)
{
	struct buf q = BUF_INIT;
	struct pgoutput_col *cols;
	enum outcome res;
	int maxcols = 0;

	for (int i = 0; i < g->n; i++) {
		maxcols = g->m[i].rel->ncols > maxcols ? g->m[i].rel->ncols : maxcols;
	}
	cols = xcalloc((size_t)maxcols + 1, sizeof(*cols));
	cursor_sql(s, g, &q);
	res = read_sql(s, buf_cstr(&q), NULL);
	while (res == OUTCOME_OK) {
		PGresult *r = NULL;
		int n;

		if ((res = read_sql(s, FETCH_SQL, &r)) != OUTCOME_OK) {
			break;
		}
		n = PQntuples(r);
		res = publish_fetched(s, g, r, cols);
		PQclear(r);
		if (n < FETCH_ROWS) {
			break;
		}
	}
	if (res == OUTCOME_OK) {
		res = read_sql(s, "CLOSE outboxd_snapshot", NULL);
	}
	free(cols);
	buf_fini(&q);
	return res;
}

/* The order a read used, in one line; a warning when it is not a sequence's. */
static void
say_order(const struct snap_group *g)
{
	const struct relcache_rel *rel = g->m[0].rel;
	struct buf what = BUF_INIT;

	buf_add_fmt(&what, "%s.%s", rel->nspname, rel->relname);
	if (g->n > 1) {
		buf_add_fmt(&what, " and %d more partitions of its tree", g->n - 1);
	}
	if (g->order_column) {
		log_info(MOD, "%llu rows of %s published in the order of column %s",
			 (unsigned long long)g->rows, buf_cstr(&what), g->order_column);
	}
	if (g->order_column && g->order_cache > 1) {
		log_warn(MOD,
			 "the sequence of column %s of %s has CACHE %lld: each session takes "
			 "numbers ahead, so rows of different sessions are not numbered in insert "
			 "order; ALTER SEQUENCE ... CACHE 1",
			 g->order_column, buf_cstr(&what), (long long)g->order_cache);
	}
	if (!g->order_column && g->rows > 1) {
		log_warn(MOD,
			 "%llu rows of %s published in the order of their inserting transactions "
			 "(xmin), then heap order: the table has no column a sequence fills (an "
			 "identity or bigserial column), so this need not be their insert order "
			 "(docs/running.md, \"Initial snapshot\")",
			 (unsigned long long)g->rows, buf_cstr(&what));
	}
	buf_fini(&what);
}

enum outcome
snap_publish_all(struct snap *s, uint64_t *ret_rows)
{
	enum outcome res = OUTCOME_OK;

	*ret_rows = 0;
	for (int i = 0; i < s->ng && res == OUTCOME_OK; i++) {
		s->g[i].rows = 0;
		res = read_group(s, &s->g[i]);
		*ret_rows += s->g[i].rows;
		if (res == OUTCOME_OK) {
			say_order(&s->g[i]);
		}
	}
	return res;
}

enum outcome
snap_await_acks(struct snap *s)
{
	enum outcome o = OUTCOME_OK;

	while (o == OUTCOME_OK && s->acked + s->failed < s->produced) {
		o = serve(s, 500);
	}
	if (o == OUTCOME_OK && s->failed) {
		errbuf_set(s->why, sizeof(s->why), "%llu snapshot rows were not delivered (%s)",
			   (unsigned long long)s->failed, s->failure);
		return OUTCOME_RESTART;
	}
	return o;
}
