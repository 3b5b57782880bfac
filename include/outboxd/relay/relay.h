/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RELAY_RELAY_H
#define OUTBOXD_RELAY_RELAY_H

/*
 * Folder relay/: `outboxd run`: the replication stream as a source, the confirm rule, status
 * updates and the probe, heartbeats, the slot's health, the cleanup of confirmed rows, the
 * session and its restarts. It may call: util, pg, connect, config, sink, obs, pipeline (never
 * snapshot/ or poll/).
 */

/*
 * The log-tailing relay (`outboxd run`): sessions of replication stream -> stream source ->
 * publish -> delivery reports -> acktrack -> status updates, on one thread, with the failure
 * handling of DESIGN.md: a transient failure restarts the session from the slot after a capped
 * exponential backoff; poison rows and repeated failures of one transaction halt; SIGTERM and
 * SIGINT stop cleanly.
 */

#include "outboxd/config/config.h"
#include "outboxd/connect/router.h"
#include "outboxd/obs/metrics.h"
#include "outboxd/pipeline/loop.h"

struct relay_params {
	const struct config *cfg; /* borrowed: every setting the relay reads */
	struct router *router;	  /* borrowed; built by the caller from the configuration */
	struct metrics *metrics;  /* borrowed; updated as the relay works */
};

/* How relay_run() ended: the process exit code. */
enum relay_exit {
	RELAY_EXIT_CLEAN = 0,	     /* SIGTERM/SIGINT, flushed and confirmed */
	RELAY_EXIT_HALT = 1,	     /* poison row, repeated failure, unexpected stream content */
	RELAY_EXIT_PRECONDITION = 2, /* slot/publication/role/authentication */
};

/**
 * relay_run() - run until a signal, a halt or a failed precondition.
 * @p: borrowed. @loop: the process' loop (its signalfd delivers SIGTERM, SIGINT, SIGHUP).
 */
enum relay_exit relay_run(const struct relay_params *p, struct loop *loop);

#endif
