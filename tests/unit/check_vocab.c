/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/config/vocab.h"

/* vocab_groups() finds exact keys with bsearch: the generated table must stay sorted. */
START_TEST(test_generated_table_is_sorted_and_unique_for_bsearch)
{
	ck_assert_uint_gt(vocab_data_len, 100);
	for (size_t i = 1; i < vocab_data_len; i++) {
		ck_assert_msg(strcmp(vocab_data[i - 1].key, vocab_data[i].key) < 0,
			      "\"%s\" then \"%s\"", vocab_data[i - 1].key, vocab_data[i].key);
	}
	for (size_t i = 0; i < vocab_data_len; i++) {
		ck_assert_msg(vocab_data[i].groups != 0, "\"%s\" has no group", vocab_data[i].key);
		/* every generated key is found again, whatever its neighbours */
		ck_assert_uint_eq(vocab_groups(vocab_data[i].key) & vocab_data[i].groups,
				  vocab_data[i].groups);
	}
}
END_TEST

START_TEST(test_known_keys_report_the_components_that_define_them)
{
	ck_assert_uint_eq(vocab_groups("slot.name"), VOCAB_CONNECTOR);
	ck_assert_uint_eq(vocab_groups("route.topic.regex"), VOCAB_SMT);
	ck_assert_uint_eq(vocab_groups("schemas.enable"), VOCAB_CONVERTER);
	ck_assert_uint_eq(vocab_groups("acks"), VOCAB_PRODUCER);
	ck_assert_uint_eq(vocab_groups("bootstrap.servers"), VOCAB_PRODUCER | VOCAB_WORKER);
	ck_assert_uint_eq(vocab_groups("database.user"), VOCAB_CONNECTOR | VOCAB_JDBC);
	ck_assert_uint_eq(vocab_groups("offset.storage.file.filename"),
			  VOCAB_ENGINE | VOCAB_WORKER);
}
END_TEST

START_TEST(test_misspelt_key_belongs_to_no_component)
{
	ck_assert_uint_eq(vocab_groups("slot.nmae"), 0);
	ck_assert_uint_eq(vocab_groups("slot.name "), 0);
	ck_assert_uint_eq(vocab_groups("SLOT.NAME"), 0);
	ck_assert_uint_eq(vocab_groups(""), 0);
	ck_assert(!vocab_is("slot.nmae", ~0u));
}
END_TEST

START_TEST(test_vocab_is_true_for_any_of_the_groups_asked)
{
	ck_assert(vocab_is("bootstrap.servers", VOCAB_WORKER));
	ck_assert(vocab_is("bootstrap.servers", VOCAB_SMT | VOCAB_PRODUCER));
	ck_assert(!vocab_is("bootstrap.servers", VOCAB_SMT | VOCAB_CONNECTOR));
	ck_assert(!vocab_is("slot.name", 0));
}
END_TEST

/* "column.mask.with.(d+).chars", "column.mask.hash.([^.]+).with.salt.(.+)" */
START_TEST(test_pattern_keys_match_only_their_variable_parts)
{
	ck_assert_uint_eq(vocab_groups("column.mask.with.12.chars"), VOCAB_CONNECTOR);
	ck_assert_uint_eq(vocab_groups("column.truncate.to.1.chars"), VOCAB_CONNECTOR);
	ck_assert_uint_eq(vocab_groups("column.mask.with.x.chars"), 0); /* (d+): digits */
	ck_assert_uint_eq(vocab_groups("column.mask.with..chars"), 0);	/* at least one */
	ck_assert_uint_eq(vocab_groups("column.mask.with.12.char"), 0);
	ck_assert_uint_eq(vocab_groups("column.mask.hash.SHA-256.with.salt.pepper"),
			  VOCAB_CONNECTOR);
	/* (.+) may hold dots, ([^.]+) may not */
	ck_assert_uint_eq(vocab_groups("column.mask.hash.SHA-256.with.salt.a.b"), VOCAB_CONNECTOR);
	ck_assert_uint_eq(vocab_groups("column.mask.hash.SHA.256.with.salt.pepper"), 0);
	ck_assert_uint_eq(vocab_groups("column.mask.hash.SHA-256.with.salt."), 0);
}
END_TEST

START_TEST(test_legacy_key_is_known_and_says_what_replaced_it)
{
	const char *note;

	ck_assert_uint_eq(vocab_groups("database.server.name"), VOCAB_CONNECTOR | VOCAB_LEGACY);
	note = vocab_note("database.server.name", VOCAB_CONNECTOR);
	ck_assert_ptr_nonnull(note);
	ck_assert_ptr_nonnull(strstr(note, "topic.prefix"));
	/* the note belongs to the component that used the name */
	ck_assert_ptr_null(vocab_note("database.server.name", VOCAB_SMT));
	ck_assert_ptr_nonnull(
		strstr(vocab_note("table.whitelist", VOCAB_CONNECTOR), "table.include.list"));
	ck_assert_uint_eq(vocab_groups("debezium.op.invalid.behavior"), VOCAB_SMT | VOCAB_LEGACY);
	ck_assert_ptr_nonnull(strstr(vocab_note("debezium.op.invalid.behavior", VOCAB_SMT),
				     "table.op.invalid.behavior"));
}
END_TEST

/* The SMT reads field.name.adjustment.mode outside its ConfigDef: honoured, so no note. */
START_TEST(test_hand_listed_smt_key_is_honoured_without_a_note)
{
	ck_assert_uint_eq(vocab_groups("field.name.adjustment.mode"), VOCAB_CONNECTOR | VOCAB_SMT);
	ck_assert_ptr_null(vocab_note("field.name.adjustment.mode", VOCAB_SMT));
	ck_assert_ptr_null(vocab_note("slot.name", VOCAB_CONNECTOR));
	ck_assert_ptr_null(vocab_note("no.such.key", ~0u));
}
END_TEST

static Suite *
vocab_suite(void)
{
	Suite *s = suite_create("vocab");
	TCase *table = tcase_create("table");
	TCase *hand = tcase_create("hand-list");

	tcase_add_test(table, test_generated_table_is_sorted_and_unique_for_bsearch);
	tcase_add_test(table, test_known_keys_report_the_components_that_define_them);
	tcase_add_test(table, test_misspelt_key_belongs_to_no_component);
	tcase_add_test(table, test_vocab_is_true_for_any_of_the_groups_asked);
	tcase_add_test(table, test_pattern_keys_match_only_their_variable_parts);
	tcase_add_test(hand, test_legacy_key_is_known_and_says_what_replaced_it);
	tcase_add_test(hand, test_hand_listed_smt_key_is_honoured_without_a_note);
	suite_add_tcase(s, table);
	suite_add_tcase(s, hand);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(vocab_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
