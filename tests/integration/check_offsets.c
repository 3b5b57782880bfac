/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The offsets topic read as exactly-once needs it (src/kafka/offsets_reader.c), on the stack's
 * real broker, which writes the transaction markers librdkafka's mock does not: a position
 * committed behind another producer's open transaction is waited for, not taken for an older
 * one (a read only to the last stable offset would return the older); once that transaction
 * ends, the newest committed value; a value of an aborted transaction is never returned.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "outboxd/kafka/offsets_reader.h"

static const char KEY[] = "[\"outbox-connector\",{\"server\":\"app\"}]";

static rd_kafka_t *
txn_producer(const char *id)
{
	rd_kafka_conf_t *conf = itest_kafka_conf();
	rd_kafka_error_t *e;
	rd_kafka_t *rk;
	char err[512];

	ck_assert_int_eq(rd_kafka_conf_set(conf, "transactional.id", id, err, sizeof(err)),
			 RD_KAFKA_CONF_OK);
	ck_assert_int_eq(rd_kafka_conf_set(conf, "partitioner", "murmur2_random", err, sizeof(err)),
			 RD_KAFKA_CONF_OK);
	rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
	ck_assert_msg(rk != NULL, "%s", err);
	e = rd_kafka_init_transactions(rk, 30000);
	ck_assert_msg(!e, "init_transactions: %s", e ? rd_kafka_error_string(e) : "");
	return rk;
}

/* One record in a transaction of its own, then commit, abort, or leave it open (flushed). */
enum end { COMMIT, ABORT, OPEN };

static void
txn_put(rd_kafka_t *rk, const char *topic, const char *key, const char *value, enum end end)
{
	rd_kafka_error_t *e = rd_kafka_begin_transaction(rk);

	ck_assert_msg(!e, "begin: %s", e ? rd_kafka_error_string(e) : "");
	ck_assert_int_eq(
		rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY(key, strlen(key)),
				  RD_KAFKA_V_VALUE((void *)value, strlen(value)),
				  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
		RD_KAFKA_RESP_ERR_NO_ERROR);
	if (end == OPEN) {
		ck_assert_int_eq(rd_kafka_flush(rk, 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
		return;
	}
	e = end == COMMIT ? rd_kafka_commit_transaction(rk, 30000) :
			    rd_kafka_abort_transaction(rk, 30000);
	ck_assert_msg(!e, "end: %s", e ? rd_kafka_error_string(e) : "");
}

static int
read_last(const char *topic, int timeout_ms, struct buf *v, bool *found, char *err, size_t len)
{
	struct kv settings = KV_INIT;
	int rc;

	kv_set(&settings, "bootstrap.servers", itest_env("OUTBOXD_TEST_KAFKA_BOOTSTRAP"), NULL);
	rc = offsets_reader_last(&settings, topic, KEY, strlen(KEY), timeout_ms, v, found, err,
				 len);
	kv_fini(&settings);
	return rc;
}

START_TEST(test_the_newest_committed_position_past_an_open_transaction)
{
	char *topic = itest_unique("eos_offsets"), *ida = itest_unique("eos_a"),
	     *idb = itest_unique("eos_b");
	rd_kafka_t *a, *b;
	rd_kafka_error_t *e;
	struct buf v = BUF_INIT;
	char err[512] = "";
	bool found;

	itest_topic_config(topic, true, "cleanup.policy", "compact"); /* one partition */
	a = txn_producer(ida);
	b = txn_producer(idb);
	txn_put(a, topic, KEY, "{\"lsn\":1}", COMMIT);
	ck_assert_msg(read_last(topic, 30000, &v, &found, err, sizeof(err)) == 0, "%s", err);
	ck_assert(found);
	ck_assert_str_eq(buf_cstr(&v), "{\"lsn\":1}");
	/* another producer's transaction stays open; the newest position commits after it */
	txn_put(b, topic, "[\"other\",{\"server\":\"x\"}]", "{\"lsn\":500}", OPEN);
	txn_put(a, topic, KEY, "{\"lsn\":2}", COMMIT);
	ck_assert_int_eq(read_last(topic, 3000, &v, &found, err, sizeof(err)), -ETIMEDOUT);
	ck_assert_msg(strstr(err, "transaction of another producer"), "%s", err);
	e = rd_kafka_abort_transaction(b, 30000);
	ck_assert_msg(!e, "abort: %s", e ? rd_kafka_error_string(e) : "");
	ck_assert_msg(read_last(topic, 30000, &v, &found, err, sizeof(err)) == 0, "%s", err);
	ck_assert(found);
	ck_assert_str_eq(buf_cstr(&v), "{\"lsn\":2}");
	/* an aborted position is never read */
	txn_put(a, topic, KEY, "{\"lsn\":3}", ABORT);
	ck_assert_msg(read_last(topic, 30000, &v, &found, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(buf_cstr(&v), "{\"lsn\":2}");
	rd_kafka_destroy(a);
	rd_kafka_destroy(b);
	buf_fini(&v);
	free(topic);
	free(ida);
	free(idb);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("offsets");
	TCase *tc = tcase_create("offsets-topic");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_the_newest_committed_position_past_an_open_transaction);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
