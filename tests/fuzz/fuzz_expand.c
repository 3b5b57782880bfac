/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer entry point for table.expand.json.payload on the path a payload column takes:
 * the column's text through pgvalue (a text or jsonb column: UTF-8 checked there), the
 * expansion (router_expand.c: schema inference and value conversion over jsonr's tree), and
 * the converters that write the result (JsonConverter with schemas on and off,
 * StringConverter). The first input byte chooses the options, the rest is the column:
 *   bit 0  table.json.payload.null.behavior=optional_bytes
 *   bit 1-2  field.name.adjustment.mode: none, avro, avro_unicode (3 = none)
 *   bit 3  the column is jsonb (else text)
 * Checked: the outcome agrees with what it returns (DONE is a struct, KEPT the column as it
 * was, HALF the column's text under the new schema); whatever a JSON converter writes is one
 * valid JSON value, and all output valid UTF-8; a schema copy (the envelope cache) writes the
 * same schema as the original (HALF keeps only the schema's top level, so has none to
 * write); a second expansion of the same payload gives the same schema.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/connect/router_int.h"
#include "outboxd/connect/convert.h"
#include "outboxd/connect/jsonr.h"
#include "outboxd/connect/pgvalue.h"
#include "outboxd/pg/pgtype.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/kv.h"
#include "outboxd/util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fixture {
	struct router_expand *x;
	struct convert *json_on, *json_off, *string;
	struct jsonr *rd;
};

static struct convert *
converter(const char *cls, const char *schemas)
{
	struct kv o = KV_INIT;
	struct convert *c = NULL;

	if (schemas) {
		kv_set(&o, "schemas.enable", schemas, "fuzz:1");
	}
	if (convert_new(cls, &o, CONVERT_VALUE, &c, NULL, 0) < 0) {
		abort();
	}
	kv_fini(&o);
	return c;
}

/* Made once: the converters and scratch outlive the inputs, as the router's do. */
static struct fixture *
fixture(void)
{
	static struct fixture f;

	if (!f.x) {
		f.x = router_expand_new();
		f.json_on = converter(CONVERT_CLASS_JSON, "true");
		f.json_off = converter(CONVERT_CLASS_JSON, "false");
		f.string = converter(CONVERT_CLASS_STRING, NULL);
		f.rd = jsonr_new();
	}
	return &f;
}

/* Abort unless @s is valid UTF-8 holding exactly one JSON value (whitespace around allowed). */
static void
check_json(struct fixture *f, const struct buf *s)
{
	struct buf wrapped = BUF_INIT;
	const struct jsonr_node *root;

	if (!utf8_valid(s->data ? s->data : "", s->len)) {
		abort();
	}
	buf_add_char(&wrapped, '[');
	buf_add(&wrapped, s->data ? s->data : "", s->len);
	buf_add_char(&wrapped, ']');
	jsonr_reset(f->rd);
	if (jsonr_parse(f->rd, wrapped.data, wrapped.len, &root) < 0 || root->n != 1) {
		abort();
	}
	buf_fini(&wrapped);
}

/* Write @v through @c; a success must be valid output (JSON for the JSON converters). */
static void
write_with(struct fixture *f, const struct convert *c, const struct cvalue *v, bool json)
{
	struct buf out = BUF_INIT;
	bool null = false;
	char err[256];

	if (convert_write(c, v, &out, &null, err, sizeof(err)) == 0 && !null) {
		if (json) {
			check_json(f, &out);
		} else if (!utf8_valid(out.data ? out.data : "", out.len)) {
			abort();
		}
	}
	buf_fini(&out);
}

/* The schema JSON of @v, or NULL when it cannot be written; caller frees. */
static char *
schema_text(struct fixture *f, const struct cvalue *v)
{
	struct buf b = BUF_INIT;

	if (convert_schema_json(v, &b) < 0) {
		buf_fini(&b);
		return NULL;
	}
	check_json(f, &b);
	return buf_steal(&b);
}

/* The outcome agrees with the value it hands back. */
static void
check_outcome(enum router_expand_result res, const struct cvalue *payload, const struct cvalue *v)
{
	switch (res) {
	case ROUTER_EXPAND_DONE:
		if (v->type != CVALUE_STRUCT || v->java_string || v->is_null) {
			abort();
		}
		break;
	case ROUTER_EXPAND_KEPT:
		if (v != payload) {
			abort();
		}
		break;
	case ROUTER_EXPAND_HALF:
		if (!v->java_string || v->u.s.p != payload->u.s.p ||
		    v->u.s.len != payload->u.s.len) {
			abort();
		}
		break;
	}
}

static void
expand(struct fixture *f, uint8_t mode, const struct cvalue *payload)
{
	static const enum name_adjust adjust[] = { ADJUST_NONE, ADJUST_AVRO, ADJUST_AVRO_UNICODE,
						   ADJUST_NONE };
	bool null_bytes = mode & 1;
	enum name_adjust a = adjust[(mode >> 1) & 3];
	const struct cvalue *v;
	enum router_expand_result res =
		router_expand_payload(f->x, "payload", null_bytes, a, payload, &v);
	char *schema, *copy_schema, *again_schema;
	struct cvalue *copy;

	check_outcome(res, payload, v);
	write_with(f, f->json_on, v, true);
	write_with(f, f->json_off, v, true);
	write_with(f, f->string, v, false);
	schema = schema_text(f, v);
	if (res == ROUTER_EXPAND_HALF) {
		/* only the top level of the schema stays under the string: none to write */
		if (schema) {
			abort();
		}
		copy_schema = NULL;
	} else {
		copy = router_expand_schema_dup(v);
		copy_schema = schema_text(f, copy);
		router_expand_schema_free(copy);
		if (!schema != !copy_schema || (schema && strcmp(schema, copy_schema) != 0)) {
			abort();
		}
	}
	if (router_expand_payload(f->x, "payload", null_bytes, a, payload, &v) != res) {
		abort();
	}
	again_schema = schema_text(f, v);
	if (!schema != !again_schema || (schema && strcmp(schema, again_schema) != 0)) {
		abort();
	}
	free(again_schema);
	free(copy_schema);
	free(schema);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fixture *f = fixture();
	struct relcache_col col = { .name = "payload", .typmod = -1 };
	struct pgoutput_col pc = { 't', { NULL, 0 } };
	struct pgvalue pv = { 0 };
	char *copy;

	if (size < 1) {
		return 0;
	}
	col.type_oid = data[0] & 8 ? PGTYPE_JSONB : PGTYPE_TEXT;
	/* an exact-size heap copy without a terminating NUL, so an overread shows */
	copy = malloc(size - 1 ? size - 1 : 1);
	if (!copy) {
		abort();
	}
	memcpy(copy, data + 1, size - 1);
	pc.value = (struct slice){ copy, size - 1 };
	if (pgvalue_convert(&col, &pc, false, (struct pgvalue_modes){ 0 }, &pv, NULL, 0) == 0) {
		expand(f, data[0], &pv.v);
	}
	pgvalue_fini(&pv);
	free(copy);
	return 0;
}
