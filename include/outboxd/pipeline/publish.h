/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PIPELINE_PUBLISH_H
#define OUTBOXD_PIPELINE_PUBLISH_H

/*
 * Folder pipeline/: what every source shares: the publish path from a row to a sent record and
 * back, the choice of the broker's sink, the main loop and its deadlines, the periodic work, the
 * stall watchdog, the supervisor, the queue of asynchronous statements, the outcomes of a step.
 * It may call: util, pg, connect, config, sink, kafka (sinks.c alone, to pick a sink), obs.
 */

/*
 * The one path from a source's outbox row to a broker's record and back (DESIGN.md "Data flow"):
 * route -> convert -> send through the sink (sink/sink.h; which broker is sinks.c's choice), with
 * every routing verdict, the dead-letter topic, the record over the broker's record size and the
 * halt text that names the row and its position. Each record
 * carries the source's own token; the source hears of it twice, through the callbacks it gave:
 * when the sink took the record (at once, or later for the one record that waited for queue
 * space) and when its delivery report arrived. The replication stream keeps acktrack's confirm
 * rule behind those callbacks, the initial snapshot counts, the poller marks its rows.
 *
 * Heartbeat records (publish_heartbeat()) belong to no source: publish tracks them itself, one
 * in flight at a time, and keeps their failures for the heartbeat to report; they are not
 * counted in the records-published and -acknowledged metrics.
 *
 * Owns the sink, the record and header scratch and the waiting record. While a record waits, the source must not hand over another one (it stops reading);
 * publish_serve() sends it as soon as deliveries free space.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/connect/router.h"
#include "outboxd/obs/metrics.h"
#include "outboxd/pg/pgoutput.h"
#include "outboxd/pg/relcache.h"
#include "outboxd/pipeline/outcome.h"
#include "outboxd/pipeline/sinks.h"
#include "outboxd/util/kv.h"

struct publish;

/* A source's side of the path. Callbacks run on the caller's thread, inside publish_*(). */
struct publish_source {
	/* the sink took the record of @token (not called for publish_try()) */
	void (*on_produced)(void *opaque, uint64_t token);
	/* its delivery report: @ok = persisted by the broker; @reason borrowed when !ok */
	void (*on_delivery)(void *opaque, uint64_t token, bool ok, const char *reason);
	void *opaque;
};

struct publish_params {
	struct sinks_choice sink; /* the broker client and its settings (sinks_choose()) */
	struct router *router;	  /* borrowed */
	const char *dlq_topic;	  /* outboxd.errors.deadletterqueue.topic.name, or NULL */
	struct metrics *metrics;  /* borrowed: records published and acknowledged, skipped rows */
};

/* One row of a source as the router takes it. Everything is borrowed for the call. */
struct publish_row {
	const struct relcache_rel *rel;
	const bool *notnull;	     /* router_route()'s NOT NULL facts, or NULL */
	const char *const *defaults; /* and column DEFAULTs, or NULL */
	char op;		     /* 'I' insert, 'U' update, 'r' snapshot read */
	const struct pgoutput_tuple *tup;
	/*
	 * The row's position, for the messages that name it: "<where> <lsn>", "committing at
	 * 0/16B3748" when @where is NULL. Text is made only when a message needs it (this is per
	 * row). @lsn is also the dead-letter header __outboxd.error.commit.lsn.
	 */
	const char *where;
	lsn_t lsn;
};

/**
 * publish_new() - open the sink and create the path.
 * @p: borrowed; must outlive the result. @src: copied.
 * Return: 0, or -EINVAL with the failing setting in @errbuf (values never shown).
 */
int publish_new(const struct publish_params *p, const struct publish_source *src,
		struct publish **ret, char *errbuf, size_t errlen);

/*
 * How long a restart lets the records in flight be acknowledged before it purges them (and
 * librdkafka, purging in-flight requests of an idempotent producer, raises its fatal gap-less
 * error). A broker that answers at all answers within it; a broker that is down has nothing in
 * flight (its requests came back into the queue when the connection dropped), so only a frozen
 * one costs the whole wait.
 */
#define PUBLISH_DISCARD_INFLIGHT_MS 2000

/* Why a publish path ends (publish_free()). */
enum publish_end {
	PUBLISH_END_FINAL,   /* a stop or a halt: no producer follows (a stop flushed already) */
	PUBLISH_END_RESTART, /* a new session follows: in flight gets PUBLISH_DISCARD_INFLIGHT_MS */
};

/*
 * publish_free() - end the sink (sink_discard(): what is queued is purged, what is in
 * flight gets the wait @end allows before it is purged too) and the path; the reports reach
 * nobody (the source already knows why it ends). A fatal error of the sink is counted once
 * (outboxd_producer_fatal_errors_total), also one raised by the purge, which a restart also logs
 * as the discarded producer's. NULL allowed.
 */
void publish_free(struct publish *pub, enum publish_end end);

/* publish_wake_fd() - the sink's wake-up descriptor (sink_wake_fd()), for loop_wait(). */
int publish_wake_fd(const struct publish *pub);

