/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/run/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "outboxd/run/acktrack.h"
#include "outboxd/util/failpoint.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "outboxd/pg/pgconn.h"
#include "outboxd/pg/pgoutput.h"
#include "outboxd/pg/pgsql.h"
#include "outboxd/pg/pgstream.h"
#include "outboxd/run/producer.h"
#include "outboxd/pg/relcache.h"

#include "relay_int.h"

#define MOD "relay"

/* Messages read per turn, so delivery reports and status updates are served during a backlog. */
#define READ_BATCH 2000
/* Silence from the server after which a status update asks for a reply (the liveness probe). */
#define PROBE_AFTER_US (INT64_C(20) * 1000000)
/* No reply within this after a probe: the server or the path to it is dead. */
#define PROBE_DEADLINE_US (INT64_C(15) * 1000000)

int64_t
relay_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void
relinfo_free(void *user)
{
	struct relinfo *ri = user;

	if (ri) {
		free(ri->notnull);
		pgsql_defaults_free(ri->defaults, ri->ncols);
		free(ri);
	}
}

static void
on_delivery(void *opaque, void *msg_opaque, bool ok, const char *reason)
{
	struct session *s = opaque;
	uint64_t seq = (uint64_t)(uintptr_t)msg_opaque;

	/* Reports of rows purged by an earlier session are unknown to this acktrack: ignored. */
	if (s->closing || acktrack_row_delivered(s->at, seq, ok) < 0) {
		return;
	}
	if (ok) {
		s->delivered++;
		s->last_ack_us = relay_now_us();
		metrics_count(s->p->metrics, METRICS_RECORDS_ACKNOWLEDGED, 1);
		failpoint_hit(FAILPOINT_AFTER_DELIVERY);
	} else if (!s->delivery_failed) {
		s->delivery_failed = true;
		snprintf(s->why, sizeof(s->why), "delivery failed: %s", reason ? reason : "unknown");
	}
}

/* Checks the preconditions on the ordinary connection; returns the slot's confirmed LSN. */
static enum outcome
check_preconditions(struct session *s, lsn_t *ret_confirmed)
{
	struct pgsql_slot slot;
	struct pgsql_pubtable *tables = NULL;
	int n = 0, selected = 0, rc;

	if (pgsql_check_role(s->sql, s->why, sizeof(s->why)) < 0 ||
	    (rc = pgsql_check_slot(s->sql, s->p->slot, &slot, s->why, sizeof(s->why))) == -EIO) {
		return OUT_PRECONDITION;
	}
	if (rc < 0) {
		return OUT_PRECONDITION;
	}
	if (pgsql_publication_tables(s->sql, s->p->publication, &tables, &n, s->why,
				     sizeof(s->why)) < 0) {
		return OUT_PRECONDITION;
	}
	for (int i = 0; i < n; i++) {
		selected += router_selects(s->p->router, tables[i].schema, tables[i].table);
	}
	pgsql_pubtables_free(tables, n);
	if (selected == 0) {
		snprintf(s->why, sizeof(s->why),
			 "publication \"%s\" holds no table that table.include.list selects; add the "
			 "outbox table to it (ALTER PUBLICATION %s ADD TABLE ...) or fix "
			 "table.include.list",
			 s->p->publication, s->p->publication);
		return OUT_PRECONDITION;
	}
	*ret_confirmed = slot.confirmed_flush;
	return OUT_OK;
}

static void on_signal(struct session *s);

/*
 * Starts streaming, retrying "slot is active for PID" as slot.max.retries allows: after a crash
 * the old walsender may hold the slot until it notices the dead connection. When the retries
 * run out another client really streams from the slot, which is the operator's to fix.
 */
