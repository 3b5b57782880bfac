/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/jsonr.h"
#include "outboxd/util/mem.h"

/*
 * Parse @text from a heap copy of exactly its length (no NUL after it), so that ASan catches
 * any read past the end. The copy goes at once: the tree holds copies of its strings.
 */
static int
parse(struct jsonr *r, const char *text, size_t len, const struct jsonr_node **ret)
{
	char *copy = xmalloc(len ? len : 1);
	int rc;

	memcpy(copy, text, len);
	jsonr_reset(r);
	rc = jsonr_parse(r, copy, len, ret);
	free(copy);
	return rc;
}

static const struct jsonr_node *
ok(struct jsonr *r, const char *text)
{
	const struct jsonr_node *n = NULL;

	ck_assert_msg(parse(r, text, strlen(text), &n) == 0, "refused %s", text);
	ck_assert_ptr_nonnull(n);
	return n;
}

/* A number's kind is Jackson's: int, long, BigInteger, or double for any '.' or exponent. */
START_TEST(test_numbers_keep_jacksons_kinds)
{
	static const struct {
		const char *text;
		enum jsonr_type type;
		int64_t i;
	} nums[] = {
		{ "0", JSONR_INT, 0 },
		{ "-0", JSONR_INT, 0 },
		{ "2147483647", JSONR_INT, 2147483647 },
		{ "2147483648", JSONR_LONG, 2147483648 },
		{ "-2147483649", JSONR_LONG, -2147483649 },
		{ "9223372036854775807", JSONR_LONG, INT64_MAX },
		{ "9223372036854775808", JSONR_BIG, 0 },
		{ "-99999999999999999999", JSONR_BIG, 0 },
		{ "1.0", JSONR_DOUBLE, 0 },
		{ "1e2", JSONR_DOUBLE, 0 },
		{ "-2.5E-3", JSONR_DOUBLE, 0 },
	};
	struct jsonr *r = jsonr_new();

	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		const struct jsonr_node *n = ok(r, nums[i].text);

		ck_assert_msg(n->type == nums[i].type, "%s", nums[i].text);
		if (n->type == JSONR_INT || n->type == JSONR_LONG) {
			ck_assert_int_eq(n->i, nums[i].i);
		}
	}
	ck_assert(ok(r, "-2.5E-3")->d == -2.5e-3);
	jsonr_free(r);
}
END_TEST

/* Escapes decode to UTF-8, a surrogate pair to one code point; other bytes stay as they are. */
START_TEST(test_strings_decode_escapes_and_surrogate_pairs)
{
	struct jsonr *r = jsonr_new();
	const struct jsonr_node *n;

	n = ok(r, "\"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00\xc3\xa9\"");
	ck_assert_int_eq(n->type, JSONR_STRING);
	ck_assert_uint_eq(n->s.len, 17);
	ck_assert_mem_eq(n->s.p, "a\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80\xc3\xa9", 17);
	ck_assert_int_eq(n->s.p[n->s.len], '\0');
	n = ok(r, "\"\"");
	ck_assert_uint_eq(n->s.len, 0);
	ck_assert_str_eq(n->s.p, "");
	n = ok(r, "\"a\\u0000b\"");
	ck_assert_uint_eq(n->s.len, 3);
	jsonr_free(r);
}
END_TEST

/* Members keep their order; a duplicate name keeps its first place and takes the last value. */
START_TEST(test_duplicate_member_keeps_first_place_last_value)
{
	struct jsonr *r = jsonr_new();
	const struct jsonr_node *n = ok(r, " { \"b\" : 1 , \"a\" : [ ] , \"b\" : \"x\" } ");

	ck_assert_int_eq(n->type, JSONR_OBJECT);
	ck_assert_uint_eq(n->n, 2);
	ck_assert_str_eq(n->kids[0].key, "b");
	ck_assert_int_eq(n->kids[0].type, JSONR_STRING);
	ck_assert_str_eq(n->kids[0].s.p, "x");
	ck_assert_str_eq(n->kids[1].key, "a");
	ck_assert_int_eq(n->kids[1].type, JSONR_ARRAY);
	ck_assert_uint_eq(n->kids[1].n, 0);
	n = ok(r, "[true,false,null,{},[1]]");
	ck_assert_uint_eq(n->n, 5);
	ck_assert(n->kids[0].b && !n->kids[1].b);
	ck_assert_int_eq(n->kids[2].type, JSONR_NULL);
	ck_assert_ptr_null(n->kids[0].key);
	ck_assert_int_eq(n->kids[4].kids[0].i, 1);
	jsonr_free(r);
}
END_TEST

/* As readTree() without FAIL_ON_TRAILING_TOKENS: what follows the first value is not read. */
START_TEST(test_text_after_the_first_value_is_ignored)
{
	struct jsonr *r = jsonr_new();

	ck_assert_uint_eq(ok(r, "{} trailing garbage")->n, 0);
	ck_assert_int_eq(ok(r, "[1]]")->kids[0].i, 1);
	jsonr_free(r);
}
END_TEST

