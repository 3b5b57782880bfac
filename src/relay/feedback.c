/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/relay/feedback.h"

#include <errno.h>
#include <string.h>

#include "outboxd/util/errbuf.h"
#include "outboxd/util/failpoint.h"

/* Silence from the server after which a status update asks for a reply (the liveness probe). */
#define PROBE_AFTER_US (INT64_C(20) * 1000000)
/*
 * No reply within this after a probe, plus half the server's wal_sender_timeout: the server or
 * the path to it is dead. A walsender busy decoding a large transaction it sends nothing of
 * reads client messages only about every wal_sender_timeout/2 (WalSndUpdateProgress), so a
 * live server can take that long to answer.
 */
#define PROBE_DEADLINE_US (INT64_C(15) * 1000000)

void
feedback_init(struct feedback *fb, struct loop_deadlines *dl, int64_t interval_ms, int64_t wst_ms,
	      lsn_t confirmed, int64_t now_us)
{
	*fb = (struct feedback){
		.wst_ms = wst_ms,
		.every_us = pgstream_status_interval_ms(interval_ms, wst_ms) * 1000,
		.sent_us = now_us,
		.last_rx_us = now_us,
		.probe_deadline_us = PROBE_DEADLINE_US + wst_ms * 500,
		.flush_sent = confirmed,
	};
	loop_arm(dl, LOOP_STATUS, now_us);
}

void
feedback_received(struct feedback *fb, struct loop_deadlines *dl, int64_t now_us)
{
	fb->last_rx_us = now_us;
	loop_arm(dl, LOOP_PROBE, 0);
}

/* Whether a status update goes now; arms the probe when the server has been silent long. */
static bool
due(struct feedback *fb, struct loop_deadlines *dl, const struct feedback_view *v, int64_t now,
    bool *ret_probe)
{
	if (v->paused) {
		/*
		 * The server's messages, a probe's reply among them, wait unread behind the data,
		 * so its silence proves nothing (DESIGN.md invariant 8); it counts again once
		 * reading resumes.
		 */
		feedback_received(fb, dl, now);
		if (!loop_due(dl, LOOP_STATUS, fb->sent_us + FEEDBACK_PAUSED_US)) {
			loop_arm(dl, LOOP_STATUS, fb->sent_us + FEEDBACK_PAUSED_US);
		}
	}
	*ret_probe = !loop_armed(dl, LOOP_PROBE) && now - fb->last_rx_us > PROBE_AFTER_US;
	if (*ret_probe) {
		loop_arm(dl, LOOP_PROBE, now + fb->probe_deadline_us);
	}
	return v->asked || *ret_probe || loop_due(dl, LOOP_STATUS, now) ||
	       v->confirmed != fb->flush_sent;
}

enum outcome
feedback_turn(struct feedback *fb, struct loop_deadlines *dl, const struct feedback_view *v,
	      struct metrics *m, int64_t now_us, char *why, size_t whylen)
{
	bool probe = false;

	if (loop_due(dl, LOOP_PROBE, now_us)) {
		errbuf_set(why, whylen,
			   "the server did not answer a status update asking for a reply within "
			   "%lld s (15 s + wal_sender_timeout/2); the connection is dead",
			   (long long)(fb->probe_deadline_us / 1000000));
		return OUTCOME_RESTART;
	}
	if (!due(fb, dl, v, now_us, &probe)) {
		return OUTCOME_OK;
	}
	if (pgstream_send_status(v->conn, v->received, v->confirmed, probe, why, whylen) < 0) {
		return OUTCOME_RESTART;
	}
	fb->flush_sent = v->confirmed;
	fb->gap_us = now_us - fb->sent_us;
	fb->sent_us = now_us;
	metrics_count(m, METRICS_STATUS_UPDATES, 1);
	failpoint_hit(FAILPOINT_AFTER_STATUS);
	loop_arm(dl, LOOP_STATUS, now_us + fb->every_us);
	return OUTCOME_OK;
}

enum outcome
feedback_closed(const struct feedback *fb, struct pgstream *conn, int64_t now_us, char *why,
		size_t whylen)
{
	int err = -pgstream_socket_error(conn);
	int64_t quiet_us = now_us - fb->sent_us > fb->gap_us ? now_us - fb->sent_us : fb->gap_us;

	if (fb->wst_ms && quiet_us / 1000 >= fb->wst_ms) {
		errbuf_set(
			why, whylen,
			"PostgreSQL ended the replication connection while reading was paused "
			"(the producer queue is full), after outboxd had sent nothing for %lld ms, "
			"over its wal_sender_timeout (%lld ms): the relay's loop was held up",
			(long long)(quiet_us / 1000), (long long)fb->wst_ms);
	} else if (err == 0 || err == ECONNRESET) {
		errbuf_set(
			why, whylen,
			"PostgreSQL closed the replication connection while reading was paused "
			"(the producer queue is full; the reason it gave waits unread behind the "
			"data: see the server's log for a restart, a failover or "
			"pg_terminate_backend)");
	} else {
		errbuf_set(why, whylen,
			   "the replication connection failed while reading was paused (the "
			   "producer queue is full): %s",
			   strerror(err));
	}
	return OUTCOME_RESTART;
}
