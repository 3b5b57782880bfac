/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/snapshot/snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgconn.h"
#include "outboxd/pg/pgsql.h"
#include "outboxd/pg/pgstream.h"
#include "outboxd/pipeline/sinks.h"
#include "outboxd/pipeline/supervise.h"
#include "outboxd/pipeline/typecheck.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "snapshot_int.h"

#define MOD	      "snapshot"
#define SLOT_NAME_MAX 63

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

/*
 * A failed query's outcome by its code (pgsql.h) before the slot exists: -EIO is transient and
 * its reason stays in @s->why for snapshot_run(), which tries again after a backoff (nothing of
 * a snapshot exists yet); every other code is a precondition, logged here.
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

/* "a.b, c.d": the tables the publication names and the router selects, for messages. */
static void
selected_tables(struct snap *s, struct buf *out)
{
	struct pgsql_pubtable *t = NULL;
	char err[512];
	int n = 0, k = 0;

	if (pgsql_publication_tables(s->sql, s->cfg->publication_name, &t, &n, err, sizeof(err)) ==
	    0) {
		for (int i = 0; i < n; i++) {
			if (router_selects(s->p->router, t[i].schema, t[i].table)) {
				buf_add_fmt(out, "%s%s.%s", k++ ? ", " : "", t[i].schema,
					    t[i].table);
			}
		}
	}
	if (!k) {
		buf_add_str(out, "the outbox tables");
	}
	pgsql_pubtables_free(t, n);
}

/*
 * The selected tables' columns the router converts, each of a type outboxd converts
 * (typecheck.h), checked before anything of the snapshot exists.
 */
static enum outcome
check_types(struct snap *s)
{
	struct pgsql_pubtable *t = NULL;
	char err[2048];
	int n = 0, rc = pgsql_publication_tables(s->sql, s->cfg->publication_name, &t, &n, err,
						 sizeof(err));

	for (int i = 0; rc == 0 && i < n; i++) {
		if (router_selects(s->p->router, t[i].schema, t[i].table)) {
			rc = typecheck_table(s->sql, s->p->router, t[i].schema, t[i].table, err,
					     sizeof(err));
		}
	}
	pgsql_pubtables_free(t, n);
	return rc == 0 ? OUTCOME_OK : query_failed(s, rc, NULL, err);
}

/*
 * What an unfinished snapshot leaves, and the operator's two ways on. Its exported snapshot
 * ended with the transaction that imported it, so no later read can see the rows as they were
 * at the slot's consistent point: a new snapshot misses every row deleted since.
 */
static void
unfinished_fix(struct snap *s, const char *marker, struct buf *out)
{
	struct buf tables = BUF_INIT;
	char at[LSN_STRLEN];

	selected_tables(s, &tables);
	lsn_format(s->lsn, at);
	buf_add_fmt(out,
		    "the rows that %s held at the slot's consistent point %s may be published "
		    "only in part, and that snapshot cannot be read again: a new snapshot would "
		    "miss the rows deleted since %s. If none was deleted, or they need not be "
		    "published, drop slot \"%s\" (outboxd slot drop FILE...) and start again: the "
		    "snapshot is taken anew. If every one of them was published, drop the marker "
		    "slot instead (SELECT pg_drop_replication_slot('%s')): outboxd then streams "
		    "from %s",
		    buf_cstr(&tables), at, at, s->cfg->slot_name, marker, at);
	buf_fini(&tables);
}

/* Logs why the snapshot did not finish (@res: HALT, PRECONDITION or STOP) and what to do. */
static void
say_unfinished(struct snap *s, const char *marker, enum outcome res)
{
	struct buf fix = BUF_INIT;

	if (res == OUTCOME_STOP) {
		log_info(MOD,
			 "stopped during the initial snapshot of slot \"%s\": nothing is "
			 "confirmed; the next start cannot read this snapshot again and says how "
			 "to go on",
			 s->cfg->slot_name);
		return;
	}
	/* a failed statement aborted the snapshot's transaction: the tables are read outside it */
	PQclear(PQexec(s->sql, "ROLLBACK"));
	unfinished_fix(s, marker, &fix);
	if (res == OUTCOME_HALT) {
		log_error(MOD, "%s", s->why);
		log_error(MOD, "the initial snapshot of slot \"%s\" did not finish: %s",
			  s->cfg->slot_name, buf_cstr(&fix));
	} else {
		log_error(MOD, "the initial snapshot of slot \"%s\" failed: %.1000s; %s",
			  s->cfg->slot_name, s->why, buf_cstr(&fix));
	}
	buf_fini(&fix);
}

