/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/jsonw.h"

static const char *
str(struct buf *b, const char *s, size_t len)
{
	buf_reset(b);
	ck_assert_int_eq(jsonw_string(b, s, len), 0);
	return buf_cstr(b);
}

START_TEST(test_string_escapes_like_jackson)
{
	struct buf b = BUF_INIT;

	ck_assert_str_eq(str(&b, "{\"x\": 1}", 8), "\"{\\\"x\\\": 1}\"");
	ck_assert_str_eq(str(&b, "a\\b", 3), "\"a\\\\b\"");
	ck_assert_str_eq(str(&b, "\b\t\n\f\r", 5), "\"\\b\\t\\n\\f\\r\"");
	ck_assert_str_eq(str(&b, "\x01\x1f\x0b", 3), "\"\\u0001\\u001F\\u000B\"");
	ck_assert_str_eq(str(&b, "a/b\x7f", 4), "\"a/b\x7f\"");
	/* U+2028 and BMP non-ASCII raw */
	ck_assert_str_eq(str(&b, "\xe2\x80\xa8\xc3\xa9", 5), "\"\xe2\x80\xa8\xc3\xa9\"");
	/* U+1F600 as an escaped surrogate pair, uppercase hex */
	ck_assert_str_eq(str(&b, "\xf0\x9f\x98\x80", 4), "\"\\uD83D\\uDE00\"");
	ck_assert_str_eq(str(&b, "", 0), "\"\"");
	/* embedded NUL is a control character */
	ck_assert_str_eq(str(&b, "a\0b", 3), "\"a\\u0000b\"");
	buf_fini(&b);
}
END_TEST

START_TEST(test_string_rejects_invalid_utf8)
{
	struct buf b = BUF_INIT;
	const char *bad[] = { "\xff", "\xc0\x80", "\xed\xa0\x80", "\xe2\x80", "\xf4\x90\x80\x80" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(jsonw_string(&b, bad[i], strlen(bad[i])), -EINVAL);
		ck_assert_uint_eq(b.len, 0);
	}
	ck_assert(jsonw_utf8_valid("\xf0\x9f\x98\x80", 4));
	buf_fini(&b);
}
END_TEST

static const char *
dbl(struct buf *b, double x)
{
	buf_reset(b);
	jsonw_java_double(b, x, JSONW_DOUBLE_SHORTEST);
	return buf_cstr(b);
}

START_TEST(test_java_doubles)
{
	struct buf b = BUF_INIT;

	/* every expected string below was printed by Java 17's Double.toString */
	ck_assert_str_eq(dbl(&b, 1.0), "1.0");
	ck_assert_str_eq(dbl(&b, 100.0), "100.0");
	ck_assert_str_eq(dbl(&b, 1e-4), "1.0E-4");
	ck_assert_str_eq(dbl(&b, 12345678.9), "1.23456789E7");
	ck_assert_str_eq(dbl(&b, 0.1 + 0.2), "0.30000000000000004");
	ck_assert_str_eq(dbl(&b, 1e10), "1.0E10");
	ck_assert_str_eq(dbl(&b, -0.0), "-0.0");
	ck_assert_str_eq(dbl(&b, 0.0), "0.0");
	ck_assert_str_eq(dbl(&b, DBL_MAX), "1.7976931348623157E308");
	ck_assert_str_eq(dbl(&b, 4.9e-324), "4.9E-324");
	ck_assert_str_eq(dbl(&b, 2.2250738585072014E-308), "2.2250738585072014E-308");
	ck_assert_str_eq(dbl(&b, 1e7), "1.0E7");
	ck_assert_str_eq(dbl(&b, 9999999.0), "9999999.0");
	ck_assert_str_eq(dbl(&b, 0.001), "0.001");
	ck_assert_str_eq(dbl(&b, 0.0009999), "9.999E-4");
	ck_assert_str_eq(dbl(&b, 123456.789), "123456.789");
	ck_assert_str_eq(dbl(&b, 4.35), "4.35");
	ck_assert_str_eq(dbl(&b, 1e22), "1.0E22");
	ck_assert_str_eq(dbl(&b, NAN), "NaN");
	ck_assert_str_eq(dbl(&b, INFINITY), "Infinity");
	ck_assert_str_eq(dbl(&b, -INFINITY), "-Infinity");
	buf_fini(&b);
}
END_TEST

