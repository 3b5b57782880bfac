/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pg/pgconn.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
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

/*
 * The classification table (docs/failures.md, "PostgreSQL's failures, by code"). A row names a
 * whole SQLSTATE (5 characters) or a class (its first 2); whole codes are looked at first.
 * Every code not listed is transient: retrying costs a log line per backoff, exiting on a
 * failure that would have passed costs an outage.
 */
static const struct {
	const char *code;
	enum pgconn_failure failure;
	const char *fix; /* for operations staff; NULL for what is not theirs to fix */
} table[] = {
	{ "28P01", PGCONN_PRECONDITION, "check database.user and database.password" },
	{ "28", PGCONN_PRECONDITION,
	  "let this role and host in: an entry in the server's pg_hba.conf (a \"replication\" "
	  "entry for the replication connection) and LOGIN for the role" },
	{ "3D", PGCONN_PRECONDITION, "check database.dbname" },
	{ "3F", PGCONN_PRECONDITION,
	  "create the schema the server names, or correct the setting that names it" },
	{ "42501", PGCONN_PRECONDITION,
	  "grant the role what the server names: REPLICATION (sql/role.sql) to stream, CONNECT "
	  "on the database, SELECT on the outbox tables" },
	{ "42704", PGCONN_PRECONDITION,
	  "create what the server names: a slot with sql/slot.sql or \"outboxd slot create "
	  "FILE...\" (or start outboxd with outboxd.slot.create=true), a publication with "
	  "sql/publication.sql" },
	{ "42P01", PGCONN_PRECONDITION,
	  "create the table the server names, or correct the setting that names it" },
	{ "42", PGCONN_PRECONDITION, "correct the statement or the name the server points at" },
	{ "0A", PGCONN_PRECONDITION,
	  "the server cannot do what outboxd asks (logical decoding needs a primary with "
	  "wal_level=logical)" },
	{ "22023", PGCONN_PRECONDITION,
	  "a value outboxd passed is not valid on this server (slot, publication or plugin "
	  "options)" },
	{ "55000", PGCONN_PRECONDITION,
	  "the server cannot use the slot as it is: an invalidated slot must be dropped and "
	  "created again, then the outbox rows committed since the last delivered one published "
	  "again; a slot of another database or kind needs a slot of outboxd's own; "
	  "logical decoding needs wal_level=logical" },
	{ "55006", PGCONN_BUSY, NULL },
	{ "57P04", PGCONN_PRECONDITION, "the database was dropped: check database.dbname" },
};

/*
 * Failures libpq finds on the client's side before or during the TLS handshake, which no
 * server reports and so have no SQLSTATE: the TLS settings do not fit the server, and a retry
 * fails the same way. They are the one case read from libpq's own words (its fixed messages;
 * outboxd never calls setlocale(), so libpq does not translate them). A network cut in the
 * handshake ("SSL SYSCALL error", "closed the connection unexpectedly") is not among them:
 * it stays transient, as does anything not listed.
 */
static const struct {
	const char *words;
	const char *fix;
} local_table[] = {
	{ "certificate verify failed",
	  "the server's certificate is not signed by the CA in database.sslrootcert: give the CA "
	  "that signed it" },
	{ "does not match host name",
	  "the server's certificate does not name database.hostname: connect by a name the "
	  "certificate holds, or give it one" },
	{ "root certificate file",
	  "database.sslrootcert names no readable file: give the CA's certificate file" },
	{ "could not open certificate file",
	  "database.sslcert names no readable file: give the client certificate file" },
	{ "could not read certificate file",
	  "database.sslcert is not a PEM certificate: give the client certificate file" },
	{ "certificate present, but not private key file",
	  "database.sslkey names no readable file: give the client certificate's key" },
	{ "has group or world access",
	  "database.sslkey may be read by others: chmod 0600 the key file (or 0640 owned by root)" },
	{ "could not load private key file",
	  "database.sslkey is not the PEM key of database.sslcert: give the matching key" },
	{ "server does not support SSL, but SSL was required",
	  "the server has ssl=off: turn TLS on there, or lower database.sslmode" },
	{ "invalid sslmode value",
	  "database.sslmode is one of disable, allow, prefer, require, verify-ca, verify-full" },
};

