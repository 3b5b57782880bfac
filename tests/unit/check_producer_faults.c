/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The producer module under broker faults, on librdkafka's mock cluster (reliability.md 3.3,
 * 4): retriable errors are retried and delivered; permanent errors come back as failed
 * delivery reports, never as silent success; an idempotence fatal error (injected, and the
 * issue-4438 disconnect sequence of librdkafka's test 0144) is visible through
 * producer_fatal() and later sends fail; a slow leader only delays. Every case reads the
 * partition back with a consumer on the same cluster and checks the log has no gap, no
 * duplicate and no reordering: what landed is a prefix of what was sent, in order.
 *
 * The cluster is owned by a handle of the test, not by the producer under test, so the
 * producer gets an ordinary bootstrap.servers, as in production.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "outboxd/kafka/producer.h"

#define PRODUCE 0 /* ApiKey of Produce (rdkafka_proto.h is internal) */
#define MAXMSG	4096

struct reports {
	int ok, failed;
	int order[MAXMSG]; /* message numbers in report order */
	int norder;
	int status[MAXMSG]; /* per message: 0 none, 1 ok, 2 failed; reports per message in count */
	int count[MAXMSG];
	char reason[256];
};

static void
on_delivery(void *opaque, void *msg_opaque, bool ok, const char *reason)
{
	struct reports *r = opaque;
	int n = (int)(intptr_t)msg_opaque;

	if (ok) {
		r->ok++;
	} else {
		r->failed++;
		if (!r->reason[0] && reason) {
			snprintf(r->reason, sizeof(r->reason), "%s", reason);
		}
	}
	if (n >= 0 && n < MAXMSG) {
		r->status[n] = ok ? 1 : 2;
		r->count[n]++;
	}
	if (r->norder < MAXMSG) {
		r->order[r->norder++] = n;
	}
}

struct fx {
	rd_kafka_t *owner;
	rd_kafka_mock_cluster_t *mc;
	struct producer *p;
	struct reports r;
	int wake[2];
	struct kv settings;
};

static struct fx *
fx_new(int nbrokers)
{
	struct fx *f = calloc(1, sizeof(*f));
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char err[512];

	ck_assert_ptr_nonnull(f);
	/* Quiet owner: it only hosts the cluster. */
	rd_kafka_conf_set(conf, "log_level", "0", err, sizeof(err));
	f->owner = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
	ck_assert_msg(f->owner != NULL, "%s", err);
	f->mc = rd_kafka_mock_cluster_new(f->owner, nbrokers);
	ck_assert_ptr_nonnull(f->mc);
	ck_assert_int_eq(pipe(f->wake), 0);
	fcntl(f->wake[0], F_SETFL, O_NONBLOCK);
	fcntl(f->wake[1], F_SETFL, O_NONBLOCK);
	f->settings = KV_INIT;
	kv_set(&f->settings, "bootstrap.servers", rd_kafka_mock_cluster_bootstraps(f->mc), NULL);
	/* As test 0144: quick reconnects, one message per request so sequences are per message. */
	kv_set(&f->settings, "socket.connection.setup.timeout.ms", "5000", NULL);
	kv_set(&f->settings, "reconnect.backoff.max.ms", "2000", NULL);
	return f;
}

static void
fx_start(struct fx *f)
{
	char err[512];

	ck_assert_msg(producer_new(&f->settings, f->wake[1], on_delivery, &f->r, &f->p, err,
				   sizeof(err)) == 0,
		      "%s", err);
}

static void
fx_free(struct fx *f)
{
	producer_free(f->p);
	rd_kafka_mock_cluster_destroy(f->mc);
	rd_kafka_destroy(f->owner);
	kv_fini(&f->settings);
	close(f->wake[0]);
	close(f->wake[1]);
	free(f);
}

static int
send_n(struct fx *f, const char *topic, int partition, int from, int n)
{
	for (int i = from; i < from + n; i++) {
		char key[32], val[32];
		struct sink_header h = { "id", val, 0 };
		struct sink_record rec = { .topic = topic, .partition = partition };
		int rc;

		snprintf(key, sizeof(key), "agg-%d", partition < 0 ? i % 7 : 0);
		snprintf(val, sizeof(val), "%d", i);
		h.len = strlen(val);
		rec.key = key;
		rec.key_len = strlen(key);
		rec.value = val;
		rec.value_len = strlen(val);
		rec.headers = &h;
		rec.nheaders = 1;
		while ((rc = producer_send(f->p, &rec, (void *)(intptr_t)i, NULL, 0)) == -EAGAIN) {
			producer_poll(f->p);
			usleep(1000);
		}
		if (rc != 0) {
			return rc;
		}
	}
	return 0;
}

/* Flush until every sent message has a report or @timeout_ms passed. */
static void
drain(struct fx *f, int expect, int timeout_ms)
{
	int after_fatal = 0;

	/* After a fatal error, in-flight messages may never be reported: give them 2 s. */
	for (int waited = 0;
	     f->r.ok + f->r.failed < expect && waited < timeout_ms && after_fatal < 2000;
	     waited += 100) {
		producer_flush(f->p, 100);
		producer_poll(f->p);
		if (producer_fatal(f->p, NULL, 0)) {
			after_fatal += 100;
		}
	}
}

/*
 * Reads partition @part of @topic from the beginning to its end; returns the values (message
 * numbers) in log order in @out, their count as the result.
 */
static int
read_back(struct fx *f, const char *topic, int part, int *out, int max)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new(1);
	char err[512];
	rd_kafka_t *c;
	int n = 0;

	rd_kafka_conf_set(conf, "bootstrap.servers", rd_kafka_mock_cluster_bootstraps(f->mc), err,
			  sizeof(err));
	rd_kafka_conf_set(conf, "group.id", "readback", err, sizeof(err));
	rd_kafka_conf_set(conf, "enable.partition.eof", "true", err, sizeof(err));
	rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof(err));
	c = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	rd_kafka_topic_partition_list_add(tp, topic, part)->offset = RD_KAFKA_OFFSET_BEGINNING;
	ck_assert_int_eq(rd_kafka_assign(c, tp), 0);
	for (int tries = 0; tries < 300; tries++) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 100);

		if (!m) {
			continue;
		}
		if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
			rd_kafka_message_destroy(m);
			break;
		}
		if (!m->err && n < max) {
			char v[32] = "";

			snprintf(v, sizeof(v), "%.*s", (int)m->len, (const char *)m->payload);
			out[n++] = atoi(v);
		}
		rd_kafka_message_destroy(m);
	}
	rd_kafka_topic_partition_list_destroy(tp);
	rd_kafka_consumer_close(c);
	rd_kafka_destroy(c);
	return n;
}

