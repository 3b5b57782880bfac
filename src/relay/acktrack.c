/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/relay/acktrack.h"

#include <errno.h>
#include <stdlib.h>

#include "outboxd/util/mem.h"

struct txn {
	lsn_t final_lsn; /* its commit LSN, from Begin: what names it in messages */
	lsn_t end_lsn;
	uint64_t pending; /* rows produced, report not yet seen */
	bool committed;
	bool failed;		   /* a row's delivery failed: never confirmable */
	int64_t first_produced_us; /* when its first row went to the producer */
	int64_t commit_us;	   /* its commit time (Unix us, from Begin), 0 = unknown */
};

/* A ring of transactions; ring[(head + i) % cap] has sequence number head_seq + i. */
struct acktrack {
	struct txn *ring;
	size_t cap, head, count;
	uint64_t head_seq; /* sequence number of ring[head] (or of the next begin when empty) */
	uint64_t in_flight;
	lsn_t confirmed, received;
	bool failed;
	int64_t confirmed_commit_us; /* commit time of the newest confirmed transaction, 0 = none */
	bool limited;		     /* acktrack_limit() was called: confirmed <= ceiling */
	lsn_t ceiling;
};

struct acktrack *
acktrack_new(lsn_t confirmed)
{
	struct acktrack *at = znew(*at);

	at->cap = 64;
	at->ring = xcalloc(at->cap, sizeof(*at->ring));
	at->head_seq = 1;
	at->confirmed = confirmed;
	at->received = confirmed;
	return at;
}

void
acktrack_free(struct acktrack *at)
{
	if (!at) {
		return;
	}
	free(at->ring);
	free(at);
}

static struct txn *
nth(const struct acktrack *at, size_t i)
{
	return &at->ring[(at->head + i) % at->cap];
}

static struct txn *
lookup(const struct acktrack *at, uint64_t seq)
{
	if (seq < at->head_seq || seq - at->head_seq >= at->count) {
		return NULL;
	}
	return nth(at, (size_t)(seq - at->head_seq));
}

static struct txn *
tail(const struct acktrack *at)
{
	return at->count ? nth(at, at->count - 1) : NULL;
}

/* Doubles the ring, unrolling it so the head lands at index 0. */
static void
grow(struct acktrack *at)
{
	struct txn *ring = xcalloc(at->cap * 2, sizeof(*ring));

	for (size_t i = 0; i < at->count; i++) {
		ring[i] = *nth(at, i);
	}
	free(at->ring);
	at->ring = ring;
	at->head = 0;
	at->cap *= 2;
}

uint64_t
acktrack_open_txn(const struct acktrack *at)
{
	const struct txn *t = tail(at);

	return t && !t->committed ? at->head_seq + at->count - 1 : 0;
}

uint64_t
acktrack_begin(struct acktrack *at, lsn_t final_lsn)
{
	if (acktrack_open_txn(at)) {
		return 0;
	}
	if (at->count == at->cap) {
		grow(at);
	}
	*nth(at, at->count) = (struct txn){ .final_lsn = final_lsn, .end_lsn = final_lsn };
	at->count++;
	return at->head_seq + at->count - 1;
}

int
acktrack_row_produced(struct acktrack *at, uint64_t seq, int64_t now_us)
{
	struct txn *t = lookup(at, seq);

	if (!t) {
		return -EINVAL;
	}
	if (t->pending == 0 && t->first_produced_us == 0) {
		t->first_produced_us = now_us;
	}
#ifdef OUTBOXD_TEST_CONFIRM_AT_PRODUCE
	/*
	 * The fault suite's mutant (outboxd-mutant, tests/fault/meson.build), never in outboxd: a
	 * row counts as delivered once the producer took it, so its transaction is confirmable
	 * before the broker acknowledged it. The checker must catch this (W).
	 */
	return 0;
#endif
	t->pending++;
	at->in_flight++;
	return 0;
}

