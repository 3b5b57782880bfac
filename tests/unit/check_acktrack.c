/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "outboxd/relay/acktrack.h"

/* One transaction with @rows rows produced, committed at @end. Returns its sequence number. */
static uint64_t
txn(struct acktrack *at, lsn_t end, int rows)
{
	uint64_t seq = acktrack_begin(at, end - 0x30);

	ck_assert_uint_ne(seq, 0);
	for (int i = 0; i < rows; i++) {
		ck_assert_int_eq(acktrack_row_produced(at, seq, 1), 0);
	}
	ck_assert_int_eq(acktrack_commit(at, end - 0x30, end), 0);
	return seq;
}

START_TEST(test_confirm_after_all_delivered)
{
	struct acktrack *at = acktrack_new(0x100);
	uint64_t s = txn(at, 0x1000, 3);

	ck_assert_uint_eq(acktrack_confirmed(at), 0x100);
	ck_assert_int_eq(acktrack_row_delivered(at, s, true), 0);
	ck_assert_int_eq(acktrack_row_delivered(at, s, true), 0);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x100);
	ck_assert_int_eq(acktrack_row_delivered(at, s, true), 0);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x1000);
	ck_assert_uint_eq(acktrack_pending_txns(at), 0);
	acktrack_free(at);
}
END_TEST

START_TEST(test_only_contiguous_prefix)
{
	struct acktrack *at = acktrack_new(0);
	uint64_t a = txn(at, 0x1000, 1);
	uint64_t b = txn(at, 0x2000, 1);
	uint64_t c = txn(at, 0x3000, 1);

	/* reports arrive out of order across partitions */
	acktrack_row_delivered(at, c, true);
	acktrack_row_delivered(at, b, true);
	ck_assert_uint_eq(acktrack_confirmed(at), 0);
	acktrack_row_delivered(at, a, true);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x3000);
	acktrack_free(at);
}
END_TEST

START_TEST(test_not_before_commit)
{
	struct acktrack *at = acktrack_new(0);
	uint64_t s = acktrack_begin(at, 0x500);

	acktrack_row_produced(at, s, 1);
	acktrack_row_delivered(at, s, true);
	/* every row is acked but the Commit has not arrived: nothing to confirm */
	ck_assert_uint_eq(acktrack_confirmed(at), 0);
	ck_assert_uint_eq(acktrack_open_txn(at), s);
	ck_assert_int_eq(acktrack_commit(at, 0x500, 0x530), 0);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x530);
	ck_assert_uint_eq(acktrack_open_txn(at), 0);
	acktrack_free(at);
}
END_TEST

START_TEST(test_empty_transaction_confirms)
{
	struct acktrack *at = acktrack_new(0);

	txn(at, 0x700, 0);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x700);
	acktrack_free(at);
}
END_TEST

START_TEST(test_keepalive_only_when_idle)
{
	struct acktrack *at = acktrack_new(0x100);
	uint64_t s;

	acktrack_keepalive(at, 0x200);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x200);
	/* open transaction: no */
	s = acktrack_begin(at, 0x300);
	acktrack_keepalive(at, 0x280);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x200);
	acktrack_row_produced(at, s, 1);
	acktrack_commit(at, 0x300, 0x330);
	/* committed but in flight: no */
	acktrack_keepalive(at, 0x400);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x200);
	acktrack_row_delivered(at, s, true);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x330);
	acktrack_keepalive(at, 0x400);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x400);
	acktrack_free(at);
}
END_TEST

START_TEST(test_never_backwards)
{
	struct acktrack *at = acktrack_new(0x900);

	acktrack_keepalive(at, 0x100);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x900);
	txn(at, 0x800, 0); /* a replayed, older commit after a server crash */
	ck_assert_uint_eq(acktrack_confirmed(at), 0x900);
	acktrack_free(at);
}
END_TEST