/* pgstream_exec_fn: CREATE_REPLICATION_SLOT, serving signals while it waits. */
static PGresult *
exec_create(void *opaque, PGconn *c, const char *command)
{
	struct snap *s = opaque;
	PGresult *r = NULL;

	if (snap_query(s, c, command, &r) != OUTCOME_OK) {
		return NULL;
	}
	return r ? r : PQmakeEmptyPGresult(c, PGRES_FATAL_ERROR);
}

/*
 * Creates the slot with an exported snapshot. It waits until every transaction running now
 * has ended; a stop cancels it. Whenever the slot was not made, the marker goes too: nothing
 * of a snapshot exists yet, so the next start takes it from scratch.
 */
static enum outcome
create_slot(struct snap *s, const char *marker, PGconn **ret_repl, char **ret_name)
{
	const char *slot = s->cfg->slot_name;
	char err[512], err2[512];
	int rc, exists;

	log_info(MOD,
		 "creating replication slot \"%s\" with an exported snapshot: this waits until "
		 "the transactions running now have ended",
		 slot);
	rc = pgstream_create_exported(&s->cfg->pg_conn, slot, s->cfg->slot_failover, exec_create, s,
				      ret_repl, ret_name, &s->lsn, err, sizeof(err));
	if (rc == 0) {
		return OUTCOME_OK;
	}
	/*
	 * A walsender that got the cancel too late, or whose connection failed after it made the
	 * slot, may have made it all the same. Nothing was read from its snapshot, so dropping
	 * it loses nothing; while it is still active the next start says how to go on.
	 */
	exists = rc == -EEXIST ? 0 : pgsql_slot_exists(s->sql, slot, err2, sizeof(err2));
	if (exists == 1 && pgsql_slot_drop(s->sql, slot, err2, sizeof(err2)) == 0) {
		log_info(MOD,
			 "replication slot \"%s\" was made all the same; dropped it (no row "
			 "was read from its snapshot)",
			 slot);
		exists = 0;
	}
	if (exists == 0 && pgsql_slot_drop(s->sql, marker, err2, sizeof(err2)) < 0) {
		log_warn(MOD, "could not drop marker slot \"%s\": %s", marker, err2);
	}
	if (rc == -EINTR && s->p->loop->stopping) {
		log_info(MOD, "stopped while creating replication slot \"%s\"%s", slot,
			 exists == 0 ? ": it was not made, nothing to undo" :
				       ", which exists now: the next start says how to go on");
		return OUTCOME_STOP;
	}
	if (rc == -EINTR) {
		log_error(MOD, "could not create replication slot \"%s\": %s", slot, s->why);
		return OUTCOME_PRECONDITION;
	}
	snprintf(err2, sizeof(err2), "could not create replication slot \"%s\"", slot);
	return query_failed(s, exists == 0 ? rc : -EPERM, err2, err);
}

/*
 * Imports the exported snapshot into a read-only repeatable-read transaction on s->sql. It
 * stays open until every row is acknowledged, so a failed delivery is published again from the
 * same snapshot; waiting for Kafka leaves it idle, which idle_in_transaction_session_timeout
 * must not end.
 */
static enum outcome
import_snapshot(struct snap *s, const char *name)
{
	struct buf q = BUF_INIT;
	char *lit = PQescapeLiteral(s->sql, name, strlen(name));
	enum outcome o;

	buf_add_fmt(&q,
		    "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; "
		    "SET TRANSACTION SNAPSHOT %s; "
		    "SET LOCAL idle_in_transaction_session_timeout = 0",
		    lit);
	o = snap_sql(s, buf_cstr(&q), NULL);
	PQfreemem(lit);
	buf_fini(&q);
	return o == OUTCOME_HALT ? OUTCOME_PRECONDITION : o;
}

/*
 * Publishes every row and waits for their acknowledgements; a failure of the delivery path
 * publishes them again from the first, from the same snapshot, after a backoff (duplicates,
 * never loss), until outboxd.halt.after.failures rounds in a row failed.
 */
