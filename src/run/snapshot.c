/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/run/snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgconn.h"
#include "outboxd/pg/pgsql.h"
#include "outboxd/pg/pgstream.h"
#include "outboxd/pg/relcache.h"
#include "outboxd/run/publish.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/now.h"

#define MOD	      "snapshot"
#define FETCH_ROWS    1000
#define FETCH_SQL     "FETCH FORWARD 1000 FROM outboxd_snapshot"
#define SLOT_NAME_MAX 63
/* The token of every snapshot row: the snapshot counts reports, it tracks no row. */
#define SNAPSHOT_TOKEN 1

struct snap {
	const struct snapshot_params *p;
	const struct config *cfg;
	PGconn *sql;
	struct publish_params pp;
	struct publish *pub;
	uint64_t produced, acked, failed;
	char failure[512];
	lsn_t lsn;	  /* the slot's consistent point: the rows' position */
	struct buf where; /* "of <table> in the initial snapshot at", per table */
	char why[2048];
};

static void
on_produced(void *opaque, uint64_t token)
{
	struct snap *s = opaque;

	(void)token;
	s->produced++;
}

static void
on_delivery(void *opaque, uint64_t token, bool ok, const char *reason)
{
	struct snap *s = opaque;

	(void)token;
	if (ok) {
		s->acked++;
		return;
	}
	if (!s->failed++) {
		snprintf(s->failure, sizeof(s->failure), "%s", reason ? reason : "unknown");
	}
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

/*
 * A failed query's outcome by its code (pgsql.h): -EIO is transient and its reason stays in
 * @s->why for snapshot_run(), which tries again after a backoff; every other code is a
 * precondition, logged here.
 */
static enum outcome
query_failed(struct snap *s, int rc, const char *what, const char *err)
{
	errbuf_set(s->why, sizeof(s->why), "%s%s%s", what ? what : "", what ? ": " : "", err);
	if (rc == -EIO) {
		return OUTCOME_RESTART;
	}
	log_error(MOD, "%s", s->why);
	return OUTCOME_PRECONDITION;
}

/* The relation pgoutput would describe for @schema.@table, cached in @rc; NULL with @ret_o. */
static const struct relcache_rel *
describe(struct snap *s, struct relcache *rc, uint32_t relid, const char *schema, const char *table,
	 bool **ret_notnull, char ***ret_defaults, enum outcome *ret_o)
{
	struct pgsql_column *cols = NULL;
	struct pgoutput_rel_col *rcols;
	struct pgoutput_msg m = { .type = PGOUTPUT_MSG_RELATION };
	const struct relcache_rel *rel;
	char err[1024], what[300];
	int n = 0, code;

	if ((code = pgsql_table_columns(s->sql, schema, table, &cols, &n, err, sizeof(err))) < 0) {
		snprintf(what, sizeof(what), "reading the columns of %s.%s", schema, table);
		*ret_o = query_failed(s, code, what, err);
		return NULL;
	}
	rcols = xcalloc((size_t)n + 1, sizeof(*rcols));
	*ret_notnull = xcalloc((size_t)n + 1, sizeof(bool));
	*ret_defaults = xcalloc((size_t)n + 1, sizeof(char *));
	for (int i = 0; i < n; i++) {
		(*ret_defaults)[i] = cols[i].def ? xstrdup(cols[i].def) : NULL;
		rcols[i] = (struct pgoutput_rel_col){ .name = slice_from_str(cols[i].name),
						      .type_oid = cols[i].type_oid,
						      .typmod = cols[i].typmod };
		(*ret_notnull)[i] = cols[i].notnull;
	}
	m.u.relation.relid = relid;
	m.u.relation.nspname = slice_from_str(schema);
	m.u.relation.relname = slice_from_str(table);
	m.u.relation.replident = 'd';
	m.u.relation.ncols = n;
	m.u.relation.cols = rcols;
	rel = relcache_apply(rc, &m, NULL);
	free(rcols);
	pgsql_columns_free(cols, n);
	return rel;
}

/* Runs @sql on the ordinary connection; a failure by its class (query_failed()). */
static enum outcome
exec_sql(struct snap *s, const char *sql, PGresult **ret)
{
	PGresult *r = PQexec(s->sql, sql);
	ExecStatusType st = PQresultStatus(r);
	char err[1024];
	int rc;

	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
		if (ret) {
			*ret = r;
		} else {
			PQclear(r);
		}
		return OUTCOME_OK;
	}
	rc = pgconn_failure_code(pgconn_result_failure(r, err, sizeof(err)));
	PQclear(r);
	return query_failed(s, rc, NULL, err);
}

