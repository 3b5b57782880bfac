/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pg/pgoutput.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/rd.h"

/* Smallest encoding of one Relation column: flags, empty name, type oid, typmod. */
#define REL_COL_MIN (1 + 1 + 4 + 4)

void
pgoutput_decoder_init(struct pgoutput_decoder *d, int proto_version)
{
	memset(d, 0, sizeof(*d));
	d->proto_version = proto_version;
}

void
pgoutput_decoder_fini(struct pgoutput_decoder *d)
{
	if (!d) {
		return;
	}
	zfree(d->cols);
	zfree(d->relcols);
	zfree(d->relids);
	d->cols_cap = d->relcols_cap = d->relids_cap = 0;
	d->in_stream = false;
}

/* State of one pgoutput_decode() call. */
struct dec {
	struct pgoutput_decoder *d;
	struct rd r;
	struct pgoutput_msg *m;
	const char *name; /* message name, prefixes every error */
	size_t len;	  /* whole message, type byte included */
	size_t cols_used; /* entries of d->cols taken by this message's tuples */
	char *errbuf;
	size_t errlen;
};

/* A tuple by position in d->cols: the array may move while a later tuple grows it. */
struct tup_ref {
	size_t start;
	int ncols;
};

/* "<message>: <what was wrong>" into errbuf; returns -EPROTO. */
static int __attribute__((format(printf, 2, 3))) fail(const struct dec *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!c->errbuf || !c->errlen) {
		return -EPROTO;
	}
	n = snprintf(c->errbuf, c->errlen, "%s: ", c->name);
	if (n >= 0 && (size_t)n < c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->errbuf + n, c->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EPROTO;
}

/* Grow a scratch array to hold @need elements of @elem bytes (doubling, from 16). */
static void *
grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;

	if (need <= *cap) {
		return p;
	}
	while (n < need) {
		n *= 2;
	}
	*cap = n;
	return xrealloc(p, n * elem);
}

/* One TupleData column: kind byte, and for 't'/'b' an Int32 length and that many bytes. */
static int
read_col(struct dec *c, struct pgoutput_col *col, int i)
{
	int32_t len;

	col->kind = (char)rd_u8(&c->r);
	col->value = SLICE_NULL;
	if (c->r.failed || col->kind == 'n' || col->kind == 'u') {
		return 0;
	}
	if (col->kind != 't' && col->kind != 'b') {
		return fail(c, "column %d has unknown kind 0x%02x", i + 1,
			    (unsigned)(uint8_t)col->kind);
	}
	len = rd_i32(&c->r);
	if (len < 0) {
		return fail(c, "column %d has negative length %d", i + 1, (int)len);
	}
	if ((size_t)len > rd_left(&c->r) && !c->r.failed) {
		return fail(c, "column %d is %d bytes but only %zu bytes remain", i + 1, (int)len,
			    rd_left(&c->r));
	}
	col->value = rd_bytes(&c->r, (size_t)len);
	return 0;
}

/* TupleData: Int16 column count, then the columns, appended to the decoder's scratch. */
static int
read_tuple(struct dec *c, struct tup_ref *ret)
{
	struct pgoutput_decoder *d = c->d;
	int ncols = rd_i16(&c->r);
	int err;

	if (ncols < 0) {
		return fail(c, "tuple has a negative column count %d", ncols);
	}
	/* Each column takes at least its kind byte: cap before allocating. */
	if ((size_t)ncols > rd_left(&c->r)) {
		return fail(c, "tuple has %d columns but only %zu bytes remain", ncols,
			    rd_left(&c->r));
	}
	d->cols = grow(d->cols, &d->cols_cap, c->cols_used + (size_t)ncols, sizeof(*d->cols));
	for (int i = 0; i < ncols; i++) {
		err = read_col(c, &d->cols[c->cols_used + (size_t)i], i);
		if (err < 0) {
			return err;
		}
	}
	ret->start = c->cols_used;
	ret->ncols = ncols;
	c->cols_used += (size_t)ncols;
	return 0;
}