/*
 * The log of one partition holds @sent[0..] as a gap-free, duplicate-free prefix in order,
 * and every message reported delivered is in it.
 */
static void
assert_prefix(struct fx *f, const char *topic, int part, const int *sent, int nsent)
{
	static int log_[MAXMSG];
	int n = read_back(f, topic, part, log_, MAXMSG);

	ck_assert_msg(n <= nsent, "%s[%d]: %d records in the log, %d sent (duplicates)", topic,
		      part, n, nsent);
	for (int i = 0; i < n; i++) {
		ck_assert_msg(log_[i] == sent[i],
			      "%s[%d]: offset %d holds message %d, expected %d (gap, duplicate or "
			      "reorder)",
			      topic, part, i, log_[i], sent[i]);
	}
	for (int i = n; i < nsent; i++) {
		ck_assert_msg(
			f->r.status[sent[i]] != 1,
			"%s[%d]: message %d reported delivered but not in the log (%d records)",
			topic, part, sent[i], n);
	}
}

/*
 * At-least-once after #4438's recovery: librdkafka 2.3.0 and later recover from those sequence
 * errors without a fatal error, and a batch the broker had written before the disconnect can be
 * written again (seen with 2.8.0's mock cluster: up to 5 copies in this test). So the log's first
 * occurrences must be @sent[0..] as a gap-free prefix in order, copies may follow, and every
 * message reported delivered is in it. Return: the number of copies.
 */
