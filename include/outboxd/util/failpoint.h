/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_FAILPOINT_H
#define OUTBOXD_FAILPOINT_H

/*
 * Crash points for the fault suite (tests/fault): with OUTBOXD_FAILPOINT=NAME[:N] in the
 * environment, the N-th time (default 1st) the relay passes NAME it kills itself with SIGKILL,
 * as a crash would at that instant. NAME[:N]:hang stops the passing thread there for good
 * instead (a wedged main loop, for the liveness endpoint's test). Without the variable every
 * call is a cheap no-op.
 */

#include <stdbool.h>

enum failpoint {
	FAILPOINT_BEFORE_START_REPLICATION, /* "before_start": connected, slot checked, not streaming */
	FAILPOINT_AFTER_BEGIN,		    /* "after_begin": a Begin was just handled */
	FAILPOINT_MID_TRANSACTION,  /* "mid_transaction": a row of an open transaction produced */
	FAILPOINT_AFTER_PRODUCE,    /* "after_produce": handed to librdkafka, no report yet */
	FAILPOINT_AFTER_DELIVERY,   /* "after_delivery": a report arrived, no status update yet */
	FAILPOINT_AFTER_STATUS,	    /* "after_status": a status update was just sent */
	FAILPOINT_SHUTDOWN_FLUSH,   /* "shutdown_flush": SIGTERM, during the producer flush */
	FAILPOINT_POLL_BEFORE_MARK, /* "poll_before_mark": `poll` has a batch's reports, no mark */
	FAILPOINT_COUNT_
};

/**
 * failpoint_init() - arm the failpoint named in @spec ("after_begin", "after_begin:3",
 * "after_begin:3:hang").
 * @spec: borrowed; NULL or "" disarms.
 * Return: 0, or -EINVAL for an unknown name or count.
 */
int failpoint_init(const char *spec);

/* failpoint_hit() - count a pass through @fp; SIGKILL the process when the armed count is reached. */
void failpoint_hit(enum failpoint fp);

/* failpoint_name() - the name of @fp as OUTBOXD_FAILPOINT spells it. Static storage. */
const char *failpoint_name(enum failpoint fp);

#endif
