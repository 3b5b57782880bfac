/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/relay/relay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgconn.h"
#include "outboxd/pg/pgfailover.h"
#include "outboxd/pg/pgsql.h"
#include "outboxd/pg/pgstream.h"
#include "outboxd/pipeline/publish.h"
#include "outboxd/pipeline/sinks.h"
#include "outboxd/pipeline/sqlq.h"
#include "outboxd/pipeline/stall.h"
#include "outboxd/pipeline/supervise.h"
#include "outboxd/pipeline/typecheck.h"
#include "outboxd/relay/cleanup.h"
#include "outboxd/relay/feedback.h"
#include "outboxd/relay/heartbeat.h"
#include "outboxd/relay/sendnow.h"
#include "outboxd/relay/slotwatch.h"
#include "outboxd/relay/stream.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/failpoint.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/now.h"
#include "relay_int.h"

#define MOD "relay"

/* Frames read per turn, so delivery reports and status updates are served during a backlog. */
#define READ_BATCH 2000
/* A record that waits for producer queue space is tried again at least this often. */
#define RETRY_US INT64_C(100000)
/*
 * The longest a send at once (sendnow.h) holds the loop: librdkafka ignores linger.ms while a
 * flush is under way, and its broker thread needs well under a millisecond to wake and send;
 * the rest of the bound only waits for the acknowledgement, which usually comes sooner.
 */
#define SEND_NOW_MS 2

/* Catalog facts for a Relation message, on the ordinary connection (stream_facts_fn). */
static enum outcome
column_facts(void *opaque, const struct relcache_rel *rel, bool **ret_notnull, char ***ret_defaults,
	     char *why, size_t whylen)
{
	struct session *s = opaque;
	const char **names;
	enum outcome o;
	int rc;

	/* A queued statement may be running on this connection: PQexec would drop its result. */
	if ((o = sqlq_settle(&s->q, why, whylen)) != OUTCOME_OK) {
		return o;
	}
	/*
	 * pgoutput does not say which columns are NOT NULL or their DEFAULTs, but Debezium's
	 * schemas do ("optional", "default"). One catalog query per Relation message (rare: after
	 * connect and after ALTER TABLE).
	 */
	names = xcalloc((size_t)rel->ncols + 1, sizeof(*names));
	for (int i = 0; i < rel->ncols; i++) {
		names[i] = rel->cols[i].name;
	}
	rc = pgsql_column_facts(s->sql, rel->nspname, rel->relname, names, rel->ncols, ret_notnull,
				ret_defaults, why, whylen);
	free(names);
	if (rc < 0) {
		return OUTCOME_RESTART;
	}
	/*
	 * The start checked the catalog; a Relation message after it may bring a new type (ALTER
	 * TABLE while streaming), which is refused here, before its first row.
	 */
	rc = typecheck_relation(s->sql, s->r->p->router, rel, why, whylen);
	if (rc == -EINVAL) {
		s->type_refused = true;
		return OUTCOME_PRECONDITION;
	}
	return rc == -EIO ? OUTCOME_RESTART : rc < 0 ? OUTCOME_PRECONDITION : OUTCOME_OK;
}

/*
 * Decoding on a standby (16+): the cleanup cannot delete there (exit 2), an action query that
 * writes fails at every heartbeat, and without hot_standby_feedback the primary's VACUUM can
 * invalidate the slot (rows_removed). Said once per session.
 */
static enum outcome
check_standby(struct session *s)
{
	const struct config *cfg = s->r->cfg;
	bool standby = false, feedback = false;
	int rc = pgsql_standby(s->sql, &standby, &feedback, s->why, sizeof(s->why));

	if (rc < 0) {
		return rc == -EIO ? OUTCOME_RESTART : OUTCOME_PRECONDITION;
	}
	if (!standby) {
		return OUTCOME_OK;
	}
	if (cfg->cleanup_retention) {
		errbuf_set(s->why, sizeof(s->why),
			   "outboxd.cleanup.retention is set, but this server is a standby, where "
			   "nothing can be deleted: unset it here, and run the cleanup where the "
			   "outbox can be written (the primary)");
		return OUTCOME_PRECONDITION;
	}
	log_info(MOD, "this server is a standby: decoding here (PostgreSQL 16+)%s",
		 feedback ? "" :
			    "; hot_standby_feedback is off, so the primary's VACUUM may "
			    "invalidate the slot (rows_removed): set it on");
	if (cfg->heartbeat_action_query) {
		log_warn(MOD,
			 "this server is a standby: heartbeat.action.query runs here read-only, "
			 "and fails at every heartbeat if it writes");
	}
	return OUTCOME_OK;
}