static int
assert_prefix_allowing_copies(struct fx *f, const char *topic, int part, const int *sent, int nsent)
{
	static int log_[MAXMSG];
	static bool seen[MAXMSG];
	int n = read_back(f, topic, part, log_, MAXMSG), firsts = 0;

	memset(seen, 0, sizeof(seen));
	for (int i = 0; i < n; i++) {
		ck_assert_msg(log_[i] >= 0 && log_[i] < MAXMSG, "%s[%d]: offset %d holds %d", topic,
			      part, i, log_[i]);
		if (seen[log_[i]]) {
			continue;
		}
		ck_assert_msg(
			firsts < nsent && log_[i] == sent[firsts],
			"%s[%d]: offset %d holds message %d first, expected %d (gap or reorder)",
			topic, part, i, log_[i], firsts < nsent ? sent[firsts] : -1);
		seen[log_[i]] = true;
		firsts++;
	}
	for (int i = firsts; i < nsent; i++) {
		ck_assert_msg(f->r.status[sent[i]] != 1,
			      "%s[%d]: message %d reported delivered but not in the log", topic,
			      part, sent[i]);
	}
	return n - firsts;
}

static void
seq(int *a, int from, int n)
{
	for (int i = 0; i < n; i++) {
		a[i] = from + i;
	}
}

static void
assert_one_report_each(const struct fx *f, int n)
{
	for (int i = 0; i < n; i++) {
		ck_assert_msg(f->r.count[i] == 1, "message %d got %d delivery reports", i,
			      f->r.count[i]);
	}
}

START_TEST(test_retriable_errors_delivered)
{
	struct fx *f = fx_new(3);
	static int sent[MAXMSG];
	char fatal[256];

	ck_assert_int_eq(rd_kafka_mock_topic_create(f->mc, "t", 1, 3), 0);
	fx_start(f);
	rd_kafka_mock_push_request_errors(
		f->mc, PRODUCE, 5, RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
		RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
		RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND, RD_KAFKA_RESP_ERR__TRANSPORT);
	ck_assert_int_eq(send_n(f, "t", 0, 0, 200), 0);
	drain(f, 200, 30000);
	ck_assert_msg(f->r.ok == 200 && f->r.failed == 0, "%d ok, %d failed (%s)", f->r.ok,
		      f->r.failed, f->r.reason);
	ck_assert_msg(!producer_fatal(f->p, fatal, sizeof(fatal)), "fatal: %s", fatal);
	assert_one_report_each(f, 200);
	seq(sent, 0, 200);
	assert_prefix(f, "t", 0, sent, 200);
	fx_free(f);
}
END_TEST

/*
 * A topic the broker does not create (no auto-creation, no topic.creation.*): the metadata says
 * it is unknown, its record fails, and the producer reports a refusal naming the topic and
 * both ways out (exit 2 once), rather than a poison row or a restart loop.
 */
