/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/run/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/failpoint.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "outboxd/pg/pgconn.h"
#include "outboxd/pg/pgsql.h"
#include "outboxd/pg/pgstream.h"
#include "outboxd/run/producer.h"
#include "outboxd/pg/relcache.h"

#define MOD "snapshot"
#define FETCH_ROWS 1000
#define FETCH_SQL "FETCH FORWARD 1000 FROM outboxd_snapshot"
#define SLOT_NAME_MAX 63

struct snap {
	const struct snapshot_params *p;
	PGconn *sql;
	struct producer *prod;
	int wake[2];
	uint64_t produced, acked, failed;
	char failure[512];
	struct router_record rec;
	struct producer_header *hdrs;
	size_t hdrs_cap;
	bool stopping;
};

static void
on_delivery(void *opaque, void *msg_opaque, bool ok, const char *reason)
{
	struct snap *s = opaque;

	(void)msg_opaque;
	if (ok) {
		s->acked++;
		return;
	}
	if (!s->failed++) {
		snprintf(s->failure, sizeof(s->failure), "%s", reason ? reason : "unknown");
	}
}

/* Serves delivery reports and signals, waiting at most @ms for either. */
static void
serve(struct snap *s, int ms)
{
	struct pollfd fds[2] = { { .fd = s->wake[0], .events = POLLIN },
				 { .fd = s->p->signal_fd, .events = POLLIN } };
	struct signalfd_siginfo si;
	char b[256];

	if (poll(fds, 2, ms) > 0) {
		while (read(s->wake[0], b, sizeof(b)) > 0) {
		}
		while (read(s->p->signal_fd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo != SIGHUP) {
				s->stopping = true;
			}
		}
	}
	producer_poll(s->prod);
}

/* The routed record to the producer, waiting for queue space (the snapshot has no stream to
 * keep alive, so waiting here is fine). */
static enum snapshot_result
send_record(struct snap *s, const char *row_id)
{
	struct producer_record pr = router_record_view(&s->rec, &s->hdrs, &s->hdrs_cap);
	char err[512];
	int rc;

	while ((rc = producer_send(s->prod, &pr, NULL, err, sizeof(err))) == -EAGAIN &&
	       !s->stopping) {
		serve(s, 100);
	}
	if (rc == 0) {
		s->produced++;
		failpoint_hit(FAILPOINT_AFTER_PRODUCE);
		return SNAPSHOT_DONE;
	}
	if (s->stopping) {
		return SNAPSHOT_STOPPED;
	}
	if (rc == -EMSGSIZE) {
		log_error(MOD, "halt: row id=%s: the record for topic %s is larger than "
			  "message.max.bytes (%lld); raise producer.max.request.size and the topic's "
			  "max.message.bytes, then start outboxd again (the snapshot reruns)", row_id,
			  pr.topic, (long long)producer_max_message_bytes(s->prod));
		return SNAPSHOT_HALT;
	}
	log_warn(MOD, "produce to %s failed: %s; the snapshot is taken again", pr.topic, err);
	return SNAPSHOT_RETRY;
}