const char *
pgconn_local_fix(const char *message)
{
	for (size_t i = 0; message && i < sizeof(local_table) / sizeof(local_table[0]); i++) {
		if (strstr(message, local_table[i].words)) {
			return local_table[i].fix;
		}
	}
	return NULL;
}

/* The server asked for a password and outboxd had none. */
static const char needs_password_fix[] = "the server asks for a password: set database.password";

static bool
is_sqlstate(const char *s)
{
	for (int i = 0; i < 5; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'A' && s[i] <= 'Z'))) {
			return false;
		}
	}
	return true;
}

/* The table's row for @sqlstate: its whole code, else its class; -1 for none. */
static int
row_of(const char *sqlstate)
{
	int cls = -1;

	if (!sqlstate || strlen(sqlstate) != 5 || !is_sqlstate(sqlstate)) {
		return -1;
	}
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(table[i].code, sqlstate) == 0) {
			return (int)i;
		}
		if (cls < 0 && strlen(table[i].code) == 2 &&
		    strncmp(table[i].code, sqlstate, 2) == 0) {
			cls = (int)i;
		}
	}
	return cls;
}

enum pgconn_failure
pgconn_classify(const char *sqlstate, unsigned flags)
{
	int row = row_of(sqlstate);

	if (row >= 0) {
		return table[row].failure;
	}
	return !sqlstate && (flags & PGCONN_NEEDS_PASSWORD) ? PGCONN_PRECONDITION :
							      PGCONN_TRANSIENT;
}

const char *
pgconn_fix(const char *sqlstate, unsigned flags)
{
	int row = row_of(sqlstate);

	if (row >= 0) {
		return table[row].fix;
	}
	return !sqlstate && (flags & PGCONN_NEEDS_PASSWORD) ? needs_password_fix : NULL;
}

/*
 * The next "<severity>:  <SQLSTATE>: " at or after @p (see pgconn_classify_message()): the
 * severity starts the message or a line, or follows libpq's "...failed: "; it has no space or
 * colon. Returns where the SQLSTATE starts, or NULL.
 */
static const char *
next_sqlstate(const char *p)
{
	for (const char *q = strstr(p, ":  "); q; q = strstr(q + 1, ":  ")) {
		const char *sev = q;

		while (sev > p && sev[-1] != ' ' && sev[-1] != '\n' && sev[-1] != ':') {
			sev--;
		}
		if (sev == q || !(sev == p || sev[-1] == '\n' ||
				  (sev - p >= 2 && sev[-1] == ' ' && sev[-2] == ':'))) {
			continue;
		}
		if (strlen(q + 3) >= 7 && is_sqlstate(q + 3) && q[8] == ':' && q[9] == ' ') {
			return q + 3;
		}
	}
	return NULL;
}

enum pgconn_failure
pgconn_classify_message(const char *message, unsigned flags, char ret_sqlstate[6])
{
	enum pgconn_failure worst = PGCONN_TRANSIENT;
	char code[6] = "";

	for (const char *p = next_sqlstate(message); p; p = next_sqlstate(p + 5)) {
		char got[6];
		enum pgconn_failure f;

		memcpy(got, p, 5);
		got[5] = '\0';
		f = pgconn_classify(got, flags);
		/* PGCONN_PRECONDITION outweighs PGCONN_BUSY, which outweighs PGCONN_TRANSIENT */
		if (!code[0] || (f == PGCONN_PRECONDITION && worst != PGCONN_PRECONDITION) ||
		    (f == PGCONN_BUSY && worst == PGCONN_TRANSIENT)) {
			worst = f;
			memcpy(code, got, sizeof(code));
		}
	}
	if (!code[0]) {
		worst = pgconn_classify(NULL, flags);
	}
	if (ret_sqlstate) {
		memcpy(ret_sqlstate, code, sizeof(code));
	}
	return worst;
}

enum pgconn_failure
pgconn_result_failure(const PGresult *r, char *errbuf, size_t errlen)
{
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	enum pgconn_failure f = pgconn_classify(state, 0);
	const char *fix = pgconn_fix(state, 0);
	char line[1024];

	if (!r) {
		errbuf_set(errbuf, errlen, "no result from the server (out of memory)");
		return PGCONN_TRANSIENT;
	}
	pgconn_result_line(r, line, sizeof(line));
	errbuf_set(errbuf, errlen, "%s%s%s", line, f == PGCONN_PRECONDITION && fix ? "; " : "",
		   f == PGCONN_PRECONDITION && fix ? fix : "");
	return f;
}

