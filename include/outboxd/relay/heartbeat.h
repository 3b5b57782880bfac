/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RELAY_HEARTBEAT_H
#define OUTBOXD_RELAY_HEARTBEAT_H

/*
 * heartbeat.interval.ms: the heartbeat record Debezium writes (router_heartbeat()) and
 * heartbeat.action.query, which runs through the session's statement queue (sqlq) on the
 * relay's ordinary SQL connection, so the loop never blocks on it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/connect/record.h"
#include "outboxd/connect/router.h"
#include "outboxd/pipeline/outcome.h"
#include "outboxd/pipeline/publish.h"
#include "outboxd/pipeline/sqlq.h"

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
	uint64_t failures; /* refused heartbeat records not yet reported */
	int64_t next_report_us;
};

/* heartbeat_init() - @p is borrowed and must outlive @hb. */
void heartbeat_init(struct heartbeat *hb, const struct heartbeat_params *p);

/* heartbeat_fini() - free the record; @hb may be initialised again. */
void heartbeat_fini(struct heartbeat *hb);

/**
 * heartbeat_beat() - a heartbeat is due: produce its record through @pub (a full queue skips
 * this beat) and queue the action query on @q unless the previous one is still pending. Its
 * results halt the relay when the query's table does not exist (42P01, as Debezium fails,
 * DBZ-9247); other errors are logged.
 * Return: OUTCOME_OK, or OUTCOME_HALT with the reason in @why.
 */
enum outcome heartbeat_beat(struct heartbeat *hb, struct publish *pub, struct sqlq *q, char *why,
			    size_t whylen);

#endif
