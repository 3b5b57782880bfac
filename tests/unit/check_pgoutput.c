/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgoutput.h"
#include "outboxd/pg/pgstream_frame.h"
#include "outboxd/util/mem.h"

/*
 * Vectors are hex strings: the captured PG 15.20 bytes of reference section 6, and synthetic
 * frames built to the layouts of section 3. Every decode runs on an exact-size heap copy so
 * the sanitizer build catches a read one byte past the message.
 */

/* Captured (reference 6): the worked example. */
#define CAP_BEGIN "42 00 00 00 00 01 53 d8 f0 00 03 04 a5 66 85 79 94 00 00 02 d7"
#define CAP_REL_BODY                                                                               \
	"00 00 40 00 70 75 62 6c 69 63 00 6f 75 74 62 6f 78 00 64 00 05"                           \
	"01 69 64 00 00 00 0b 86 ff ff ff ff"                                                      \
	"00 61 67 67 72 65 67 61 74 65 74 79 70 65 00 00 00 00 19 ff ff ff ff"                     \
	"00 61 67 67 72 65 67 61 74 65 69 64 00 00 00 00 19 ff ff ff ff"                           \
	"00 74 79 70 65 00 00 00 00 19 ff ff ff ff"                                                \
	"00 70 61 79 6c 6f 61 64 00 00 00 0e da ff ff ff ff"
#define CAP_RELATION "52" CAP_REL_BODY
#define CAP_INS_BODY                                                                               \
	"00 00 40 00 4e 00 05"                                                                     \
	"74 00 00 00 24 39 62 32 65 34 66 30 61 2d 36 63 31 64 2d 34 65 38 62 2d"                  \
	"61 33 66 32 2d 31 64 32 63 33 62 34 61 35 65 36 66"                                       \
	"74 00 00 00 05 6f 72 64 65 72"                                                            \
	"74 00 00 00 02 34 32"                                                                     \
	"74 00 00 00 0c 4f 72 64 65 72 43 72 65 61 74 65 64"                                       \
	"74 00 00 00 0f 7b 22 74 6f 74 61 6c 22 3a 20 39 39 2e 35 7d"
#define CAP_INSERT "49" CAP_INS_BODY
#define CAP_COMMIT "43 00 00 00 00 00 01 53 d8 f0 00 00 00 00 01 53 d9 20 00 03 04 a5 66 85 79 94"
#define CAP_MESSAGE                                                                                \
	"4d 01 00 00 00 00 01 53 d9 d0 6f 75 74 62 6f 78 00 00 00 00 07 7b 22 6b 22 3a 31 7d"

/* Captured (reference 6): proto 2 with streaming 'on'. */
#define CAP_STREAM_START_FIRST "53 00 00 02 db 01"
#define CAP_STREAM_START_LATER "53 00 00 02 db 00"
#define CAP_STREAM_INSERT      "49 00 00 02 db" CAP_INS_BODY
#define CAP_STREAM_RELATION    "52 00 00 02 db" CAP_REL_BODY
#define CAP_STREAM_ABORT_SUB   "41 00 00 02 db 00 00 02 dc"
#define CAP_STREAM_COMMIT                                                                          \
	"63 00 00 02 db 00 00 00 00 00 01 62 58 60 00 00 00 00 01 62 58 98 00 03 04 a5 69 8e f5 94"

/* Synthetic (reference 6). */
#define SYN_BEGIN "42 00 00 00 00 1a 2b 3c 40 00 02 ce bc 2f 87 70 00 00 00 03 03"
#define SYN_COMMIT_COPYDATA                                                                         \
	"64 00 00 00 37 77 00 00 00 00 1a 2b 3c 70 00 00 00 00 1a 2b 3c 70 00 02 ce bc 2f 87 75 dc" \
	"43 00 00 00 00 00 1a 2b 3c 40 00 00 00 00 1a 2b 3c 70 00 02 ce bc 2f 87 70 00"
#define SYN_KEEPALIVE "6b 00 00 00 00 1a 2b 3c a8 00 02 ce bc 30 20 0c 5c 01"
#define SYN_STATUS                                                                                 \
	"72 00 00 00 00 1a 2b 3c 70 00 00 00 00 1a 2b 3c 70 00 00 00 00 1a 2b 3c 70"               \
	"00 02 ce bc 2f 87 7d ac 00"

/* Synthetic, built here: LSN 0/1A2B3C40 and 0/1A2B3C70, times T1 and T2, xid 771, "gid-1". */
#define LSN1		      "00 00 00 00 1a 2b 3c 40"
#define LSN2		      "00 00 00 00 1a 2b 3c 70"
#define T1		      "00 02 ce bc 2f 87 70 00"
#define T2		      "00 02 ce bc 2f 87 75 dc"
#define XID		      "00 00 03 03"
#define GID		      "67 69 64 2d 31 00"
#define SYN_COMMIT_FLAGS      "43 01" LSN1 LSN2 T1
#define SYN_ORIGIN	      "4f 00 00 00 00 00 00 00 10 6e 6f 64 65 31 00"
#define SYN_TYPE	      "59 00 00 40 01 70 75 62 6c 69 63 00 6d 6f 6f 64 00"
#define SYN_TRUNCATE	      "54 00 00 00 02 03 00 00 40 00 00 00 40 01"
#define SYN_UPDATE	      "55 00 00 40 00 4e 00 01 6e"
#define SYN_UPDATE_K	      "55 00 00 40 00 4b 00 01 74 00 00 00 01 61 4e 00 02 74 00 00 00 01 62 75"
#define SYN_UPDATE_O	      "55 00 00 40 00 4f 00 02 6e 62 00 00 00 02 01 02 4e 00 02 6e 74 00 00 00 00"
#define SYN_DELETE_K	      "44 00 00 40 00 4b 00 01 74 00 00 00 01 61"
#define SYN_DELETE_O	      "44 00 00 40 00 4f 00 02 6e 74 00 00 00 02 34 32"
#define SYN_MESSAGE_NONTX     "4d 00 00 00 00 00 00 00 00 20 70 00 00 00 00 00"
#define SYN_STREAM_STOP	      "45"
#define SYN_STREAM_ABORT_TAIL "41 00 00 02 db 00 00 02 db" LSN1 T1
#define SYN_BEGIN_PREPARE     "62" LSN1 LSN2 T1 XID GID
#define SYN_PREPARE	      "50 00" LSN1 LSN2 T1 XID GID
#define SYN_COMMIT_PREPARED   "4b 00" LSN1 LSN2 T1 XID GID
#define SYN_ROLLBACK_PREPARED "72 00" LSN1 LSN2 T1 T2 XID GID
#define SYN_STREAM_PREPARE    "70 00" LSN1 LSN2 T1 XID GID

