/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RELAY_H
#define OUTBOXD_RELAY_H

/*
 * The pipeline: replication stream -> decode -> route -> produce -> delivery reports ->
 * acktrack -> status update, on one thread, with the failure handling of DESIGN.md: transient
 * failures restart the pipeline from the slot with capped exponential backoff; poison rows and
 * repeated failures of one transaction halt; SIGTERM/SIGINT stop cleanly.
 */

#include <stdbool.h>
#include <stdint.h>

#include "outboxd/util/kv.h"
#include "outboxd/run/metrics.h"
#include "outboxd/connect/router.h"

struct relay_params {
	const struct kv *pg;	       /* libpq keywords */
	const char *slot;
	const char *publication;
	const struct kv *producer;     /* librdkafka settings (bootstrap.servers included) */
	struct router *router;	       /* borrowed; built by the caller from the configuration */
	int64_t status_interval_ms;    /* status.update.interval.ms */
	int slot_max_retries;	       /* slot.max.retries ("slot is active for PID") */
	int64_t slot_retry_delay_ms;   /* slot.retry.delay.ms */
	int64_t shutdown_flush_ms;     /* outboxd.shutdown.flush.ms */
	int64_t backoff_max_ms;	       /* outboxd.restart.backoff.max.ms */
	int halt_after_failures;       /* outboxd.halt.after.failures */
	int64_t stall_warn_ms;	       /* outboxd.stall.warn.ms */
	const char *dlq_topic;	       /* outboxd.errors.deadletterqueue.topic.name, or NULL */
	int64_t heartbeat_interval_ms; /* heartbeat.interval.ms, 0 = off */
	const char *heartbeat_topic;   /* topic.heartbeat.prefix + topic.delimiter + topic.prefix */
	const char *heartbeat_query;   /* heartbeat.action.query, or NULL */
	const char *initial_statements; /* database.initial.statements, or NULL */
	const char *dbname;	       /* database.dbname, for the source block of messages */
	struct metrics *metrics;       /* borrowed; updated as the relay works */
};

/* How relay_run() ended: the process exit code. */
enum relay_exit {
	RELAY_EXIT_CLEAN = 0,	     /* SIGTERM/SIGINT, flushed and confirmed */
	RELAY_EXIT_HALT = 1,	     /* poison row, repeated failure, unexpected stream content */
	RELAY_EXIT_PRECONDITION = 2, /* slot/publication/role/authentication */
};

/**
 * relay_run() - run until a signal, a halt or a failed precondition.
 * @p: borrowed.
 * @signal_fd: a signalfd delivering SIGTERM, SIGINT and SIGHUP (SIGHUP is logged and ignored).
 */
enum relay_exit relay_run(const struct relay_params *p, int signal_fd);

#endif
