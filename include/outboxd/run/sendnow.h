/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RUN_SENDNOW_H
#define OUTBOXD_RUN_SENDNOW_H

/*
 * Send at once while live (outboxd.send.at.once.ms): the rule, pure; the relay carries it out.
 *
 * When the server has sent nothing more and the last transaction read committed moments ago, the
 * records just produced are all there is to batch, and lingering (linger.ms, 5 ms by default,
 * often set to 10) would only add that delay to each of them. librdkafka sends before linger.ms
 * only while a flush is under way, so the relay sends them with a short flush. At most one such
 * send per SENDNOW_EVERY_US: a send per turn made one produce request per record at 2,000
 * records/s, and fell behind at 20,000 (bench/run); records produced in between go with the next
 * one, which a deadline (LOOP_SEND) brings. Behind the server (a catch-up, or a rate the relay
 * only just follows) linger.ms batches as configured.
 *
 * Commit times are the server's clock: a relay clock further ahead of it than the window only
 * loses the shortcut. Nothing is sent while a record waits for queue room: the queue is full, a
 * flush would only block the loop, and the deadline is dropped so that a broker outage does not
 * keep an expired deadline waking the loop.
 */

#include <stdbool.h>
#include <stdint.h>

/* At most one send at once per this. */
#define SENDNOW_EVERY_US INT64_C(2000)

/* What the rule looks at, read by the caller at one moment. */
struct sendnow_view {
	int64_t now_us;	      /* monotonic */
	int64_t wall_us;      /* the relay's clock, Unix microseconds */
	int64_t committed_us; /* commit time of the last transaction read (server clock); 0 = none */
	int64_t window_us;    /* outboxd.send.at.once.ms; 0 = never send at once */
	uint64_t produced;    /* records produced so far in the session */
	bool drained;	      /* the server has sent nothing more for now */
	bool waiting;	      /* a record waits for producer queue room */
	bool due;	      /* the deadline (LOOP_SEND) has passed */
};

/* Per session; zero-initialised = nothing sent yet. */
struct sendnow {
	uint64_t sent;	 /* records produced at the last send */
	int64_t sent_at; /* and when (monotonic) */
};

enum sendnow_act {
	SENDNOW_IDLE,  /* nothing to send: drop the deadline */
	SENDNOW_KEEP,  /* not live: leave the deadline as it is (linger.ms batches) */
	SENDNOW_LATER, /* live, but the last send was too recent: arm the deadline at *at */
	SENDNOW_SEND,  /* send now and drop the deadline; @sn records the send */
};

/* sendnow_decide() - judge @v; on SENDNOW_LATER *@at is the deadline to arm. */
enum sendnow_act sendnow_decide(struct sendnow *sn, const struct sendnow_view *v, int64_t *at);

#endif