/* One fetched row through the publish path. */
static enum outcome
snapshot_row(struct snap *s, const struct relcache_rel *rel, const bool *notnull,
	     char *const *defaults, PGresult *r, int row, struct pgoutput_col *cols)
{
	struct pgoutput_tuple tup = { .ncols = rel->ncols, .cols = cols };
	struct publish_row pr = { .rel = rel,
				  .notnull = notnull,
				  .defaults = (const char *const *)defaults,
				  .op = 'r',
				  .tup = &tup,
				  .where = buf_cstr(&s->where),
				  .lsn = s->lsn };
	enum outcome o;

	for (int c = 0; c < rel->ncols; c++) {
		bool null = PQgetisnull(r, row, c);

		cols[c].kind = null ? 'n' : 't';
		cols[c].value = null ? SLICE_NULL :
				       (struct slice){ PQgetvalue(r, row, c),
						       (size_t)PQgetlength(r, row, c) };
	}
	o = publish_one(s, &pr);
	if (o == OUTCOME_HALT) {
		log_error(MOD, "%s; the snapshot reruns at the next start", s->why);
	}
	return o; /* OUTCOME_RESTART: snapshot_run() logs s->why */
}

/* Reads one table through a cursor (bounded memory) and publishes its rows. */
static enum outcome
snapshot_table(struct snap *s, struct relcache *rc, uint32_t relid, const char *schema,
	       const char *table, uint64_t *ret_rows)
{
	bool *notnull = NULL;
	char **defaults = NULL;
	enum outcome res = OUTCOME_OK;
	const struct relcache_rel *rel =
		describe(s, rc, relid, schema, table, &notnull, &defaults, &res);
	struct buf q = BUF_INIT;
	struct pgoutput_col *cols;
	char *ns, *tb;

	if (!rel) {
		free(notnull);
		pgsql_defaults_free(defaults, 0);
		return res;
	}
	buf_reset(&s->where);
	buf_add_fmt(&s->where, "of %s.%s in the initial snapshot at", schema, table);
	ns = PQescapeIdentifier(s->sql, schema, strlen(schema));
	tb = PQescapeIdentifier(s->sql, table, strlen(table));
	buf_add_str(&q, "DECLARE outboxd_snapshot NO SCROLL CURSOR FOR SELECT ");
	for (int i = 0; i < rel->ncols; i++) {
		char *col =
			PQescapeIdentifier(s->sql, rel->cols[i].name, strlen(rel->cols[i].name));

		buf_add_fmt(&q, "%s%s", i ? ", " : "", col);
		PQfreemem(col);
	}
	buf_add_fmt(&q, " FROM ONLY %s.%s", ns, tb);
	PQfreemem(ns);
	PQfreemem(tb);
	cols = xcalloc((size_t)rel->ncols + 1, sizeof(*cols));
	res = exec_sql(s, buf_cstr(&q), NULL);
	while (res == OUTCOME_OK) {
		PGresult *r = NULL;
		int n;

		if ((res = exec_sql(s, FETCH_SQL, &r)) != OUTCOME_OK) {
			break;
		}
		n = PQntuples(r);
		for (int i = 0; i < n && res == OUTCOME_OK; i++) {
			res = snapshot_row(s, rel, notnull, defaults, r, i, cols);
			(*ret_rows)++;
		}
		PQclear(r);
		if (res == OUTCOME_OK) {
			res = serve(s, 0);
		}
		if (n < FETCH_ROWS) {
			break;
		}
	}
	if (res == OUTCOME_OK) {
		res = exec_sql(s, "CLOSE outboxd_snapshot", NULL);
	}
	free(cols);
	free(notnull);
	pgsql_defaults_free(defaults, rel->ncols);
	buf_fini(&q);
	return res;
}

/* Waits until every produced row has its delivery report. */
static enum outcome
await_acks(struct snap *s)
{
	enum outcome o = OUTCOME_OK;

	while (o == OUTCOME_OK && s->acked + s->failed < s->produced) {
		o = serve(s, 500);
	}
	if (o != OUTCOME_OK) {
		return o;
	}
	if (s->failed) {
		errbuf_set(s->why, sizeof(s->why), "%llu snapshot rows were not delivered (%s)",
			   (unsigned long long)s->failed, s->failure);
		return OUTCOME_RESTART;
	}
	return OUTCOME_OK;
}

