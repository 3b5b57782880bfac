/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/run/sqlq.h"

#include <stdlib.h>

#include "outboxd/pg/pgconn.h"
#include "outboxd/util/mem.h"

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
			q->running = -1;
			if (wait && PQstatus(q->conn) == CONNECTION_BAD) {
				pgconn_error_line(q->conn, why, whylen);
				return OUTCOME_RESTART;
			}
			return o;
		}
		if (o == OUTCOME_OK) {
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

enum outcome
sqlq_settle(struct sqlq *q, char *why, size_t whylen)
{
	return results(q, true, why, whylen);
}
