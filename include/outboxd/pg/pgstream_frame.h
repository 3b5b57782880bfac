/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PG_PGSTREAM_FRAME_H
#define OUTBOXD_PG_PGSTREAM_FRAME_H

/*
 * The walsender's CopyData framing of the streaming replication protocol (reference
 * pgoutput.md section 2): 'w' XLogData and 'k' keepalive from the server, the client's 'r'
 * standby status update. The pure half of pgstream: no I/O, no logging, so the decoder's fuzz
 * target and the unit tests run it without a server. What a 'w' frame carries is pgoutput's.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/util/lsn.h"

/* Size of a standby status update ('r'). */
#define PGSTREAM_FRAME_STATUS_LEN 34

/* The walsender's CopyData frames. */
enum pgstream_frame_kind {
	PGSTREAM_FRAME_XLOGDATA = 'w',
	PGSTREAM_FRAME_KEEPALIVE = 'k',
};

struct pgstream_frame {
	enum pgstream_frame_kind kind;
	lsn_t wal_start;      /* 'w': dataStart; not an ack position (reference 2.2) */
	lsn_t wal_end;	      /* 'w': equals wal_start; 'k': the walsender's sentPtr */
	int64_t send_time;    /* microseconds since 2000-01-01 UTC */
	bool reply_requested; /* 'k' only */
	const uint8_t *data;  /* 'w': the pgoutput message (borrowed) */
	size_t data_len;
};

/**
 * pgstream_frame_decode() - split one CopyData payload into its frame header and message.
 * @buf: borrowed; one CopyData payload as PQgetCopyData returns it.
 * @ret: written only on success; its data pointer borrows from @buf.
 *
 * Return: 0, or -EPROTO for an unknown kind byte or a wrong length.
 */
int pgstream_frame_decode(const uint8_t *buf, size_t len, struct pgstream_frame *ret, char *errbuf,
			  size_t errlen);

/**
 * pgstream_frame_status() - build a standby status update.
 * @out: PGSTREAM_FRAME_STATUS_LEN bytes, written in full.
 * @now_us: client clock, microseconds since 2000-01-01 UTC.
 * @reply_requested: ask the server to answer at once.
 */
void pgstream_frame_status(uint8_t out[PGSTREAM_FRAME_STATUS_LEN], lsn_t write, lsn_t flush,
			   lsn_t apply, int64_t now_us, bool reply_requested);

#endif
