/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Topics created as Kafka Connect creates them (KIP-158: topic.creation.*) by `outboxd run`
 * against the stack's strict broker (scripts/stack strict: no automatic topic creation, ACLs), as
 * production clusters run: a new topic gets the settings of the first group that matches it
 * (partitions and topic settings, as DescribeConfigs shows them), an existing topic is left as
 * it is, and a creation the cluster refuses (a replication factor it cannot give, a principal
 * without CREATE) is exit 2 with the fix, the row kept for the next start. Without creation
 * rules a missing topic is one exit 2 naming both ways out, not a loop of restarts.
 */
#include <check.h>
#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <stdio.h>
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

/* The end of @text that a failure's message can hold (Check refuses more than 4 KB). */
static const char *
tail(const char *text)
{
	size_t n = strlen(text);

	return n > 3000 ? text + n - 3000 : text;
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

/*
 * Starts the relay, inserts one row of @agg and expects exit 2 within 90 s (a refusal, said
 * once); returns the end of the row's commit, which the slot has not confirmed.
 */
static lsn_t
first_row_exits_2(struct relayfix *f, const char *agg)
{
	lsn_t end;

	relayfix_start(f);
	ck_assert_msg(relayfix_wait_log(f, "streaming slot", 30), "%s", relayfix_log_tail(f));
	insert(f, agg, "k1");
	end = relayfix_last_commit_end(f);
	ck_assert_msg(relayfix_wait_exit(f, 90) == 2, "%s", relayfix_log_tail(f));
	ck_assert(relayfix_confirmed(f) < end);
	return end;
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
	ck_assert_msg(relayfix_check(&f, out, sizeof(out)) == 0, "%s", tail(out));
	ck_assert_msg(strstr(out, "group compacted: include outbox\\.event\\.") &&
			      strstr(out,
				     "the broker would create a topic with the default group's "
				     "settings (validated, nothing created)"),
		      "%s", tail(out));
	ck_assert_int_eq(partitions("outboxd-check-topic-creation"), 0);
	relayfix_start(&f);
	ck_assert_msg(relayfix_wait_log(&f, "streaming slot", 30), "%s", relayfix_log_tail(&f));
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
	ck_assert_msg(relayfix_wait_log(&f, "streaming slot", 30), "%s", relayfix_log_tail(&f));
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
		      "%s", tail(out));
	end = first_row_exits_2(&f, a);
	ck_assert(relayfix_wait_log(&f, "was not created (group default)", 1));
	ck_assert(relayfix_wait_log(&f, "lower topic.creation.<group>.replication.factor", 1));
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

/*
 * No topic.creation.* and a broker that creates nothing: the first row of a new aggregate type
 * is one exit 2 that names the topic and both fixes (no restart loop), the row unconfirmed.
 */
START_TEST(test_a_missing_topic_without_creation_is_one_exit_2_naming_both_fixes)
{
	struct relayfix f;
	char *a, *ta, *log;

	relayfix_init(&f, false);
	a = relayfix_aggtype(&f, "order");
	ta = topic(a);
	relayfix_config(&f, NULL, NULL);
	(void)first_row_exits_2(&f, a);
	log = relayfix_log(&f);
	ck_assert_msg(strstr(log, "does not exist and the broker does not create it") &&
			      strstr(log, ta) && strstr(log, "create it; or") &&
			      strstr(log, "topic.creation.default.partitions"),
		      "%s", tail(log));
	/* one session: the relay did not start streaming again before it stopped */
	ck_assert_msg(strstr(strstr(log, "streaming slot") + 1, "streaming slot") == NULL, "%s",
		      tail(log));
	free(log);
	ck_assert_int_eq(partitions(ta), 0);
	free(a);
	free(ta);
	relayfix_fini(&f);
}
END_TEST

/* The strict broker's SASL listener as its user "writer" (DESCRIBE and WRITE, no CREATE). */
static char *
writer_worker(void)
{
	struct buf b = BUF_INIT;

	buf_add_fmt(&b,
		    "bootstrap.servers=%s\nproducer.security.protocol=SASL_PLAINTEXT\n"
		    "producer.sasl.mechanism=PLAIN\n"
		    "producer.sasl.jaas.config=org.apache.kafka.common.security.plain."
		    "PlainLoginModule required username=\"%s\" password=\"%s\";\n",
		    itest_env("OUTBOXD_TEST_KAFKA_STRICT_SASL_BOOTSTRAP"),
		    itest_env("OUTBOXD_TEST_KAFKA_STRICT_USER"),
		    itest_env("OUTBOXD_TEST_KAFKA_STRICT_PASSWORD"));
	return buf_steal(&b);
}

/*
 * A principal without CREATE: `outboxd check` warns, the run is exit 2 naming the ACL, the row
 * unconfirmed; once the topic exists (an administrator created it) the same principal and the
 * same files publish it: a refusal to create what exists is no error (Connect's rule too).
 */
START_TEST(test_a_principal_without_create_is_exit_2_naming_the_acl)
{
	struct relayfix f;
	struct itest_record *recs;
	char *a, *ta, *worker, out[16384];
	lsn_t end;
	size_t n;

	relayfix_init(&f, false);
	a = relayfix_aggtype(&f, "order");
	ta = topic(a);
	worker = writer_worker();
	relayfix_config(&f, worker,
			"topic.creation.default.partitions=1\n"
			"topic.creation.default.replication.factor=1\n");
	ck_assert_msg(relayfix_check(&f, out, sizeof(out)) == 0, "%s", tail(out));
	ck_assert_msg(strstr(out, "TOPIC_AUTHORIZATION_FAILED") ||
			      strstr(out, "CLUSTER_AUTHORIZATION"),
		      "%s", tail(out));
	end = first_row_exits_2(&f, a);
	ck_assert_msg(relayfix_wait_log(&f, "grant the principal CREATE", 1), "%s",
		      relayfix_log_tail(&f));
	ck_assert(relayfix_wait_log(&f, ta, 1));
	ck_assert_int_eq(partitions(ta), 0);
	itest_topic_config(ta, true, "retention.ms", "7200000");
	relayfix_start(&f);
	ck_assert_msg(wait_confirmed(&f, end, 60), "%s", relayfix_log_tail(&f));
	n = itest_consume_all(ta, 1, 15000, &recs);
	ck_assert_uint_eq(n, 1);
	itest_records_free(recs, n);
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	free(worker);
	free(a);
	free(ta);
	relayfix_fini(&f);
}
END_TEST

/*
 * The heartbeat topic and the dead-letter topic follow the same rules: with a group "side" for
 * both (1 partition, compact) and the default group for the rest (3 partitions), each is
 * created with its group's settings, the poison row in the dead-letter topic.
 */
START_TEST(test_heartbeat_and_dead_letter_topics_are_created_by_the_rules)
{
	struct relayfix f;
	struct buf extra = BUF_INIT, hb = BUF_INIT;
	struct itest_record *recs;
	char *a, *ta, *dlq;
	size_t n;

	relayfix_init(&f, false);
	a = relayfix_aggtype(&f, "order");
	ta = topic(a);
	dlq = relayfix_aggtype(&f, "dlq");
	buf_add_fmt(&hb, "__debezium-heartbeat.%s", f.name);
	buf_add_fmt(&extra,
		    "topic.creation.default.partitions=3\n"
		    "topic.creation.default.replication.factor=1\n"
		    "topic.creation.groups=side\n"
		    "topic.creation.side.include=__debezium-heartbeat\\\\..*,%s\n"
		    "topic.creation.side.partitions=1\n"
		    "topic.creation.side.cleanup.policy=compact\n"
		    "heartbeat.interval.ms=300\n"
		    "errors.tolerance=all\noutboxd.errors.deadletterqueue.topic.name=%s\n",
		    dlq, dlq);
	relayfix_config(&f, NULL, buf_cstr(&extra));
	relayfix_start(&f);
	ck_assert_msg(relayfix_wait_log(&f, "streaming slot", 30), "%s", relayfix_log_tail(&f));
	itest_sqlf(f.pg, "ALTER TABLE %s.outbox ALTER aggregatetype DROP NOT NULL", f.name);
	itest_sqlf(f.pg,
		   "INSERT INTO %s.outbox VALUES (gen_random_uuid(), NULL, 'agg-7', 'T', '{}')",
		   f.name);
	insert(&f, a, "k1");
	ck_assert_msg(wait_confirmed(&f, relayfix_last_commit_end(&f), 60), "%s",
		      relayfix_log_tail(&f));
	n = itest_consume_all(dlq, 1, 15000, &recs);
	ck_assert_uint_eq(n, 1);
	itest_records_free(recs, n);
	n = itest_consume_all(buf_cstr(&hb), 2, 15000, &recs);
	ck_assert_uint_ge(n, 2);
	itest_records_free(recs, n);
	ck_assert_int_eq(partitions(dlq), 1);
	assert_setting(dlq, "cleanup.policy", "compact");
	ck_assert_int_eq(partitions(buf_cstr(&hb)), 1);
	assert_setting(buf_cstr(&hb), "cleanup.policy", "compact");
	ck_assert_int_eq(partitions(ta), 3);
	assert_setting(ta, "cleanup.policy", "delete");
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	buf_fini(&extra);
	buf_fini(&hb);
	free(a);
	free(ta);
	free(dlq);
	relayfix_fini(&f);
}
END_TEST

/*
 * `outboxd poll`: without rules a missing topic is exit 2 as for run, the rows left unmarked;
 * with them, it creates topics by the same rules before a row's first record.
 */
START_TEST(test_poll_creates_topics_by_the_rules)
{
	struct relayfix f;
	struct buf q = BUF_INIT;
	struct itest_record *recs;
	char *a, *ta;
	size_t n;
	int marked = 0;

	relayfix_init(&f, false);
	a = relayfix_aggtype(&f, "order");
	ta = topic(a);
	itest_sqlf(
		f.pg,
		"ALTER TABLE %s.outbox ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY (CACHE 1), "
		"ADD COLUMN published_at timestamptz NULL",
		f.name);
	insert(&f, a, "k1");
	insert(&f, a, "k2");
	/* without rules: one exit 2 naming both fixes, nothing marked */
	relayfix_config(&f, "outboxd.poll.interval.ms=200", NULL);
	relayfix_start_command(&f, "poll");
	ck_assert_msg(relayfix_wait_exit(&f, 90) == 2, "%s", relayfix_log_tail(&f));
	ck_assert_msg(relayfix_wait_log(&f, "topic.creation.default.partitions", 1), "%s",
		      relayfix_log_tail(&f));
	buf_add_fmt(&q, "SELECT count(*) FROM %s.outbox WHERE published_at IS NOT NULL", f.name);
	{
		PGresult *r = itest_sql(f.pg, buf_cstr(&q));

		ck_assert_str_eq(PQgetvalue(r, 0, 0), "0");
		PQclear(r);
	}
	relayfix_config(&f, "outboxd.poll.interval.ms=200",
			"topic.creation.default.partitions=4\n"
			"topic.creation.default.replication.factor=-1\n"
			"topic.creation.default.retention.ms=5400000\n");
	relayfix_start_command(&f, "poll");
	for (int i = 0; i < 600 && marked < 2; i++) {
		PGresult *r = itest_sql(f.pg, buf_cstr(&q));

		marked = atoi(PQgetvalue(r, 0, 0));
		PQclear(r);
		usleep(100 * 1000);
	}
	buf_fini(&q);
	ck_assert_msg(marked == 2, "%s", relayfix_log_tail(&f));
	n = itest_consume_all(ta, 2, 15000, &recs);
	ck_assert_uint_eq(n, 2);
	itest_records_free(recs, n);
	ck_assert_int_eq(partitions(ta), 4);
	assert_setting(ta, "retention.ms", "5400000");
	ck_assert_msg(relayfix_wait_log(&f, "created topic", 1), "%s", relayfix_log_tail(&f));
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	free(a);
	free(ta);
	relayfix_fini(&f);
}
END_TEST

/* A topic setting the broker rejects: `outboxd check` fails naming it, the run is exit 2. */
START_TEST(test_a_rejected_topic_setting_is_exit_2)
{
	struct relayfix f;
	char *a, *ta, out[16384];

	relayfix_init(&f, false);
	a = relayfix_aggtype(&f, "order");
	ta = topic(a);
	relayfix_config(&f, NULL,
			"topic.creation.default.partitions=1\n"
			"topic.creation.default.replication.factor=1\n"
			"topic.creation.default.cleanup.policy=shred\n");
	ck_assert_msg(relayfix_check(&f, out, sizeof(out)) == 2 && strstr(out, "INVALID_CONFIG") &&
			      strstr(out, "fix the topic.creation.<group>.* settings"),
		      "%s", tail(out));
	(void)first_row_exits_2(&f, a);
	ck_assert_msg(relayfix_wait_log(&f, "fix the topic.creation.<group>.* settings", 1), "%s",
		      relayfix_log_tail(&f));
	ck_assert_int_eq(partitions(ta), 0);
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
	/* as the broker outage cases: on PostgreSQL 15 only (CK_EXCLUDE_TAGS on the others) */
	tcase_set_tags(tc, "pg-independent");
	tcase_add_test(tc, test_new_topics_are_created_with_their_groups_settings);
	tcase_add_test(tc, test_an_existing_topic_is_left_as_it_is);
	tcase_add_test(tc, test_a_refused_creation_is_exit_2_and_the_row_waits);
	tcase_add_test(tc, test_a_rejected_topic_setting_is_exit_2);
	tcase_add_test(tc, test_a_missing_topic_without_creation_is_one_exit_2_naming_both_fixes);
	tcase_add_test(tc, test_a_principal_without_create_is_exit_2_naming_the_acl);
	tcase_add_test(tc, test_heartbeat_and_dead_letter_topics_are_created_by_the_rules);
	tcase_add_test(tc, test_poll_creates_topics_by_the_rules);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr;
	int failed;

	/* every test against the strict broker: the stack's own creates topics automatically */
	if (!itest_stack_up("strict")) {
		fprintf(stderr, "check_topics: the stack's strict broker did not start\n");
		return 1;
	}
	setenv("OUTBOXD_TEST_KAFKA_BOOTSTRAP", getenv("OUTBOXD_TEST_KAFKA_STRICT_BOOTSTRAP"), 1);
	sr = srunner_create(topics_suite());

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
