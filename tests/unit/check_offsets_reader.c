/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The newest value of a key in a compacted topic (offsets_reader.c), on librdkafka's mock
 * cluster: the partition the Java client's partitioner picks, the newest of several values,
 * other keys left alone, a tombstone, a missing key or topic. (The mock writes no transaction
 * markers, so its last stable offset is its high watermark: reading past another producer's
 * open transaction is proven on the real broker.)
 */
#include <check.h>
#include <errno.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/kafka/offsets_reader.h"

struct fx {
	rd_kafka_t *owner, *writer;
	rd_kafka_mock_cluster_t *mc;
	struct kv settings;
};

static struct fx *
fx_new(void)
{
	struct fx *f = calloc(1, sizeof(*f));
	rd_kafka_conf_t *conf = rd_kafka_conf_new(), *wconf = rd_kafka_conf_new();
	char err[512];

	ck_assert_ptr_nonnull(f);
	rd_kafka_conf_set(conf, "log_level", "0", err, sizeof(err));
	f->owner = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
	ck_assert_msg(f->owner != NULL, "%s", err);
	f->mc = rd_kafka_mock_cluster_new(f->owner, 3);
	ck_assert_int_eq(rd_kafka_mock_topic_create(f->mc, "connect-offsets", 25, 3), 0);
	/* a writer as Connect's: the Java client's partitioner */
	rd_kafka_conf_set(wconf, "bootstrap.servers", rd_kafka_mock_cluster_bootstraps(f->mc), err,
			  sizeof(err));
	rd_kafka_conf_set(wconf, "partitioner", "murmur2_random", err, sizeof(err));
	f->writer = rd_kafka_new(RD_KAFKA_PRODUCER, wconf, err, sizeof(err));
	ck_assert_msg(f->writer != NULL, "%s", err);
	f->settings = KV_INIT;
	kv_set(&f->settings, "bootstrap.servers", rd_kafka_mock_cluster_bootstraps(f->mc), NULL);
	/* producer settings a consumer must not be given */
	kv_set(&f->settings, "acks", "all", NULL);
	kv_set(&f->settings, "enable.idempotence", "true", NULL);
	return f;
}

static void
fx_free(struct fx *f)
{
	rd_kafka_destroy(f->writer);
	rd_kafka_mock_cluster_destroy(f->mc);
	rd_kafka_destroy(f->owner);
	kv_fini(&f->settings);
	free(f);
}

static void
put(struct fx *f, const char *key, const char *value)
{
	ck_assert_int_eq(
		rd_kafka_producev(f->writer, RD_KAFKA_V_TOPIC("connect-offsets"),
				  RD_KAFKA_V_KEY(key, strlen(key)),
				  RD_KAFKA_V_VALUE((void *)value, value ? strlen(value) : 0),
				  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
		RD_KAFKA_RESP_ERR_NO_ERROR);
	ck_assert_int_eq(rd_kafka_flush(f->writer, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
}

static bool
last(struct fx *f, const char *topic, const char *key, struct buf *v)
{
	char err[512] = "";
	bool found = true;

	ck_assert_msg(offsets_reader_last(&f->settings, topic, key, strlen(key), 20000, v, &found,
					  err, sizeof(err)) == 0,
		      "%s", err);
	return found;
}

static const char K1[] = "[\"inventory-connector\",{\"server\":\"dbserver1\"}]";
static const char K2[] = "[\"other-connector\",{\"server\":\"dbserver1\"}]";

START_TEST(test_the_newest_value_of_the_key)
{
	struct fx *f = fx_new();
	struct buf v = BUF_INIT;

	put(f, K1, "{\"lsn\":1}");
	put(f, K2, "{\"lsn\":99}");
	put(f, K1, "{\"lsn\":2}");
	put(f, K1, "{\"lsn\":3}");
	ck_assert(last(f, "connect-offsets", K1, &v));
	ck_assert_str_eq(buf_cstr(&v), "{\"lsn\":3}");
	ck_assert(last(f, "connect-offsets", K2, &v));
	ck_assert_str_eq(buf_cstr(&v), "{\"lsn\":99}");
	/* a tombstone deletes the position */
	put(f, K1, NULL);
	ck_assert(!last(f, "connect-offsets", K1, &v));
	buf_fini(&v);
	fx_free(f);
}
END_TEST

START_TEST(test_nothing_stored)
{
	struct fx *f = fx_new();
	struct buf v = BUF_INIT;

	ck_assert(!last(f, "connect-offsets", K1, &v)); /* an empty partition */
	put(f, K2, "{\"lsn\":99}");
	ck_assert(!last(f, "connect-offsets", K1, &v)); /* another key only */
	ck_assert(!last(f, "no-such-topic", K1, &v));
	buf_fini(&v);
	fx_free(f);
}
END_TEST

static Suite *
offsets_reader_suite(void)
{
	Suite *s = suite_create("offsets_reader");
	TCase *tc = tcase_create("mock");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_the_newest_value_of_the_key);
	tcase_add_test(tc, test_nothing_stored);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(offsets_reader_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
