/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/convert.h"

#define JSON	  "org.apache.kafka.connect.json.JsonConverter"
#define STRING	  "org.apache.kafka.connect.storage.StringConverter"
#define BYTEARRAY "org.apache.kafka.connect.converters.ByteArrayConverter"
#define SIMPLE	  "org.apache.kafka.connect.storage.SimpleHeaderConverter"

/* Every expected byte string comes from reference §3.5 or from running Kafka 4.3.0. */

static struct convert *
mk(const char *cls, enum convert_role role, const char *k, const char *v)
{
	struct kv o = KV_INIT;
	struct convert *c = NULL;
	char err[512];

	if (k) {
		kv_set(&o, k, v, "test:1");
	}
	ck_assert_msg(convert_new(cls, &o, role, &c, err, sizeof(err)) == 0, "%s", err);
	kv_fini(&o);
	return c;
}

/* Write @v and compare with @want (NULL = Kafka null). */
static void
expect(struct convert *c, const struct cvalue *v, const char *want)
{
	struct buf out = BUF_INIT;
	bool null = false;
	char err[512] = "";

	ck_assert_msg(convert_write(c, v, &out, &null, err, sizeof(err)) == 0, "%s", err);
	if (!want) {
		ck_assert(null);
		ck_assert_uint_eq(out.len, 0);
	} else {
		ck_assert(!null);
		ck_assert_str_eq(buf_cstr(&out), want);
		ck_assert_uint_eq(out.len, strlen(want));
	}
	buf_fini(&out);
}

static const struct cvalue key42 = { .type = CVALUE_STRING, .u.s = { "42", 2 } };
static const struct cvalue payload = { .type = CVALUE_STRING,
				       .optional = true,
				       .name = "io.debezium.data.Json",
				       .version = 1,
				       .u.s = { "{\"x\": 1}", 8 } };

START_TEST(test_worked_example_json_schemas_off)
{
	struct convert *c = mk(JSON, CONVERT_VALUE, "schemas.enable", "false");

	expect(c, &key42, "\"42\"");
	expect(c, &payload, "\"{\\\"x\\\": 1}\"");
	convert_free(c);
}
END_TEST

START_TEST(test_worked_example_json_schemas_on)
{
	struct convert *c = mk(JSON, CONVERT_KEY, NULL, NULL);

	expect(c, &key42,
	       "{\"schema\":{\"type\":\"string\",\"optional\":false},\"payload\":\"42\"}");
	expect(c, &payload,
	       "{\"schema\":{\"type\":\"string\",\"optional\":true,\"name\":\"io.debezium.data.Json\","
	       "\"version\":1},\"payload\":\"{\\\"x\\\": 1}\"}");
	convert_free(c);
}
END_TEST

START_TEST(test_worked_example_string_converter)
{
	struct convert *c = mk(STRING, CONVERT_VALUE, "converter.encoding", "UTF-8");

	expect(c, &key42, "42");
	expect(c, &payload, "{\"x\": 1}");
	convert_free(c);
}
END_TEST

START_TEST(test_null_payload_and_key_are_what_each_converter_writes_for_null)
{
	struct cvalue np = payload,
		      nk = { .type = CVALUE_STRING, .optional = true, .is_null = true };
	struct convert *off = mk(JSON, CONVERT_VALUE, "schemas.enable", "false");
	struct convert *on = mk(JSON, CONVERT_VALUE, NULL, NULL);
	struct convert *s = mk(STRING, CONVERT_VALUE, NULL, NULL);

	np.is_null = true;
	expect(off, &np, "null");
	expect(on, &np,
	       "{\"schema\":{\"type\":\"string\",\"optional\":true,\"name\":"
	       "\"io.debezium.data.Json\",\"version\":1},\"payload\":null}");
	expect(s, &np, NULL);
	expect(off, &nk, "null");
	expect(on, &nk, "{\"schema\":{\"type\":\"string\",\"optional\":true},\"payload\":null}");
	expect(s, &nk, NULL);
	/* no schema and no value: a tombstone for every converter */
	expect(on, NULL, NULL);
	expect(off, &(struct cvalue){ .type = CVALUE_NONE, .is_null = true }, NULL);
	convert_free(off);
	convert_free(on);
	convert_free(s);
}
END_TEST