int
acktrack_row_delivered(struct acktrack *at, uint64_t seq, bool ok)
{
	struct txn *t = lookup(at, seq);

#ifdef OUTBOXD_TEST_CONFIRM_AT_PRODUCE
	/* the mutant counted nothing at produce time: a failure is still a failure */
	if (!ok) {
		if (t) {
			t->failed = true;
		}
		at->failed = true;
	}
	return 0;
#endif
	if (!t || t->pending == 0) {
		return -EINVAL;
	}
	t->pending--;
	at->in_flight--;
	if (!ok) {
		t->failed = true;
		at->failed = true;
	}
	return 0;
}

int
acktrack_commit(struct acktrack *at, lsn_t commit_lsn, lsn_t end_lsn)
{
	struct txn *t = tail(at);

	(void)commit_lsn; /* the end, not the start, of the commit record is what skips it */
	if (!t || t->committed) {
		return -EINVAL;
	}
	t->committed = true;
	t->end_lsn = end_lsn;
	if (end_lsn > at->received) {
		at->received = end_lsn;
	}
	return 0;
}

void
acktrack_keepalive(struct acktrack *at, lsn_t wal_end)
{
	if (wal_end > at->received) {
		at->received = wal_end;
	}
	(void)acktrack_confirmed(at); /* pop what completed, so an idle FIFO counts as empty */
	if (at->limited && wal_end > at->ceiling) {
		wal_end = at->ceiling;
	}
	if (at->count == 0 && at->in_flight == 0 && !at->failed && wal_end > at->confirmed) {
		at->confirmed = wal_end;
	}
}

void
acktrack_limit(struct acktrack *at, lsn_t ceiling)
{
	if (!at->limited || ceiling > at->ceiling) {
		at->ceiling = ceiling;
	}
	at->limited = true;
}

lsn_t
acktrack_confirmed(struct acktrack *at)
{
	while (at->count) {
		struct txn *t = nth(at, 0);

		if (!t->committed || t->pending || t->failed ||
		    (at->limited && t->end_lsn > at->ceiling)) {
			break;
		}
		if (t->end_lsn > at->confirmed) {
			at->confirmed = t->end_lsn;
		}
		if (t->commit_us) {
			at->confirmed_commit_us = t->commit_us;
		}
		at->head = (at->head + 1) % at->cap;
		at->count--;
		at->head_seq++;
	}
	return at->confirmed;
}

int
acktrack_set_commit_time(struct acktrack *at, uint64_t seq, int64_t commit_us)
{
	struct txn *t = lookup(at, seq);

	if (!t) {
		return -EINVAL;
	}
	t->commit_us = commit_us;
	return 0;
}

int64_t
acktrack_commit_time(const struct acktrack *at, uint64_t seq)
{
	const struct txn *t = lookup(at, seq);

	return t ? t->commit_us : 0;
}

int64_t
acktrack_oldest_commit_time(const struct acktrack *at)
{
	for (size_t i = 0; i < at->count; i++) {
		const struct txn *t = nth(at, i);

		if (t->commit_us) {
			return t->commit_us;
		}
	}
	return 0;
}

int64_t
acktrack_confirmed_commit_time(const struct acktrack *at)
{
	return at->confirmed_commit_us;
}

int64_t
acktrack_oldest_wait_since(const struct acktrack *at)
{
	for (size_t i = 0; i < at->count; i++) {
		const struct txn *t = nth(at, i);

		if (t->pending) {
			return t->first_produced_us;
		}
	}
	return 0;
}

lsn_t
acktrack_txn_lsn(const struct acktrack *at, uint64_t seq)
{
	const struct txn *t = lookup(at, seq);

	return t ? t->final_lsn : 0;
}

lsn_t
acktrack_received(const struct acktrack *at)
{
	return at->received;
}

uint64_t
acktrack_in_flight(const struct acktrack *at)
{
	return at->in_flight;
}

uint64_t
acktrack_pending_txns(const struct acktrack *at)
{
	return at->count;
}

bool
acktrack_failed(const struct acktrack *at)
{
	return at->failed;
}

void
acktrack_reset(struct acktrack *at)
{
	at->head_seq += at->count;
	at->head = 0;
	at->count = 0;
	at->in_flight = 0;
	at->failed = false;
	at->received = at->confirmed;
}
