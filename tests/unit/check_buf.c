/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/buf.h"

START_TEST(test_empty_is_empty_string)
{
	struct buf b = BUF_INIT;

	ck_assert_str_eq(buf_cstr(&b), "");
	ck_assert_uint_eq(b.len, 0);
	buf_fini(&b);
}
END_TEST

START_TEST(test_appends_grow_and_terminate)
{
	struct buf b = BUF_INIT;

	for (int i = 0; i < 1000; i++) {
		buf_add_char(&b, (char)('a' + i % 26));
	}
	ck_assert_uint_eq(b.len, 1000);
	ck_assert_uint_eq(strlen(buf_cstr(&b)), 1000);
	ck_assert_int_eq(b.data[25], 'z');
	buf_add_str(&b, "|end");
	ck_assert_str_eq(buf_cstr(&b) + 1000, "|end");
	buf_fini(&b);
	ck_assert_ptr_null(b.data);
}
END_TEST

START_TEST(test_binary_bytes_are_kept)
{
	struct buf b = BUF_INIT;
	const char bytes[] = { 'a', '\0', 'b' };

	buf_add(&b, bytes, sizeof(bytes));
	ck_assert_uint_eq(b.len, 3);
	ck_assert_mem_eq(b.data, bytes, 3);
	buf_fini(&b);
}
END_TEST

START_TEST(test_fmt_never_truncates)
{
	struct buf b = BUF_INIT;
	char big[5000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	buf_add_fmt(&b, "<%s:%d>", big, 42);
	ck_assert_uint_eq(b.len, sizeof(big) - 1 + 5);
	ck_assert_str_eq(b.data + b.len - 4, ":42>");
	buf_fini(&b);
}
END_TEST

START_TEST(test_reset_and_steal)
{
	struct buf b = BUF_INIT;
	char *s;

	buf_add_str(&b, "hello");
	buf_reset(&b);
	ck_assert_str_eq(buf_cstr(&b), "");
	buf_add_str(&b, "again");
	s = buf_steal(&b);
	ck_assert_str_eq(s, "again");
	ck_assert_ptr_null(b.data);
	free(s);
	s = buf_steal(&b);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

static Suite *
buf_suite(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("append");

	tcase_add_test(tc, test_empty_is_empty_string);
	tcase_add_test(tc, test_appends_grow_and_terminate);
	tcase_add_test(tc, test_binary_bytes_are_kept);
	tcase_add_test(tc, test_fmt_never_truncates);
	tcase_add_test(tc, test_reset_and_steal);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(buf_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