/* pgfailover_check()'s findings at a session's start: warnings logged, the first failure kept. */
struct failover_findings {
	char *why;
	size_t len;
	bool failed;
};

static void
on_failover_finding(void *arg, int level, const char *what, const char *detail)
{
	struct failover_findings *f = arg;

	if (level == 1) {
		log_warn(MOD, "%s: %s", what, detail);
	} else if (level == 2 && !f->failed) {
		f->failed = true;
		errbuf_set(f->why, f->len, "%s", detail);
	}
}

/*
 * A failover slot streams only when a promoted standby would have every change outboxd
 * publishes (pgfailover_check()), checked at every session's start, so a reconnect to a new
 * primary is checked too; outboxd.failover.unsafe=true streams anyway, with a warning.
 */
static enum outcome
check_failover(struct session *s, const struct pgsql_slot *slot)
{
	const struct config *cfg = s->r->cfg;
	struct failover_findings f = { s->why, sizeof(s->why), false };
	char why[sizeof(s->why)];

	if (pgfailover_check(s->sql, cfg->slot_name, cfg->slot_failover, slot->failover,
			     on_failover_finding, &f)) {
		return OUTCOME_OK;
	}
	if (PQstatus(s->sql) != CONNECTION_OK) {
		return OUTCOME_RESTART; /* the finding is the connection's loss */
	}
	if (cfg->failover_unsafe) {
		log_warn(MOD, "failover: %s; streaming anyway (outboxd.failover.unsafe=true)",
			 s->why);
		return OUTCOME_OK;
	}
	snprintf(why, sizeof(why), "%s", s->why);
	errbuf_set(s->why, sizeof(s->why),
		   "failover slot \"%s\" is not safe: %s (or set outboxd.failover.unsafe=true to "
		   "accept events without a committed change after a failover)",
		   cfg->slot_name, why);
	return OUTCOME_PRECONDITION;
}

/*
 * The selected tables' columns the router converts, each of a type outboxd converts
 * (typecheck.h): a placed column of another type is exit 2 now rather than a poison row later.
 */
static enum outcome
check_types(struct session *s, const struct cleanup_table *tables, int n)
{
	for (int i = 0; i < n; i++) {
		int rc = typecheck_table(s->sql, s->r->p->router, tables[i].schema, tables[i].table,
					 s->why, sizeof(s->why));

		if (rc < 0) {
			return rc == -EIO ? OUTCOME_RESTART : OUTCOME_PRECONDITION;
		}
	}
	return OUTCOME_OK;
}

/* Checks the preconditions on the ordinary connection; returns the slot's confirmed LSN. */
static enum outcome
check_preconditions(struct session *s, lsn_t *ret_confirmed)
{
	const struct config *cfg = s->r->cfg;
	struct pgsql_slot slot;
	struct pgsql_pubtable *tables = NULL;
	struct cleanup_table *clean;
	enum outcome o;
	int n = 0, selected = 0, rc;

	if ((rc = pgsql_check_role(s->sql, s->why, sizeof(s->why))) < 0 ||
	    (rc = pgsql_check_slot(s->sql, cfg->slot_name, &slot, s->why, sizeof(s->why))) < 0 ||
	    (rc = pgsql_publication_tables(s->sql, cfg->publication_name, &tables, &n, s->why,
					   sizeof(s->why))) < 0) {
		/* -EIO: the query failed transiently (pgsql.h); every other code is a finding */
		pgsql_pubtables_free(tables, n);
		return rc == -EIO ? OUTCOME_RESTART : OUTCOME_PRECONDITION;
	}
	if ((o = check_standby(s)) != OUTCOME_OK || (o = check_failover(s, &slot)) != OUTCOME_OK) {
		pgsql_pubtables_free(tables, n);
		return o;
	}
	clean = xcalloc((size_t)n + 1, sizeof(*clean));
	for (int i = 0; i < n; i++) {
		if (router_selects(s->r->p->router, tables[i].schema, tables[i].table)) {
			clean[selected++] =
				(struct cleanup_table){ tables[i].schema, tables[i].table };
		}
	}
	o = check_types(s, clean, selected);
	if (o == OUTCOME_OK && selected) {
		o = cleanup_open(&s->cl, &s->r->clp, s->sql, clean, selected, s->why,
				 sizeof(s->why));
	}
	free(clean);
	pgsql_pubtables_free(tables, n);
	if (o != OUTCOME_OK) {
		return o;
	}
	if (selected == 0) {
		errbuf_set(s->why, sizeof(s->why),
			   "publication \"%s\" holds no table that "
			   "table.include.list selects; add the outbox table to it (ALTER "
			   "PUBLICATION %s ADD TABLE ...) or fix table.include.list",
			   cfg->publication_name, cfg->publication_name);
		return OUTCOME_PRECONDITION;
	}
	*ret_confirmed = slot.confirmed_flush;
	return OUTCOME_OK;
}