int
pgconn_failure_code(enum pgconn_failure f)
{
	return f == PGCONN_PRECONDITION ? -EPERM : f == PGCONN_BUSY ? -EBUSY : -EIO;
}

/*
 * libpq's message for a failed connection as one line: the lines of all attempts, without the
 * LOCATION lines PQERRORS_VERBOSE adds and without a line already said (sslmode=prefer tries
 * twice); then the fix of a precondition.
 */
static void
connect_error_line(PGconn *c, enum pgconn_failure f, const char *fix, char *errbuf, size_t errlen)
{
	struct buf out = BUF_INIT;
	const char *msg = c ? PQerrorMessage(c) : "out of memory";

	for (const char *p = msg; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *dup = NULL;

		while (n && (*p == '\t' || *p == ' ')) { /* libpq indents its hints */
			p++;
			n--;
		}

		if (n && strncmp(p, "LOCATION:  ", 11) != 0) {
			dup = xstrndup(p, n);
			if (!strstr(buf_cstr(&out), dup)) {
				buf_add_fmt(&out, "%s%s", out.len ? " " : "", dup);
			}
		}
		free(dup);
		p += n + (nl != NULL);
	}
	if (f == PGCONN_PRECONDITION && fix) {
		buf_add_fmt(&out, "; %s", fix);
	}
	if (errbuf && errlen) {
		snprintf(errbuf, errlen, "%s", buf_cstr(&out));
		fold_line(errbuf);
	}
	buf_fini(&out);
}

/* connect_timeout as libpq reads it: whole seconds, at least 2; 0 or less waits forever. */
static int
timeout_ms(const char *const *keys, const char *const *vals)
{
	int s = 0;

	for (int i = 0; keys[i]; i++) {
		if (strcmp(keys[i], "connect_timeout") == 0 && vals[i]) {
			s = atoi(vals[i]);
		}
	}
	return s <= 0 ? -1 : (s < 2 ? 2 : s) * 1000;
}

/*
 * Drives a connection PQconnectStartParams() began to its end, as PQconnectdbParams() does
 * (PQconnectPoll() until OK or FAILED, poll(2) on the socket in between). It exists so that the
 * error verbosity is set before the server can answer (pgconn_classify_message()). libpq
 * ignores connect_timeout here, so this waits at most @ms for each step; when a step times
 * out, the attempt fails with the reason in @why (libpq itself would try the next host of a
 * list first).
 */
static void
complete(PGconn *c, int ms, char *why, size_t whylen)
{
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;

	while (st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED) {
		struct pollfd p = { .fd = PQsocket(c),
				    .events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT };
		int n = poll(&p, 1, ms);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			errbuf_set(why, whylen,
				   "connection to server at \"%s\", port %s failed: poll: %s",
				   PQhost(c), PQport(c), strerror(errno));
			return;
		}
		if (n == 0) {
			errbuf_set(
				why, whylen,
				"connection to server at \"%s\", port %s failed: timeout expired "
				"after %d s (connect_timeout)",
				PQhost(c), PQport(c), ms / 1000);
			return;
		}
		st = PQconnectPoll(c);
	}
}

/* The keywords of a connection: outboxd's defaults, the user's, then the pinned ones. */
static void
keywords(const struct kv *params, bool replication, const char ***ret_keys, const char ***ret_vals)
{
	size_t max = params->n + sizeof(defaults) / sizeof(defaults[0]) + 5, n = 0;
	const char **keys = xcalloc(max, sizeof(*keys));
	const char **vals = xcalloc(max, sizeof(*vals));

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
	*ret_keys = keys;
	*ret_vals = vals;
}

