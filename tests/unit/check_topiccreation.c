/* SPDX-License-Identifier: Apache-2.0 */
/*
 * KIP-158's rules as Kafka Connect applies them (topiccreation.h): when creation is on, the
 * required default group, the first matching named group, exclude over include, the settings
 * each group passes, and Connect's refusals.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "outboxd/connect/topiccreation.h"
#include "outboxd/util/kv.h"

#define P "topic.creation."

static struct topiccreation *
parse_ok(const struct kv *keys, bool enabled)
{
	struct topiccreation *tc = NULL;
	char err[512] = "";

	ck_assert_msg(topiccreation_parse(keys, P, enabled, &tc, err, sizeof(err)) == 0, "%s", err);
	return tc;
}

static void
parse_fails(const struct kv *keys, const char *needle)
{
	struct topiccreation *tc = NULL;
	char err[512] = "";

	ck_assert_int_eq(topiccreation_parse(keys, P, true, &tc, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(tc);
	ck_assert_msg(strstr(err, needle), "want \"%s\" in \"%s\"", needle, err);
}

/* Nothing to create: no topic.creation.* key, or the worker's topic.creation.enable=false. */
START_TEST(test_off_without_keys_or_when_the_worker_disables_it)
{
	struct kv k = KV_INIT;
	struct topiccreation *tc;

	kv_set(&k, "topic.prefix", "app", NULL);
	ck_assert_ptr_null(parse_ok(&k, true));
	kv_set(&k, P "default.partitions", "3", NULL);
	ck_assert_ptr_null(parse_ok(&k, false));
	kv_set(&k, P "default.replication.factor", "1", NULL);
	tc = parse_ok(&k, true); /* no groups: the default alone */
	ck_assert_uint_eq(topiccreation_ngroups(tc), 1);
	ck_assert_str_eq(topiccreation_match(tc, "any")->name, "default");
	topiccreation_free(tc);
	kv_fini(&k);
}
END_TEST

/* Any topic.creation.* key asks for creation; the default's two numbers are then required. */
START_TEST(test_the_default_partitions_and_replication_factor_are_required)
{
	struct kv k = KV_INIT;

	kv_set(&k, P "groups", "a", NULL);
	parse_fails(&k, "Missing required configuration \"topic.creation.default.partitions\"");
	kv_set(&k, P "default.partitions", "3", NULL);
	parse_fails(&k, "\"topic.creation.default.replication.factor\"");
	kv_set(&k, P "default.replication.factor", "0", NULL);
	parse_fails(&k, "Replication factor must be positive");
	kv_set(&k, P "default.replication.factor", "40000", NULL);
	parse_fails(&k, "Not a number of type SHORT");
	kv_set(&k, P "default.replication.factor", "-1", NULL);
	kv_set(&k, P "default.partitions", "-2", NULL);
	parse_fails(&k, "Number of partitions must be positive, or -1");
	kv_set(&k, P "default.partitions", "x", NULL);
	parse_fails(&k, "Invalid value x for configuration topic.creation.default.partitions");
	kv_set(&k, P "default.partitions", "  ", NULL);
	parse_fails(&k, "Not a number of type INT");
	kv_set(&k, P "default.partitions", "99999999999", NULL);
	parse_fails(&k, "Not a number of type INT");
	kv_set(&k, P "default.partitions", " 3\t", NULL);
	kv_set(&k, P "default.replication.factor", "x", NULL);
	parse_fails(&k, "replication.factor: Not a number of type SHORT");
	kv_fini(&k);
}
END_TEST

/*
 * The first named group in the list's order that matches wins, exclude beating include, the
 * whole name matched; the default takes the rest with its own settings; a named group's numbers
 * default to the default's, its other settings are its own.
 */
