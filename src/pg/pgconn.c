/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pg/pgconn.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"

/*
 * Pinned session settings (DESIGN.md "Session settings"): the text output of dates, floats,
 * intervals and bytea must not depend on the server's or the role's defaults.
 */
static const char session_options[] = "-c DateStyle=ISO -c IntervalStyle=postgres "
				      "-c extra_float_digits=3 -c TimeZone=UTC "
				      "-c bytea_output=hex";

/* Defaults that the user's keywords may override. */
static const char *const defaults[][2] = {
	{ "application_name", "outboxd" },
	{ "connect_timeout", "10" },
	{ "keepalives", "1" },
	{ "keepalives_idle", "30" },
	{ "keepalives_interval", "10" },
	{ "keepalives_count", "3" },
	{ "tcp_user_timeout", "60000" },
};

/* Keywords outboxd sets itself and never takes from the user. */
static bool
pinned(const char *key)
{
	return strcmp(key, "replication") == 0 || strcmp(key, "options") == 0 ||
	       strcmp(key, "client_encoding") == 0 || strcmp(key, "dbname") == 0 ||
	       strcmp(key, "expand_dbname") == 0;
}

static void
fold_line(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ')) {
		s[--n] = '\0';
	}
	for (char *p = s; *p; p++) {
		if (*p == '\n' || *p == '\t') {
			*p = ' ';
		}
	}
}

void
pgconn_error_line(PGconn *c, char *errbuf, size_t errlen)
{
	if (!errbuf || !errlen) {
		return;
	}
	snprintf(errbuf, errlen, "%s", c ? PQerrorMessage(c) : "out of memory");
	fold_line(errbuf);
}

void
pgconn_result_line(const PGresult *r, char *errbuf, size_t errlen)
{
	const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);

	if (!errbuf || !errlen) {
		return;
	}
	snprintf(errbuf, errlen, "%s%s%s", PQresultErrorMessage(r), state ? " SQLSTATE " : "",
		 state ? state : "");
	fold_line(errbuf);
}

/* 28P01 bad password, 28000 no pg_hba entry / role not permitted, 3D000 no database. */
static enum pgconn_failure
classify(PGconn *c)
{
	const char *msg = PQerrorMessage(c);

	if (strstr(msg, "password authentication failed") || strstr(msg, "no pg_hba.conf entry") ||
	    strstr(msg, "does not exist") || strstr(msg, "is not permitted to log in") ||
	    strstr(msg, "must be superuser or replication role") ||
	    strstr(msg, "permission denied") || strstr(msg, "password is required") ||
	    strstr(msg, "SSL") || strstr(msg, "certificate")) {
		return PGCONN_PRECONDITION;
	}
	return PGCONN_TRANSIENT;
}

int
pgconn_open(const struct kv *params, bool replication, PGconn **ret,
	    enum pgconn_failure *ret_failure, char *errbuf, size_t errlen)
{
	size_t max = params->n + sizeof(defaults) / sizeof(defaults[0]) + 5, n = 0;
	const char **keys = xcalloc(max, sizeof(*keys));
	const char **vals = xcalloc(max, sizeof(*vals));
	PGconn *c;

	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		if (!kv_get(params, defaults[i][0])) {
			keys[n] = defaults[i][0];
			vals[n++] = defaults[i][1];
		}
	}
	for (size_t i = 0; i < params->n; i++) {
		if (!pinned(params->v[i].key)) {
			keys[n] = params->v[i].key;
			vals[n++] = params->v[i].value;
		}
	}
	keys[n] = "dbname";
	vals[n++] = kv_get(params, "dbname");
	keys[n] = "client_encoding";
	vals[n++] = "UTF8";
	keys[n] = "options";
	vals[n++] = session_options;
	if (replication) {
		keys[n] = "replication";
		vals[n++] = "database";
	}
	keys[n] = NULL;
	vals[n] = NULL;
	/* expand_dbname=0: a dbname that looks like a conninfo string is just a name. */
	c = PQconnectdbParams(keys, vals, 0);
	free(keys);
	free(vals);
	if (PQstatus(c) == CONNECTION_OK) {
		*ret = c;
		return 0;
	}
	if (ret_failure) {
		*ret_failure = c ? classify(c) : PGCONN_TRANSIENT;
	}
	pgconn_error_line(c, errbuf, errlen);
	PQfinish(c);
	return -EIO;
}

int
pgconn_run_statements(PGconn *c, const char *statements, char *errbuf, size_t errlen)
{
	struct buf stmt = BUF_INIT;
	const char *p = statements;
	int rc = 0;

	while (rc == 0 && p && *p) {
		PGresult *r;
		char err[512];

		buf_reset(&stmt);
		for (; *p && !(*p == ';' && p[1] != ';'); p++) {
			buf_add_char(&stmt, *p);
			if (*p == ';') {
				p++; /* ";;" is one literal ';' */
			}
		}
		if (*p == ';') {
			p++;
		}
		if (strspn(buf_cstr(&stmt), " \t\r\n") == stmt.len) {
			continue;
		}
		r = PQexec(c, buf_cstr(&stmt));
		if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
			pgconn_result_line(r, err, sizeof(err));
			errbuf_set(errbuf, errlen,
				   "database.initial.statements: \"%.200s\" failed: %s",
				   buf_cstr(&stmt), err);
			rc = -EIO;
		}
		PQclear(r);
	}
	buf_fini(&stmt);
	return rc;
}