/**
 * publish_row() - route one row and produce its record as token @token.
 * Return: OUTCOME_OK when the record was produced, is waiting for queue space
 * (publish_waiting()), went to the dead-letter topic, or the verdict publishes nothing (an
 * UPDATE under table.op.invalid.behavior=warn|error is logged here); OUTCOME_HALT for a poison
 * row without a dead-letter topic or a fatal UPDATE, with "halt: row id=<id> <where>: <reason>"
 * in @why; OUTCOME_RESTART when the sink refused for another reason.
 */
enum outcome publish_row(struct publish *pub, const struct publish_row *row, uint64_t token,
			 char *why, size_t whylen);

/* publish_scratch() - the record to fill for publish_scratch_send() (router_message(), ...). */
struct record *publish_scratch(struct publish *pub);

/**
 * publish_scratch_send() - produce the scratch record as token @token, keeping it when the
 * queue is full, as publish_row() does.
 * Return: OUTCOME_OK, OUTCOME_HALT (over message.max.bytes, with @where and @lsn naming it, as
 * for a row) or
 * OUTCOME_RESTART; the reason in @why.
 */
enum outcome publish_scratch_send(struct publish *pub, uint64_t token, const char *where, lsn_t lsn,
				  char *why, size_t whylen);

/**
 * publish_heartbeat() - produce a heartbeat record now or never: not while the previous one
 * still waits for its report, not kept when the queue is full.
 * @rec: borrowed.
 * Return: 0, -EBUSY (the previous one is in flight), -EAGAIN on a full queue, or another
 * negative code with the reason in @errbuf.
 */
int publish_heartbeat(struct publish *pub, const struct record *rec, char *errbuf, size_t errlen);

/*
 * publish_heartbeat_failures() - heartbeat records the broker refused since the last call, and
 * the last one's reason in @out.
 */
uint64_t publish_heartbeat_failures(struct publish *pub, char *out, size_t len);

/* publish_waiting() - a record waits for queue space: the source must not feed another. */
bool publish_waiting(const struct publish *pub);

/**
 * publish_serve() - drain the wake-up pipe, serve delivery reports (the source's callbacks run
 * now) and check for a fatal error of the sink. Never blocks.
 * Return: OUTCOME_OK, OUTCOME_RESTART after a fatal error of the sink, or OUTCOME_PRECONDITION
 * once a broker refused the login or the certificates (sink_precondition()); the reason
 * in @why.
 */
enum outcome publish_serve(struct publish *pub, char *why, size_t whylen);

/**
 * publish_retry() - send the waiting record if the queue has room now (nothing to do when
 * none waits).
 * Return: as publish_scratch_send().
 */
enum outcome publish_retry(struct publish *pub, char *why, size_t whylen);

/**
 * publish_flush() - wait up to @timeout_ms for every delivery report (callbacks run).
 * Return: 0, or -ETIMEDOUT with records still unacknowledged.
 */
int publish_flush(struct publish *pub, int64_t timeout_ms);

/* publish_queue_len() - records the sink holds (queued or in flight). */
int publish_queue_len(const struct publish *pub);

/*
 * publish_culprit() - the record to blame for this session's failures: a refusal no retry
 * fixes over other failures, the largest record among refusals (a broker refuses a whole batch
 * for one record too large), else the first failure; or one the sink refused outright.
 * @ret_token: its source token; @ret_id: its "id" header or NULL; @ret_reason: why. Borrowed.
 * Return: false when nothing failed.
 */
bool publish_culprit(const struct publish *pub, uint64_t *ret_token, const char **ret_id,
		     const char **ret_reason);

/* publish_collect_failures() - serve the reports still due (after a fatal error, up to 2 s). */
void publish_collect_failures(struct publish *pub);

/*
 * publish_halted_row() - the row a poison-row halt named: its id (borrowed, valid until @pub
 * is freed) and its commit LSN. Return: false when no row halted.
 */
bool publish_halted_row(const struct publish *pub, const char **ret_id, lsn_t *ret_lsn);

/* publish_produce_failed_lsn() - the position of a record the sink refused outright, or 0. */
lsn_t publish_produce_failed_lsn(const struct publish *pub);

/*
 * publish_set_poison() - the row of transaction @lsn whose record has "id" header @id fails
 * delivery session after session: when it comes again, its dead letter (with @reason) goes to
 * the dead-letter topic instead, once. Without a dead-letter topic nothing changes. @lsn is 0
 * for a source without positions (the poller), which passes 0 with its rows too.
 */
void publish_set_poison(struct publish *pub, lsn_t lsn, const char *id, const char *reason);

/* publish_broker_state() - sink_broker_state() of this path's sink. */
size_t publish_broker_state(const struct publish *pub, int64_t now_us, char *out, size_t len);

/*
 * publish_stats_section() - register @kind's statistics (for Kafka: the outboxd_kafka_* and
 * outboxd_producer_queue_*capacity* families) as a metrics section of @m, rendered from the first
 * value the sink hands over; a path opened again finds it registered.
 * Return: its id, or -1 when the sink has no statistics.
 */
int publish_stats_section(struct metrics *m, const struct sink_kind *kind);

#endif
