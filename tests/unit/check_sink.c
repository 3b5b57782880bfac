/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sink seam: its calls reach the implementation and its optional transactions say -ENOTSUP
 * when absent (a sink written here), and the Kafka sink behind it on librdkafka's mock cluster:
 * tokens come back through the callback in order, the wake-up descriptor turns readable, the
 * statistics arrive parsed, `outboxd check`'s two lines. The publish path over a sink that is
 * not Kafka is in check_publish.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/kafka/kafkasink.h"
#include "outboxd/kafka/rdstats.h"
#include "outboxd/sink/sink.h"

/* A sink with transactions that only records what it was asked. */
struct txsink {
	struct sink base;
	int begun, committed, aborted;
	char position[32];
};

static int
tx_begin(struct sink *s, char *errbuf, size_t errlen)
{
	(void)errbuf;
	(void)errlen;
	((struct txsink *)s)->begun++;
	return 0;
}

static int
tx_commit(struct sink *s, const void *position, size_t len, char *errbuf, size_t errlen)
{
	struct txsink *t = (struct txsink *)s;

	(void)errbuf;
	(void)errlen;
	t->committed++;
	snprintf(t->position, sizeof(t->position), "%.*s", (int)len, (const char *)position);
	return 0;
}

static int
tx_abort(struct sink *s, char *errbuf, size_t errlen)
{
	(void)errbuf;
	(void)errlen;
	((struct txsink *)s)->aborted++;
	return 0;
}

