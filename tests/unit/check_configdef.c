/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/configdef.h"

static char *
trimmed(const char *s)
{
	return configdef_trimdup(s);
}

/* String.trim() takes every char <= U+0020, control characters included, and nothing else. */
START_TEST(test_trim_strips_control_chars_like_java)
{
	char *t = trimmed("\x01\t\n\v\f\r \x1f value \x1f\x7f \x0b\x02");

	/* DEL (0x7F) is above U+0020: it stops the trim at the end */
	ck_assert_str_eq(t, "value \x1f\x7f");
	free(t);
	t = trimmed(" \t\r\n ");
	ck_assert_str_eq(t, "");
	free(t);
	t = trimmed("");
	ck_assert_str_eq(t, "");
	free(t);
}
END_TEST

/* Non-ASCII (U+00A0 no-break space, U+3000) is not trimmed, nor is what lies inside. */
START_TEST(test_trim_keeps_non_ascii_and_inner_whitespace)
{
	char *t = trimmed("\xc2\xa0x y\xe3\x80\x80");
	struct slice s = configdef_trim("  a b\t");

	ck_assert_str_eq(t, "\xc2\xa0x y\xe3\x80\x80");
	ck_assert_uint_eq(s.len, 3);
	ck_assert_mem_eq(s.p, "a b", 3);
	free(t);
}
END_TEST

/* ConfigDef BOOLEAN: trimmed, true or false in any case. */
START_TEST(test_bool_accepts_true_false_in_any_case_trimmed)
{
	bool b = false;

	ck_assert_int_eq(configdef_bool("true", &b), 0);
	ck_assert(b);
	ck_assert_int_eq(configdef_bool(" FALSE\n", &b), 0);
	ck_assert(!b);
	ck_assert_int_eq(configdef_bool("\x01TrUe\x02", &b), 0);
	ck_assert(b);
}
END_TEST

/* Nothing else is a boolean: not yes/1, not a prefix, not spaced letters; *ret untouched. */
START_TEST(test_bool_refuses_anything_else_and_leaves_ret)
{
	static const char *const bad[] = { "",	  " ",	   "yes",   "1",  "t",
					   "tru", "truee", "tr ue", "on", "\xc2\xa0true" };
	bool b = true;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(configdef_bool(bad[i], &b) == -EINVAL, "accepted '%s'", bad[i]);
		ck_assert(b);
	}
}
END_TEST

/* EnumeratedValue.parse: trimmed, any case; the index and the word as the table spells it. */
START_TEST(test_enum_returns_index_and_canonical_word)
{
	char *w = NULL;

	ck_assert_int_eq(configdef_enum("warn", "warn|error|fatal", NULL), 0);
	ck_assert_int_eq(configdef_enum(" FATAL\t", "warn|error|fatal", &w), 2);
	ck_assert_str_eq(w, "fatal");
	free(w);
	w = NULL;
	ck_assert_int_eq(configdef_enum("base64", "BASE64|NUMERIC", &w), 0);
	ck_assert_str_eq(w, "BASE64");
	free(w);
	ck_assert(configdef_eq(" Numeric ", "NUMERIC"));
	ck_assert(!configdef_eq("NUMERICAL", "NUMERIC"));
}
END_TEST

/* Only whole words count: no prefix, no empty word, no separator; *ret_word untouched. */
START_TEST(test_enum_refuses_prefixes_and_empty_values)
{
	static const char *const bad[] = { "", " ", "war", "warnx", "warn|error", "|", "err or" };
	char *w = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(configdef_enum(bad[i], "warn|error|fatal", &w) == -EINVAL,
			      "accepted '%s'", bad[i]);
		ck_assert_ptr_null(w);
	}
}
END_TEST

/* Integer.parseInt of the trimmed text: a sign, then decimal digits. */
START_TEST(test_int_parses_like_integer_parseint)
{
	int32_t v = 0;

	ck_assert_int_eq(configdef_int(" 42\n", INT32_MIN, INT32_MAX, &v), 0);
	ck_assert_int_eq(v, 42);
	ck_assert_int_eq(configdef_int("+7", INT32_MIN, INT32_MAX, &v), 0);
	ck_assert_int_eq(v, 7);
	ck_assert_int_eq(configdef_int("-0012", INT32_MIN, INT32_MAX, &v), 0);
	ck_assert_int_eq(v, -12);
	ck_assert_int_eq(configdef_int("2147483647", INT32_MIN, INT32_MAX, &v), 0);
	ck_assert_int_eq(v, INT32_MAX);
	ck_assert_int_eq(configdef_int("-2147483648", INT32_MIN, INT32_MAX, &v), 0);
	ck_assert_int_eq(v, INT32_MIN);
}
END_TEST

