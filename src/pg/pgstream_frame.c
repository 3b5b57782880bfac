/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pg/pgstream_frame.h"

#include <errno.h>

#include "outboxd/util/errbuf.h"
#include "outboxd/util/rd.h"

/* Size of the XLogData header before the pgoutput message, and of a keepalive. */
#define XLOGDATA_HDR  25
#define KEEPALIVE_LEN 18

/* 'w': dataStart, walEnd, sendTime, then the message itself. */
static int
xlogdata(struct rd *r, size_t len, struct pgstream_frame *f, char *errbuf, size_t errlen)
{
	if (len < XLOGDATA_HDR) {
		errbuf_set(errbuf, errlen, "XLogData: %zu bytes, the header alone needs %d", len,
			   XLOGDATA_HDR);
		return -EPROTO;
	}
	f->kind = PGSTREAM_FRAME_XLOGDATA;
	f->wal_start = rd_u64(r);
	f->wal_end = rd_u64(r);
	f->send_time = rd_i64(r);
	f->data = r->p;
	f->data_len = rd_left(r);
	return 0;
}

/* 'k': walEnd, sendTime, replyRequested. */
static int
keepalive(struct rd *r, size_t len, struct pgstream_frame *f, char *errbuf, size_t errlen)
{
	if (len != KEEPALIVE_LEN) {
		errbuf_set(errbuf, errlen, "keepalive: %zu bytes, expected %d", len, KEEPALIVE_LEN);
		return -EPROTO;
	}
	f->kind = PGSTREAM_FRAME_KEEPALIVE;
	f->wal_end = rd_u64(r);
	f->send_time = rd_i64(r);
	f->reply_requested = rd_u8(r) != 0;
	return 0;
}

int
pgstream_frame_decode(const uint8_t *buf, size_t len, struct pgstream_frame *ret, char *errbuf,
		      size_t errlen)
{
	struct pgstream_frame f = { 0 };
	struct rd r;
	int kind, err;

	if (!len) {
		errbuf_set(errbuf, errlen, "empty CopyData message");
		return -EPROTO;
	}
	r = rd_init(buf, len);
	kind = rd_u8(&r);
	if (kind == PGSTREAM_FRAME_XLOGDATA) {
		err = xlogdata(&r, len, &f, errbuf, errlen);
	} else if (kind == PGSTREAM_FRAME_KEEPALIVE) {
		err = keepalive(&r, len, &f, errbuf, errlen);
	} else {
		errbuf_set(errbuf, errlen, "unknown CopyData kind 0x%02x", (unsigned)kind);
		err = -EPROTO;
	}
	if (err < 0) {
		return err;
	}
	*ret = f;
	return 0;
}

static void
put_be(uint8_t *out, uint64_t v, size_t n)
{
	for (size_t i = n; i > 0; i--) {
		out[i - 1] = (uint8_t)(v & 0xff);
		v >>= 8;
	}
}

void
pgstream_frame_status(uint8_t out[PGSTREAM_FRAME_STATUS_LEN], lsn_t write, lsn_t flush, lsn_t apply,
		      int64_t now_us, bool reply_requested)
{
	out[0] = 'r';
	put_be(out + 1, write, 8);
	put_be(out + 9, flush, 8);
	put_be(out + 17, apply, 8);
	put_be(out + 25, (uint64_t)now_us, 8);
	out[33] = reply_requested ? 1 : 0;
}
