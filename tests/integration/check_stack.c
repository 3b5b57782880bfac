/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Proves the test stack is real: PostgreSQL answers, authenticates with passwords and decodes
 * logically; the Kafka broker takes acks=all writes and gives them back.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "outboxd/util/buf.h"

START_TEST(test_pg_stores_and_returns_utf8_text_and_null)
{
	PGconn *c = itest_pg();
	PGresult *r;

	PQclear(itest_sql(c, "CREATE TEMP TABLE t (id int PRIMARY KEY, v text)"));
	PQclear(itest_sql(c, "INSERT INTO t VALUES (1, 'plain'), (2, 'µ→😀'), (3, NULL)"));
	r = itest_sql(c, "SELECT id, v FROM t ORDER BY id");
	ck_assert_int_eq(PQntuples(r), 3);
	ck_assert_str_eq(PQgetvalue(r, 1, 1), "µ→😀");
	ck_assert_int_eq(PQgetisnull(r, 2, 1), 1);
	PQclear(r);
	PQfinish(c);
}
END_TEST

START_TEST(test_pg_settings_for_replication)
{
	PGconn *c = itest_pg();
	PGresult *r = itest_sql(c, "SELECT current_setting('wal_level'), "
				   "current_setting('wal_sender_timeout'), "
				   "current_setting('server_version_num')::int / 10000");

	ck_assert_str_eq(PQgetvalue(r, 0, 0), "logical");
	ck_assert_str_eq(PQgetvalue(r, 0, 1), "10s");
	/* the stack runs the major it was asked for (scripts/stack --pg) */
	ck_assert_msg(getenv("OUTBOXD_TEST_PG_MAJOR") != NULL,
		      "OUTBOXD_TEST_PG_MAJOR is not set: start the stack with scripts/stack up");
	ck_assert_str_eq(PQgetvalue(r, 0, 2), getenv("OUTBOXD_TEST_PG_MAJOR"));
	PQclear(r);
	PQfinish(c);
}
END_TEST

START_TEST(test_pg_wrong_password_refused)
{
	struct buf ci = BUF_INIT;
	PGconn *c;

	buf_add_fmt(&ci, "host=%s port=%s user=postgres password=wrong dbname=postgres",
		    itest_env("OUTBOXD_TEST_PG_HOST"), itest_env("OUTBOXD_TEST_PG_PORT"));
	c = PQconnectdb(buf_cstr(&ci));
	ck_assert_int_eq(PQstatus(c), CONNECTION_BAD);
	ck_assert_ptr_nonnull(strstr(PQerrorMessage(c), "password authentication failed"));
	PQfinish(c);
	buf_fini(&ci);
}
END_TEST

START_TEST(test_pg_logical_decoding)
{
	PGconn *c = itest_pg();
	char *slot = itest_unique("stack_slot");
	struct buf q = BUF_INIT;
	PGresult *r;

	PQclear(itest_sql(
		c, "CREATE TABLE IF NOT EXISTS stack_probe (id serial PRIMARY KEY, v text)"));
	buf_add_fmt(&q, "SELECT pg_create_logical_replication_slot('%s', 'test_decoding')", slot);
	PQclear(itest_sql(c, buf_cstr(&q)));
	PQclear(itest_sql(c, "INSERT INTO stack_probe (v) VALUES ('decoded')"));
	buf_reset(&q);
	buf_add_fmt(&q,
		    "SELECT data FROM pg_logical_slot_get_changes('%s', NULL, NULL) "
		    "WHERE data LIKE 'table public.stack_probe: INSERT:%%'",
		    slot);
	r = itest_sql(c, buf_cstr(&q));
	ck_assert_int_eq(PQntuples(r), 1);
	ck_assert_ptr_nonnull(strstr(PQgetvalue(r, 0, 0), "v[text]:'decoded'"));
	PQclear(r);
	buf_reset(&q);
	buf_add_fmt(&q, "SELECT pg_drop_replication_slot('%s')", slot);
	PQclear(itest_sql(c, buf_cstr(&q)));
	buf_fini(&q);
	free(slot);
	PQfinish(c);
}
END_TEST