/*
 * Starts streaming, retrying "slot is active for PID" as slot.max.retries allows: after a crash
 * the old walsender may hold the slot until it notices the dead connection. When the retries
 * run out another client really streams from the slot, which is the operator's to fix.
 */
static enum outcome
start_stream(struct session *s)
{
	const struct config *cfg = s->r->cfg;
	enum pgstream_failure f = PGSTREAM_TRANSIENT;
	char busy[sizeof(s->why)];

	failpoint_hit(FAILPOINT_BEFORE_START_REPLICATION);
	for (int64_t attempt = 0;; attempt++) {
		if (pgstream_start(&cfg->pg_conn, cfg->slot_name, cfg->publication_name, &s->conn,
				   &f, s->why, sizeof(s->why)) == 0) {
			return OUTCOME_OK;
		}
		if (f != PGSTREAM_SLOT_BUSY) {
			return f == PGSTREAM_PRECONDITION ? OUTCOME_PRECONDITION : OUTCOME_RESTART;
		}
		if (attempt >= cfg->slot_max_retries) {
			snprintf(busy, sizeof(busy), "%s", s->why);
			errbuf_set(
				s->why, sizeof(s->why),
				"%.1500s (still after %lld retries, "
				"slot.max.retries); another client streams from this slot: stop it, "
				"or give outboxd a slot of its own",
				busy, (long long)attempt);
			return OUTCOME_PRECONDITION;
		}
		log_warn(MOD, "%s; retrying in %lld ms (%lld of %lld)", s->why,
			 (long long)cfg->slot_retry_delay_ms, (long long)attempt + 1,
			 (long long)cfg->slot_max_retries);
		if (!loop_sleep(s->r->loop, cfg->slot_retry_delay_ms)) {
			return OUTCOME_STOP;
		}
	}
}

/* Opens everything one session needs, into a zeroed @s. */
static enum outcome
session_open(struct relay *r, struct session *s)
{
	const struct config *cfg = r->cfg;
	enum pgconn_failure cf = PGCONN_TRANSIENT;
	struct publish_source src;
	lsn_t confirmed = 0;
	enum outcome o;
	char at[LSN_STRLEN];
	int64_t now, wst_ms = 0;
	int rc;

	*s = (struct session){ .r = r };
	heartbeat_init(&s->hb, &r->hp);
	metrics_set_state(r->p->metrics, METRICS_STATE_STARTING, NULL);
	if (pgconn_open(&cfg->pg_conn, false, &s->sql, &cf, s->why, sizeof(s->why)) < 0) {
		return cf == PGCONN_PRECONDITION ? OUTCOME_PRECONDITION : OUTCOME_RESTART;
	}
	sqlq_init(&s->q, s->sql);
	if ((rc = pgconn_run_statements(s->sql, cfg->database_initial_statements, s->why,
					sizeof(s->why))) < 0) {
		return rc == -EIO ? OUTCOME_RESTART : OUTCOME_PRECONDITION;
	}
	if ((o = check_preconditions(s, &confirmed)) != OUTCOME_OK) {
		return o;
	}
	if ((rc = pgsql_wal_sender_timeout(s->sql, &wst_ms, s->why, sizeof(s->why))) < 0) {
		return rc == -EIO ? OUTCOME_RESTART : OUTCOME_PRECONDITION;
	}
	s->stall_confirmed = confirmed;
	s->st = stream_new(&r->sp, confirmed, now_unix_us());
	src = stream_source(s->st);
	if (publish_new(&r->pp, &src, &s->pub, s->why, sizeof(s->why)) < 0) {
		return OUTCOME_PRECONDITION;
	}
	if (r->fail.dead_lettered_lsn) {
		publish_set_poison(s->pub, r->fail.dead_lettered_lsn, r->fail.dead_lettered_id,
				   r->poison_reason);
	}
	if ((o = start_stream(s)) != OUTCOME_OK) {
		return o;
	}
	now = now_monotonic_us();
	relay_jobs_start(s);
	log_info(MOD, "streaming slot \"%s\" from its confirmed_flush_lsn %s", cfg->slot_name,
		 lsn_format(confirmed, at));
	feedback_init(&s->fb, &s->dl, cfg->status_update_interval_ms, wst_ms, confirmed, now);
	if (s->fb.every_us < cfg->status_update_interval_ms * 1000 && !r->interval_said) {
		r->interval_said = true;
		log_info(MOD,
			 "status updates every %lld ms, a quarter of the server's "
			 "wal_sender_timeout (%lld ms), not status.update.interval.ms (%lld ms): "
			 "the server must hear from outboxd while reading is paused",
			 (long long)(s->fb.every_us / 1000), (long long)wst_ms,
			 (long long)cfg->status_update_interval_ms);
	}
	metrics_set_state(r->p->metrics, METRICS_STATE_STREAMING, NULL);
	return OUTCOME_OK;
}