static struct pgoutput_decoder dec;
static char errbuf[256];
static uint8_t *held[64];
static int nheld;

/* Bytes of a hex string (spaces ignored), kept alive until the test ends. */
static uint8_t *
hex(const char *s, size_t *ret_len)
{
	uint8_t *b = xmalloc(strlen(s) / 2 + 1);
	size_t n = 0;
	char pair[3] = { 0 };

	while (*s) {
		if (*s == ' ') {
			s++;
			continue;
		}
		ck_assert(s[1] && s[1] != ' ');
		pair[0] = s[0];
		pair[1] = s[1];
		b[n++] = (uint8_t)strtoul(pair, NULL, 16);
		s += 2;
	}
	/* exact size, so a sanitizer sees any overread */
	b = xrealloc(b, n);
	ck_assert_int_lt(nheld, 64);
	held[nheld++] = b;
	*ret_len = n;
	return b;
}

/* An exact-size copy of the first @len bytes of @src, kept alive until the test ends. */
static uint8_t *
copy(const uint8_t *src, size_t len)
{
	uint8_t *b = xmalloc(len);

	memcpy(b, src, len);
	ck_assert_int_lt(nheld, 64);
	held[nheld++] = b;
	return b;
}

static void
setup(void)
{
	pgoutput_decoder_init(&dec, 1);
	errbuf[0] = '\0';
	nheld = 0;
}

static void
teardown(void)
{
	pgoutput_decoder_fini(&dec);
	while (nheld > 0) {
		free(held[--nheld]);
	}
}

static int
decode_hex(int proto, const char *s, struct pgoutput_msg *m)
{
	size_t len;
	const uint8_t *b = hex(s, &len);

	dec.proto_version = proto;
	return pgoutput_decode(&dec, b, len, m, errbuf, sizeof(errbuf));
}

/* Decode @s at @proto and require success. */
static void
ok(int proto, const char *s, struct pgoutput_msg *m)
{
	int r = decode_hex(proto, s, m);

	ck_assert_msg(r == 0, "decode failed: %s", errbuf);
}

/* Decode @s at @proto; it must fail with -EPROTO, leaving @ret and the decoder's state alone. */
static void
bad(int proto, const char *s)
{
	struct pgoutput_msg m, before;
	bool in_stream = dec.in_stream;

	memset(&m, 0x5a, sizeof(m));
	before = m;
	ck_assert_int_eq(decode_hex(proto, s, &m), -EPROTO);
	ck_assert_mem_eq(&m, &before, sizeof(m));
	ck_assert(dec.in_stream == in_stream);
	ck_assert_msg(errbuf[0] != '\0', "no error text");
}

static bool
col_is(const struct pgoutput_col *c, char kind, const char *text)
{
	return c->kind == kind && slice_eq_str(c->value, text);
}

static bool
relcol_is(const struct pgoutput_rel_col *c, uint8_t flags, const char *name, uint32_t oid)
{
	return c->flags == flags && slice_eq_str(c->name, name) && c->type_oid == oid &&
	       c->typmod == -1;
}

/* ---- frames ---- */

START_TEST(test_xlogdata_frame_carries_the_commit_and_its_lsns)
{
	struct pgstream_frame f;
	struct pgoutput_msg m;
	size_t len;
	const uint8_t *wire = hex(SYN_COMMIT_COPYDATA, &len);
	const uint8_t *payload;

	ck_assert_uint_eq(len, 56);
	ck_assert_int_eq(wire[0], 'd');
	ck_assert_uint_eq((size_t)wire[4] + 1, len); /* Int32 length counts itself, not 'd' */
	payload = copy(wire + 5, len - 5);
	ck_assert_int_eq(pgstream_frame_decode(payload, len - 5, &f, errbuf, sizeof(errbuf)), 0);
	ck_assert_int_eq(f.kind, PGSTREAM_FRAME_XLOGDATA);
	ck_assert_uint_eq(f.wal_start, 0x1A2B3C70);
	ck_assert_uint_eq(f.wal_end, 0x1A2B3C70);
	ck_assert_int_eq(f.send_time, 790257600001500);
	ck_assert(!f.reply_requested);
	ck_assert_uint_eq(f.data_len, 26);
	ck_assert_ptr_eq(f.data, payload + 25);
	ck_assert_int_eq(pgoutput_decode(&dec, f.data, f.data_len, &m, errbuf, sizeof(errbuf)), 0);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_COMMIT);
	ck_assert_uint_eq(m.u.commit.flags, 0);
	ck_assert_uint_eq(m.u.commit.commit_lsn, 0x1A2B3C40);
	ck_assert_uint_eq(m.u.commit.end_lsn, 0x1A2B3C70);
	ck_assert_int_eq(m.u.commit.commit_time, 790257600000000);
}
END_TEST