START_TEST(test_failed_delivery_blocks)
{
	struct acktrack *at = acktrack_new(0);
	uint64_t a = txn(at, 0x1000, 1);
	uint64_t b = txn(at, 0x2000, 2);
	uint64_t c = txn(at, 0x3000, 1);

	acktrack_row_delivered(at, a, true);
	acktrack_row_delivered(at, b, true);
	acktrack_row_delivered(at, b, false);
	acktrack_row_delivered(at, c, true);
	ck_assert(acktrack_failed(at));
	/* a is safe, b failed, c must wait behind b */
	ck_assert_uint_eq(acktrack_confirmed(at), 0x1000);
	acktrack_keepalive(at, 0x5000);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x1000);
	acktrack_reset(at);
	ck_assert(!acktrack_failed(at));
	ck_assert_uint_eq(acktrack_pending_txns(at), 0);
	ck_assert_uint_eq(acktrack_in_flight(at), 0);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x1000);
	/* late reports of purged rows are refused, not counted */
	ck_assert_int_eq(acktrack_row_delivered(at, c, true), -EINVAL);
	acktrack_free(at);
}
END_TEST

START_TEST(test_oldest_wait)
{
	struct acktrack *at = acktrack_new(0);
	uint64_t a = acktrack_begin(at, 0x10);
	uint64_t b;

	ck_assert_int_eq(acktrack_oldest_wait_since(at), 0);
	acktrack_row_produced(at, a, 100);
	acktrack_row_produced(at, a, 150);
	acktrack_commit(at, 0x10, 0x40);
	b = acktrack_begin(at, 0x50);
	acktrack_row_produced(at, b, 200);
	ck_assert_int_eq(acktrack_oldest_wait_since(at), 100);
	acktrack_row_delivered(at, a, true);
	acktrack_row_delivered(at, a, true);
	ck_assert_int_eq(acktrack_oldest_wait_since(at), 200);
	acktrack_row_delivered(at, b, true);
	ck_assert_int_eq(acktrack_oldest_wait_since(at), 0);
	acktrack_free(at);
}
END_TEST

/* Commit times: the oldest pending one (the lag), the newest confirmed one, per transaction. */
START_TEST(test_commit_times_of_pending_and_confirmed)
{
	struct acktrack *at = acktrack_new(0);
	uint64_t a = acktrack_begin(at, 0x10), b;

	ck_assert_int_eq(acktrack_oldest_commit_time(at), 0);
	ck_assert_int_eq(acktrack_set_commit_time(at, a, 1000), 0);
	ck_assert_int_eq(acktrack_set_commit_time(at, a + 7, 1000), -EINVAL);
	acktrack_row_produced(at, a, 1);
	acktrack_commit(at, 0x10, 0x40);
	b = acktrack_begin(at, 0x50);
	acktrack_set_commit_time(at, b, 2000);
	acktrack_row_produced(at, b, 2);
	acktrack_commit(at, 0x50, 0x60);
	ck_assert_int_eq(acktrack_oldest_commit_time(at), 1000);
	ck_assert_int_eq(acktrack_commit_time(at, b), 2000);
	ck_assert_int_eq(acktrack_confirmed_commit_time(at), 0);
	acktrack_row_delivered(at, b, true); /* b waits for a: nothing confirmed */
	ck_assert_uint_eq(acktrack_confirmed(at), 0);
	ck_assert_int_eq(acktrack_oldest_commit_time(at), 1000);
	acktrack_row_delivered(at, a, true);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x60);
	ck_assert_int_eq(acktrack_confirmed_commit_time(at), 2000);
	ck_assert_int_eq(acktrack_oldest_commit_time(at), 0); /* nothing pending: no lag */
	ck_assert_int_eq(acktrack_commit_time(at, a), 0);     /* popped */
	acktrack_free(at);
}
END_TEST

/*
 * Exactly-once: delivered is not enough, the Kafka transaction holding the position must have
 * committed (acktrack_limit()); keepalives stop at that position too; it never goes back.
 */
