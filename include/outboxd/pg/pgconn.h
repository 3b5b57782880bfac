/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PGCONN_H
#define OUTBOXD_PGCONN_H

/*
 * Folder pg/: the PostgreSQL side: libpq connections, the replication protocol and its frames,
 * the pgoutput decoder, relation metadata, catalog and slot queries, failover checks, slot
 * statistics. It may call: util.
 */

/*
 * Opening libpq connections the one way outboxd does: PQconnectdbParams from the configured
 * keywords (never a conninfo string, so nothing with a password is ever formatted or logged),
 * session settings pinned so text output is stable, TCP keepalives and tcp_user_timeout so a
 * dead peer is noticed.
 */

#include <libpq-fe.h>
#include <stdbool.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/kv.h"

/*
 * How a failure is treated (DESIGN.md "Failure handling"; README's table of failures). It is
 * decided by the SQLSTATE the server sent, never by the text of a message: a failure the server
 * did not report (refused, reset, timed out, a TLS handshake or session cut) is transient.
 */
enum pgconn_failure {
	PGCONN_TRANSIENT = 1, /* retry with backoff: the network, a shutdown, a start-up, load */
	PGCONN_PRECONDITION =
		2,	 /* exit 2 with the fix: authentication, a missing object, privilege */
	PGCONN_BUSY = 3, /* 55006: the slot is active for another PID (slot.max.retries) */
};

/* What libpq says of a failed connection besides the server's SQLSTATE (pgconn_classify). */
enum {
	/* PQconnectionNeedsPassword(): the server asked for a password and none was configured */
	PGCONN_NEEDS_PASSWORD = 1u << 0,
};

/**
 * pgconn_classify() - the class of a failure. Pure.
 * @sqlstate: the five characters the server reported (PG_DIAG_SQLSTATE), or NULL when the
 *	      server reported nothing (libpq's own errors: the connection refused, reset or timed
 *	      out, the TLS handshake or session cut, "server closed the connection unexpectedly").
 * @flags: PGCONN_NEEDS_PASSWORD, or 0.
 * Return: PGCONN_PRECONDITION for classes 28 (authorization), 3D (database), 3F (schema), 42
 * (undefined object or table, privilege, syntax), 0A (not supported) and for 22023, 55000
 * (an invalidated slot; wal_level), 57P04 (database dropped), or for no SQLSTATE with
 * PGCONN_NEEDS_PASSWORD; PGCONN_BUSY for 55006; PGCONN_TRANSIENT for everything else (08
 * connection, 53 resources such as 53300 too many connections, 57P01/57P02/57P03 shutdown and
 * start-up, 40001/40P01, 58 and XX, no SQLSTATE).
 */
enum pgconn_failure pgconn_classify(const char *sqlstate, unsigned flags);

/**
 * pgconn_fix() - what operations staff do about a precondition. Pure.
 * Return: a static sentence for the SQLSTATEs and flags pgconn_classify() calls preconditions,
 * NULL for the others.
 */
const char *pgconn_fix(const char *sqlstate, unsigned flags);

/**
 * pgconn_classify_message() - the class of a failed connection attempt from libpq's message
 * for it, written with PQERRORS_VERBOSE (pgconn_open() sets it before the start-up exchange).
 * Pure.
 *
 * libpq keeps the SQLSTATE of an ErrorResponse received while connecting to itself (no
 * PGresult carries it; PQgetResult() gives one of libpq's own without fields), so this is the
 * one place outboxd reads a message: only the part the server wrote, which libpq formats as
 * "<severity>:  <SQLSTATE>: <message>" (pqBuildErrorMessage3: two spaces after the severity,
 * which the server may translate, then five characters [0-9A-Z] and ": "). libpq's own errors
 * never take that form, so a message without one is a failure the server did not report.
 * Several attempts (hosts, sslmode=prefer's second try) may each have reported one: a
 * precondition outweighs a busy slot, which outweighs a transient one.
 * @flags: as for pgconn_classify().
 * @ret_sqlstate: the deciding SQLSTATE, or "" when none was reported (may be NULL).
 */
enum pgconn_failure pgconn_classify_message(const char *message, unsigned flags,
					    char ret_sqlstate[6]);

/**
 * pgconn_local_fix() - the fix of a failure libpq found on the client's side in @message (its
 * words for a server certificate that does not verify or does not name the host, a missing or
 * unreadable sslrootcert, sslcert or sslkey, a server without TLS under sslmode=require or
 * stricter, an invalid sslmode), which pgconn_open() then calls a precondition; NULL for any
 * other message. These have no SQLSTATE. Pure.
 */
const char *pgconn_local_fix(const char *message);

/**
 * pgconn_open() - connect, waiting at most connect_timeout (default 10 s) for each step.
 * @params: borrowed; libpq keywords (host, port, user, password, dbname, sslmode, ...).
 * @replication: open a logical walsender connection (replication=database).
 * @ret: written on success; caller PQfinish()es.
 * @ret_failure: on failure, how to treat it (pgconn_classify_message(); never PGCONN_BUSY; may
 *		 be NULL).
 * Return: 0, or -EIO with a one-line reason in @errbuf (libpq's message, which names host and
 * port but never the password, and for a precondition the fix).
 */
int pgconn_open(const struct kv *params, bool replication, PGconn **ret,
		enum pgconn_failure *ret_failure, char *errbuf, size_t errlen);

/**
 * pgconn_security() - appends to @out how the open connection @c is secured: the TLS version
 * and cipher libpq negotiated, whether the server's certificate and host name were verified
 * (sslmode verify-ca, verify-full), whether a client certificate was given (@params' sslcert),
 * or that there is no TLS. Never a secret.
 * Return: the number of warnings appended (each after "; warning: "): a password sent without
 * TLS, TLS that does not verify the server.
 */
int pgconn_security(PGconn *c, const struct kv *params, struct buf *out);

/* pgconn_error_line() - libpq's last error of @c as one line (newlines folded) into @errbuf. */
void pgconn_error_line(PGconn *c, char *errbuf, size_t errlen);

/* pgconn_result_line() - a failed result's message as one line, with SQLSTATE, into @errbuf. */
void pgconn_result_line(const PGresult *r, char *errbuf, size_t errlen);

/**
 * pgconn_result_failure() - a failed result's class (pgconn_classify() of its SQLSTATE) and
 * its line, with the fix for a precondition, into @errbuf.
 * @r: borrowed; NULL (no result at all) is transient.
 */
enum pgconn_failure pgconn_result_failure(const PGresult *r, char *errbuf, size_t errlen);

/**
 * pgconn_failure_code() - the return code of a failed query by its class: -EIO transient,
 * -EPERM precondition, -EBUSY busy (the convention of pgsql.h and pgconn_run_statements()).
 */
int pgconn_failure_code(enum pgconn_failure f);

/**
 * pgconn_run_statements() - run database.initial.statements on @c: statements separated by
 * ';', with ';;' standing for a literal ';' (Debezium's rule). NULL or "" runs nothing.
 * Return: 0, or pgconn_failure_code() of the failing statement's class (-EIO transient, -EPERM
 * precondition) with its error in @errbuf.
 */
int pgconn_run_statements(PGconn *c, const char *statements, char *errbuf, size_t errlen);

#endif