START_TEST(test_keepalive_frame_gives_wal_end_send_time_and_reply_flag)
{
	struct pgstream_frame f;
	size_t len;
	const uint8_t *b = hex(SYN_KEEPALIVE, &len);

	ck_assert_uint_eq(len, 18);
	ck_assert_int_eq(pgstream_frame_decode(b, len, &f, errbuf, sizeof(errbuf)), 0);
	ck_assert_int_eq(f.kind, PGSTREAM_FRAME_KEEPALIVE);
	ck_assert_uint_eq(f.wal_end, 0x1A2B3CA8);
	ck_assert_int_eq(f.send_time, 0x0002cebc30200c5cLL);
	ck_assert(f.reply_requested);
	ck_assert_ptr_null(f.data);
	ck_assert_uint_eq(f.data_len, 0);
}
END_TEST

START_TEST(test_status_update_encodes_the_reference_bytes)
{
	uint8_t out[PGSTREAM_FRAME_STATUS_LEN];
	size_t len;
	const uint8_t *want = hex(SYN_STATUS, &len);

	ck_assert_uint_eq(len, PGSTREAM_FRAME_STATUS_LEN);
	memset(out, 0xee, sizeof(out));
	pgstream_frame_status(out, 0x1A2B3C70, 0x1A2B3C70, 0x1A2B3C70, 0x0002cebc2f877dacLL, false);
	ck_assert_mem_eq(out, want, PGSTREAM_FRAME_STATUS_LEN);
	pgstream_frame_status(out, 1, 2, 3, -1, true);
	ck_assert_int_eq(out[0], 'r');
	ck_assert_int_eq(out[8], 1);
	ck_assert_int_eq(out[16], 2);
	ck_assert_int_eq(out[24], 3);
	ck_assert_int_eq(out[25], 0xff);
	ck_assert_int_eq(out[33], 1);
}
END_TEST

START_TEST(test_malformed_frames_are_refused)
{
	static const char *const bad_frames[] = {
		"",							    /* empty */
		"78 00",						    /* unknown kind */
		"77" LSN1 LSN1 "00 02 ce bc 2f 87 75",			    /* 24-byte XLogData */
		"6b 00 00 00 00 1a 2b 3c a8 00 02 ce bc 30 20 0c 5c",	    /* 17-byte keepalive */
		"6b 00 00 00 00 1a 2b 3c a8 00 02 ce bc 30 20 0c 5c 01 00", /* 19 bytes */
		"72" LSN1 LSN1 LSN1 T1 "00",				    /* our own 'r' */
	};
	struct pgstream_frame f, before;
	size_t len;

	for (size_t i = 0; i < sizeof(bad_frames) / sizeof(bad_frames[0]); i++) {
		const uint8_t *b = hex(bad_frames[i], &len);

		memset(&f, 0x5a, sizeof(f));
		before = f;
		errbuf[0] = '\0';
		ck_assert_int_eq(
			pgstream_frame_decode(len ? b : NULL, len, &f, errbuf, sizeof(errbuf)),
			-EPROTO);
		ck_assert_mem_eq(&f, &before, sizeof(f));
		ck_assert(errbuf[0] != '\0');
	}
	/* NULL errbuf is allowed */
	ck_assert_int_eq(pgstream_frame_decode(hex("78", &len), 1, &f, NULL, 0), -EPROTO);
}
END_TEST

START_TEST(test_xlogdata_frame_may_carry_no_data)
{
	struct pgstream_frame f;
	size_t len;
	const uint8_t *b = hex("77" LSN1 LSN1 T2, &len);

	ck_assert_int_eq(pgstream_frame_decode(b, len, &f, errbuf, sizeof(errbuf)), 0);
	ck_assert_uint_eq(f.data_len, 0);
}
END_TEST

/* ---- transactions ---- */

START_TEST(test_captured_begin_decodes_final_lsn_time_and_xid)
{
	struct pgoutput_msg m;

	ok(1, CAP_BEGIN, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_BEGIN);
	ck_assert_uint_eq(m.u.begin.final_lsn, 0x153D8F0);
	ck_assert_int_eq(m.u.begin.commit_time, 849533366270356);
	ck_assert_uint_eq(m.xid, 727);
}
END_TEST

START_TEST(test_captured_insert_decodes_relid_and_text_columns)
{
	struct pgoutput_msg m;
	const struct pgoutput_col *c;

	ok(1, CAP_INSERT, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_INSERT);
	ck_assert_uint_eq(m.xid, 0);
	ck_assert_uint_eq(m.u.insert.relid, 16384);
	ck_assert_int_eq(m.u.insert.newtup.ncols, 5);
	c = m.u.insert.newtup.cols;
	ck_assert(col_is(&c[0], 't', "9b2e4f0a-6c1d-4e8b-a3f2-1d2c3b4a5e6f"));
	ck_assert(col_is(&c[1], 't', "order"));
	ck_assert(col_is(&c[2], 't', "42"));
	ck_assert(col_is(&c[3], 't', "OrderCreated"));
	ck_assert(col_is(&c[4], 't', "{\"total\": 99.5}"));
}
END_TEST

START_TEST(test_captured_commit_decodes_its_lsns_and_time)
{
	struct pgoutput_msg m;

	ok(1, CAP_COMMIT, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_COMMIT);
	ck_assert_uint_eq(m.u.commit.flags, 0);
	ck_assert_uint_eq(m.u.commit.commit_lsn, 0x153D8F0);
	ck_assert_uint_eq(m.u.commit.end_lsn, 0x153D920);
	ck_assert_int_eq(m.u.commit.commit_time, 849533366270356);
}
END_TEST

