/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The start-up check of the columns the router converts (typecheck.h): which column of a
 * relation is refused, and the line that names it. The catalog queries are the integration
 * suites' (check_relay, check_poll).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "outboxd/pg/pgtype.h"
#include "outboxd/pipeline/typecheck.h"
#include "outboxd/util/kv.h"

static struct relcache_col cols[] = {
	{ "id", PGTYPE_UUID, -1, true },
	{ "aggregatetype", PGTYPE_VARCHAR, 259, false },
	{ "aggregateid", PGTYPE_VARCHAR, 259, false },
	{ "payload", PGTYPE_JSONB, -1, false },
	{ "tags", 1187 /* interval[] */, -1, false },
	{ "dur", 603 /* box */, -1, false },
	{ "at", 604 /* polygon */, -1, false },
};
static struct relcache_rel rel = { 1, "public", "outbox", 'd', 7, cols, NULL };

static struct router *
mk(const char *placement, const char *key)
{
	struct router_config cfg = { .topic_prefix = "dbserver1", .extended_headers = true };
	struct router *r = NULL;
	struct kv smt = KV_INIT;
	char err[512] = "";

	if (placement) {
		kv_set(&smt, "table.fields.additional.placement", placement, NULL);
	}
	if (key) {
		kv_set(&smt, "table.field.event.key", key, NULL);
	}
	cfg.smt = &smt;
	ck_assert_msg(router_new(&cfg, &r, err, sizeof(err)) == 0, "%s", err);
	kv_fini(&smt);
	return r;
}

/* Only the columns the router converts count, and only those the catalog must judge. */
START_TEST(test_only_the_columns_the_router_converts_count)
{
	struct router *r = mk(NULL, NULL);
	const char *option = NULL;

	ck_assert_int_eq(typecheck_next(r, &rel, 0, &option), -1);
	router_free(r);
	r = mk("aggregateid:header:k,at:envelope:at,dur:header:d", NULL);
	ck_assert_int_eq(typecheck_next(r, &rel, 0, &option), 5); /* in column order */
	ck_assert_str_eq(option, "table.fields.additional.placement");
	ck_assert_int_eq(typecheck_next(r, &rel, 6, &option), 6);
	ck_assert_int_eq(typecheck_next(r, &rel, 7, &option), -1);
	router_free(r);
	r = mk(NULL, "tags");
	ck_assert_int_eq(typecheck_next(r, &rel, 0, &option), 4);
	ck_assert_str_eq(option, "table.field.event.key");
	router_free(r);
}
END_TEST

static bool
converts(uint32_t base, char typtype, char category, bool domain)
{
	struct pgsql_type_facts f = { .name = "t",
				      .base_oid = base,
				      .typtype = typtype,
				      .category = category,
				      .base_name = "b",
				      .domain = domain };

	return typecheck_converts(&f);
}