/* Ends the session @o ended it with: a stop ends the stream in order. */
static void
session_close(struct session *s, enum outcome o)
{
	/*
	 * Purged records report failures; the session already knows why it ends. A stop or a halt
	 * flushed already (shutdown_flush); a restart lets what is in flight be acknowledged first.
	 */
	publish_free(s->pub, o == OUTCOME_RESTART ? PUBLISH_END_RESTART : PUBLISH_END_FINAL);
	s->pub = NULL;
	pgstream_free(s->conn, o == OUTCOME_STOP);
	s->conn = NULL;
	cleanup_close(&s->cl);
	sqlq_fini(&s->q);
	PQfinish(s->sql);
	s->sql = NULL;
	stream_free(s->st);
	s->st = NULL;
	heartbeat_fini(&s->hb);
}

/* Status updates and the probe (feedback.h). */
static enum outcome
feedback(struct session *s, int64_t now)
{
	struct acktrack *at = stream_acktrack(s->st);
	struct feedback_view v = { .conn = s->conn,
				   .received = acktrack_received(at),
				   .confirmed = acktrack_confirmed(at),
				   .asked = stream_reply_wanted(s->st),
				   .paused = publish_waiting(s->pub) };

	return feedback_turn(&s->fb, &s->dl, &v, s->r->p->metrics, now, s->why, sizeof(s->why));
}

/*
 * Reads a bounded batch of frames (nothing while a record waits for queue space). @ret_drained:
 * it read everything the server had sent; @ret_received: it read at least one frame.
 */
static enum outcome
read_batch(struct session *s, bool *ret_drained, bool *ret_received)
{
	enum pgstream_failure f = PGSTREAM_TRANSIENT;
	struct pgstream_frame frame;
	enum outcome o = OUTCOME_OK;
	bool got = false;
	char err[512];

	for (int i = 0;
	     i < READ_BATCH && !publish_waiting(s->pub) && o == OUTCOME_OK && !s->r->loop->stopping;
	     i++) {
		int rc = pgstream_read(s->conn, &frame, &f, err, sizeof(err));

		if (rc == 0) {
			*ret_drained = true;
			break;
		}
		if (rc == -EPROTO) {
			errbuf_set(s->why, sizeof(s->why), "malformed replication data: %s", err);
			return OUTCOME_HALT;
		}
		if (rc < 0) {
			errbuf_set(s->why, sizeof(s->why), "%s", err);
			return f == PGSTREAM_PRECONDITION ? OUTCOME_PRECONDITION : OUTCOME_RESTART;
		}
		got = true;
		o = stream_on_frame(s->st, s->pub, &frame, s->why, sizeof(s->why));
	}
	*ret_received = got;
	if (got) {
		/* once per batch: a clock read per frame was 3 per single-row transaction */
		feedback_received(&s->fb, &s->dl, now_monotonic_us());
	}
	return o;
}