/* No number, trailing text, 33 bits or a value outside the range: refused, *ret untouched. */
START_TEST(test_int_refuses_beyond_32_bits_and_outside_range)
{
	static const char *const bad[] = { "",
					   "+",
					   "-",
					   "1 2",
					   "12abc",
					   "0x10",
					   "1e3",
					   "1.0",
					   "2147483648",
					   "-2147483649",
					   "99999999999999999999" };
	int32_t v = 5;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(configdef_int(bad[i], INT32_MIN, INT32_MAX, &v) == -EINVAL,
			      "accepted '%s'", bad[i]);
	}
	ck_assert_int_eq(configdef_int("-1", 0, 100, &v), -EINVAL);
	ck_assert_int_eq(configdef_int("101", 0, 100, &v), -EINVAL);
	ck_assert_int_eq(v, 5);
	ck_assert_int_eq(configdef_int("100", 0, 100, &v), 0);
	ck_assert_int_eq(v, 100);
}
END_TEST

/* Long.parseLong: 64 bits, the same grammar. */
START_TEST(test_long_takes_64_bits_and_refuses_more)
{
	int64_t v = 0;

	ck_assert_int_eq(configdef_long("\t9223372036854775807 ", INT64_MIN, INT64_MAX, &v), 0);
	ck_assert_int_eq(v, INT64_MAX);
	ck_assert_int_eq(configdef_long("3000000000", 0, INT64_MAX, &v), 0);
	ck_assert_int_eq(v, 3000000000);
	ck_assert_int_eq(configdef_long("9223372036854775808", INT64_MIN, INT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(configdef_long("0", 1, INT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(v, 3000000000);
}
END_TEST

/* database.port's list: each entry a number in range, one per host. */
START_TEST(test_long_list_checks_every_entry)
{
	ck_assert_int_eq(configdef_long_list("5432", 0, 65535), 0);
	ck_assert_int_eq(configdef_long_list("5432,5433, 5434", 0, 65535), 0);
	ck_assert_int_eq(configdef_long_list("5432,x", 0, 65535), -EINVAL);
	ck_assert_int_eq(configdef_long_list("5432,65536", 0, 65535), -EINVAL);
}
END_TEST

static void
ck_list(const struct configdef_list *l, size_t n, const char *const *want)
{
	ck_assert_uint_eq(l->n, n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_str_eq(l->v[i], want[i]);
	}
}

/* ConfigDef LIST: trimmed, split on \s*,\s*; other whitespace inside an item stays. */
START_TEST(test_list_splits_on_commas_with_java_whitespace)
{
	struct configdef_list l;

	configdef_list(" a , b\t,\r\nc d ,\x01"
		       "e\n",
		       &l);
	ck_list(&l, 4,
		(const char *const[]){ "a", "b", "c d",
				       "\x01"
				       "e" });
	configdef_list_fini(&l);
	configdef_list("outbox", &l);
	ck_list(&l, 1, (const char *const[]){ "outbox" });
	configdef_list_fini(&l);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_ptr_null(l.v);
}
END_TEST

/* Empty items are items (String.split with limit -1); a blank value is the empty list. */
START_TEST(test_list_keeps_empty_items_and_blank_is_empty)
{
	struct configdef_list l;

	configdef_list("a,,b,", &l);
	ck_list(&l, 4, (const char *const[]){ "a", "", "b", "" });
	configdef_list_fini(&l);
	configdef_list(", a", &l);
	ck_list(&l, 2, (const char *const[]){ "", "a" });
	configdef_list_fini(&l);
	configdef_list(" , ", &l);
	ck_list(&l, 2, (const char *const[]){ "", "" });
	configdef_list_fini(&l);
	configdef_list(" \t ", &l);
	ck_assert_uint_eq(l.n, 0);
	configdef_list_fini(&l);
	configdef_list("a\\,b", &l); /* no escapes in a ConfigDef LIST */
	ck_list(&l, 2, (const char *const[]){ "a\\", "b" });
	configdef_list_fini(&l);
}
END_TEST

/* Debezium's regex lists: "\," is a literal comma, other escapes stay for the regex. */
START_TEST(test_regex_list_backslash_comma_is_a_literal_comma)
{
	struct configdef_list l;

	ck_assert_int_eq(configdef_regex_list("public\\.a\\,b , public\\.c\\d+", &l), 0);
	ck_list(&l, 2, (const char *const[]){ "public\\.a,b", "public\\.c\\d+" });
	configdef_list_fini(&l);
}
END_TEST

/* An escaped backslash before a comma leaves the comma a separator (RegExSplitter). */
START_TEST(test_regex_list_escaped_backslash_then_comma_splits)
{
	struct configdef_list l;

	ck_assert_int_eq(configdef_regex_list("a\\\\,b", &l), 0);
	ck_list(&l, 2, (const char *const[]){ "a\\\\", "b" });
	configdef_list_fini(&l);
	ck_assert_int_eq(configdef_regex_list("a\\\\\\,b", &l), 0);
	ck_list(&l, 1, (const char *const[]){ "a\\\\,b" });
	configdef_list_fini(&l);
}
END_TEST

/* Zero-length tokens are dropped; a blank one stays as the empty pattern Debezium compiles. */
START_TEST(test_regex_list_drops_empty_tokens_and_keeps_blank_ones)
{
	struct configdef_list l;

	ck_assert_int_eq(configdef_regex_list(",a,,b,", &l), 0);
	ck_list(&l, 2, (const char *const[]){ "a", "b" });
	configdef_list_fini(&l);
	ck_assert_int_eq(configdef_regex_list("a, ,\x01"
					      "b\x01",
					      &l),
			 0);
	ck_list(&l, 3, (const char *const[]){ "a", "", "b" });
	configdef_list_fini(&l);
	ck_assert_int_eq(configdef_regex_list("", &l), 0);
	ck_assert_uint_eq(l.n, 0);
	configdef_list_fini(&l);
}
END_TEST

/* A value ending in an unpaired backslash is an error, and leaves no items behind. */
START_TEST(test_regex_list_refuses_a_trailing_backslash)
{
	struct configdef_list l;

	ck_assert_int_eq(configdef_regex_list("a,b\\", &l), -EINVAL);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_ptr_null(l.v);
	ck_assert_int_eq(configdef_regex_list("\\", &l), -EINVAL);
	ck_assert_int_eq(configdef_regex_list("a\\\\", &l), 0);
	ck_list(&l, 1, (const char *const[]){ "a\\\\" });
	configdef_list_fini(&l);
}
END_TEST

static Suite *
configdef_suite(void)
{
	Suite *s = suite_create("configdef");
	TCase *scalar = tcase_create("scalar");
	TCase *list = tcase_create("list");

	tcase_add_test(scalar, test_trim_strips_control_chars_like_java);
	tcase_add_test(scalar, test_long_list_checks_every_entry);
	tcase_add_test(scalar, test_trim_keeps_non_ascii_and_inner_whitespace);
	tcase_add_test(scalar, test_bool_accepts_true_false_in_any_case_trimmed);
	tcase_add_test(scalar, test_bool_refuses_anything_else_and_leaves_ret);
	tcase_add_test(scalar, test_enum_returns_index_and_canonical_word);
	tcase_add_test(scalar, test_enum_refuses_prefixes_and_empty_values);
	tcase_add_test(scalar, test_int_parses_like_integer_parseint);
	tcase_add_test(scalar, test_int_refuses_beyond_32_bits_and_outside_range);
	tcase_add_test(scalar, test_long_takes_64_bits_and_refuses_more);
	tcase_add_test(list, test_list_splits_on_commas_with_java_whitespace);
	tcase_add_test(list, test_list_keeps_empty_items_and_blank_is_empty);
	tcase_add_test(list, test_regex_list_backslash_comma_is_a_literal_comma);
	tcase_add_test(list, test_regex_list_escaped_backslash_then_comma_splits);
	tcase_add_test(list, test_regex_list_drops_empty_tokens_and_keeps_blank_ones);
	tcase_add_test(list, test_regex_list_refuses_a_trailing_backslash);
	suite_add_tcase(s, scalar);
	suite_add_tcase(s, list);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(configdef_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