/* The tuple as the caller sees it, once no more tuples can move the scratch array. */
static struct pgoutput_tuple
tuple_at(const struct dec *c, struct tup_ref t)
{
	return (struct pgoutput_tuple){ t.ncols, t.ncols ? c->d->cols + t.start : NULL };
}

/* A tuple-kind byte ('N', 'K', 'O'), or 0 once the reader has failed. */
static char
read_kind(struct dec *c)
{
	return (char)rd_u8(&c->r);
}

static int
bad_kind(const struct dec *c, const char *want, char got)
{
	return fail(c, "expected %s, got 0x%02x", want, (unsigned)(uint8_t)got);
}

/* B: final_lsn, commit_time, xid. */
static int
dec_begin(struct dec *c)
{
	c->m->u.begin.final_lsn = rd_u64(&c->r);
	c->m->u.begin.commit_time = rd_i64(&c->r);
	c->m->xid = rd_u32(&c->r);
	return 0;
}

/* C: flags (0 today; reported, not checked), commit_lsn, end_lsn, commit_time. */
static int
dec_commit(struct dec *c)
{
	c->m->u.commit.flags = rd_u8(&c->r);
	c->m->u.commit.commit_lsn = rd_u64(&c->r);
	c->m->u.commit.end_lsn = rd_u64(&c->r);
	c->m->u.commit.commit_time = rd_i64(&c->r);
	return 0;
}

/* O: origin_lsn, name. */
static int
dec_origin(struct dec *c)
{
	c->m->u.origin.lsn = rd_u64(&c->r);
	c->m->u.origin.name = rd_str(&c->r);
	return 0;
}

/* One Relation column: flags, name, type oid, typmod. */
static void
read_relcol(struct dec *c, struct pgoutput_rel_col *col)
{
	col->flags = rd_u8(&c->r);
	col->name = rd_str(&c->r);
	col->type_oid = rd_u32(&c->r);
	col->typmod = rd_i32(&c->r);
}

static bool
replident_known(char k)
{
	return k == 'd' || k == 'n' || k == 'f' || k == 'i';
}

/* R: relid, nspname, relname, replica identity, Int16 ncols, columns. */
static int
dec_relation(struct dec *c)
{
	struct pgoutput_decoder *d = c->d;
	int ncols;

	c->m->u.relation.relid = rd_u32(&c->r);
	c->m->u.relation.nspname = rd_str(&c->r);
	c->m->u.relation.relname = rd_str(&c->r);
	c->m->u.relation.replident = (char)rd_u8(&c->r);
	if (!c->r.failed && !replident_known(c->m->u.relation.replident)) {
		return fail(c, "unknown replica identity 0x%02x",
			    (unsigned)(uint8_t)c->m->u.relation.replident);
	}
	ncols = rd_i16(&c->r);
	if (ncols < 0) {
		return fail(c, "negative column count %d", ncols);
	}
	if ((size_t)ncols > rd_left(&c->r) / REL_COL_MIN) {
		return fail(c, "%d columns need at least %d bytes but only %zu remain", ncols,
			    ncols * REL_COL_MIN, rd_left(&c->r));
	}
	d->relcols = grow(d->relcols, &d->relcols_cap, (size_t)ncols, sizeof(*d->relcols));
	for (int i = 0; i < ncols; i++) {
		read_relcol(c, &d->relcols[i]);
	}
	c->m->u.relation.ncols = ncols;
	c->m->u.relation.cols = ncols ? d->relcols : NULL;
	return 0;
}

/* Y: type oid, nspname, typname. */
static int
dec_type(struct dec *c)
{
	c->m->u.type.type_oid = rd_u32(&c->r);
	c->m->u.type.nspname = rd_str(&c->r);
	c->m->u.type.typname = rd_str(&c->r);
	return 0;
}

