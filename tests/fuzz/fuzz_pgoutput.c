/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer entry point for the pgoutput decoder. The input is tried three ways: as a
 * CopyData payload (frame decode, then the message of a 'w' frame), and as a bare pgoutput
 * message, each at protocol versions 1 to 4 and both inside and outside a stream block.
 * Relation messages go into a relcache, which is freed at the end, so leaks show up.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgoutput.h"
#include "outboxd/pg/pgstream_frame.h"
#include "outboxd/pg/relcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Read every borrowed byte, so a slice or tuple pointing past the input is caught. */
static unsigned
touch(struct slice s)
{
	unsigned sum = 0;

	for (size_t i = 0; i < s.len; i++) {
		sum += (unsigned char)s.p[i];
	}
	return sum;
}

static unsigned
touch_tuple(const struct pgoutput_tuple *t)
{
	unsigned sum = 0;

	for (int i = 0; i < t->ncols; i++) {
		sum += (unsigned char)t->cols[i].kind + touch(t->cols[i].value);
	}
	return sum;
}

static unsigned
touch_msg(const struct pgoutput_msg *m)
{
	switch (m->type) {
	case PGOUTPUT_MSG_INSERT: return touch_tuple(&m->u.insert.newtup);
	case PGOUTPUT_MSG_UPDATE:
		return touch_tuple(&m->u.update.oldtup) + touch_tuple(&m->u.update.newtup);
	case PGOUTPUT_MSG_DELETE: return touch_tuple(&m->u.del.oldtup);
	case PGOUTPUT_MSG_TRUNCATE:
		return m->u.truncate.nrels ? m->u.truncate.relids[m->u.truncate.nrels - 1] : 0;
	case PGOUTPUT_MSG_MESSAGE: return touch(m->u.message.prefix) + touch(m->u.message.content);
	case PGOUTPUT_MSG_ORIGIN: return touch(m->u.origin.name);
	case PGOUTPUT_MSG_TYPE: return touch(m->u.type.nspname) + touch(m->u.type.typname);
	default: return 0;
	}
}

static void
free_user(void *user)
{
	free(user);
}

/* Decode one message; on a Relation, update the cache and hang a user pointer on it. */
static unsigned
decode_one(struct pgoutput_decoder *d, struct relcache *rc, const uint8_t *buf, size_t len)
{
	struct pgoutput_msg m;
	struct relcache_rel *rel;
	char err[128];

	if (pgoutput_decode(d, buf, len, &m, err, sizeof(err)) < 0) {
		return (unsigned)strlen(err);
	}
	if (m.type != PGOUTPUT_MSG_RELATION) {
		return touch_msg(&m);
	}
	rel = (struct relcache_rel *)relcache_apply(rc, &m, free_user);
	rel->user = malloc(1);
	return (unsigned)rel->ncols + (relcache_get(rc, m.u.relation.relid) == rel);
}

/* A heap copy of exactly @len bytes, so the sanitizer sees an overread. */
static uint8_t *
exact_copy(const uint8_t *data, size_t len)
{
	uint8_t *b = malloc(len ? len : 1);

	if (b && len) {
		memcpy(b, data, len);
	}
	return b;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct relcache *rc = relcache_new();
	struct pgstream_frame f;
	volatile unsigned sink = 0;
	uint8_t *copy = exact_copy(data, size);

	if (!copy) {
		relcache_free(rc, free_user);
		return 0;
	}
	for (int proto = 1; proto <= 4; proto++) {
		for (int in_stream = 0; in_stream <= 1; in_stream++) {
			struct pgoutput_decoder d;

			pgoutput_decoder_init(&d, proto);
			d.in_stream = in_stream;
			sink += decode_one(&d, rc, size ? copy : NULL, size);
			if (pgstream_frame_decode(size ? copy : NULL, size, &f, NULL, 0) == 0 &&
			    f.kind == PGSTREAM_FRAME_XLOGDATA) {
				sink += decode_one(&d, rc, f.data_len ? f.data : NULL, f.data_len);
			}
			pgoutput_decoder_fini(&d);
		}
	}
	(void)sink;
	free(copy);
	relcache_free(rc, free_user);
	return 0;
}