/* What the send-at-once and read-pause rules look at (sendnow.h), at @now. */
static struct sendnow_view
view(struct session *s, bool drained, bool received, int64_t now)
{
	uint64_t published, delivered;
	struct sendnow_view v = {
		.now_us = now,
		.wall_us = now_unix_us(),
		.committed_us = stream_commit_time(s->st),
		.window_us = s->r->cfg->send_at_once_ms * 1000,
		.drained = drained,
		.received = received,
		.waiting = publish_waiting(s->pub),
		.due = loop_due(&s->dl, LOOP_SEND, now),
	};

	stream_counts(s->st, &published, &delivered);
	v.produced = published;
	return v;
}

/* Send at once while live (sendnow.h). */
static void
send_now(struct session *s, const struct sendnow_view *v)
{
	int64_t at = 0;

	switch (sendnow_decide(&s->sn, v, &at)) {
	case SENDNOW_KEEP: return;
	case SENDNOW_LATER: loop_arm(&s->dl, LOOP_SEND, at); return;
	case SENDNOW_IDLE: loop_arm(&s->dl, LOOP_SEND, 0); return;
	case SENDNOW_SEND:
		loop_arm(&s->dl, LOOP_SEND, 0);
		(void)publish_flush(s->pub, SEND_NOW_MS);
		return;
	}
}

/* Delivery reports, producer health, and the waiting record's retry. */
static enum outcome
serve_producer(struct session *s)
{
	char fatal[512];
	enum outcome o = publish_serve(s->pub, fatal, sizeof(fatal));

	/* a refusal no restart can cure (a topic nobody creates) fails its record too: said as
	 * what it is, exit 2, not as a failed delivery that restarts the session */
	if (o != OUTCOME_PRECONDITION && stream_failed(s->st, s->why, sizeof(s->why))) {
		return OUTCOME_RESTART;
	}
	if (o != OUTCOME_OK) {
		errbuf_set(s->why, sizeof(s->why), "%s", fatal);
		return o;
	}
	o = publish_retry(s->pub, s->why, sizeof(s->why));
	loop_arm(&s->dl, LOOP_RETRY, publish_waiting(s->pub) ? now_monotonic_us() + RETRY_US : 0);
	return o;
}

/* One turn of the main loop. */
static enum outcome
turn(struct session *s)
{
	struct loop_wait w = {
		.source_fd = pgstream_fd(s->conn),
		/* backpressure, or a pause while behind: leave the data unread */
		.source_read = !publish_waiting(s->pub) && !loop_armed(&s->dl, LOOP_READ),
		.source_write = pgstream_wants_write(s->conn),
		/* backpressure: a hang-up must not wait until reading resumes */
		.source_hangup = publish_waiting(s->pub),
		.wake_fd = publish_wake_fd(s->pub),
		.deadlines = &s->dl,
		.max_us = TICK_US,
	};
	struct sendnow_view v;
	enum outcome o;
	bool drained = false, received = false, reads;
	int64_t now;

	if (loop_wait(s->r->loop, &w, s->why, sizeof(s->why)) < 0) {
		return OUTCOME_HALT;
	}
	if (w.source_closed && !s->r->loop->stopping) {
		return feedback_closed(&s->fb, s->conn, now_monotonic_us(), s->why, sizeof(s->why));
	}
	reads = !loop_armed(&s->dl, LOOP_READ) || loop_due(&s->dl, LOOP_READ, now_monotonic_us());
	if ((o = serve_producer(s)) != OUTCOME_OK) {
		return o;
	}
	if (reads) {
		if ((o = read_batch(s, &drained, &received)) != OUTCOME_OK) {
			return o;
		}
	}
	v = view(s, drained, received, now_monotonic_us());
	send_now(s, &v);
	if (reads) {
		loop_arm(&s->dl, LOOP_READ, sendnow_read_at(&v, s->r->cfg->read_pause_ms * 1000));
	}
	if ((o = serve_producer(s)) != OUTCOME_OK) {
		return o;
	}
	now = now_monotonic_us();
	if ((o = relay_jobs_turn(s)) != OUTCOME_OK) {
		return o;
	}
	return feedback(s, now);
}