static enum outcome
start_stream(struct session *s)
{
	enum pgstream_failure f = PGSTREAM_TRANSIENT;
	char busy[sizeof(s->why)];

	failpoint_hit(FAILPOINT_BEFORE_START_REPLICATION);
	for (int attempt = 0;; attempt++) {
		struct pollfd pfd = { .fd = s->signal_fd, .events = POLLIN };

		if (pgstream_start(s->p->pg, s->p->slot, s->p->publication, &s->stream, &f, s->why,
				   sizeof(s->why)) == 0) {
			return OUT_OK;
		}
		if (f != PGSTREAM_SLOT_BUSY) {
			return f == PGSTREAM_PRECONDITION ? OUT_PRECONDITION : OUT_RESTART;
		}
		if (attempt >= s->p->slot_max_retries) {
			snprintf(busy, sizeof(busy), "%s", s->why);
			snprintf(s->why, sizeof(s->why), "%.1500s (still after %d retries, "
				 "slot.max.retries); another client streams from this slot: stop it, or "
				 "give outboxd a slot of its own", busy, attempt);
			return OUT_PRECONDITION;
		}
		log_warn(MOD, "%s; retrying in %lld ms (%d of %d)", s->why,
			 (long long)s->p->slot_retry_delay_ms, attempt + 1, s->p->slot_max_retries);
		if (poll(&pfd, 1, (int)s->p->slot_retry_delay_ms) > 0) {
			on_signal(s);
		}
		if (s->stopping) {
			return OUT_STOP;
		}
	}
}

/* Opens everything one session needs. */
static enum outcome
session_open(struct session *s)
{
	enum pgconn_failure cf = PGCONN_TRANSIENT;
	lsn_t confirmed = 0;
	enum outcome o;
	char at[LSN_STRLEN];

	s->why[0] = '\0';
	s->cur_final_lsn = 0;
	metrics_set_state(s->p->metrics, METRICS_STATE_STARTING, NULL);
	if (pgconn_open(s->p->pg, false, &s->sql, &cf, s->why, sizeof(s->why)) < 0) {
		return cf == PGCONN_PRECONDITION ? OUT_PRECONDITION : OUT_RESTART;
	}
	if (pgconn_run_statements(s->sql, s->p->initial_statements, s->why, sizeof(s->why)) < 0) {
		return OUT_PRECONDITION;
	}
	if ((o = check_preconditions(s, &confirmed)) != OUT_OK) {
		return o;
	}
	if (pipe2(s->wake, O_NONBLOCK | O_CLOEXEC) < 0) {
		snprintf(s->why, sizeof(s->why), "pipe: %s", strerror(errno));
		return OUT_HALT;
	}
	if (producer_new(s->p->producer, s->wake[1], on_delivery, s, &s->prod, s->why,
			 sizeof(s->why)) < 0) {
		return OUT_PRECONDITION;
	}
	s->at = acktrack_new(confirmed);
	s->rc = relcache_new();
	pgoutput_decoder_init(&s->dec, 1);
	if ((o = start_stream(s)) != OUT_OK) {
		return o;
	}
	s->last_flush_sent = confirmed;
	s->last_rx_us = relay_now_us();
	s->next_status_us = s->last_rx_us;
	log_info(MOD, "streaming slot \"%s\" from its confirmed_flush_lsn %s", s->p->slot,
		 lsn_format(confirmed, at));
	s->last_ack_us = s->last_rx_us;
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		s->started_unix_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
		s->commit_time_us = 0;
	}
	s->next_heartbeat_us = s->last_rx_us + s->p->heartbeat_interval_ms * 1000;
	metrics_set_state(s->p->metrics, METRICS_STATE_STREAMING, NULL);
	return OUT_OK;
}

static void
session_close(struct session *s, bool orderly)
{
	/* Purged records report failures; the session already knows why it ends. */
	s->closing = true;
	producer_free(s->prod);
	s->prod = NULL;
	pgstream_free(s->stream, orderly);
	s->stream = NULL;
	PQfinish(s->sql);
	s->sql = NULL;
	acktrack_free(s->at);
	s->at = NULL;
	relcache_free(s->rc, relinfo_free);
	s->rc = NULL;
	pgoutput_decoder_fini(&s->dec);
	for (int i = 0; i < 2; i++) {
		if (s->wake[i] > 0) {
			close(s->wake[i]);
		}
		s->wake[i] = -1;
	}
	s->pending = false;
	s->cur_seq = 0;
	s->delivery_failed = false;
	s->closing = false;
	s->hb_query_busy = false;
	s->nontx_end = 0;
	s->last_commit_lsn = 0;
}

