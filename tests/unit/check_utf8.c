/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/utf8.h"

static size_t
decode(const char *s, size_t len, uint32_t *cp)
{
	return utf8_decode((const unsigned char *)s, len, cp);
}

/* The first and last code point of every sequence length decode (RFC 3629 table). */
START_TEST(test_decode_accepts_every_length_edge)
{
	static const struct {
		const char *s;
		uint32_t cp;
	} ok[] = {
		{ "\x7f", 0x7F },
		{ "\xc2\x80", 0x80 },
		{ "\xdf\xbf", 0x7FF },
		{ "\xe0\xa0\x80", 0x800 },
		{ "\xed\x9f\xbf", 0xD7FF },
		{ "\xee\x80\x80", 0xE000 },
		{ "\xef\xbf\xbf", 0xFFFF },
		{ "\xf0\x90\x80\x80", 0x10000 },
		{ "\xf4\x8f\xbf\xbf", 0x10FFFF },
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint32_t cp = 0;

		ck_assert_uint_eq(decode(ok[i].s, strlen(ok[i].s), &cp), strlen(ok[i].s));
		ck_assert_uint_eq(cp, ok[i].cp);
	}
}
END_TEST

/* Overlong forms, surrogates, code points beyond U+10FFFF and stray bytes are refused. */
START_TEST(test_decode_refuses_overlong_surrogate_and_out_of_range)
{
	static const char *const bad[] = {
		"\xc0\x80",
		"\xc1\xbf",
		"\xe0\x9f\xbf",
		"\xf0\x8f\xbf\xbf", /* overlong */
		"\xed\xa0\x80",
		"\xed\xbf\xbf", /* surrogates */
		"\xf4\x90\x80\x80",
		"\xf5\x80\x80\x80",
		"\xff",
		"\xfe", /* out of range */
		"\x80",
		"\xbf",
		"\xc3\x28",
		"\xe2\x28\xa1", /* bad continuation */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t cp = 77;

		ck_assert_msg(decode(bad[i], strlen(bad[i]), &cp) == 0, "accepted %zu", i);
		ck_assert_uint_eq(cp, 77);
	}
}
END_TEST

/* A sequence cut short by @len fails without reading the bytes beyond it. */
START_TEST(test_decode_never_reads_past_len)
{
	char *p = xmalloc(3);
	uint32_t cp;

	/* U+1F600 without its last byte, at the very end of a heap block (ASan sees an overrun) */
	memcpy(p, "\xf0\x9f\x98", 3);
	ck_assert_uint_eq(decode(p, 3, &cp), 0);
	ck_assert_uint_eq(decode(p, 1, &cp), 0);
	free(p);
}
END_TEST

/* The word-at-a-time ASCII skip still checks the byte after it, at every alignment. */
START_TEST(test_valid_checks_each_byte_after_ascii_words)
{
	char s[40];

	for (size_t at = 0; at < 32; at++) {
		memset(s, 'a', sizeof(s));
		s[at] = (char)0xff;
		ck_assert_msg(!utf8_valid(s, sizeof(s)), "missed a bad byte at %zu", at);
		memcpy(s + at, "\xc3\xa9", 2);
		ck_assert_msg(utf8_valid(s, sizeof(s)), "refused a good pair at %zu", at);
	}
	ck_assert(utf8_valid("", 0));
	ck_assert(!utf8_valid("abc\xe2\x82", 5));
}
END_TEST

/* RFC 3629's sequence length for @cp. */
static size_t
encoded_len(uint32_t cp)
{
	if (cp < 0x80) {
		return 1;
	}
	if (cp < 0x800) {
		return 2;
	}
	return cp < 0x10000 ? 3 : 4;
}

/* The encoder writes each length's boundary, and what it writes decodes back. */
START_TEST(test_put_roundtrips_through_decode)
{
	static const uint32_t cps[] = { 0,	0x41,	0x7F,	0x80,	 0x7FF,	  0x800,   0xD7FF,
					0xE000, 0xFFFD, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF };
	struct buf b = BUF_INIT;

	for (size_t i = 0; i < sizeof(cps) / sizeof(cps[0]); i++) {
		uint32_t back = 0;

		buf_reset(&b);
		utf8_put(&b, cps[i]);
		ck_assert_uint_eq(b.len, encoded_len(cps[i]));
		ck_assert_uint_eq(decode(b.data, b.len, &back), b.len);
		ck_assert_uint_eq(back, cps[i]);
	}
	buf_reset(&b);
	utf8_put(&b, 0x20AC);
	ck_assert_mem_eq(b.data, "\xe2\x82\xac", 3);
	buf_fini(&b);
}
END_TEST