START_TEST(test_int32_key_and_bytea_payload_write_as_each_converter_does)
{
	struct cvalue k = { .type = CVALUE_INT32, .u.i = 1232 };
	struct cvalue bytea = { .type = CVALUE_BYTES,
				.optional = true,
				.u.s = { "\x00\x01\xfe\xff\x41", 5 } };
	struct convert *off = mk(JSON, CONVERT_KEY, "schemas.enable", "false");
	struct convert *on = mk(JSON, CONVERT_KEY, NULL, NULL);
	struct convert *ba = mk(BYTEARRAY, CONVERT_VALUE, NULL, NULL);
	struct buf out = BUF_INIT;
	bool null;

	expect(off, &k, "1232");
	expect(on, &k, "{\"schema\":{\"type\":\"int32\",\"optional\":false},\"payload\":1232}");
	expect(off, &bytea, "\"AAH+/0E=\"");
	expect(on, &bytea,
	       "{\"schema\":{\"type\":\"bytes\",\"optional\":true},\"payload\":\"AAH+/0E=\"}");
	ck_assert_int_eq(convert_write(ba, &bytea, &out, &null, NULL, 0), 0);
	ck_assert_uint_eq(out.len, 5);
	ck_assert_mem_eq(out.data, "\x00\x01\xfe\xff\x41", 5);
	buf_fini(&out);
	convert_free(off);
	convert_free(on);
	convert_free(ba);
}
END_TEST

START_TEST(test_bytearray_rejects_strings)
{
	struct convert *ba = mk(BYTEARRAY, CONVERT_KEY, NULL, NULL);
	struct buf out = BUF_INIT;
	bool null = false;
	char err[512];

	ck_assert_int_eq(convert_write(ba, &key42, &out, &null, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "ByteArrayConverter"));
	ck_assert_ptr_nonnull(strstr(err, "STRING") ? strstr(err, "STRING") :
						      strstr(err, "string"));
	ck_assert_ptr_nonnull(strstr(err, "JsonConverter"));
	buf_fini(&out);
	convert_free(ba);
}
END_TEST

START_TEST(test_simple_header_converter_writes_the_java_text_of_each_type)
{
	struct convert *h = mk(SIMPLE, CONVERT_HEADER, NULL, NULL);
	struct cvalue uuid = { .type = CVALUE_STRING,
			       .name = "io.debezium.data.Uuid",
			       .version = 1,
			       .u.s = slice_from_str("a1b2c3d4-0000-4000-8000-000000000001") };
	struct cvalue micro = { .type = CVALUE_INT64,
				.name = "io.debezium.time.MicroTimestamp",
				.version = 1,
				.u.i = 1553460779000000LL };
	struct cvalue d = { .type = CVALUE_FLOAT64, .u.f = 1e10 };
	struct cvalue d2 = { .type = CVALUE_FLOAT64, .u.f = 0.1 + 0.2 };
	struct cvalue bin = { .type = CVALUE_BYTES, .u.s = { "\x01\x02\x03\xff", 4 } };
	struct cvalue_param dp[] = { { "scale", "2" }, { "connect.decimal.precision", "10" } };
	struct cvalue dec = { .type = CVALUE_BYTES,
			      .name = CVALUE_DECIMAL_NAME,
			      .version = 1,
			      .params = dp,
			      .nparams = 2,
			      .u.s = { "\x04\xd2", 2 } };
	struct cvalue vsdf[] = {
		{ .type = CVALUE_INT32, .field = "scale", .u.i = 2 },
		{ .type = CVALUE_BYTES, .field = "value", .u.s = { "\x04\xd2", 2 } }
	};
	struct cvalue vsd = { .type = CVALUE_STRUCT, .u.fields = { vsdf, 2 } };
	struct cvalue nul = { .type = CVALUE_STRING, .optional = true, .is_null = true };

	expect(h, &uuid, "a1b2c3d4-0000-4000-8000-000000000001");
	expect(h, &micro, "1553460779000000");
	expect(h, &d, "1.0E10");
	expect(h, &d2, "0.30000000000000004");
	expect(h, &bin, "AQID/w==");
	expect(h, &dec, "12.34");
	expect(h, &vsd, "{\"scale\":2,\"value\":\"BNI=\"}");
	expect(h, &(struct cvalue){ .type = CVALUE_BOOLEAN, .u.b = true }, "true");
	expect(h, &(struct cvalue){ .type = CVALUE_STRING, .u.s = { "a\"b", 3 } }, "a\"b");
	expect(h, &nul, NULL);
	convert_free(h);
}
END_TEST

