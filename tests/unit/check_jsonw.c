/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/jsonw.h"
#include "outboxd/util/utf8.h"

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
	ck_assert(utf8_valid("\xf0\x9f\x98\x80", 4));
	buf_fini(&b);
}
END_TEST

/*
 * The reference: Jackson's rules written the plain way, one code point at a time, with a
 * decoder of its own (RFC 3629 table 3-7), to check the fast paths against.
 */
static int
ref_decode(const unsigned char *s, size_t len, unsigned *cp)
{
	unsigned lo = 0x80, hi = 0xBF, c;
	int n;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		n = 2, c = s[0] & 0x1F;
	} else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		n = 3, c = s[0] & 0x0F;
		lo = s[0] == 0xE0 ? 0xA0 : 0x80;
		hi = s[0] == 0xED ? 0x9F : 0xBF;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		n = 4, c = s[0] & 0x07;
		lo = s[0] == 0xF0 ? 0x90 : 0x80;
		hi = s[0] == 0xF4 ? 0x8F : 0xBF;
	} else {
		return 0;
	}
	if (len < (size_t)n || s[1] < lo || s[1] > hi) {
		return 0;
	}
	for (int i = 1; i < n; i++) {
		if (s[i] < 0x80 || s[i] > 0xBF) {
			return 0;
		}
		c = (c << 6) | (s[i] & 0x3F);
	}
	*cp = c;
	return n;
}

static bool
ref_string(struct buf *b, const unsigned char *s, size_t len)
{
	buf_add_char(b, '"');
	for (size_t i = 0; i < len;) {
		unsigned cp;
		int n = ref_decode(s + i, len - i, &cp);

		if (!n) {
			return false;
		}
		if (cp >= 0x10000) {
			buf_add_fmt(b, "\\u%04X\\u%04X", 0xD800 + ((cp - 0x10000) >> 10),
				    0xDC00 + ((cp - 0x10000) & 0x3FF));
		} else if (cp == '"' || cp == '\\') {
			buf_add_fmt(b, "\\%c", cp);
		} else if (cp < 0x20) {
			const char *short_esc = cp == '\b' ? "\\b" :
						cp == '\t' ? "\\t" :
						cp == '\n' ? "\\n" :
						cp == '\f' ? "\\f" :
						cp == '\r' ? "\\r" :
							     NULL;

			if (short_esc) {
				buf_add_str(b, short_esc);
			} else {
				buf_add_fmt(b, "\\u%04X", cp);
			}
		} else {
			buf_add(b, s + i, (size_t)n);
		}
		i += (size_t)n;
	}
	buf_add_char(b, '"');
	return true;
}

/* Random strings of pieces that hit every path, at every alignment, after earlier output. */
START_TEST(test_string_matches_a_reference_writer_on_20000_random_inputs)
{
	static const char *pieces[] = {
		"a",
		"abcdefgh",
		"{\"k\": \"v\"}",
		"\\",
		"\"",
		"\n",
		"\x01",
		"\x1f",
		"\x7f",
		" ",
		"\xc3\xa9",
		"\xe2\x82\xac",
		"\xef\xbf\xbf",
		"\xf0\x9f\x98\x80",
		"\xf4\x8f\xbf\xbf",
		"\xe0\xa0\x80",
		"\xed\x9f\xbf", /* valid edges */
		"\xc0\xaf",
		"\xe0\x80\xaf",
		"\xed\xa0\x80",
		"\xf4\x90\x80\x80",
		"\xf5\x80\x80\x80",
		"\x80",
		"\xbf",
		"\xc3",
		"\xe2\x82",
		"\xf0\x9f\x98",
		"\xff",
		"\xfe", /* invalid */
	};
	const size_t npieces = sizeof(pieces) / sizeof(pieces[0]);
	struct buf got = BUF_INIT, want = BUF_INIT;
	unsigned seed = 12345;
	unsigned char in[512];

	for (int iter = 0; iter < 20000; iter++) {
		size_t len = 0;
		int k;

		seed = seed * 1103515245u + 12345u;
		k = (int)((seed >> 16) % 40);
		for (int j = 0; j < k; j++) {
			const char *pc;

			seed = seed * 1103515245u + 12345u;
			/* mostly valid pieces, so that long strings are still valid now and then */
			pc = pieces[(seed >> 16) % ((seed >> 8) % 8 ? 17 : npieces)];
			memcpy(in + len, pc, strlen(pc));
			len += strlen(pc);
		}
		buf_reset(&got);
		buf_reset(&want);
		buf_add_str(&got, "prefix");
		buf_add_str(&want, "prefix");
		bool ok = ref_string(&want, in, len);

		ck_assert_int_eq(jsonw_string(&got, (const char *)in, len), ok ? 0 : -EINVAL);
		ck_assert(utf8_valid((const char *)in, len) == ok);
		if (ok) {
			ck_assert_uint_eq(got.len, want.len);
			ck_assert_mem_eq(got.data, want.data, want.len);
		} else {
			ck_assert_str_eq(buf_cstr(&got), "prefix");
		}
		ck_assert_int_eq(got.data[got.len], '\0');
	}
	buf_fini(&got);
	buf_fini(&want);
}
END_TEST

static const char *
dbl(struct buf *b, double x)
{
	buf_reset(b);
	jsonw_java_double(b, x, JSONW_DOUBLE_SHORTEST);
	return buf_cstr(b);
}

START_TEST(test_doubles_print_as_java_17_double_tostring)
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

START_TEST(test_floats_print_as_float_tostring_and_non_finite_doubles_as_strings)
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

START_TEST(test_base64_pads_and_the_double_format_defaults_to_jdk17)
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
	tcase_add_test(tc, test_string_matches_a_reference_writer_on_20000_random_inputs);
	suite_add_tcase(s, tc);
	tc = tcase_create("numbers");
	tcase_add_test(tc, test_doubles_print_as_java_17_double_tostring);
	tcase_add_test(tc, test_floats_print_as_float_tostring_and_non_finite_doubles_as_strings);
	tcase_add_test(tc, test_base64_pads_and_the_double_format_defaults_to_jdk17);
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