START_TEST(test_the_first_matching_group_wins_and_the_default_takes_the_rest)
{
	struct kv k = KV_INIT;
	struct topiccreation *tc;
	const struct topiccreation_group *g;
	struct buf d = BUF_INIT;

	kv_set(&k, P "default.partitions", "3", NULL);
	kv_set(&k, P "default.replication.factor", "-1", NULL);
	kv_set(&k, P "default.cleanup.policy", "delete", NULL);
	kv_set(&k, P "default.include", "nothing", NULL); /* ignored, as Connect does */
	kv_set(&k, P "groups", " compacted , orders,default ", NULL);
	kv_set(&k, P "compacted.include", "outbox\\.event\\.cfg.*, outbox\\.event\\.state", NULL);
	kv_set(&k, P "compacted.exclude", ".*\\.tmp", NULL);
	kv_set(&k, P "compacted.cleanup.policy", "compact", NULL);
	kv_set(&k, P "orders.include", "outbox\\.event\\..*", NULL);
	kv_set(&k, P "orders.partitions", "12", NULL);
	kv_set(&k, P "orders.retention.ms", "604800000", NULL);
	tc = parse_ok(&k, true);
	ck_assert_uint_eq(topiccreation_ngroups(tc), 3);
	g = topiccreation_match(tc, "outbox.event.cfgA");
	ck_assert_str_eq(g->name, "compacted");
	ck_assert_int_eq(g->partitions, 3);
	ck_assert_int_eq(g->replication, -1);
	ck_assert_str_eq(kv_get(g->settings, "cleanup.policy"), "compact");
	ck_assert_str_eq(topiccreation_match(tc, "outbox.event.state")->name, "compacted");
	g = topiccreation_match(tc, "outbox.event.cfg.tmp");
	ck_assert_str_eq(g->name, "orders");
	ck_assert_int_eq(g->partitions, 12);
	ck_assert_ptr_null(kv_get(g->settings, "cleanup.policy"));
	ck_assert_str_eq(kv_get(g->settings, "retention.ms"), "604800000");
	g = topiccreation_match(tc, "xoutbox.event.order");
	ck_assert_str_eq(g->name, "default");
	ck_assert_str_eq(kv_get(g->settings, "cleanup.policy"), "delete");
	ck_assert_ptr_null(kv_get(g->settings, "include"));
	topiccreation_describe(topiccreation_match(tc, "outbox.event.cfgA"), &d);
	ck_assert_str_eq(buf_cstr(&d),
			 "include outbox\\.event\\.cfg.*|outbox\\.event\\.state, exclude .*\\.tmp, "
			 "partitions 3, replication factor -1 (the broker's default), "
			 "cleanup.policy=compact");
	buf_fini(&d);
	topiccreation_free(tc);
	kv_fini(&k);
}
END_TEST

/* A named group without include matches nothing; an alias listed twice and a bad regex refused. */
START_TEST(test_groups_without_include_duplicates_and_bad_patterns)
{
	struct kv k = KV_INIT;
	struct topiccreation *tc;

	kv_set(&k, P "default.partitions", "1", NULL);
	kv_set(&k, P "default.replication.factor", "1", NULL);
	kv_set(&k, P "groups", "empty", NULL);
	tc = parse_ok(&k, true);
	ck_assert_str_eq(topiccreation_match(tc, "a")->name, "default");
	topiccreation_free(tc);
	kv_set(&k, P "groups", "a,a", NULL);
	kv_set(&k, P "a.include", "x", NULL);
	parse_fails(&k, "Duplicate alias provided: \"a\"");
	kv_set(&k, P "groups", "default, default", NULL);
	parse_fails(&k, "Duplicate alias provided: \"default\"");
	kv_set(&k, P "groups", "a,,", NULL); /* Java's split keeps the empty aliases */
	parse_fails(&k, "Duplicate alias provided: \"\"");
	kv_set(&k, P "groups", "a", NULL);
	kv_set(&k, P "a.include", "(", NULL);
	parse_fails(&k, "topic.creation.a.include: Syntax error in regular expression");
	kv_fini(&k);
}
END_TEST

static Suite *
topiccreation_suite(void)
{
	Suite *s = suite_create("topiccreation");
	TCase *tc = tcase_create("topiccreation");

	tcase_add_test(tc, test_off_without_keys_or_when_the_worker_disables_it);
	tcase_add_test(tc, test_the_default_partitions_and_replication_factor_are_required);
	tcase_add_test(tc, test_the_first_matching_group_wins_and_the_default_takes_the_rest);
	tcase_add_test(tc, test_groups_without_include_duplicates_and_bad_patterns);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(topiccreation_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
