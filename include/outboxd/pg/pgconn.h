/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PGCONN_H
#define OUTBOXD_PGCONN_H

/*
 * Opening libpq connections the one way outboxd does: PQconnectdbParams from the configured
 * keywords (never a conninfo string, so nothing with a password is ever formatted or logged),
 * session settings pinned so text output is stable, TCP keepalives and tcp_user_timeout so a
 * dead peer is noticed.
 */

#include <libpq-fe.h>
#include <stdbool.h>

#include "outboxd/util/kv.h"

/* How a failed connection should be treated. */
enum pgconn_failure {
	PGCONN_TRANSIENT = 1,	 /* refused, reset, timeout: retry with backoff */
	PGCONN_PRECONDITION = 2, /* authentication, missing database or role: exit 2 */
};

/**
 * pgconn_open() - connect.
 * @params: borrowed; libpq keywords (host, port, user, password, dbname, sslmode, ...).
 * @replication: open a logical walsender connection (replication=database).
 * @ret: written on success; caller PQfinish()es.
 * @ret_failure: on failure, how to treat it (may be NULL).
 * Return: 0, or -EIO with a one-line reason in @errbuf (libpq's message, which names host and
 * port but never the password).
 */
int pgconn_open(const struct kv *params, bool replication, PGconn **ret,
		enum pgconn_failure *ret_failure, char *errbuf, size_t errlen);

/* pgconn_error_line() - libpq's last error of @c as one line (newlines folded) into @errbuf. */
void pgconn_error_line(PGconn *c, char *errbuf, size_t errlen);

/* pgconn_result_line() - a failed result's message as one line, with SQLSTATE, into @errbuf. */
void pgconn_result_line(const PGresult *r, char *errbuf, size_t errlen);

/**
 * pgconn_run_statements() - run database.initial.statements on @c: statements separated by
 * ';', with ';;' standing for a literal ';' (Debezium's rule). NULL or "" runs nothing.
 * Return: 0, or -EIO with the failing statement's error in @errbuf.
 */
int pgconn_run_statements(PGconn *c, const char *statements, char *errbuf, size_t errlen);

#endif