/* SIGTERM: stop reading, flush for a bounded time, confirm what is acknowledged. */
static void
shutdown_flush(struct session *s)
{
	const struct config *cfg = s->r->cfg;
	struct acktrack *at = stream_acktrack(s->st);
	uint64_t published, delivered;
	char lsn[LSN_STRLEN], err[512];

	failpoint_hit(FAILPOINT_SHUTDOWN_FLUSH);
	if (publish_flush(s->pub, cfg->shutdown_flush_ms) < 0) {
		log_warn(MOD,
			 "%d records still unacknowledged after %lld ms; they stay unconfirmed "
			 "and are sent again at the next start",
			 publish_queue_len(s->pub), (long long)cfg->shutdown_flush_ms);
	}
	if (pgstream_send_status(s->conn, acktrack_received(at), acktrack_confirmed(at), false, err,
				 sizeof(err)) < 0) {
		log_warn(MOD, "final status update failed: %s; the slot resumes from the last one",
			 err);
		return;
	}
	stream_counts(s->st, &published, &delivered);
	log_info(MOD, "stopped: %llu records published, %llu acknowledged, confirmed %s",
		 (unsigned long long)published, (unsigned long long)delivered,
		 lsn_format(acktrack_confirmed(at), lsn));
}

static enum outcome
session_run(struct relay *r, struct session *s)
{
	enum outcome o = session_open(r, s);

	while (o == OUTCOME_OK && !r->loop->stopping) {
		o = turn(s);
	}
	if (o == OUTCOME_OK && r->loop->stopping) {
		metrics_set_state(r->p->metrics, METRICS_STATE_STOPPING, NULL);
		shutdown_flush(s);
		o = OUTCOME_STOP;
	} else if ((o == OUTCOME_HALT || (o == OUTCOME_PRECONDITION && s->type_refused)) &&
		   s->pub && s->conn) {
		/*
		 * What was produced before the row that halts (or the Relation message refused) is
		 * delivered and confirmed, as Debezium's producer sends the records before the one
		 * its task fails on.
		 */
		shutdown_flush(s);
	}
	return o;
}

/*
 * What a failed session leaves for the halt counter: the transaction and record the broker (or
 * the producer) refused. A restart for any other reason (a cut connection, a server restart)
 * concerns no transaction and starts the count over.
 */
static void
note_failure(struct relay *r, struct session *s)
{
	struct failing *f = &r->fail;
	const char *id = NULL, *reason = NULL;
	uint64_t token = 0;
	lsn_t at = 0;

	if (s->pub) {
		publish_collect_failures(s->pub);
		if (publish_culprit(s->pub, &token, &id, &reason)) {
			at = s->st ? acktrack_txn_lsn(stream_acktrack(s->st), token) : 0;
			if (!at) {
				at = publish_produce_failed_lsn(s->pub);
			}
			/* the reason of the record to blame, not of the first report */
			errbuf_set(s->why, sizeof(s->why), "%s", reason);
		}
	}
	f->lsn = at;
	snprintf(f->id, sizeof(f->id), "%s", id ? id : "(no id header)");
}

/*
 * After outboxd.halt.after.failures restarts in a row on one transaction (the supervisor's
 * verdict): with a dead-letter topic the refused row goes there on the next replay (once), else
 * a halt naming the row.
 */
static bool
should_halt(struct relay *r, const char *why)
{
	struct failing *f = &r->fail;
	char lsn[LSN_STRLEN], row[LSN_STRLEN + sizeof(f->id) + 1];
	int64_t count = 0;

	lsn_format(f->lsn, lsn);
	snprintf(row, sizeof(row), "%s %s", lsn, f->id);
	switch (supervise_failed(&r->sv, f->lsn ? lsn : NULL, row, &count)) {
	case SUPERVISE_RETRY: return false;
	case SUPERVISE_DEAD_LETTER:
		log_fields(LOG_WARN, MOD,
			   (const struct log_field[]){ { "row_id", f->id },
						       { "position", lsn },
						       { "topic", r->cfg->dlq_topic } },
			   3,
			   "row id=%s committing at %s failed %lld restarts in a row (%s); it goes "
			   "to the dead-letter topic %s on the next replay",
			   f->id, lsn, (long long)count, why, r->cfg->dlq_topic);
		f->dead_lettered_lsn = f->lsn;
		snprintf(f->dead_lettered_id, sizeof(f->dead_lettered_id), "%s", f->id);
		snprintf(r->poison_reason, sizeof(r->poison_reason), "%s", why);
		return false;
	case SUPERVISE_HALT:
	default: break;
	}
	log_fields(LOG_ERROR, MOD,
		   (const struct log_field[]){ { "row_id", f->id }, { "position", lsn } }, 2,
		   "halt: row id=%s committing at %s failed %lld restarts in a row: %s; nothing "
		   "from that transaction on is confirmed; fix the cause and start outboxd again",
		   f->id, lsn, (long long)count, why);
	return true;
}

