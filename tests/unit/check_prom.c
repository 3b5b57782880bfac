/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/prom.h"

START_TEST(test_family_is_help_then_type)
{
	struct buf b = BUF_INIT;

	prom_family(&b, "outboxd_x_total", "counter", "Things, counted.");
	ck_assert_str_eq(buf_cstr(&b), "# HELP outboxd_x_total Things, counted.\n"
				       "# TYPE outboxd_x_total counter\n");
	buf_reset(&b);
	prom_int(&b, "outboxd_y", "gauge", "Why.", -42);
	ck_assert_str_eq(buf_cstr(&b),
			 "# HELP outboxd_y Why.\n# TYPE outboxd_y gauge\noutboxd_y -42\n");
	buf_fini(&b);
}
END_TEST

/* The exposition format escapes exactly '\', '"' and newline in a label value. */
START_TEST(test_label_value_escapes_backslash_quote_and_newline_only)
{
	struct buf b = BUF_INIT;

	prom_label_value(&b, "a\\b\"c\nd\te{}=,\xc3\xa9");
	ck_assert_str_eq(buf_cstr(&b), "a\\\\b\\\"c\\nd\te{}=,\xc3\xa9");
	buf_reset(&b);
	prom_label_value(&b, "");
	ck_assert_str_eq(buf_cstr(&b), "");
	buf_fini(&b);
}
END_TEST

START_TEST(test_seconds_with_milliseconds_truncate)
{
	struct buf b = BUF_INIT;

	prom_seconds_ms(&b, "a", 0);
	prom_seconds_ms(&b, "b", 2500000);
	prom_seconds_ms(&b, "c", 1999);	    /* truncated, not rounded */
	prom_seconds_ms(&b, "d", 61500000); /* 61.5 s */
	prom_seconds_ms(&b, "e", 1764806400123456);
	prom_seconds_ms(&b, "f", -1500); /* the sign apart, not "0.-01" */
	prom_seconds_ms(&b, "g", INT64_MIN);
	ck_assert_str_eq(buf_cstr(&b), "a 0.000\nb 2.500\nc 0.001\nd 61.500\n"
				       "e 1764806400.123\nf -0.001\ng -9223372036854.775\n");
	buf_fini(&b);
}
END_TEST

START_TEST(test_seconds_with_microseconds)
{
	struct buf b = BUF_INIT;

	prom_seconds_us(&b, "a", 0);
	prom_seconds_us(&b, "b", 1500000);
	prom_seconds_us(&b, "c", 42);
	prom_seconds_us(&b, "d", -7);
	ck_assert_str_eq(buf_cstr(&b), "a 0.000000\nb 1.500000\nc 0.000042\nd -0.000007\n");
	buf_fini(&b);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("prom");
	TCase *tc = tcase_create("text");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_family_is_help_then_type);
	tcase_add_test(tc, test_label_value_escapes_backslash_quote_and_newline_only);
	tcase_add_test(tc, test_seconds_with_milliseconds_truncate);
	tcase_add_test(tc, test_seconds_with_microseconds);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
