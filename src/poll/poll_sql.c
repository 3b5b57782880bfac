/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The polling publisher's statements on its session's connection (poll_int.h): how a failed
 * one is judged, identifiers quoted, columns looked up. Shared by the cycle (poll.c) and the
 * side work (poll_upkeep.c), so neither calls the other back.
 */
#include <string.h>

#include "outboxd/pg/pgconn.h"
#include "outboxd/util/errbuf.h"
#include "poll_int.h"

/* A failed statement: a precondition (exit 2 with the fix) or transient (restart). */
enum outcome
poll_failed(struct poller *s, PGresult *r, const char *what)
{
	char line[1500];
	enum pgconn_failure f;

	if (!r) {
		pgconn_error_line(s->sql, line, sizeof(line));
		f = PGCONN_TRANSIENT;
	} else {
		f = pgconn_result_failure(r, line, sizeof(line));
	}
	PQclear(r);
	errbuf_set(s->why, sizeof(s->why), "%s: %s", what, line);
	return f == PGCONN_PRECONDITION ? OUTCOME_PRECONDITION : OUTCOME_RESTART;
}

enum outcome
poll_exec(struct poller *s, const char *q, int n, const char *const *params, const char *what,
	  PGresult **ret)
{
	PGresult *r = PQexecParams(s->sql, q, n, NULL, params, NULL, NULL, 0);

	if (!r || (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)) {
		return poll_failed(s, r, what);
	}
	if (ret) {
		*ret = r;
	} else {
		PQclear(r);
	}
	return OUTCOME_OK;
}

void
poll_add_ident(struct poller *s, struct buf *q, const char *name)
{
	char *id = PQescapeIdentifier(s->sql, name, strlen(name));

	buf_add_str(q, id);
	PQfreemem(id);
}

int
poll_column(const struct poll_table *t, const char *name)
{
	for (int i = 0; i < t->rel->ncols; i++) {
		if (strcmp(t->rel->cols[i].name, name) == 0) {
			return i;
		}
	}
	return -1;
}
