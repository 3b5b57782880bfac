/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/regex_java.h"
#include "outboxd/connect/router.h"
#include "outboxd/util/buf.h"

#define JSON   "org.apache.kafka.connect.json.JsonConverter"
#define STRING "org.apache.kafka.connect.storage.StringConverter"
#define UUID   "a1b2c3d4-0000-4000-8000-000000000001"

/* The outbox table of reference §3.5. */
static struct relcache_col cols[] = {
	{ "id", 2950, -1, true },
	{ "aggregatetype", 1043, 259, false },
	{ "aggregateid", 1043, 259, false },
	{ "type", 1043, 259, false },
	{ "payload", 3802, -1, false },
	{ "seq", 23, -1, false },
};
static const bool notnull[] = { true, true, true, true, false, false };
static struct relcache_rel rel = { 1, "public", "outbox", 'd', 6, cols, NULL };

struct row {
	struct pgoutput_col c[6];
	struct pgoutput_tuple t;
};

static void
row_init(struct row *r, const char *aggtype, const char *aggid, const char *payload)
{
	const char *v[] = { UUID, aggtype, aggid, "OrderCreated", payload, "7" };

	for (int i = 0; i < 6; i++) {
		r->c[i].kind = v[i] ? 't' : 'n';
		r->c[i].value = v[i] ? slice_from_str(v[i]) : SLICE_NULL;
	}
	r->t.ncols = 6;
	r->t.cols = r->c;
}

static struct router *
mk(const char *keyconv, const char *valconv, struct kv *smt, struct kv *valopts)
{
	struct router_config cfg = {
		.topic_prefix = "dbserver1",
		.run_id = "11111111-2222-4333-8444-555555555555",
		.smt = smt,
		.key_converter = keyconv,
		.value_converter = valconv,
		.value_converter_opts = valopts,
		.key_converter_opts = valopts,
		.extended_headers = true,
	};
	struct router *r = NULL;
	char err[512] = "";

	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	return r;
}

static enum router_verdict
route(struct router *r, char op, const struct row *row, struct record *rec, char *err)
{
	enum router_verdict v = ROUTER_PUBLISH;
	const struct router_row rr = {
		.rel = &rel, .tup = row ? &row->t : NULL, .notnull = notnull, .op = op
	};

	ck_assert_int_eq(router_route(r, &rr, rec, &v, err, 512), 0);
	return v;
}

static void
header_is(const struct record *rec, size_t i, const char *name, const char *value)
{
	ck_assert_uint_gt(rec->nheaders, i);
	ck_assert_str_eq(buf_cstr(&rec->headers[i].name), name);
	if (value) {
		ck_assert(!rec->headers[i].null);
		ck_assert_str_eq(buf_cstr(&rec->headers[i].value), value);
	} else {
		ck_assert(rec->headers[i].null);
	}
}

START_TEST(test_worked_example_json_schemas)
{
	struct router *r = mk(NULL, NULL, NULL, NULL);
	struct record rec;
	struct row row;
	char err[512];

	record_init(&rec);
	row_init(&row, "order", "42", "{\"x\": 1}");
	ck_assert_int_eq(route(r, 'I', &row, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.topic), "outbox.event.order");
	ck_assert_str_eq(
		buf_cstr(&rec.key),
		"{\"schema\":{\"type\":\"string\",\"optional\":false},\"payload\":\"42\"}");
	ck_assert_uint_eq(rec.key.len, 60);
	ck_assert_str_eq(
		buf_cstr(&rec.value),
		"{\"schema\":{\"type\":\"string\",\"optional\":true,\"name\":"
		"\"io.debezium.data.Json\",\"version\":1},\"payload\":\"{\\\"x\\\": 1}\"}");
	ck_assert_uint_eq(rec.value.len, 110);
	ck_assert_uint_eq(rec.nheaders, 5);
	header_is(&rec, 0, "__debezium.context.connectorLogicalName", "dbserver1");
	header_is(&rec, 1, "__debezium.context.taskId", "0");
	header_is(&rec, 2, "__debezium.context.connectorName", "postgresql");
	header_is(&rec, 3, "__debezium.context.runId", "11111111-2222-4333-8444-555555555555");
	header_is(&rec, 4, "id", UUID);
	ck_assert_uint_eq(rec.headers[4].value.len, 36);
	ck_assert_int_eq(rec.partition, -1);
	ck_assert_int_eq(rec.timestamp_ms, -1);
	/* snapshot rows are the same as inserts */
	ck_assert_int_eq(route(r, 'r', &row, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.topic), "outbox.event.order");
	/* the context headers, converted once, are copied into every record */
	ck_assert_uint_eq(rec.nheaders, 5);
	header_is(&rec, 0, "__debezium.context.connectorLogicalName", "dbserver1");
	header_is(&rec, 2, "__debezium.context.connectorName", "postgresql");
	header_is(&rec, 3, "__debezium.context.runId", "11111111-2222-4333-8444-555555555555");
	header_is(&rec, 4, "id", UUID);
	record_fini(&rec);
	router_free(r);
}
END_TEST

START_TEST(test_worked_example_schemas_off_and_string)
{
	struct kv off = KV_INIT;
	struct router *r, *s;
	struct record rec;
	struct row row;
	char err[512];

	kv_set(&off, "schemas.enable", "false", NULL);
	r = mk(JSON, JSON, NULL, &off);
	s = mk(STRING, STRING, NULL, NULL);
	record_init(&rec);
	row_init(&row, "order", "42", "{\"x\": 1}");
	ck_assert_int_eq(route(r, 'I', &row, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.key), "\"42\"");
	ck_assert_str_eq(buf_cstr(&rec.value), "\"{\\\"x\\\": 1}\"");
	ck_assert_uint_eq(rec.value.len, 12);
	ck_assert_int_eq(route(s, 'I', &row, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.key), "42");
	ck_assert_str_eq(buf_cstr(&rec.value), "{\"x\": 1}");
	/* NULL payload: "null" under JsonConverter, a Kafka null under StringConverter */
	row_init(&row, "order", "42", NULL);
	ck_assert_int_eq(route(r, 'I', &row, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.value), "null");
	ck_assert(!rec.value_null);
	ck_assert_int_eq(route(s, 'I', &row, &rec, err), ROUTER_PUBLISH);
	ck_assert(rec.value_null);
	record_fini(&rec);
	router_free(r);
	router_free(s);
	kv_fini(&off);
}
END_TEST

START_TEST(test_null_payload_null_key_and_int_key_publish_as_debezium_writes_them)
{
	struct router *r = mk(NULL, NULL, NULL, NULL);
	struct kv smt = KV_INIT;
	struct router *ri;
	struct record rec;
	struct row row;
	char err[512];

	record_init(&rec);
	row_init(&row, "order", "42", NULL);
	ck_assert_int_eq(route(r, 'I', &row, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.value),
			 "{\"schema\":{\"type\":\"string\",\"optional\":true,\"name\":"
			 "\"io.debezium.data.Json\",\"version\":1},\"payload\":null}");
	/* int4 key column "seq" = 7; int key 1232 in check_convert */
	kv_set(&smt, "table.field.event.key", "seq", NULL);
	ri = mk(NULL, NULL, &smt, NULL);
	row.c[5].value = slice_from_str("1232");
	ck_assert_int_eq(route(ri, 'I', &row, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.key),
			 "{\"schema\":{\"type\":\"int32\",\"optional\":true},\"payload\":1232}");
	/* NULL key in a nullable column: the 4 bytes "null" as the JSON payload */
	row.c[5].kind = 'n';
	ck_assert_int_eq(route(ri, 'I', &row, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.key),
			 "{\"schema\":{\"type\":\"int32\",\"optional\":true},\"payload\":null}");
	ck_assert(!rec.key_null);
	record_fini(&rec);
	router_free(r);
	router_free(ri);
	kv_fini(&smt);
}
END_TEST

START_TEST(test_only_inserts_publish_updates_follow_the_setting_and_bad_rows_are_poison)
{
	struct kv smt = KV_INIT;
	struct router *r = mk(NULL, NULL, NULL, NULL), *e, *f;
	struct record rec;
	struct row row;
	char err[512];

	record_init(&rec);
	row_init(&row, "order", "42", "{}");
	ck_assert_int_eq(route(r, 'D', NULL, &rec, err), ROUTER_DROP);
	ck_assert_int_eq(route(r, 'T', NULL, &rec, err), ROUTER_DROP);
	ck_assert_int_eq(route(r, 'U', &row, &rec, err), ROUTER_DROP_WARN);
	ck_assert_ptr_nonnull(strstr(err, "table.op.invalid.behavior"));
	kv_set(&smt, "table.op.invalid.behavior", " ERROR ", NULL);
	e = mk(NULL, NULL, &smt, NULL);
	ck_assert_int_eq(route(e, 'U', &row, &rec, err), ROUTER_DROP_ERROR);
	kv_set(&smt, "table.op.invalid.behavior", "fatal", NULL);
	f = mk(NULL, NULL, &smt, NULL);
	ck_assert_int_eq(route(f, 'U', &row, &rec, err), ROUTER_HALT);
	/* NULL aggregatetype */
	row_init(&row, NULL, "42", "{}");
	ck_assert_int_eq(route(r, 'I', &row, &rec, err), ROUTER_POISON);
	ck_assert_ptr_nonnull(strstr(err, "aggregatetype"));
	/* a topic the broker refuses */
	row_init(&row, "Order Line", "42", "{}");
	ck_assert_int_eq(route(r, 'I', &row, &rec, err), ROUTER_POISON);
	ck_assert_ptr_nonnull(strstr(err, "outbox.event.Order Line"));
	/* invalid UTF-8 */
	row_init(&row, "order", "4\xff", "{}");
	ck_assert_int_eq(route(r, 'I', &row, &rec, err), ROUTER_POISON);
	ck_assert_ptr_nonnull(strstr(err, "UTF-8"));
	/* missing payload column */
	kv_set(&smt, "table.field.event.payload", "body", NULL);
	kv_del(&smt, "table.op.invalid.behavior");
	router_free(e);
	e = mk(NULL, NULL, &smt, NULL);
	row_init(&row, "order", "42", "{}");
	ck_assert_int_eq(route(e, 'I', &row, &rec, err), ROUTER_POISON);
	ck_assert_ptr_nonnull(strstr(err, "body"));
	ck_assert_uint_eq(rec.nheaders, 0);
	/* contract violations */
	{
		enum router_verdict v;
		const struct router_row rr = {
			.rel = &rel, .tup = &row.t, .notnull = notnull, .op = 'X'
		};

		ck_assert_int_eq(router_route(r, &rr, &rec, &v, err, 512), -EINVAL);
	}
	record_fini(&rec);
	router_free(r);
	router_free(e);
	router_free(f);
	kv_fini(&smt);
}
END_TEST