START_TEST(test_a_topic_nobody_creates_is_a_precondition_naming_both_fixes)
{
	struct fx *f = fx_new(1);
	char err[1024] = "";

	kv_set(&f->settings, "topic.metadata.propagation.max.ms", "500", NULL);
	ck_assert_int_eq(rd_kafka_mock_topic_create(f->mc, "never.created", 1, 1), 0);
	rd_kafka_mock_topic_set_error(f->mc, "never.created",
				      RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
	fx_start(f);
	ck_assert_int_eq(send_n(f, "never.created", -1, 0, 1), 0);
	drain(f, 1, 20000);
	ck_assert_msg(f->r.failed == 1, "%d ok, %d failed", f->r.ok, f->r.failed);
	ck_assert(producer_precondition(f->p, err, sizeof(err)));
	ck_assert_msg(strstr(err, "topic never.created does not exist") &&
			      strstr(err, "set topic.creation.default.partitions"),
		      "%s", err);
	fx_free(f);
}
END_TEST

/*
 * A record failed as of an unknown topic that exists when outboxd asks (a broker creating it
 * automatically after an outage the record waited through): no refusal; the failed record
 * restarts the session instead.
 */
START_TEST(test_an_unknown_topic_that_exists_when_asked_is_no_precondition)
{
	struct fx *f = fx_new(1);
	char err[1024] = "";

	kv_set(&f->settings, "topic.metadata.propagation.max.ms", "500", NULL);
	ck_assert_int_eq(rd_kafka_mock_topic_create(f->mc, "late.topic", 1, 1), 0);
	rd_kafka_mock_topic_set_error(f->mc, "late.topic", RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
	fx_start(f);
	ck_assert_int_eq(send_n(f, "late.topic", -1, 0, 1), 0);
	drain(f, 1, 20000);
	ck_assert_msg(f->r.failed == 1, "%d ok, %d failed", f->r.ok, f->r.failed);
	rd_kafka_mock_topic_set_error(f->mc, "late.topic", RD_KAFKA_RESP_ERR_NO_ERROR);
	ck_assert_msg(!producer_precondition(f->p, err, sizeof(err)), "%s", err);
	fx_free(f);
}
END_TEST

/* A permanent error from the broker: failed reports, no success after a failure, no gap. */
static void
permanent_error(rd_kafka_resp_err_t err, const char *name)
{
	struct fx *f = fx_new(1);
	static int sent[MAXMSG];
	int first_failed = -1;

	ck_assert_int_eq(rd_kafka_mock_topic_create(f->mc, "t", 1, 1), 0);
	fx_start(f);
	/* Ten delivered first, then the broker refuses a request. */
	ck_assert_int_eq(send_n(f, "t", 0, 0, 10), 0);
	drain(f, 10, 10000);
	ck_assert_int_eq(f->r.ok, 10);
	rd_kafka_mock_push_request_errors(f->mc, PRODUCE, 1, err);
	(void)send_n(f, "t", 0, 10, 90); /* may fail synchronously once the topic is refused */
	drain(f, 100, 20000);
	ck_assert_msg(f->r.failed > 0, "%s: every message reported delivered (%d ok)", name,
		      f->r.ok);
	ck_assert_msg(f->r.ok + f->r.failed == 100, "%s: %d ok + %d failed of 100 reports", name,
		      f->r.ok, f->r.failed);
	assert_one_report_each(f, 100);
	/* In message order: once one failed, none after it succeeded (no gap to skip over). */
	for (int i = 0; i < 100; i++) {
		if (f->r.status[i] == 2 && first_failed < 0) {
			first_failed = i;
		}
		ck_assert_msg(first_failed < 0 || f->r.status[i] == 2,
			      "%s: message %d delivered after message %d failed", name, i,
			      first_failed);
	}
	seq(sent, 0, 100);
	assert_prefix(f, "t", 0, sent, 100);
	fx_free(f);
}

START_TEST(test_msg_size_too_large_is_failed_delivery)
{
	permanent_error(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE, "MSG_SIZE_TOO_LARGE");
}
END_TEST

START_TEST(test_topic_authorization_failed_is_failed_delivery)
{
	permanent_error(RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, "TOPIC_AUTHORIZATION_FAILED");
}
END_TEST

START_TEST(test_out_of_order_sequence_is_fatal)
{
	struct fx *f = fx_new(1);
	static int sent[MAXMSG];
	char fatal[256] = "";
	int rc;

	ck_assert_int_eq(rd_kafka_mock_topic_create(f->mc, "t", 1, 1), 0);
	fx_start(f);
	ck_assert_int_eq(send_n(f, "t", 0, 0, 10), 0);
	drain(f, 10, 10000);
	ck_assert_int_eq(f->r.ok, 10);
	rd_kafka_mock_push_request_errors(f->mc, PRODUCE, 1,
					  RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
	send_n(f, "t", 0, 10, 20);
	for (int i = 0; i < 100 && !producer_fatal(f->p, NULL, 0); i++) {
		producer_flush(f->p, 100);
	}
	ck_assert_msg(producer_fatal(f->p, fatal, sizeof(fatal)),
		      "no fatal error after OUT_OF_ORDER_SEQUENCE_NUMBER (%d ok, %d failed)",
		      f->r.ok, f->r.failed);
	ck_assert_msg(strlen(fatal) > 0, "fatal error without text");
	rc = send_n(f, "t", 0, 30, 1);
	ck_assert_msg(rc == -ESHUTDOWN, "send after the fatal error returned %d, not -ESHUTDOWN",
		      rc);
	drain(f, 30, 10000);
	ck_assert_msg(f->r.ok < 30, "every message reported delivered despite the fatal error");
	seq(sent, 0, 30);
	assert_prefix(f, "t", 0, sent, 30);
	fx_free(f);
}
END_TEST

/*
 * librdkafka test 0144 (issue 4438, fixed in 2.3.0): n requests in flight when the broker
 * disconnects; after reconnecting the first retry gets NOT_ENOUGH_REPLICAS, the rest
 * OUT_OF_ORDER_SEQUENCE_NUMBER. On 2.0.2 this raises a spurious fatal error; 2.3.0 and later
 * recover, and may write a batch twice. Whatever the version does, the
 * module must not lose anything silently: either everything is delivered (at least once, first
 * copies in send order, one report each), or producer_fatal() says so and no delivered message
 * follows a gap.
 */
START_TEST(test_issue_4438_disconnect_sequence)
{
	int n = _i + 1;
	struct fx *f = fx_new(1);
	static int sent[MAXMSG];
	char fatal[256] = "";
	bool is_fatal;

	ck_assert_int_eq(rd_kafka_mock_topic_create(f->mc, "t", 1, 1), 0);
	kv_set(&f->settings, "batch.num.messages", "1", NULL);
	kv_set(&f->settings, "linger.ms", "0", NULL);
	/* the n requests in flight of librdkafka's test (outboxd's own default is one) */
	kv_set(&f->settings, "max.in.flight.requests.per.connection", "5", NULL);
	fx_start(f);
	ck_assert_int_eq(send_n(f, "t", 0, 0, 5), 0);
	drain(f, 5, 10000);
	ck_assert_int_eq(f->r.ok, 5);
	for (int i = 0; i < n; i++) {
		rd_kafka_mock_broker_push_request_error_rtts(f->mc, 1, PRODUCE, 1,
							     RD_KAFKA_RESP_ERR_NO_ERROR, 750);
	}
	for (int i = 0; i < 5; i++) {
		rd_kafka_mock_broker_push_request_error_rtts(
			f->mc, 1, PRODUCE, 1,
			i == 0 ? RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS :
				 RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER,
			i == 0 ? 750 : 1);
	}
	send_n(f, "t", 0, 5, n);
	for (int i = 0; i < 25; i++) {
		producer_poll(f->p);
		usleep(10000);
	}
	rd_kafka_mock_broker_set_down(f->mc, 1);
	usleep(250000);
	send_n(f, "t", 0, 5 + n, 5 - n);
	rd_kafka_mock_broker_set_up(f->mc, 1);
	drain(f, 10, 30000);
	is_fatal = producer_fatal(f->p, fatal, sizeof(fatal));
	seq(sent, 0, 10);
	if (!is_fatal) {
		int copies;

		ck_assert_msg(f->r.ok == 10, "n=%d: no fatal error, but %d ok, %d failed (%s)", n,
			      f->r.ok, f->r.failed, f->r.reason);
		copies = assert_prefix_allowing_copies(f, "t", 0, sent, 10);
		fprintf(stderr, "issue 4438 n=%d: librdkafka %s recovered; %d copies in the log\n",
			n, rd_kafka_version_str(), copies);
	} else {
		/* 2.0.2: the spurious fatal error; it must be visible, and reports must say so. */
		ck_assert_msg(f->r.ok < 10 || f->r.ok + f->r.failed <= 10,
			      "n=%d: fatal (%s) yet %d ok", n, fatal, f->r.ok);
		fprintf(stderr, "issue 4438 n=%d: fatal error as expected on librdkafka %s: %s\n",
			n, rd_kafka_version_str(), fatal);
	}
	for (int i = 0; i < 10; i++) {
		ck_assert_msg(f->r.count[i] <= 1, "n=%d: message %d got %d reports", n, i,
			      f->r.count[i]);
	}
	if (is_fatal) {
		assert_prefix(f, "t", 0, sent, 10);
	}
	fx_free(f);
}
END_TEST

/*
 * One of two partition leaders is slow (RTT 1.5 s): everything is delivered, the slow
 * partition's reports come after later messages of the fast one (so only a prefix rule may
 * confirm), and each partition's log is in send order.
 */
START_TEST(test_slow_leader_still_delivers_everything_in_partition_order)
{
	struct fx *f = fx_new(2);
	static int sent0[MAXMSG], sent1[MAXMSG];
	int n0 = 0, n1 = 0, first_slow = -1, last_fast = -1;

	ck_assert_int_eq(rd_kafka_mock_topic_create(f->mc, "t", 2, 1), 0);
	rd_kafka_mock_partition_set_leader(f->mc, "t", 0, 1);
	rd_kafka_mock_partition_set_leader(f->mc, "t", 1, 2);
	fx_start(f);
	/* Warm up both connections, then slow down broker 1. */
	ck_assert_int_eq(send_n(f, "t", 0, 0, 1), 0);
	ck_assert_int_eq(send_n(f, "t", 1, 1, 1), 0);
	drain(f, 2, 10000);
	ck_assert_int_eq(f->r.ok, 2);
	sent0[n0++] = 0;
	sent1[n1++] = 1;
	rd_kafka_mock_broker_set_rtt(f->mc, 1, 1500);
	for (int i = 2; i < 102; i++) {
		int part = i % 2;

		ck_assert_int_eq(send_n(f, "t", part, i, 1), 0);
		if (part == 0) {
			sent0[n0++] = i;
		} else {
			sent1[n1++] = i;
		}
	}
	drain(f, 102, 30000);
	ck_assert_msg(f->r.ok == 102, "%d ok, %d failed (%s)", f->r.ok, f->r.failed, f->r.reason);
	for (int i = 0; i < f->r.norder; i++) {
		if (f->r.order[i] >= 2 && f->r.order[i] % 2 == 0 && first_slow < 0) {
			first_slow = i;
		}
		if (f->r.order[i] >= 2 && f->r.order[i] % 2 == 1) {
			last_fast = i;
		}
	}
	ck_assert_msg(first_slow > last_fast,
		      "the slow leader's reports did not trail the fast one's (first slow at %d, "
		      "last fast at %d)",
		      first_slow, last_fast);
	rd_kafka_mock_broker_set_rtt(f->mc, 1, 0);
	assert_one_report_each(f, 102);
	assert_prefix(f, "t", 0, sent0, n0);
	assert_prefix(f, "t", 1, sent1, n1);
	fx_free(f);
}
END_TEST

/* All brokers down for a while: nothing fails (timeouts are off), all delivered after. */
START_TEST(test_brokers_down_fail_nothing_and_everything_is_delivered_after)
{
	struct fx *f = fx_new(1);
	static int sent[MAXMSG];

	ck_assert_int_eq(rd_kafka_mock_topic_create(f->mc, "t", 1, 1), 0);
	fx_start(f);
	ck_assert_int_eq(send_n(f, "t", 0, 0, 10), 0);
	drain(f, 10, 10000);
	rd_kafka_mock_broker_set_down(f->mc, 1);
	ck_assert_int_eq(send_n(f, "t", 0, 10, 50), 0);
	drain(f, 60, 3000);
	ck_assert_msg(f->r.failed == 0, "%d failed while the broker was down (%s)", f->r.failed,
		      f->r.reason);
	ck_assert_int_gt(producer_queue_len(f->p), 0);
	rd_kafka_mock_broker_set_up(f->mc, 1);
	drain(f, 60, 30000);
	ck_assert_msg(f->r.ok == 60, "%d ok, %d failed (%s)", f->r.ok, f->r.failed, f->r.reason);
	seq(sent, 0, 60);
	assert_prefix(f, "t", 0, sent, 60);
	fx_free(f);
}
END_TEST

/*
 * A started producer whose record 0 is delivered, then @n more (1..@n) sent to the broker with
 * its answers delayed by @rtt_ms and @poll_ms later: requests are out, none answered yet.
 */
static struct fx *
in_flight_to_slow_broker(int rtt_ms, int n, int poll_ms)
{
	struct fx *f = fx_new(1);

	ck_assert_int_eq(rd_kafka_mock_topic_create(f->mc, "t", 1, 1), 0);
	kv_set(&f->settings, "linger.ms", "0", NULL);
	fx_start(f);
	ck_assert_int_eq(send_n(f, "t", 0, 0, 1), 0);
	drain(f, 1, 10000);
	rd_kafka_mock_broker_set_rtt(f->mc, 1, rtt_ms);
	ck_assert_int_eq(send_n(f, "t", 0, 1, n), 0);
	for (int i = 0; i < poll_ms / 10; i++) {
		producer_poll(f->p);
		usleep(10000);
	}
	return f;
}

/*
 * A restart discards its producer (producer_discard()). What is in flight to a broker that
 * answers is acknowledged, not purged, so librdkafka raises no fatal error; what was queued and
 * not yet sent is purged; the log has no gap.
 */
START_TEST(test_discard_lets_in_flight_be_acknowledged)
{
	struct fx *f = in_flight_to_slow_broker(400, 200, 100);
	static int sent[MAXMSG];
	char fatal[512] = "x";
	int purged, n;

	purged = producer_discard(f->p, 5000, fatal, sizeof(fatal));
	f->p = NULL;
	ck_assert_msg(purged == 0, "%d records purged in flight although the broker answers",
		      purged);
	ck_assert_msg(fatal[0] == '\0', "fatal error while discarding: %s", fatal);
	ck_assert_msg(f->r.ok > 1, "nothing in flight was acknowledged (%d ok, %d failed)", f->r.ok,
		      f->r.failed);
	ck_assert_int_eq(f->r.ok + f->r.failed, 201);
	rd_kafka_mock_broker_set_rtt(f->mc, 1, 0);
	n = 0;
	for (int i = 0; i < 201; i++) {
		if (f->r.status[i] == 1) {
			sent[n++] = i;
		}
	}
	assert_prefix(f, "t", 0, sent, n);
	fx_free(f);
}
END_TEST

/*
 * A broker that does not answer (a frozen one): after the wait, what is still in flight is
 * purged and librdkafka raises its fatal gap-less error ("Purged in flight"), which the discard
 * reports once. It ends that producer only: the next one on the same cluster delivers everything,
 * without a fatal error, in order after whatever of the purged records the broker had written.
 */
START_TEST(test_discard_of_a_frozen_broker_poisons_no_later_producer)
{
	struct fx *f = in_flight_to_slow_broker(20000, 5, 200);
	static int sent[MAXMSG];
	char fatal[512] = "";
	int purged, n;

	purged = producer_discard(f->p, 300, fatal, sizeof(fatal));
	f->p = NULL;
	ck_assert_msg(purged > 0, "nothing was in flight to purge");
	ck_assert_msg(fatal[0] != '\0', "no fatal error reported for %d purged in flight", purged);
	fprintf(stderr, "discard with %d in flight on librdkafka %s: %s\n", purged,
		rd_kafka_version_str(), fatal);
	ck_assert_int_eq(f->r.ok, 1);
	ck_assert_int_eq(f->r.failed, 5);
	rd_kafka_mock_broker_set_rtt(f->mc, 1, 0);
	memset(&f->r, 0, sizeof(f->r));
	fx_start(f);
	ck_assert_int_eq(send_n(f, "t", 0, 10, 20), 0);
	drain(f, 30, 20000);
	ck_assert_msg(!producer_fatal(f->p, fatal, sizeof(fatal)), "the next producer: %s", fatal);
	ck_assert_msg(f->r.ok == 20, "the next producer: %d ok, %d failed (%s)", f->r.ok,
		      f->r.failed, f->r.reason);
	/* the purged five were possibly written (the broker appended before its slow answer) */
	n = read_back(f, "t", 0, sent, MAXMSG);
	ck_assert_msg(n >= 21 && n <= 26 && sent[0] == 0, "%d records, first %d", n, sent[0]);
	for (int i = 1; i < n - 20; i++) {
		ck_assert_msg(sent[i] == i, "offset %d holds %d: the purged ones out of order", i,
			      sent[i]);
	}
	for (int i = 0; i < 20; i++) {
		ck_assert_msg(sent[n - 20 + i] == 10 + i, "offset %d holds %d, expected %d",
			      n - 20 + i, sent[n - 20 + i], 10 + i);
	}
	fx_free(f);
}
END_TEST

/* A fatal error raised before the discard is the caller's news already: not reported again. */
START_TEST(test_discard_does_not_repeat_an_earlier_fatal_error)
{
	struct fx *f = fx_new(1);
	char fatal[512] = "x";

	ck_assert_int_eq(rd_kafka_mock_topic_create(f->mc, "t", 1, 1), 0);
	fx_start(f);
	ck_assert_int_eq(send_n(f, "t", 0, 0, 10), 0);
	drain(f, 10, 10000);
	rd_kafka_mock_push_request_errors(f->mc, PRODUCE, 1,
					  RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
	send_n(f, "t", 0, 10, 5);
	for (int i = 0; i < 100 && !producer_fatal(f->p, NULL, 0); i++) {
		producer_flush(f->p, 100);
	}
	ck_assert(producer_fatal(f->p, NULL, 0));
	(void)producer_discard(f->p, 300, fatal, sizeof(fatal));
	f->p = NULL;
	ck_assert_msg(fatal[0] == '\0', "an earlier fatal error reported again: %s", fatal);
	fx_free(f);
}
END_TEST

static Suite *
producer_faults_suite(void)
{
	Suite *s = suite_create("producer_faults");
	TCase *tc = tcase_create("mock");

	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_retriable_errors_delivered);
	tcase_add_test(tc, test_msg_size_too_large_is_failed_delivery);
	tcase_add_test(tc, test_topic_authorization_failed_is_failed_delivery);
	tcase_add_test(tc, test_out_of_order_sequence_is_fatal);
	tcase_add_test(tc, test_discard_lets_in_flight_be_acknowledged);
	tcase_add_test(tc, test_discard_of_a_frozen_broker_poisons_no_later_producer);
	tcase_add_test(tc, test_discard_does_not_repeat_an_earlier_fatal_error);
	tcase_add_test(tc, test_a_topic_nobody_creates_is_a_precondition_naming_both_fixes);
	tcase_add_test(tc, test_an_unknown_topic_that_exists_when_asked_is_no_precondition);
	tcase_add_loop_test(tc, test_issue_4438_disconnect_sequence, 0, 5);
	tcase_add_test(tc, test_slow_leader_still_delivers_everything_in_partition_order);
	tcase_add_test(tc, test_brokers_down_fail_nothing_and_everything_is_delivered_after);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(producer_faults_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
