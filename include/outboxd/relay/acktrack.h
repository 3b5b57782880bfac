/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RELAY_ACKTRACK_H
#define OUTBOXD_RELAY_ACKTRACK_H

/*
 * The confirm rule, and nothing else (DESIGN.md invariant 2). A FIFO of received transactions,
 * each with a count of produced rows still waiting for their delivery report. The confirmable
 * LSN advances only to:
 *   - the end_lsn of the newest transaction whose Commit was received and whose rows, and the
 *     rows of every earlier transaction, all have a successful delivery report; or
 *   - a keepalive walEnd, only while no transaction is open and nothing is in flight.
 * It never goes backwards. Pure: no I/O.
 *
 * Transactions are named by a sequence number (uint64_t, starting at 1) so the per-message
 * opaque handed to librdkafka stays valid while the FIFO grows.
 */

#include <stdbool.h>
#include <stdint.h>

#include "outboxd/util/lsn.h"

struct acktrack;

/* acktrack_new() - an empty tracker whose confirmed LSN starts at @confirmed (the slot's). */
struct acktrack *acktrack_new(lsn_t confirmed);

/* acktrack_free() - NULL allowed. */
void acktrack_free(struct acktrack *at);

/**
 * acktrack_begin() - a transaction's Begin arrived.
 * Return: its sequence number, or 0 if a transaction is already open (a protocol error the
 * caller reports).
 */
uint64_t acktrack_begin(struct acktrack *at, lsn_t final_lsn);

/* acktrack_open_txn() - the sequence number of the open transaction (Begin seen, no Commit), or 0. */
uint64_t acktrack_open_txn(const struct acktrack *at);

/**
 * acktrack_row_produced() - a row of transaction @seq was accepted by the producer; its
 * delivery report is now awaited.
 * @now_us: a monotonic clock reading, remembered for the transaction's first row (the stall
 *          watchdog reports how long the oldest record has waited).
 * Return: 0, or -EINVAL if @seq is not a tracked, uncommitted-or-committed transaction.
 */
int acktrack_row_produced(struct acktrack *at, uint64_t seq, int64_t now_us);

/**
 * acktrack_set_commit_time() - the commit time of transaction @seq (Unix microseconds, from its
 * Begin message), for the lag and latency metrics. Unknown (0) by default: a logical decoding
 * message outside a transaction has none.
 * Return: 0, or -EINVAL if @seq is not tracked.
 */
int acktrack_set_commit_time(struct acktrack *at, uint64_t seq, int64_t commit_us);

/* acktrack_commit_time() - the commit time of tracked transaction @seq, 0 if unknown. */
int64_t acktrack_commit_time(const struct acktrack *at, uint64_t seq);

/*
 * acktrack_oldest_commit_time() - the commit time of the oldest transaction received and not
 * yet confirmed (the open one included), 0 when none is pending (or none has a time).
 */
int64_t acktrack_oldest_commit_time(const struct acktrack *at);

/* acktrack_confirmed_commit_time() - the commit time of the newest confirmed transaction, 0 if none. */
int64_t acktrack_confirmed_commit_time(const struct acktrack *at);

/*
 * acktrack_oldest_wait_since() - the @now_us given for the first row of the oldest transaction
 * that still waits for a delivery report; 0 when nothing is in flight.
 */
int64_t acktrack_oldest_wait_since(const struct acktrack *at);

/**
 * acktrack_row_delivered() - a delivery report for a row of @seq arrived.
 * @ok: false if the broker did not take the row. Nothing from transaction @seq on is ever
 *      confirmed (the pipeline must restart and replay it), and acktrack_failed() is true
 *      until acktrack_reset().
 * Return: 0, or -EINVAL for an unknown @seq or a report beyond the rows produced.
 */
int acktrack_row_delivered(struct acktrack *at, uint64_t seq, bool ok);

/**
 * acktrack_commit() - the open transaction's Commit arrived.
 * Return: 0, or -EINVAL if no transaction is open.
 */
int acktrack_commit(struct acktrack *at, lsn_t commit_lsn, lsn_t end_lsn);

/**
 * acktrack_keepalive() - a keepalive reported @wal_end. Advances the confirmed LSN to it only
 * when no transaction is open and nothing is in flight.
 */
void acktrack_keepalive(struct acktrack *at, lsn_t wal_end);

/*
 * acktrack_limit() - exactly-once (issue 37): from now on nothing is confirmed past @ceiling,
 * the position the last committed Kafka transaction stored; each commit raises it (a lower
 * value leaves it where it is). Transactions ending beyond it wait in the FIFO, and a keepalive
 * confirms at most up to it: the slot never gets ahead of what Kafka committed, which a restart
 * reads back.
 */
void acktrack_limit(struct acktrack *at, lsn_t ceiling);

/* acktrack_confirmed() - the LSN that may be sent as flush now. Pops completed transactions. */
lsn_t acktrack_confirmed(struct acktrack *at);

/*
 * acktrack_txn_lsn() - the commit LSN (from Begin) of tracked transaction @seq, 0 if it is not
 * tracked (confirmed and popped, or never begun). A failed transaction stays tracked.
 */
lsn_t acktrack_txn_lsn(const struct acktrack *at, uint64_t seq);

/* acktrack_received() - the highest LSN received (commit end or keepalive), for "write". */
lsn_t acktrack_received(const struct acktrack *at);

/* acktrack_in_flight() - rows produced and not yet reported. */
uint64_t acktrack_in_flight(const struct acktrack *at);

/* acktrack_pending_txns() - transactions received and not yet confirmable (including open). */
uint64_t acktrack_pending_txns(const struct acktrack *at);

/* acktrack_failed() - a delivery failed since the last reset. */
bool acktrack_failed(const struct acktrack *at);

/*
 * acktrack_reset() - forget every transaction and failure (the pipeline restarts from the slot,
 * which resends them); keep the confirmed LSN.
 */
void acktrack_reset(struct acktrack *at);

#endif