/* Reads every selected table of the publication inside the exported snapshot. */
static enum outcome
snapshot_tables(struct snap *s, uint64_t *ret_rows, int *ret_tables)
{
	struct pgsql_pubtable *tables = NULL;
	struct relcache *rc = relcache_new();
	enum outcome res = OUTCOME_OK;
	char err[1024];
	int n = 0, code;

	if ((code = pgsql_publication_tables(s->sql, s->cfg->publication_name, &tables, &n, err,
					     sizeof(err))) < 0) {
		relcache_free(rc, NULL);
		return query_failed(s, code, NULL, err);
	}
	for (int i = 0; i < n && res == OUTCOME_OK; i++) {
		if (router_selects(s->p->router, tables[i].schema, tables[i].table)) {
			res = snapshot_table(s, rc, (uint32_t)i + 1, tables[i].schema,
					     tables[i].table, ret_rows);
			(*ret_tables)++;
		}
	}
	pgsql_pubtables_free(tables, n);
	relcache_free(rc, NULL);
	return res;
}

/* Imports the exported snapshot into a read-only repeatable-read transaction on @s->sql. */
static enum outcome
import_snapshot(struct snap *s, const char *name)
{
	struct buf q = BUF_INIT;
	char *lit = PQescapeLiteral(s->sql, name, strlen(name));
	enum outcome o;

	buf_add_fmt(&q,
		    "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; "
		    "SET TRANSACTION SNAPSHOT %s",
		    lit);
	o = exec_sql(s, buf_cstr(&q), NULL);
	PQfreemem(lit);
	buf_fini(&q);
	return o;
}

/* Finds a leftover marker: drops the half-snapshotted slot and the marker. */
static enum outcome
clear_unfinished(struct snap *s, const char *marker, int *slot_exists)
{
	char err[1024], what[300];
	int rc;

	log_warn(MOD,
		 "an initial snapshot of slot \"%s\" did not finish (marker slot \"%s\" "
		 "exists); dropping both and taking the snapshot again",
		 s->cfg->slot_name, marker);
	if (*slot_exists) {
		rc = pgsql_slot_drop(s->sql, s->cfg->slot_name, err, sizeof(err));
		if (rc == -EIO) {
			snprintf(what, sizeof(what), "could not drop slot \"%s\"",
				 s->cfg->slot_name);
			return query_failed(s, rc, what, err);
		}
		if (rc < 0 && rc != -ENOENT) {
			log_error(MOD,
				  "could not drop slot \"%s\": %s; stop the client that uses it",
				  s->cfg->slot_name, err);
			return OUTCOME_PRECONDITION;
		}
		*slot_exists = 0;
	}
	if ((rc = pgsql_slot_drop(s->sql, marker, err, sizeof(err))) < 0) {
		snprintf(what, sizeof(what), "could not drop marker slot \"%s\"", marker);
		return query_failed(s, rc, what, err);
	}
	return OUTCOME_OK;
}

static enum outcome
take(struct snap *s, const char *marker)
{
	PGconn *repl = NULL;
	char *name = NULL, err[1024], what[300], at[LSN_STRLEN];
	lsn_t lsn = 0;
	uint64_t rows = 0;
	int tables = 0, rc;
	enum outcome res;

	struct publish_source src = { .on_produced = on_produced,
				      .on_delivery = on_delivery,
				      .opaque = s };

	if (publish_new(&s->pp, &src, &s->pub, err, sizeof(err)) < 0) {
		log_error(MOD, "%s", err);
		return OUTCOME_PRECONDITION;
	}
	if ((rc = pgsql_marker_create(s->sql, marker, err, sizeof(err))) < 0) {
		snprintf(what, sizeof(what), "could not create marker slot \"%s\"", marker);
		return query_failed(s, rc, what, err);
	}
	if ((rc = pgstream_create_exported(&s->cfg->pg_conn, s->cfg->slot_name, &repl, &name, &lsn,
					   err, sizeof(err))) < 0) {
		snprintf(what, sizeof(what), "could not create replication slot \"%s\"",
			 s->cfg->slot_name);
		return query_failed(s, rc, what, err);
	}
	log_info(MOD,
		 "created replication slot \"%s\" at %s; publishing the rows already in the "
		 "outbox (snapshot.mode=initial)",
		 s->cfg->slot_name, lsn_format(lsn, at));
	s->lsn = lsn;
	res = import_snapshot(s, name);
	PQfinish(repl); /* the snapshot lives on in the imported transaction */
	free(name);
	if (res == OUTCOME_OK) {
		res = snapshot_tables(s, &rows, &tables);
	}
	if (res == OUTCOME_OK) {
		res = exec_sql(s, "COMMIT", NULL);
	}
	if (res == OUTCOME_OK) {
		res = await_acks(s);
	}
	if (res != OUTCOME_OK) {
		return res;
	}
	if (pgsql_slot_drop(s->sql, marker, err, sizeof(err)) < 0) {
		log_error(MOD, "could not drop marker slot \"%s\": %s", marker, err);
		return OUTCOME_HALT;
	}
	log_info(MOD,
		 "initial snapshot complete: %llu rows from %d tables published and "
		 "acknowledged; streaming from %s",
		 (unsigned long long)rows, tables, at);
	return OUTCOME_OK;
}

