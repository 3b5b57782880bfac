/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/kv.h"

START_TEST(test_set_copies_key_value_and_origin)
{
	struct kv kv = KV_INIT;
	char key[] = "slot.name", value[] = "debezium", origin[] = "connector.properties:3";
	const struct kv_entry *e;

	kv_set(&kv, key, value, origin);
	/* the caller's buffers may change or go away: the list kept its own copies */
	memset(key, 'x', sizeof(key) - 1);
	memset(value, 'y', sizeof(value) - 1);
	memset(origin, 'z', sizeof(origin) - 1);
	e = kv_find(&kv, "slot.name");
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->value, "debezium");
	ck_assert_str_eq(e->origin, "connector.properties:3");
	ck_assert_str_eq(kv_get(&kv, "slot.name"), "debezium");
	ck_assert_uint_eq(kv.n, 1);
	kv_fini(&kv);
}
END_TEST

START_TEST(test_set_of_existing_key_replaces_value_and_origin_in_place)
{
	struct kv kv = KV_INIT;

	kv_set(&kv, "a", "1", "f:1");
	kv_set(&kv, "b", "2", "f:2");
	kv_set(&kv, "c", "3", "f:3");
	kv_set(&kv, "b", "two", NULL);
	ck_assert_uint_eq(kv.n, 3);
	/* the entry keeps its position: order is the order keys first appeared */
	ck_assert_str_eq(kv.v[0].key, "a");
	ck_assert_str_eq(kv.v[1].key, "b");
	ck_assert_str_eq(kv.v[2].key, "c");
	ck_assert_str_eq(kv.v[1].value, "two");
	ck_assert_ptr_null(kv.v[1].origin);
	kv_fini(&kv);
}
END_TEST

START_TEST(test_absent_key_finds_and_gets_null)
{
	struct kv kv = KV_INIT;

	ck_assert_ptr_null(kv_get(&kv, "a"));
	ck_assert_ptr_null(kv_find(&kv, "a"));
	kv_set(&kv, "ab", "1", NULL);
	/* whole keys only, never a prefix */
	ck_assert_ptr_null(kv_get(&kv, "a"));
	ck_assert_ptr_null(kv_get(&kv, "abc"));
	kv_fini(&kv);
}
END_TEST

START_TEST(test_del_removes_only_that_key_and_keeps_the_order)
{
	struct kv kv = KV_INIT;

	kv_set(&kv, "a", "1", NULL);
	kv_set(&kv, "b", "2", NULL);
	kv_set(&kv, "c", "3", NULL);
	kv_del(&kv, "b");
	ck_assert_uint_eq(kv.n, 2);
	ck_assert_str_eq(kv.v[0].key, "a");
	ck_assert_str_eq(kv.v[1].key, "c");
	ck_assert_ptr_null(kv_get(&kv, "b"));
	kv_del(&kv, "no-such-key");
	ck_assert_uint_eq(kv.n, 2);
	kv_del(&kv, "c");
	kv_del(&kv, "a");
	ck_assert_uint_eq(kv.n, 0);
	kv_fini(&kv);
}
END_TEST

START_TEST(test_fini_leaves_an_empty_reusable_list)
{
	struct kv kv = KV_INIT;

	kv_set(&kv, "a", "1", "f:1");
	kv_fini(&kv);
	ck_assert_uint_eq(kv.n, 0);
	ck_assert_ptr_null(kv.v);
	ck_assert_ptr_null(kv_get(&kv, "a"));
	kv_set(&kv, "a", "again", NULL);
	ck_assert_str_eq(kv_get(&kv, "a"), "again");
	kv_fini(&kv);
	kv_fini(&kv); /* twice is harmless */
}
END_TEST

START_TEST(test_thousands_of_keys_keep_their_order_and_values)
{
	struct kv kv = KV_INIT;
	char key[32], value[32];

	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		snprintf(value, sizeof(value), "v%d", i);
		kv_set(&kv, key, value, NULL);
	}
	ck_assert_uint_eq(kv.n, 5000);
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		snprintf(value, sizeof(value), "v%d", i);
		ck_assert_str_eq(kv.v[i].key, key);
		ck_assert_str_eq(kv_get(&kv, key), value);
	}
	kv_fini(&kv);
}
END_TEST

static Suite *
kv_suite(void)
{
	Suite *s = suite_create("kv");
	TCase *tc = tcase_create("list");

	tcase_add_test(tc, test_set_copies_key_value_and_origin);
	tcase_add_test(tc, test_set_of_existing_key_replaces_value_and_origin_in_place);
	tcase_add_test(tc, test_absent_key_finds_and_gets_null);
	tcase_add_test(tc, test_del_removes_only_that_key_and_keeps_the_order);
	tcase_add_test(tc, test_fini_leaves_an_empty_reusable_list);
	tcase_add_test(tc, test_thousands_of_keys_keep_their_order_and_values);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(kv_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