START_TEST(test_java_floats_and_json_numbers)
{
	struct buf b = BUF_INIT;

	jsonw_java_float(&b, 0.1f, JSONW_DOUBLE_SHORTEST);
	buf_add_char(&b, ' ');
	jsonw_java_float(&b, 3.4028235e38f, JSONW_DOUBLE_SHORTEST);
	buf_add_char(&b, ' ');
	jsonw_java_float(&b, 1.4e-45f, JSONW_DOUBLE_SHORTEST);
	buf_add_char(&b, ' ');
	jsonw_java_float(&b, 1e10f, JSONW_DOUBLE_SHORTEST);
	ck_assert_str_eq(buf_cstr(&b), "0.1 3.4028235E38 1.4E-45 1.0E10");
	buf_reset(&b);
	jsonw_double(&b, NAN, JSONW_DOUBLE_JDK17);
	jsonw_double(&b, -INFINITY, JSONW_DOUBLE_JDK17);
	jsonw_double(&b, 1.5, JSONW_DOUBLE_JDK17);
	ck_assert_str_eq(buf_cstr(&b), "\"NaN\"\"-Infinity\"1.5");
	buf_reset(&b);
	/* the two formats part here (check_javafloat.c has the full table) */
	jsonw_double(&b, 1e23, JSONW_DOUBLE_JDK17);
	buf_add_char(&b, ' ');
	jsonw_double(&b, 1e23, JSONW_DOUBLE_SHORTEST);
	buf_add_char(&b, ' ');
	jsonw_float(&b, 1.72677872E8f, JSONW_DOUBLE_JDK17);
	buf_add_char(&b, ' ');
	jsonw_float(&b, 1.72677872E8f, JSONW_DOUBLE_SHORTEST);
	ck_assert_str_eq(buf_cstr(&b), "9.999999999999999E22 1.0E23 1.72677872E8 1.7267787E8");
	buf_reset(&b);
	jsonw_int(&b, -9223372036854775807LL - 1);
	ck_assert_str_eq(buf_cstr(&b), "-9223372036854775808");
	buf_fini(&b);
}
END_TEST

START_TEST(test_base64_and_format_option)
{
	struct buf b = BUF_INIT;
	enum jsonw_double_format f = JSONW_DOUBLE_SHORTEST;
	char err[256];

	jsonw_base64(&b, "\x00\x01\xfe\xff\x41", 5);
	ck_assert_str_eq(buf_cstr(&b), "AAH+/0E=");
	buf_reset(&b);
	jsonw_base64(&b, "\x01\x02\x03\xff", 4);
	ck_assert_str_eq(buf_cstr(&b), "AQID/w==");
	buf_reset(&b);
	jsonw_base64url(&b, "\xfb\xff", 2);
	ck_assert_str_eq(buf_cstr(&b), "-_8=");
	ck_assert_int_eq(jsonw_double_format_parse(" Shortest ", &f, err, sizeof(err)), 0);
	ck_assert_int_eq(f, JSONW_DOUBLE_SHORTEST);
	ck_assert_int_eq(jsonw_double_format_parse(NULL, &f, err, sizeof(err)), 0);
	ck_assert_int_eq(f, JSONW_DOUBLE_JDK17);
	ck_assert_int_eq(jsonw_double_format_parse("jdk21", &f, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "shortest"));
	buf_fini(&b);
}
END_TEST

static Suite *
jsonw_suite(void)
{
	Suite *s = suite_create("jsonw");
	TCase *tc = tcase_create("strings");

	tcase_add_test(tc, test_string_escapes_like_jackson);
	tcase_add_test(tc, test_string_rejects_invalid_utf8);
	suite_add_tcase(s, tc);
	tc = tcase_create("numbers");
	tcase_add_test(tc, test_java_doubles);
	tcase_add_test(tc, test_java_floats_and_json_numbers);
	tcase_add_test(tc, test_base64_and_format_option);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(jsonw_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