struct dr_count {
	int ok;
	int failed;
};

static void
on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct dr_count *dr = opaque;

	if (m->err) {
		dr->failed++;
	} else {
		dr->ok++;
	}
}

enum { N_MESSAGES = 300 };

START_TEST(test_kafka_roundtrip_acks_all)
{
	rd_kafka_conf_t *conf = itest_kafka_conf();
	struct dr_count dr = { 0, 0 };
	char err[512], key[32], val[64];
	char *topic = itest_unique("stack_topic");
	struct itest_record *recs;
	int part_of_key[10];
	size_t n;
	rd_kafka_t *rk;

	ck_assert_int_eq(rd_kafka_conf_set(conf, "acks", "all", err, sizeof(err)),
			 RD_KAFKA_CONF_OK);
	ck_assert_int_eq(rd_kafka_conf_set(conf, "enable.idempotence", "true", err, sizeof(err)),
			 RD_KAFKA_CONF_OK);
	rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	rd_kafka_conf_set_opaque(conf, &dr);
	rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
	ck_assert_msg(rk != NULL, "producer: %s", err);
	for (int i = 0; i < N_MESSAGES; i++) {
		snprintf(key, sizeof(key), "key-%d", i % 10);
		snprintf(val, sizeof(val), "{\"seq\":%d}", i);
		ck_assert_int_eq(
			rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic),
					  RD_KAFKA_V_KEY(key, strlen(key)),
					  RD_KAFKA_V_VALUE(val, strlen(val)),
					  RD_KAFKA_V_HEADER("id", key, (ssize_t)strlen(key)),
					  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
			RD_KAFKA_RESP_ERR_NO_ERROR);
		rd_kafka_poll(rk, 0);
	}
	ck_assert_int_eq(rd_kafka_flush(rk, 60000), RD_KAFKA_RESP_ERR_NO_ERROR);
	rd_kafka_destroy(rk);
	ck_assert_int_eq(dr.failed, 0);
	ck_assert_int_eq(dr.ok, N_MESSAGES);

	n = itest_consume_all(topic, N_MESSAGES, 60000, &recs);
	ck_assert_uint_eq(n, N_MESSAGES);
	for (int k = 0; k < 10; k++) {
		part_of_key[k] = -1;
	}
	/* Auto-created with the broker default of 3 partitions; one key, one partition, in order. */
	for (size_t i = 0; i < n; i++) {
		int k = atoi(recs[i].key + 4);
		const void *hv;
		size_t hlen;

		ck_assert_int_lt(recs[i].partition, 3);
		if (part_of_key[k] < 0) {
			part_of_key[k] = recs[i].partition;
		}
		ck_assert_int_eq(recs[i].partition, part_of_key[k]);
		ck_assert_ptr_nonnull(recs[i].headers);
		ck_assert_int_eq(rd_kafka_header_get_last(recs[i].headers, "id", &hv, &hlen), 0);
		ck_assert_mem_eq(hv, recs[i].key, hlen);
	}
	for (size_t i = 1; i < n; i++) {
		if (recs[i].partition == recs[i - 1].partition) {
			int a = atoi(strchr(recs[i - 1].value, ':') + 1);
			int b = atoi(strchr(recs[i].value, ':') + 1);

			ck_assert_int_lt(a, b);
		}
	}
	itest_records_free(recs, n);
	free(topic);
}
END_TEST

static Suite *
stack_suite(void)
{
	Suite *s = suite_create("stack");
	TCase *pg = tcase_create("postgresql");
	TCase *kafka = tcase_create("kafka");

	tcase_add_test(pg, test_pg_stores_and_returns_utf8_text_and_null);
	tcase_add_test(pg, test_pg_settings_for_replication);
	tcase_add_test(pg, test_pg_wrong_password_refused);
	tcase_add_test(pg, test_pg_logical_decoding);
	tcase_add_test(kafka, test_kafka_roundtrip_acks_all);
	suite_add_tcase(s, pg);
	suite_add_tcase(s, kafka);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(stack_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