/*
 * Connect's Date, Time and Timestamp are java.util.Date values: Values picks the text by the
 * value (before 1970-01-02 a time of day, a midnight a date), Struct.toString() prints
 * Date.toString(), Julian before 1582-10-15 (the compat suite's ob_connect_times).
 */
START_TEST(test_connect_dates_write_as_java_writes_a_java_util_date)
{
	struct convert *h = mk(SIMPLE, CONVERT_HEADER, NULL, NULL);
	struct convert *s = mk(STRING, CONVERT_VALUE, NULL, NULL);
	struct cvalue date = { .type = CVALUE_INT32, .name = CVALUE_DATE_NAME, .version = 1 };
	struct cvalue time = { .type = CVALUE_INT32, .name = CVALUE_TIME_NAME, .version = 1 };
	struct cvalue ts = { .type = CVALUE_INT64, .name = CVALUE_TIMESTAMP_NAME, .version = 1 };
	struct cvalue f[] = { date, ts };
	struct cvalue st = { .type = CVALUE_STRUCT, .u.fields = { f, 2 } };

	date.u.i = 19782;
	expect(h, &date, "2024-02-29");
	date.u.i = 0;
	expect(h, &date, "00:00:00.000Z");
	date.u.i = 2932897;
	expect(h, &date, "10000-01-01");
	time.u.i = 45296789;
	expect(h, &time, "12:34:56.789Z");
	time.u.i = 86400000;
	expect(h, &time, "1970-01-02");
	ts.u.i = INT64_C(1704164645123);
	expect(h, &ts, "2024-01-02T03:04:05.123Z");
	ts.u.i = INT64_C(1704153600000);
	expect(h, &ts, "2024-01-02");
	ts.u.i = -1;
	expect(h, &ts, "23:59:59.999Z");
	ts.u.i = INT64_C(9223372036825200);
	expect(h, &ts, "294247-01-10T04:00:25.200Z");
	f[0].field = "d";
	f[0].u.i = -141438; /* 1582-10-04, Julian 1582-09-24 */
	f[1].field = "ts";
	f[1].u.i = INT64_C(-62104060800001); /* 0001-12-31T23:59:59.999 */
	expect(s, &st, "Struct{d=Mon Sep 24 00:00:00 UTC 1582,ts=Mon Jan 02 23:59:59 UTC 2}");
	f[0].u.i = -141427; /* 1582-10-15 */
	f[1].u.i = INT64_C(253402300800100);
	expect(s, &st, "Struct{d=Fri Oct 15 00:00:00 UTC 1582,ts=Sat Jan 01 00:00:00 UTC 10000}");
	convert_free(h);
	convert_free(s);
}
END_TEST

