/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_OFFSETPOS_H
#define OUTBOXD_OFFSETPOS_H

/*
 * The replication position as Kafka Connect stores it in its offsets topic for Debezium's
 * PostgreSQL connector, for exactly-once delivery (issue 37): the position goes into the same
 * Kafka transaction as the records it covers, so after a crash the relay resumes from what Kafka
 * committed, not from the slot, which may lag behind it.
 *
 * The bytes are Connect's (JsonConverter without schemas, as its worker writes its internal
 * topics): the key ["<connector name>",{"server":"<topic.prefix>"}], the value the map
 * Debezium's PostgresOffsetContext.getOffset() returns, in the iteration order of Java's
 * HashMap for those keys, so the topic reads the same to Connect's tooling and a Debezium
 * started on it resumes where outboxd stopped. Pure: no I/O.
 *
 * What the LSNs mean (Debezium 3.6.1): lsn_commit is the end LSN of the last commit whose events
 * are all in Kafka (what the slot may be confirmed to); lsn_proc the start LSN of the last event
 * completely processed, inside the next transaction when a transaction was split across Kafka
 * transactions (equal to lsn_commit otherwise); lsn_events_processed (Debezium 3.7 and later)
 * how many events at lsn_proc are in.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/lsn.h"

struct offsetpos {
	lsn_t lsn;	      /* "lsn": the last event's LSN */
	lsn_t lsn_proc;	      /* "lsn_proc": the last event completely processed */
	lsn_t lsn_commit;     /* "lsn_commit": the end of the last whole transaction in */
	int64_t ts_usec;      /* "ts_usec": that commit's time, microseconds since the epoch */
	int64_t txid;	      /* "txId", if has_txid */
	bool has_txid;	      /* (a position written while idle carries no transaction) */
	int64_t events;	      /* "lsn_events_processed", if has_events */
	bool has_events;      /* (absent before Debezium 3.7) */
	char message_type[8]; /* "messageType": INSERT, UPDATE, DELETE, COMMIT, MESSAGE, ... */
};

/* offsetpos_key() - append Connect's key for connector @name of server @server to @out. */
void offsetpos_key(struct buf *out, const char *name, const char *server);

/**
 * offsetpos_key_is() - whether the key bytes @s (@len) are those of @name and @server. Other
 * connectors' positions share the topic's partitions: a reader keeps only its own.
 */
bool offsetpos_key_is(const char *s, size_t len, const char *name, const char *server);

/* offsetpos_value() - append the value bytes of @p to @out. */
void offsetpos_value(struct buf *out, const struct offsetpos *p);

/**
 * offsetpos_decode() - read a value written by outboxd or by Debezium (any key order, keys it
 * does not use ignored, as Debezium ignores them).
 * @s: borrowed, @len bytes; NULL (a tombstone: the position was deleted) is allowed.
 *
 * Return: 0; -ENOENT for a tombstone; -EPROTO with the reason in @errbuf for bytes that are
 * not such a position (the caller names the topic, partition and offset).
 */
int offsetpos_decode(const char *s, size_t len, struct offsetpos *out, char *errbuf, size_t errlen);

/**
 * offsetpos_slot_behind() - a restart's check: the slot @slot_confirmed may be at or behind the
 * stored position (the relay crashed between Kafka's commit and the slot's confirmation), never
 * ahead: that would mean events the slot no longer sends and Kafka never got.
 */
bool offsetpos_slot_behind(const struct offsetpos *p, lsn_t slot_confirmed);

/*
 * offsetpos_txn_in() - whether a whole transaction, committed with end LSN @end_lsn, is in
 * Kafka already: at or below lsn_commit.
 */
bool offsetpos_txn_in(const struct offsetpos *p, lsn_t end_lsn);

/**
 * offsetpos_event_in() - within the first transaction after lsn_commit, when @p names a point
 * inside it (lsn_proc past lsn_commit): whether the event at @lsn, the @nth (from 1) at that
 * LSN, is in. Without a count (Debezium 3.6.1), every event at lsn_proc is: outboxd splits a
 * transaction only where the LSN changes, so that reading stays exact.
 */
bool offsetpos_event_in(const struct offsetpos *p, lsn_t lsn, int64_t nth);

#endif