static enum outcome
publish_rounds(struct snap *s, const struct publish_source *src, uint64_t *ret_rows)
{
	struct supervise sv;
	char err[512], why[sizeof(s->why)];
	enum outcome res;
	int64_t failures = 0, backoff;

	supervise_init(&sv, s->cfg->restart_backoff_max_ms, s->cfg->halt_after_failures, false);
	for (;;) {
		s->produced = s->acked = s->failed = 0;
		if (!s->pub && publish_new(&s->pp, src, &s->pub, err, sizeof(err)) < 0) {
			errbuf_set(s->why, sizeof(s->why), "%s", err);
			return OUTCOME_PRECONDITION;
		}
		res = snap_publish_all(s, ret_rows);
		if (res == OUTCOME_OK) {
			res = snap_await_acks(s);
		}
		if (res != OUTCOME_RESTART) {
			return res;
		}
		publish_free(s->pub, PUBLISH_END_RESTART);
		s->pub = NULL;
		snprintf(why, sizeof(why), "%s", s->why);
		if (supervise_failed(&sv, "the snapshot's round", NULL, &failures) ==
		    SUPERVISE_HALT) {
			errbuf_set(s->why, sizeof(s->why),
				   "halt: %.1500s; the initial snapshot failed %lld times in a row "
				   "(outboxd.halt.after.failures): fix the cause",
				   why, (long long)failures);
			return OUTCOME_HALT;
		}
		log_warn(
			MOD,
			"%s; publishing the snapshot again from its first row in %lld ms (slot and "
			"snapshot are kept: nothing is lost)",
			why, (long long)(backoff = supervise_wait_ms(&sv, 0)));
		if (!loop_sleep(s->p->loop, backoff)) {
			return OUTCOME_STOP;
		}
		if ((res = snap_sql(s, "CLOSE ALL", NULL)) != OUTCOME_OK) {
			return res == OUTCOME_HALT ? OUTCOME_PRECONDITION : res;
		}
	}
}

/*
 * After every row is acknowledged: the snapshot is complete once the marker is gone. Nothing
 * here waits (the transaction only read), so a stop asked for now still finishes it.
 */
static enum outcome
finish(struct snap *s, const char *marker, uint64_t rows)
{
	char err[512], at[LSN_STRLEN];

	PQclear(PQexec(s->sql, "COMMIT"));
	if (pgsql_slot_drop(s->sql, marker, err, sizeof(err)) < 0) {
		log_error(
			MOD,
			"every snapshot row is published and acknowledged, but marker slot \"%s\" "
			"could not be dropped: %s; drop it (SELECT pg_drop_replication_slot('%s')) "
			"and start again",
			marker, err, marker);
		return OUTCOME_HALT;
	}
	log_info(MOD,
		 "initial snapshot complete: %llu rows from %d tables published and "
		 "acknowledged; streaming from %s",
		 (unsigned long long)rows, s->ng, lsn_format(s->lsn, at));
	return OUTCOME_OK;
}

static enum outcome
take(struct snap *s, const char *marker)
{
	PGconn *repl = NULL;
	char *name = NULL, err[1024], what[300], at[LSN_STRLEN];
	uint64_t rows = 0;
	enum outcome res;
	int rc;
	struct publish_source src = { .on_produced = on_produced,
				      .on_delivery = on_delivery,
				      .opaque = s };

	/* The producer first: a refused setting must fail before anything exists. */
	if (publish_new(&s->pp, &src, &s->pub, err, sizeof(err)) < 0) {
		log_error(MOD, "%s", err);
		return OUTCOME_PRECONDITION;
	}
	if ((res = check_types(s)) != OUTCOME_OK) {
		return res;
	}
	if ((rc = pgsql_marker_create(s->sql, marker, err, sizeof(err))) < 0) {
		snprintf(what, sizeof(what), "could not create marker slot \"%s\"", marker);
		return query_failed(s, rc, what, err);
	}
	if ((res = create_slot(s, marker, &repl, &name)) != OUTCOME_OK) {
		return res;
	}
	log_info(MOD,
		 "created replication slot \"%s\" at %s; publishing the rows already in the "
		 "outbox (snapshot.mode=initial)",
		 s->cfg->slot_name, lsn_format(s->lsn, at));
	res = import_snapshot(s, name);
	PQfinish(repl); /* the snapshot lives on in the imported transaction */
	free(name);
	if (res == OUTCOME_OK) {
		res = snap_plan(s);
	}
	if (res == OUTCOME_OK) {
		res = publish_rounds(s, &src, &rows);
	}
	if (res != OUTCOME_OK) {
		say_unfinished(s, marker, res);
		return res;
	}
	return finish(s, marker, rows);
}