START_TEST(test_captured_logical_message_decodes_prefix_and_content)
{
	struct pgoutput_msg m;

	ok(1, CAP_MESSAGE, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_MESSAGE);
	ck_assert_uint_eq(m.u.message.flags, 1);
	ck_assert_uint_eq(m.u.message.lsn, 0x153D9D0);
	ck_assert(slice_eq_str(m.u.message.prefix, "outbox"));
	ck_assert(slice_eq_str(m.u.message.content, "{\"k\":1}"));
}
END_TEST

START_TEST(test_begin_and_commit_decode_every_field)
{
	struct pgoutput_msg m;

	ok(1, SYN_BEGIN, &m);
	ck_assert_uint_eq(m.xid, 771);
	ck_assert_uint_eq(m.u.begin.final_lsn, 0x1A2B3C40);
	ck_assert_int_eq(m.u.begin.commit_time, 790257600000000);
	/* Commit flags other than 0 are reported, not rejected */
	ok(1, SYN_COMMIT_FLAGS, &m);
	ck_assert_uint_eq(m.u.commit.flags, 1);
	ck_assert_uint_eq(m.u.commit.end_lsn, 0x1A2B3C70);
}
END_TEST

START_TEST(test_origin_type_and_truncate_messages_decode)
{
	struct pgoutput_msg m;

	ok(1, SYN_ORIGIN, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_ORIGIN);
	ck_assert_uint_eq(m.u.origin.lsn, 0x10);
	ck_assert(slice_eq_str(m.u.origin.name, "node1"));
	ok(1, SYN_TYPE, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_TYPE);
	ck_assert_uint_eq(m.u.type.type_oid, 16385);
	ck_assert(slice_eq_str(m.u.type.nspname, "public"));
	ck_assert(slice_eq_str(m.u.type.typname, "mood"));
	ok(1, SYN_TRUNCATE, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_TRUNCATE);
	ck_assert_int_eq(m.u.truncate.nrels, 2);
	ck_assert_uint_eq(m.u.truncate.options, 3);
	ck_assert_uint_eq(m.u.truncate.relids[0], 16384);
	ck_assert_uint_eq(m.u.truncate.relids[1], 16385);
}
END_TEST

START_TEST(test_update_decodes_without_and_with_key_or_old_tuple)
{
	struct pgoutput_msg m;
	const struct pgoutput_col *c;

	ok(1, SYN_UPDATE, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_UPDATE);
	ck_assert_int_eq(m.u.update.old_kind, 0);
	ck_assert_int_eq(m.u.update.oldtup.ncols, 0);
	ck_assert_int_eq(m.u.update.newtup.ncols, 1);
	ck_assert_int_eq(m.u.update.newtup.cols[0].kind, 'n');
	ck_assert_ptr_null(m.u.update.newtup.cols[0].value.p);

	ok(1, SYN_UPDATE_K, &m);
	ck_assert_int_eq(m.u.update.old_kind, 'K');
	ck_assert_int_eq(m.u.update.oldtup.ncols, 1);
	ck_assert(col_is(&m.u.update.oldtup.cols[0], 't', "a"));
	ck_assert_int_eq(m.u.update.newtup.ncols, 2);
	ck_assert(col_is(&m.u.update.newtup.cols[0], 't', "b"));
	ck_assert_int_eq(m.u.update.newtup.cols[1].kind, 'u');

	ok(1, SYN_UPDATE_O, &m);
	ck_assert_int_eq(m.u.update.old_kind, 'O');
	c = m.u.update.oldtup.cols;
	ck_assert_int_eq(c[0].kind, 'n');
	ck_assert_int_eq(c[1].kind, 'b');
	ck_assert_uint_eq(c[1].value.len, 2);
	ck_assert_mem_eq(c[1].value.p, "\x01\x02", 2);
	c = m.u.update.newtup.cols;
	ck_assert_int_eq(c[0].kind, 'n');
	ck_assert_int_eq(c[1].kind, 't');
	ck_assert_uint_eq(c[1].value.len, 0);
	ck_assert_ptr_nonnull(c[1].value.p);
}
END_TEST

START_TEST(test_delete_decodes_with_key_or_old_tuple)
{
	struct pgoutput_msg m;

	ok(1, SYN_DELETE_K, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_DELETE);
	ck_assert_uint_eq(m.u.del.relid, 16384);
	ck_assert_int_eq(m.u.del.old_kind, 'K');
	ck_assert(col_is(&m.u.del.oldtup.cols[0], 't', "a"));
	ok(1, SYN_DELETE_O, &m);
	ck_assert_int_eq(m.u.del.old_kind, 'O');
	ck_assert_int_eq(m.u.del.oldtup.ncols, 2);
	ck_assert_int_eq(m.u.del.oldtup.cols[0].kind, 'n');
	ck_assert(col_is(&m.u.del.oldtup.cols[1], 't', "42"));
}
END_TEST

START_TEST(test_nontransactional_message_has_flags_0_and_may_be_empty)
{
	struct pgoutput_msg m;

	ok(1, SYN_MESSAGE_NONTX, &m);
	ck_assert_uint_eq(m.u.message.flags, 0);
	ck_assert_uint_eq(m.u.message.lsn, 0x20);
	ck_assert(slice_eq_str(m.u.message.prefix, "p"));
	ck_assert_uint_eq(m.u.message.content.len, 0);
}
END_TEST

