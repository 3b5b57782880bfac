/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Topics created as Kafka Connect creates them (KIP-158: topic.creation.*) by `outboxd run`
 * against the stack's broker: a new topic gets the settings of the first group that matches it
 * (partitions and topic settings, as DescribeConfigs shows them; auto-creation would have given
 * the broker's defaults), an existing topic is left as it is, and a creation the cluster refuses
 * is exit 2 with the fix, the row kept for the next start.
 */
#include <check.h>
#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"
#include "relayfix.h"

/* Waits until the slot's confirmed_flush_lsn reaches @target; false after @timeout_s. */
static bool
wait_confirmed(struct relayfix *f, lsn_t target, int timeout_s)
{
	for (int i = 0; i < timeout_s * 10; i++) {
		if (relayfix_confirmed(f) >= target) {
			return true;
		}
		usleep(100 * 1000);
	}
	return false;
}

/*
 * The partitions of @topic, from the cluster's metadata (0: no such topic). A consumer's
 * handle: its metadata requests never have the broker auto-create the topic (a producer's do).
 */
static int
partitions(const char *topic)
{
	char err[512];
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, itest_kafka_conf(), err, sizeof(err));
	rd_kafka_topic_t *rkt;
	const struct rd_kafka_metadata *md = NULL;
	int n = 0;

	ck_assert_msg(rk != NULL, "%s", err);
	rkt = rd_kafka_topic_new(rk, topic, NULL);
	if (rd_kafka_metadata(rk, 0, rkt, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
		if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
			n = md->topics[0].partition_cnt;
		}
		rd_kafka_metadata_destroy(md);
	}
	rd_kafka_topic_destroy(rkt);
	rd_kafka_destroy(rk);
	return n;
}

/* The value of topic setting @key of @topic as DescribeConfigs gives it (caller frees). */
static char *
setting(const char *topic, const char *key)
{
	char err[512], *v = NULL;
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, itest_kafka_conf(), err, sizeof(err));
	rd_kafka_queue_t *q;
	rd_kafka_ConfigResource_t *c;
	rd_kafka_event_t *ev;
	const rd_kafka_ConfigResource_t **res;
	const rd_kafka_ConfigEntry_t **entries;
	size_t n = 0, ne = 0;

	ck_assert_msg(rk != NULL, "%s", err);
	q = rd_kafka_queue_new(rk);
	c = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic);
	rd_kafka_DescribeConfigs(rk, &c, 1, NULL, q);
	ev = rd_kafka_queue_poll(q, 30000);
	ck_assert_msg(ev && !rd_kafka_event_error(ev), "DescribeConfigs %s: %s", topic,
		      ev ? rd_kafka_event_error_string(ev) : "no answer");
	res = rd_kafka_DescribeConfigs_result_resources(rd_kafka_event_DescribeConfigs_result(ev),
							&n);
	ck_assert_uint_eq(n, 1);
	entries = rd_kafka_ConfigResource_configs(res[0], &ne);
	for (size_t i = 0; i < ne; i++) {
		if (strcmp(rd_kafka_ConfigEntry_name(entries[i]), key) == 0 &&
		    rd_kafka_ConfigEntry_value(entries[i])) {
			v = strdup(rd_kafka_ConfigEntry_value(entries[i]));
		}
	}
	rd_kafka_event_destroy(ev);
	rd_kafka_ConfigResource_destroy(c);
	rd_kafka_queue_destroy(q);
	rd_kafka_destroy(rk);
	ck_assert_msg(v != NULL, "topic %s has no setting %s", topic, key);
	return v;
}

static void
assert_setting(const char *topic, const char *key, const char *want)
{
	char *v = setting(topic, key);

	ck_assert_msg(strcmp(v, want) == 0, "topic %s: %s=%s, want %s", topic, key, v, want);
	free(v);
}

/* One row of aggregate type @agg with key @key. */
static void
insert(struct relayfix *f, const char *agg, const char *key)
{
	itest_sqlf(f->pg,
		   "INSERT INTO %s.outbox (id, aggregatetype, aggregateid, type, payload) "
		   "VALUES (gen_random_uuid(), '%s', '%s', 'Created', '{\"k\": 1}')",
		   f->name, agg, key);
}

static char *
topic(const char *agg)
{
	struct buf b = BUF_INIT;

	buf_add_fmt(&b, "outbox.event.%s", agg);
	return buf_steal(&b);
}

/*
 * Two new topics: one matched by the named group "compacted" (2 partitions, compact), the
 * other by the default group (3 partitions, its retention.ms); the records reach both, and the
 * log names each creation.
 */
