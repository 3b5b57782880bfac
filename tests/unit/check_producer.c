/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The producer module on librdkafka's mock cluster: the conditions tested here (a full queue,
 * an oversize record, a refused setting) must be produced deterministically, which a real
 * broker cannot do. End-to-end delivery against the real broker is in tests/integration.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "outboxd/kafka/producer.h"
#include "outboxd/kafka/rdstats.h"

struct reports {
	int ok, failed;
	long opaque_sum;
};

static void
on_delivery(void *opaque, void *msg_opaque, bool ok, const char *reason)
{
	struct reports *r = opaque;

	(void)reason;
	if (ok) {
		r->ok++;
	} else {
		r->failed++;
	}
	r->opaque_sum += (long)(intptr_t)msg_opaque;
}

static int pipefd[2];

static struct producer *
mock_producer(struct kv *settings, struct reports *r)
{
	struct producer *p = NULL;
	char err[512];

	ck_assert_int_eq(pipe(pipefd), 0);
	fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
	fcntl(pipefd[1], F_SETFL, O_NONBLOCK);
	kv_set(settings, "test.mock.num.brokers", "1", NULL);
	ck_assert_msg(producer_new(settings, pipefd[1], on_delivery, r, &p, err, sizeof(err)) == 0,
		      "%s", err);
	return p;
}

/*
 * Waits up to @timeout_ms for @fd to become readable. librdkafka writes the wake-up byte from its
 * own thread, so the byte may arrive after the delivery reports were served on ours.
 * Return: poll(2)'s result (1 readable, 0 timed out, -1 error).
 */
static int
wait_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int rc;

	do {
		rc = poll(&pfd, 1, timeout_ms);
	} while (rc < 0 && errno == EINTR);
	return rc;
}

static struct sink_record
record(const char *key, const char *value)
{
	return (struct sink_record){ .topic = "t",
				     .key = key,
				     .key_len = strlen(key),
				     .value = value,
				     .value_len = value ? strlen(value) : 0,
				     .partition = -1 };
}

START_TEST(test_deliver_and_wake)
{
	struct kv s = KV_INIT;
	struct reports r = { 0 };
	struct producer *p = mock_producer(&s, &r);
	struct sink_header h = { "id", "abc", 3 };
	struct sink_record rec = record("k", "v");
	char b;

	rec.headers = &h;
	rec.nheaders = 1;
	for (long i = 1; i <= 10; i++) {
		ck_assert_int_eq(producer_send(p, &rec, (void *)(intptr_t)i, NULL, 0), 0);
	}
	ck_assert_int_eq(producer_flush(p, 10000), 0);
	ck_assert_int_eq(r.ok, 10);
	ck_assert_int_eq(r.opaque_sum, 55);
	/* librdkafka writes at least one wake-up byte to the pipe, from its own thread */
	ck_assert_msg(wait_readable(pipefd[0], 10000) == 1, "no wake-up byte within 10 s");
	ck_assert_int_eq(read(pipefd[0], &b, 1), 1);
	producer_free(p);
	close(pipefd[0]);
	close(pipefd[1]);
	kv_fini(&s);
}
END_TEST

/* The statistics librdkafka emitted last, parsed. */
struct stats_seen {
	int count, bad;
	struct rdstats st;
};

static void
on_stats(void *arg, const char *json, size_t len)
{
	struct stats_seen *seen = arg;

	seen->count++;
	if (rdstats_parse(json, len, &seen->st, NULL, 0) < 0) {
		seen->bad++;
	}
}