/* Append @n bytes of hex-less raw data to a growing test buffer. */
static void
put(uint8_t **b, size_t *len, const void *p, size_t n)
{
	*b = xrealloc(*b, *len + n);
	memcpy(*b + *len, p, n);
	*len += n;
}

/* A TupleData of @ncols one-byte text columns, each holding 'a' + i % 26. */
static void
put_tuple(uint8_t **b, size_t *len, int ncols)
{
	uint8_t hdr[2] = { (uint8_t)(ncols >> 8), (uint8_t)ncols };

	put(b, len, hdr, 2);
	for (int i = 0; i < ncols; i++) {
		uint8_t col[6] = { 't', 0, 0, 0, 1, (uint8_t)('a' + i % 26) };

		put(b, len, col, sizeof(col));
	}
}

/* The old tuple must stay intact when the new one grows the scratch array. */
START_TEST(test_update_wide_tuples)
{
	uint8_t *b = NULL;
	size_t len = 0;
	struct pgoutput_msg m;

	put(&b, &len, "U\0\0\x40\0K", 6);
	put_tuple(&b, &len, 10);
	put(&b, &len, "N", 1);
	put_tuple(&b, &len, 300);
	ck_assert_int_eq(pgoutput_decode(&dec, b, len, &m, errbuf, sizeof(errbuf)), 0);
	ck_assert_int_eq(m.u.update.oldtup.ncols, 10);
	ck_assert_int_eq(m.u.update.newtup.ncols, 300);
	for (int i = 0; i < 10; i++) {
		ck_assert_int_eq(m.u.update.oldtup.cols[i].value.p[0], 'a' + i % 26);
	}
	for (int i = 0; i < 300; i++) {
		ck_assert_int_eq(m.u.update.newtup.cols[i].value.p[0], 'a' + i % 26);
	}
	free(b);
}
END_TEST

/* ---- relations ---- */

START_TEST(test_captured_relation_decodes_columns_types_and_key_flags)
{
	struct pgoutput_msg m;
	const struct pgoutput_rel_col *c;
	size_t len;

	hex(CAP_RELATION, &len);
	ck_assert_uint_eq(len, 109);
	ok(1, CAP_RELATION, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_RELATION);
	ck_assert_uint_eq(m.xid, 0);
	ck_assert_uint_eq(m.u.relation.relid, 16384);
	ck_assert(slice_eq_str(m.u.relation.nspname, "public"));
	ck_assert(slice_eq_str(m.u.relation.relname, "outbox"));
	ck_assert_int_eq(m.u.relation.replident, 'd');
	ck_assert_int_eq(m.u.relation.ncols, 5);
	c = m.u.relation.cols;
	ck_assert(relcol_is(&c[0], 1, "id", 2950));
	ck_assert(relcol_is(&c[1], 0, "aggregatetype", 25));
	ck_assert(relcol_is(&c[2], 0, "aggregateid", 25));
	ck_assert(relcol_is(&c[3], 0, "type", 25));
	ck_assert(relcol_is(&c[4], 0, "payload", 3802));
}
END_TEST

START_TEST(test_captured_insert_fixture_is_103_bytes)
{
	size_t len;

	hex(CAP_INSERT, &len);
	ck_assert_uint_eq(len, 103);
}
END_TEST

START_TEST(test_relation_empty_namespace_and_no_columns)
{
	struct pgoutput_msg m;

	ok(1, "52 00 00 00 10 00 74 00 6e 00 00", &m);
	ck_assert_uint_eq(m.u.relation.nspname.len, 0);
	ck_assert(slice_eq_str(m.u.relation.relname, "t"));
	ck_assert_int_eq(m.u.relation.replident, 'n');
	ck_assert_int_eq(m.u.relation.ncols, 0);
	ck_assert_ptr_null(m.u.relation.cols);
}
END_TEST

/* ---- streaming ---- */

START_TEST(test_captured_stream_start_data_and_stop_decode_and_track_the_block)
{
	struct pgoutput_msg m;

	ok(2, CAP_STREAM_START_FIRST, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_STREAM_START);
	ck_assert_uint_eq(m.xid, 0x2db);
	ck_assert(m.u.stream_start.first_segment);
	ck_assert(dec.in_stream);

	ok(2, CAP_STREAM_RELATION, &m);
	ck_assert_uint_eq(m.xid, 0x2db);
	ck_assert_uint_eq(m.u.relation.relid, 16384);
	ck_assert_int_eq(m.u.relation.ncols, 5);
	ck_assert(relcol_is(&m.u.relation.cols[4], 0, "payload", 3802));

	ok(2, CAP_STREAM_INSERT, &m);
	ck_assert_uint_eq(m.xid, 0x2db);
	ck_assert_uint_eq(m.u.insert.relid, 16384);
	ck_assert(col_is(&m.u.insert.newtup.cols[1], 't', "order"));

	ok(2, SYN_STREAM_STOP, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_STREAM_STOP);
	ck_assert(!dec.in_stream);

	ok(2, CAP_STREAM_ABORT_SUB, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_STREAM_ABORT);
	ck_assert_uint_eq(m.xid, 0x2db);
	ck_assert_uint_eq(m.u.stream_abort.subxid, 0x2dc);
	ck_assert(!m.u.stream_abort.has_lsn);

	ok(2, CAP_STREAM_START_LATER, &m);
	ck_assert(!m.u.stream_start.first_segment);
	ok(2, SYN_STREAM_STOP, &m);

	ok(2, CAP_STREAM_COMMIT, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_STREAM_COMMIT);
	ck_assert_uint_eq(m.xid, 0x2db);
	ck_assert_uint_eq(m.u.stream_commit.flags, 0);
	ck_assert_uint_eq(m.u.stream_commit.commit_lsn, 0x1625860);
	ck_assert_uint_eq(m.u.stream_commit.end_lsn, 0x1625898);
	ck_assert_int_eq(m.u.stream_commit.commit_time, 0x000304a5698ef594LL);
}
END_TEST

