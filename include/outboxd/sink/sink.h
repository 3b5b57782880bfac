/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_SINK_SINK_H
#define OUTBOXD_SINK_SINK_H

/*
 * Folder sink/: the seam between the publish path and a broker client: what a broker client
 * must do for outboxd (struct sink_ops) and the calls the publish path makes through it. It owns
 * no broker: each client (kafka/ today) implements it in a folder of its own. It may call: util.
 */

/*
 * A sink takes records, each with the source's token, and answers each with one delivery
 * report, served on the caller's thread by sink_serve() (DESIGN.md "Data flow": the position is
 * confirmed only after the reports). Above this seam nothing knows which broker it is: the
 * publish path, the sources, the metrics and `outboxd check` speak to a struct sink only, and a
 * new broker is a new folder of files behind it (pipeline/sinks.c picks one), not edits across
 * the tree. Why a table of functions rather than a switch per call: the second and third brokers
 * (NATS, RabbitMQ, Redis) and Kafka transactions each bring a whole set of behaviours; a table
 * keeps each set in its own files, as redis's connection types and ae's backends do.
 *
 * Every operation runs on the caller's thread. Optional operations (transactions) are NULL when
 * a broker has none; their calls then return -ENOTSUP.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/kv.h"

struct sink;

/* One header: name and value (value NULL = a header with a null value). Borrowed. */
struct sink_header {
	const char *name;
	const void *value;
	size_t len;
};

/* One record to send. All pointers are borrowed for the call; the sink copies the bytes. */
struct sink_record {
	const char *topic;
	const void *key; /* NULL = null key */
	size_t key_len;
	const void *value; /* NULL = null value (a tombstone) */
	size_t value_len;
	const struct sink_header *headers;
	size_t nheaders;
	int32_t partition;    /* -1: the broker client's partitioner chooses */
	int64_t timestamp_ms; /* 0: the client's current time */
};

/* What a failed delivery report says beyond its reason (sink_report_failure()). */
struct sink_failure {
	const void *id; /* the record's "id" header (the outbox row id), NULL if none; borrowed */
	size_t id_len;
	size_t size;  /* key and value bytes */
	bool refused; /* a refusal no retry fixes (too large, not authorized, a policy) */
};

/*
 * Called from sink_serve(), sink_flush() and sink_discard() once per delivery report.
 * @token: what sink_send() was given. @ok: persisted by the broker. @reason: borrowed error text
 * when !ok (the broker's error and, for a refusal no retry fixes, what to do).
 */
typedef void (*sink_on_delivery)(void *opaque, uint64_t token, bool ok, const char *reason);

/*
 * A broker client's own statistics, as its metrics render them: a fixed-size value the client
 * hands over (sink_on_stats) and a function that renders a copy of it as Prometheus families,
 * @now_us - @set_us after it was handed over (the shape of obs/metrics.h's struct
 * metrics_section, which the publish path registers it as). The metrics copy the value, so the
 * rendering may run on another thread.
 */
struct sink_stats_kind {
	const char *name; /* unique among sections: "kafka" */
	size_t size;	  /* bytes of one value */
	void (*render)(const void *stats, int64_t now_us, int64_t set_us, struct buf *out);
};

/* Called from sink_serve() with a value of the sink's stats kind, borrowed for the call. */
typedef void (*sink_on_stats)(void *opaque, const void *stats);

/*
 * One line of `outboxd check`: @level 0 ok, 1 warn (does not fail the check), 2 FAIL; @what and
 * @detail borrowed for the call (diagnose_line() prints them).
 */
typedef void (*sink_line)(void *arg, int level, const char *what, const char *detail);

/* What a sink is opened with. Borrowed for the call of open(). */
struct sink_params {
	const struct kv *settings; /* the client's own settings, translated by config */
	sink_on_delivery on_delivery;
	sink_on_stats on_stats; /* NULL: the statistics are not asked for */
	void *opaque;		/* passed to both */
};

/*
 * One broker client: how to open it, how to check it without opening it for publishing, and
 * what its statistics are. One constant per client (kafkasink_kind).
 */
struct sink_kind {
	const char *name; /* "kafka", for logs */
	/*
	 * The words the publish path's messages use for this broker, so that they name what the
	 * user configures: the client ("producer"), its library ("librdkafka"), the setting that
	 * bounds a record ("message.max.bytes") and what to raise when a record is over it.
	 */
	const char *client, *library, *size_setting, *size_fix;
	/* Return: 0, or -EINVAL with the failing setting in @errbuf (values never shown). */
	int (*open)(const struct sink_params *p, struct sink **ret, char *errbuf, size_t errlen);
	/*
	 * `outboxd check`: the brokers answer with @settings, the connection's security; one
	 * line each through @line. Return: false when a FAIL line was written.
	 */
	bool (*check)(const struct kv *settings, int timeout_ms, sink_line line, void *arg);
	const struct sink_stats_kind *stats; /* NULL: none */
};

