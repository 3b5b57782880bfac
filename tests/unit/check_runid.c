/* SPDX-License-Identifier: Apache-2.0 */
/*
 * __debezium.context.runId: a version 7 UUID, as Debezium 3.6.1 writes (its records in the
 * compat suite: "01a24f8d-93b3-761c-9bd0-a8c176aa0add").
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/runid.h"

/* Debezium's record above: its time, and its random bits with the version and variant cleared. */
START_TEST(test_runid_is_debeziums_version_7_layout)
{
	static const uint8_t rnd[10] = {
		0x06, 0x1c, 0x1b, 0xd0, 0xa8, 0xc1, 0x76, 0xaa, 0x0a, 0xdd
	};
	char out[RUNID_LEN];

	runid_format(INT64_C(0x01a24f8d93b3), rnd, out);
	ck_assert_str_eq(out, "01a24f8d-93b3-761c-9bd0-a8c176aa0add");
}
END_TEST

/* The version nibble is 7 and the variant bits 10, whatever the random bytes hold. */
START_TEST(test_runid_version_and_variant_override_the_random_bits)
{
	uint8_t rnd[10];
	char out[RUNID_LEN];

	memset(rnd, 0xff, sizeof(rnd));
	runid_format(0, rnd, out);
	ck_assert_str_eq(out, "00000000-0000-7fff-bfff-ffffffffffff");
	memset(rnd, 0, sizeof(rnd));
	runid_format(INT64_C(0xffffffffffff), rnd, out);
	ck_assert_str_eq(out, "ffffffff-ffff-7000-8000-000000000000");
}
END_TEST

/* Time-ordered: a later millisecond sorts after an earlier one as text. */
START_TEST(test_runid_sorts_by_time)
{
	static const uint8_t hi[10] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
	};
	static const uint8_t lo[10] = { 0 };
	char a[RUNID_LEN], b[RUNID_LEN];

	runid_format(INT64_C(1796631009117), hi, a);
	runid_format(INT64_C(1796631009118), lo, b);
	ck_assert_int_lt(strcmp(a, b), 0);
	ck_assert_uint_eq(strlen(a), 36);
}
END_TEST

static Suite *
runid_suite(void)
{
	Suite *s = suite_create("runid");
	TCase *tc = tcase_create("format");

	tcase_add_test(tc, test_runid_is_debeziums_version_7_layout);
	tcase_add_test(tc, test_runid_version_and_variant_override_the_random_bits);
	tcase_add_test(tc, test_runid_sorts_by_time);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(runid_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