/* A poison row's dead letter: the key it would have had, its raw payload, its id and why. */
START_TEST(test_dead_letter_keeps_the_key_the_raw_payload_the_id_and_the_reason)
{
	struct router *r = mk(NULL, NULL, NULL, NULL);
	struct router_dead_letter_info info = { .topic = "outbox.dlq",
						.reason = "too large",
						.commit_lsn = "0/16B3748",
						.keep_value = true };
	struct record rec;
	struct row row;
	struct router_row rr = { .rel = &rel, .tup = &row.t, .notnull = notnull, .op = 'I' };

	record_init(&rec);
	row_init(&row, "order", "42", "{\"x\": 1}");
	router_dead_letter(r, &rr, &info, &rec);
	ck_assert_str_eq(buf_cstr(&rec.topic), "outbox.dlq");
	ck_assert_str_eq(
		buf_cstr(&rec.key),
		"{\"schema\":{\"type\":\"string\",\"optional\":false},\"payload\":\"42\"}");
	ck_assert(!rec.key_null);
	ck_assert(!rec.value_null);
	ck_assert_str_eq(buf_cstr(&rec.value), "{\"x\": 1}");
	ck_assert_uint_eq(rec.nheaders, 4);
	header_is(&rec, 0, "id", UUID);
	header_is(&rec, 1, "__outboxd.error.reason", "too large");
	header_is(&rec, 2, "__outboxd.error.commit.lsn", "0/16B3748");
	header_is(&rec, 3, "__outboxd.error.table", "public.outbox");
	/* the value was the problem: left out */
	info.keep_value = false;
	router_dead_letter(r, &rr, &info, &rec);
	ck_assert(rec.value_null);
	ck_assert_uint_eq(rec.value.len, 0);
	/* a key the converter refuses (invalid UTF-8) goes as its raw text */
	info.keep_value = true;
	row_init(&row, "order", "4\xff", "{}");
	router_dead_letter(r, &rr, &info, &rec);
	ck_assert(!rec.key_null);
	ck_assert_str_eq(buf_cstr(&rec.key), "4\xff");
	ck_assert_str_eq(buf_cstr(&rec.value), "{}");
	/* no tuple: no key, no value, no id; still the reason and the table */
	rr.tup = NULL;
	router_dead_letter(r, &rr, &info, &rec);
	ck_assert(rec.key_null);
	ck_assert(rec.value_null);
	ck_assert_uint_eq(rec.nheaders, 3);
	header_is(&rec, 0, "__outboxd.error.reason", "too large");
	header_is(&rec, 2, "__outboxd.error.table", "public.outbox");
	record_fini(&rec);
	router_free(r);
}
END_TEST