START_TEST(test_stream_data_messages_carry_xid)
{
	struct pgoutput_msg m;

	dec.in_stream = true;
	ok(2,
	   "59 00 00 02 dc"
	   "00 00 40 01 70 00 6d 00",
	   &m);
	ck_assert_uint_eq(m.xid, 0x2dc);
	ck_assert_uint_eq(m.u.type.type_oid, 16385);
	ok(2,
	   "55 00 00 02 dc"
	   "00 00 40 00 4e 00 01 6e",
	   &m);
	ck_assert_uint_eq(m.xid, 0x2dc);
	ok(2,
	   "44 00 00 02 dc"
	   "00 00 40 00 4b 00 01 6e",
	   &m);
	ck_assert_uint_eq(m.xid, 0x2dc);
	ok(2,
	   "54 00 00 02 dc"
	   "00 00 00 01 00 00 00 40 00",
	   &m);
	ck_assert_uint_eq(m.xid, 0x2dc);
	ck_assert_int_eq(m.u.truncate.nrels, 1);
	ok(2,
	   "4d 00 00 02 db"
	   "01 00 00 00 00 00 00 00 20 70 00 00 00 00 01 78",
	   &m);
	ck_assert_uint_eq(m.xid, 0x2db);
	ck_assert(slice_eq_str(m.u.message.content, "x"));
	/* Origin never carries one */
	ok(2, SYN_ORIGIN, &m);
	ck_assert_uint_eq(m.xid, 0);
	ck_assert(dec.in_stream);
}
END_TEST

START_TEST(test_stream_abort_forms)
{
	struct pgoutput_msg m;

	ok(4, SYN_STREAM_ABORT_TAIL, &m);
	ck_assert_uint_eq(m.xid, 0x2db);
	ck_assert_uint_eq(m.u.stream_abort.subxid, 0x2db);
	ck_assert(m.u.stream_abort.has_lsn);
	ck_assert_uint_eq(m.u.stream_abort.abort_lsn, 0x1A2B3C40);
	ck_assert_int_eq(m.u.stream_abort.abort_time, 790257600000000);
	ok(4, CAP_STREAM_ABORT_SUB, &m);
	ck_assert(!m.u.stream_abort.has_lsn);
	ck_assert_uint_eq(m.u.stream_abort.abort_lsn, 0);
	/* the tail exists only from proto 4 */
	bad(3, SYN_STREAM_ABORT_TAIL);
	bad(2, SYN_STREAM_ABORT_TAIL);
}
END_TEST

/* ---- twophase ---- */

START_TEST(test_two_phase_messages_decode_on_protocol_3)
{
	struct pgoutput_msg m;

	ok(3, SYN_BEGIN_PREPARE, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_BEGIN_PREPARE);
	ck_assert_uint_eq(m.xid, 771);
	ck_assert_uint_eq(m.u.twophase.flags, 0);
	ck_assert_uint_eq(m.u.twophase.lsn, 0x1A2B3C40);
	ck_assert_uint_eq(m.u.twophase.end_lsn, 0x1A2B3C70);
	ck_assert_int_eq(m.u.twophase.time, 790257600000000);
	ck_assert(slice_eq_str(m.u.twophase.gid, "gid-1"));

	ok(3, SYN_PREPARE, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_PREPARE);
	ck_assert_uint_eq(m.xid, 771);
	ck_assert_uint_eq(m.u.twophase.end_lsn, 0x1A2B3C70);
	ck_assert(slice_eq_str(m.u.twophase.gid, "gid-1"));

	ok(3, SYN_COMMIT_PREPARED, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_COMMIT_PREPARED);
	ck_assert_uint_eq(m.u.twophase.lsn, 0x1A2B3C40);
	ck_assert_int_eq(m.u.twophase.time, 790257600000000);

	ok(4, SYN_ROLLBACK_PREPARED, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_ROLLBACK_PREPARED);
	ck_assert_uint_eq(m.u.twophase.lsn, 0x1A2B3C40);
	ck_assert_uint_eq(m.u.twophase.end_lsn, 0x1A2B3C70);
	ck_assert_int_eq(m.u.twophase.time, 790257600000000);
	ck_assert_int_eq(m.u.twophase.time2, 790257600001500);
	ck_assert_uint_eq(m.xid, 771);

	ok(3, SYN_STREAM_PREPARE, &m);
	ck_assert_int_eq(m.type, PGOUTPUT_MSG_STREAM_PREPARE);
	ck_assert_uint_eq(m.xid, 771);
	ck_assert(slice_eq_str(m.u.twophase.gid, "gid-1"));
}
END_TEST

/* ---- malformed ---- */

struct vec {
	const char *hex;
	int proto;
	bool in_stream;
	size_t valid_prefix; /* a shorter length that is itself a valid message, or 0 */
};