START_TEST(test_new_topics_are_created_with_their_groups_settings)
{
	struct relayfix f;
	struct buf extra = BUF_INIT;
	struct itest_record *recs;
	char *a, *b, *ta, *tb, out[16384];
	size_t n;

	relayfix_init(&f, false);
	a = relayfix_aggtype(&f, "order");
	b = relayfix_aggtype(&f, "config");
	ta = topic(a);
	tb = topic(b);
	buf_add_fmt(&extra,
		    "topic.creation.default.partitions=3\n"
		    "topic.creation.default.replication.factor=1\n"
		    "topic.creation.default.retention.ms=3600000\n"
		    "topic.creation.groups=compacted\n"
		    "topic.creation.compacted.include=outbox\\\\.event\\\\.%s\n"
		    "topic.creation.compacted.partitions=2\n"
		    "topic.creation.compacted.cleanup.policy=compact\n",
		    b);
	relayfix_config(&f, NULL, buf_cstr(&extra));
	/* `outboxd check` names each group and asks the broker, creating nothing */
	ck_assert_msg(relayfix_check(&f, out, sizeof(out)) == 0, "%s", out);
	ck_assert_msg(strstr(out, "group compacted: include outbox\\.event\\.") &&
			      strstr(out,
				     "the broker would create a topic with the default group's "
				     "settings (validated, nothing created)"),
		      "%s", out);
	ck_assert_int_eq(partitions("outboxd-check-topic-creation"), 0);
	relayfix_start(&f);
	ck_assert_msg(relayfix_wait_log(&f, "streaming slot", 30), "%s", relayfix_log(&f));
	insert(&f, a, "k1");
	insert(&f, b, "k2");
	insert(&f, a, "k3");
	ck_assert(wait_confirmed(&f, relayfix_last_commit_end(&f), 60));
	n = itest_consume_all(ta, 2, 15000, &recs);
	ck_assert_uint_eq(n, 2);
	itest_records_free(recs, n);
	n = itest_consume_all(tb, 1, 15000, &recs);
	ck_assert_uint_eq(n, 1);
	itest_records_free(recs, n);
	ck_assert_int_eq(partitions(ta), 3);
	ck_assert_int_eq(partitions(tb), 2);
	assert_setting(ta, "retention.ms", "3600000");
	assert_setting(ta, "cleanup.policy", "delete");
	assert_setting(tb, "cleanup.policy", "compact");
	buf_reset(&extra);
	buf_add_fmt(&extra, "created topic %s (group compacted: include", tb);
	ck_assert(relayfix_wait_log(&f, buf_cstr(&extra), 1));
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	buf_fini(&extra);
	free(a);
	free(b);
	free(ta);
	free(tb);
	relayfix_fini(&f);
}
END_TEST

/* A topic that exists keeps its settings: Connect creates only what is missing. */
START_TEST(test_an_existing_topic_is_left_as_it_is)
{
	struct relayfix f;
	struct itest_record *recs;
	char *a, *ta;
	size_t n;

	relayfix_init(&f, false);
	a = relayfix_aggtype(&f, "order");
	ta = topic(a);
	itest_topic_config(ta, true, "retention.ms", "7200000");
	relayfix_config(&f, NULL,
			"topic.creation.default.partitions=4\n"
			"topic.creation.default.replication.factor=-1\n"
			"topic.creation.default.retention.ms=3600000\n");
	relayfix_start(&f);
	ck_assert_msg(relayfix_wait_log(&f, "streaming slot", 30), "%s", relayfix_log(&f));
	insert(&f, a, "k1");
	ck_assert(wait_confirmed(&f, relayfix_last_commit_end(&f), 60));
	n = itest_consume_all(ta, 1, 15000, &recs);
	ck_assert_uint_eq(n, 1);
	itest_records_free(recs, n);
	ck_assert_int_eq(partitions(ta), 1);
	assert_setting(ta, "retention.ms", "7200000");
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	free(a);
	free(ta);
	relayfix_fini(&f);
}
END_TEST

/*
 * A replication factor the one-broker cluster cannot give: exit 2 naming the topic and the fix,
 * the row not confirmed; the next start with a factor it can give publishes it.
 */
START_TEST(test_a_refused_creation_is_exit_2_and_the_row_waits)
{
	struct relayfix f;
	struct itest_record *recs;
	char *a, *ta, out[16384];
	lsn_t end;
	size_t n;

	relayfix_init(&f, false);
	a = relayfix_aggtype(&f, "order");
	ta = topic(a);
	relayfix_config(&f, NULL,
			"topic.creation.default.partitions=1\n"
			"topic.creation.default.replication.factor=3\n");
	ck_assert_msg(relayfix_check(&f, out, sizeof(out)) != 0 &&
			      strstr(out, "INVALID_REPLICATION_FACTOR") &&
			      strstr(out, "lower topic.creation.<group>.replication.factor"),
		      "%s", out);
	relayfix_start(&f);
	ck_assert_msg(relayfix_wait_log(&f, "streaming slot", 30), "%s", relayfix_log(&f));
	insert(&f, a, "k1");
	end = relayfix_last_commit_end(&f);
	ck_assert_int_eq(relayfix_wait_exit(&f, 60), 2);
	ck_assert(relayfix_wait_log(&f, "was not created (group default)", 1));
	ck_assert(relayfix_wait_log(&f, "lower topic.creation.<group>.replication.factor", 1));
	ck_assert(relayfix_confirmed(&f) < end);
	ck_assert_int_eq(partitions(ta), 0);
	relayfix_config(&f, NULL,
			"topic.creation.default.partitions=1\n"
			"topic.creation.default.replication.factor=1\n");
	relayfix_start(&f);
	ck_assert(wait_confirmed(&f, end, 60));
	n = itest_consume_all(ta, 1, 15000, &recs);
	ck_assert_uint_eq(n, 1);
	itest_records_free(recs, n);
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	free(a);
	free(ta);
	relayfix_fini(&f);
}
END_TEST

static Suite *
topics_suite(void)
{
	Suite *s = suite_create("topics");
	TCase *tc = tcase_create("creation");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_new_topics_are_created_with_their_groups_settings);
	tcase_add_test(tc, test_an_existing_topic_is_left_as_it_is);
	tcase_add_test(tc, test_a_refused_creation_is_exit_2_and_the_row_waits);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(topics_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
