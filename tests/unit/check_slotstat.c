/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/slotstat.h"

/* A PostgreSQL 17 row: an inactive failover slot on a primary with max_slot_wal_keep_size. */
static const char *const ROW_17[SLOTSTAT_NCOLS] = {
	"1048576", "4096", "extended", "-8192", "f", NULL, NULL, "1733333333123", "true", "false",
};

/* A PostgreSQL 15 row: streaming, no WAL limit, none of 17's columns. */
static const char *const ROW_15[SLOTSTAT_NCOLS] = {
	"24", "0", "reserved", NULL, "t", "4242", NULL, NULL, NULL, NULL,
};

static char *
render(const struct slotstat *st, int64_t age_us)
{
	struct buf b = BUF_INIT;
	char *s;

	slotstat_render(st, age_us, &b);
	s = strdup(buf_cstr(&b));
	buf_fini(&b);
	return s;
}

START_TEST(test_parse_a_17_row)
{
	struct slotstat st;
	char err[256];

	ck_assert_int_eq(slotstat_parse(ROW_17, &st, err, sizeof(err)), 0);
	ck_assert(st.exists && st.retained_known && st.unconfirmed_known && st.safe_known);
	ck_assert_int_eq(st.retained_bytes, 1048576);
	ck_assert_int_eq(st.unconfirmed_bytes, 4096);
	ck_assert_int_eq(st.safe_wal_bytes, -8192);
	ck_assert_str_eq(st.wal_status, "extended");
	ck_assert(!st.active);
	ck_assert_int_eq(st.active_pid, 0);
	ck_assert(st.inactive_known);
	ck_assert_int_eq(st.inactive_since_ms, 1733333333123);
	ck_assert_int_eq(st.failover, SLOTSTAT_YES);
	ck_assert_int_eq(st.synced, SLOTSTAT_NO);
}
END_TEST

START_TEST(test_render_a_17_row)
{
	struct slotstat st;
	char err[256], *s;

	ck_assert_int_eq(slotstat_parse(ROW_17, &st, err, sizeof(err)), 0);
	s = render(&st, 2500000);
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_slot_stats_age_seconds 2.500\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_slot_exists 1\n"));
	ck_assert_ptr_nonnull(strstr(s, "# TYPE outboxd_slot_retained_wal_bytes gauge\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_slot_retained_wal_bytes 1048576\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_slot_unconfirmed_wal_bytes 4096\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_slot_wal_status{status=\"reserved\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_slot_wal_status{status=\"extended\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_slot_safe_wal_size_bytes -8192\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_slot_active 0\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_slot_active_pid 0\n"));
	ck_assert_ptr_nonnull(
		strstr(s, "\noutboxd_slot_inactive_since_timestamp_seconds 1733333333.123\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_slot_failover 1\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_slot_synced 0\n"));
	ck_assert_ptr_null(strstr(s, "invalidation_reason"));
	free(s);
}
END_TEST

START_TEST(test_a_15_row_lacks_17s_families)
{
	struct slotstat st;
	char err[256], *s;

	ck_assert_int_eq(slotstat_parse(ROW_15, &st, err, sizeof(err)), 0);
	ck_assert(st.active && !st.safe_known);
	ck_assert_int_eq(st.failover, SLOTSTAT_UNKNOWN);
	s = render(&st, 0);
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_slot_active_pid 4242\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_slot_wal_status{status=\"reserved\"} 1\n"));
	ck_assert_ptr_null(strstr(s, "safe_wal_size"));
	ck_assert_ptr_null(strstr(s, "failover"));
	ck_assert_ptr_null(strstr(s, "synced"));
	ck_assert_ptr_null(strstr(s, "inactive_since"));
	free(s);
}
END_TEST

START_TEST(test_an_invalidated_slot_names_its_reason)
{
	const char *row[SLOTSTAT_NCOLS] = { NULL, NULL,		 "lost", "0",	  "f",
					    NULL, "wal_removed", NULL,	 "false", "false" };
	struct slotstat st;
	char err[256], *s;

	ck_assert_int_eq(slotstat_parse(row, &st, err, sizeof(err)), 0);
	s = render(&st, 0);
	ck_assert_ptr_null(strstr(s, "retained_wal_bytes"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_slot_wal_status{status=\"lost\"} 1\n"));
	ck_assert_ptr_nonnull(
		strstr(s, "\noutboxd_slot_invalidation_reason{reason=\"wal_removed\"} 1\n"));
	free(s);
}
END_TEST

START_TEST(test_a_missing_slot_is_exists_0_alone)
{
	struct slotstat st = { 0 };
	char *s = render(&st, 1000);

	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_slot_exists 0\n"));
	ck_assert_ptr_null(strstr(s, "wal_status"));
	ck_assert_ptr_null(strstr(s, "active"));
	free(s);
}
END_TEST

START_TEST(test_parse_names_a_bad_column)
{
	const char *row[SLOTSTAT_NCOLS];
	struct slotstat st;
	char err[256];

	memcpy(row, ROW_15, sizeof(row));
	row[SLOTSTAT_RETAINED] = "12x";
	ck_assert_int_eq(slotstat_parse(row, &st, err, sizeof(err)), -22);
	ck_assert_ptr_nonnull(strstr(err, "retained WAL is \"12x\""));
	memcpy(row, ROW_15, sizeof(row));
	row[SLOTSTAT_ACTIVE] = "maybe";
	ck_assert_int_eq(slotstat_parse(row, &st, err, sizeof(err)), -22);
	ck_assert_ptr_nonnull(strstr(err, "active is \"maybe\""));
	memcpy(row, ROW_15, sizeof(row));
	row[SLOTSTAT_WAL_STATUS] = "a status longer than any PostgreSQL has";
	ck_assert_int_eq(slotstat_parse(row, &st, err, sizeof(err)), -22);
	ck_assert_ptr_nonnull(strstr(err, "wal_status"));
}
END_TEST

START_TEST(test_a_strange_reason_renders_as_a_word)
{
	const char *row[SLOTSTAT_NCOLS];
	struct slotstat st;
	char err[256], *s;

	memcpy(row, ROW_15, sizeof(row));
	row[SLOTSTAT_INVALIDATION] = "a\"b\\c\nD";
	ck_assert_int_eq(slotstat_parse(row, &st, err, sizeof(err)), 0);
	s = render(&st, 0);
	ck_assert_ptr_nonnull(strstr(s, "{reason=\"a_b_c__\"} 1\n"));
	free(s);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("slotstat");
	TCase *tc = tcase_create("slotstat");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_parse_a_17_row);
	tcase_add_test(tc, test_render_a_17_row);
	tcase_add_test(tc, test_a_15_row_lacks_17s_families);
	tcase_add_test(tc, test_an_invalidated_slot_names_its_reason);
	tcase_add_test(tc, test_a_missing_slot_is_exists_0_alone);
	tcase_add_test(tc, test_parse_names_a_bad_column);
	tcase_add_test(tc, test_a_strange_reason_renders_as_a_word);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
