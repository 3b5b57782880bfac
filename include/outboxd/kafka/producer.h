/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_KAFKA_PRODUCER_H
#define OUTBOXD_KAFKA_PRODUCER_H

/*
 * Folder kafka/: the Kafka client behind the sink seam (kafkasink.c): librdkafka's producer with
 * the forced guarantees, its security diagnosis, its statistics. The only folder that includes a
 * librdkafka header (with util/version.c, which prints its version). It may call: util, pg,
 * connect, config, sink (never obs/, its peer).
 */

/*
 * The librdkafka producer: settings (forced guarantees, pass-through of the rest), produce,
 * delivery reports, fatal errors. Delivery reports and librdkafka's log lines are served on the
 * caller's thread by producer_poll(); librdkafka writes one byte to the caller's wake-up fd when
 * they wait, so the main loop can poll(2) it beside the replication socket.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/sink/sink.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/kv.h"

struct producer;

/*
 * Called from producer_poll()/producer_flush() once per delivery report.
 * @msg_opaque: what producer_send() was given. @ok: persisted by the broker.
 * @reason: borrowed error text when !ok: the broker's error, its name, the topic and partition,
 *          and for a refusal no retry fixes (a record too large, no authorization, a policy)
 *          what to do.
 */
typedef void (*producer_on_delivery)(void *opaque, void *msg_opaque, bool ok, const char *reason);

/**
 * producer_version_refusal() - why librdkafka @version (rd_kafka_version()'s 0xMMmmrrpp) must
 * not carry the delivery guarantee, or NULL when it may. meson refuses such a version at build
 * time; this catches a shared library swapped under a built binary.
 */
const char *producer_version_refusal(int version);

/**
 * producer_needs_topic_lookup() - whether librdkafka @version holds a new topic's first record
 * for its one-second topic scan unless the topic's metadata is asked for first (see topic_get()).
 */
bool producer_needs_topic_lookup(int version);

/**
 * producer_new() - create the producer.
 * @settings: borrowed; librdkafka property names (config translated the Java ones). Keys that
 *            override a forced guarantee are applied, and a warning says what is given up.
 *            Keys starting "outboxd." are outboxd's own, not librdkafka's (AUTHGRACE_KEY).
 * @wake_fd: write end of a non-blocking pipe; librdkafka writes "1" when events wait. -1: none
 *	(a caller that only asks for metadata, `outboxd check`).
 * Return: 0, or -EINVAL with the failing setting named in @errbuf (values never shown), or the
 * running librdkafka's refusal (producer_version_refusal()).
 */
int producer_new(const struct kv *settings, int wake_fd, producer_on_delivery on_delivery,
		 void *opaque, struct producer **ret, char *errbuf, size_t errlen);

/**
 * producer_send() - hand one record to librdkafka.
 * Return: 0; -EAGAIN when the queue is full (keep the record, serve deliveries, retry);
 * -EMSGSIZE when the record exceeds message.max.bytes (a poison row); -ESHUTDOWN after a fatal
 * producer error (restart the pipeline); -EINVAL otherwise, with the reason in @errbuf.
 */
int producer_send(struct producer *p, const struct sink_record *rec, void *msg_opaque, char *errbuf,
		  size_t errlen);

/* producer_poll() - serve delivery reports, errors and log lines waiting now; never blocks. */
void producer_poll(struct producer *p);

/**
 * producer_flush() - wait up to @timeout_ms for every queued record's delivery report.
 * Return: 0 when nothing is left, -ETIMEDOUT otherwise.
 */
int producer_flush(struct producer *p, int timeout_ms);

/* producer_fatal() - a fatal error occurred (idempotence, gapless); text in @errbuf. */
bool producer_fatal(struct producer *p, char *errbuf, size_t errlen);

/*
 * producer_precondition() - true once librdkafka reported a broker failure that is the
 * configuration's fault (a SASL login refused, a certificate that does not verify: see
 * kafkasec_fix()) and such refusals persisted past their grace (outboxd.kafka.auth.grace.ms
 * in @settings: authgrace.h) with no record delivered in between; its reason and fix go to
 * @errbuf. librdkafka would retry it for ever; the caller stops with exit 2. Within the grace
 * producer_broker_state() names the refusal.
 */
bool producer_precondition(struct producer *p, char *errbuf, size_t errlen);

/**
 * producer_check_brokers() - ask the cluster for its metadata (the `outboxd check` probe).
 * @errbuf: on success a one-line summary ("1 broker: 127.0.0.1:9092"), else the reason.
 * Return: 0, -EPERM at the first refusal producer_precondition() would count (no grace: a
 * probe says at once what it met), or -EIO.
 */
int producer_check_brokers(struct producer *p, int timeout_ms, char *errbuf, size_t errlen);

/*
 * producer_check_topic_creation() - `outboxd check`'s topic creation line into @out (Kafka
 * Connect's topic.creation.*: off, or each group and whether the broker would create a topic
 * with the default group's settings, asked without creating one). Return: the line's level,
 * 0 ok, 1 warn, 2 FAIL.
 */
int producer_check_topic_creation(struct producer *p, int timeout_ms, struct buf *out);

/*
 * producer_on_stats - librdkafka's statistics JSON (STATISTICS.md) of @len bytes, borrowed for
 * the call; emitted every statistics.interval.ms and served by producer_poll().
 */