static const struct vec all_vecs[] = {
	{ CAP_BEGIN, 1, false, 0 },
	{ CAP_RELATION, 1, false, 0 },
	{ CAP_INSERT, 1, false, 0 },
	{ CAP_COMMIT, 1, false, 0 },
	{ CAP_MESSAGE, 1, false, 0 },
	{ CAP_STREAM_START_FIRST, 2, false, 0 },
	{ CAP_STREAM_INSERT, 2, true, 0 },
	{ CAP_STREAM_RELATION, 2, true, 0 },
	{ CAP_STREAM_ABORT_SUB, 2, false, 0 },
	{ CAP_STREAM_COMMIT, 2, false, 0 },
	{ SYN_BEGIN, 1, false, 0 },
	{ SYN_ORIGIN, 1, false, 0 },
	{ SYN_TYPE, 1, false, 0 },
	{ SYN_TRUNCATE, 1, false, 0 },
	{ SYN_UPDATE, 1, false, 0 },
	{ SYN_UPDATE_K, 1, false, 0 },
	{ SYN_UPDATE_O, 1, false, 0 },
	{ SYN_DELETE_K, 1, false, 0 },
	{ SYN_DELETE_O, 1, false, 0 },
	{ SYN_MESSAGE_NONTX, 1, false, 0 },
	{ SYN_STREAM_STOP, 2, true, 0 },
	{ SYN_STREAM_ABORT_TAIL, 4, false, 9 },
	{ SYN_BEGIN_PREPARE, 3, false, 0 },
	{ SYN_PREPARE, 3, false, 0 },
	{ SYN_COMMIT_PREPARED, 3, false, 0 },
	{ SYN_ROLLBACK_PREPARED, 3, false, 0 },
	{ SYN_STREAM_PREPARE, 3, false, 0 },
};

/* Decode a @len-byte exact copy of @b; on failure @ret and the stream flag must not change. */
static int
decode_len(const struct vec *v, const uint8_t *b, size_t len)
{
	struct pgoutput_msg m, before;
	uint8_t *exact = len ? xmalloc(len) : NULL;
	int r;

	if (len) {
		memcpy(exact, b, len);
	}
	memset(&m, 0x5a, sizeof(m));
	before = m;
	dec.proto_version = v->proto;
	dec.in_stream = v->in_stream;
	r = pgoutput_decode(&dec, exact, len, &m, errbuf, sizeof(errbuf));
	free(exact);
	if (r < 0) {
		ck_assert_mem_eq(&m, &before, sizeof(m));
		ck_assert(dec.in_stream == v->in_stream);
	}
	return r;
}

START_TEST(test_every_truncation_is_refused_leaving_output_and_stream_state)
{
	const struct vec *v = &all_vecs[_i];
	size_t len;
	const uint8_t *b = hex(v->hex, &len);

	ck_assert_int_eq(decode_len(v, b, len), 0);
	for (size_t n = 0; n < len; n++) {
		if (n == v->valid_prefix && n) {
			continue;
		}
		ck_assert_msg(decode_len(v, b, n) == -EPROTO, "%s: prefix %zu accepted", v->hex, n);
	}
}
END_TEST

START_TEST(test_a_trailing_byte_is_refused)
{
	const struct vec *v = &all_vecs[_i];
	size_t len;
	const uint8_t *b = hex(v->hex, &len);
	uint8_t *longer = xmalloc(len + 1);

	memcpy(longer, b, len);
	longer[len] = 0;
	ck_assert_int_eq(decode_len(v, longer, len + 1), -EPROTO);
	ck_assert_msg(strstr(errbuf, "trailing") || strstr(errbuf, "truncated"), "%s", errbuf);
	free(longer);
}
END_TEST

START_TEST(test_messages_need_their_protocol_version)
{
	bad(1, CAP_STREAM_START_FIRST);
	ck_assert_str_eq(errbuf, "Stream Start: needs protocol version 2, the stream uses 1");
	bad(1, CAP_STREAM_COMMIT);
	bad(1, CAP_STREAM_ABORT_SUB);
	bad(2, SYN_BEGIN_PREPARE);
	bad(2, SYN_PREPARE);
	bad(2, SYN_COMMIT_PREPARED);
	bad(2, SYN_ROLLBACK_PREPARED);
	bad(2, SYN_STREAM_PREPARE);
	dec.in_stream = true;
	bad(1, SYN_STREAM_STOP);
}
END_TEST

START_TEST(test_stream_blocks_refuse_unbalanced_and_nested_messages)
{
	struct pgoutput_msg m;

	/* Stream Stop without Stream Start */
	bad(2, SYN_STREAM_STOP);
	ok(2, CAP_STREAM_START_FIRST, &m);
	/* nested Stream Start, and transaction control inside a block */
	bad(2, CAP_STREAM_START_LATER);
	bad(2, SYN_BEGIN);
	bad(2, CAP_COMMIT);
	bad(2, CAP_STREAM_COMMIT);
	bad(2, CAP_STREAM_ABORT_SUB);
	bad(3, SYN_PREPARE);
	/* inside the block an Insert without its xid is misread: its relid taken as the xid */
	bad(2, CAP_INSERT);
	ck_assert(dec.in_stream);
	ok(2, SYN_STREAM_STOP, &m);
	/* outside the block an Insert with an xid has the wrong shape */
	bad(2, CAP_STREAM_INSERT);
	bad(2, CAP_STREAM_RELATION);
}
END_TEST

START_TEST(test_unknown_message_type_is_refused_naming_it)
{
	bad(4, "5a 00 00");
	ck_assert_str_eq(errbuf, "unknown pgoutput message type 'Z'");
	bad(4, "00");
	bad(4, "ff 01");
	bad(4, "77");
	ck_assert_int_eq(pgoutput_decode(&dec, NULL, 0, &(struct pgoutput_msg){ 0 }, NULL, 0),
			 -EPROTO);
}
END_TEST