START_TEST(test_tombstone_placements_and_partition)
{
	struct kv smt = KV_INIT, off = KV_INIT;
	struct router *r;
	struct record rec;
	struct row row;
	char err[512];

	kv_set(&smt, "route.tombstone.on.empty.payload", "true", NULL);
	kv_set(&smt, "table.fields.additional.placement",
	       " type : header : eventType , seq:partition, type:envelope:eventType", NULL);
	kv_set(&off, "schemas.enable", "false", NULL);
	r = mk(JSON, JSON, &smt, &off);
	record_init(&rec);
	row_init(&row, "order", "42", "{\"x\": 1}");
	ck_assert_int_eq(route(r, 'I', &row, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.value),
			 "{\"payload\":\"{\\\"x\\\": 1}\",\"eventType\":\"OrderCreated\"}");
	ck_assert_uint_eq(rec.nheaders, 6);
	header_is(&rec, 5, "eventType", "OrderCreated");
	ck_assert_int_eq(rec.partition, 7);
	row_init(&row, "order", "42", NULL);
	ck_assert_int_eq(route(r, 'I', &row, &rec, err), ROUTER_PUBLISH);
	ck_assert(rec.value_null);
	ck_assert_str_eq(buf_cstr(&rec.key), "\"42\"");
	router_free(r);
	/* envelope schema name carries the first route value (§3.5 (b)) */
	kv_del(&smt, "route.tombstone.on.empty.payload");
	kv_set(&smt, "table.fields.additional.placement", "type:envelope:eventType", NULL);
	r = mk(NULL, NULL, &smt, NULL);
	row_init(&row, "order", "42", "{\"x\": 1}");
	ck_assert_int_eq(route(r, 'I', &row, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(
		buf_cstr(&rec.value),
		"{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"string\",\"optional\":true,"
		"\"name\":\"io.debezium.data.Json\",\"version\":1,\"field\":\"payload\"},{\"type\":"
		"\"string\",\"optional\":false,\"field\":\"eventType\"}],\"optional\":false,\"name\":"
		"\"dbserver1.public.outbox.order.Value\"},\"payload\":{\"payload\":\"{\\\"x\\\": 1}\","
		"\"eventType\":\"OrderCreated\"}}");
	row_init(&row, "invoice", "42", "{\"x\": 1}");
	ck_assert_int_eq(route(r, 'I', &row, &rec, err), ROUTER_PUBLISH);
	ck_assert_ptr_nonnull(strstr(buf_cstr(&rec.value), "dbserver1.public.outbox.order.Value"));
	ck_assert_str_eq(buf_cstr(&rec.topic), "outbox.event.invoice");
	record_fini(&rec);
	router_free(r);
	kv_fini(&smt);
	kv_fini(&off);
}
END_TEST

START_TEST(test_invalid_router_options_are_refused_with_a_message)
{
	const char *bad[][2] = {
		{ "route.topic.regex", "(unclosed" },
		{ "route.topic.regex", "[a-z&&[^q]]+" },
		{ "route.topic.regex", "\\p{Lower}+" },
		{ "route.topic.replacement", "x.$" },
		{ "route.topic.replacement", "x.${nope}" },
		{ "route.topic.replacement", "x.$2" },
		{ "table.op.invalid.behavior", "explode" },
		{ "route.tombstone.on.empty.payload", "yes" },
		{ "table.fields.additional.placement", "type:body" },
		{ "table.fields.additional.placement", "type" },
		{ "table.fields.additional.placement", "" },
		{ "table.fields.additional.placement", "a:envelope:x,b:envelope:x" },
		{ "table.expand.json.payload", "maybe" },
		{ "table.json.payload.null.behavior", "drop" },
		{ "field.name.adjustment.mode", "snake" },
		{ "table.field.additional.missing", "warn" },
		{ "table.fields.additional.error.on.missing", "sometimes" },
		{ "tracing.with.context.field.only", "yes" },
		{ "table.field.event.idd", "id" },
		{ "predicate", "p1" },
		{ "type", "org.apache.kafka.connect.transforms.RegexRouter" },
		{ "table.field.event.key", " " },
	};
	char err[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kv smt = KV_INIT;
		struct router_config cfg = { .topic_prefix = "p", .smt = &smt };
		struct router *r = NULL;

		kv_set(&smt, bad[i][0], bad[i][1], NULL);
		err[0] = '\0';
		ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == -EINVAL, "%s=%s accepted",
			      bad[i][0], bad[i][1]);
		ck_assert_ptr_null(r);
		ck_assert_msg(err[0] != '\0', "%s: no message", bad[i][0]);
		kv_fini(&smt);
	}
	{
		struct router_config cfg = { .topic_prefix = "p", .binary_handling_mode = "octal" };
		struct router *r = NULL;

		ck_assert_int_eq(router_new(&cfg, &r, err, sizeof(err)), -EINVAL);
		ck_assert_ptr_nonnull(strstr(err, "binary.handling.mode"));
		cfg.binary_handling_mode = NULL;
		cfg.table_include_list = "public\\.(outbox";
		ck_assert_int_eq(router_new(&cfg, &r, err, sizeof(err)), -EINVAL);
		ck_assert_ptr_nonnull(strstr(err, "table.include.list"));
	}
}
END_TEST

START_TEST(test_table_include_list_is_a_case_insensitive_full_match_with_escaped_commas)
{
	struct router_config cfg = { .topic_prefix = "p",
				     .table_include_list = " public\\.outbox , inv\\,x\\..*" };
	struct router *r = NULL, *all = NULL;
	char err[512];

	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert(router_selects(r, "public", "outbox"));
	ck_assert(router_selects(r, "PUBLIC", "OutBox"));
	ck_assert(!router_selects(r, "public", "outbox2"));
	ck_assert(!router_selects(r, "xpublic", "outbox"));
	ck_assert(router_selects(r, "inv,x", "anything"));
	cfg.table_include_list = "";
	ck_assert_int_eq(router_new(&cfg, &all, err, sizeof(err)), 0);
	ck_assert(router_selects(all, "any", "table"));
	router_free(r);
	router_free(all);
}
END_TEST

/*
 * Debezium's RegExSplitter: an escaped backslash before a comma leaves the comma a separator,
 * and a list ending in a lone backslash is refused at start-up.
 */
START_TEST(test_table_include_list_splits_like_debezium)
{
	struct router_config cfg = { .topic_prefix = "p",
				     .table_include_list = "a\\\\,public\\.outbox" };
	struct router *r = NULL;
	char err[512];

	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert(router_selects(r, "public", "outbox"));
	router_free(r);
	r = NULL;
	cfg.table_include_list = "public\\.outbox,x\\";
	ck_assert_int_eq(router_new(&cfg, &r, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(r);
	ck_assert_ptr_nonnull(strstr(err, "table.include.list"));
	ck_assert_ptr_nonnull(strstr(err, "lone"));
}
END_TEST

/* Compile @re with @repl and apply RegexRouter's matches()-then-replaceFirst(). */
static const char *
rr(struct buf *out, const char *re, const char *repl, const char *in)
{
	struct regex_java *x = NULL;
	char err[256];
	int m;

	buf_reset(out);
	ck_assert_msg(regex_java_compile(re, false, &x, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(regex_java_set_replacement(x, repl, err, sizeof(err)) == 0, "%s", err);
	m = regex_java_matches(x, in, strlen(in));
	ck_assert_int_ge(m, 0);
	if (m) {
		ck_assert_int_eq(regex_java_replace_first(x, in, strlen(in), out), 0);
	} else {
		buf_add_str(out, in);
	}
	regex_java_free(x);
	return buf_cstr(out);
}

START_TEST(test_topic_is_routed_only_on_a_full_match_then_replaced_first)
{
	struct buf b = BUF_INIT;
	const char *def = "(?<routedByValue>.*)", *defr = "outbox.event.${routedByValue}";

	ck_assert_str_eq(rr(&b, def, defr, "order"), "outbox.event.order");
	ck_assert_str_eq(rr(&b, def, defr, ""), "outbox.event.");
	/* '.' does not match \n, \r, U+2028: no full match, the raw value stays */
	ck_assert_str_eq(rr(&b, def, defr, "a\nb"), "a\nb");
	ck_assert_str_eq(rr(&b, def, defr, "a\rb"), "a\rb");
	ck_assert_str_eq(rr(&b, def, defr,
			    "a\xe2\x80\xa8"
			    "b"),
			 "a\xe2\x80\xa8"
			 "b");
	ck_assert_str_eq(rr(&b, def, defr,
			    "a\xc2\x85"
			    "b"),
			 "a\xc2\x85"
			 "b");
	/* ... but it does match \v and \f as Java's does */
	ck_assert_str_eq(rr(&b, def, defr, "a\vb"), "outbox.event.a\vb");
	/* replaceFirst finds the first match from the start: a|ab on ab replaces "a" */
	ck_assert_str_eq(rr(&b, "a|ab", "X", "ab"), "Xb");
	/* unmatched group expands to nothing; \$ is a literal dollar; $12 with 1 group = $1 then 2 */
	ck_assert_str_eq(rr(&b, "(a)|(b)", "[$1][$2]", "b"), "[][b]");
	ck_assert_str_eq(rr(&b, "(.*)", "\\$$1\\\\", "x"), "$x\\");
	ck_assert_str_eq(rr(&b, "(.*)", "$12", "x"), "x2");
	ck_assert_str_eq(rr(&b, "(?<t>[a-z]+)_(?<v>\\d+)", "${t}.v${v}", "order_2"), "order.v2");
	/* no full match: raw value */
	ck_assert_str_eq(rr(&b, "order", "X", "orders"), "orders");
	ck_assert_str_eq(rr(&b, "\\u0041+", "b", "AA"), "b");
	ck_assert_str_eq(rr(&b, "(?i)abc", "y", "ABC"), "y");
	buf_fini(&b);
}
END_TEST

/*
 * The topic memo: more values than its slots (ROUTER_MEMO_SLOTS), so they evict each other, errors
 * never remembered, long values skipped.
 */
START_TEST(test_topic_memo_gives_the_same_topics_and_never_remembers_errors)
{
	struct kv smt = KV_INIT;
	struct router *r = mk(NULL, NULL, NULL, NULL), *t;
	struct record rec;
	struct row row;
	char err[512], val[400], want[512];

	record_init(&rec);
	for (int i = 0; i < 4000; i++) {
		int k = (i * 7919) % 401;

		if (k == 400) {
			snprintf(val, sizeof(val), "Order Line");
		} else {
			snprintf(val, sizeof(val), "agg%d", k);
		}
		row_init(&row, val, "42", "{}");
		if (k == 400) {
			ck_assert_int_eq(route(r, 'I', &row, &rec, err), ROUTER_POISON);
			ck_assert_ptr_nonnull(strstr(err, "outbox.event.Order Line"));
			continue;
		}
		ck_assert_int_eq(route(r, 'I', &row, &rec, err), ROUTER_PUBLISH);
		snprintf(want, sizeof(want), "outbox.event.agg%d", k);
		ck_assert_str_eq(buf_cstr(&rec.topic), want);
	}
	kv_set(&smt, "route.topic.regex", "([a-z]).*", NULL);
	kv_set(&smt, "route.topic.replacement", "t.$1", NULL);
	t = mk(NULL, NULL, &smt, NULL);
	for (int i = 0; i < 40; i++) {
		size_t n = (size_t)(i % 4 == 0 ? 300 : 1 + i % 5);

		memset(val, 'a' + i % 3, n);
		val[n] = '\0';
		row_init(&row, val, "42", "{}");
		ck_assert_int_eq(route(t, 'I', &row, &rec, err), ROUTER_PUBLISH);
		snprintf(want, sizeof(want), "t.%c", 'a' + i % 3);
		ck_assert_str_eq(buf_cstr(&rec.topic), want);
	}
	router_free(r);
	router_free(t);
	record_fini(&rec);
	kv_fini(&smt);
}
END_TEST

/*
 * A wider outbox table for the option tests: timestamps of each kind, a version column, a
 * boolean with a DEFAULT, bigint, bytea and numeric(10,2).
 */
static struct relcache_col cols2[] = {
	{ "id", 2950, -1, true },
	{ "aggregatetype", 1043, 259, false },
	{ "aggregateid", 1043, 259, false },
	{ "type", 1043, 259, false },
	{ "payload", 3802, -1, false },
	{ "ts", 1114, -1, false },
	{ "ts3", 1114, 3, false },
	{ "tstz", 1184, -1, false },
	{ "ver", 23, -1, false },
	{ "deleted", 16, -1, false },
	{ "big", 20, -1, false },
	{ "bin", 17, -1, false },
	{ "amount", 1700, 655366, false },
};
#define NC2 13
static const bool notnull2[NC2] = { true, true, true, true };
static struct relcache_rel rel2 = { 2, "public", "outbox", 'd', NC2, cols2, NULL };

struct row2 {
	struct pgoutput_col c[NC2];
	struct pgoutput_tuple t;
};

/* Column values by position; NULL = SQL NULL. */
static void
row2_init(struct row2 *r, const char *payload)
{
	const char *v[NC2] = { UUID,
			       "order",
			       "42",
			       "OrderCreated",
			       payload,
			       "2023-11-14 22:13:20.123456",
			       "2023-11-14 22:13:20.123",
			       "2023-11-14 22:13:20+00",
			       "3",
			       NULL,
			       "5",
			       "\\x0001feff41",
			       "12.34" };

	for (int i = 0; i < NC2; i++) {
		r->c[i].kind = v[i] ? 't' : 'n';
		r->c[i].value = v[i] ? slice_from_str(v[i]) : SLICE_NULL;
	}
	r->t.ncols = NC2;
	r->t.cols = r->c;
}

static void
row2_set(struct row2 *r, int col, const char *v)
{
	r->c[col].kind = v ? 't' : 'n';
	r->c[col].value = v ? slice_from_str(v) : SLICE_NULL;
}

/* A router over @smt with converters by class; @opts applies to key and value converters. */
static struct router *
mk2(const struct kv *smt, const char *conv, const struct kv *opts, bool server)
{
	struct router_config cfg = {
		.topic_prefix = "dbserver1",
		.run_id = "11111111-2222-4333-8444-555555555555",
		.smt = smt,
		.key_converter = conv,
		.value_converter = conv,
		.key_converter_opts = opts,
		.value_converter_opts = opts,
		.server_flavour = server,
	};
	struct router *r = NULL;
	char err[512] = "";

	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	return r;
}

static enum router_verdict
route2(struct router *r, const struct row2 *row, const char *const *defaults, struct record *rec,
       char *err)
{
	enum router_verdict v = ROUTER_DROP;
	const struct router_row rr = {
		.rel = &rel2, .tup = &row->t, .notnull = notnull2, .defaults = defaults, .op = 'I'
	};

	ck_assert_int_eq(router_route(r, &rr, rec, &v, err, 512), 0);
	return v;
}

/* The value of @payload expanded under JsonConverter schemas on, off and StringConverter. */
struct expand_case {
	const char *payload;
	const char *on, *off, *str; /* NULL = poison, ANY_BYTES = published, bytes not compared */
};

#define ANY_BYTES "\x01"

/* Expected bytes recorded from Debezium 3.6.1's EventRouter + Kafka 4.3.0's converters. */
static const struct expand_case expand_cases[] = {
	{ "{\"x\": 1}",
	  "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"int32\",\"optional\":true,"
	  "\"field\":\"x\"}],\"optional\":true,\"name\":\"payload\"},\"payload\":{\"x\":1}}",
	  "{\"x\":1}", "Struct{x=1}" },
	{ "{\"a\":1.10,\"b\":1e2,\"c\":12345678.9,\"d\":0.0001,\"e\":-0,\"f\":-0.0,\"g\":1e400}",
	  "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"double\",\"optional\":true,"
	  "\"field\":\"a\"},{\"type\":\"double\",\"optional\":true,\"field\":\"b\"},{\"type\":"
	  "\"double\",\"optional\":true,\"field\":\"c\"},{\"type\":\"double\",\"optional\":true,"
	  "\"field\":\"d\"},{\"type\":\"int32\",\"optional\":true,\"field\":\"e\"},{\"type\":"
	  "\"double\",\"optional\":true,\"field\":\"f\"},{\"type\":\"double\",\"optional\":true,"
	  "\"field\":\"g\"}],\"optional\":true,\"name\":\"payload\"},\"payload\":{\"a\":1.1,\"b\":"
	  "100.0,\"c\":1.23456789E7,\"d\":1.0E-4,\"e\":0,\"f\":-0.0,\"g\":\"Infinity\"}}",
	  "{\"a\":1.1,\"b\":100.0,\"c\":1.23456789E7,\"d\":1.0E-4,\"e\":0,\"f\":-0.0,\"g\":"
	  "\"Infinity\"}",
	  "Struct{a=1.1,b=100.0,c=1.23456789E7,d=1.0E-4,e=0,f=-0.0,g=Infinity}" },
	{ "{\"a\":{\"b\":{\"c\":true}},\"s\":\"\\u00e9\\ud83d\\ude00\\n\"}",
	  "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"fields\":[{\"type\":"
	  "\"struct\",\"fields\":[{\"type\":\"boolean\",\"optional\":true,\"field\":\"c\"}],"
	  "\"optional\":true,\"name\":\"payload.a.b\",\"field\":\"b\"}],\"optional\":true,"
	  "\"name\":\"payload.a\",\"field\":\"a\"},{\"type\":\"string\",\"optional\":true,"
	  "\"field\":\"s\"}],\"optional\":true,\"name\":\"payload\"},\"payload\":{\"a\":{\"b\":"
	  "{\"c\":true}},\"s\":\"\xc3\xa9\\uD83D\\uDE00\\n\"}}",
	  "{\"a\":{\"b\":{\"c\":true}},\"s\":\"\xc3\xa9\\uD83D\\uDE00\\n\"}",
	  "Struct{a=Struct{b=Struct{c=true}},s=\xc3\xa9\xf0\x9f\x98\x80\n}" },
	/* duplicate keys: first position, last value */
	{ "{\"a\":1,\"a\":\"x\"}",
	  "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"string\",\"optional\":true,"
	  "\"field\":\"a\"}],\"optional\":true,\"name\":\"payload\"},\"payload\":{\"a\":\"x\"}}",
	  "{\"a\":\"x\"}", "Struct{a=x}" },
	/* JSON null and [] fields are left out (ignore) */
	{ "{\"a\":null,\"b\":1,\"c\":[]}",
	  "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"int32\",\"optional\":true,"
	  "\"field\":\"b\"}],\"optional\":true,\"name\":\"payload\"},\"payload\":{\"b\":1}}",
	  "{\"b\":1}", "Struct{b=1}" },
	{ "{}",
	  "{\"schema\":{\"type\":\"struct\",\"fields\":[],\"optional\":true,\"name\":"
	  "\"payload\"},\"payload\":{}}",
	  "{}", "Struct{}" },
	{ "{\"a\":[[1]]}",
	  "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"array\",\"items\":{\"type\":"
	  "\"array\",\"items\":{\"type\":\"int32\",\"optional\":true},\"optional\":true},"
	  "\"optional\":true,\"field\":\"a\"}],\"optional\":true,\"name\":\"payload\"},"
	  "\"payload\":{\"a\":[[1]]}}",
	  "{\"a\":[[1]]}", "Struct{a=[[1]]}" },
	/* one element schema: kept optional */
	{ "{\"a\":[{\"x\":1},{\"x\":2}]}",
	  "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"array\",\"items\":{\"type\":"
	  "\"struct\",\"fields\":[{\"type\":\"int32\",\"optional\":true,\"field\":\"x\"}],"
	  "\"optional\":true,\"name\":\"payload.a\"},\"optional\":true,\"field\":\"a\"}],"
	  "\"optional\":true,\"name\":\"payload\"},\"payload\":{\"a\":[{\"x\":1},{\"x\":2}]}}",
	  "{\"a\":[{\"x\":1},{\"x\":2}]}", "Struct{a=[Struct{x=1}, Struct{x=2}]}" },
	/* merged element schemas: the union, and no longer optional */
	{ "{\"a\":[{\"x\":1,\"n\":null},{\"x\":2,\"n\":\"s\"}]}",
	  "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"array\",\"items\":{\"type\":"
	  "\"struct\",\"fields\":[{\"type\":\"int32\",\"optional\":true,\"field\":\"x\"},{\"type\":"
	  "\"string\",\"optional\":true,\"field\":\"n\"}],\"optional\":false,\"name\":\"payload.a\"},"
	  "\"optional\":true,\"field\":\"a\"}],\"optional\":true,\"name\":\"payload\"},\"payload\":"
	  "{\"a\":[{\"x\":1,\"n\":null},{\"x\":2,\"n\":\"s\"}]}}",
	  "{\"a\":[{\"x\":1,\"n\":null},{\"x\":2,\"n\":\"s\"}]}",
	  "Struct{a=[Struct{x=1}, Struct{x=2,n=s}]}" },
	{ "{\"a\":[{\"x\":1},{\"y\":2}]}", ANY_BYTES,
	  "{\"a\":[{\"x\":1,\"y\":null},{\"x\":null,\"y\":2}]}",
	  "Struct{a=[Struct{x=1}, Struct{y=2}]}" },
	/* not expanded (Debezium warns): the Json string as it was */
	{ " {\"a\":1}",
	  "{\"schema\":{\"type\":\"string\",\"optional\":true,\"name\":\"io.debezium.data.Json\","
	  "\"version\":1},\"payload\":\" {\\\"a\\\":1}\"}",
	  "\" {\\\"a\\\":1}\"", " {\"a\":1}" },
	{ "abc", ANY_BYTES, "\"abc\"", "abc" },
	{ "{\"a\":[1,2.5]}", ANY_BYTES, "\"{\\\"a\\\":[1,2.5]}\"", "{\"a\":[1,2.5]}" },
	{ "{\"a\":[1,3000000000]}", ANY_BYTES, "\"{\\\"a\\\":[1,3000000000]}\"",
	  "{\"a\":[1,3000000000]}" },
	{ "{\"a\":[true,\"x\"]}", ANY_BYTES, "\"{\\\"a\\\":[true,\\\"x\\\"]}\"",
	  "{\"a\":[true,\"x\"]}" },
	{ "{\"a\":[null,null]}", ANY_BYTES, "\"{\\\"a\\\":[null,null]}\"", "{\"a\":[null,null]}" },
	{ "{\"a\":[[]]}", ANY_BYTES, "\"{\\\"a\\\":[[]]}\"", "{\"a\":[[]]}" },
	{ "{\"\":2}", ANY_BYTES, "\"{\\\"\\\":2}\"", "{\"\":2}" },
	{ "{\"a\":01}", ANY_BYTES, "\"{\\\"a\\\":01}\"", "{\"a\":01}" },
	/* schema committed, value refused: the string stays under the new schema (hazard) */
	{ "[1,2]", NULL, NULL, "[1,2]" },
	{ "{\"a\":99999999999999999999}", NULL, NULL, "{\"a\":99999999999999999999}" },
	{ "{\"a\":[{\"x\":1},{\"y\":\"s\"},null]}", NULL, NULL,
	  "{\"a\":[{\"x\":1},{\"y\":\"s\"},null]}" },
	{ "[]", "{\"schema\":null,\"payload\":\"[]\"}", "\"[]\"", "[]" },
};

START_TEST(test_expanded_json_payload_matches_debezium_bytes)
{
	const struct expand_case *c = &expand_cases[_i];
	struct kv smt = KV_INIT, off = KV_INIT;
	struct router *on_r, *off_r, *str_r;
	struct record rec;
	struct row2 row;
	char err[512];

	kv_set(&smt, "table.expand.json.payload", "true", NULL);
	kv_set(&off, "schemas.enable", "false", NULL);
	on_r = mk2(&smt, JSON, NULL, false);
	off_r = mk2(&smt, JSON, &off, false);
	str_r = mk2(&smt, STRING, NULL, false);
	record_init(&rec);
	row2_init(&row, c->payload);
	ck_assert_int_eq(route2(on_r, &row, NULL, &rec, err),
			 c->on ? ROUTER_PUBLISH : ROUTER_POISON);
	if (c->on && strcmp(c->on, ANY_BYTES) != 0) {
		ck_assert_str_eq(buf_cstr(&rec.value), c->on);
	}
	ck_assert_int_eq(route2(off_r, &row, NULL, &rec, err),
			 c->off ? ROUTER_PUBLISH : ROUTER_POISON);
	if (c->off) {
		ck_assert_str_eq(buf_cstr(&rec.value), c->off);
	}
	ck_assert_int_eq(route2(str_r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.value), c->str);
	record_fini(&rec);
	router_free(on_r);
	router_free(off_r);
	router_free(str_r);
	kv_fini(&smt);
	kv_fini(&off);
}
END_TEST

START_TEST(test_expansion_options_null_behavior_field_names_and_envelope_act_as_in_debezium)
{
	struct kv smt = KV_INIT, off = KV_INIT;
	struct router *r;
	struct record rec;
	struct row2 row;
	char err[512];

	kv_set(&off, "schemas.enable", "false", NULL);
	kv_set(&smt, "table.expand.json.payload", "true", NULL);
	kv_set(&smt, "table.json.payload.null.behavior", " OPTIONAL_BYTES ", NULL);
	r = mk2(&smt, JSON, NULL, false);
	record_init(&rec);
	row2_init(&row, "{\"a\":null,\"b\":[null,1],\"c\":[{\"x\":null},{\"x\":1}],\"d\":[null]}");
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(
		buf_cstr(&rec.value),
		"{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"bytes\",\"optional\":true,"
		"\"field\":\"a\"},{\"type\":\"array\",\"items\":{\"type\":\"int32\",\"optional\":true},"
		"\"optional\":true,\"field\":\"b\"},{\"type\":\"array\",\"items\":{\"type\":\"struct\","
		"\"fields\":[{\"type\":\"int32\",\"optional\":true,\"field\":\"x\"}],\"optional\":false,"
		"\"name\":\"payload.c\"},\"optional\":true,\"field\":\"c\"},{\"type\":\"array\",\"items\":"
		"{\"type\":\"bytes\",\"optional\":true},\"optional\":true,\"field\":\"d\"}],\"optional\":"
		"true,\"name\":\"payload\"},\"payload\":{\"a\":null,\"b\":[null,1],\"c\":[{\"x\":null},"
		"{\"x\":1}],\"d\":[null]}}");
	/* a NULL payload is not expanded; the tombstone rule sees it */
	row2_set(&row, 4, NULL);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.value),
			 "{\"schema\":{\"type\":\"string\",\"optional\":true,\"name\":"
			 "\"io.debezium.data.Json\",\"version\":1},\"payload\":null}");
	router_free(r);
	/* field.name.adjustment.mode renames; the value is then looked up by the new name */
	kv_del(&smt, "table.json.payload.null.behavior");
	kv_set(&smt, "field.name.adjustment.mode", "avro", NULL);
	r = mk2(&smt, JSON, &off, false);
	row2_set(&row, 4, "{\"a-b\":1,\"1x\":2,\"\xc3\xa9\":3,\"a_b\":4}");
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.value), "{\"a_b\":4,\"_1x\":null,\"_\":null}");
	router_free(r);
	kv_set(&smt, "field.name.adjustment.mode", "avro_unicode", NULL);
	r = mk2(&smt, JSON, &off, false);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.value),
			 "{\"a_u002db\":null,\"_u0031x\":null,\"_u00e9\":null,\"a_u005fb\":null}");
	row2_set(&row, 4, "{\"\xf0\x9f\x98\x80\":1}");
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.value), "{\"_ud83d_ude00\":null}");
	router_free(r);
	/* envelope mode: the expanded struct is the payload field; tombstone never on a struct */
	kv_del(&smt, "field.name.adjustment.mode");
	kv_set(&smt, "table.fields.additional.placement", "type:envelope:t", NULL);
	kv_set(&smt, "route.tombstone.on.empty.payload", "true", NULL);
	r = mk2(&smt, JSON, NULL, false);
	row2_set(&row, 4, "{\"x\": 1}");
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(
		buf_cstr(&rec.value),
		"{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"fields\":[{\"type\":"
		"\"int32\",\"optional\":true,\"field\":\"x\"}],\"optional\":true,\"name\":\"payload\","
		"\"field\":\"payload\"},{\"type\":\"string\",\"optional\":false,\"field\":\"t\"}],"
		"\"optional\":false,\"name\":\"dbserver1.public.outbox.order.Value\"},\"payload\":"
		"{\"payload\":{\"x\":1},\"t\":\"OrderCreated\"}}");
	row2_set(&row, 4, "{}");
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert(!rec.value_null);
	/* a half-expanded payload cannot go into the envelope */
	row2_set(&row, 4, "[1]");
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_POISON);
	row2_set(&row, 4, "[]");
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_POISON);
	router_free(r);
	/* a jsonb nested 1001 deep is more than Jackson reads: kept as a string */
	{
		struct buf deep = BUF_INIT;

		kv_del(&smt, "table.fields.additional.placement");
		r = mk2(&smt, JSON, &off, false);
		for (int i = 0; i < 1001; i++) {
			buf_add_char(&deep, '[');
		}
		for (int i = 0; i < 1001; i++) {
			buf_add_char(&deep, ']');
		}
		row2_set(&row, 4, buf_cstr(&deep));
		ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
		ck_assert_uint_eq(rec.value.len, 2004);
		buf_fini(&deep);
		router_free(r);
	}
	record_fini(&rec);
	kv_fini(&smt);
	kv_fini(&off);
}
END_TEST

