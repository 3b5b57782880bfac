/* SPDX-License-Identifier: Apache-2.0 */
/* The replication position in Connect's offsets topic (issue 37): bytes, reading, the skip rule. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "outboxd/relay/offsetpos.h"

/* What Kafka Connect 4.3.0's JsonConverter (schemas off) writes for Debezium's partition. */
START_TEST(test_key_is_connects_bytes)
{
	struct buf b = BUF_INIT;

	offsetpos_key(&b, "inventory-connector", "dbserver1");
	ck_assert_str_eq(buf_cstr(&b), "[\"inventory-connector\",{\"server\":\"dbserver1\"}]");
	buf_reset(&b);
	/* Jackson's escapes; other characters as they are */
	offsetpos_key(&b, "a\"b\\c\n", "é");
	ck_assert_str_eq(buf_cstr(&b), "[\"a\\\"b\\\\c\\n\",{\"server\":\"é\"}]");
	ck_assert(offsetpos_key_is(b.data, b.len, "a\"b\\c\n", "é"));
	ck_assert(!offsetpos_key_is(b.data, b.len, "a\"b\\c\n", "e"));
	ck_assert(!offsetpos_key_is(b.data, b.len - 1, "a\"b\\c\n", "é"));
	ck_assert(!offsetpos_key_is(NULL, 0, "a", "b"));
	buf_fini(&b);
}
END_TEST

/*
 * Debezium 3.6.1's map, in the order Java's HashMap iterates these keys (measured with Java
 * 17: lsn_proc, messageType, lsn_commit, lsn, txId, ts_usec; lsn_events_processed, 3.7's, after
 * lsn_proc).
 */
START_TEST(test_value_has_debeziums_keys_in_hashmap_order)
{
	struct offsetpos p = { .lsn = 24023312,
			       .lsn_proc = 24023312,
			       .lsn_commit = 24023400,
			       .ts_usec = 1765000000123456,
			       .txid = 771,
			       .has_txid = true,
			       .message_type = "INSERT" };
	struct buf b = BUF_INIT;

	offsetpos_value(&b, &p);
	ck_assert_str_eq(buf_cstr(&b), "{\"lsn_proc\":24023312,\"messageType\":\"INSERT\","
				       "\"lsn_commit\":24023400,\"lsn\":24023312,\"txId\":771,"
				       "\"ts_usec\":1765000000123456}");
	buf_reset(&b);
	p.has_events = true;
	p.events = 3;
	p.has_txid = false;
	strcpy(p.message_type, "COMMIT");
	offsetpos_value(&b, &p);
	ck_assert_str_eq(
		buf_cstr(&b),
		"{\"lsn_proc\":24023312,\"lsn_events_processed\":3,\"messageType\":\"COMMIT\","
		"\"lsn_commit\":24023400,\"lsn\":24023312,\"ts_usec\":1765000000123456}");
	buf_fini(&b);
}
END_TEST

START_TEST(test_decode_reads_what_it_writes_and_debeziums_order)
{
	struct offsetpos p = { .lsn = 1,
			       .lsn_proc = 2,
			       .lsn_commit = 3,
			       .ts_usec = 4,
			       .txid = 5,
			       .has_txid = true,
			       .events = 6,
			       .has_events = true,
			       .message_type = "UPDATE" },
			 q;
	static const char debezium[] =
		"{\"ts_usec\":1765000000123456,\"txId\":771,\"lsn\":24023312,\"xmin\":null,"
		"\"lsn_proc\":24023312,\"lsn_commit\":24023400,\"messageType\":\"INSERT\","
		"\"incremental_snapshot_signal_offset\":null}";
	struct buf b = BUF_INIT;
	char err[256] = "";

	offsetpos_value(&b, &p);
	ck_assert_int_eq(offsetpos_decode(b.data, b.len, &q, err, sizeof(err)), 0);
	ck_assert(q.lsn == 1 && q.lsn_proc == 2 && q.lsn_commit == 3 && q.ts_usec == 4);
	ck_assert(q.has_txid && q.txid == 5 && q.has_events && q.events == 6);
	ck_assert_str_eq(q.message_type, "UPDATE");
	ck_assert_int_eq(offsetpos_decode(debezium, strlen(debezium), &q, err, sizeof(err)), 0);
	ck_assert_uint_eq(q.lsn_commit, 24023400);
	ck_assert_uint_eq(q.lsn_proc, 24023312);
	ck_assert(q.has_txid && q.txid == 771 && !q.has_events);
	ck_assert_str_eq(q.message_type, "INSERT");
	buf_fini(&b);
}
END_TEST

