/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PIPELINE_SUPERVISE_H
#define OUTBOXD_PIPELINE_SUPERVISE_H

/*
 * The supervisor's rules (DESIGN.md "Periodic work and the supervisor"), written once for every
 * source (the relay's sessions, the poller's, the initial snapshot's rounds) and for start-up's
 * own retries (a slot to create):
 *
 * - The restart backoff: 500 ms, doubling, capped at outboxd.restart.backoff.max.ms; a failure
 *   after a healthy session (one that ran SUPERVISE_HEALTHY_US) waits 500 ms again.
 * - Halt after failures: the same culprit (a row, a transaction, a snapshot round) failing
 *   outboxd.halt.after.failures sessions in a row halts; with a dead-letter topic, its row goes
 *   there on the next session instead, once, and halts only if it fails again. A failure that
 *   concerns no culprit (a cut connection, a server restart) starts the count over.
 *
 * Pure: the callers say what failed and log what the verdict means in their own words.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A session that ran this long was healthy: a failure after it starts the backoff over. */
#define SUPERVISE_HEALTHY_US (INT64_C(60) * 1000000)
/* The first wait, and the wait after a healthy session. */
#define SUPERVISE_FIRST_MS 500

/* What a failure asks for (supervise_failed()). */
enum supervise_verdict {
	SUPERVISE_RETRY,       /* start a new session after supervise_wait_ms() */
	SUPERVISE_DEAD_LETTER, /* the culprit goes to the dead-letter topic on the next session */
	SUPERVISE_HALT,	       /* halt: the culprit failed too often */
};

/*
 * A key as the supervisor compares it: a row id may be of any length, so beside its first 511
 * bytes go its length and a hash of the whole (two ids over 511 bytes alike in those, in length
 * and in hash are taken for one: the cost is a halt where a dead letter was due, never a loss).
 * Kept in place, so a supervisor needs no freeing.
 */
struct supervise_key {
	char text[512]; /* "" = none */
	size_t len;
	uint32_t hash;
};

struct supervise {
	int64_t max_ms;			    /* outboxd.restart.backoff.max.ms */
	int64_t halt_after;		    /* outboxd.halt.after.failures */
	bool dead_letter;		    /* a dead-letter topic is set */
	int64_t last_ms;		    /* the last wait, 0 = none yet */
	struct supervise_key culprit;	    /* what failed last */
	int64_t count;			    /* sessions in a row the culprit failed */
	struct supervise_key dead_lettered; /* the row once sent to the dead-letter topic */
};

/**
 * supervise_init() - the rules with @backoff_max_ms, @halt_after failures and whether a
 * dead-letter topic is set (@dead_letter); nothing failed yet.
 */
void supervise_init(struct supervise *sv, int64_t backoff_max_ms, int64_t halt_after,
		    bool dead_letter);

/**
 * supervise_wait_ms() - the wait before the next attempt, after one that ran @ran_us: the first
 * wait, or after a healthy one, SUPERVISE_FIRST_MS; else twice the last; never over the cap.
 */
int64_t supervise_wait_ms(struct supervise *sv, int64_t ran_us);

/**
 * supervise_failed() - a session failed on @culprit, the key failures are counted by (a
 * transaction's position, a row id; borrowed; NULL or "" for a failure that concerns no row or
 * transaction, which starts the count over), blaming @row (borrowed: what would go to the
 * dead-letter topic; NULL = @culprit). Each row goes there once: a dead-letter verdict starts the
 * count over, and the same row failing again halts.
 * @ret_count: the sessions in a row @culprit has failed, this one included (may be NULL).
 * Return: the verdict.
 */
enum supervise_verdict supervise_failed(struct supervise *sv, const char *culprit, const char *row,
					int64_t *ret_count);

#endif