START_TEST(test_transactions_dispatch_or_say_enotsup)
{
	const struct sink_ops with = { .txn_begin = tx_begin,
				       .txn_commit = tx_commit,
				       .txn_abort = tx_abort };
	const struct sink_ops without = { .txn_begin = tx_begin }; /* half a set is none */
	struct txsink t = { .base = { .ops = &with } };
	char err[64];

	ck_assert(sink_transactional(&t.base));
	ck_assert_int_eq(sink_txn_begin(&t.base, err, sizeof(err)), 0);
	ck_assert_int_eq(sink_txn_commit(&t.base, "0/16B3748", 9, err, sizeof(err)), 0);
	ck_assert_int_eq(sink_txn_abort(&t.base, err, sizeof(err)), 0);
	ck_assert_int_eq(t.begun, 1);
	ck_assert_int_eq(t.committed, 1);
	ck_assert_int_eq(t.aborted, 1);
	ck_assert_str_eq(t.position, "0/16B3748");

	t.base.ops = &without;
	ck_assert(!sink_transactional(&t.base));
	ck_assert_int_eq(sink_txn_begin(&t.base, err, sizeof(err)), -ENOTSUP);
	ck_assert_int_eq(sink_txn_commit(&t.base, "x", 1, err, sizeof(err)), -ENOTSUP);
	ck_assert_int_eq(sink_txn_abort(&t.base, err, sizeof(err)), -ENOTSUP);
	ck_assert_int_eq(t.begun, 1);
	ck_assert_int_eq(sink_discard(NULL, 0, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "");
}
END_TEST

struct seen {
	uint64_t tokens[16];
	int n, failed, stats;
	struct rdstats st;
};

static void
on_delivery(void *opaque, uint64_t token, bool ok, const char *reason)
{
	struct seen *s = opaque;

	(void)reason;
	if (!ok) {
		s->failed++;
	} else if (s->n < 16) {
		s->tokens[s->n++] = token;
	}
}

static void
on_stats(void *opaque, const void *stats)
{
	struct seen *s = opaque;

	s->stats++;
	memcpy(&s->st, stats, sizeof(s->st));
}

static struct sink *
open_mock(struct kv *settings, struct seen *seen)
{
	struct sink_params p = { .settings = settings,
				 .on_delivery = on_delivery,
				 .on_stats = on_stats,
				 .opaque = seen };
	struct sink *s = NULL;
	char err[512];

	kv_set(settings, "test.mock.num.brokers", "1", NULL);
	ck_assert_msg(kafkasink_kind.open(&p, &s, err, sizeof(err)) == 0, "%s", err);
	ck_assert_ptr_eq(s->kind, &kafkasink_kind);
	return s;
}

/* Tokens (heartbeats' UINT64_MAX too) come back whole, in order, after a wake-up. */
START_TEST(test_kafka_tokens_come_back_in_order)
{
	struct kv kv = KV_INIT;
	struct seen seen = { 0 };
	struct sink *s = open_mock(&kv, &seen);
	struct sink_record rec = { .topic = "t", .key = "k", .key_len = 1, .partition = -1 };
	const uint64_t tokens[] = { 1, 2, 3, (uint64_t)1 << 40, UINT64_MAX };
	struct pollfd pfd = { .fd = sink_wake_fd(s), .events = POLLIN };
	char err[256];
	int woken = 0;

	ck_assert_int_ge(pfd.fd, 0);
	ck_assert(!sink_transactional(s));
	/*
	 * librdkafka writes the wake-up byte when its queue of events goes from empty to not
	 * empty: what it queued at start is served first, as the main loop serves every turn.
	 */
	sink_serve(s);
	for (size_t i = 0; i < 5; i++) {
		ck_assert_int_eq(sink_send(s, &rec, tokens[i], err, sizeof(err)), 0);
	}
	/* from librdkafka's own thread, when the first report waits */
	for (int i = 0; i < 100 && seen.n < 5; i++) {
		woken += poll(&pfd, 1, 100) == 1;
		sink_serve(s);
	}
	ck_assert_int_eq(seen.n, 5);
	ck_assert_int_gt(woken, 0);
	ck_assert_int_eq(seen.failed, 0);
	for (int i = 0; i < 5; i++) {
		ck_assert_uint_eq(seen.tokens[i], tokens[i]);
	}
	ck_assert_int_eq(sink_queue_len(s), 0);
	ck_assert_int_eq(sink_max_record_bytes(s), 1048576);
	ck_assert(!sink_fatal(s, err, sizeof(err)));
	ck_assert_int_eq(sink_discard(s, 1000, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "");
	kv_fini(&kv);
}
END_TEST

/* Statistics reach the source as the kind's fixed-size value, and render as its families. */
START_TEST(test_kafka_statistics_arrive_parsed)
{
	struct kv kv = KV_INIT;
	struct seen seen = { 0 };
	struct sink *s;
	struct buf out = BUF_INIT;

	kv_set(&kv, "statistics.interval.ms", "100", NULL);
	s = open_mock(&kv, &seen);
	for (int i = 0; i < 100 && seen.stats == 0; i++) {
		struct pollfd pfd = { .fd = sink_wake_fd(s), .events = POLLIN };

		(void)poll(&pfd, 1, 100);
		sink_serve(s);
	}
	ck_assert_int_gt(seen.stats, 0);
	ck_assert_uint_eq(kafkasink_kind.stats->size, sizeof(struct rdstats));
	ck_assert_int_gt(seen.st.queue_capacity_records, 0);
	kafkasink_kind.stats->render(&seen.st, 5, 5, &out);
	ck_assert_ptr_nonnull(strstr(buf_cstr(&out), "outboxd_kafka_brokers{state=\"up\"}"));
	buf_fini(&out);
	(void)sink_discard(s, 0, NULL, 0);
	kv_fini(&kv);
}
END_TEST

struct lines {
	char text[4][512];
	int level[4];
	int n;
};

static void
on_line(void *arg, int level, const char *what, const char *detail)
{
	struct lines *l = arg;

	if (l->n < 4) {
		snprintf(l->text[l->n], sizeof(l->text[0]), "%s: %s", what, detail);
		l->level[l->n++] = level;
	}
}

/* `outboxd check`: the brokers' line, the security line, the topic creation line. */
START_TEST(test_kafka_check_lines)
{
	struct kv kv = KV_INIT;
	struct lines l = { 0 };

	kv_set(&kv, "test.mock.num.brokers", "1", NULL);
	ck_assert(kafkasink_kind.check(&kv, 10000, on_line, &l));
	ck_assert_int_eq(l.n, 3);
	ck_assert_int_eq(l.level[0], 0);
	ck_assert_msg(strncmp(l.text[0], "kafka: 1 broker: ", 17) == 0, "%s", l.text[0]);
	ck_assert_msg(strncmp(l.text[1], "kafka tls: ", 11) == 0, "%s", l.text[1]);
	ck_assert_msg(strncmp(l.text[2], "topic creation: off: ", 21) == 0, "%s", l.text[2]);

	/* topic.creation.*: each group, and the broker's answer to creating one (not created) */
	memset(&l, 0, sizeof(l));
	kv_set(&kv, "outboxd.topic.creation.default.partitions", "3", NULL);
	kv_set(&kv, "outboxd.topic.creation.default.replication.factor", "1", NULL);
	ck_assert(kafkasink_kind.check(&kv, 2000, on_line, &l));
	ck_assert_int_eq(l.n, 3);
	/* the mock cluster names no controller: CreateTopics is never answered (a warning; the
	 * real broker's answer is the topics integration suite's) */
	ck_assert_msg(l.level[2] == 1, "%s", l.text[2]);
	ck_assert_msg(strstr(l.text[2], "group default: partitions 3, replication factor 1; no "
					"answer"),
		      "%s", l.text[2]);
	kv_del(&kv, "outboxd.topic.creation.default.partitions");
	kv_del(&kv, "outboxd.topic.creation.default.replication.factor");

	/* a setting librdkafka refuses: the first line fails and names it, the second still comes */
	memset(&l, 0, sizeof(l));
	kv_set(&kv, "linger.ms", "not-a-number", NULL);
	ck_assert(!kafkasink_kind.check(&kv, 1000, on_line, &l));
	ck_assert_int_eq(l.n, 2);
	ck_assert_int_eq(l.level[0], 2);
	ck_assert_msg(strstr(l.text[0], "linger.ms") != NULL, "%s", l.text[0]);
	kv_fini(&kv);
}
END_TEST

static Suite *
sink_suite(void)
{
	Suite *s = suite_create("sink");
	TCase *seam = tcase_create("seam");
	TCase *kafka = tcase_create("kafka-mock-cluster");

	tcase_add_test(seam, test_transactions_dispatch_or_say_enotsup);
	tcase_set_timeout(kafka, 30);
	tcase_add_test(kafka, test_kafka_tokens_come_back_in_order);
	tcase_add_test(kafka, test_kafka_statistics_arrive_parsed);
	tcase_add_test(kafka, test_kafka_check_lines);
	suite_add_tcase(s, seam);
	suite_add_tcase(s, kafka);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(sink_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
