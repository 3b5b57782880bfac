/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/hash.h"

/* The published FNV-1a 32-bit test vectors (draft-eastlake-fnv, "FNV-1a" column). */
START_TEST(test_fnv1a_matches_published_vectors)
{
	ck_assert_uint_eq(hash_fnv1a("", 0), 0x811C9DC5u);
	ck_assert_uint_eq(hash_fnv1a(NULL, 0), 0x811C9DC5u);
	ck_assert_uint_eq(hash_fnv1a("a", 1), 0xE40C292Cu);
	ck_assert_uint_eq(hash_fnv1a("foobar", 6), 0xBF9CF968u);
}
END_TEST

/* Bytes above 0x7F count as unsigned: the hash of a UTF-8 topic name is the same everywhere. */
START_TEST(test_fnv1a_reads_bytes_unsigned)
{
	const char s[] = "\xC3\xA9";

	ck_assert_uint_eq(hash_fnv1a(s, 2),
			  ((0x811C9DC5u ^ 0xC3u) * 16777619u ^ 0xA9u) * 16777619u);
}
END_TEST

/* Only the @len bytes count, so a slice and a NUL-terminated copy hash alike. */
START_TEST(test_fnv1a_hashes_only_len_bytes)
{
	ck_assert_uint_eq(hash_fnv1a("outbox.event.order", 6), hash_fnv1a("outbox", 6));
	ck_assert_uint_ne(hash_fnv1a("outbox", 6), hash_fnv1a("outbox", 5));
}
END_TEST

static Suite *
hash_suite(void)
{
	Suite *s = suite_create("hash");
	TCase *tc = tcase_create("fnv1a");

	tcase_add_test(tc, test_fnv1a_matches_published_vectors);
	tcase_add_test(tc, test_fnv1a_reads_bytes_unsigned);
	tcase_add_test(tc, test_fnv1a_hashes_only_len_bytes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(hash_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
