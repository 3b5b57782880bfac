/* SPDX-License-Identifier: Apache-2.0 */
/*
 * java.util.regex semantics on PCRE2. Every expected value below was checked with Java 17's
 * Pattern/Matcher (the runtime of the reference, Debezium 3.6.1 on Kafka Connect 4.3.0).
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/regex_java.h"
#include "outboxd/util/buf.h"

static struct regex_java *
compile(const char *pattern, bool caseless)
{
	struct regex_java *re = NULL;
	char err[512] = "";

	ck_assert_msg(regex_java_compile(pattern, caseless, &re, err, sizeof(err)) == 0, "%s: %s",
		      pattern, err);
	ck_assert_ptr_nonnull(re);
	return re;
}

/* Matcher.matches() of @s (NUL-terminated) against @pattern. */
static int
matches(const char *pattern, bool caseless, const char *s)
{
	struct regex_java *re = compile(pattern, caseless);
	int rc = regex_java_matches(re, s, strlen(s));

	regex_java_free(re);
	return rc;
}

/* Matcher.replaceFirst(@repl) on @s; returns a static copy of the result. */
static const char *
replace_first(const char *pattern, const char *s, const char *repl)
{
	static char out[256];
	struct regex_java *re = compile(pattern, false);
	struct buf b = BUF_INIT;
	char err[512] = "";

	ck_assert_msg(regex_java_set_replacement(re, repl, err, sizeof(err)) == 0, "%s: %s", repl,
		      err);
	ck_assert_int_eq(regex_java_replace_first(re, s, strlen(s), &b), 0);
	ck_assert_uint_lt(b.len, sizeof(out));
	memcpy(out, buf_cstr(&b), b.len + 1);
	buf_fini(&b);
	regex_java_free(re);
	return out;
}

/* The error regex_java_set_replacement() gives @repl (it must fail); a static copy. */
static const char *
replacement_error(const char *pattern, const char *repl)
{
	static char err[512];
	struct regex_java *re = compile(pattern, false);

	err[0] = '\0';
	ck_assert_int_eq(regex_java_set_replacement(re, repl, err, sizeof(err)), -EINVAL);
	ck_assert_uint_gt(strlen(err), 0);
	regex_java_free(re);
	return err;
}

