/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RUN_HEARTBEAT_H
#define OUTBOXD_RUN_HEARTBEAT_H

/*
 * heartbeat.interval.ms: the heartbeat record Debezium writes (router_heartbeat()) and
 * heartbeat.action.query, which runs asynchronously on the relay's ordinary SQL connection so
 * the loop never blocks on it. That connection serves other queries too (the catalog facts of a
 * Relation message): before one of them, heartbeat_settle() reads the heartbeat query's results
 * to the end, because libpq would otherwise discard them, and with them an error that must
 * halt the relay.
 */

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/connect/record.h"
#include "outboxd/connect/router.h"
#include "outboxd/run/outcome.h"
#include "outboxd/run/publish.h"

struct heartbeat_params {
	struct router *router;	 /* borrowed */
	const char *topic;	 /* topic.heartbeat.prefix + topic.delimiter + topic.prefix */
	const char *query;	 /* heartbeat.action.query, or NULL */
	struct metrics *metrics; /* borrowed: refused heartbeat records */
};

/* One session's heartbeat state: embed it, heartbeat_init() it, heartbeat_fini() it. */
struct heartbeat {
	const struct heartbeat_params *p;
	struct record rec;
	bool query_busy;   /* the action query was sent, its results are not all read */
	uint64_t failures; /* refused heartbeat records not yet reported */
	int64_t next_report_us;
};

/* heartbeat_init() - @p is borrowed and must outlive @hb. */
void heartbeat_init(struct heartbeat *hb, const struct heartbeat_params *p);

/* heartbeat_fini() - free the record; @hb may be initialised again. */
void heartbeat_fini(struct heartbeat *hb);

/**
 * heartbeat_beat() - a heartbeat is due: produce its record through @pub (a full queue skips
 * this beat) and send the action query on @sql unless the previous one is still running.
 * Return: OUTCOME_OK, or OUTCOME_HALT / OUTCOME_RESTART with the reason in @why.
 */
enum outcome heartbeat_beat(struct heartbeat *hb, struct publish *pub, PGconn *sql, char *why,
			    size_t whylen);

/**
 * heartbeat_poll() - read the action query's results that arrived, without blocking.
 * Return: OUTCOME_OK; OUTCOME_HALT when the query's table does not exist (42P01, as Debezium
 * fails, DBZ-9247; other errors are logged); OUTCOME_RESTART when the connection failed.
 */
enum outcome heartbeat_poll(struct heartbeat *hb, PGconn *sql, char *why, size_t whylen);

/**
 * heartbeat_settle() - wait for the action query to finish and read its results as
 * heartbeat_poll() does, so @sql is free for a synchronous query.
 * Return: as heartbeat_poll().
 */
enum outcome heartbeat_settle(struct heartbeat *hb, PGconn *sql, char *why, size_t whylen);

#endif