/* A map of strings (hstore.handling.mode=map) as each converter writes it. */
START_TEST(test_maps_write_as_each_converter_does)
{
	struct convert *h = mk(SIMPLE, CONVERT_HEADER, NULL, NULL);
	struct convert *s = mk(STRING, CONVERT_VALUE, NULL, NULL);
	struct convert *j = mk(JSON, CONVERT_VALUE, "schemas.enable", "true");
	struct cvalue keys = { .type = CVALUE_STRING };
	struct cvalue values = { .type = CVALUE_STRING, .optional = true };
	struct cvalue kv[] = { { .type = CVALUE_STRING, .u.s = { "a\"", 2 } },
			       { .type = CVALUE_STRING, .optional = true, .u.s = { "1", 1 } },
			       { .type = CVALUE_STRING, .u.s = { "b", 1 } },
			       { .type = CVALUE_STRING, .optional = true, .is_null = true } };
	struct cvalue map = { .type = CVALUE_MAP,
			      .optional = true,
			      .u.map = { &keys, &values, kv, 2 } };

	expect(h, &map, "{\"a\\\"\":\"1\",\"b\":null}");
	expect(s, &map, "{a\"=1, b=null}");
	expect(j, &map,
	       "{\"schema\":{\"type\":\"map\",\"keys\":{\"type\":\"string\",\"optional\":false},"
	       "\"values\":{\"type\":\"string\",\"optional\":true},\"optional\":true},"
	       "\"payload\":{\"a\\\"\":\"1\",\"b\":null}}");
	convert_free(h);
	convert_free(s);
	convert_free(j);
}
END_TEST

START_TEST(test_json_header_converter_writes_schemas_and_null_takes_the_default)
{
	struct convert *h = mk(JSON, CONVERT_HEADER, NULL, NULL);
	struct convert *hs = mk(JSON, CONVERT_HEADER, "schemas.enable", "false");
	struct cvalue uuid = { .type = CVALUE_STRING,
			       .name = "io.debezium.data.Uuid",
			       .version = 1,
			       .u.s = slice_from_str("a1b2c3d4-0000-4000-8000-000000000001") };
	struct cvalue dflt = { .type = CVALUE_STRING, .u.s = { "dflt", 4 } };
	struct cvalue withdef = {
		.type = CVALUE_STRING, .optional = true, .is_null = true, .def = &dflt
	};
	struct convert *nodef = mk(JSON, CONVERT_VALUE, "replace.null.with.default", "false");

	expect(h, &uuid,
	       "{\"schema\":{\"type\":\"string\",\"optional\":false,\"name\":"
	       "\"io.debezium.data.Uuid\",\"version\":1},\"payload\":"
	       "\"a1b2c3d4-0000-4000-8000-000000000001\"}");
	expect(hs, &uuid, "\"a1b2c3d4-0000-4000-8000-000000000001\"");
	expect(h, &withdef,
	       "{\"schema\":{\"type\":\"string\",\"optional\":true,\"default\":"
	       "\"dflt\"},\"payload\":\"dflt\"}");
	expect(nodef, &withdef,
	       "{\"schema\":{\"type\":\"string\",\"optional\":true,\"default\":"
	       "\"dflt\"},\"payload\":null}");
	convert_free(h);
	convert_free(hs);
	convert_free(nodef);
}
END_TEST