START_TEST(test_event_timestamp_column_sets_the_record_time_or_poisons_other_types)
{
	struct kv smt = KV_INIT;
	struct router *r;
	struct record rec;
	struct row2 row;
	char err[512];
	const struct {
		const char *col;
		int64_t ms; /* -2 = poison */
	} cases[] = {
		{ "ts", 1700000000123 },  /* MicroTimestamp / 1000 */
		{ "ts3", 1700000000123 }, /* Timestamp: ms */
		{ "tstz", -2 },		  /* ZonedTimestamp string: DataException */
		{ "big", -2 },		  /* int64 without a logical name */
		{ "type", -2 },		  /* a string */
		{ "nope", -2 },		  /* missing */
	};

	record_init(&rec);
	row2_init(&row, "{}");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		kv_set(&smt, "table.field.event.timestamp", cases[i].col, NULL);
		r = mk2(&smt, NULL, NULL, false);
		ck_assert_int_eq(route2(r, &row, NULL, &rec, err),
				 cases[i].ms == -2 ? ROUTER_POISON : ROUTER_PUBLISH);
		if (cases[i].ms != -2) {
			ck_assert_int_eq(rec.timestamp_ms, cases[i].ms);
		} else {
			ck_assert_ptr_nonnull(strstr(err, cases[i].col));
		}
		router_free(r);
	}
	/* NULL falls back to processing time, even for an int64 without a name */
	kv_set(&smt, "table.field.event.timestamp", "ts", NULL);
	r = mk2(&smt, NULL, NULL, false);
	row2_set(&row, 5, NULL);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_int_eq(rec.timestamp_ms, -1);
	router_free(r);
	kv_set(&smt, "table.field.event.timestamp", "big", NULL);
	r = mk2(&smt, NULL, NULL, false);
	row2_set(&row, 10, NULL);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_int_eq(rec.timestamp_ms, -1);
	router_free(r);
	/* ... but not for a column of another type */
	kv_set(&smt, "table.field.event.timestamp", "tstz", NULL);
	r = mk2(&smt, NULL, NULL, false);
	row2_set(&row, 7, NULL);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_POISON);
	router_free(r);
	/* Debezium Server: the record timestamp is the producer's */
	kv_set(&smt, "table.field.event.timestamp", "ts3", NULL);
	r = mk2(&smt, NULL, NULL, true);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_int_eq(rec.timestamp_ms, -1);
	router_free(r);
	record_fini(&rec);
	kv_fini(&smt);
}
END_TEST