START_TEST(test_a_limit_holds_confirmation_at_kafkas_position)
{
	struct acktrack *at = acktrack_new(0x100);
	uint64_t a, b;

	acktrack_limit(at, 0x100);
	a = txn(at, 0x1000, 1);
	b = txn(at, 0x2000, 1);
	ck_assert_int_eq(acktrack_row_delivered(at, a, true), 0);
	ck_assert_int_eq(acktrack_row_delivered(at, b, true), 0);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x100); /* delivered, not committed in Kafka */
	acktrack_limit(at, 0x1000);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x1000);
	ck_assert_uint_eq(acktrack_pending_txns(at), 1);
	acktrack_limit(at, 0x1800); /* not a transaction's end: the next still waits */
	ck_assert_uint_eq(acktrack_confirmed(at), 0x1000);
	acktrack_limit(at, 0x800); /* never back */
	acktrack_limit(at, 0x2000);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x2000);
	/* idle: a keepalive confirms only up to the position */
	acktrack_keepalive(at, 0x3000);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x2000);
	ck_assert_uint_eq(acktrack_received(at), 0x3000);
	acktrack_limit(at, 0x3000); /* a unit holding only the position */
	acktrack_keepalive(at, 0x3000);
	ck_assert_uint_eq(acktrack_confirmed(at), 0x3000);
	acktrack_free(at);
}
END_TEST

START_TEST(test_protocol_misuse)
{
	struct acktrack *at = acktrack_new(0);
	uint64_t s;

	ck_assert_int_eq(acktrack_commit(at, 1, 2), -EINVAL);
	s = acktrack_begin(at, 0x10);
	ck_assert_uint_eq(acktrack_begin(at, 0x20), 0);
	ck_assert_int_eq(acktrack_row_delivered(at, s, true), -EINVAL);
	ck_assert_int_eq(acktrack_row_produced(at, s + 1, 1), -EINVAL);
	acktrack_free(at);
}
END_TEST

START_TEST(test_many_transactions_grow_ring)
{
	struct acktrack *at = acktrack_new(0);
	uint64_t seqs[1000];

	for (int i = 0; i < 1000; i++) {
		seqs[i] = txn(at, (lsn_t)(i + 1) * 0x100, 2);
	}
	ck_assert_uint_eq(acktrack_in_flight(at), 2000);
	for (int i = 999; i >= 1; i--) {
		acktrack_row_delivered(at, seqs[i], true);
		acktrack_row_delivered(at, seqs[i], true);
	}
	ck_assert_uint_eq(acktrack_confirmed(at), 0);
	acktrack_row_delivered(at, seqs[0], true);
	acktrack_row_delivered(at, seqs[0], true);
	ck_assert_uint_eq(acktrack_confirmed(at), 1000 * 0x100);
	ck_assert_uint_eq(acktrack_received(at), 1000 * 0x100);
	acktrack_free(at);
}
END_TEST

static Suite *
acktrack_suite(void)
{
	Suite *s = suite_create("acktrack");
	TCase *confirm = tcase_create("confirm-rule");
	TCase *keep = tcase_create("keepalive-rule");
	TCase *fail = tcase_create("failures");

	tcase_add_test(confirm, test_confirm_after_all_delivered);
	tcase_add_test(confirm, test_only_contiguous_prefix);
	tcase_add_test(confirm, test_not_before_commit);
	tcase_add_test(confirm, test_empty_transaction_confirms);
	tcase_add_test(confirm, test_many_transactions_grow_ring);
	tcase_add_test(confirm, test_a_limit_holds_confirmation_at_kafkas_position);
	tcase_add_test(keep, test_keepalive_only_when_idle);
	tcase_add_test(keep, test_never_backwards);
	tcase_add_test(fail, test_failed_delivery_blocks);
	tcase_add_test(fail, test_protocol_misuse);
	tcase_add_test(keep, test_oldest_wait);
	tcase_add_test(keep, test_commit_times_of_pending_and_confirmed);
	suite_add_tcase(s, confirm);
	suite_add_tcase(s, keep);
	suite_add_tcase(s, fail);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(acktrack_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