START_TEST(test_decimals_structs_and_envelopes_write_as_jsonconverter_does)
{
	struct cvalue_param dp[] = { { "scale", "8" }, { "connect.decimal.precision", "10" } };
	struct cvalue dec = { .type = CVALUE_BYTES,
			      .optional = true,
			      .name = CVALUE_DECIMAL_NAME,
			      .version = 1,
			      .params = dp,
			      .nparams = 2,
			      .u.s = { "\x01", 1 } };
	struct convert *num = mk(JSON, CONVERT_VALUE, "decimal.format", "numeric");
	struct convert *on = mk(JSON, CONVERT_VALUE, NULL, NULL);
	struct convert *off = mk(JSON, CONVERT_VALUE, "schemas.enable", "false");
	struct convert *s = mk(STRING, CONVERT_VALUE, NULL, NULL);
	struct cvalue f[2] = { payload,
			       { .type = CVALUE_STRING,
				 .field = "eventType",
				 .u.s = slice_from_str("OrderCreated") } };
	struct cvalue env = { .type = CVALUE_STRUCT,
			      .name = "dbserver1.public.outbox.order.Value",
			      .u.fields = { f, 2 } };
	struct buf out = BUF_INIT;

	f[0].field = "payload";
	expect(num, &dec,
	       "{\"schema\":{\"type\":\"bytes\",\"optional\":true,\"name\":"
	       "\"org.apache.kafka.connect.data.Decimal\",\"version\":1,\"parameters\":"
	       "{\"scale\":\"8\",\"connect.decimal.precision\":\"10\"}},\"payload\":1E-8}");
	expect(on, &dec,
	       "{\"schema\":{\"type\":\"bytes\",\"optional\":true,\"name\":"
	       "\"org.apache.kafka.connect.data.Decimal\",\"version\":1,\"parameters\":"
	       "{\"scale\":\"8\",\"connect.decimal.precision\":\"10\"}},\"payload\":\"AQ==\"}");
	convert_decimal_string((const uint8_t *)"\x49\x8d\x58\x80", 4, 8, &out);
	ck_assert_str_eq(buf_cstr(&out), "12.34000000");
	buf_reset(&out);
	convert_decimal_string((const uint8_t *)"\xfd\x05\x0f\x80", 4, 8, &out);
	ck_assert_str_eq(buf_cstr(&out), "-0.50000000");
	buf_reset(&out);
	convert_decimal_string((const uint8_t *)"\x00", 1, 8, &out);
	ck_assert_str_eq(buf_cstr(&out), "0E-8");
	buf_fini(&out);
	expect(off, &env, "{\"payload\":\"{\\\"x\\\": 1}\",\"eventType\":\"OrderCreated\"}");
	expect(on, &env,
	       "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"string\",\"optional\":true,"
	       "\"name\":\"io.debezium.data.Json\",\"version\":1,\"field\":\"payload\"},{\"type\":"
	       "\"string\",\"optional\":false,\"field\":\"eventType\"}],\"optional\":false,\"name\":"
	       "\"dbserver1.public.outbox.order.Value\"},\"payload\":{\"payload\":\"{\\\"x\\\": 1}\","
	       "\"eventType\":\"OrderCreated\"}}");
	expect(s, &env, "Struct{payload={\"x\": 1},eventType=OrderCreated}");
	convert_free(num);
	convert_free(on);
	convert_free(off);
	convert_free(s);
}
END_TEST

START_TEST(test_required_null_fails)
{
	struct convert *on = mk(JSON, CONVERT_VALUE, NULL, NULL);
	struct cvalue req = { .type = CVALUE_STRING, .is_null = true };
	struct buf out = BUF_INIT;
	bool null;
	char err[512];

	ck_assert_int_eq(convert_write(on, &req, &out, &null, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "required"));
	buf_fini(&out);
	convert_free(on);
}
END_TEST