START_TEST(test_counts_larger_than_the_bytes_left_are_refused)
{
	/* Insert: 5 columns claimed, 3 bytes left */
	bad(1, "49 00 00 40 00 4e 00 05 6e 6e 6e");
	ck_assert_str_eq(errbuf, "Insert: tuple has 5 columns but only 3 bytes remain");
	bad(1, "49 00 00 40 00 4e ff ff");		     /* negative ncols */
	bad(1, "49 00 00 40 00 4e 7f ff 6e");		     /* 32767 columns */
	bad(1, "49 00 00 40 00 4e 00 01 74 ff ff ff ff");    /* negative length */
	bad(1, "49 00 00 40 00 4e 00 01 74 7f ff ff ff 61"); /* length past the end */
	bad(1, "49 00 00 40 00 4e 00 01 78");		     /* column kind 'x' */
	ck_assert_str_eq(errbuf, "Insert: column 1 has unknown kind 0x78");
	bad(1, "49 00 00 40 00 4b 00 01 6e");		  /* Insert with 'K' */
	bad(1, "55 00 00 40 00 4b 00 01 6e 4b 00 01 6e"); /* Update: 'K' twice */
	bad(1, "55 00 00 40 00 58 00 01 6e");		  /* Update: 'X' */
	bad(1, "44 00 00 40 00 4e 00 01 6e");		  /* Delete with 'N' */
	bad(1, "52 00 00 40 00 00 74 00 64 ff ff");	  /* Relation: negative ncols */
	bad(1, "52 00 00 40 00 00 74 00 64 00 02 01 61 00 00 00 00 19 ff ff ff ff");
	bad(1, "52 00 00 40 00 00 74 00 78 00 00");		   /* replica identity 'x' */
	bad(1, "54 ff ff ff ff 00");				   /* Truncate: negative nrels */
	bad(1, "54 7f ff ff ff 00 00 00 40 00");		   /* Truncate: huge nrels */
	bad(1, "4d 01 00 00 00 00 00 00 00 20 70 00 ff ff ff ff"); /* Message: negative len */
	bad(1, "4d 01 00 00 00 00 00 00 00 20 70 00 7f ff ff ff 78");
	bad(1, "4f 00 00 00 00 00 00 00 10 6e 6f"); /* Origin: no NUL */
}
END_TEST

START_TEST(test_decode_errors_need_no_errbuf_or_fit_a_tiny_one)
{
	struct pgoutput_msg m;
	size_t len;
	const uint8_t *b = hex("49 00 00 40 00 4e 00 05 6e", &len);

	ck_assert_int_eq(pgoutput_decode(&dec, b, len, &m, NULL, 0), -EPROTO);
	ck_assert_int_eq(pgoutput_decode(&dec, b, len, &m, errbuf, 1), -EPROTO);
	ck_assert_str_eq(errbuf, "");
}
END_TEST

static TCase *
tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, setup, teardown);
	suite_add_tcase(s, tc);
	return tc;
}

static Suite *
pgoutput_suite(void)
{
	Suite *s = suite_create("pgoutput");
	TCase *tc;
	int nvecs = (int)(sizeof(all_vecs) / sizeof(all_vecs[0]));

	tc = tcase(s, "frames");
	tcase_add_test(tc, test_xlogdata_frame_carries_the_commit_and_its_lsns);
	tcase_add_test(tc, test_keepalive_frame_gives_wal_end_send_time_and_reply_flag);
	tcase_add_test(tc, test_status_update_encodes_the_reference_bytes);
	tcase_add_test(tc, test_malformed_frames_are_refused);
	tcase_add_test(tc, test_xlogdata_frame_may_carry_no_data);

	tc = tcase(s, "transactions");
	tcase_add_test(tc, test_captured_begin_decodes_final_lsn_time_and_xid);
	tcase_add_test(tc, test_captured_insert_decodes_relid_and_text_columns);
	tcase_add_test(tc, test_captured_commit_decodes_its_lsns_and_time);
	tcase_add_test(tc, test_captured_logical_message_decodes_prefix_and_content);
	tcase_add_test(tc, test_begin_and_commit_decode_every_field);
	tcase_add_test(tc, test_origin_type_and_truncate_messages_decode);
	tcase_add_test(tc, test_update_decodes_without_and_with_key_or_old_tuple);
	tcase_add_test(tc, test_delete_decodes_with_key_or_old_tuple);
	tcase_add_test(tc, test_nontransactional_message_has_flags_0_and_may_be_empty);
	tcase_add_test(tc, test_update_wide_tuples);

	tc = tcase(s, "relations");
	tcase_add_test(tc, test_captured_relation_decodes_columns_types_and_key_flags);
	tcase_add_test(tc, test_captured_insert_fixture_is_103_bytes);
	tcase_add_test(tc, test_relation_empty_namespace_and_no_columns);

	tc = tcase(s, "streaming");
	tcase_add_test(tc, test_captured_stream_start_data_and_stop_decode_and_track_the_block);
	tcase_add_test(tc, test_stream_data_messages_carry_xid);
	tcase_add_test(tc, test_stream_abort_forms);

	tc = tcase(s, "twophase");
	tcase_add_test(tc, test_two_phase_messages_decode_on_protocol_3);

	tc = tcase(s, "malformed");
	tcase_add_loop_test(tc, test_every_truncation_is_refused_leaving_output_and_stream_state, 0,
			    nvecs);
	tcase_add_loop_test(tc, test_a_trailing_byte_is_refused, 0, nvecs);
	tcase_add_test(tc, test_messages_need_their_protocol_version);
	tcase_add_test(tc, test_stream_blocks_refuse_unbalanced_and_nested_messages);
	tcase_add_test(tc, test_unknown_message_type_is_refused_naming_it);
	tcase_add_test(tc, test_counts_larger_than_the_bytes_left_are_refused);
	tcase_add_test(tc, test_decode_errors_need_no_errbuf_or_fit_a_tiny_one);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(pgoutput_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
