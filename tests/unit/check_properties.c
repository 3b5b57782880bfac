/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/config/properties.h"
#include "outboxd/util/kv.h"

static struct kv
parse_ok(const char *text)
{
	struct kv kv = KV_INIT;
	char err[256] = "";

	ck_assert_msg(properties_parse(text, strlen(text), "t.properties", &kv, err, sizeof(err)) ==
			      0,
		      "parse failed: %s", err);
	return kv;
}

#define ck_kv(kv, k, v)                                                                            \
	do {                                                                                       \
		const char *got_ = kv_get(&(kv), k);                                               \
		ck_assert_msg(got_ != NULL, "key \"%s\" missing", k);                              \
		ck_assert_str_eq(got_, v);                                                         \
	} while (0)

START_TEST(test_equals_colon_or_whitespace_separate_key_and_value)
{
	struct kv kv = parse_ok("a=1\nb:2\nc 3\nd = 4\ne  :  5\nf\t=\t6\ng\n h =\n");

	ck_kv(kv, "a", "1");
	ck_kv(kv, "b", "2");
	ck_kv(kv, "c", "3");
	ck_kv(kv, "d", "4");
	ck_kv(kv, "e", "5");
	ck_kv(kv, "f", "6");
	ck_kv(kv, "g", "");
	ck_kv(kv, "h", "");
	kv_fini(&kv);
}
END_TEST

START_TEST(test_first_separator_wins)
{
	struct kv kv = parse_ok("a:b=c\nx=y=z\np q r\nm = = n\n");

	ck_kv(kv, "a", "b=c");
	ck_kv(kv, "x", "y=z");
	ck_kv(kv, "p", "q r");
	ck_kv(kv, "m", "= n"); /* only one separator is consumed */
	kv_fini(&kv);
}
END_TEST

START_TEST(test_escaped_separators_and_spaces_belong_to_the_key)
{
	struct kv kv = parse_ok("key\\ with\\ space=v\na\\=b=c\nc\\:d:e\n");

	ck_kv(kv, "key with space", "v");
	ck_kv(kv, "a=b", "c");
	ck_kv(kv, "c:d", "e");
	kv_fini(&kv);
}
END_TEST

START_TEST(test_leading_value_whitespace_is_dropped_trailing_kept)
{
	struct kv kv = parse_ok("a =   lead and trail  \n");

	ck_kv(kv, "a", "lead and trail  ");
	kv_fini(&kv);
}
END_TEST

START_TEST(test_backslash_newline_continues_without_the_next_indent)
{
	struct kv kv = parse_ok("a=one,\\\n    two,\\\n\t\tthree\nb=x\n");

	ck_kv(kv, "a", "one,two,three");
	ck_kv(kv, "b", "x");
	ck_assert_str_eq(kv_find(&kv, "b")->origin, "t.properties:4");
	kv_fini(&kv);
}
END_TEST

START_TEST(test_even_backslashes_do_not_continue)
{
	struct kv kv = parse_ok("a=x\\\\\nb=y\n");

	ck_kv(kv, "a", "x\\");
	ck_kv(kv, "b", "y");
	kv_fini(&kv);
}
END_TEST

START_TEST(test_comment_after_continuation_is_content)
{
	struct kv kv = parse_ok("a=b\\\n# not a comment\n! comment\nc=d\n");

	ck_kv(kv, "a", "b# not a comment");
	ck_kv(kv, "c", "d");
	ck_assert_uint_eq(kv.n, 2);
	kv_fini(&kv);
}
END_TEST

START_TEST(test_comment_line_does_not_continue)
{
	struct kv kv = parse_ok("# comment \\\na=1\n   ! indented comment\n");

	ck_kv(kv, "a", "1");
	ck_assert_uint_eq(kv.n, 1);
	kv_fini(&kv);
}
END_TEST

START_TEST(test_escapes_and_unicode_escapes_decode_to_utf8)
{
	struct kv kv = parse_ok(
		"a=t\\tn\\nr\\rf\\f\nb=\\q\\\\\\#\nc=caf\\u00e9\nd=\\uD83D\\uDE00\ne=\\u20AC\n");

	ck_kv(kv, "a", "t\tn\nr\rf\f");
	ck_kv(kv, "b", "q\\#");
	ck_kv(kv, "c", "caf\xc3\xa9");
	ck_kv(kv, "d", "\xf0\x9f\x98\x80");
	ck_kv(kv, "e", "\xe2\x82\xac");
	kv_fini(&kv);
}
END_TEST