START_TEST(test_unsupported_converters_and_misspelt_options_are_refused)
{
	struct convert *c = NULL;
	struct kv o = KV_INIT;
	char err[512];

	ck_assert_int_eq(convert_new("io.confluent.connect.avro.AvroConverter", NULL, CONVERT_VALUE,
				     &c, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "AvroConverter"));
	ck_assert_ptr_nonnull(strstr(err, JSON));
	ck_assert_int_eq(convert_new(SIMPLE, NULL, CONVERT_VALUE, &c, err, sizeof(err)), -EINVAL);
	kv_set(&o, "schemas.enabled", "false", "f:3");
	ck_assert_int_eq(convert_new(JSON, &o, CONVERT_VALUE, &c, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "schemas.enabled"));
	ck_assert_ptr_nonnull(strstr(err, "f:3"));
	kv_fini(&o);
	kv_set(&o, "schemas.enable", "yes", NULL);
	ck_assert_int_eq(convert_new(JSON, &o, CONVERT_VALUE, &c, err, sizeof(err)), -EINVAL);
	kv_fini(&o);
	kv_set(&o, "decimal.format", "HEX", NULL);
	ck_assert_int_eq(convert_new(JSON, &o, CONVERT_VALUE, &c, err, sizeof(err)), -EINVAL);
	kv_fini(&o);
	kv_set(&o, "converter.encoding", "ISO-8859-1", NULL);
	ck_assert_int_eq(convert_new(STRING, &o, CONVERT_VALUE, &c, err, sizeof(err)), -EINVAL);
	kv_fini(&o);
	ck_assert_ptr_null(c);
}
END_TEST

START_TEST(test_arrays_and_half_expanded_strings_write_as_connect_does)
{
	struct convert *on = mk(JSON, CONVERT_VALUE, NULL, NULL);
	struct convert *off = mk(JSON, CONVERT_VALUE, "schemas.enable", "false");
	struct convert *str = mk(STRING, CONVERT_VALUE, NULL, NULL);
	struct convert *ba = mk(BYTEARRAY, CONVERT_VALUE, NULL, NULL);
	const struct cvalue item = { .type = CVALUE_INT32, .optional = true, .is_null = true };
	const struct cvalue elems[] = {
		{ .type = CVALUE_INT32, .optional = true, .u.i = 1 },
		{ .type = CVALUE_INT32, .optional = true, .is_null = true },
	};
	const struct cvalue arr = { .type = CVALUE_ARRAY,
				    .optional = true,
				    .u.array = { &item, elems, 2 } };
	const struct cvalue half = {
		.type = CVALUE_ARRAY, .optional = true, .java_string = true, .u.s = { "[1,2]", 5 }
	};
	const struct cvalue schemaless = { .type = CVALUE_NONE,
					   .java_string = true,
					   .u.s = { "[]", 2 } };
	struct buf out = BUF_INIT;
	bool null;
	char err[512];

	expect(on, &arr,
	       "{\"schema\":{\"type\":\"array\",\"items\":{\"type\":\"int32\",\"optional\":"
	       "true},\"optional\":true},\"payload\":[1,null]}");
	expect(off, &arr, "[1,null]");
	expect(str, &arr, "[1, null]");
	ck_assert_int_eq(convert_schema_json(&arr, &out), 0);
	ck_assert_str_eq(buf_cstr(&out), "{\"type\":\"array\",\"items\":{\"type\":\"int32\","
					 "\"optional\":true},\"optional\":true}");
	/* Debezium 3.6.1 leaves a String under an ARRAY/STRUCT schema: JSON fails, String writes */
	ck_assert_int_eq(convert_write(on, &half, &out, &null, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "Invalid type for array"));
	ck_assert_int_eq(convert_write(ba, &half, &out, &null, err, sizeof(err)), -EINVAL);
	expect(str, &half, "[1,2]");
	/* the string holds the union: no items to write as a schema (found by fuzz_expand) */
	buf_reset(&out);
	ck_assert_int_eq(convert_schema_json(&half, &out), -EINVAL);
	/* ... and a String without a schema */
	expect(on, &schemaless, "{\"schema\":null,\"payload\":\"[]\"}");
	expect(off, &schemaless, "\"[]\"");
	buf_fini(&out);
	convert_free(on);
	convert_free(off);
	convert_free(str);
	convert_free(ba);
}
END_TEST