/* The relation pgoutput would describe for @schema.@table, cached in @rc. */
static const struct relcache_rel *
describe(struct snap *s, struct relcache *rc, uint32_t relid, const char *schema,
	 const char *table, bool **ret_notnull, char ***ret_defaults)
{
	struct pgsql_column *cols = NULL;
	struct pgoutput_rel_col *rcols;
	struct pgoutput_msg m = { .type = PGOUTPUT_MSG_RELATION };
	const struct relcache_rel *rel;
	char err[512];
	int n = 0;

	if (pgsql_table_columns(s->sql, schema, table, &cols, &n, err, sizeof(err)) < 0) {
		log_error(MOD, "reading the columns of %s.%s: %s", schema, table, err);
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

static bool
exec_ok(PGconn *c, const char *sql, PGresult **ret)
{
	PGresult *r = PQexec(c, sql);
	ExecStatusType st = PQresultStatus(r);
	char err[512];

	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
		if (ret) {
			*ret = r;
		} else {
			PQclear(r);
		}
		return true;
	}
	pgconn_result_line(r, err, sizeof(err));
	log_error(MOD, "%s", err);
	PQclear(r);
	return false;
}

/* One fetched row through the router and to the producer. */
static enum snapshot_result
snapshot_row(struct snap *s, const struct relcache_rel *rel, const bool *notnull,
	     char *const *defaults, PGresult *r, int row, struct pgoutput_col *cols)
{
	struct pgoutput_tuple tup = { .ncols = rel->ncols, .cols = cols };
	enum router_verdict v = ROUTER_DROP;
	struct buf id = BUF_INIT;
	char err[1024] = "";
	enum snapshot_result res = SNAPSHOT_DONE;

	for (int c = 0; c < rel->ncols; c++) {
		bool null = PQgetisnull(r, row, c);

		cols[c].kind = null ? 'n' : 't';
		cols[c].value = null ? SLICE_NULL
				     : (struct slice){ PQgetvalue(r, row, c),
						       (size_t)PQgetlength(r, row, c) };
	}
	if (router_route(s->p->router, rel, notnull, (const char *const *)defaults, 'r', &tup,
			 &s->rec, &v, err, sizeof(err)) < 0) {
		v = ROUTER_POISON;
	}
	router_row_id(s->p->router, rel, &tup, &id);
	if (v == ROUTER_PUBLISH) {
		res = send_record(s, buf_cstr(&id));
	} else if (v != ROUTER_DROP) {
		log_error(MOD, "halt: row id=%s of %s.%s in the initial snapshot: %s", buf_cstr(&id),
			  rel->nspname, rel->relname, err);
		res = SNAPSHOT_HALT;
	}
	buf_fini(&id);
	return res;
}

/* Reads one table through a cursor (bounded memory) and publishes its rows. */
static enum snapshot_result
snapshot_table(struct snap *s, struct relcache *rc, uint32_t relid, const char *schema,
	       const char *table, uint64_t *ret_rows)
{
	bool *notnull = NULL;
	char **defaults = NULL;
	const struct relcache_rel *rel = describe(s, rc, relid, schema, table, &notnull, &defaults);
	struct buf q = BUF_INIT;
	struct pgoutput_col *cols;
	enum snapshot_result res = SNAPSHOT_DONE;
	char *ns, *tb;

	if (!rel) {
		free(notnull);
		pgsql_defaults_free(defaults, 0);
		return SNAPSHOT_HALT;
	}
	ns = PQescapeIdentifier(s->sql, schema, strlen(schema));
	tb = PQescapeIdentifier(s->sql, table, strlen(table));
	buf_add_str(&q, "DECLARE outboxd_snapshot NO SCROLL CURSOR FOR SELECT ");
	for (int i = 0; i < rel->ncols; i++) {
		char *col = PQescapeIdentifier(s->sql, rel->cols[i].name, strlen(rel->cols[i].name));

		buf_add_fmt(&q, "%s%s", i ? ", " : "", col);
		PQfreemem(col);
	}
	buf_add_fmt(&q, " FROM ONLY %s.%s", ns, tb);
	PQfreemem(ns);
	PQfreemem(tb);
	cols = xcalloc((size_t)rel->ncols + 1, sizeof(*cols));
	if (!exec_ok(s->sql, buf_cstr(&q), NULL)) {
		res = SNAPSHOT_HALT;
	}
	while (res == SNAPSHOT_DONE) {
		PGresult *r = NULL;
		int n;

		if (!exec_ok(s->sql, FETCH_SQL, &r)) {
			res = SNAPSHOT_HALT;
			break;
		}
		n = PQntuples(r);
		for (int i = 0; i < n && res == SNAPSHOT_DONE; i++) {
			res = snapshot_row(s, rel, notnull, defaults, r, i, cols);
			(*ret_rows)++;
		}
		PQclear(r);
		serve(s, 0);
		if (s->stopping) {
			res = SNAPSHOT_STOPPED;
		}
		if (n < FETCH_ROWS) {
			break;
		}
	}
	if (res == SNAPSHOT_DONE && !exec_ok(s->sql, "CLOSE outboxd_snapshot", NULL)) {
		res = SNAPSHOT_HALT;
	}
	free(cols);
	free(notnull);
	pgsql_defaults_free(defaults, rel->ncols);
	buf_fini(&q);
	return res;
}

/* Waits until every produced row has its delivery report. */
static enum snapshot_result
await_acks(struct snap *s)
{
	while (s->acked + s->failed < s->produced && !s->stopping) {
		serve(s, 500);
	}
	if (s->stopping) {
		return SNAPSHOT_STOPPED;
	}
	if (s->failed) {
		log_warn(MOD, "%llu snapshot rows were not delivered (%s); the snapshot is taken "
			 "again", (unsigned long long)s->failed, s->failure);
		return SNAPSHOT_RETRY;
	}
	return SNAPSHOT_DONE;
}

/* Reads every selected table of the publication inside the exported snapshot. */
static enum snapshot_result
snapshot_tables(struct snap *s, uint64_t *ret_rows, int *ret_tables)
{
	struct pgsql_pubtable *tables = NULL;
	struct relcache *rc = relcache_new();
	enum snapshot_result res = SNAPSHOT_DONE;
	char err[512];
	int n = 0;

	if (pgsql_publication_tables(s->sql, s->p->publication, &tables, &n, err, sizeof(err)) < 0) {
		log_error(MOD, "%s", err);
		relcache_free(rc, NULL);
		return SNAPSHOT_PRECONDITION;
	}
	for (int i = 0; i < n && res == SNAPSHOT_DONE; i++) {
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
static bool
import_snapshot(struct snap *s, const char *name)
{
	struct buf q = BUF_INIT;
	char *lit = PQescapeLiteral(s->sql, name, strlen(name));
	bool ok;

	buf_add_fmt(&q, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; "
			"SET TRANSACTION SNAPSHOT %s", lit);
	ok = exec_ok(s->sql, buf_cstr(&q), NULL);
	PQfreemem(lit);
	buf_fini(&q);
	return ok;
}

/* Finds a leftover marker: drops the half-snapshotted slot and the marker. */
static enum snapshot_result
clear_unfinished(struct snap *s, const char *marker, int *slot_exists)
{
	char err[512];
	int rc;

	log_warn(MOD, "an initial snapshot of slot \"%s\" did not finish (marker slot \"%s\" "
		 "exists); dropping both and taking the snapshot again", s->p->slot, marker);
	if (*slot_exists) {
		rc = pgsql_slot_drop(s->sql, s->p->slot, err, sizeof(err));
		if (rc < 0 && rc != -ENOENT) {
			log_error(MOD, "could not drop slot \"%s\": %s; stop the client that uses it",
				  s->p->slot, err);
			return SNAPSHOT_PRECONDITION;
		}
		*slot_exists = 0;
	}
	if (pgsql_slot_drop(s->sql, marker, err, sizeof(err)) < 0) {
		log_error(MOD, "could not drop marker slot \"%s\": %s", marker, err);
		return SNAPSHOT_PRECONDITION;
	}
	return SNAPSHOT_DONE;
}

static enum snapshot_result
take(struct snap *s, const char *marker)
{
	PGconn *repl = NULL;
	char *name = NULL, err[512], at[LSN_STRLEN];
	lsn_t lsn = 0;
	uint64_t rows = 0;
	int tables = 0;
	enum snapshot_result res;

	if (pipe2(s->wake, O_NONBLOCK | O_CLOEXEC) < 0 ||
	    producer_new(s->p->producer, s->wake[1], on_delivery, s, &s->prod, err, sizeof(err)) < 0) {
		log_error(MOD, "%s", s->wake[0] < 0 ? strerror(errno) : err);
		return SNAPSHOT_PRECONDITION;
	}
	if (pgsql_marker_create(s->sql, marker, err, sizeof(err)) < 0) {
		log_error(MOD, "could not create marker slot \"%s\": %s", marker, err);
		return SNAPSHOT_PRECONDITION;
	}
	if (pgstream_create_exported(s->p->pg, s->p->slot, &repl, &name, &lsn, err, sizeof(err)) < 0) {
		log_error(MOD, "could not create replication slot \"%s\": %s", s->p->slot, err);
		return SNAPSHOT_PRECONDITION;
	}
	log_info(MOD, "created replication slot \"%s\" at %s; publishing the rows already in the "
		 "outbox (snapshot.mode=initial)", s->p->slot, lsn_format(lsn, at));
	res = import_snapshot(s, name) ? SNAPSHOT_DONE : SNAPSHOT_HALT;
	PQfinish(repl); /* the snapshot lives on in the imported transaction */
	free(name);
	if (res == SNAPSHOT_DONE) {
		res = snapshot_tables(s, &rows, &tables);
	}
	if (res == SNAPSHOT_DONE && !exec_ok(s->sql, "COMMIT", NULL)) {
		res = SNAPSHOT_HALT;
	}
	if (res == SNAPSHOT_DONE) {
		res = await_acks(s);
	}
	if (res != SNAPSHOT_DONE) {
		return res;
	}
	if (pgsql_slot_drop(s->sql, marker, err, sizeof(err)) < 0) {
		log_error(MOD, "could not drop marker slot \"%s\": %s", marker, err);
		return SNAPSHOT_HALT;
	}
	log_info(MOD, "initial snapshot complete: %llu rows from %d tables published and "
		 "acknowledged; streaming from %s", (unsigned long long)rows, tables, at);
	return SNAPSHOT_DONE;
}

/* Decides whether to snapshot: only with outboxd.slot.create, only for a missing slot or an
 * unfinished snapshot; without outboxd.slot.create an unfinished snapshot is refused. */
static enum snapshot_result
decide(struct snap *s, const char *marker)
{
	char err[512];
	int slot_exists = pgsql_slot_exists(s->sql, s->p->slot, err, sizeof(err));
	int marker_exists = pgsql_slot_exists(s->sql, marker, err, sizeof(err));
	enum snapshot_result res;

	if (slot_exists < 0 || marker_exists < 0) {
		log_error(MOD, "%s", err);
		return SNAPSHOT_PRECONDITION;
	}
	if (marker_exists && !s->p->create) {
		log_error(MOD, "an initial snapshot of slot \"%s\" did not finish (marker slot "
			  "\"%s\" exists): set outboxd.slot.create=true to take it again, or drop the "
			  "marker slot if the rows already in the outbox need not be published",
			  s->p->slot, marker);
		return SNAPSHOT_PRECONDITION;
	}
	if (!s->p->create || slot_exists) {
		log_info(MOD, "snapshot.mode=initial: outboxd streams from slot \"%s\" and takes no "
			 "snapshot, as a migrating Debezium with offsets would (outboxd snapshots only "
			 "when it creates the slot: outboxd.slot.create=true)", s->p->slot);
	}
	if (!s->p->create) {
		return SNAPSHOT_DONE;
	}
	if (marker_exists && (res = clear_unfinished(s, marker, &slot_exists)) != SNAPSHOT_DONE) {
		return res;
	}
	return slot_exists ? SNAPSHOT_DONE : take(s, marker);
}

enum snapshot_result
snapshot_run(const struct snapshot_params *p)
{
	struct snap s = { .p = p, .wake = { -1, -1 } };
	struct buf marker = BUF_INIT;
	enum snapshot_result res;
	char err[512];

	if (pgconn_open(p->pg, false, &s.sql, NULL, err, sizeof(err)) < 0 ||
	    pgconn_run_statements(s.sql, p->initial_statements, err, sizeof(err)) < 0) {
		log_error(MOD, "%s", err);
		PQfinish(s.sql);
		return SNAPSHOT_PRECONDITION;
	}
	router_record_init(&s.rec);
	buf_add_fmt(&marker, "%.*s_outboxd_snapshot", SLOT_NAME_MAX - 17, p->slot);
	res = decide(&s, buf_cstr(&marker));
	buf_fini(&marker);
	if (res == SNAPSHOT_STOPPED) {
		log_info(MOD, "stopped during the initial snapshot; it reruns at the next start");
	}
	producer_free(s.prod);
	PQfinish(s.sql);
	router_record_fini(&s.rec);
	free(s.hdrs);
	for (int i = 0; i < 2; i++) {
		if (s.wake[i] >= 0) {
			close(s.wake[i]);
		}
	}
	return res;
}