/* Decides whether to snapshot: only with outboxd.slot.create, only for a missing slot or an
 * unfinished snapshot; without outboxd.slot.create an unfinished snapshot is refused. */
static enum outcome
decide(struct snap *s, const char *marker)
{
	char err[1024];
	int slot_exists = pgsql_slot_exists(s->sql, s->cfg->slot_name, err, sizeof(err));
	int marker_exists =
		slot_exists < 0 ? slot_exists : pgsql_slot_exists(s->sql, marker, err, sizeof(err));
	enum outcome res;

	if (marker_exists < 0) {
		return query_failed(s, marker_exists, NULL, err);
	}
	if (marker_exists && !s->cfg->slot_create) {
		log_error(
			MOD,
			"an initial snapshot of slot \"%s\" did not finish (marker slot "
			"\"%s\" exists): set outboxd.slot.create=true to take it again, or drop the "
			"marker slot if the rows already in the outbox need not be published",
			s->cfg->slot_name, marker);
		return OUTCOME_PRECONDITION;
	}
	if (!s->cfg->slot_create || slot_exists) {
		log_info(
			MOD,
			"snapshot.mode=initial: outboxd streams from slot \"%s\" and takes no "
			"snapshot, as a migrating Debezium with offsets would (outboxd snapshots only "
			"when it creates the slot: outboxd.slot.create=true)",
			s->cfg->slot_name);
	}
	if (!s->cfg->slot_create) {
		return OUTCOME_OK;
	}
	if (marker_exists && (res = clear_unfinished(s, marker, &slot_exists)) != OUTCOME_OK) {
		return res;
	}
	return slot_exists ? OUTCOME_OK : take(s, marker);
}

/* Connects the ordinary connection and runs database.initial.statements on it. */
static enum outcome
connect_sql(struct snap *s)
{
	enum pgconn_failure f = PGCONN_TRANSIENT;
	char err[1024];
	int rc;

	if (pgconn_open(&s->cfg->pg_conn, false, &s->sql, &f, err, sizeof(err)) < 0) {
		return query_failed(s, pgconn_failure_code(f), NULL, err);
	}
	if ((rc = pgconn_run_statements(s->sql, s->cfg->database_initial_statements, err,
					sizeof(err))) < 0) {
		return query_failed(s, rc, NULL, err);
	}
	return OUTCOME_OK;
}

/* One attempt: connect, decide, take the snapshot if needed; a restart's reason in @why. */
static enum outcome
attempt(const struct snapshot_params *p, char *why, size_t whylen)
{
	const struct config *cfg = p->cfg;
	struct snap s = { .p = p, .cfg = cfg };
	struct buf marker = BUF_INIT;
	enum outcome res;

	s.pp = (struct publish_params){ .producer = &cfg->librdkafka,
					.router = p->router,
					.dlq_topic = cfg->dlq_topic,
					.metrics = p->metrics };
	buf_add_fmt(&marker, "%.*s_outboxd_snapshot", SLOT_NAME_MAX - 17, cfg->slot_name);
	if ((res = connect_sql(&s)) == OUTCOME_OK) {
		res = decide(&s, buf_cstr(&marker));
	}
	buf_fini(&marker);
	errbuf_set(why, whylen, "%s", s.why);
	if (res == OUTCOME_STOP) {
		log_info(MOD, "stopped during the initial snapshot; it reruns at the next start");
	}
	publish_free(s.pub);
	buf_fini(&s.where);
	PQfinish(s.sql);
	return res;
}

enum outcome
snapshot_run(const struct snapshot_params *p)
{
	int64_t max = p->cfg->restart_backoff_max_ms;

	/*
	 * A transient failure takes the snapshot again (the marker slot makes the next attempt drop
	 * the half-made slot), with the same capped backoff as the pipeline.
	 */
	for (int64_t backoff = 500;; backoff = backoff * 2 > max ? max : backoff * 2) {
		char why[2048];
		enum outcome o = attempt(p, why, sizeof(why));

		if (o != OUTCOME_RESTART) {
			return o;
		}
		log_warn(MOD, "%s; the snapshot is tried again in %lld ms", why,
			 (long long)backoff);
		if (!loop_sleep(p->loop, backoff)) {
			return OUTCOME_STOP; /* SIGTERM/SIGINT during the backoff */
		}
	}
}