/* The operations of an open sink; see the sink_*() calls below for each contract. */
struct sink_ops {
	int (*send)(struct sink *s, const struct sink_record *rec, uint64_t token, char *errbuf,
		    size_t errlen);
	void (*serve)(struct sink *s);
	int (*flush)(struct sink *s, int64_t timeout_ms);
	int (*wake_fd)(const struct sink *s);
	bool (*fatal)(struct sink *s, char *errbuf, size_t errlen);
	bool (*precondition)(struct sink *s, char *errbuf, size_t errlen);
	int (*queue_len)(const struct sink *s);
	struct sink_failure (*report_failure)(const struct sink *s);
	size_t (*broker_state)(const struct sink *s, int64_t now_us, char *out, size_t len);
	int64_t (*max_record_bytes)(const struct sink *s);
	int (*discard)(struct sink *s, int64_t inflight_ms, char *fatal, size_t fatallen);
	/* optional: NULL when the broker has no transactions */
	int (*txn_begin)(struct sink *s, char *errbuf, size_t errlen);
	int (*txn_commit)(struct sink *s, const void *position, size_t len, char *errbuf,
			  size_t errlen);
	int (*txn_abort)(struct sink *s, char *errbuf, size_t errlen);
};

/* The head of every open sink: an implementation's struct starts with it. */
struct sink {
	const struct sink_ops *ops;
	const struct sink_kind *kind;
};

/**
 * sink_send() - hand one record to the broker client, as token @token (heartbeats included).
 * Return: 0; -EAGAIN when the client's queue is full (keep the record, serve reports, retry);
 * -EMSGSIZE when the record exceeds the broker's record size (a poison row); -ESHUTDOWN after a
 * fatal client error (restart the pipeline); -EINVAL otherwise, with the reason in @errbuf.
 */
int sink_send(struct sink *s, const struct sink_record *rec, uint64_t token, char *errbuf,
	      size_t errlen);

/* sink_serve() - serve the delivery reports, statistics and log lines waiting now; never blocks. */
void sink_serve(struct sink *s);

/**
 * sink_flush() - wait up to @timeout_ms for every record's delivery report (callbacks run).
 * Return: 0 when nothing is left, -ETIMEDOUT otherwise.
 */
int sink_flush(struct sink *s, int64_t timeout_ms);

/*
 * sink_wake_fd() - a descriptor that turns readable when reports or other events wait, for the
 * main loop's poll(2); sink_serve() drains it. -1 for a sink that never wakes anybody.
 */
int sink_wake_fd(const struct sink *s);

/* sink_fatal() - the client can deliver nothing more (the text in @errbuf): restart. */
bool sink_fatal(struct sink *s, char *errbuf, size_t errlen);

/*
 * sink_precondition() - a broker refused what no retry fixes (a login, a certificate), reason
 * and fix in @errbuf: the process stops with exit 2 instead of retrying for ever.
 */
bool sink_precondition(struct sink *s, char *errbuf, size_t errlen);

/* sink_queue_len() - records waiting for a delivery report (queued or in flight). */
int sink_queue_len(const struct sink *s);

/*
 * sink_report_failure() - inside the delivery callback of a failed report: the rest of what it
 * says, borrowed for the callback (all zero outside one).
 */
struct sink_failure sink_report_failure(const struct sink *s);

/*
 * sink_broker_state() - what the client last said about its brokers, and how long ago, for the
 * stall warning. Return: the length written (snprintf's), 0 if it never said anything.
 */
size_t sink_broker_state(const struct sink *s, int64_t now_us, char *out, size_t len);

/* sink_max_record_bytes() - the largest record the broker takes, for the poison-row text. */
int64_t sink_max_record_bytes(const struct sink *s);

/**
 * sink_discard() - end the sink: drop what is queued and unsent, give what is in flight up to
 * @inflight_ms for the broker's answer, drop the rest, and free it. The reports of dropped
 * records go to the callback as failures. NULL allowed.
 * @fatal: filled with a fatal error the client raised while ending ("" if none); may be NULL.
 * Return: how many records were dropped after the wait.
 */
int sink_discard(struct sink *s, int64_t inflight_ms, char *fatal, size_t fatallen);

/* sink_transactional() - the sink has transactions (sink_txn_*() do not return -ENOTSUP). */
bool sink_transactional(const struct sink *s);

/*
 * sink_txn_begin(), sink_txn_commit(), sink_txn_abort() - a transaction of records: the records
 * sent between begin and commit become visible together, with @position (the source's position
 * they reach, bytes the sink stores beside them) or not at all.
 * Return: 0, -ENOTSUP when the sink has no transactions, another negative code with the reason
 * in @errbuf.
 */
int sink_txn_begin(struct sink *s, char *errbuf, size_t errlen);
int sink_txn_commit(struct sink *s, const void *position, size_t len, char *errbuf, size_t errlen);
int sink_txn_abort(struct sink *s, char *errbuf, size_t errlen);

#endif
