/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PGSTREAM_H
#define OUTBOXD_PGSTREAM_H

/*
 * The replication connection: IDENTIFY_SYSTEM, START_REPLICATION from 0/0 (the server resumes
 * at the slot's confirmed_flush_lsn: there is no other offset store), non-blocking CopyBoth
 * reads and standby status updates. It never decides what to confirm: the caller passes the LSN
 * that acktrack allows.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "outboxd/pg/pgstream_frame.h"
#include "outboxd/util/kv.h"
#include "outboxd/util/lsn.h"

struct pgstream;

/* Why START_REPLICATION or the stream failed (pgconn_classify() of the server's SQLSTATE). */
enum pgstream_failure {
	PGSTREAM_TRANSIENT = 1,	  /* connection trouble: retry with backoff */
	PGSTREAM_SLOT_BUSY = 2,	  /* "slot is active for PID": retry per slot.max.retries */
	PGSTREAM_PRECONDITION = 3 /* slot/publication missing or invalid, auth: exit 2 */
};

/**
 * pgstream_start() - connect, identify, START_REPLICATION SLOT @slot LOGICAL 0/0 with
 * proto_version '1' and publication_names @publication (streaming off).
 * @params: borrowed libpq keywords.
 * @ret_failure: on failure, its class (may be NULL).
 * Return: 0, or -EIO with one line in @errbuf.
 */
int pgstream_start(const struct kv *params, const char *slot, const char *publication,
		   struct pgstream **ret, enum pgstream_failure *ret_failure, char *errbuf,
		   size_t errlen);

/* pgstream_fd() - the socket to poll(2). */
int pgstream_fd(const struct pgstream *s);

/**
 * pgstream_read() - the next frame from the walsender, without blocking.
 * @ret: written when 1 is returned; its data borrows from @s until the next pgstream_read() or
 *	 pgstream_free().
 * Return: 1 with a frame; 0 when nothing complete is buffered (poll for input); -EPROTO for a
 * malformed frame (text in @errbuf); -EIO when the stream ended or failed (text in @errbuf; a
 * server ErrorResponse's SQLSTATE in @ret_failure's class).
 */
int pgstream_read(struct pgstream *s, struct pgstream_frame *ret,
		  enum pgstream_failure *ret_failure, char *errbuf, size_t errlen);

/**
 * pgstream_send_status() - queue and flush a standby status update (write, flush = apply =
 * @flush). @reply asks the server to answer at once (the liveness probe).
 * Return: 0, or -EIO.
 */
int pgstream_send_status(struct pgstream *s, lsn_t write, lsn_t flush, bool reply, char *errbuf,
			 size_t errlen);

/**
 * pgstream_status_interval_ms() - how often status updates go out: @configured_ms
 * (status.update.interval.ms), but at most a quarter of the server's wal_sender_timeout
 * (@wal_sender_timeout_ms; 0 = the server has none). The server ends a walsender whose client
 * sent nothing for that long; while reading is paused on purpose (a full producer queue), the
 * status updates are the only messages it gets, and it cannot be answered either (its keepalive
 * requests wait unread behind the data). A quarter leaves room for three late turns of the loop.
 * Pure. Return: milliseconds, at least 1.
 */
int64_t pgstream_status_interval_ms(int64_t configured_ms, int64_t wal_sender_timeout_ms);

/**
 * pgstream_socket_error() - the pending error of the connection's socket (SO_ERROR).
 * Return: 0 when there is none (a plain hang-up), else the negative errno (-ECONNRESET after
 * the peer reset it).
 */
int pgstream_socket_error(const struct pgstream *s);

/* pgstream_wants_write() - output is still buffered (poll for POLLOUT and call pgstream_flush). */
bool pgstream_wants_write(const struct pgstream *s);

/* pgstream_flush() - push buffered output. Return: 0, or -EIO. */
int pgstream_flush(struct pgstream *s, char *errbuf, size_t errlen);

/**
 * pgstream_free() - end the stream (CopyDone when @orderly) and close. NULL allowed.
 */
void pgstream_free(struct pgstream *s, bool orderly);

/*
 * How pgstream_create_exported() waits for CREATE_REPLICATION_SLOT, which lasts until every
 * transaction running when it began has ended: send @command on @c and return its result (the
 * caller PQclear()s it), or NULL when the wait was given up (a stop was asked for: the
 * callback has cancelled the command).
 */
typedef PGresult *pgstream_exec_fn(void *opaque, PGconn *c, const char *command);

/**
 * pgstream_create_exported() - create the logical pgoutput slot @slot (a failover slot with
 * @failover, 17+) on a new replication connection with an exported snapshot
 * (CREATE_REPLICATION_SLOT ... EXPORT_SNAPSHOT), run through @exec. The snapshot stays importable until the connection runs another command or
 * closes: the caller imports it on the ordinary connection (SET TRANSACTION SNAPSHOT) and then
 * PQfinish()es @ret_conn.
 * @ret_snapshot: the snapshot name, caller frees. @ret_lsn: the slot's consistent point.
 * Return: 0, -EEXIST if the slot exists, -EINTR when @exec gave up (the slot may or may not
 * exist now), or pgconn_failure_code() of the failure (-EIO transient, -EPERM precondition);
 * text in @errbuf.
 */
int pgstream_create_exported(const struct kv *params, const char *slot, bool failover,
			     pgstream_exec_fn *exec, void *opaque, PGconn **ret_conn,
			     char **ret_snapshot, lsn_t *ret_lsn, char *errbuf, size_t errlen);

#endif
