/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PGOUTPUT_H
#define OUTBOXD_PGOUTPUT_H

/*
 * Pure decoder of pgoutput, the logical decoding output plugin: every message of protocol
 * versions 1 to 4, as carried in the walsender's XLogData frames (pgstream_frame.h). No I/O,
 * no logging: errors come back as -EPROTO with text in errbuf. Decoded messages borrow from the
 * input buffer (struct slice), valid until that buffer is freed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/util/lsn.h"
#include "outboxd/util/slice.h"

enum pgoutput_msg_type {
	PGOUTPUT_MSG_BEGIN = 'B',
	PGOUTPUT_MSG_COMMIT = 'C',
	PGOUTPUT_MSG_ORIGIN = 'O',
	PGOUTPUT_MSG_RELATION = 'R',
	PGOUTPUT_MSG_TYPE = 'Y',
	PGOUTPUT_MSG_INSERT = 'I',
	PGOUTPUT_MSG_UPDATE = 'U',
	PGOUTPUT_MSG_DELETE = 'D',
	PGOUTPUT_MSG_TRUNCATE = 'T',
	PGOUTPUT_MSG_MESSAGE = 'M',
	PGOUTPUT_MSG_STREAM_START = 'S',
	PGOUTPUT_MSG_STREAM_STOP = 'E',
	PGOUTPUT_MSG_STREAM_COMMIT = 'c',
	PGOUTPUT_MSG_STREAM_ABORT = 'A',
	PGOUTPUT_MSG_BEGIN_PREPARE = 'b',
	PGOUTPUT_MSG_PREPARE = 'P',
	PGOUTPUT_MSG_COMMIT_PREPARED = 'K',
	PGOUTPUT_MSG_ROLLBACK_PREPARED = 'r',
	PGOUTPUT_MSG_STREAM_PREPARE = 'p',
};

/* One column of a TupleData. */
struct pgoutput_col {
	char kind;	    /* 'n' null, 'u' unchanged TOAST, 't' text, 'b' binary */
	struct slice value; /* 't'/'b': the bytes (not NUL-terminated); else empty */
};

/* A TupleData; cols borrows from the decoder's column array (valid until the next decode). */
struct pgoutput_tuple {
	int ncols;
	const struct pgoutput_col *cols;
};

/* One column of a Relation message. */
struct pgoutput_rel_col {
	uint8_t flags; /* bit 0: part of the replica identity key */
	struct slice name;
	uint32_t type_oid;
	int32_t typmod;
};

struct pgoutput_msg {
	enum pgoutput_msg_type type;
	uint32_t xid; /* B, S, c, A, b, P, K, r, p; R/Y/I/U/D/T/M only inside S...E */
	union {
		struct {
			lsn_t final_lsn;
			int64_t commit_time;
		} begin;
		struct {
			uint8_t flags;
			lsn_t commit_lsn, end_lsn;
			int64_t commit_time;
		} commit;
		struct {
			lsn_t lsn;
			struct slice name;
		} origin;
		struct {
			uint32_t relid;
			struct slice nspname, relname;
			char replident;
			int ncols;
			const struct pgoutput_rel_col *cols; /* borrowed from the decoder */
		} relation;
		struct {
			uint32_t type_oid;
			struct slice nspname, typname;
		} type;
		struct {
			uint32_t relid;
			struct pgoutput_tuple newtup;
		} insert;
		struct {
			uint32_t relid;
			char old_kind; /* 0 (none), 'K' or 'O' */
			struct pgoutput_tuple oldtup, newtup;
		} update;
		struct {
			uint32_t relid;
			char old_kind;
			struct pgoutput_tuple oldtup;
		} del;
		struct {
			int nrels;
			uint8_t options;
			const uint32_t *relids;
		} truncate;
		struct {
			uint8_t flags; /* 1 = transactional */
			lsn_t lsn;
			struct slice prefix;
			struct slice content;
		} message;
		struct {
			bool first_segment;
		} stream_start;
		struct {
			uint8_t flags;
			lsn_t commit_lsn, end_lsn;
			int64_t commit_time;
		} stream_commit;
		struct {
			uint32_t subxid;
			lsn_t abort_lsn;
			int64_t abort_time;
			bool has_lsn;
		} stream_abort;
		struct {
			uint8_t flags;
			lsn_t lsn, end_lsn;  /* prepare/commit/rollback positions, per message */
			int64_t time, time2; /* r: prepare_time, rollback_time */
			struct slice gid;
		} twophase;
	} u;
};

/* Decoder state that lives across messages: protocol version, stream state, scratch arrays. */
struct pgoutput_decoder {
	int proto_version; /* 1..4: what START_REPLICATION asked for */
	bool in_stream;	   /* between Stream Start and Stream Stop */
	/* scratch, owned, grown on demand and reused */
	struct pgoutput_col *cols;
	size_t cols_cap;
	struct pgoutput_rel_col *relcols;
	size_t relcols_cap;
	uint32_t *relids;
	size_t relids_cap;
};

/* pgoutput_decoder_init() - a decoder for @proto_version (1..4), not in a stream. */
void pgoutput_decoder_init(struct pgoutput_decoder *d, int proto_version);

/* pgoutput_decoder_fini() - free the scratch arrays; @d may be reinitialised. */
void pgoutput_decoder_fini(struct pgoutput_decoder *d);

/**
 * pgoutput_decode() - decode one pgoutput message (the data of a 'w' frame).
 * @d: decoder state; updated (stream flag) only on success.
 * @buf: borrowed; @ret's slices point into it.
 * @ret: written only on success; arrays borrow from @d until the next call.
 *
 * Return: 0, or -EPROTO for an unknown type byte, a message not valid for the protocol version
 * or stream state, a truncated message, trailing bytes, or counts that exceed the bytes left.
 */
int pgoutput_decode(struct pgoutput_decoder *d, const uint8_t *buf, size_t len,
		    struct pgoutput_msg *ret, char *errbuf, size_t errlen);

#endif