/* A Relation message: cache it and decide once whether its rows are outbox rows. */
static enum outcome
on_relation(struct session *s, const struct pgoutput_msg *m)
{
	const struct relcache_rel *rel = relcache_apply(s->rc, m, relinfo_free);
	struct relinfo *ri = znew(*ri);
	const char **names;
	int rc;

	ri->selected = router_selects(s->p->router, rel->nspname, rel->relname);
	((struct relcache_rel *)rel)->user = ri;
	if (!ri->selected) {
		return OUT_OK;
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
	rc = pgsql_column_facts(s->sql, rel->nspname, rel->relname, names, rel->ncols,
				&ri->notnull, &ri->defaults, s->why, sizeof(s->why));
	free(names);
	if (rc < 0) {
		return OUT_RESTART;
	}
	ri->ncols = rel->ncols;
	log_info(MOD, "outbox table %s.%s (relid %u, %d columns)", rel->nspname, rel->relname,
		 rel->relid, rel->ncols);
	return OUT_OK;
}

/* Names the row and its transaction in a halt message. */
static void
halt_row(struct session *s, const char *id, const char *reason)
{
	char lsn[LSN_STRLEN];

	snprintf(s->why, sizeof(s->why), "halt: row id=%.100s committing at %s: %.1800s", id,
		 lsn_format(s->cur_final_lsn, lsn), reason);
}

/* The routed record's "id" header as text (the row id under SimpleHeaderConverter). */
static const char *
record_id(const struct router_record *r)
{
	for (size_t i = 0; i < r->nheaders; i++) {
		if (strcmp(buf_cstr(&r->headers[i].name), "id") == 0 && !r->headers[i].null) {
			return buf_cstr(&r->headers[i].value);
		}
	}
	return "(unknown)";
}

/* Hands the routed record to the producer; on a full queue keeps it and pauses reading. */
enum outcome
relay_produce(struct session *s, uint64_t seq)
{
	const struct router_record *r = &s->rec;
	struct producer_record pr = router_record_view(r, &s->hdrs, &s->hdrs_cap);
	char err[512];
	int rc;

	rc = producer_send(s->prod, &pr, (void *)(uintptr_t)seq, err, sizeof(err));
	if (rc == 0) {
		int64_t now = relay_now_us();

		if (acktrack_in_flight(s->at) == 0) {
			s->last_ack_us = now; /* waiting starts now, not at the last report */
		}
		s->pending = false;
		s->published++;
		(void)acktrack_row_produced(s->at, seq, now);
		metrics_count(s->p->metrics, METRICS_RECORDS_PUBLISHED, 1);
		if (s->nontx_end) {
			/* a non-transactional message is its own transaction, ending at its LSN */
			(void)acktrack_commit(s->at, s->nontx_end, s->nontx_end);
			s->nontx_end = 0;
		}
		failpoint_hit(FAILPOINT_AFTER_PRODUCE);
		if (s->cur_seq) {
			failpoint_hit(FAILPOINT_MID_TRANSACTION);
		}
		return OUT_OK;
	}
	if (rc == -EAGAIN) {
		s->pending = true;
		s->pending_seq = seq;
		return OUT_OK;
	}
	if (rc == -EMSGSIZE) {
		snprintf(err, sizeof(err), "the record for topic %s is larger than message.max.bytes "
			 "(%lld); raise producer.max.request.size and the topic's max.message.bytes",
			 pr.topic, (long long)producer_max_message_bytes(s->prod));
		if (s->p->dlq_topic && s->cur_tup && strcmp(pr.topic, s->p->dlq_topic) != 0) {
			return relay_events_dead_letter(s, err, false);
		}
		halt_row(s, record_id(r), err);
		return OUT_HALT;
	}
	snprintf(s->why, sizeof(s->why), "produce to %s failed: %s", pr.topic, err);
	return OUT_RESTART;
}

static enum outcome
halt_on(struct session *s, const struct relcache_rel *rel, const struct pgoutput_tuple *tup,
	const char *reason)
{
	struct buf id = BUF_INIT;

	router_row_id(s->p->router, rel, tup, &id);
	halt_row(s, buf_cstr(&id), reason);
	buf_fini(&id);
	return OUT_HALT;
}

/* An Insert, Update or Delete on a relation. */
static enum outcome
on_row(struct session *s, char op, uint32_t relid, const struct pgoutput_tuple *tup)
{
	struct relcache_rel *rel = relcache_get(s->rc, relid);
	struct relinfo *ri;
	enum router_verdict v = ROUTER_DROP;
	enum outcome o;
	char err[1024] = "";

	if (!rel) {
		snprintf(s->why, sizeof(s->why), "protocol: a row for relation %u came before its "
			 "Relation message", relid);
		return OUT_RESTART;
	}
	ri = rel->user;
	if (!ri || !ri->selected) {
		metrics_skipped(s->p->metrics, METRICS_SKIP_OTHER_TABLE);
		return OUT_OK;
	}
	if (op == 'D') {
		metrics_skipped(s->p->metrics, METRICS_SKIP_DELETE);
		return OUT_OK;
	}
	if (router_route(s->p->router, rel, ri->notnull, (const char *const *)ri->defaults, op, tup,
			 &s->rec, &v, err, sizeof(err)) < 0) {
		return halt_on(s, rel, tup, err);
	}
	s->cur_rel = rel;
	s->cur_ri = ri;
	s->cur_tup = tup;
	switch (v) {
	case ROUTER_PUBLISH:
		o = relay_produce(s, s->cur_seq);
		s->cur_tup = NULL;
		return o;
	case ROUTER_POISON:
		o = s->p->dlq_topic ? relay_events_dead_letter(s, err, true) : halt_on(s, rel, tup, err);
		s->cur_tup = NULL;
		return o;
	case ROUTER_DROP:
		return OUT_OK;
	case ROUTER_DROP_WARN:
		log_warn(MOD, "%s", err);
		metrics_skipped(s->p->metrics, METRICS_SKIP_UPDATE);
		return OUT_OK;
	case ROUTER_DROP_ERROR:
		log_error(MOD, "%s", err);
		metrics_skipped(s->p->metrics, METRICS_SKIP_UPDATE);
		return OUT_OK;
	case ROUTER_HALT:
	default:
		return halt_on(s, rel, tup, err);
	}
}

/* Truncates publish nothing (Debezium drops them); counted when they hit an outbox table. */
static void
on_truncate(struct session *s, const struct pgoutput_msg *m)
{
	for (int i = 0; i < m->u.truncate.nrels; i++) {
		struct relcache_rel *rel = relcache_get(s->rc, m->u.truncate.relids[i]);
		struct relinfo *ri = rel ? rel->user : NULL;

		if (ri && ri->selected) {
			metrics_skipped(s->p->metrics, METRICS_SKIP_TRUNCATE);
		}
	}
}

static enum outcome
unexpected(struct session *s, const struct pgoutput_msg *m)
{
	snprintf(s->why, sizeof(s->why), "unexpected pgoutput message '%c' (streaming, two-phase "
		 "and logical messages are off); check that no other client shares the slot",
		 (char)m->type);
	return OUT_HALT;
}

static enum outcome
on_message(struct session *s, const struct pgoutput_msg *m)
{
	switch (m->type) {
	case PGOUTPUT_MSG_BEGIN:
		s->cur_seq = acktrack_begin(s->at, m->u.begin.final_lsn);
		s->cur_final_lsn = m->u.begin.final_lsn;
		s->cur_xid = m->xid;
		s->commit_time_us = m->u.begin.commit_time + PG_EPOCH_US;
		if (!s->cur_seq) {
			snprintf(s->why, sizeof(s->why), "protocol: Begin inside a transaction");
			return OUT_RESTART;
		}
		failpoint_hit(FAILPOINT_AFTER_BEGIN);
		return OUT_OK;
	case PGOUTPUT_MSG_COMMIT:
		if (acktrack_commit(s->at, m->u.commit.commit_lsn, m->u.commit.end_lsn) < 0) {
			snprintf(s->why, sizeof(s->why), "protocol: Commit outside a transaction");
			return OUT_RESTART;
		}
		s->cur_seq = 0;
		s->last_commit_lsn = m->u.commit.end_lsn;
		metrics_count(s->p->metrics, METRICS_TRANSACTIONS, 1);
		return OUT_OK;
	case PGOUTPUT_MSG_RELATION:
		return on_relation(s, m);
	case PGOUTPUT_MSG_INSERT:
		return on_row(s, 'I', m->u.insert.relid, &m->u.insert.newtup);
	case PGOUTPUT_MSG_UPDATE:
		return on_row(s, 'U', m->u.update.relid, &m->u.update.newtup);
	case PGOUTPUT_MSG_DELETE:
		/* Deletes publish nothing (Debezium drops them). */
		return on_row(s, 'D', m->u.del.relid, NULL);
	case PGOUTPUT_MSG_TRUNCATE:
		on_truncate(s, m);
		return OUT_OK;
	case PGOUTPUT_MSG_MESSAGE:
		return relay_events_message(s, m);
	case PGOUTPUT_MSG_TYPE:
	case PGOUTPUT_MSG_ORIGIN:
		/* Y and O carry nothing the router uses. */
		return OUT_OK;
	default:
		return unexpected(s, m);
	}
}

/* One CopyData payload from the walsender. */
static enum outcome
on_copydata(struct session *s, const uint8_t *buf, size_t len)
{
	struct pgoutput_frame f;
	struct pgoutput_msg m;
	char err[512];

	if (pgoutput_frame_decode(buf, len, &f, err, sizeof(err)) < 0 ||
	    (f.kind == PGOUTPUT_FRAME_XLOGDATA &&
	     pgoutput_decode(&s->dec, f.data, f.data_len, &m, err, sizeof(err)) < 0)) {
		snprintf(s->why, sizeof(s->why), "malformed replication data: %s", err);
		return OUT_HALT;
	}
	if (f.kind == PGOUTPUT_FRAME_KEEPALIVE) {
		/* acktrack applies walEnd only between transactions with nothing in flight. */
		if (!s->cur_seq) {
			acktrack_keepalive(s->at, f.wal_end);
		}
		if (f.reply_requested) {
			s->status_now = true;
		}
		return OUT_OK;
	}
	return on_message(s, &m);
}

/* Sends a status update when due, asked for, or when the confirmable LSN moved. */
static enum outcome
maybe_send_status(struct session *s, int64_t now)
{
	lsn_t flush = acktrack_confirmed(s->at);
	bool probe = false;

	if (!s->probe_deadline_us && now - s->last_rx_us > PROBE_AFTER_US) {
		probe = true;
		s->probe_deadline_us = now + PROBE_DEADLINE_US;
	}
	if (!s->status_now && !probe && now < s->next_status_us && flush == s->last_flush_sent) {
		return OUT_OK;
	}
	if (pgstream_send_status(s->stream, acktrack_received(s->at), flush, probe, s->why,
				 sizeof(s->why)) < 0) {
		return OUT_RESTART;
	}
	s->last_flush_sent = flush;
	s->status_now = false;
	metrics_count(s->p->metrics, METRICS_STATUS_UPDATES, 1);
	failpoint_hit(FAILPOINT_AFTER_STATUS);
	s->next_status_us = now + s->p->status_interval_ms * 1000;
	return OUT_OK;
}

/* Reads a bounded batch from the walsender (nothing while a record waits for queue space). */
static enum outcome
read_batch(struct session *s)
{
	enum pgstream_failure f = PGSTREAM_TRANSIENT;
	const uint8_t *buf;
	size_t len;
	enum outcome o = OUT_OK;

	for (int i = 0; i < READ_BATCH && !s->pending && o == OUT_OK && !s->stopping; i++) {
		int rc = pgstream_read(s->stream, &buf, &len, &f, s->why, sizeof(s->why));

		if (rc == 0) {
			break;
		}
		if (rc < 0) {
			return f == PGSTREAM_PRECONDITION ? OUT_PRECONDITION : OUT_RESTART;
		}
		s->last_rx_us = relay_now_us();
		s->probe_deadline_us = 0;
		o = on_copydata(s, buf, len);
	}
	return o;
}

static void
drain_fd(int fd)
{
	char b[256];

	while (read(fd, b, sizeof(b)) > 0) {
	}
}

/* Signals: SIGTERM/SIGINT stop, SIGHUP is logged and ignored (no reload). */
static void
on_signal(struct session *s)
{
	struct signalfd_siginfo si;

	while (read(s->signal_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			log_info(MOD, "SIGHUP ignored: outboxd does not reload its configuration; "
				 "restart it to apply changes");
		} else if (!s->stopping) {
			log_info(MOD, "%s: stopping", strsignal((int)si.ssi_signo));
			s->stopping = true;
		}
	}
}

/* Delivery reports, producer health, and the pending record's retry. */
static enum outcome
serve_producer(struct session *s)
{
	char err[512];

	drain_fd(s->wake[0]);
	producer_poll(s->prod);
	if (s->delivery_failed) {
		return OUT_RESTART;
	}
	if (producer_fatal(s->prod, err, sizeof(err))) {
		snprintf(s->why, sizeof(s->why), "fatal producer error: %s", err);
		return OUT_RESTART;
	}
	if (s->pending) {
		return relay_produce(s, s->pending_seq);
	}
	return OUT_OK;
}

static int
poll_timeout_ms(const struct session *s, int64_t now)
{
	int64_t until = s->next_status_us - now;

	if (s->probe_deadline_us && s->probe_deadline_us - now < until) {
		until = s->probe_deadline_us - now;
	}
	if (s->pending && until > 100000) {
		until = 100000; /* retry the waiting record at least every 100 ms */
	}
	if (s->p->heartbeat_interval_ms && s->next_heartbeat_us - now < until) {
		until = s->next_heartbeat_us - now;
	}
	if (until > 1000000) {
		until = 1000000; /* the stall watchdog and the gauges look once a second */
	}
	return until <= 0 ? 0 : (int)(until / 1000) + 1;
}

/* One turn of the main loop. */
static enum outcome
turn(struct session *s)
{
	struct pollfd fds[3] = {
		{ .fd = pgstream_fd(s->stream), .events = POLLIN },
		{ .fd = s->wake[0], .events = POLLIN },
		{ .fd = s->signal_fd, .events = POLLIN },
	};
	int64_t now = relay_now_us();
	enum outcome o;

	if (s->pending) {
		fds[0].events = 0; /* backpressure: leave the data in the socket */
	}
	if (pgstream_wants_write(s->stream)) {
		fds[0].events |= POLLOUT;
	}
	if (poll(fds, 3, poll_timeout_ms(s, now)) < 0 && errno != EINTR) {
		snprintf(s->why, sizeof(s->why), "poll: %s", strerror(errno));
		return OUT_HALT;
	}
	if (fds[2].revents) {
		on_signal(s);
	}
	if ((o = serve_producer(s)) != OUT_OK || (o = read_batch(s)) != OUT_OK ||
	    (o = serve_producer(s)) != OUT_OK) {
		return o;
	}
	now = relay_now_us();
	if ((o = relay_events_heartbeat(s, now)) != OUT_OK) {
		return o;
	}
	relay_events_stall(s, now);
	relay_events_gauges(s);
	if (s->probe_deadline_us && now > s->probe_deadline_us) {
		snprintf(s->why, sizeof(s->why), "the server did not answer a status update asking "
			 "for a reply within %lld s; the connection is dead",
			 (long long)(PROBE_DEADLINE_US / 1000000));
		return OUT_RESTART;
	}
	return maybe_send_status(s, now);
}

/* SIGTERM: stop reading, flush for a bounded time, confirm what is acknowledged. */
static void
shutdown_flush(struct session *s)
{
	char lsn[LSN_STRLEN], err[512];
	int rc;

	failpoint_hit(FAILPOINT_SHUTDOWN_FLUSH);
	rc = producer_flush(s->prod, (int)s->p->shutdown_flush_ms);

	if (rc < 0) {
		log_warn(MOD, "%d records still unacknowledged after %lld ms; they stay unconfirmed "
			 "and are sent again at the next start", producer_queue_len(s->prod),
			 (long long)s->p->shutdown_flush_ms);
	}
	if (pgstream_send_status(s->stream, acktrack_received(s->at), acktrack_confirmed(s->at),
				 false, err, sizeof(err)) < 0) {
		log_warn(MOD, "final status update failed: %s; the slot resumes from the last one", err);
		return;
	}
	log_info(MOD, "stopped: %llu records published, %llu acknowledged, confirmed %s",
		 (unsigned long long)s->published, (unsigned long long)s->delivered,
		 lsn_format(acktrack_confirmed(s->at), lsn));
}

static enum outcome
session_run(struct session *s)
{
	enum outcome o = session_open(s);

	while (o == OUT_OK && !s->stopping) {
		o = turn(s);
	}
	if (o == OUT_OK && s->stopping) {
		metrics_set_state(s->p->metrics, METRICS_STATE_STOPPING, NULL);
		shutdown_flush(s);
		o = OUT_STOP;
	} else if (o == OUT_HALT && s->prod && s->stream) {
		/*
		 * What was produced before the row that halts is delivered and confirmed, as
		 * Debezium's producer sends the records before the one its task fails on.
		 */
		shutdown_flush(s);
	}
	return o;
}

static void
sleep_interruptible(struct session *s, int64_t ms)
{
	struct pollfd pfd = { .fd = s->signal_fd, .events = POLLIN };

	if (poll(&pfd, 1, (int)ms) > 0) {
		on_signal(s);
	}
}

/* Decides what follows a failed session: a restart after a backoff, or a halt. */
static bool
should_halt(const struct relay_params *p, lsn_t at, lsn_t *last_fail, int *same_fail)
{
	char lsn[LSN_STRLEN];

	*same_fail = at && at == *last_fail ? *same_fail + 1 : 1;
	*last_fail = at;
	if (!at || *same_fail < p->halt_after_failures) {
		return false;
	}
	log_error(MOD, "halt: the transaction committing at %s failed %d restarts in a row; fix "
		  "the cause above and start outboxd again", lsn_format(at, lsn), *same_fail);
	return true;
}

enum relay_exit
relay_run(const struct relay_params *p, int signal_fd)
{
	struct session s = { .p = p, .signal_fd = signal_fd, .wake = { -1, -1 } };
	enum relay_exit ret = RELAY_EXIT_CLEAN;
	int64_t backoff = 500;
	lsn_t last_fail = 0;
	int same_fail = 0;

	router_record_init(&s.rec);
	router_record_init(&s.hb);
	for (;;) {
		int64_t started = relay_now_us();
		enum outcome o = session_run(&s);
		/* The transaction a failure concerns: the open one, or the one whose delivery failed. */
		lsn_t at = s.cur_seq || s.delivery_failed ? s.cur_final_lsn : 0;

		session_close(&s, o == OUT_STOP);
		if (o == OUT_STOP) {
			break;
		}
		metrics_set_stalled(p->metrics, false, NULL);
		s.next_stall_warn_us = 0;
		if (o == OUT_PRECONDITION || o == OUT_HALT) {
			log_error(MOD, "%s", s.why);
			metrics_set_state(p->metrics, METRICS_STATE_HALTED, s.why);
			ret = o == OUT_HALT ? RELAY_EXIT_HALT : RELAY_EXIT_PRECONDITION;
			break;
		}
		log_warn(MOD, "%s; restarting from the slot in %lld ms", s.why, (long long)backoff);
		if (should_halt(p, at, &last_fail, &same_fail)) {
			metrics_set_state(p->metrics, METRICS_STATE_HALTED, s.why);
			ret = RELAY_EXIT_HALT;
			break;
		}
		metrics_set_state(p->metrics, METRICS_STATE_RESTARTING, s.why);
		metrics_count(p->metrics, METRICS_PIPELINE_RESTARTS, 1);
		sleep_interruptible(&s, backoff);
		if (s.stopping) {
			break;
		}
		/* A session that ran for a while starts the backoff over. */
		backoff = relay_now_us() - started > INT64_C(60) * 1000000 ? 500
			  : backoff * 2 > p->backoff_max_ms ? p->backoff_max_ms
							    : backoff * 2;
	}
	router_record_fini(&s.rec);
	router_record_fini(&s.hb);
	free(s.hdrs);
	return ret;
}