/* Malformed input of every kind fails with -EPROTO and hands back no tree. */
START_TEST(test_malformed_input_fails_cleanly)
{
	static const char *const bad[] = {
		"",
		" \n\t",
		"{",
		"[",
		"[1",
		"[1,",
		"[1,]",
		"[,1]",
		"[1 2]",
		"{,}",
		"{\"a\"}",
		"{\"a\":}",
		"{\"a\" 1}",
		"{a:1}",
		"{'a':1}",
		"{\"a\":1,}",
		"{\"a\":1 \"b\":2}",
		"{\"a\":1]",
		"[1}",
		"01",
		"-01",
		"-",
		"+1",
		"1.",
		".5",
		"1.e3",
		"1e",
		"1e+",
		"[0x10]",
		"NaN",
		"Infinity",
		"tru",
		"nul",
		"fals",
		"True",
		"\"abc",
		"\"\\",
		"\"\\x\"",
		"\"\\u12\"",
		"\"\\u12G4\"",
		"\"\\ud800\"",
		"\"\\ud800\\u0041\"",
		"\"\\udc00\"",
		"\"a\x01"
		"b\"",
		"\"tab\there\"",
		"{\"a\\u0000\":1}",
		"\v1",
	};
	struct jsonr *r = jsonr_new();

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct jsonr_node *n = NULL;

		ck_assert_msg(parse(r, bad[i], strlen(bad[i]), &n) == -EPROTO, "accepted %s",
			      bad[i]);
		ck_assert_ptr_null(n);
	}
	jsonr_free(r);
}
END_TEST

/* Every proper prefix of a document is incomplete: it fails, and nothing past it is read. */
START_TEST(test_truncated_input_never_reads_past_the_end)
{
	static const char doc[] = "{\"k\":[1,-2.5e3,\"x\\u00e9\\uD83D\\uDE00\",true,null,{}],"
				  "\"n\":false}";
	struct jsonr *r = jsonr_new();
	const struct jsonr_node *n = NULL;

	for (size_t len = 0; len < sizeof(doc) - 1; len++) {
		ck_assert_msg(parse(r, doc, len, &n) == -EPROTO, "accepted %zu bytes", len);
	}
	ck_assert_int_eq(parse(r, doc, sizeof(doc) - 1, &n), 0);
	ck_assert_uint_eq(n->n, 2);
	jsonr_free(r);
}
END_TEST

/* Nesting up to 1000 deep is read, 1001 is refused (Jackson's default limit). */
START_TEST(test_nesting_deeper_than_1000_fails)
{
	struct jsonr *r = jsonr_new();
	const struct jsonr_node *n = NULL;
	char deep[2 * 1001];

	memset(deep, '[', 1000);
	memset(deep + 1000, ']', 1000);
	ck_assert_int_eq(parse(r, deep, 2000, &n), 0);
	memset(deep, '[', 1001);
	memset(deep + 1001, ']', 1001);
	ck_assert_int_eq(parse(r, deep, 2002, &n), -EPROTO);
	jsonr_free(r);
}
END_TEST

/* A number of 1000 characters is read, one of 1001 is refused (Jackson's default limit). */
START_TEST(test_numbers_longer_than_1000_fail)
{
	struct jsonr *r = jsonr_new();
	const struct jsonr_node *n = NULL;
	char num[1001];

	memset(num, '7', sizeof(num));
	ck_assert_int_eq(parse(r, num, 1000, &n), 0);
	ck_assert_int_eq(n->type, JSONR_BIG);
	ck_assert_int_eq(parse(r, num, 1001, &n), -EPROTO);
	jsonr_free(r);
}
END_TEST

/* The arena: zeroed memory of the caller's, freed with the tree; the reader is reusable. */
START_TEST(test_arena_is_zeroed_and_reset_frees_it)
{
	struct jsonr *r = jsonr_new();
	const struct jsonr_node *n;
	unsigned char *p;

	for (int round = 0; round < 3; round++) {
		p = jsonr_alloc(r, 32);
		for (size_t i = 0; i < 32; i++) {
			ck_assert_uint_eq(p[i], 0);
		}
		ck_assert_str_eq(jsonr_strndup(r, "abcdef", 3), "abc");
		n = ok(r, "{\"a\":{\"b\":[\"c\"]}}");
		ck_assert_str_eq(n->kids[0].kids[0].kids[0].s.p, "c");
	}
	jsonr_reset(r);
	jsonr_free(r);
	jsonr_free(NULL);
}
END_TEST

static Suite *
jsonr_suite(void)
{
	Suite *s = suite_create("jsonr");
	TCase *tree = tcase_create("tree");
	TCase *bad = tcase_create("malformed");

	tcase_add_test(tree, test_numbers_keep_jacksons_kinds);
	tcase_add_test(tree, test_strings_decode_escapes_and_surrogate_pairs);
	tcase_add_test(tree, test_duplicate_member_keeps_first_place_last_value);
	tcase_add_test(tree, test_text_after_the_first_value_is_ignored);
	tcase_add_test(tree, test_arena_is_zeroed_and_reset_frees_it);
	tcase_add_test(bad, test_malformed_input_fails_cleanly);
	tcase_add_test(bad, test_truncated_input_never_reads_past_the_end);
	tcase_add_test(bad, test_nesting_deeper_than_1000_fails);
	tcase_add_test(bad, test_numbers_longer_than_1000_fail);
	suite_add_tcase(s, tree);
	suite_add_tcase(s, bad);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(jsonr_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
