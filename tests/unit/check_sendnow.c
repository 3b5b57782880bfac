/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdlib.h>

#include "outboxd/relay/sendnow.h"

#define MS   INT64_C(1000)
#define WALL INT64_C(1765000000000000) /* an arbitrary Unix time, microseconds */

/* A live view at monotonic @now_ms: drained, the last commit 1 ms ago, the default window. */
static struct sendnow_view
live(int64_t now_ms, uint64_t produced)
{
	return (struct sendnow_view){ .now_us = now_ms * MS,
				      .wall_us = WALL,
				      .committed_us = WALL - 1 * MS,
				      .window_us = 100 * MS,
				      .produced = produced,
				      .drained = true,
				      .received = true };
}

static enum sendnow_act
decide(struct sendnow *sn, struct sendnow_view v, int64_t *at)
{
	*at = -1;
	return sendnow_decide(sn, &v, at);
}

START_TEST(test_live_records_are_sent_at_most_once_per_interval)
{
	struct sendnow sn = { 0 };
	int64_t at;

	ck_assert_int_eq(decide(&sn, live(1000, 1), &at), SENDNOW_SEND);
	ck_assert_uint_eq(sn.sent, 1);
	/* nothing new: nothing to send, the deadline is dropped */
	ck_assert_int_eq(decide(&sn, live(1001, 1), &at), SENDNOW_IDLE);
	/* a record 1 ms after the send waits for the deadline 2 ms after it */
	ck_assert_int_eq(decide(&sn, live(1001, 2), &at), SENDNOW_LATER);
	ck_assert_int_eq(at, 1000 * MS + SENDNOW_EVERY_US);
	ck_assert_uint_eq(sn.sent, 1);
	/* the deadline passes: sent, whatever else holds */
	struct sendnow_view v = live(1002, 3);
	v.due = true;
	v.drained = false;
	ck_assert_int_eq(decide(&sn, v, &at), SENDNOW_SEND);
	ck_assert_uint_eq(sn.sent, 3);
	ck_assert_int_eq(sn.sent_at, 1002 * MS);
	/* and 2 ms after that, live again, at once */
	ck_assert_int_eq(decide(&sn, live(1004, 4), &at), SENDNOW_SEND);
}
END_TEST

START_TEST(test_behind_the_server_linger_batches)
{
	struct sendnow sn = { 0 };
	int64_t at;
	struct sendnow_view v = live(1000, 5);

	/* the server has more to send: a catch-up */
	v.drained = false;
	ck_assert_int_eq(decide(&sn, v, &at), SENDNOW_KEEP);
	/* drained, but the last transaction committed longer ago than the window */
	v = live(1000, 5);
	v.committed_us = WALL - 100 * MS - 1;
	ck_assert_int_eq(decide(&sn, v, &at), SENDNOW_KEEP);
	/* exactly at the window's edge it is still live */
	v.committed_us = WALL - 100 * MS;
	ck_assert_int_eq(decide(&sn, v, &at), SENDNOW_SEND);
	/* no transaction read yet (a resumed session's replay) */
	v = live(2000, 6);
	v.committed_us = 0;
	ck_assert_int_eq(decide(&sn, v, &at), SENDNOW_KEEP);
	ck_assert_uint_eq(sn.sent, 5);
}
END_TEST

START_TEST(test_a_full_queue_drops_the_deadline)
{
	struct sendnow sn = { 0 };
	int64_t at;
	struct sendnow_view v;

	ck_assert_int_eq(decide(&sn, live(1000, 1), &at), SENDNOW_SEND);
	ck_assert_int_eq(decide(&sn, live(1001, 2), &at), SENDNOW_LATER);
	/*
	 * The queue fills (a broker outage): the deadline, passed or not, is dropped, so it cannot
	 * wake the loop at every turn while the record waits.
	 */
	v = live(1002, 3);
	v.waiting = true;
	v.due = true;
	ck_assert_int_eq(decide(&sn, v, &at), SENDNOW_IDLE);
	ck_assert_uint_eq(sn.sent, 1);
}
END_TEST

START_TEST(test_a_zero_window_never_sends_at_once)
{
	struct sendnow sn = { 0 };
	int64_t at;
	struct sendnow_view v = live(1000, 1);

	v.window_us = 0;
	ck_assert_int_eq(decide(&sn, v, &at), SENDNOW_IDLE);
	v.due = true;
	ck_assert_int_eq(decide(&sn, v, &at), SENDNOW_IDLE);
	ck_assert_uint_eq(sn.sent, 0);
}
END_TEST

START_TEST(test_a_relay_clock_ahead_of_the_server_loses_only_the_shortcut)
{
	struct sendnow sn = { 0 };
	int64_t at;
	struct sendnow_view v = live(1000, 1);

	/* the relay's clock 150 ms ahead: a commit 1 ms ago looks 151 ms old */
	v.wall_us = WALL + 150 * MS;
	ck_assert_int_eq(decide(&sn, v, &at), SENDNOW_KEEP);
	/* behind it, the commit looks to be in the future: still live */
	v.wall_us = WALL - 50 * MS;
	ck_assert_int_eq(decide(&sn, v, &at), SENDNOW_SEND);
}
END_TEST

START_TEST(test_behind_the_server_reading_pauses_once_drained)
{
	struct sendnow_view v = live(1000, 1);

	/* live: read again at once */
	ck_assert_int_eq(sendnow_read_at(&v, 2 * MS), 0);
	/* behind (the last commit older than the window) and drained: pause */
	v.committed_us = WALL - 100 * MS - 1;
	ck_assert_int_eq(sendnow_read_at(&v, 2 * MS), 1002 * MS);
	/* data left unread: a pause would only slow the catch-up */
	v.drained = false;
	ck_assert_int_eq(sendnow_read_at(&v, 2 * MS), 0);
	/* switched off */
	v.drained = true;
	ck_assert_int_eq(sendnow_read_at(&v, 0), 0);
	/*
	 * The pause ran out and the read brought nothing (an idle server): no new pause, or an
	 * idle relay would wake every 2 ms for as long as the server stays idle.
	 */
	v.received = false;
	ck_assert_int_eq(sendnow_read_at(&v, 2 * MS), 0);
	v.received = true;
	/* no transaction read yet: the first record of a start is not delayed */
	v.committed_us = 0;
	ck_assert_int_eq(sendnow_read_at(&v, 2 * MS), 0);
	/* a zero window: never live, so behind whenever drained */
	v = live(1000, 1);
	v.window_us = 0;
	ck_assert_int_eq(sendnow_read_at(&v, 2 * MS), 1002 * MS);
	/* the relay's clock behind the server's: a commit in the future is live */
	v = live(1000, 1);
	v.wall_us = WALL - 50 * MS;
	ck_assert_int_eq(sendnow_read_at(&v, 2 * MS), 0);
}
END_TEST

static Suite *
sendnow_suite(void)
{
	Suite *s = suite_create("sendnow");
	TCase *t = tcase_create("sendnow");

	tcase_add_test(t, test_live_records_are_sent_at_most_once_per_interval);
	tcase_add_test(t, test_behind_the_server_linger_batches);
	tcase_add_test(t, test_a_full_queue_drops_the_deadline);
	tcase_add_test(t, test_a_zero_window_never_sends_at_once);
	tcase_add_test(t, test_a_relay_clock_ahead_of_the_server_loses_only_the_shortcut);
	tcase_add_test(t, test_behind_the_server_reading_pauses_once_drained);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(sendnow_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
