/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kafka transactions on the producer (producer_txn.c), on librdkafka's mock cluster: a commit
 * in short slices while the coordinator is slow, an abort and the next transaction, a producer
 * fenced, and the classes of librdkafka's errors.
 * (The mock writes no transaction markers: what a read_committed consumer sees is proven on
 * the real broker, not here.)
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "outboxd/kafka/producer.h"
#include "outboxd/util/now.h"

#define END_TXN	 26 /* ApiKeys (rdkafka_proto.h is internal) */
#define SLICE_MS 10
#define BOUND_US (20 * 1000000LL)
#define TXN_ID	 "outboxd-test-txn"

struct reports {
	int ok, failed;
};

static void
on_delivery(void *opaque, void *msg_opaque, bool ok, const char *reason)
{
	struct reports *r = opaque;

	(void)msg_opaque;
	(void)reason;
	if (ok) {
		r->ok++;
	} else {
		r->failed++;
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
fx_new(void)
{
	struct fx *f = calloc(1, sizeof(*f));
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char err[512];

	ck_assert_ptr_nonnull(f);
	rd_kafka_conf_set(conf, "log_level", "0", err, sizeof(err));
	f->owner = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
	ck_assert_msg(f->owner != NULL, "%s", err);
	f->mc = rd_kafka_mock_cluster_new(f->owner, 3);
	ck_assert_ptr_nonnull(f->mc);
	ck_assert_int_eq(rd_kafka_mock_topic_create(f->mc, "t", 2, 3), 0);
	/* the transaction coordinator where the test can slow it down */
	ck_assert_int_eq(rd_kafka_mock_coordinator_set(f->mc, "transaction", TXN_ID, 1), 0);
	ck_assert_int_eq(pipe(f->wake), 0);
	fcntl(f->wake[0], F_SETFL, O_NONBLOCK);
	fcntl(f->wake[1], F_SETFL, O_NONBLOCK);
	f->settings = KV_INIT;
	kv_set(&f->settings, "bootstrap.servers", rd_kafka_mock_cluster_bootstraps(f->mc), NULL);
	kv_set(&f->settings, "transactional.id", TXN_ID, NULL);
	ck_assert_msg(producer_new(&f->settings, f->wake[1], on_delivery, &f->r, &f->p, err,
				   sizeof(err)) == 0,
		      "%s", err);
	return f;
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

/* @call until it is neither -EINPROGRESS nor -EAGAIN, within BOUND_US; how many slices it took. */
#define DRIVE(rc, slices, call)                                                                    \
	do {                                                                                       \
		int64_t until_ = now_monotonic_us() + BOUND_US;                                    \
		(slices) = 0;                                                                      \
		do {                                                                               \
			(rc) = (call);                                                             \
			(slices)++;                                                                \
			producer_poll(f->p);                                                       \
		} while (((rc) == -EINPROGRESS || (rc) == -EAGAIN) &&                              \
			 now_monotonic_us() < until_);                                             \
	} while (0)

static void
send_n(struct fx *f, int n)
{
	for (int i = 0; i < n; i++) {
		char key[16], val[16];
		struct sink_record rec = { .topic = "t", .partition = -1 };
		char err[256] = "";

		snprintf(key, sizeof(key), "agg-%d", i % 3);
		snprintf(val, sizeof(val), "%d", i);
		rec.key = key;
		rec.key_len = strlen(key);
		rec.value = val;
		rec.value_len = strlen(val);
		ck_assert_msg(producer_send(f->p, &rec, NULL, err, sizeof(err)) == 0, "%s", err);
	}
}

START_TEST(test_commit_in_slices_while_the_coordinator_is_slow)
{
	struct fx *f = fx_new();
	char err[512] = "";
	int rc, slices;

	DRIVE(rc, slices, producer_txn_init(f->p, SLICE_MS, err, sizeof(err)));
	ck_assert_msg(rc == 0, "init: %d %s", rc, err);
	ck_assert_int_eq(producer_txn_begin(f->p, err, sizeof(err)), 0);
	send_n(f, 20);
	/* EndTxn answered after 500 ms: the commit comes back in slices, then succeeds */
	ck_assert_int_eq(rd_kafka_mock_broker_push_request_error_rtts(
				 f->mc, 1, END_TXN, 1, RD_KAFKA_RESP_ERR_NO_ERROR, 500),
			 0);
	DRIVE(rc, slices, producer_txn_commit(f->p, SLICE_MS, err, sizeof(err)));
	ck_assert_msg(rc == 0, "commit: %d %s", rc, err);
	ck_assert_msg(slices >= 10, "the commit took %d slices of %d ms", slices, SLICE_MS);
	ck_assert_int_eq(f->r.ok, 20);
	ck_assert_int_eq(f->r.failed, 0);
	/* the next transaction */
	ck_assert_int_eq(producer_txn_begin(f->p, err, sizeof(err)), 0);
	send_n(f, 5);
	DRIVE(rc, slices, producer_txn_commit(f->p, SLICE_MS, err, sizeof(err)));
	ck_assert_msg(rc == 0, "second commit: %d %s", rc, err);
	ck_assert_int_eq(f->r.ok, 25);
	fx_free(f);
}
END_TEST

START_TEST(test_abort_then_the_next_transaction)
{
	struct fx *f = fx_new();
	char err[512] = "";
	int rc, slices;

	DRIVE(rc, slices, producer_txn_init(f->p, SLICE_MS, err, sizeof(err)));
	ck_assert_msg(rc == 0, "init: %d %s", rc, err);
	ck_assert_int_eq(producer_txn_begin(f->p, err, sizeof(err)), 0);
	send_n(f, 10);
	DRIVE(rc, slices, producer_txn_abort(f->p, SLICE_MS, err, sizeof(err)));
	ck_assert_msg(rc == 0, "abort: %d %s", rc, err);
	ck_assert_int_eq(f->r.ok + f->r.failed, 10); /* every record reported, either way */
	ck_assert_int_eq(producer_txn_begin(f->p, err, sizeof(err)), 0);
	send_n(f, 3);
	DRIVE(rc, slices, producer_txn_commit(f->p, SLICE_MS, err, sizeof(err)));
	ck_assert_msg(rc == 0, "commit after abort: %d %s", rc, err);
	ck_assert_int_eq(f->r.ok + f->r.failed, 13);
	/* a commit without a transaction is a call out of order */
	ck_assert_int_eq(producer_txn_commit(f->p, SLICE_MS, err, sizeof(err)), -EINVAL);
	fx_free(f);
}
END_TEST

/*
 * The coordinator says another producer took the transactional.id (what a second outboxd's
 * init causes on a real broker; the mock gives a second init a producer id of its own, so the
 * answer is injected): the commit is -EPERM, and so is every later call.
 */
START_TEST(test_a_fenced_producer_is_eperm)
{
	struct fx *f = fx_new();
	char err[512] = "";
	int rc, slices;

	DRIVE(rc, slices, producer_txn_init(f->p, SLICE_MS, err, sizeof(err)));
	ck_assert_msg(rc == 0, "init: %d %s", rc, err);
	ck_assert_int_eq(producer_txn_begin(f->p, err, sizeof(err)), 0);
	send_n(f, 5);
	rd_kafka_mock_push_request_errors(f->mc, END_TXN, 1, RD_KAFKA_RESP_ERR_PRODUCER_FENCED);
	DRIVE(rc, slices, producer_txn_commit(f->p, SLICE_MS, err, sizeof(err)));
	ck_assert_msg(rc == -EPERM, "the fenced commit: %d %s", rc, err);
	ck_assert_msg(strstr(err, "commit_transaction: "), "%s", err);
	ck_assert_int_eq(producer_txn_begin(f->p, err, sizeof(err)), -EPERM);
	ck_assert(producer_fatal(f->p, NULL, 0));
	fx_free(f);
}
END_TEST

START_TEST(test_error_classes)
{
	ck_assert_int_eq(producer_txn_class(RD_KAFKA_RESP_ERR__TIMED_OUT, true, false, false),
			 -EINPROGRESS);
	ck_assert_int_eq(
		producer_txn_class(RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, true, false, false),
		-EAGAIN);
	ck_assert_int_eq(producer_txn_class(RD_KAFKA_RESP_ERR__INCONSISTENT, false, true, false),
			 -ECANCELED);
	/* requires abort wins over retriable */
	ck_assert_int_eq(producer_txn_class(RD_KAFKA_RESP_ERR__TIMED_OUT, true, true, false),
			 -ECANCELED);
	ck_assert_int_eq(producer_txn_class(RD_KAFKA_RESP_ERR__FENCED, false, false, true), -EPERM);
	ck_assert_int_eq(producer_txn_class(RD_KAFKA_RESP_ERR_PRODUCER_FENCED, false, false, true),
			 -EPERM);
	ck_assert_int_eq(producer_txn_class(RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
					    false, false, true),
			 -EACCES);
	ck_assert_int_eq(producer_txn_class(RD_KAFKA_RESP_ERR_INVALID_TRANSACTION_TIMEOUT, false,
					    false, true),
			 -EACCES);
	ck_assert_int_eq(producer_txn_class(RD_KAFKA_RESP_ERR__OUTDATED, false, false, true), -EIO);
	ck_assert_int_eq(producer_txn_class(RD_KAFKA_RESP_ERR__STATE, false, false, false),
			 -EINVAL);
}
END_TEST

static Suite *
producer_txn_suite(void)
{
	Suite *s = suite_create("producer_txn");
	TCase *tc = tcase_create("mock");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_commit_in_slices_while_the_coordinator_is_slow);
	tcase_add_test(tc, test_abort_then_the_next_transaction);
	tcase_add_test(tc, test_a_fenced_producer_is_eperm);
	tcase_add_test(tc, test_error_classes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(producer_txn_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
