/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RELAY_SENDNOW_H
#define OUTBOXD_RELAY_SENDNOW_H

/*
 * Send at once while live (outboxd.send.at.once.ms), read in bursts while behind
 * (outboxd.read.pause.ms): the rules, pure; the relay carries them out.
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

/*
 * Reading in bursts. Behind the server (not live, below) with everything it sent read, the
 * walsender is the pace: a relay that reads each message the moment it arrives wakes once per
 * few transactions (one poll, two producer polls and a clock read per wake) and makes the
 * walsender wake it each time. Pausing a moment lets the socket fill: in back-to-back runs on
 * one backlog the relay's CPU per event fell by about a quarter with 2 ms pauses, at the same
 * rate (bench/results/2026-12-06-run3-analysis.md); a null client that reads in bursts drains
 * the slot twice as fast as one that does not. A pause only delays reading data that is already
 * later than the window, so live latency is untouched; it follows only a read that brought
 * something, so an idle relay sleeps until the server sends.
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
	bool received;	      /* and the read that found so brought at least one message */
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

/*
 * sendnow_read_at() - after a read that left nothing unread (@v->drained): when to read again
 * (monotonic), @pause_us from now while behind; 0 = at once (live, data left unread, no
 * transaction read yet, or @pause_us 0). A read that brought nothing (the pause ran out on an
 * idle server) does not pause again: the relay then waits for the socket, instead of waking
 * every pause for as long as the server stays idle.
 */
int64_t sendnow_read_at(const struct sendnow_view *v, int64_t pause_us);

#endif