/* Four hex digits in either case; fewer, or a non-hex byte, is malformed. */
START_TEST(test_hex4_reads_either_case_and_refuses_short_input)
{
	uint32_t v = 0;

	ck_assert_int_eq(utf8_hex4("00aF", 4, &v), 0);
	ck_assert_uint_eq(v, 0xAF);
	ck_assert_int_eq(utf8_hex4("FFFFzz", 6, &v), 0);
	ck_assert_uint_eq(v, 0xFFFF);
	v = 7;
	ck_assert_int_eq(utf8_hex4("12g4", 4, &v), -EINVAL);
	ck_assert_int_eq(utf8_hex4("1234", 3, &v), -EINVAL);
	ck_assert_int_eq(utf8_hex4("12", 4, &v), -EINVAL); /* stops at the NUL */
	ck_assert_int_eq(utf8_hex4(" 123", 4, &v), -EINVAL);
	ck_assert_uint_eq(v, 7);
}
END_TEST

static int
uesc(const char *s, uint32_t *cp)
{
	return utf8_uescape(s, s + strlen(s), cp);
}

/* A high surrogate followed by an escaped low one is one code point, ten bytes read. */
START_TEST(test_uescape_joins_a_surrogate_pair)
{
	uint32_t cp = 0;

	ck_assert_int_eq(uesc("D83D\\uDE00tail", &cp), 10);
	ck_assert_uint_eq(cp, 0x1F600);
	ck_assert_int_eq(uesc("dbff\\udfff", &cp), 10);
	ck_assert_uint_eq(cp, 0x10FFFF);
	ck_assert_int_eq(uesc("00e9", &cp), 4);
	ck_assert_uint_eq(cp, 0xE9);
	ck_assert_int_eq(uesc("0000", &cp), 4);
	ck_assert_uint_eq(cp, 0);
}
END_TEST

/* A lone surrogate is handed back as it is (4 bytes), for the caller to refuse or replace. */
START_TEST(test_uescape_reports_a_lone_surrogate)
{
	static const char *const lone[] = {
		"D800",	      "D800x",	     "D800\\u0041", "D800\\uD800",
		"D800\\uDC0", "D800\\nDC00", "DC00",	    "DFFF\\uDC00",
	};

	for (size_t i = 0; i < sizeof(lone) / sizeof(lone[0]); i++) {
		uint32_t cp = 0;

		ck_assert_msg(uesc(lone[i], &cp) == 4, "%s", lone[i]);
		ck_assert(utf8_is_surrogate(cp));
	}
}
END_TEST

/* Malformed hex fails; the pair's second half is never looked for beyond @end. */
START_TEST(test_uescape_never_reads_past_end)
{
	char *p = xmalloc(10);
	uint32_t cp = 5;

	memcpy(p, "D83D\\uDE00", 10);
	ck_assert_int_eq(utf8_uescape(p, p + 9, &cp), 4); /* the low half is cut: lone */
	ck_assert_uint_eq(cp, 0xD83D);
	ck_assert_int_eq(utf8_uescape(p, p + 3, &cp), -EINVAL);
	ck_assert_int_eq(utf8_uescape(p, p, &cp), -EINVAL);
	ck_assert_int_eq(uesc("12x4", &cp), -EINVAL);
	free(p);
}
END_TEST

static Suite *
utf8_suite(void)
{
	Suite *s = suite_create("utf8");
	TCase *dec = tcase_create("decode");
	TCase *enc = tcase_create("encode");
	TCase *esc = tcase_create("uescape");

	tcase_add_test(dec, test_decode_accepts_every_length_edge);
	tcase_add_test(dec, test_decode_refuses_overlong_surrogate_and_out_of_range);
	tcase_add_test(dec, test_decode_never_reads_past_len);
	tcase_add_test(dec, test_valid_checks_each_byte_after_ascii_words);
	tcase_add_test(enc, test_put_roundtrips_through_decode);
	tcase_add_test(esc, test_hex4_reads_either_case_and_refuses_short_input);
	tcase_add_test(esc, test_uescape_joins_a_surrogate_pair);
	tcase_add_test(esc, test_uescape_reports_a_lone_surrogate);
	tcase_add_test(esc, test_uescape_never_reads_past_end);
	suite_add_tcase(s, dec);
	suite_add_tcase(s, enc);
	suite_add_tcase(s, esc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(utf8_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
