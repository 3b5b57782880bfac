/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The relay's records that are not outbox rows, and its watchdogs: heartbeat records and
 * heartbeat.action.query, logical decoding messages, dead-letter records for poison rows, the
 * stall watchdog and the metrics gauges. They share the session with relay.c (relay_int.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "outboxd/run/acktrack.h"
#include "outboxd/util/log.h"
#include "outboxd/run/metrics.h"
#include "outboxd/pg/pgconn.h"
#include "outboxd/run/producer.h"
#include "outboxd/connect/router.h"

#include "relay_int.h"

#define MOD "relay"

/*
 * outboxd.errors.deadletterqueue.topic.name: the poison row goes to the dead-letter topic
 * instead of halting, and counts as delivered once that record is acknowledged.
 */
enum outcome
relay_events_dead_letter(struct session *s, const char *reason, bool keep_value)
{
	char lsn[LSN_STRLEN];
	struct router_dead_letter_info info = { .topic = s->p->dlq_topic, .reason = reason,
						.commit_lsn = lsn_format(s->cur_final_lsn, lsn),
						.keep_value = keep_value };
	struct buf id = BUF_INIT;

	router_row_id(s->p->router, s->cur_rel, s->cur_tup, &id);
	log_warn(MOD, "poison row id=%s committing at %s sent to dead-letter topic %s: %s",
		 buf_cstr(&id), lsn, s->p->dlq_topic, reason);
	buf_fini(&id);
	router_dead_letter(s->p->router, s->cur_rel, s->cur_ri->notnull,
			   (const char *const *)s->cur_ri->defaults, s->cur_tup, &info, &s->rec);
	return relay_produce(s, s->cur_seq);
}

/*
 * A logical decoding message (pg_logical_emit_message): Debezium publishes every one whose
 * prefix message.prefix.include/exclude.list select to <topic.prefix>.message, past the
 * EventRouter. A transactional one belongs to its transaction; a non-transactional one is
 * confirmed on its own, at its LSN, once delivered.
 */
enum outcome
relay_events_message(struct session *s, const struct pgoutput_msg *m)
{
	bool tx = m->u.message.flags & 1;
	struct router_message_info info = {
		.dbname = s->p->dbname, .commit_time_us = s->commit_time_us,
		.has_xid = tx, .xid = s->cur_xid,
		.has_last_commit = s->last_commit_lsn != 0, .last_commit_lsn = s->last_commit_lsn,
	};
	struct timespec ts;
	uint64_t seq = s->cur_seq;
	char err[512];

	if (!router_message_selected(s->p->router, m->u.message.prefix.p, m->u.message.prefix.len)) {
		return OUT_OK;
	}
	if (!tx) {
		/* Debezium counts a non-transactional message as its own commit before recording it */
		s->last_commit_lsn = m->u.message.lsn;
		info.has_last_commit = true;
		info.last_commit_lsn = m->u.message.lsn;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	info.now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	if (!info.commit_time_us) {
		/* no commit seen yet: Debezium's offset context carries the time it started */
		info.commit_time_us = s->started_unix_us;
	}
	if (router_message(s->p->router, m, &info, &s->rec, err, sizeof(err)) < 0) {
		snprintf(s->why, sizeof(s->why), "logical decoding message (prefix %.*s) at %X/%X: %s",
			 (int)m->u.message.prefix.len, m->u.message.prefix.p,
			 (unsigned)(m->u.message.lsn >> 32), (unsigned)m->u.message.lsn, err);
		return OUT_HALT;
	}
	if (!seq) {
		seq = acktrack_begin(s->at, m->u.message.lsn);
		s->nontx_end = m->u.message.lsn;
	}
	return relay_produce(s, seq);
}

/*
 * The stall watchdog: delivery timeouts are off (message.timeout.ms=0), so a stuck broker shows
 * only as records that wait without a delivery report. Warns, then every stall.warn.ms again.
 */
void
relay_events_stall(struct session *s, int64_t now)
{
	uint64_t waiting = acktrack_in_flight(s->at);
	int64_t quiet = now - s->last_ack_us;
	char text[512];

	if (waiting && quiet > s->p->stall_warn_ms * 1000) {
		if (now < s->next_stall_warn_us) {
			return;
		}
		snprintf(text, sizeof(text), "no delivery report for %lld s while %llu records wait "
			 "(producer queue %d, the oldest waiting %lld s); nothing is confirmed meanwhile; "
			 "check the brokers", (long long)(quiet / 1000000), (unsigned long long)waiting,
			 producer_queue_len(s->prod),
			 (long long)((now - acktrack_oldest_wait_since(s->at)) / 1000000));
		log_warn(MOD, "%s", text);
		metrics_set_stalled(s->p->metrics, true, text);
		s->next_stall_warn_us = now + s->p->stall_warn_ms * 1000;
	} else if (s->next_stall_warn_us && (!waiting || quiet <= s->p->stall_warn_ms * 1000)) {
		log_info(MOD, "deliveries resumed");
		metrics_set_stalled(s->p->metrics, false, NULL);
		s->next_stall_warn_us = 0;
	}
}

/* Reads what heartbeat.action.query returned, without blocking. */
static enum outcome
heartbeat_query_results(struct session *s)
{
	PGresult *r;
	char err[512];

	if (!s->hb_query_busy) {
		return OUT_OK;
	}
	if (PQconsumeInput(s->sql) == 0) {
		pgconn_error_line(s->sql, s->why, sizeof(s->why));
		return OUT_RESTART;
	}
	while (!PQisBusy(s->sql)) {
		const char *state;

		if (!(r = PQgetResult(s->sql))) {
			s->hb_query_busy = false;
			return OUT_OK;
		}
		state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
		if (PQresultStatus(r) == PGRES_FATAL_ERROR) {
			pgconn_result_line(r, err, sizeof(err));
			/* As Debezium (DBZ-9247): a missing table fails, other errors are logged. */
			if (state && strcmp(state, "42P01") == 0) {
				snprintf(s->why, sizeof(s->why), "heartbeat.action.query failed: %s; "
					 "create the table or fix the query", err);
				PQclear(r);
				return OUT_HALT;
			}
			log_warn(MOD, "heartbeat.action.query failed: %s; it runs again at the next "
				 "heartbeat", err);
		}
		PQclear(r);
	}
	return OUT_OK;
}

/* heartbeat.interval.ms: a heartbeat record as Debezium writes it, and the action query. */
enum outcome
relay_events_heartbeat(struct session *s, int64_t now)
{
	struct producer_record pr;
	struct timespec ts;
	char err[512];

	if (!s->p->heartbeat_interval_ms || now < s->next_heartbeat_us) {
		return heartbeat_query_results(s);
	}
	s->next_heartbeat_us = now + s->p->heartbeat_interval_ms * 1000;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (router_heartbeat(s->p->router, s->p->heartbeat_topic,
			     (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, &s->hb, err,
			     sizeof(err)) < 0) {
		snprintf(s->why, sizeof(s->why), "heartbeat record: %s", err);
		return OUT_HALT;
	}
	pr = router_record_view(&s->hb, &s->hdrs, &s->hdrs_cap);
	/* Opaque 0 belongs to no transaction: its report confirms nothing. A full queue skips a
	 * beat. */
	(void)producer_send(s->prod, &pr, NULL, NULL, 0);
	if (s->p->heartbeat_query && !s->hb_query_busy) {
		if (PQsendQuery(s->sql, s->p->heartbeat_query) == 0) {
			pgconn_error_line(s->sql, s->why, sizeof(s->why));
			return OUT_RESTART;
		}
		s->hb_query_busy = true;
	}
	return heartbeat_query_results(s);
}

void
relay_events_gauges(struct session *s)
{
	struct metrics *m = s->p->metrics;

	metrics_gauge(m, METRICS_CONFIRMED_LSN, (int64_t)acktrack_confirmed(s->at));
	metrics_gauge(m, METRICS_RECEIVED_LSN, (int64_t)acktrack_received(s->at));
	metrics_gauge(m, METRICS_IN_FLIGHT_RECORDS, (int64_t)acktrack_in_flight(s->at));
	metrics_gauge(m, METRICS_PENDING_TRANSACTIONS, (int64_t)acktrack_pending_txns(s->at));
	metrics_gauge(m, METRICS_PRODUCER_QUEUE_RECORDS, producer_queue_len(s->prod));
}

