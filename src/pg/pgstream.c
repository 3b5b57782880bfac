/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pg/pgstream.h"

#include <errno.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "outboxd/pg/pgconn.h"
#include "outboxd/pg/pgsql.h"
#include "outboxd/pg/pgstream_frame.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/now.h"

#define MOD "pgstream"

struct pgstream {
	PGconn *conn;
	char *copybuf; /* the payload last read, which the frame borrows; freed on the next read */
	size_t copylen;
};

/* The class of a failed result (pgconn_classify()), its line and fix into @errbuf. */
static enum pgstream_failure
result_failure(const PGresult *r, char *errbuf, size_t errlen)
{
	switch (pgconn_result_failure(r, errbuf, errlen)) {
	case PGCONN_BUSY: return PGSTREAM_SLOT_BUSY;
	case PGCONN_PRECONDITION: return PGSTREAM_PRECONDITION;
	default: return PGSTREAM_TRANSIENT;
	}
}

/* IDENTIFY_SYSTEM; on failure its class in @ret_failure. */
static int
identify(PGconn *c, enum pgstream_failure *ret_failure, char *errbuf, size_t errlen)
{
	PGresult *r = PQexec(c, "IDENTIFY_SYSTEM");
	int rc = 0;

	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		*ret_failure = result_failure(r, errbuf, errlen);
		rc = -EIO;
	} else if (PQntuples(r) != 1 || PQnfields(r) < 4) {
		errbuf_set(errbuf, errlen, "IDENTIFY_SYSTEM: %d rows of %d columns, not 1 of 4",
			   PQntuples(r), PQnfields(r));
		rc = -EIO;
	} else {
		log_info(MOD, "connected: system %s timeline %s database %s", PQgetvalue(r, 0, 0),
			 PQgetvalue(r, 0, 1), PQgetvalue(r, 0, 3));
	}
	PQclear(r);
	return rc;
}

/* START_REPLICATION with the slot as an identifier and the publication list as a literal. */
static char *
start_command(PGconn *c, const char *slot, const char *publication)
{
	struct buf names = BUF_INIT, cmd = BUF_INIT;
	char *ident = PQescapeIdentifier(c, slot, strlen(slot));
	char *pubident = PQescapeIdentifier(c, publication, strlen(publication));
	char *literal;

	buf_add_str(&names, pubident);
	literal = PQescapeLiteral(c, buf_cstr(&names), names.len);
	/* Debezium asks for logical decoding messages on PostgreSQL 14 and later, so do we. */
	buf_add_fmt(&cmd,
		    "START_REPLICATION SLOT %s LOGICAL 0/0 (proto_version '1', "
		    "publication_names %s%s)",
		    ident, literal, PQserverVersion(c) >= 140000 ? ", messages 'true'" : "");
	PQfreemem(ident);
	PQfreemem(pubident);
	PQfreemem(literal);
	buf_fini(&names);
	return buf_steal(&cmd);
}

int
pgstream_start(const struct kv *params, const char *slot, const char *publication,
	       struct pgstream **ret, enum pgstream_failure *ret_failure, char *errbuf,
	       size_t errlen)
{
	enum pgconn_failure cf = PGCONN_TRANSIENT;
	enum pgstream_failure f = PGSTREAM_TRANSIENT;
	PGconn *c = NULL;
	PGresult *r;
	char *cmd;

	if (pgconn_open(params, true, &c, &cf, errbuf, errlen) < 0) {
		f = cf == PGCONN_PRECONDITION ? PGSTREAM_PRECONDITION : PGSTREAM_TRANSIENT;
		goto fail;
	}
	if (identify(c, &f, errbuf, errlen) < 0) {
		goto fail;
	}
	cmd = start_command(c, slot, publication);
	r = PQexec(c, cmd);
	free(cmd);
	if (PQresultStatus(r) != PGRES_COPY_BOTH) {
		f = result_failure(r, errbuf, errlen);
		PQclear(r);
		goto fail;
	}
	PQclear(r);
	if (PQsetnonblocking(c, 1) != 0) {
		pgconn_error_line(c, errbuf, errlen);
		goto fail;
	}
	*ret = znew(**ret);
	(*ret)->conn = c;
	return 0;
fail:
	PQfinish(c);
	if (ret_failure) {
		*ret_failure = f;
	}
	return -EIO;
}