/* A marker and a slot: an earlier snapshot did not finish, and it cannot be read again. */
static enum outcome
refuse_unfinished(struct snap *s, const char *marker)
{
	struct pgsql_slot slot = { 0 };
	struct buf fix = BUF_INIT;
	char err[512];

	if (pgsql_check_slot(s->sql, s->cfg->slot_name, &slot, err, sizeof(err)) == 0) {
		s->lsn = slot.confirmed_flush;
	}
	unfinished_fix(s, marker, &fix);
	log_error(MOD,
		  "the initial snapshot of slot \"%s\" did not finish (its marker slot \"%s\" "
		  "exists): %s",
		  s->cfg->slot_name, marker, buf_cstr(&fix));
	buf_fini(&fix);
	return OUTCOME_PRECONDITION;
}

/*
 * Decides whether to snapshot: only with outboxd.slot.create, only for a missing slot. A
 * marker without its slot means that no snapshot was ever taken from it (or that the
 * operator dropped the slot to take it anew): it is taken. A marker with its slot is refused.
 */
static enum outcome
decide(struct snap *s, const char *marker)
{
	const char *slot = s->cfg->slot_name;
	char err[1024], what[300];
	int slot_exists = pgsql_slot_exists(s->sql, slot, err, sizeof(err));
	int marker_exists =
		slot_exists < 0 ? slot_exists : pgsql_slot_exists(s->sql, marker, err, sizeof(err));
	int rc;

	if (marker_exists < 0) {
		return query_failed(s, marker_exists, NULL, err);
	}
	if (marker_exists && slot_exists) {
		return refuse_unfinished(s, marker);
	}
	if (marker_exists && !s->cfg->slot_create) {
		log_error(MOD,
			  "an initial snapshot of slot \"%s\" was begun but the slot was not made "
			  "(marker slot \"%s\" exists): set outboxd.slot.create=true to take it, "
			  "or drop the marker slot (SELECT pg_drop_replication_slot('%s'))",
			  slot, marker, marker);
		return OUTCOME_PRECONDITION;
	}
	if (!s->cfg->slot_create || slot_exists) {
		log_info(
			MOD,
			"snapshot.mode=initial: outboxd streams from slot \"%s\" and takes no "
			"snapshot, as a migrating Debezium with offsets would (outboxd snapshots only "
			"when it creates the slot: outboxd.slot.create=true)",
			slot);
		return OUTCOME_OK;
	}
	if (marker_exists) {
		log_info(MOD,
			 "marker slot \"%s\" exists without slot \"%s\" (an earlier start stopped "
			 "before it made the slot, or the slot was dropped to take the snapshot "
			 "anew): taking the initial snapshot",
			 marker, slot);
		if ((rc = pgsql_slot_drop(s->sql, marker, err, sizeof(err))) < 0) {
			snprintf(what, sizeof(what), "could not drop marker slot \"%s\"", marker);
			return query_failed(s, rc, what, err);
		}
	}
	return take(s, marker);
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

	s.pp = (struct publish_params){ .sink = sinks_choose(cfg),
					.router = p->router,
					.dlq_topic = cfg->dlq_topic,
					.metrics = p->metrics };
	buf_add_fmt(&marker, "%.*s_outboxd_snapshot", SLOT_NAME_MAX - 17, cfg->slot_name);
	s.rc = relcache_new();
	if ((res = connect_sql(&s)) == OUTCOME_OK) {
		res = decide(&s, buf_cstr(&marker));
	}
	buf_fini(&marker);
	errbuf_set(why, whylen, "%s", s.why);
	publish_free(s.pub, PUBLISH_END_FINAL);
	snap_plan_free(&s);
	relcache_free(s.rc, NULL);
	PQfinish(s.sql);
	return res;
}

enum outcome
snapshot_run(const struct snapshot_params *p)
{
	struct supervise sv;

	/*
	 * OUTCOME_RESTART comes only from before the slot exists (a connection, a server not up
	 * yet, a transient query failure): nothing of a snapshot exists, so it is tried again with
	 * the same capped backoff as the pipeline.
	 */
	supervise_init(&sv, p->cfg->restart_backoff_max_ms, p->cfg->halt_after_failures, false);
	for (;;) {
		char why[2048];
		enum outcome o = attempt(p, why, sizeof(why));
		int64_t backoff;

		if (o != OUTCOME_RESTART) {
			return o;
		}
		backoff = supervise_wait_ms(&sv, 0);
		log_warn(MOD, "%s; the snapshot is tried again in %lld ms", why,
			 (long long)backoff);
		if (!loop_sleep(p->loop, backoff)) {
			return OUTCOME_STOP; /* SIGTERM/SIGINT during the backoff */
		}
	}
}