START_TEST(test_binary_data_converter_writes_bytes_raw_and_delegates_the_rest)
{
	struct kv o = KV_INIT;
	struct convert *c = NULL, *bare;
	const struct cvalue bytes = { .type = CVALUE_BYTES,
				      .optional = true,
				      .u.s = { "\x00\x01\xfe", 3 } };
	const struct cvalue nbytes = { .type = CVALUE_BYTES, .optional = true, .is_null = true };
	struct buf out = BUF_INIT;
	bool null;
	char err[512];

	kv_set(&o, "delegate.converter.type", STRING, NULL);
	kv_set(&o, "converter.type", "header", NULL);
	ck_assert_msg(convert_new("io.debezium.converters.BinaryDataConverter", &o, CONVERT_HEADER,
				  &c, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_int_eq(convert_write(c, &bytes, &out, &null, err, sizeof(err)), 0);
	ck_assert(!null);
	ck_assert_uint_eq(out.len, 3);
	ck_assert_mem_eq(out.data, "\x00\x01\xfe", 3);
	expect(c, &nbytes, NULL);
	expect(c, &key42, "42");
	expect(c, &payload, "{\"x\": 1}");
	convert_free(c);
	/* delegate options under delegate.converter.type. */
	kv_set(&o, "delegate.converter.type", JSON, NULL);
	kv_set(&o, "delegate.converter.type.schemas.enable", "false", NULL);
	ck_assert_int_eq(convert_new("io.debezium.converters.BinaryDataConverter", &o, CONVERT_KEY,
				     &c, err, sizeof(err)),
			 0);
	expect(c, &key42, "\"42\"");
	convert_free(c);
	kv_set(&o, "delegate.converter.type.schemas.enable", "sometimes", NULL);
	ck_assert_int_eq(convert_new("io.debezium.converters.BinaryDataConverter", &o, CONVERT_KEY,
				     &c, err, sizeof(err)),
			 -EINVAL);
	kv_set(&o, "delegate.converter.type", "io.debezium.converters.BinaryDataConverter", NULL);
	kv_del(&o, "delegate.converter.type.schemas.enable");
	ck_assert_int_eq(convert_new("io.debezium.converters.BinaryDataConverter", &o, CONVERT_KEY,
				     &c, err, sizeof(err)),
			 -EINVAL);
	kv_fini(&o);
	/* no delegate: bytes only */
	bare = mk("io.debezium.converters.BinaryDataConverter", CONVERT_VALUE, NULL, NULL);
	ck_assert_int_eq(convert_write(bare, &bytes, &out, &null, err, sizeof(err)), 0);
	ck_assert_mem_eq(out.data, "\x00\x01\xfe", 3);
	ck_assert_int_eq(convert_write(bare, &key42, &out, &null, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "delegate.converter.type"));
	convert_free(bare);
	buf_fini(&out);
}
END_TEST

/* The registry answers exactly what convert_new() does, for every class and role. */
START_TEST(test_registry_roles_match_convert_new)
{
	static const char *const names[] = { JSON,
					     STRING,
					     BYTEARRAY,
					     SIMPLE,
					     "io.debezium.converters.BinaryDataConverter",
					     "io.confluent.connect.avro.AvroConverter" };
	char err[512];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (int k = CONVERT_KEY; k <= CONVERT_HEADER; k++) {
			enum convert_role role = (enum convert_role)k;
			struct convert *c = NULL;
			int rc = convert_new(names[i], NULL, role, &c, err, sizeof(err));

			ck_assert_msg((rc == 0) == convert_class_supports(names[i], role),
				      "%s as %s", names[i], convert_role_name(role));
			convert_free(c);
		}
	}
	/* headers: SimpleHeaderConverter, JsonConverter and BinaryDataConverter only */
	ck_assert(!convert_class_supports(STRING, CONVERT_HEADER));
	ck_assert(!convert_class_supports(BYTEARRAY, CONVERT_HEADER));
	ck_assert(convert_class_supports(SIMPLE, CONVERT_HEADER));
	ck_assert(!convert_class_supports(SIMPLE, CONVERT_KEY));
	ck_assert(!convert_class_supports(NULL, CONVERT_VALUE));
}
END_TEST

/* Each class's options, as its ConfigDef defines them; converter.type belongs to all. */
START_TEST(test_registry_options_per_class)
{
	ck_assert(convert_class_has_option(JSON, "schemas.enable"));
	ck_assert(convert_class_has_option(JSON, "decimal.format"));
	ck_assert(!convert_class_has_option(JSON, "converter.encoding"));
	ck_assert(convert_class_has_option(STRING, "converter.encoding"));
	ck_assert(!convert_class_has_option(STRING, "schemas.enable"));
	ck_assert(!convert_class_has_option(STRING, "encoding"));
	ck_assert(convert_class_has_option(BYTEARRAY, "converter.type"));
	ck_assert(!convert_class_has_option(SIMPLE, "schemas.enable"));
	ck_assert(convert_class_has_option("io.debezium.converters.BinaryDataConverter",
					   "delegate.converter.type"));
	ck_assert(convert_class_has_option("io.debezium.converters.BinaryDataConverter",
					   "delegate.converter.type.schemas.enable"));
	ck_assert(!convert_class_has_option("io.debezium.converters.BinaryDataConverter",
					    "delegate.converter.typo"));
	ck_assert(!convert_class_has_option("io.confluent.connect.avro.AvroConverter",
					    "converter.type"));
}
END_TEST

/* The supported classes of a role, in one text for messages: simple or Java names. */
START_TEST(test_registry_lists_classes_per_role)
{
	struct buf b = BUF_INIT;

	convert_class_list(CONVERT_VALUE, false, "and", &b);
	ck_assert_str_eq(buf_cstr(&b), "JsonConverter, StringConverter, ByteArrayConverter and "
				       "BinaryDataConverter");
	buf_reset(&b);
	convert_class_list(CONVERT_HEADER, true, "or", &b);
	ck_assert_str_eq(buf_cstr(&b),
			 SIMPLE ", " JSON " or io.debezium.converters.BinaryDataConverter");
	buf_fini(&b);
}
END_TEST

static Suite *
convert_suite(void)
{
	Suite *s = suite_create("convert");
	TCase *tc = tcase_create("worked-example");

	tcase_add_test(tc, test_worked_example_json_schemas_off);
	tcase_add_test(tc, test_worked_example_json_schemas_on);
	tcase_add_test(tc, test_worked_example_string_converter);
	tcase_add_test(tc, test_null_payload_and_key_are_what_each_converter_writes_for_null);
	tcase_add_test(tc, test_int32_key_and_bytea_payload_write_as_each_converter_does);
	tcase_add_test(tc, test_bytearray_rejects_strings);
	suite_add_tcase(s, tc);
	tc = tcase_create("headers");
	tcase_add_test(tc, test_simple_header_converter_writes_the_java_text_of_each_type);
	tcase_add_test(tc, test_connect_dates_write_as_java_writes_a_java_util_date);
	tcase_add_test(tc, test_maps_write_as_each_converter_does);
	tcase_add_test(tc, test_json_header_converter_writes_schemas_and_null_takes_the_default);
	suite_add_tcase(s, tc);
	tc = tcase_create("logical-types");
	tcase_add_test(tc, test_decimals_structs_and_envelopes_write_as_jsonconverter_does);
	tcase_add_test(tc, test_required_null_fails);
	tcase_add_test(tc, test_unsupported_converters_and_misspelt_options_are_refused);
	tcase_add_test(tc, test_arrays_and_half_expanded_strings_write_as_connect_does);
	tcase_add_test(tc, test_binary_data_converter_writes_bytes_raw_and_delegates_the_rest);
	suite_add_tcase(s, tc);
	tc = tcase_create("registry");
	tcase_add_test(tc, test_registry_roles_match_convert_new);
	tcase_add_test(tc, test_registry_options_per_class);
	tcase_add_test(tc, test_registry_lists_classes_per_role);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(convert_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