int
pgstream_fd(const struct pgstream *s)
{
	return PQsocket(s->conn);
}

/* The stream ended: collect the server's reason (an ErrorResponse, or a plain end of COPY). */
static int
stream_ended(struct pgstream *s, enum pgstream_failure *ret_failure, char *errbuf, size_t errlen)
{
	enum pgstream_failure f = PGSTREAM_TRANSIENT;
	PGresult *r;
	bool said = false;

	while ((r = PQgetResult(s->conn)) != NULL) {
		if (!said && PQresultStatus(r) == PGRES_FATAL_ERROR) {
			f = result_failure(r, errbuf, errlen);
			said = true;
		}
		PQclear(r);
		if (PQstatus(s->conn) == CONNECTION_BAD) {
			break;
		}
	}
	if (!said) {
		if (PQstatus(s->conn) == CONNECTION_BAD) {
			pgconn_error_line(s->conn, errbuf, errlen);
		} else if (errbuf) {
			snprintf(errbuf, errlen, "the server ended the replication stream");
		}
	}
	if (ret_failure) {
		*ret_failure = f;
	}
	return -EIO;
}

/* The next CopyData payload: 1 with it, 0 when nothing complete is buffered, or -EIO. */
static int
read_copydata(struct pgstream *s, enum pgstream_failure *ret_failure, char *errbuf, size_t errlen)
{
	int n;

	if (s->copybuf) {
		PQfreemem(s->copybuf);
		s->copybuf = NULL;
	}
	n = PQgetCopyData(s->conn, &s->copybuf, 1);
	if (n == 0) {
		if (PQconsumeInput(s->conn) == 0) {
			pgconn_error_line(s->conn, errbuf, errlen);
			*ret_failure = PGSTREAM_TRANSIENT;
			return -EIO;
		}
		n = PQgetCopyData(s->conn, &s->copybuf, 1);
	}
	if (n >= 0) {
		s->copylen = (size_t)n;
		return n > 0;
	}
	if (n == -2) {
		pgconn_error_line(s->conn, errbuf, errlen);
		*ret_failure = PGSTREAM_TRANSIENT;
		return -EIO;
	}
	return stream_ended(s, ret_failure, errbuf, errlen);
}

int
pgstream_read(struct pgstream *s, struct pgstream_frame *ret, enum pgstream_failure *ret_failure,
	      char *errbuf, size_t errlen)
{
	enum pgstream_failure f = PGSTREAM_TRANSIENT;
	int rc = read_copydata(s, &f, errbuf, errlen);

	if (rc < 0 && ret_failure) {
		*ret_failure = f;
	}
	if (rc <= 0) {
		return rc;
	}
	return pgstream_frame_decode((const uint8_t *)s->copybuf, s->copylen, ret, errbuf, errlen) <
			       0 ?
		       -EPROTO :
		       1;
}

int
pgstream_flush(struct pgstream *s, char *errbuf, size_t errlen)
{
	if (PQflush(s->conn) < 0) {
		pgconn_error_line(s->conn, errbuf, errlen);
		return -EIO;
	}
	return 0;
}

int
pgstream_send_status(struct pgstream *s, lsn_t write, lsn_t flush, bool reply, char *errbuf,
		     size_t errlen)
{
	uint8_t msg[PGSTREAM_FRAME_STATUS_LEN];
	char w[LSN_STRLEN], f[LSN_STRLEN];

	pgstream_frame_status(msg, write, flush, flush, now_pg_us(), reply);
	if (PQputCopyData(s->conn, (const char *)msg, sizeof(msg)) != 1) {
		pgconn_error_line(s->conn, errbuf, errlen);
		return -EIO;
	}
	log_debug(MOD, "status update write %s flush %s%s", lsn_format(write, w),
		  lsn_format(flush, f), reply ? " (reply requested)" : "");
	return pgstream_flush(s, errbuf, errlen);
}