START_TEST(test_schema_version_column_and_column_defaults_shape_the_envelope)
{
	struct kv smt = KV_INIT, off = KV_INIT;
	struct router *r;
	struct record rec;
	struct row2 row;
	char err[512];
	const char *defaults[NC2] = { NULL };

	/* reference §3.5 (b) with a version column = 3, and a NULL boolean DEFAULT false */
	defaults[9] = "false";
	kv_set(&smt, "table.fields.additional.placement", "type:envelope:t,deleted:envelope", NULL);
	kv_set(&smt, "table.field.event.schema.version", "ver", NULL);
	r = mk2(&smt, NULL, NULL, false);
	record_init(&rec);
	row2_init(&row, "{\"x\": 1}");
	ck_assert_int_eq(route2(r, &row, defaults, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(
		buf_cstr(&rec.value),
		"{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"string\",\"optional\":true,"
		"\"name\":\"io.debezium.data.Json\",\"version\":1,\"field\":\"payload\"},{\"type\":"
		"\"string\",\"optional\":false,\"field\":\"t\"},{\"type\":\"boolean\",\"optional\":true,"
		"\"default\":false,\"field\":\"deleted\"}],\"optional\":false,\"name\":"
		"\"dbserver1.public.outbox.order.Value\",\"version\":3},\"payload\":{\"payload\":"
		"\"{\\\"x\\\": 1}\",\"t\":\"OrderCreated\",\"deleted\":false}}");
	/* NULL version: Debezium's getInt32 unboxing fails */
	row2_set(&row, 8, NULL);
	ck_assert_int_eq(route2(r, &row, defaults, &rec, err), ROUTER_POISON);
	router_free(r);
	/* replace.null.with.default=false changes nothing: the router already read the default */
	kv_set(&off, "replace.null.with.default", "false", NULL);
	kv_set(&off, "schemas.enable", "false", NULL);
	kv_del(&smt, "table.field.event.schema.version");
	kv_set(&smt, "table.fields.additional.placement", "deleted:envelope", NULL);
	r = mk2(&smt, JSON, &off, false);
	ck_assert_int_eq(route2(r, &row, defaults, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.value),
			 "{\"payload\":\"{\\\"x\\\": 1}\",\"deleted\":false}");
	/* without the DEFAULT the NULL stays */
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.value), "{\"payload\":\"{\\\"x\\\": 1}\",\"deleted\":null}");
	/* a function default is not a constant: no default */
	defaults[9] = "now()";
	ck_assert_int_eq(route2(r, &row, defaults, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.value), "{\"payload\":\"{\\\"x\\\": 1}\",\"deleted\":null}");
	router_free(r);
	/* a quoted text default on the key column: the key schema carries it */
	defaults[2] = "'it''s'::character varying";
	row2_set(&row, 2, NULL);
	r = mk2(&smt, NULL, NULL, false);
	ck_assert_msg(route2(r, &row, defaults, &rec, err) == ROUTER_PUBLISH, "%s", err);
	ck_assert_str_eq(buf_cstr(&rec.key), "{\"schema\":{\"type\":\"string\",\"optional\":false,"
					     "\"default\":\"it's\"},\"payload\":\"it's\"}");
	router_free(r);
	record_fini(&rec);
	kv_fini(&smt);
	kv_fini(&off);
}
END_TEST