/* I: relid, 'N', new tuple. */
static int
dec_insert(struct dec *c)
{
	struct tup_ref t = { 0, 0 };
	char k;
	int err;

	c->m->u.insert.relid = rd_u32(&c->r);
	k = read_kind(c);
	if (!c->r.failed && k != 'N') {
		return bad_kind(c, "'N'", k);
	}
	err = read_tuple(c, &t);
	if (err < 0) {
		return err;
	}
	c->m->u.insert.newtup = tuple_at(c, t);
	return 0;
}

/* U: relid, optional 'K' or 'O' old tuple, 'N', new tuple. */
static int
dec_update(struct dec *c)
{
	struct tup_ref old = { 0, 0 }, nt = { 0, 0 };
	char k;
	int err;

	c->m->u.update.relid = rd_u32(&c->r);
	k = read_kind(c);
	if (k == 'K' || k == 'O') {
		c->m->u.update.old_kind = k;
		err = read_tuple(c, &old);
		if (err < 0) {
			return err;
		}
		k = read_kind(c);
	}
	if (!c->r.failed && k != 'N') {
		return bad_kind(c, c->m->u.update.old_kind ? "'N'" : "'K', 'O' or 'N'", k);
	}
	err = read_tuple(c, &nt);
	if (err < 0) {
		return err;
	}
	c->m->u.update.oldtup = tuple_at(c, old);
	c->m->u.update.newtup = tuple_at(c, nt);
	return 0;
}

/* D: relid, 'K' or 'O', old tuple. */
static int
dec_delete(struct dec *c)
{
	struct tup_ref t = { 0, 0 };
	char k;
	int err;

	c->m->u.del.relid = rd_u32(&c->r);
	k = read_kind(c);
	if (!c->r.failed && k != 'K' && k != 'O') {
		return bad_kind(c, "'K' or 'O'", k);
	}
	c->m->u.del.old_kind = k;
	err = read_tuple(c, &t);
	if (err < 0) {
		return err;
	}
	c->m->u.del.oldtup = tuple_at(c, t);
	return 0;
}

/* T: Int32 nrels, options, nrels relids. */
static int
dec_truncate(struct dec *c)
{
	struct pgoutput_decoder *d = c->d;
	int32_t nrels = rd_i32(&c->r);

	c->m->u.truncate.options = rd_u8(&c->r);
	if (nrels < 0) {
		return fail(c, "negative relation count %d", (int)nrels);
	}
	if ((size_t)nrels > rd_left(&c->r) / 4) {
		return fail(c, "%d relations need %zu bytes but only %zu remain", (int)nrels,
			    (size_t)nrels * 4, rd_left(&c->r));
	}
	d->relids = grow(d->relids, &d->relids_cap, (size_t)nrels, sizeof(*d->relids));
	for (int32_t i = 0; i < nrels; i++) {
		d->relids[i] = rd_u32(&c->r);
	}
	c->m->u.truncate.nrels = (int)nrels;
	c->m->u.truncate.relids = nrels ? d->relids : NULL;
	return 0;
}

/* M: flags, lsn, prefix, Int32 length, content. */
static int
dec_message(struct dec *c)
{
	int32_t len;

	c->m->u.message.flags = rd_u8(&c->r);
	c->m->u.message.lsn = rd_u64(&c->r);
	c->m->u.message.prefix = rd_str(&c->r);
	len = rd_i32(&c->r);
	if (len < 0) {
		return fail(c, "negative content length %d", (int)len);
	}
	if ((size_t)len > rd_left(&c->r) && !c->r.failed) {
		return fail(c, "content is %d bytes but only %zu bytes remain", (int)len,
			    rd_left(&c->r));
	}
	c->m->u.message.content = rd_bytes(&c->r, (size_t)len);
	return 0;
}

/* S: xid, first_segment (1 for the first block of this xid). */
static int
dec_stream_start(struct dec *c)
{
	c->m->xid = rd_u32(&c->r);
	c->m->u.stream_start.first_segment = rd_u8(&c->r) == 1;
	return 0;
}