/* librdkafka's own statistics document, as rdstats reads it: the broker is up, the bounds hold. */
START_TEST(test_statistics_reach_the_callback_and_parse)
{
	struct kv s = KV_INIT;
	struct reports r = { 0 };
	struct stats_seen seen = { 0 };
	struct producer *p;
	struct sink_record rec = record("k", "v");

	kv_set(&s, "statistics.interval.ms", "100", NULL);
	p = mock_producer(&s, &r);
	producer_set_stats(p, on_stats, &seen);
	ck_assert_int_eq(producer_send(p, &rec, NULL, NULL, 0), 0);
	ck_assert_int_eq(producer_flush(p, 10000), 0);
	/* a document after the delivery: the broker was up then */
	seen.count = 0;
	for (int i = 0; i < 100 && seen.count < 2; i++) {
		usleep(100 * 1000); /* the wake-up pipe stays readable: it is not drained here */
		producer_poll(p);
	}
	ck_assert_msg(seen.count >= 2, "no statistics within 10 s");
	ck_assert_int_eq(seen.bad, 0);
	ck_assert_int_eq(seen.st.brokers[RDSTATS_UP], 1);
	ck_assert_int_eq(seen.st.brokers[RDSTATS_DOWN] + seen.st.brokers[RDSTATS_CONNECTING], 0);
	ck_assert_int_eq(seen.st.queue_capacity_records, 1000); /* the forced bound */
	ck_assert_int_gt(seen.st.queue_capacity_bytes, 0);
	ck_assert_int_eq(seen.st.queue_records, 0);
	producer_free(p);
	close(pipefd[0]);
	close(pipefd[1]);
	kv_fini(&s);
}
END_TEST

START_TEST(test_queue_full_is_eagain)
{
	struct kv s = KV_INIT;
	struct reports r = { 0 };
	struct producer *p;
	struct sink_record rec = record("k", "v");
	int rc = 0, sent = 0;

	kv_set(&s, "queue.buffering.max.messages", "5", NULL);
	kv_set(&s, "queue.buffering.max.ms", "1000", NULL);
	p = mock_producer(&s, &r);
	while (sent < 100 && (rc = producer_send(p, &rec, NULL, NULL, 0)) == 0) {
		sent++;
	}
	ck_assert_int_eq(rc, -EAGAIN);
	ck_assert_int_eq(sent, 5);
	ck_assert_int_eq(producer_flush(p, 10000), 0);
	ck_assert_int_eq(producer_send(p, &rec, NULL, NULL, 0), 0);
	producer_free(p);
	kv_fini(&s);
}
END_TEST

START_TEST(test_oversize_is_emsgsize)
{
	struct kv s = KV_INIT;
	struct reports r = { 0 };
	struct producer *p;
	char *big = malloc(2000);
	struct sink_record rec;
	char err[256] = "";

	memset(big, 'x', 1999);
	big[1999] = '\0';
	kv_set(&s, "message.max.bytes", "1000", NULL);
	p = mock_producer(&s, &r);
	ck_assert_int_eq(producer_max_message_bytes(p), 1000);
	rec = record("k", big);
	ck_assert_int_eq(producer_send(p, &rec, NULL, err, sizeof(err)), -EMSGSIZE);
	ck_assert_int_ne(strlen(err), 0);
	producer_free(p);
	kv_fini(&s);
	free(big);
}
END_TEST

/*
 * The byte bound holds one record of message.max.bytes: by default (1 MB), and when the user's
 * bound is smaller (raised), so a large record waits for room instead of being refused forever.
 */
START_TEST(test_queue_bound_fits_largest_record)
{
	static const char *user[] = { NULL, "1" };
	size_t n = 1000000;
	char *big = malloc(n + 1);

	memset(big, 'x', n);
	big[n] = '\0';
	for (size_t i = 0; i < 2; i++) {
		struct kv s = KV_INIT;
		struct reports r = { 0 };
		struct producer *p;
		struct sink_record small = record("k", "v"), rec = record("k", big);
		int rc;

		kv_set(&s, "queue.buffering.max.ms", "1000", NULL);
		if (user[i]) {
			kv_set(&s, "queue.buffering.max.kbytes", user[i], NULL);
		}
		p = mock_producer(&s, &r);
		ck_assert_int_eq(producer_send(p, &rec, NULL, NULL, 0), 0);
		/* the queue is full now; a second record waits for the first one's delivery */
		ck_assert_int_eq(producer_send(p, &rec, NULL, NULL, 0), -EAGAIN);
		ck_assert_int_eq(producer_flush(p, 10000), 0);
		rc = producer_send(p, &rec, NULL, NULL, 0);
		ck_assert_int_eq(rc, 0);
		/* a 1 MB bound: about 48 KB of room left after the large record */
		ck_assert_int_eq(producer_send(p, &small, NULL, NULL, 0), 0);
		ck_assert_int_eq(producer_flush(p, 10000), 0);
		producer_free(p);
		kv_fini(&s);
	}
	free(big);
}
END_TEST