START_TEST(test_missing_placement_column_follows_table_field_additional_missing)
{
	struct kv smt = KV_INIT, off = KV_INIT;
	struct router *r;
	struct record rec;
	struct row2 row;
	char err[512];

	kv_set(&off, "schemas.enable", "false", NULL);
	record_init(&rec);
	row2_init(&row, "{\"x\": 1}");
	/* table.field.additional.missing, and the legacy boolean it replaces */
	kv_set(&smt, "table.fields.additional.placement", "nope:header,type:header:eventType",
	       NULL);
	r = mk2(&smt, JSON, &off, false);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_POISON);
	ck_assert_ptr_nonnull(strstr(err, "nope"));
	router_free(r);
	kv_set(&smt, "table.field.additional.missing", " IGNORE", NULL);
	r = mk2(&smt, JSON, &off, false);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_uint_eq(rec.nheaders, 2);
	header_is(&rec, 1, "eventType", "OrderCreated");
	router_free(r);
	kv_del(&smt, "table.field.additional.missing");
	kv_set(&smt, "table.fields.additional.error.on.missing", "false", NULL);
	r = mk2(&smt, JSON, &off, false);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	router_free(r);
	/* the new option wins over the legacy one */
	kv_set(&smt, "table.field.additional.missing", "error", NULL);
	r = mk2(&smt, JSON, &off, false);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_POISON);
	router_free(r);
	/* order and aliases: headers in list order, envelope fields in list order */
	kv_fini(&smt);
	kv_set(&smt, "table.fields.additional.placement",
	       "ver:header:v, type:envelope:eventType, aggregateid:header, big:envelope, "
	       "ver:partition:ignored, tracing:unused",
	       NULL);
	kv_set(&smt, "tracing.span.context.field", "tracing", NULL);
	kv_set(&smt, "tracing.operation.name", "op", NULL);
	kv_set(&smt, "tracing.with.context.field.only", "true", NULL);
	kv_set(&smt, "table.field.additional.missing", "ignore", NULL);
	{
		char e2[512];
		struct router_config cfg = { .topic_prefix = "p", .smt = &smt };

		/* "unused" is no placement: refused at start */
		ck_assert_int_eq(router_new(&cfg, &r, e2, sizeof(e2)), -EINVAL);
	}
	kv_set(&smt, "table.fields.additional.placement",
	       "ver:header:v, type:envelope:eventType, aggregateid:header, big:envelope, "
	       "ver:PARTITION:ignored",
	       NULL);
	r = mk2(&smt, JSON, &off, false);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_uint_eq(rec.nheaders, 3);
	header_is(&rec, 0, "id", UUID);
	header_is(&rec, 1, "v", "3");
	header_is(&rec, 2, "aggregateid", "42");
	ck_assert_str_eq(
		buf_cstr(&rec.value),
		"{\"payload\":\"{\\\"x\\\": 1}\",\"eventType\":\"OrderCreated\",\"big\":5}");
	ck_assert_int_eq(rec.partition, 3);
	/* NULL partition column: unassigned; NULL header: present with a null value */
	row2_set(&row, 8, NULL);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_int_eq(rec.partition, -1);
	header_is(&rec, 1, "v", NULL);
	router_free(r);
	/* partition on a non-int4 column fails per record */
	kv_set(&smt, "table.fields.additional.placement", "big:partition", NULL);
	r = mk2(&smt, JSON, &off, false);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_POISON);
	router_free(r);
	/* tombstones: blank text is empty, a bytea never is; key and headers stay */
	kv_fini(&smt);
	kv_set(&smt, "route.tombstone.on.empty.payload", "true", NULL);
	r = mk2(&smt, JSON, &off, false);
	row2_init(&row, " \t\n ");
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert(rec.value_null);
	ck_assert_str_eq(buf_cstr(&rec.key), "\"42\"");
	header_is(&rec, 0, "id", UUID);
	row2_init(&row, "");
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert(rec.value_null);
	row2_init(&row, " x ");
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert(!rec.value_null);
	router_free(r);
	kv_set(&smt, "table.field.event.payload", "bin", NULL);
	r = mk2(&smt, JSON, &off, false);
	row2_set(&row, 11, "\\x");
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert(!rec.value_null);
	ck_assert_str_eq(buf_cstr(&rec.value), "\"\"");
	router_free(r);
	record_fini(&rec);
	kv_fini(&smt);
	kv_fini(&off);
}
END_TEST

START_TEST(test_exclude_and_schema_lists_select_tables_as_debezium_does)
{
	struct router_config cfg = { .topic_prefix = "p",
				     .table_exclude_list = "public\\.audit.*" };
	struct router *r = NULL;
	char err[512];

	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert(router_selects(r, "public", "outbox"));
	ck_assert(!router_selects(r, "PUBLIC", "AuditLog"));
	ck_assert(router_selects(r, "other", "audit"));
	router_free(r);
	cfg = (struct router_config){ .topic_prefix = "p", .schema_include_list = "app, inv\\,x" };
	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert(router_selects(r, "APP", "outbox"));
	ck_assert(router_selects(r, "inv,x", "t"));
	ck_assert(!router_selects(r, "public", "outbox"));
	ck_assert(!router_selects(r, "app2", "outbox"));
	router_free(r);
	cfg = (struct router_config){ .topic_prefix = "p",
				      .schema_exclude_list = "pg_.*",
				      .table_include_list = ".*\\.outbox" };
	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert(router_selects(r, "public", "outbox"));
	ck_assert(!router_selects(r, "pg_temp", "outbox"));
	ck_assert(!router_selects(r, "public", "other"));
	router_free(r);
	cfg = (struct router_config){ .topic_prefix = "p", .schema_exclude_list = "(bad" };
	ck_assert_int_eq(router_new(&cfg, &r, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "schema.exclude.list"));
	cfg = (struct router_config){ .topic_prefix = "p", .table_exclude_list = "" };
	ck_assert_int_eq(router_new(&cfg, &r, err, sizeof(err)), 0);
	ck_assert(router_selects(r, "any", "table"));
	router_free(r);
}
END_TEST

START_TEST(test_server_flavour_converts_headers_and_ignores_partition_placement)
{
	struct kv smt = KV_INIT, hoff = KV_INIT;
	struct router_config cfg = {
		.topic_prefix = "dbserver1",
		.run_id = "11111111-2222-4333-8444-555555555555",
		.smt = &smt,
		.server_flavour = true,
	};
	struct router *r = NULL;
	struct record rec;
	struct row2 row;
	char err[512];
	const char *id137 = "{\"schema\":{\"type\":\"string\",\"optional\":false,\"name\":"
			    "\"io.debezium.data.Uuid\",\"version\":1},\"payload\":\"" UUID "\"}";

	kv_set(&smt, "table.fields.additional.placement",
	       "ver:partition,ver:header:v,deleted:header", NULL);
	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	record_init(&rec);
	row2_init(&row, "{\"x\": 1}");
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	/* default header format json, schemas on: the 137-byte id header of reference §3.6 */
	ck_assert_uint_eq(rec.nheaders, 3);
	header_is(&rec, 0, "id", id137);
	ck_assert_uint_eq(rec.headers[0].value.len, 137);
	header_is(&rec, 1, "v",
		  "{\"schema\":{\"type\":\"int32\",\"optional\":true},\"payload\":3}");
	/*
	 * "deleted" is NULL: Debezium Server drops only a header whose converted bytes are a
	 * Kafka null (ConverterBuilder), and JsonConverter gives a null with a schema bytes
	 */
	header_is(&rec, 2, "deleted",
		  "{\"schema\":{\"type\":\"boolean\",\"optional\":true},\"payload\":null}");
	/* partition placement ignored */
	ck_assert_int_eq(rec.partition, -1);
	router_free(r);
	/* debezium.format.header.schemas.enable=false: the 38-byte quoted id */
	kv_set(&hoff, "schemas.enable", "false", NULL);
	cfg.header_converter_opts = &hoff;
	cfg.extended_headers = true;
	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_uint_eq(rec.nheaders, 7);
	header_is(&rec, 0, "__debezium.context.connectorLogicalName", "\"dbserver1\"");
	header_is(&rec, 4, "id", "\"" UUID "\"");
	ck_assert_uint_eq(rec.headers[4].value.len, 38);
	header_is(&rec, 5, "v", "3");
	header_is(&rec, 6, "deleted", "null");
	router_free(r);
	record_fini(&rec);
	kv_fini(&smt);
	kv_fini(&hoff);
}
END_TEST

/*
 * A column of an enum type carries Debezium's Enum schema with the labels the catalog gave
 * (router_enum_labels()), in a JsonConverter header and in the envelope; learnt again, the new
 * labels apply; a column of another type keeps a plain string schema.
 */