/* E: nothing after the type byte. */
static int
dec_stream_stop(struct dec *c)
{
	return 0;
}

/* c: xid, flags, commit_lsn, end_lsn, commit_time. */
static int
dec_stream_commit(struct dec *c)
{
	c->m->xid = rd_u32(&c->r);
	c->m->u.stream_commit.flags = rd_u8(&c->r);
	c->m->u.stream_commit.commit_lsn = rd_u64(&c->r);
	c->m->u.stream_commit.end_lsn = rd_u64(&c->r);
	c->m->u.stream_commit.commit_time = rd_i64(&c->r);
	return 0;
}

/* A: xid, subxid, and from proto 4 (streaming 'parallel' only) abort_lsn, abort_time. */
static int
dec_stream_abort(struct dec *c)
{
	c->m->xid = rd_u32(&c->r);
	c->m->u.stream_abort.subxid = rd_u32(&c->r);
	if (c->d->proto_version >= 4 && rd_left(&c->r) > 0) {
		c->m->u.stream_abort.abort_lsn = rd_u64(&c->r);
		c->m->u.stream_abort.abort_time = rd_i64(&c->r);
		c->m->u.stream_abort.has_lsn = true;
	}
	return 0;
}

/* b: prepare_lsn, end_lsn, prepare_time, xid, gid. */
static int
dec_begin_prepare(struct dec *c)
{
	c->m->u.twophase.lsn = rd_u64(&c->r);
	c->m->u.twophase.end_lsn = rd_u64(&c->r);
	c->m->u.twophase.time = rd_i64(&c->r);
	c->m->xid = rd_u32(&c->r);
	c->m->u.twophase.gid = rd_str(&c->r);
	return 0;
}

/* P, p, K: flags, lsn (prepare or commit), end_lsn, time, xid, gid. */
static int
dec_prepare(struct dec *c)
{
	c->m->u.twophase.flags = rd_u8(&c->r);
	return dec_begin_prepare(c);
}

/* r: flags, prepare_end_lsn, rollback_end_lsn, prepare_time, rollback_time, xid, gid. */
static int
dec_rollback_prepared(struct dec *c)
{
	c->m->u.twophase.flags = rd_u8(&c->r);
	c->m->u.twophase.lsn = rd_u64(&c->r);
	c->m->u.twophase.end_lsn = rd_u64(&c->r);
	c->m->u.twophase.time = rd_i64(&c->r);
	c->m->u.twophase.time2 = rd_i64(&c->r);
	c->m->xid = rd_u32(&c->r);
	c->m->u.twophase.gid = rd_str(&c->r);
	return 0;
}

/* Where a message may appear relative to Stream Start ... Stream Stop. */
enum where {
	ANYWHERE,	/* O */
	XID_IN_STREAM,	/* R Y I U D T M: anywhere, with a leading xid inside a stream */
	OUTSIDE_STREAM, /* transaction control, including S itself */
	INSIDE_STREAM,	/* E */
};

struct msg_desc {
	char type;
	const char *name;
	int min_proto;
	enum where where;
	int (*decode)(struct dec *c);
};

static const struct msg_desc descs[] = {
	{ 'B', "Begin", 1, OUTSIDE_STREAM, dec_begin },
	{ 'C', "Commit", 1, OUTSIDE_STREAM, dec_commit },
	{ 'O', "Origin", 1, ANYWHERE, dec_origin },
	{ 'R', "Relation", 1, XID_IN_STREAM, dec_relation },
	{ 'Y', "Type", 1, XID_IN_STREAM, dec_type },
	{ 'I', "Insert", 1, XID_IN_STREAM, dec_insert },
	{ 'U', "Update", 1, XID_IN_STREAM, dec_update },
	{ 'D', "Delete", 1, XID_IN_STREAM, dec_delete },
	{ 'T', "Truncate", 1, XID_IN_STREAM, dec_truncate },
	{ 'M', "Message", 1, XID_IN_STREAM, dec_message },
	{ 'S', "Stream Start", 2, OUTSIDE_STREAM, dec_stream_start },
	{ 'E', "Stream Stop", 2, INSIDE_STREAM, dec_stream_stop },
	{ 'c', "Stream Commit", 2, OUTSIDE_STREAM, dec_stream_commit },
	{ 'A', "Stream Abort", 2, OUTSIDE_STREAM, dec_stream_abort },
	{ 'b', "Begin Prepare", 3, OUTSIDE_STREAM, dec_begin_prepare },
	{ 'P', "Prepare", 3, OUTSIDE_STREAM, dec_prepare },
	{ 'K', "Commit Prepared", 3, OUTSIDE_STREAM, dec_prepare },
	{ 'r', "Rollback Prepared", 3, OUTSIDE_STREAM, dec_rollback_prepared },
	{ 'p', "Stream Prepare", 3, OUTSIDE_STREAM, dec_prepare },
};