/*
 * With no broker answering, the first topic's metadata lookup gives up after 500 ms and the
 * following new topics do not wait at all: ten new topics must not hold the caller for 10 x 500 ms.
 * (The bound is loose on purpose: it tells "once" from "per topic", not how fast anything is.)
 */
START_TEST(test_topic_lookup_backs_off_without_broker)
{
	struct kv s = KV_INIT;
	struct reports r = { 0 };
	struct producer *p;
	struct sink_record rec = record("k", "v");
	char err[256] = "", topic[32];
	struct timespec t0, t1;
	double secs;

	kv_set(&s, "bootstrap.servers", "127.0.0.1:1", NULL); /* nothing listens on port 1 */
	ck_assert_int_eq(pipe(pipefd), 0);
	fcntl(pipefd[1], F_SETFL, O_NONBLOCK);
	ck_assert_msg(producer_new(&s, pipefd[1], on_delivery, &r, &p, err, sizeof(err)) == 0, "%s",
		      err);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 10; i++) {
		snprintf(topic, sizeof(topic), "t%d", i);
		rec.topic = topic;
		ck_assert_int_eq(producer_send(p, &rec, NULL, NULL, 0), 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_msg(secs < 3.0, "10 new topics without a broker took %.1f s", secs);
	ck_assert_int_ge(producer_queue_len(p), 10); /* plus librdkafka's own events */
	producer_free(p);
	kv_fini(&s);
}
END_TEST

/*
 * At most 10 new topics a second wait for their metadata: a backlog spread over 200 new topics
 * must not hold the caller for 200 round trips. Every record is still delivered. The bound
 * allows 10 more for each second the loop took (a slow machine crosses into new seconds).
 */
START_TEST(test_topic_lookups_are_bounded_per_second)
{
	struct kv s = KV_INIT;
	struct reports r = { 0 };
	struct producer *p = mock_producer(&s, &r);
	struct sink_record rec = record("k", "v");
	char topic[32];
	struct timespec t0, t1;
	double secs;

	if (!producer_needs_topic_lookup(rd_kafka_version())) {
		producer_free(p);
		kv_fini(&s);
		return; /* this librdkafka asks at once: no lookup is made (test_versions) */
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 200; i++) {
		snprintf(topic, sizeof(topic), "bounded%d", i);
		rec.topic = topic;
		ck_assert_int_eq(producer_send(p, &rec, NULL, NULL, 0), 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_int_ge(producer_topic_lookups(p), 1);
	ck_assert_msg(producer_topic_lookups(p) <= 10 * (1 + (int64_t)secs + 1),
		      "%lld lookups in %.1f s", (long long)producer_topic_lookups(p), secs);
	ck_assert_int_eq(producer_flush(p, 20000), 0); /* under the tcase's 30 s */
	producer_free(p);
	kv_fini(&s);
}
END_TEST

/*
 * The 1,000th topic produced to brings one warning that librdkafka's statistics grow with the
 * topics, when they are on; none when outboxd.kafka.stats.ms=0 left them off. (Only the
 * warning: the records go by lookup-free handles and are purged unsent.)
 */
static bool
stats_warning_at_1000_topics(const char *interval)
{
	struct kv s = KV_INIT;
	struct reports r = { 0 };
	struct producer *p;
	struct sink_record rec = record("k", "v");
	char topic[32], *text = NULL;
	size_t len = 0;
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	bool warned, queued = true;

	if (interval) {
		kv_set(&s, "statistics.interval.ms", interval, NULL);
	}
	p = mock_producer(&s, &r);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	for (int i = 0; i < 1001; i++) {
		int rc;

		snprintf(topic, sizeof(topic), "many%d", i);
		rec.topic = topic;
		rc = producer_send(p, &rec, NULL, NULL, 0);
		/* the queue holds 1,000: past it, the topic is made before the record is refused */
		queued &= rc == 0 || rc == -EAGAIN;
	}
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	ck_assert(queued); /* with stderr back */
	producer_free(p);
	close(pipefd[0]);
	close(pipefd[1]);
	kv_fini(&s);
	rewind(tmp);
	if (getdelim(&text, &len, '\0', tmp) < 0) { /* nothing written */
		free(text);
		text = strdup("");
	}
	fclose(tmp);
	warned = strstr(text, "1000 topics produced to: librdkafka's statistics grow") != NULL;
	ck_assert_ptr_null(
		strstr(strstr(text, "1000 topics") ? strstr(text, "1000 topics") + 1 : text,
		       "1000 topics")); /* once */
	free(text);
	return warned;
}

START_TEST(test_many_topics_warn_of_statistics)
{
	ck_assert(stats_warning_at_1000_topics("10000"));
	ck_assert(!stats_warning_at_1000_topics("0"));
	ck_assert(!stats_warning_at_1000_topics(NULL));
}
END_TEST

START_TEST(test_forced_defaults)
{
	struct kv s = KV_INIT;
	struct reports r = { 0 };
	struct producer *p = mock_producer(&s, &r);

	ck_assert_int_eq(producer_max_message_bytes(p), 1048576);
	ck_assert(!producer_fatal(p, NULL, 0));
	producer_free(p);
	kv_fini(&s);
}
END_TEST

/*
 * A success proves the write only with the record's offset: librdkafka's implicit
 * acknowledgement (a later batch's success) carries none and does not prove it; with acks=0
 * nothing carries one.
 */
START_TEST(test_report_proven_needs_an_offset)
{
	ck_assert(producer_report_proven(0, -1));
	ck_assert(producer_report_proven(12345, 1));
	ck_assert(!producer_report_proven(RD_KAFKA_OFFSET_INVALID, -1));
	ck_assert(!producer_report_proven(RD_KAFKA_OFFSET_INVALID, 1));
	ck_assert(producer_report_proven(RD_KAFKA_OFFSET_INVALID, 0));
}
END_TEST

/*
 * librdkafka issue 5430: the producer counts as wedged only after its "new leader-1" line, a
 * delivery after it (the broker answers) and 5 s of no delivery while records wait.
 */
START_TEST(test_leaderless_wedge_needs_line_answer_and_5s)
{
	const int64_t s = 1000000;

	ck_assert(producer_leaderless_wedged(10 * s, true, 80, 11 * s, 16 * s));
	ck_assert(!producer_leaderless_wedged(10 * s, true, 80, 11 * s, 16 * s - 1));
	ck_assert(!producer_leaderless_wedged(0, true, 80, 11 * s, 60 * s));	  /* no line */
	ck_assert(!producer_leaderless_wedged(10 * s, false, 80, 9 * s, 60 * s)); /* an outage */
	ck_assert(!producer_leaderless_wedged(10 * s, true, 0, 11 * s, 60 * s)); /* nothing waits */
	/* the wait counts from the line when the last delivery came before it */
	ck_assert(!producer_leaderless_wedged(10 * s, true, 5, 2 * s, 14 * s));
	ck_assert(producer_leaderless_wedged(10 * s, true, 5, 2 * s, 15 * s));
}
END_TEST

/* The forced reconnect.backoff.max.ms (1000, the Java client's) gives way to a user's longer
 * reconnect.backoff.ms, which librdkafka would refuse beside it. */
START_TEST(test_forced_reconnect_backoff_yields)
{
	struct kv s = KV_INIT;
	struct producer *p = NULL;
	struct reports r = { 0 };
	char err[512] = "";

	kv_set(&s, "reconnect.backoff.ms", "5000", NULL);
	ck_assert_msg(producer_new(&s, -1, on_delivery, &r, &p, err, sizeof(err)) == 0, "%s", err);
	producer_free(p);
	kv_fini(&s);
}
END_TEST

START_TEST(test_bad_setting_named_secret_hidden)
{
	struct kv s = KV_INIT;
	struct producer *p = NULL;
	struct reports r = { 0 };
	char err[512] = "";

	kv_set(&s, "sasl.password", "hunter2", NULL);
	kv_set(&s, "no.such.setting", "1", NULL);
	ck_assert_int_eq(producer_new(&s, -1, on_delivery, &r, &p, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(p);
	ck_assert_ptr_nonnull(strstr(err, "no.such.setting"));
	ck_assert_ptr_null(strstr(err, "hunter2"));
	kv_fini(&s);
}
END_TEST

/*
 * Topic creation (topic.creation.*, KIP-158) that is never answered (the mock cluster names no
 * controller, so CreateTopics waits): the records wait, counted as queued, none sent; ending
 * the producer reports each failed. The real broker's creation is the topics integration suite.
 */
START_TEST(test_records_wait_for_their_topics_creation)
{
	struct kv s = KV_INIT;
	struct reports r = { 0 };
	struct producer *p;
	struct sink_record rec = record("k", "v");

	kv_set(&s, "outboxd.topic.creation.default.partitions", "2", NULL);
	kv_set(&s, "outboxd.topic.creation.default.replication.factor", "1", NULL);
	p = mock_producer(&s, &r);
	rec.topic = "made.by.outboxd";
	for (long i = 1; i <= 5; i++) {
		ck_assert_int_eq(producer_send(p, &rec, (void *)(intptr_t)i, NULL, 0), 0);
	}
	ck_assert_int_ge(producer_queue_len(p), 5);
	ck_assert_int_eq(producer_flush(p, 1500), -ETIMEDOUT);
	ck_assert_int_ge(producer_queue_len(p), 5);
	ck_assert_int_eq(r.ok + r.failed, 0);
	producer_free(p);
	ck_assert_int_eq(r.failed, 5);
	ck_assert_int_eq(r.opaque_sum, 15);
	close(pipefd[0]);
	close(pipefd[1]);
	kv_fini(&s);
}
END_TEST

START_TEST(test_purge_on_free_reports_failures)
{
	struct kv s = KV_INIT;
	struct reports r = { 0 };
	struct producer *p;
	struct sink_record rec = record("k", "v");

	kv_set(&s, "queue.buffering.max.ms", "60000", NULL);
	p = mock_producer(&s, &r);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(producer_send(p, &rec, NULL, NULL, 0), 0);
	}
	producer_free(p);
	ck_assert_int_eq(r.ok, 0);
	ck_assert_int_eq(r.failed, 3);
	kv_fini(&s);
}
END_TEST

/* The versions refused (librdkafka#4750) and those that need the first-record lookup (#5032). */
START_TEST(test_version_gates)
{
	ck_assert_ptr_null(producer_version_refusal(0x020002ff)); /* 2.0.2, Debian 12 */
	ck_assert_ptr_null(producer_version_refusal(0x020100ff));
	ck_assert_ptr_nonnull(producer_version_refusal(0x020200ff));
	ck_assert_ptr_nonnull(producer_version_refusal(0x020401ff));
	ck_assert_ptr_null(producer_version_refusal(0x020500ff));
	ck_assert_ptr_null(producer_version_refusal(0x020800ff));	  /* 2.8.0, Debian 13 */
	ck_assert_ptr_null(producer_version_refusal(rd_kafka_version())); /* the one linked */
	ck_assert(strstr(producer_version_refusal(0x020300ff), "2.5.0 or later"));
	ck_assert(producer_needs_topic_lookup(0x020002ff));
	ck_assert(producer_needs_topic_lookup(0x020800ff));
	ck_assert(producer_needs_topic_lookup(0x020a00ff));
	ck_assert(!producer_needs_topic_lookup(0x020a01ff));
	ck_assert(!producer_needs_topic_lookup(0x020c00ff));
}
END_TEST

static Suite *
producer_suite(void)
{
	Suite *s = suite_create("producer");
	TCase *tc = tcase_create("mock-cluster");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_deliver_and_wake);
	tcase_add_test(tc, test_queue_full_is_eagain);
	tcase_add_test(tc, test_oversize_is_emsgsize);
	tcase_add_test(tc, test_forced_defaults);
	tcase_add_test(tc, test_report_proven_needs_an_offset);
	tcase_add_test(tc, test_leaderless_wedge_needs_line_answer_and_5s);
	tcase_add_test(tc, test_forced_reconnect_backoff_yields);
	tcase_add_test(tc, test_queue_bound_fits_largest_record);
	tcase_add_test(tc, test_topic_lookup_backs_off_without_broker);
	tcase_add_test(tc, test_topic_lookups_are_bounded_per_second);
	tcase_add_test(tc, test_many_topics_warn_of_statistics);
	tcase_add_test(tc, test_bad_setting_named_secret_hidden);
	tcase_add_test(tc, test_records_wait_for_their_topics_creation);
	tcase_add_test(tc, test_purge_on_free_reports_failures);
	tcase_add_test(tc, test_statistics_reach_the_callback_and_parse);
	tcase_add_test(tc, test_version_gates);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(producer_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
