/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RELAY_FEEDBACK_H
#define OUTBOXD_RELAY_FEEDBACK_H

/*
 * The relay's side of the replication conversation, besides the data (pg_recvlogical's
 * sendFeedback): standby status updates carrying the position acktrack allows, sent often
 * enough for the server's wal_sender_timeout (pgstream_status_interval_ms()) and more often
 * still while reading is paused on purpose; the liveness probe, a status update asking for a
 * reply after a long silence; and what a connection that ended while reading was paused is
 * taken for. One per session, zeroed with it.
 *
 * Why more often while paused (invariant 5): the server's own messages, keepalive requests and
 * a probe's reply among them, then wait unread behind the data, so outboxd's status updates are
 * all the server hears; and a server that closes its end leaves its FIN behind the data it
 * could not send, waiting for room in outboxd's full receive window, while data sent to the
 * closed socket makes the server's kernel answer with a reset at once: the updates are how the
 * end is noticed (FEEDBACK_PAUSED_US, within a second).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/obs/metrics.h"
#include "outboxd/pg/pgstream.h"
#include "outboxd/pipeline/loop.h"
#include "outboxd/pipeline/outcome.h"
#include "outboxd/util/lsn.h"

/* While reading is paused, a status update at least this often. */
#define FEEDBACK_PAUSED_US INT64_C(500000)

struct feedback {
	int64_t wst_ms;		   /* the server's wal_sender_timeout (0 = none) */
	int64_t every_us;	   /* pgstream_status_interval_ms() */
	int64_t sent_us;	   /* the last status update (monotonic) */
	int64_t gap_us;		   /* the time between the last two */
	int64_t last_rx_us;	   /* the last frame from the server, or the end of a pause */
	int64_t probe_deadline_us; /* how long a probe's reply may take */
	lsn_t flush_sent;	   /* the position the last status update confirmed */
};

/* What one turn hands over. */
struct feedback_view {
	struct pgstream *conn; /* borrowed */
	lsn_t received;	       /* acktrack_received() */
	lsn_t confirmed;       /* acktrack_confirmed(): the only position confirmed */
	bool asked;	       /* the server asked for a reply (a keepalive) */
	bool paused;	       /* reading is paused on purpose (a full producer queue) */
};

/**
 * feedback_init() - a session's start at @now_us, from the slot's @confirmed position, with
 * status.update.interval.ms @interval_ms and the server's wal_sender_timeout @wst_ms; the first
 * status update goes at once (LOOP_STATUS in the session's deadlines @dl, borrowed).
 */
void feedback_init(struct feedback *fb, struct loop_deadlines *dl, int64_t interval_ms,
		   int64_t wst_ms, lsn_t confirmed, int64_t now_us);

/* feedback_received() - frames arrived at @now_us: the server's silence ends, no probe waits
 * (LOOP_PROBE in @dl, borrowed, disarmed). */
void feedback_received(struct feedback *fb, struct loop_deadlines *dl, int64_t now_us);

/**
 * feedback_turn() - the probe's verdict, then a status update when due (sooner while paused),
 * asked for, probing, or when the confirmed position moved; counted in @m. @dl, @v (and its
 * conn) and @m are borrowed for the call; the reason goes to the caller's @why.
 * Return: OUTCOME_OK, or OUTCOME_RESTART with the reason in @why (the probe got no answer in
 * time, or the status update could not be sent).
 */
enum outcome feedback_turn(struct feedback *fb, struct loop_deadlines *dl,
			   const struct feedback_view *v, struct metrics *m, int64_t now_us,
			   char *why, size_t whylen);

/**
 * feedback_closed() - the connection @conn (borrowed) ended (a hang-up or a socket error) while
 * reading was paused, at @now_us: whose doing it was, into the caller's @why. The server's (a hang-up, or a reset: its
 * process closed the socket), unless outboxd had kept silent for the server's whole
 * wal_sender_timeout; the network's for any other socket error.
 * Return: OUTCOME_RESTART.
 */
enum outcome feedback_closed(const struct feedback *fb, struct pgstream *conn, int64_t now_us,
			     char *why, size_t whylen);

#endif