START_TEST(test_enum_columns_carry_the_enum_schema_with_their_labels)
{
	struct relcache_col ecols[6];
	struct relcache_rel erel = rel;
	struct kv smt = KV_INIT;
	struct router_config cfg = { .topic_prefix = "p",
				     .smt = &smt,
				     .header_converter = JSON,
				     .extended_headers = false };
	const struct router_row rr_base = { .notnull = notnull, .op = 'I' };
	struct router_row rr = rr_base;
	enum router_verdict v = ROUTER_PUBLISH;
	struct router *r = NULL;
	struct record rec;
	struct row row;
	char err[512];

	memcpy(ecols, cols, sizeof(ecols));
	ecols[5].type_oid = 16400; /* seq: an enum */
	erel.cols = ecols;
	record_init(&rec);
	row_init(&row, "order", "42", "{}");
	kv_set(&smt, "table.fields.additional.placement",
	       "seq:header:mood,type:header:t,"
	       "seq:envelope:mood",
	       NULL);
	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	router_enum_labels(r, 16400, "ok,sad");
	rr.rel = &erel;
	rr.tup = &row.t;
	ck_assert_int_eq(router_route(r, &rr, &rec, &v, err, sizeof(err)), 0);
	header_is(&rec, 1, "mood",
		  "{\"schema\":{\"type\":\"string\",\"optional\":true,\"name\":"
		  "\"io.debezium.data.Enum\",\"version\":1,\"parameters\":{\"allowed\":\"ok,"
		  "sad\"}},\"payload\":\"7\"}");
	header_is(&rec, 2, "t",
		  "{\"schema\":{\"type\":\"string\",\"optional\":false},\"payload\":"
		  "\"OrderCreated\"}");
	ck_assert_msg(strstr(buf_cstr(&rec.value),
			     "{\"type\":\"string\",\"optional\":true,\"name\":\"io.debezium.data."
			     "Enum\",\"version\":1,\"parameters\":{\"allowed\":\"ok,sad\"},"
			     "\"field\":\"mood\"}"),
		      "%s", buf_cstr(&rec.value));
	router_enum_labels(r, 16400, "ok,sad,very sad");
	record_fini(&rec);
	record_init(&rec);
	ck_assert_int_eq(router_route(r, &rr, &rec, &v, err, sizeof(err)), 0);
	ck_assert_msg(strstr(buf_cstr(&rec.headers[1].value), "\"allowed\":\"ok,sad,very sad\""),
		      "%s", buf_cstr(&rec.headers[1].value));
	router_free(r);
	record_fini(&rec);
	kv_fini(&smt);
}
END_TEST

START_TEST(test_binary_data_converter_and_decimal_format_apply_through_the_router)
{
	struct kv smt = KV_INIT, bin = KV_INIT, num = KV_INIT;
	struct router_config cfg = { .topic_prefix = "p", .smt = &smt };
	struct router *r = NULL;
	struct record rec;
	struct row2 row;
	char err[512];

	record_init(&rec);
	row2_init(&row, "{\"x\": 1}");
	/* BinaryDataConverter: bytea raw, anything else through its delegate */
	kv_set(&smt, "table.field.event.payload", "bin", NULL);
	kv_set(&bin, "delegate.converter.type", JSON, NULL);
	kv_set(&bin, "delegate.converter.type.schemas.enable", "false", NULL);
	cfg.value_converter = cfg.key_converter = cfg.header_converter =
		"io.debezium.converters.BinaryDataConverter";
	cfg.value_converter_opts = cfg.key_converter_opts = cfg.header_converter_opts = &bin;
	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_uint_eq(rec.value.len, 5);
	ck_assert_mem_eq(rec.value.data, "\x00\x01\xfe\xff\x41", 5);
	ck_assert_str_eq(buf_cstr(&rec.key), "\"42\"");
	header_is(&rec, 0, "id", "\"" UUID "\"");
	row2_set(&row, 11, NULL);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert(rec.value_null);
	router_free(r);
	/* no delegate: only bytes can be written */
	cfg.key_converter = cfg.header_converter = NULL;
	cfg.key_converter_opts = cfg.header_converter_opts = NULL;
	cfg.value_converter_opts = NULL;
	kv_set(&smt, "table.field.event.payload", "payload", NULL);
	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_POISON);
	ck_assert_ptr_nonnull(strstr(err, "delegate.converter.type"));
	router_free(r);
	/* decimal.format on a numeric(10,2) envelope field */
	cfg.value_converter = JSON;
	kv_set(&smt, "table.fields.additional.placement", "amount:envelope", NULL);
	kv_set(&num, "decimal.format", "NUMERIC", NULL);
	kv_set(&num, "schemas.enable", "false", NULL);
	cfg.value_converter_opts = &num;
	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.value), "{\"payload\":\"{\\\"x\\\": 1}\",\"amount\":12.34}");
	router_free(r);
	kv_set(&num, "decimal.format", "BASE64", NULL);
	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(route2(r, &row, NULL, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.value),
			 "{\"payload\":\"{\\\"x\\\": 1}\",\"amount\":\"BNI=\"}");
	router_free(r);
	record_fini(&rec);
	kv_fini(&smt);
	kv_fini(&bin);
	kv_fini(&num);
}
END_TEST

/*
 * Logical decoding messages, against the bytes Debezium 3.6.1 wrote for
 * pg_logical_emit_message(true, 'mixed', 'x') inside a transaction and
 * pg_logical_emit_message(false, 'audit', 'plain text') outside one (captured on PG 15).
 */