typedef void (*producer_on_stats)(void *arg, const char *json, size_t len);

/* producer_set_stats() - have @fn called with the statistics (NULL: ignore them). */
void producer_set_stats(struct producer *p, producer_on_stats fn, void *arg);

/*
 * producer_topic_lookups() - the metadata lookups made for new topics before their first record
 * (at most 10 a second; see producer.c's topic_get()).
 */
int64_t producer_topic_lookups(const struct producer *p);

/*
 * producer_report_proven() - whether a successful delivery report of a producer whose acks
 * setting is @acks proves that the broker wrote the record: it does when it carries the
 * record's @offset. librdkafka also reports success without an offset when a later batch to the
 * same partition succeeded while this one had failed ("implicitly acked") or when the broker
 * answered a retry with DUPLICATE_SEQUENCE_NUMBER. The first is not proof: a partition that has
 * never seen the producer id takes a later batch even when an earlier one failed with
 * NOT_LEADER_OR_FOLLOWER, and the earlier records are then missing (seen with librdkafka 2.14.2
 * on a topic the broker had just created). With acks=0 no report carries an offset.
 */
bool producer_report_proven(int64_t offset, int acks);

/*
 * producer_leaderless_wedged() - whether a producer is wedged by librdkafka issue 5430, so that
 * producer_fatal() ends it: librdkafka logged "new leader-1 not found in cache" at
 * @leaderless_us (0: never), a record was delivered after that line (@answered: the broker
 * answers, so this is no outage), @waiting records wait, and nothing at all was delivered for
 * 5 s since the later of that line and the last delivery (@last_ok_us). Times monotonic, µs.
 */
bool producer_leaderless_wedged(int64_t leaderless_us, bool answered, int waiting,
				int64_t last_ok_us, int64_t now_us);

/* producer_queue_len() - records waiting for a delivery report. */
int producer_queue_len(struct producer *p);

/*
 * producer_report_failure() - inside the delivery callback of a failed report: the rest of what
 * it says, borrowed for the callback (all zero outside one). The broker refuses a whole batch
 * when one record is too large, so the records of one refusal are told apart by their size.
 */
struct sink_failure producer_report_failure(const struct producer *p);

/*
 * producer_broker_state() - what librdkafka's error callback last said about the brokers, and
 * how long ago ("1/1 brokers are down (__ALL_BROKERS_DOWN) (12 s ago)"), for the stall warning.
 * Return: the length written (snprintf's), 0 if it never said anything.
 */
size_t producer_broker_state(const struct producer *p, int64_t now_us, char *out, size_t len);

/* producer_max_message_bytes() - the effective message.max.bytes. */
int64_t producer_max_message_bytes(const struct producer *p);

/**
 * producer_discard() - end the producer: purge what is queued and not yet sent, give what is in
 * flight up to @inflight_ms for the broker's answer, purge what is still in flight then, and
 * destroy the handle. The reports of purged records go to the callback as failures. NULL
 * allowed. Purging an in-flight request makes librdkafka raise its fatal gap-less error
 * ("Purged in flight"), which no later producer inherits. A fatal error raised before the call
 * is served first, as producer_poll() serves it.
 * @fatal: filled with the fatal error librdkafka raised during the discard ("" if none; one
 *	   raised before the call is the caller's own news and not repeated); caller's buffer,
 *	   may be NULL.
 * Return: how many records the purge after the wait failed (0 when everything in flight was
 * answered in time).
 */
int producer_discard(struct producer *p, int64_t inflight_ms, char *fatal, size_t fatallen);

/*
 * Kafka transactions (producer_txn.c), for a producer made with a transactional.id: the records
 * sent between begin and commit become visible to read_committed consumers together, or not at
 * all. init fences an earlier producer with the same id and ends its open transaction; a
 * commit or an abort flushes first. init, commit and abort give up after @slice_ms and are
 * resumed by the same call.
 * Return (each): 0 done; -EINPROGRESS the slice ended first: call again; -EAGAIN a retriable
 * error: call again; -ECANCELED the transaction must be aborted (a record failed; abort, then
 * replay from the last committed position); -EPERM fenced: another producer took the
 * transactional.id (or the coordinator aborted a transaction older than
 * transaction.timeout.ms); -EACCES refused for good (no ACL for the id, a timeout above the
 * broker's transaction.max.timeout.ms, a broker without transactions); -EIO another fatal
 * error; -EINVAL a call out of order. The reason in @errbuf but for -EINPROGRESS.
 */
int producer_txn_init(struct producer *p, int slice_ms, char *errbuf, size_t errlen);
int producer_txn_begin(struct producer *p, char *errbuf, size_t errlen);
int producer_txn_commit(struct producer *p, int slice_ms, char *errbuf, size_t errlen);
int producer_txn_abort(struct producer *p, int slice_ms, char *errbuf, size_t errlen);

/*
 * producer_txn_class() - the class above of a librdkafka error: its code (for a fatal one, the
 * code of the error that made the producer fatal) and its flags. Pure.
 */
int producer_txn_class(int code, bool retriable, bool abortable, bool fatal);

/* producer_free() - producer_discard() without waiting for what is in flight. NULL allowed. */
void producer_free(struct producer *p);

#endif