START_TEST(test_decode_tells_a_tombstone_from_garbage)
{
	static const char *const bad[] = {
		"",
		"[1]",
		"{\"lsn\":1,\"lsn_proc\":1,\"ts_usec\":1}",
		"{\"lsn\":1,\"lsn_proc\":1,\"lsn_commit\":\"1\",\"ts_usec\":1}",
		"{\"lsn\":1,\"lsn_proc\":1,\"lsn_commit\":-1,\"ts_usec\":1}",
		"{\"lsn\":1,\"lsn_proc\":1,\"lsn_commit\":1.5,\"ts_usec\":1}",
		"{\"lsn\":1,\"lsn_proc\":1,\"lsn_commit\":1,\"ts_usec\":1,\"txId\":\"x\"}",
	};
	struct offsetpos q;
	char err[256];

	ck_assert_int_eq(offsetpos_decode(NULL, 0, &q, err, sizeof(err)), -ENOENT);
	ck_assert_int_eq(offsetpos_decode("null", 4, &q, err, sizeof(err)), -ENOENT);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_msg(offsetpos_decode(bad[i], strlen(bad[i]), &q, err, sizeof(err)) ==
				      -EPROTO,
			      "accepted %s", bad[i]);
		ck_assert_msg(err[0], "no reason for %s", bad[i]);
	}
}
END_TEST

/* Whole transactions up to lsn_commit are in; the slot may lag, never lead. */
START_TEST(test_whole_transactions_and_the_slot)
{
	struct offsetpos p = { .lsn = 900, .lsn_proc = 900, .lsn_commit = 1000 };

	ck_assert(offsetpos_txn_in(&p, 1000));
	ck_assert(offsetpos_txn_in(&p, 10));
	ck_assert(!offsetpos_txn_in(&p, 1001));
	ck_assert(offsetpos_slot_behind(&p, 1000));
	ck_assert(offsetpos_slot_behind(&p, 0));
	ck_assert(!offsetpos_slot_behind(&p, 1001));
	/* between transactions, no event of the next one is in */
	ck_assert(!offsetpos_event_in(&p, 1001, 1));
}
END_TEST

/* A transaction split across Kafka transactions: the position names a point inside it. */
START_TEST(test_a_point_inside_a_split_transaction)
{
	struct offsetpos p = { .lsn = 1500, .lsn_proc = 1500, .lsn_commit = 1000 };

	ck_assert(offsetpos_event_in(&p, 1200, 1));
	ck_assert(offsetpos_event_in(&p, 1500, 7)); /* no count: every event at lsn_proc */
	ck_assert(!offsetpos_event_in(&p, 1501, 1));
	p.has_events = true;
	p.events = 2;
	ck_assert(offsetpos_event_in(&p, 1500, 2));
	ck_assert(!offsetpos_event_in(&p, 1500, 3));
	ck_assert(offsetpos_event_in(&p, 1499, 9));
}
END_TEST

static Suite *
offsetpos_suite(void)
{
	Suite *s = suite_create("offsetpos");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_key_is_connects_bytes);
	tcase_add_test(tc, test_value_has_debeziums_keys_in_hashmap_order);
	tcase_add_test(tc, test_decode_reads_what_it_writes_and_debeziums_order);
	tcase_add_test(tc, test_decode_tells_a_tombstone_from_garbage);
	tcase_add_test(tc, test_whole_transactions_and_the_slot);
	tcase_add_test(tc, test_a_point_inside_a_split_transaction);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(offsetpos_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