START_TEST(test_logical_messages_become_debezium_message_records)
{
	struct kv on = KV_INIT, off = KV_INIT;
	struct router_config cfg = { .topic_prefix = "msgx",
				     .run_id = "r",
				     .extended_headers = true,
				     .key_converter_opts = &on,
				     .value_converter_opts = &on };
	struct router *r = NULL;
	struct record rec;
	struct pgoutput_msg m = { .type = PGOUTPUT_MSG_MESSAGE };
	struct router_message_info info = { .dbname = "outboxd",
					    .commit_time_us = INT64_C(1796224102611243),
					    .has_xid = true,
					    .xid = 29565,
					    .has_last_commit = true,
					    .last_commit_lsn = 972137560,
					    .now_ms = INT64_C(1796224102754) };
	char err[512] = "";

	kv_set(&on, "schemas.enable", "true", NULL);
	kv_set(&off, "schemas.enable", "false", NULL);
	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	record_init(&rec);
	m.u.message.flags = 1;
	m.u.message.lsn = 972138016;
	m.u.message.prefix = slice_from_str("mixed");
	m.u.message.content = slice_from_str("x");
	ck_assert_msg(router_message(r, &m, &info, &rec, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(buf_cstr(&rec.topic), "msgx.message");
	ck_assert_str_eq(
		buf_cstr(&rec.key),
		"{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"string\",\"optional\":true,\"field\":\"prefix\"}],\"optional\":false,\"name\":\"io.debezium.connector.postgresql.MessageKey\",\"version\":1},\"payload\":{\"prefix\":\"mixed\"}}");
	ck_assert_str_eq(
		buf_cstr(&rec.value),
		"{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"string\",\"optional\":false,\"field\":\"op\"},{\"type\":\"int64\",\"optional\":true,\"field\":\"ts_ms\"},{\"type\":\"struct\",\"fields\":[{\"type\":\"string\",\"optional\":false,\"field\":\"version\"},{\"type\":\"string\",\"optional\":false,\"field\":\"connector\"},{\"type\":\"string\",\"optional\":false,\"field\":\"name\"},{\"type\":\"int64\",\"optional\":false,\"field\":\"ts_ms\"},{\"type\":\"string\",\"optional\":true,\"name\":\"io.debezium.data.Enum\",\"version\":1,\"parameters\":{\"allowed\":\"true,first,first_in_data_collection,last_in_data_collection,last,false,incremental\"},\"default\":\"false\",\"field\":\"snapshot\"},{\"type\":\"string\",\"optional\":false,\"field\":\"db\"},{\"type\":\"string\",\"optional\":true,\"field\":\"sequence\"},{\"type\":\"int64\",\"optional\":true,\"field\":\"ts_us\"},{\"type\":\"int64\",\"optional\":true,\"field\":\"ts_ns\"},{\"type\":\"string\",\"optional\":false,\"field\":\"schema\"},{\"type\":\"string\",\"optional\":false,\"field\":\"table\"},{\"type\":\"int64\",\"optional\":true,\"field\":\"txId\"},{\"type\":\"int64\",\"optional\":true,\"field\":\"lsn\"},{\"type\":\"int64\",\"optional\":true,\"field\":\"xmin\"},{\"type\":\"string\",\"optional\":true,\"field\":\"origin\"},{\"type\":\"int64\",\"optional\":true,\"field\":\"origin_lsn\"}],\"optional\":false,\"name\":\"io.debezium.connector.postgresql.Source\",\"version\":1,\"field\":\"source\"},{\"type\":\"struct\",\"fields\":[{\"type\":\"string\",\"optional\":false,\"field\":\"id\"},{\"type\":\"int64\",\"optional\":false,\"field\":\"total_order\"},{\"type\":\"int64\",\"optional\":false,\"field\":\"data_collection_order\"}],\"optional\":true,\"name\":\"event.block\",\"version\":1,\"field\":\"transaction\"},{\"type\":\"struct\",\"fields\":[{\"type\":\"string\",\"optional\":true,\"field\":\"prefix\"},{\"type\":\"bytes\",\"optional\":true,\"field\":\"content\"}],\"optional\":false,\"name\":\"io.debezium.connector.postgresql.Message\",\"version\":1,\"field\":\"message\"}],\"optional\":false,\"name\":\"io.debezium.connector.postgresql.MessageValue\",\"version\":1},\"payload\":{\"op\":\"m\",\"ts_ms\":1796224102754,\"source\":{\"version\":\"3.6.1.Final\",\"connector\":\"postgresql\",\"name\":\"msgx\",\"ts_ms\":1796224102611,\"snapshot\":\"false\",\"db\":\"outboxd\",\"sequence\":\"[\\\"972137560\\\",\\\"972138016\\\"]\",\"ts_us\":1796224102611243,\"ts_ns\":1796224102611243000,\"schema\":\"\",\"table\":\"\",\"txId\":29565,\"lsn\":972138016,\"xmin\":null,\"origin\":null,\"origin_lsn\":null},\"transaction\":null,\"message\":{\"prefix\":\"mixed\",\"content\":\"eA==\"}}}");
	ck_assert_uint_eq(rec.nheaders, 0);
	ck_assert_int_eq(rec.partition, -1);
	router_free(r);

	cfg.key_converter_opts = &off;
	cfg.value_converter_opts = &off;
	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	m.u.message.flags = 0;
	m.u.message.lsn = 972137560;
	m.u.message.prefix = slice_from_str("audit");
	m.u.message.content = slice_from_str("plain text");
	info = (struct router_message_info){ .dbname = "outboxd",
					     .commit_time_us = INT64_C(1796224102601055),
					     .has_last_commit = true,
					     .last_commit_lsn = 972137560,
					     .now_ms = INT64_C(1796224102719) };
	ck_assert_msg(router_message(r, &m, &info, &rec, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(buf_cstr(&rec.key), "{\"prefix\":\"audit\"}");
	ck_assert_str_eq(
		buf_cstr(&rec.value),
		"{\"op\":\"m\",\"ts_ms\":1796224102719,\"source\":{\"version\":\"3.6.1.Final\",\"connector\":\"postgresql\",\"name\":\"msgx\",\"ts_ms\":1796224102601,\"snapshot\":\"false\",\"db\":\"outboxd\",\"sequence\":\"[\\\"972137560\\\",\\\"972137560\\\"]\",\"ts_us\":1796224102601055,\"ts_ns\":1796224102601055000,\"schema\":\"\",\"table\":\"\",\"txId\":null,\"lsn\":972137560,\"xmin\":null,\"origin\":null,\"origin_lsn\":null},\"transaction\":null,\"message\":{\"prefix\":\"audit\",\"content\":\"cGxhaW4gdGV4dA==\"}}");
	record_fini(&rec);
	router_free(r);
	kv_fini(&on);
	kv_fini(&off);
}
END_TEST

START_TEST(test_message_prefix_lists_select_by_full_match)
{
	struct router_config cfg = { .topic_prefix = "p",
				     .run_id = "r",
				     .message_prefix_include_list = "outbox.*,audit" };
	struct router *r = NULL;
	char err[512] = "";

	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert(router_message_selected(r, "outbox", 6));
	ck_assert(router_message_selected(r, "outbox.v2", 9));
	ck_assert(router_message_selected(r, "audit", 5));
	ck_assert(!router_message_selected(r, "audits", 6));
	router_free(r);
	cfg.message_prefix_include_list = NULL;
	cfg.message_prefix_exclude_list = "noise";
	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert(router_message_selected(r, "outbox", 6));
	ck_assert(!router_message_selected(r, "noise", 5));
	router_free(r);
}
END_TEST

/*
 * router_reads() names the columns routing converts, and only those: a column of a type outboxd
 * does not convert (interval, OID 1186) makes a row poison exactly when router_reads() names it.
 */
START_TEST(test_router_reads_names_the_columns_routing_converts)
{
	static struct relcache_col icols[] = {
		{ "id", 2950, -1, true },
		{ "aggregatetype", 1043, 259, false },
		{ "aggregateid", 1043, 259, false },
		{ "type", 1043, 259, false },
		{ "payload", 3802, -1, false },
		{ "seq", 23, -1, false },
		{ "dur", 603, -1, false }, /* box: not converted */
	};
	static struct relcache_rel irel = { 2, "public", "outbox", 'd', 7, icols, NULL };
	const char *v[] = { UUID, "order", "42", "OrderCreated", "{}", "7", "1 day" };
	struct pgoutput_col c[7];
	struct pgoutput_tuple t = { .ncols = 7, .cols = c };
	const struct router_row rr = { .rel = &irel, .tup = &t, .op = 'I' };
	struct kv smt = KV_INIT;
	enum router_verdict verdict;
	struct record rec;
	struct router *r;
	char err[512];

	for (int i = 0; i < 7; i++) {
		c[i] = (struct pgoutput_col){ .kind = 't', .value = slice_from_str(v[i]) };
	}
	record_init(&rec);
	r = mk(NULL, NULL, NULL, NULL);
	ck_assert_str_eq(router_reads(r, "id"), "table.field.event.id");
	ck_assert_str_eq(router_reads(r, "aggregateid"), "table.field.event.key");
	ck_assert_str_eq(router_reads(r, "aggregatetype"), "route.by.field");
	ck_assert_str_eq(router_reads(r, "payload"), "table.field.event.payload");
	ck_assert_ptr_null(router_reads(r, "type")); /* unused since Debezium 1.2 */
	ck_assert_ptr_null(router_reads(r, "seq"));
	ck_assert_ptr_null(router_reads(r, "dur"));
	ck_assert_ptr_null(router_reads(r, "Payload")); /* names are matched exactly */
	ck_assert_int_eq(router_route(r, &rr, &rec, &verdict, err, sizeof(err)), 0);
	ck_assert_int_eq(verdict, ROUTER_PUBLISH);
	router_free(r);
	kv_set(&smt, "table.fields.additional.placement", "seq:partition,dur:header:d", NULL);
	kv_set(&smt, "table.field.event.timestamp", "ts", NULL);
	kv_set(&smt, "table.field.event.schema.version", "ver", NULL);
	r = mk(NULL, NULL, &smt, NULL);
	ck_assert_str_eq(router_reads(r, "seq"), "table.fields.additional.placement");
	ck_assert_str_eq(router_reads(r, "dur"), "table.fields.additional.placement");
	ck_assert_str_eq(router_reads(r, "ts"), "table.field.event.timestamp");
	ck_assert_str_eq(router_reads(r, "ver"), "table.field.event.schema.version");
	router_free(r);
	kv_set(&smt, "table.fields.additional.placement", "dur:header:d", NULL);
	kv_del(&smt, "table.field.event.timestamp");
	kv_del(&smt, "table.field.event.schema.version");
	r = mk(NULL, NULL, &smt, NULL);
	ck_assert_int_eq(router_route(r, &rr, &rec, &verdict, err, sizeof(err)), 0);
	ck_assert_int_eq(verdict, ROUTER_POISON);
	ck_assert_ptr_nonnull(strstr(err, "'dur'"));
	router_free(r);
	record_fini(&rec);
	kv_fini(&smt);
}
END_TEST

static Suite *
router_suite(void)
{
	Suite *s = suite_create("router");
	TCase *tc = tcase_create("worked-example");

	tcase_add_test(tc, test_worked_example_json_schemas);
	tcase_add_test(tc, test_enum_columns_carry_the_enum_schema_with_their_labels);
	tcase_add_test(tc, test_logical_messages_become_debezium_message_records);
	tcase_add_test(tc, test_message_prefix_lists_select_by_full_match);
	tcase_add_test(tc, test_worked_example_schemas_off_and_string);
	tcase_add_test(tc, test_null_payload_null_key_and_int_key_publish_as_debezium_writes_them);
	suite_add_tcase(s, tc);
	tc = tcase_create("verdicts");
	tcase_add_test(
		tc, test_only_inserts_publish_updates_follow_the_setting_and_bad_rows_are_poison);
	tcase_add_test(tc, test_tombstone_placements_and_partition);
	tcase_add_test(tc, test_dead_letter_keeps_the_key_the_raw_payload_the_id_and_the_reason);
	suite_add_tcase(s, tc);
	tc = tcase_create("config");
	tcase_add_test(tc, test_invalid_router_options_are_refused_with_a_message);
	tcase_add_test(
		tc, test_table_include_list_is_a_case_insensitive_full_match_with_escaped_commas);
	tcase_add_test(tc, test_table_include_list_splits_like_debezium);
	suite_add_tcase(s, tc);
	tc = tcase_create("expand");
	tcase_add_loop_test(tc, test_expanded_json_payload_matches_debezium_bytes, 0,
			    (int)(sizeof(expand_cases) / sizeof(expand_cases[0])));
	tcase_add_test(
		tc,
		test_expansion_options_null_behavior_field_names_and_envelope_act_as_in_debezium);
	suite_add_tcase(s, tc);
	tc = tcase_create("options");
	tcase_add_test(tc, test_event_timestamp_column_sets_the_record_time_or_poisons_other_types);
	tcase_add_test(tc, test_schema_version_column_and_column_defaults_shape_the_envelope);
	tcase_add_test(tc, test_missing_placement_column_follows_table_field_additional_missing);
	tcase_add_test(tc, test_exclude_and_schema_lists_select_tables_as_debezium_does);
	tcase_add_test(tc, test_server_flavour_converts_headers_and_ignores_partition_placement);
	tcase_add_test(tc, test_binary_data_converter_and_decimal_format_apply_through_the_router);
	tcase_add_test(tc, test_router_reads_names_the_columns_routing_converts);
	suite_add_tcase(s, tc);
	tc = tcase_create("regex");
	tcase_add_test(tc, test_topic_is_routed_only_on_a_full_match_then_replaced_first);
	tcase_add_test(tc, test_topic_memo_gives_the_same_topics_and_never_remembers_errors);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(router_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
