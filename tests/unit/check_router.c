/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/buf.h"
#include "outboxd/regex_java.h"
#include "outboxd/router.h"

#define JSON "org.apache.kafka.connect.json.JsonConverter"
#define STRING "org.apache.kafka.connect.storage.StringConverter"
#define UUID "a1b2c3d4-0000-4000-8000-000000000001"

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
		.topic_prefix = "dbserver1", .run_id = "11111111-2222-4333-8444-555555555555",
		.smt = smt, .key_converter = keyconv, .value_converter = valconv,
		.value_converter_opts = valopts, .key_converter_opts = valopts,
		.extended_headers = true,
	};
	struct router *r = NULL;
	char err[512] = "";

	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	return r;
}

static enum router_verdict
route(struct router *r, char op, const struct row *row, struct router_record *rec, char *err)
{
	enum router_verdict v = ROUTER_PUBLISH;

	ck_assert_int_eq(router_route(r, &rel, notnull, op, row ? &row->t : NULL, rec, &v, err,
				      512), 0);
	return v;
}

static void
header_is(const struct router_record *rec, size_t i, const char *name, const char *value)
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
	struct router_record rec;
	struct row row;
	char err[512];

	router_record_init(&rec);
	row_init(&row, "order", "42", "{\"x\": 1}");
	ck_assert_int_eq(route(r, 'I', &row, &rec, err), ROUTER_PUBLISH);
	ck_assert_str_eq(buf_cstr(&rec.topic), "outbox.event.order");
	ck_assert_str_eq(buf_cstr(&rec.key),
			 "{\"schema\":{\"type\":\"string\",\"optional\":false},\"payload\":\"42\"}");
	ck_assert_uint_eq(rec.key.len, 60);
	ck_assert_str_eq(buf_cstr(&rec.value),
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
	router_record_fini(&rec);
	router_free(r);
}
END_TEST

START_TEST(test_worked_example_schemas_off_and_string)
{
	struct kv off = KV_INIT;
	struct router *r, *s;
	struct router_record rec;
	struct row row;
	char err[512];

	kv_set(&off, "schemas.enable", "false", NULL);
	r = mk(JSON, JSON, NULL, &off);
	s = mk(STRING, STRING, NULL, NULL);
	router_record_init(&rec);
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
	router_record_fini(&rec);
	router_free(r);
	router_free(s);
	kv_fini(&off);
}
END_TEST

START_TEST(test_null_payload_null_key_int_key)
{
	struct router *r = mk(NULL, NULL, NULL, NULL);
	struct kv smt = KV_INIT;
	struct router *ri;
	struct router_record rec;
	struct row row;
	char err[512];

	router_record_init(&rec);
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
	router_record_fini(&rec);
	router_free(r);
	router_free(ri);
	kv_fini(&smt);
}
END_TEST

START_TEST(test_verdicts)
{
	struct kv smt = KV_INIT;
	struct router *r = mk(NULL, NULL, NULL, NULL), *e, *f;
	struct router_record rec;
	struct row row;
	char err[512];

	router_record_init(&rec);
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

		ck_assert_int_eq(router_route(r, &rel, notnull, 'X', &row.t, &rec, &v, err, 512),
				 -EINVAL);
	}
	router_record_fini(&rec);
	router_free(r);
	router_free(e);
	router_free(f);
	kv_fini(&smt);
}
END_TEST

START_TEST(test_tombstone_placements_and_partition)
{
	struct kv smt = KV_INIT, off = KV_INIT;
	struct router *r;
	struct router_record rec;
	struct row row;
	char err[512];

	kv_set(&smt, "route.tombstone.on.empty.payload", "true", NULL);
	kv_set(&smt, "table.fields.additional.placement",
	       " type : header : eventType , seq:partition, type:envelope:eventType", NULL);
	kv_set(&off, "schemas.enable", "false", NULL);
	r = mk(JSON, JSON, &smt, &off);
	router_record_init(&rec);
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
	ck_assert_str_eq(buf_cstr(&rec.value),
		"{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"string\",\"optional\":true,"
		"\"name\":\"io.debezium.data.Json\",\"version\":1,\"field\":\"payload\"},{\"type\":"
		"\"string\",\"optional\":false,\"field\":\"eventType\"}],\"optional\":false,\"name\":"
		"\"dbserver1.public.outbox.order.Value\"},\"payload\":{\"payload\":\"{\\\"x\\\": 1}\","
		"\"eventType\":\"OrderCreated\"}}");
	row_init(&row, "invoice", "42", "{\"x\": 1}");
	ck_assert_int_eq(route(r, 'I', &row, &rec, err), ROUTER_PUBLISH);
	ck_assert_ptr_nonnull(strstr(buf_cstr(&rec.value), "dbserver1.public.outbox.order.Value"));
	ck_assert_str_eq(buf_cstr(&rec.topic), "outbox.event.invoice");
	router_record_fini(&rec);
	router_free(r);
	kv_fini(&smt);
	kv_fini(&off);
}
END_TEST

START_TEST(test_config_errors)
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
		{ "table.expand.json.payload", "true" },
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

START_TEST(test_table_include_list)
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

START_TEST(test_regex_router_semantics)
{
	struct buf b = BUF_INIT;
	const char *def = "(?<routedByValue>.*)", *defr = "outbox.event.${routedByValue}";

	ck_assert_str_eq(rr(&b, def, defr, "order"), "outbox.event.order");
	ck_assert_str_eq(rr(&b, def, defr, ""), "outbox.event.");
	/* '.' does not match \n, \r, U+2028: no full match, the raw value stays */
	ck_assert_str_eq(rr(&b, def, defr, "a\nb"), "a\nb");
	ck_assert_str_eq(rr(&b, def, defr, "a\rb"), "a\rb");
	ck_assert_str_eq(rr(&b, def, defr, "a\xe2\x80\xa8" "b"), "a\xe2\x80\xa8" "b");
	ck_assert_str_eq(rr(&b, def, defr, "a\xc2\x85" "b"), "a\xc2\x85" "b");
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

static Suite *
router_suite(void)
{
	Suite *s = suite_create("router");
	TCase *tc = tcase_create("worked-example");

	tcase_add_test(tc, test_worked_example_json_schemas);
	tcase_add_test(tc, test_worked_example_schemas_off_and_string);
	tcase_add_test(tc, test_null_payload_null_key_int_key);
	suite_add_tcase(s, tc);
	tc = tcase_create("verdicts");
	tcase_add_test(tc, test_verdicts);
	tcase_add_test(tc, test_tombstone_placements_and_partition);
	suite_add_tcase(s, tc);
	tc = tcase_create("config");
	tcase_add_test(tc, test_config_errors);
	tcase_add_test(tc, test_table_include_list);
	suite_add_tcase(s, tc);
	tc = tcase_create("regex");
	tcase_add_test(tc, test_regex_router_semantics);
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