/* The halt's one line; the row's id and position as fields when a row halted. Return: why. */
static enum metrics_halt_reason
log_halt(struct session *s)
{
	const char *id = NULL;
	lsn_t lsn = 0;
	char at[LSN_STRLEN];

	if (publish_halted_row(s->pub, &id, &lsn)) {
		log_fields(LOG_ERROR, MOD,
			   (const struct log_field[]){ { "row_id", id },
						       { "position", lsn_format(lsn, at) } },
			   2, "%s", s->why);
		return METRICS_HALT_POISON_ROW;
	}
	log_error(MOD, "%s", s->why);
	return METRICS_HALT_INVALID_CHANGE;
}

/* The settings of the modules a session wires, once per process. */
static void
relay_init(struct relay *r, const struct relay_params *p, struct loop *loop)
{
	const struct config *cfg = p->cfg;

	*r = (struct relay){ .p = p, .cfg = cfg, .loop = loop };
	supervise_init(&r->sv, cfg->restart_backoff_max_ms, cfg->halt_after_failures,
		       cfg->dlq_topic != NULL);
	r->sp = (struct stream_params){ .router = p->router,
					.metrics = p->metrics,
					.dbname = kv_get(&cfg->pg_conn, "dbname"),
					.facts = column_facts,
					.facts_opaque = &r->s };
	r->pp = (struct publish_params){ .sink = sinks_choose(cfg),
					 .router = p->router,
					 .dlq_topic = cfg->dlq_topic,
					 .metrics = p->metrics };
	r->hp = (struct heartbeat_params){ .router = p->router,
					   .topic = cfg->heartbeat_topic,
					   .query = cfg->heartbeat_action_query,
					   .metrics = p->metrics };
	slotwatch_init(&r->sw, cfg->slot_name, p->metrics);
	r->clp = (struct cleanup_params){ .retention = cfg->cleanup_retention,
					  .created = cfg->cleanup_created_column,
					  .interval_ms = cfg->cleanup_interval_ms,
					  .batch = cfg->cleanup_batch_size,
					  .slot = cfg->slot_name,
					  .partitions = cfg->cleanup_partitions,
					  .metrics = p->metrics };
}

enum relay_exit
relay_run(const struct relay_params *p, struct loop *loop)
{
	struct relay r;
	enum relay_exit ret = RELAY_EXIT_CLEAN;
	enum metrics_halt_reason halt_reason = METRICS_HALT_INVALID_CHANGE;
	int64_t backoff = 0;

	relay_init(&r, p, loop);
	for (;;) {
		int64_t started = now_monotonic_us();
		enum outcome o = session_run(&r, &r.s);

		if (o == OUTCOME_RESTART) {
			note_failure(&r, &r.s);
			backoff = supervise_wait_ms(&r.sv, now_monotonic_us() - started);
			/* before session_close(), whose discard of the producer may wait */
			log_warn(MOD, "%s; restarting from the slot in %lld ms", r.s.why,
				 (long long)backoff);
		}
		if (o == OUTCOME_HALT) {
			halt_reason = log_halt(&r.s);
		}
		session_close(&r.s, o);
		if (o == OUTCOME_STOP) {
			break;
		}
		if (o == OUTCOME_PRECONDITION) {
			log_error(MOD, "%s", r.s.why);
		}
		if (o == OUTCOME_PRECONDITION || o == OUTCOME_HALT) {
			metrics_halted(p->metrics,
				       o == OUTCOME_HALT ? halt_reason : METRICS_HALT_PRECONDITION,
				       r.s.why);
			ret = o == OUTCOME_HALT ? RELAY_EXIT_HALT : RELAY_EXIT_PRECONDITION;
			break;
		}
		if (should_halt(&r, r.s.why)) {
			metrics_halted(p->metrics, METRICS_HALT_DELIVERY_REFUSED, r.s.why);
			ret = RELAY_EXIT_HALT;
			break;
		}
		metrics_set_state(p->metrics, METRICS_STATE_RESTARTING, r.s.why);
		metrics_count(p->metrics, METRICS_PIPELINE_RESTARTS, 1);
		if (!loop_sleep(loop, backoff)) {
			break;
		}
	}
	return ret;
}
