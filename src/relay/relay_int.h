/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RELAY_RELAY_INT_H
#define OUTBOXD_RELAY_RELAY_INT_H

/*
 * Private to the relay: one session's state and what lives across sessions, shared by relay.c
 * (sessions, restarts, the main loop's turn) and relay_jobs.c (the periodic work of a turn).
 */

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "outboxd/pipeline/loop.h"
#include "outboxd/pipeline/periodic.h"
#include "outboxd/pipeline/publish.h"
#include "outboxd/pipeline/sqlq.h"
#include "outboxd/pipeline/stall.h"
#include "outboxd/pipeline/supervise.h"
#include "outboxd/relay/cleanup.h"
#include "outboxd/relay/feedback.h"
#include "outboxd/relay/heartbeat.h"
#include "outboxd/relay/relay.h"
#include "outboxd/relay/sendnow.h"
#include "outboxd/relay/slotwatch.h"
#include "outboxd/relay/stream.h"
#include "outboxd/util/lsn.h"

/* The stall watchdog and the gauges look this often; the loop turns at least this often. */
#define TICK_US INT64_C(1000000)

struct relay;

/* One pipeline session. It starts zeroed, so nothing of the previous one carries over. */
struct session {
	struct relay *r;
	PGconn *sql;	       /* the ordinary connection: checks, catalog facts, the queue's */
	struct sqlq q;	       /* the asynchronous statements on it: heartbeat, slot health */
	struct cleanup cl;     /* outboxd.cleanup.*, through q */
	struct pgstream *conn; /* the replication connection */
	struct stream *st;     /* the stream as a source of rows, and the confirm rule */
	struct publish *pub;
	struct heartbeat hb;
	struct periodic jobs; /* heartbeat, cleanup, gauges, slot statistics */
	struct loop_deadlines dl;
	struct feedback fb;	  /* status updates, the probe */
	uint64_t stall_delivered; /* delivery reports the stall watchdog has seen */
	lsn_t stall_confirmed;
	struct sendnow sn; /* send at once while live */
	/*
	 * A Relation message brought a type the router cannot convert (typecheck.h): what came
	 * before it is flushed and confirmed, as before a halt, then exit 2.
	 */
	bool type_refused;
	char why[2048]; /* the reason for a restart or halt */
};

/*
 * The transaction a failed session blames (note_failure()): the one the failed report belongs
 * to, not whatever transaction happens to be open; the supervisor counts failures by it.
 */
struct failing {
	lsn_t lsn;		 /* its commit LSN, 0 = none */
	char id[256];		 /* the refused record's "id" header */
	lsn_t dead_lettered_lsn; /* the row that goes to the dead-letter topic: publish_set_poison() */
	char dead_lettered_id[256];
};

/* What lives across sessions: the settings as the modules take them, the loop, the watchdog. */
struct relay {
	const struct relay_params *p;
	const struct config *cfg;
	struct loop *loop;
	struct stream_params sp;
	struct publish_params pp;
	struct heartbeat_params hp;
	struct stall stall; /* a broker outage outlives sessions: so does its clock */
	struct slotwatch sw;
	struct cleanup_params clp;
	struct supervise sv; /* the backoff, halt after failures, dead letter once */
	struct failing fail;
	char poison_reason[2048];
	bool interval_said; /* the capped status-update interval was logged */
	struct session s;
};

/*
 * relay_jobs_start() - declare the session's periodic jobs (heartbeat, cleanup, gauges, slot
 * statistics) once its stream started, and arm the loop's deadline for the first.
 */
void relay_jobs_start(struct session *s);

/*
 * relay_jobs_turn() - the periodic jobs that are due, one step each; then the queued statements'
 * results, and the next one; the loop's deadline for the next due job.
 * Return: OUTCOME_OK, or what ends the session (the reason in s->why).
 */
enum outcome relay_jobs_turn(struct session *s);

#endif