int64_t
pgstream_status_interval_ms(int64_t configured_ms, int64_t wal_sender_timeout_ms)
{
	int64_t ms = configured_ms;

	if (wal_sender_timeout_ms > 0 && wal_sender_timeout_ms / 4 < ms) {
		ms = wal_sender_timeout_ms / 4;
	}
	return ms < 1 ? 1 : ms;
}

int
pgstream_socket_error(const struct pgstream *s)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(PQsocket(s->conn), SOL_SOCKET, SO_ERROR, &err, &len) < 0) {
		return -errno;
	}
	return -err;
}

bool
pgstream_wants_write(const struct pgstream *s)
{
	return PQflush(s->conn) == 1;
}

void
pgstream_free(struct pgstream *s, bool orderly)
{
	if (!s) {
		return;
	}
	if (s->copybuf) {
		PQfreemem(s->copybuf);
	}
	if (orderly && PQstatus(s->conn) == CONNECTION_OK) {
		/* CopyDone: the walsender stops sending and ends the command. */
		if (PQputCopyEnd(s->conn, NULL) == 1) {
			PQsetnonblocking(s->conn, 0);
			PQflush(s->conn);
		}
	}
	PQfinish(s->conn);
	free(s);
}

int
pgstream_create_exported(const struct kv *params, const char *slot, bool failover,
			 pgstream_exec_fn *exec, void *opaque, PGconn **ret_conn,
			 char **ret_snapshot, lsn_t *ret_lsn, char *errbuf, size_t errlen)
{
	enum pgconn_failure cf = PGCONN_TRANSIENT;
	PGconn *c = NULL;
	PGresult *r;
	struct buf cmd = BUF_INIT;
	char *ident;
	const char *state;
	int rc = -EIO;

	if (pgconn_open(params, true, &c, &cf, errbuf, errlen) < 0) {
		return pgconn_failure_code(cf);
	}
	if (pgsql_failover_unsupported(c, failover, errbuf, errlen)) {
		PQfinish(c);
		return -EPERM;
	}
	ident = PQescapeIdentifier(c, slot, strlen(slot));
	/*
	 * The option list in parentheses came with 15 (and FAILOVER with 17); 14 knows only the
	 * older keyword, which every later major still accepts.
	 */
	if (failover) {
		buf_add_fmt(&cmd,
			    "CREATE_REPLICATION_SLOT %s LOGICAL pgoutput (SNAPSHOT 'export', "
			    "FAILOVER true)",
			    ident);
	} else {
		buf_add_fmt(&cmd, "CREATE_REPLICATION_SLOT %s LOGICAL pgoutput EXPORT_SNAPSHOT",
			    ident);
	}
	PQfreemem(ident);
	r = exec(opaque, c, buf_cstr(&cmd));
	buf_fini(&cmd);
	if (!r) {
		errbuf_set(errbuf, errlen, "CREATE_REPLICATION_SLOT was cancelled");
		PQfinish(c);
		return -EINTR;
	}
	state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		cf = pgconn_result_failure(r, errbuf, errlen);
		rc = state && strcmp(state, "42710") == 0 ? -EEXIST : pgconn_failure_code(cf);
	} else if (PQntuples(r) != 1 || PQnfields(r) < 3) {
		errbuf_set(errbuf, errlen, "CREATE_REPLICATION_SLOT: %d rows of %d columns",
			   PQntuples(r), PQnfields(r));
	} else if (lsn_parse(PQgetvalue(r, 0, 1), ret_lsn) == 0 && !PQgetisnull(r, 0, 2)) {
		*ret_snapshot = xstrdup(PQgetvalue(r, 0, 2));
		*ret_conn = c;
		c = NULL;
		rc = 0;
	} else {
		errbuf_set(errbuf, errlen, "CREATE_REPLICATION_SLOT returned no snapshot");
	}
	PQclear(r);
	PQfinish(c);
	return rc;
}