/* The error regex_java_compile() gives @pattern (it must fail, leaving @ret untouched). */
static const char *
compile_error(const char *pattern)
{
	static char err[512];
	struct regex_java *re = (struct regex_java *)0x1;

	err[0] = '\0';
	ck_assert_int_eq(regex_java_compile(pattern, false, &re, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_eq(re, (struct regex_java *)0x1);
	ck_assert_uint_gt(strlen(err), 0);
	return err;
}

START_TEST(test_matches_needs_the_whole_input)
{
	ck_assert_int_eq(matches("a", false, "ab"), 0);
	ck_assert_int_eq(matches("b", false, "ab"), 0);
	ck_assert_int_eq(matches("ab", false, "ab"), 1);
	/* the first alternative matches a prefix only; matches() backtracks into the second */
	ck_assert_int_eq(matches("a|ab", false, "ab"), 1);
	ck_assert_int_eq(matches("public\\.outbox", false, "public.outbox_archive"), 0);
	ck_assert_int_eq(matches("public\\.outbox.*", false, "public.outbox_archive"), 1);
}
END_TEST

START_TEST(test_replace_first_replaces_the_first_match_from_the_start)
{
	/* Java: "ab".replaceFirst("a|ab", "X") is "Xb": the first match found, not the longest */
	ck_assert_str_eq(replace_first("a|ab", "ab", "X"), "Xb");
	ck_assert_str_eq(replace_first("b+", "abbbcbb", "-"), "a-cbb");
	ck_assert_str_eq(replace_first("x*", "abc", "-"), "-abc");
	ck_assert_str_eq(replace_first("z", "abc", "-"), "abc");
	ck_assert_str_eq(replace_first("b", "abc", "[$0]"), "a[b]c");
}
END_TEST

START_TEST(test_numbered_and_named_groups_expand)
{
	ck_assert_str_eq(replace_first("(\\w+)\\.(\\w+)", "public.outbox", "$2_$1"),
			 "outbox_public");
	/* EventRouter's defaults */
	ck_assert_str_eq(
		replace_first("(?<routedByValue>.*)", "order", "outbox.event.${routedByValue}"),
		"outbox.event.order");
}
END_TEST

START_TEST(test_backslash_makes_dollar_and_backslash_literal)
{
	ck_assert_str_eq(replace_first("a", "a", "\\$1"), "$1");
	ck_assert_str_eq(replace_first("a", "a", "x\\\\y"), "x\\y");
	ck_assert_str_eq(replace_first("a", "a", "\\q"), "q");
}
END_TEST

START_TEST(test_group_that_did_not_participate_expands_to_nothing)
{
	ck_assert_str_eq(replace_first("(a)|(b)", "b", "[$1][$2]"), "[][b]");
	ck_assert_str_eq(replace_first("(?<x>a)?b", "b", "<${x}>"), "<>");
}
END_TEST

/* Java reads further digits only while the number still names a group: with one group, "$10" is
 * group 1 then '0'. */
START_TEST(test_group_number_takes_digits_only_while_a_group_exists)
{
	ck_assert_str_eq(replace_first("(a)", "a", "$10"), "a0");
	ck_assert_str_eq(replace_first("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)", "abcdefghij", "$10$1"),
			 "ja");
}
END_TEST

START_TEST(test_bad_replacements_are_refused_when_set)
{
	ck_assert_ptr_nonnull(strstr(replacement_error("(a)", "x$"), "group index is missing"));
	ck_assert_ptr_nonnull(strstr(replacement_error("(a)", "x\\"), "to be escaped is missing"));
	ck_assert_ptr_nonnull(strstr(replacement_error("(a)", "$2"), "no group"));
	ck_assert_ptr_nonnull(strstr(replacement_error("(a)", "${nope}"), "no group"));
	ck_assert_ptr_nonnull(strstr(replacement_error("(a)", "$x"), "illegal group reference"));
	ck_assert_ptr_nonnull(strstr(replacement_error("(a)", "${}"), "0 length name"));
	ck_assert_ptr_nonnull(strstr(replacement_error("(a)", "${a"), "missing trailing '}'"));
}
END_TEST

/* Java's '.' excludes the line terminators \n \r U+0085 U+2028 U+2029, but not \v or \f. */
START_TEST(test_dot_excludes_java_line_terminators_only)
{
	ck_assert_int_eq(matches("a.b", false, "a\nb"), 0);
	ck_assert_int_eq(matches("a.b", false, "a\rb"), 0);
	ck_assert_int_eq(matches("a.b", false,
				 "a\xc2\x85"
				 "b"),
			 0); /* U+0085 */
	ck_assert_int_eq(matches("a.b", false,
				 "a\xe2\x80\xa8"
				 "b"),
			 0); /* U+2028 */
	ck_assert_int_eq(matches("a.b", false,
				 "a\xe2\x80\xa9"
				 "b"),
			 0); /* U+2029 */
	ck_assert_int_eq(matches("a.b", false, "a\vb"), 1);
	ck_assert_int_eq(matches("a.b", false, "a\fb"), 1);
	ck_assert_int_eq(matches("a.b", false,
				 "a\xc3\xa9"
				 "b"),
			 1); /* one character, 2 bytes */
	/* inside a class, '.' is a plain dot */
	ck_assert_int_eq(matches("a[.]b", false, "axb"), 0);
	ck_assert_int_eq(matches("a[.]b", false, "a.b"), 1);
}
END_TEST

START_TEST(test_case_insensitive_flag_and_inline_i_fold_ascii)
{
	ck_assert_int_eq(matches("public\\.outbox", true, "PUBLIC.Outbox"), 1);
	ck_assert_int_eq(matches("public\\.outbox", false, "PUBLIC.Outbox"), 0);
	ck_assert_int_eq(matches("(?i)public\\.outbox", false, "PUBLIC.OUTBOX"), 1);
	ck_assert_int_eq(matches("(?i:public)\\.outbox", false, "PUBLIC.outbox"), 1);
	ck_assert_int_eq(matches("(?i:public)\\.outbox", false, "PUBLIC.OUTBOX"), 0);
}
END_TEST

START_TEST(test_java_escapes_are_translated)
{
	ck_assert_int_eq(matches("\\u00e9t\\u00E9", false, "\xc3\xa9t\xc3\xa9"), 1); /* \uHHHH */
	ck_assert_int_eq(matches("\\0101", false, "A"), 1);			     /* octal */
	ck_assert_int_eq(matches("\\Qa.b\\E", false, "a.b"), 1);
	ck_assert_int_eq(matches("\\Qa.b\\E", false, "axb"), 0);
	ck_assert_int_eq(matches("\\Qa.b", false, "a.b"), 1); /* \Q to the end */
	ck_assert_int_eq(matches("a\\.b", false, "axb"), 0);
	ck_assert_int_eq(matches("\\d+", false, "2026"), 1);
}
END_TEST

/* Constructs PCRE2 would read differently are refused with the reason, never mistranslated. */
START_TEST(test_constructs_read_differently_by_pcre2_are_refused)
{
	/* Java: [a-z&&[^x]] is a-z minus x; PCRE2 would read a nested class and a literal '&' */
	ck_assert_ptr_nonnull(strstr(compile_error("[a-z&&[^x]]"), "&&"));
	ck_assert_ptr_nonnull(strstr(compile_error("[a-z&&b]"), "intersection"));
	ck_assert_ptr_nonnull(strstr(compile_error("\\p{Lower}+"), "\\p{...}"));
	ck_assert_ptr_nonnull(strstr(compile_error("\\P{L}"), "\\p{...}"));
	ck_assert_ptr_nonnull(strstr(compile_error("[a[b]]"), "nested"));
	ck_assert_ptr_nonnull(strstr(compile_error("(?x)a b"), "inline flags"));
	ck_assert_ptr_nonnull(strstr(compile_error("\\N{LATIN SMALL LETTER A}"), "\\N{name}"));
	ck_assert_ptr_nonnull(strstr(compile_error("[]a]"), "escape it"));
	ck_assert_ptr_nonnull(strstr(compile_error("a\\"), "lone"));
	ck_assert_ptr_nonnull(strstr(compile_error("\\u12"), "four hex digits"));
	/* "(?" at the very end was read past the pattern's NUL (found by fuzz_regex_java) */
	ck_assert_ptr_nonnull(strstr(compile_error("ab(?"), "ends inside a group"));
	ck_assert_ptr_nonnull(strstr(compile_error("(?"), "ends inside a group"));
	/* a single '&' in a class is a plain character in both */
	ck_assert_int_eq(matches("[a&b]", false, "&"), 1);
}
END_TEST

START_TEST(test_invalid_pattern_is_refused_naming_it)
{
	ck_assert_ptr_nonnull(strstr(compile_error("(unclosed"), "(unclosed"));
	ck_assert_ptr_nonnull(strstr(compile_error("a{2,1}"), "invalid"));
}
END_TEST

START_TEST(test_invalid_utf8_subject_is_a_match_error)
{
	struct regex_java *re = compile(".*", false);
	struct buf b = BUF_INIT;

	ck_assert_int_eq(regex_java_matches(re, "a\xff", 2), -EINVAL);
	ck_assert_int_eq(regex_java_set_replacement(re, "x", NULL, 0), 0);
	ck_assert_int_eq(regex_java_replace_first(re, "\xc3", 1, &b), -EINVAL);
	buf_fini(&b);
	regex_java_free(re);
	regex_java_free(NULL);
}
END_TEST

/* Subjects carry their length: bytes past it are not part of the input. */
START_TEST(test_subject_length_bounds_the_input)
{
	struct regex_java *re = compile("ab", false);

	ck_assert_int_eq(regex_java_matches(re, "abc", 2), 1);
	ck_assert_int_eq(regex_java_matches(re, "abc", 3), 0);
	regex_java_free(re);
}
END_TEST

static Suite *
regex_java_suite(void)
{
	Suite *s = suite_create("regex_java");
	TCase *match = tcase_create("matching");
	TCase *repl = tcase_create("replacement");
	TCase *refuse = tcase_create("refused");

	tcase_add_test(match, test_matches_needs_the_whole_input);
	tcase_add_test(match, test_dot_excludes_java_line_terminators_only);
	tcase_add_test(match, test_case_insensitive_flag_and_inline_i_fold_ascii);
	tcase_add_test(match, test_java_escapes_are_translated);
	tcase_add_test(match, test_subject_length_bounds_the_input);
	tcase_add_test(match, test_invalid_utf8_subject_is_a_match_error);
	tcase_add_test(repl, test_replace_first_replaces_the_first_match_from_the_start);
	tcase_add_test(repl, test_numbered_and_named_groups_expand);
	tcase_add_test(repl, test_backslash_makes_dollar_and_backslash_literal);
	tcase_add_test(repl, test_group_that_did_not_participate_expands_to_nothing);
	tcase_add_test(repl, test_group_number_takes_digits_only_while_a_group_exists);
	tcase_add_test(repl, test_bad_replacements_are_refused_when_set);
	tcase_add_test(refuse, test_constructs_read_differently_by_pcre2_are_refused);
	tcase_add_test(refuse, test_invalid_pattern_is_refused_naming_it);
	suite_add_tcase(s, match);
	suite_add_tcase(s, repl);
	suite_add_tcase(s, refuse);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(regex_java_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