static const struct msg_desc *
find_desc(uint8_t type)
{
	for (size_t i = 0; i < sizeof(descs) / sizeof(descs[0]); i++) {
		if ((uint8_t)descs[i].type == type) {
			return &descs[i];
		}
	}
	return NULL;
}

/* The protocol version and stream state must allow the message at all. */
static int
check_allowed(const struct dec *c, const struct msg_desc *desc)
{
	const struct pgoutput_decoder *d = c->d;

	if (d->proto_version < desc->min_proto) {
		return fail(c, "needs protocol version %d, the stream uses %d", desc->min_proto,
			    d->proto_version);
	}
	if (desc->where == OUTSIDE_STREAM && d->in_stream) {
		return fail(c, "not allowed inside a Stream Start ... Stream Stop block");
	}
	if (desc->where == INSIDE_STREAM && !d->in_stream) {
		return fail(c, "without a preceding Stream Start");
	}
	return 0;
}

/* The whole message must have been read, and nothing more. */
static int
check_consumed(const struct dec *c)
{
	if (c->r.failed) {
		return fail(c, "truncated message (%zu bytes)", c->len);
	}
	if (c->r.p != c->r.end) {
		return fail(c, "%zu trailing bytes after the message", (size_t)(c->r.end - c->r.p));
	}
	return 0;
}

static int
unknown_type(uint8_t type, char *errbuf, size_t errlen)
{
	if (type >= 0x20 && type < 0x7f) {
		errbuf_set(errbuf, errlen, "unknown pgoutput message type '%c'", type);
	} else {
		errbuf_set(errbuf, errlen, "unknown pgoutput message type 0x%02x", (unsigned)type);
	}
	return -EPROTO;
}

int
pgoutput_decode(struct pgoutput_decoder *d, const uint8_t *buf, size_t len,
		struct pgoutput_msg *ret, char *errbuf, size_t errlen)
{
	const struct msg_desc *desc;
	struct pgoutput_msg m;
	struct dec c;
	int err;

	if (!len) {
		errbuf_set(errbuf, errlen, "empty pgoutput message");
		return -EPROTO;
	}
	desc = find_desc(buf[0]);
	if (!desc) {
		return unknown_type(buf[0], errbuf, errlen);
	}
	memset(&m, 0, sizeof(m));
	m.type = (enum pgoutput_msg_type)desc->type;
	c = (struct dec){ d, rd_init(buf + 1, len - 1), &m, desc->name, len, 0, errbuf, errlen };
	err = check_allowed(&c, desc);
	if (err < 0) {
		return err;
	}
	if (desc->where == XID_IN_STREAM && d->in_stream) {
		m.xid = rd_u32(&c.r);
	}
	err = desc->decode(&c);
	if (err == 0) {
		err = check_consumed(&c);
	}
	if (err < 0) {
		return err;
	}
	if (m.type == PGOUTPUT_MSG_STREAM_START || m.type == PGOUTPUT_MSG_STREAM_STOP) {
		d->in_stream = m.type == PGOUTPUT_MSG_STREAM_START;
	}
	*ret = m;
	return 0;
}
