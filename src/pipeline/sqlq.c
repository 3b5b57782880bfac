/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pipeline/sqlq.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgconn.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/now.h"

#define MOD "sqlq"

static const char *const kind_names[SQLQ_KINDS] = {
	[SQLQ_HEARTBEAT] = "heartbeat.action.query",
	[SQLQ_SLOT] = "the slot's health query",
	[SQLQ_CLEANUP] = "the cleanup's statement",
};

void
sqlq_init(struct sqlq *q, PGconn *conn)
{
	*q = (struct sqlq){ .conn = conn, .running = -1 };
}

static void
job_clear(struct sqlq_job *j)
{
	free(j->sql);
	for (int i = 0; i < j->nparams; i++) {
		free(j->params[i]);
	}
	*j = (struct sqlq_job){ 0 };
}

void
sqlq_fini(struct sqlq *q)
{
	for (int k = 0; k < SQLQ_KINDS; k++) {
		job_clear(&q->jobs[k]);
	}
	q->running = -1;
}

bool
sqlq_pending(const struct sqlq *q, enum sqlq_kind kind)
{
	return q->jobs[kind].queued || q->running == (int)kind;
}

bool
sqlq_submit(struct sqlq *q, enum sqlq_kind kind, const char *sql, const char *const *params,
	    int nparams, sqlq_result_fn fn, void *arg)
{
	struct sqlq_job *j = &q->jobs[kind];

	if (sqlq_pending(q, kind) || nparams > SQLQ_MAX_PARAMS) {
		return false;
	}
	job_clear(j);
	*j = (struct sqlq_job){
		.queued = true, .sql = xstrdup(sql), .nparams = nparams, .fn = fn, .arg = arg
	};
	for (int i = 0; i < nparams; i++) {
		j->params[i] = params[i] ? xstrdup(params[i]) : NULL;
	}
	return true;
}

/* Sends the first queued statement; false when libpq refused it (the connection is bad). */
static bool
send_next(struct sqlq *q)
{
	for (int k = 0; k < SQLQ_KINDS; k++) {
		struct sqlq_job *j = &q->jobs[k];
		int ok;

		if (!j->queued) {
			continue;
		}
		j->queued = false;
		ok = j->nparams ? PQsendQueryParams(q->conn, j->sql, j->nparams, NULL,
						    (const char *const *)j->params, NULL, NULL, 0) :
				  PQsendQuery(q->conn, j->sql);
		if (!ok) {
			return false;
		}
		q->running = k;
		return true;
	}
	return true;
}

/* Reads the running statement's results; with @wait until it is done, else what has arrived. */
static enum outcome
results(struct sqlq *q, bool wait, char *why, size_t whylen)
{
	enum outcome o = OUTCOME_OK;
	PGresult *r;

	if (q->running < 0) {
		return OUTCOME_OK;
	}
	if (!wait && PQconsumeInput(q->conn) == 0) {
		pgconn_error_line(q->conn, why, whylen);
		return OUTCOME_RESTART;
	}
	while (wait || !PQisBusy(q->conn)) {
		struct sqlq_job *j = &q->jobs[q->running];

		if (!(r = PQgetResult(q->conn))) {
			/* cancelled by sqlq_settle(): its turn comes again after the catalog query */
			j->queued = j->queued || q->again;
			q->running = -1;
			q->cancelled = q->again = false;
			if (wait && PQstatus(q->conn) == CONNECTION_BAD) {
				pgconn_error_line(q->conn, why, whylen);
				return OUTCOME_RESTART;
			}
			return o;
		}
		if (q->cancelled && PQresultStatus(r) == PGRES_FATAL_ERROR &&
		    PQresultErrorField(r, PG_DIAG_SQLSTATE) &&
		    strcmp(PQresultErrorField(r, PG_DIAG_SQLSTATE), "57014") == 0) {
			q->again = true; /* query_canceled: ours, not the statement's failure */
		} else if (o == OUTCOME_OK && !q->again) {
			o = j->fn(j->arg, r, why, whylen);
		}
		PQclear(r);
	}
	return o;
}

enum outcome
sqlq_poll(struct sqlq *q, char *why, size_t whylen)
{
	enum outcome o = results(q, false, why, whylen);

	if (o != OUTCOME_OK || q->running >= 0) {
		return o;
	}
	if (!send_next(q)) {
		pgconn_error_line(q->conn, why, whylen);
		return OUTCOME_RESTART;
	}
	return OUTCOME_OK;
}

/* Waits until libpq holds a whole result (or the connection failed), until @deadline_us. */
static bool
arrived(PGconn *c, int64_t deadline_us)
{
	for (;;) {
		struct pollfd p = { .fd = PQsocket(c), .events = POLLIN };
		int64_t left_ms;

		if (PQconsumeInput(c) == 0 || !PQisBusy(c)) {
			return true; /* a failure is for results() to report */
		}
		left_ms = (deadline_us - now_monotonic_us()) / 1000;
		if (left_ms <= 0) {
			return false;
		}
		if (poll(&p, 1, (int)left_ms) < 0 && errno != EINTR) {
			return true;
		}
	}
}

/* Asks the server to cancel the running statement; its results then end soon. */
static void
cancel(struct sqlq *q)
{
	PGcancel *c = PQgetCancel(q->conn);
	char err[256] = "";

	log_warn(MOD,
		 "%s still ran after %d ms while the relay needed the connection for a catalog "
		 "query: cancelled, it runs again afterwards",
		 kind_names[q->running], SQLQ_SETTLE_MS);
	if (!c || !PQcancel(c, err, sizeof(err))) {
		log_warn(MOD, "could not cancel %s: %s; waiting for it", kind_names[q->running],
			 err[0] ? err : "no cancel handle");
	} else {
		q->cancelled = true;
	}
	PQfreeCancel(c);
}

enum outcome
sqlq_settle(struct sqlq *q, char *why, size_t whylen)
{
	int64_t deadline = now_monotonic_us() + (int64_t)SQLQ_SETTLE_MS * 1000;
	enum outcome o;

	/* Whole results first, each read as sqlq_poll() reads them; the bound, then the cancel. */
	while (q->running >= 0) {
		if (!arrived(q->conn, deadline)) {
			cancel(q);
			return results(q, true, why, whylen);
		}
		if ((o = results(q, false, why, whylen)) != OUTCOME_OK) {
			return o;
		}
	}
	return OUTCOME_OK;
}
