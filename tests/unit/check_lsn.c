/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "outboxd/util/lsn.h"

START_TEST(test_parse_reads_both_hex_halves_padded_or_not)
{
	lsn_t l = 1;

	ck_assert_int_eq(lsn_parse("0/153D920", &l), 0);
	ck_assert_uint_eq(l, 0x153D920);
	ck_assert_int_eq(lsn_parse("16/b374d848", &l), 0);
	ck_assert_uint_eq(l, 0x16B374D848ull);
	ck_assert_int_eq(lsn_parse("FFFFFFFF/FFFFFFFF", &l), 0);
	ck_assert_uint_eq(l, UINT64_MAX);
	ck_assert_int_eq(lsn_parse("0/0", &l), 0);
	ck_assert_uint_eq(l, 0);
	/* later releases zero-pad the low half */
	ck_assert_int_eq(lsn_parse("0/0153D920", &l), 0);
	ck_assert_uint_eq(l, 0x153D920);
}
END_TEST

START_TEST(test_parse_refuses_malformed_text_leaving_the_output)
{
	static const char *const bad[] = {
		"",	 "/",		"0/",	       "/0",  "0",     "0/0 ", " 0/0",
		"0x1/2", "123456789/0", "0/123456789", "g/0", "0/1/2", "-1/0",
	};
	lsn_t l = 77;

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(lsn_parse(bad[i], &l) == -EINVAL, "accepted \"%s\"", bad[i]);
		ck_assert_uint_eq(l, 77);
	}
	ck_assert_int_eq(lsn_parse(NULL, &l), -EINVAL);
}
END_TEST

START_TEST(test_format_is_upper_hex_and_parses_back)
{
	char s[LSN_STRLEN];
	lsn_t back;
	const lsn_t vals[] = { 0, 1, 0x153D920, 0x16B374D848ull, UINT64_MAX };

	ck_assert_str_eq(lsn_format(0x153D920, s), "0/153D920");
	ck_assert_str_eq(lsn_format(UINT64_MAX, s), "FFFFFFFF/FFFFFFFF");
	for (unsigned i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		ck_assert_int_eq(lsn_parse(lsn_format(vals[i], s), &back), 0);
		ck_assert_uint_eq(back, vals[i]);
	}
}
END_TEST

static Suite *
lsn_suite(void)
{
	Suite *s = suite_create("lsn");
	TCase *tc = tcase_create("text");

	tcase_add_test(tc, test_parse_reads_both_hex_halves_padded_or_not);
	tcase_add_test(tc, test_parse_refuses_malformed_text_leaving_the_output);
	tcase_add_test(tc, test_format_is_upper_hex_and_parses_back);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(lsn_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