START_TEST(test_malformed_unicode_escape_is_an_error_at_its_line)
{
	struct kv kv = KV_INIT;
	char err[256] = "";
	const char *text = "a=1\nb=\\u12G4\n";

	ck_assert_int_eq(
		properties_parse(text, strlen(text), "x.properties", &kv, err, sizeof(err)),
		-EINVAL);
	ck_assert_str_eq(err, "x.properties:2: malformed \\uxxxx escape");
	ck_assert_ptr_null(kv.v);
	text = "a=\\u0000";
	ck_assert_int_eq(
		properties_parse(text, strlen(text), "x.properties", &kv, err, sizeof(err)),
		-EINVAL);
}
END_TEST

START_TEST(test_trailing_backslash_at_eof)
{
	struct kv kv = parse_ok("a=b\\");

	ck_kv(kv, "a", "b");
	kv_fini(&kv);
	kv = parse_ok("a=b\\\n");
	ck_kv(kv, "a", "b");
	kv_fini(&kv);
}
END_TEST

START_TEST(test_crlf_and_cr_end_lines_like_lf)
{
	struct kv kv = parse_ok("a=1\r\nb=2\\\r\n   3\r\n\r\n# c\r\nc=4\rd=5");

	ck_kv(kv, "a", "1");
	ck_kv(kv, "b", "23");
	ck_kv(kv, "c", "4");
	ck_kv(kv, "d", "5");
	ck_assert_str_eq(kv_find(&kv, "c")->origin, "t.properties:6");
	ck_assert_str_eq(kv_find(&kv, "d")->origin, "t.properties:7");
	kv_fini(&kv);
}
END_TEST

START_TEST(test_later_duplicate_wins_with_its_line)
{
	struct kv kv = parse_ok("\n\n  a=1\nb=2\na=3\n");

	ck_kv(kv, "a", "3");
	ck_assert_str_eq(kv_find(&kv, "a")->origin, "t.properties:5");
	ck_assert_str_eq(kv_find(&kv, "b")->origin, "t.properties:4");
	ck_assert_uint_eq(kv.n, 2);
	kv_fini(&kv);
}
END_TEST

START_TEST(test_blank_line_ends_continuation)
{
	struct kv kv = parse_ok("a=x\\\n\nb=y\n");

	ck_kv(kv, "a", "x");
	ck_kv(kv, "b", "y");
	kv_fini(&kv);
}
END_TEST

START_TEST(test_utf8_bom_is_skipped_and_empty_text_has_no_keys)
{
	struct kv kv = parse_ok("\xEF\xBB\xBF"
				"a=1\n");

	ck_kv(kv, "a", "1");
	kv_fini(&kv);
	kv = parse_ok("");
	ck_assert_uint_eq(kv.n, 0);
	kv_fini(&kv);
}
END_TEST

START_TEST(test_missing_file_is_enoent_naming_it)
{
	struct kv kv = KV_INIT;
	char err[256] = "";

	ck_assert_int_eq(properties_load("/nonexistent/x.properties", &kv, err, sizeof(err)),
			 -ENOENT);
	ck_assert_str_eq(err, "/nonexistent/x.properties: No such file or directory");
}
END_TEST

static Suite *
properties_suite(void)
{
	Suite *s = suite_create("properties");
	TCase *tc = tcase_create("grammar");

	tcase_add_test(tc, test_equals_colon_or_whitespace_separate_key_and_value);
	tcase_add_test(tc, test_first_separator_wins);
	tcase_add_test(tc, test_escaped_separators_and_spaces_belong_to_the_key);
	tcase_add_test(tc, test_leading_value_whitespace_is_dropped_trailing_kept);
	tcase_add_test(tc, test_backslash_newline_continues_without_the_next_indent);
	tcase_add_test(tc, test_even_backslashes_do_not_continue);
	tcase_add_test(tc, test_comment_after_continuation_is_content);
	tcase_add_test(tc, test_comment_line_does_not_continue);
	tcase_add_test(tc, test_escapes_and_unicode_escapes_decode_to_utf8);
	tcase_add_test(tc, test_malformed_unicode_escape_is_an_error_at_its_line);
	tcase_add_test(tc, test_trailing_backslash_at_eof);
	tcase_add_test(tc, test_crlf_and_cr_end_lines_like_lf);
	tcase_add_test(tc, test_later_duplicate_wins_with_its_line);
	tcase_add_test(tc, test_blank_line_ends_continuation);
	tcase_add_test(tc, test_utf8_bom_is_skipped_and_empty_text_has_no_keys);
	tcase_add_test(tc, test_missing_file_is_enoent_naming_it);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(properties_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