/* A failed connection: its class and its line (@timeout: complete()'s reason, or ""). */
static enum pgconn_failure
open_failed(PGconn *c, const char *timeout, char *errbuf, size_t errlen)
{
	unsigned flags = c && PQconnectionNeedsPassword(c) ? PGCONN_NEEDS_PASSWORD : 0;
	enum pgconn_failure f = PGCONN_TRANSIENT;
	const char *fix;
	char state[6] = "";

	if (timeout[0]) {
		errbuf_set(errbuf, errlen, "%s", timeout);
		return PGCONN_TRANSIENT; /* the server never answered */
	}
	if (c) {
		f = pgconn_classify_message(PQerrorMessage(c), flags, state);
	}
	/* 55006 answers START_REPLICATION, never a connection: nothing to wait for here */
	f = f == PGCONN_BUSY ? PGCONN_TRANSIENT : f;
	fix = pgconn_fix(state[0] ? state : NULL, flags);
	if (c && !state[0] && f == PGCONN_TRANSIENT &&
	    (fix = pgconn_local_fix(PQerrorMessage(c))) != NULL) {
		f = PGCONN_PRECONDITION;
	}
	connect_error_line(c, f, fix, errbuf, errlen);
	return f;
}

int
pgconn_open(const struct kv *params, bool replication, PGconn **ret,
	    enum pgconn_failure *ret_failure, char *errbuf, size_t errlen)
{
	const char **keys, **vals;
	enum pgconn_failure f;
	char timeout[256] = "";
	PGconn *c;
	int ms;

	keywords(params, replication, &keys, &vals);
	/* expand_dbname=0: a dbname that looks like a conninfo string is just a name. */
	c = PQconnectStartParams(keys, vals, 0);
	ms = timeout_ms(keys, vals);
	free(keys);
	free(vals);
	if (c && PQstatus(c) != CONNECTION_BAD) {
		/* before the server can answer: its SQLSTATE into libpq's message */
		PQsetErrorVerbosity(c, PQERRORS_VERBOSE);
		complete(c, ms, timeout, sizeof(timeout));
	}
	if (c && PQstatus(c) == CONNECTION_OK) {
		PQsetErrorVerbosity(c, PQERRORS_DEFAULT);
		*ret = c;
		return 0;
	}
	f = open_failed(c, timeout, errbuf, errlen);
	if (ret_failure) {
		*ret_failure = f;
	}
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
		char err[1024];

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
			rc = pgconn_failure_code(pgconn_result_failure(r, err, sizeof(err)));
			errbuf_set(errbuf, errlen,
				   "database.initial.statements: \"%.200s\" failed: %s",
				   buf_cstr(&stmt), err);
		}
		PQclear(r);
	}
	buf_fini(&stmt);
	return rc;
}

/* The effective value of connection option @key (libpq's defaults and environment included). */
static char *
conn_option(PGconn *c, const char *key)
{
	PQconninfoOption *opts = PQconninfo(c);
	char *v = NULL;

	for (PQconninfoOption *o = opts; o && o->keyword; o++) {
		if (strcmp(o->keyword, key) == 0 && o->val && *o->val) {
			v = xstrdup(o->val);
		}
	}
	PQconninfoFree(opts);
	return v;
}

int
pgconn_security(PGconn *c, const struct kv *params, struct buf *out)
{
	char *mode = conn_option(c, "sslmode");
	const char *proto = PQsslAttribute(c, "protocol"), *cipher = PQsslAttribute(c, "cipher");
	bool full = mode && strcmp(mode, "verify-full") == 0;
	bool ca = full || (mode && strcmp(mode, "verify-ca") == 0);
	int warnings = 0;

	if (!PQsslInUse(c)) {
		buf_add_fmt(out, "no TLS (sslmode %s)", mode ? mode : "prefer");
		if (PQconnectionUsedPassword(c)) {
			buf_add_str(out, "; warning: the password was sent without TLS: set "
					 "database.sslmode=verify-full and database.sslrootcert");
			warnings++;
		}
		free(mode);
		return warnings;
	}
	buf_add_fmt(out, "%s (%s), sslmode %s", proto ? proto : "TLS", cipher ? cipher : "?",
		    mode ? mode : "prefer");
	buf_add_str(out, full ? ", the server's certificate and host name verified" :
			 ca   ? ", the server's certificate verified, its host name not" :
				", the server's certificate NOT verified");
	if (kv_get(params, "sslcert")) {
		buf_add_str(out, ", client certificate");
	}
	if (PQconnectionUsedPassword(c)) {
		buf_add_str(out, ", password");
	}
	if (!ca) {
		buf_add_str(out, "; warning: anyone on the path can pose as the server: set "
				 "database.sslmode=verify-full and database.sslrootcert");
		warnings++;
	}
	free(mode);
	return warnings;
}
