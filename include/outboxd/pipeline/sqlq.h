/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PIPELINE_SQLQ_H
#define OUTBOXD_PIPELINE_SQLQ_H

/*
 * The relay's periodic statements on its ordinary SQL connection (heartbeat.action.query, the
 * slot's health, the cleanup): sent asynchronously, so the main loop never blocks on them, and
 * one at a time, since a libpq connection runs one statement at a time. Each kind has one place
 * in the queue: a statement that is slow (an action query on a locked table) delays the others
 * instead of piling up copies of itself.
 *
 * The connection also serves synchronous queries (the catalog facts of a Relation message):
 * sqlq_settle() first reads the running statement's results to the end, because libpq would
 * otherwise discard them, and with them an error that must halt the relay. It waits at most
 * SQLQ_SETTLE_MS: a statement still running then (a cleanup DELETE waiting for an application's
 * row lock, an action query on a locked table) is cancelled and sent again after the catalog
 * query, so that no statement of the queue holds the main loop, and with it the stream, longer.
 */

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "outboxd/pipeline/outcome.h"

/* The kinds of statement, in the order they are sent when several wait. */
enum sqlq_kind {
	SQLQ_HEARTBEAT, /* heartbeat.action.query */
	SQLQ_SLOT,	/* the slot's row of pg_replication_slots (slotstat) */
	SQLQ_CLEANUP,	/* outboxd.cleanup.* */
	SQLQ_KINDS,
};

/* How long sqlq_settle() waits for the running statement before it cancels it. */
#define SQLQ_SETTLE_MS 5000

/* The most text parameters a statement takes. */
#define SQLQ_MAX_PARAMS 5

/**
 * sqlq_result_fn - one result of a statement (a multi-statement text has several).
 * @r: borrowed for the call.
 * Return: OUTCOME_OK, or OUTCOME_HALT / OUTCOME_RESTART with the reason in @why; the first
 * that is not OK ends the statement's handling and is what sqlq_poll() returns.
 */
typedef enum outcome (*sqlq_result_fn)(void *arg, const PGresult *r, char *why, size_t whylen);

struct sqlq_job {
	bool queued;		       /* waits to be sent */
	char *sql;		       /* owned */
	char *params[SQLQ_MAX_PARAMS]; /* owned; NULL = SQL NULL */
	int nparams;		       /* 0: sent with PQsendQuery (several statements allowed) */
	sqlq_result_fn fn;
	void *arg;
};

/* One session's queue: embed it, sqlq_init() it, sqlq_fini() it. */
struct sqlq {
	PGconn *conn;	/* borrowed */
	int running;	/* the kind whose results are awaited, -1 = none */
	bool cancelled; /* sqlq_settle() cancelled the running statement */
	bool again;	/* ... and it was cancelled indeed: send it again */
	struct sqlq_job jobs[SQLQ_KINDS];
};

/* sqlq_init() - an empty queue on @conn (borrowed; must outlive the queue's use). */
void sqlq_init(struct sqlq *q, PGconn *conn);

/* sqlq_fini() - forget the queued statements (the connection is the caller's to close). */
void sqlq_fini(struct sqlq *q);

/**
 * sqlq_submit() - queue @sql with @nparams text parameters (copied), sent by the next
 * sqlq_poll() that finds the connection free.
 * Return: false when a statement of @kind is queued or running already (nothing changes: the
 * caller skips this turn), true when queued.
 */
bool sqlq_submit(struct sqlq *q, enum sqlq_kind kind, const char *sql, const char *const *params,
		 int nparams, sqlq_result_fn fn, void *arg);

/* sqlq_pending() - a statement of @kind is queued or running. */
bool sqlq_pending(const struct sqlq *q, enum sqlq_kind kind);

/**
 * sqlq_poll() - read the results that arrived, without blocking, and send the next statement
 * when the connection is free.
 * Return: OUTCOME_OK; OUTCOME_RESTART when the connection failed; what a result function
 * returned otherwise.
 */
enum outcome sqlq_poll(struct sqlq *q, char *why, size_t whylen);

/**
 * sqlq_settle() - wait for the running statement and read its results as sqlq_poll() does, so
 * the connection is free for a synchronous query. Queued statements stay queued. After
 * SQLQ_SETTLE_MS the statement is cancelled (a warning names its kind) and queued again; its
 * result function never sees the cancellation.
 * Return: as sqlq_poll().
 */
enum outcome sqlq_settle(struct sqlq *q, char *why, size_t whylen);

#endif