/* What is written as its text on both sides converts; what Debezium types does not. */
START_TEST(test_the_catalog_facts_decide)
{
	/* typed and plain built-ins, by their number */
	ck_assert(converts(PGTYPE_INT4, 'b', 'N', false));
	ck_assert(converts(PGTYPE_UUID, 'b', 'U', false));
	/* enums, network types, citext: their text */
	ck_assert(converts(16500, 'e', 'E', false));
	ck_assert(converts(869, 'b', 'I', false));
	ck_assert(converts(17000, 'b', 'S', false));
	/* built-ins not converted yet, whatever their category */
	ck_assert(!converts(603 /* box */, 'b', 'G', false));
	ck_assert(!converts(628 /* line */, 'b', 'G', false));
	/* arrays, ranges, multiranges, tsvector, extension and composite types */
	ck_assert(!converts(1561 /* bit[] */, 'b', 'A', false));
	ck_assert(!converts(3645 /* tsquery[] */, 'b', 'A', false));
	/* an array of an enum or of a string type is learnt with its element (router) */
	ck_assert(typecheck_array_elem(
		&(struct pgsql_type_facts){ .typtype = 'e', .category = 'E' }));
	ck_assert(typecheck_array_elem(
		&(struct pgsql_type_facts){ .typtype = 'b', .category = 'S' }));
	ck_assert(!typecheck_array_elem(
		&(struct pgsql_type_facts){ .typtype = 'e', .category = 'E', .domain = true }));
	ck_assert(!typecheck_array_elem(
		&(struct pgsql_type_facts){ .typtype = 'b', .category = 'U' }));
	ck_assert(!typecheck_array_elem(
		&(struct pgsql_type_facts){ .typtype = 'b', .category = 'T' }));
	ck_assert(!converts(17003, 'r', 'R', false)); /* a range type of one's own */
	ck_assert(!converts(4532, 'm', 'R', false));
	ck_assert(!converts(3615, 'b', 'U', false)); /* tsquery */
	ck_assert(!converts(17001, 'b', 'U', false));
	ck_assert(!converts(17002, 'c', 'C', false));
	ck_assert(!converts(2205, 'b', 'N', false)); /* regclass */
	/* a domain: converted as its base, so over any base outboxd converts */
	ck_assert(converts(PGTYPE_TEXT, 'b', 'S', true));
	ck_assert(converts(PGTYPE_INT4, 'b', 'N', true));
	ck_assert(converts(PGTYPE_TEXT_ARRAY, 'b', 'A', true));
	ck_assert(!converts(16500, 'e', 'E', true)); /* over an enum: Debezium fails on it */
	ck_assert(!converts(603 /* box */, 'b', 'G', true));
}
END_TEST

/* hstore and ltree by their name (their numbers differ per database); others of 'U' not. */
START_TEST(test_hstore_and_ltree_are_known_by_name)
{
	struct pgsql_type_facts f = { .name = "hstore",
				      .base_oid = 17500,
				      .typtype = 'b',
				      .category = 'U',
				      .typname = "hstore" };

	ck_assert(typecheck_converts(&f));
	snprintf(f.typname, sizeof(f.typname), "ltree");
	ck_assert(typecheck_converts(&f));
	snprintf(f.typname, sizeof(f.typname), "geometry");
	ck_assert(!typecheck_converts(&f));
	snprintf(f.typname, sizeof(f.typname), "hstore");
	f.domain = true; /* a domain over hstore: Debezium's conversion of it is not known */
	ck_assert(!typecheck_converts(&f));
}
END_TEST

START_TEST(test_a_domain_is_described_with_its_base)
{
	struct pgsql_type_facts f = { .name = "positive_int",
				      .base_oid = PGTYPE_INT4,
				      .base_name = "integer",
				      .domain = true };
	char out[300];

	typecheck_describe(&f, out, sizeof(out));
	ck_assert_str_eq(out, "positive_int, a domain over integer");
	f.domain = false;
	typecheck_describe(&f, out, sizeof(out));
	ck_assert_str_eq(out, "positive_int");
}
END_TEST

START_TEST(test_the_reason_names_table_column_option_type_and_fix)
{
	char err[1024];

	typecheck_reason(&rel, 5, "table.fields.additional.placement", "interval", err,
			 sizeof(err));
	ck_assert_msg(strstr(err, "table public.outbox: column \"dur\" "
				  "(table.fields.additional.placement) has type interval, which "
				  "outboxd does not convert yet") == err,
		      "%s", err);
	ck_assert_msg(strstr(err, "(docs/debezium.md)"), "%s", err);
	ck_assert_msg(strstr(err, "take the column out of table.fields.additional.placement"), "%s",
		      err);
	ck_assert_msg(strstr(err, "dur::text"), "%s", err);
}
END_TEST

static Suite *
typecheck_suite(void)
{
	Suite *s = suite_create("typecheck");
	TCase *tc = tcase_create("typecheck");

	tcase_add_test(tc, test_only_the_columns_the_router_converts_count);
	tcase_add_test(tc, test_the_catalog_facts_decide);
	tcase_add_test(tc, test_hstore_and_ltree_are_known_by_name);
	tcase_add_test(tc, test_a_domain_is_described_with_its_base);
	tcase_add_test(tc, test_the_reason_names_table_column_option_type_and_fix);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(typecheck_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
