/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgoutput.h"
#include "outboxd/pg/relcache.h"
#include "outboxd/util/mem.h"

static const char *const outbox_cols[] = {
	"id", "aggregatetype", "aggregateid", "type", "payload", "tracingspancontext",
};

static struct pgoutput_rel_col cols[6];
static int freed;

/* A Relation message like the captured outbox one (reference 6), with @ncols columns. */
static struct pgoutput_msg
relation(uint32_t relid, const char *nsp, const char *name, int ncols)
{
	struct pgoutput_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PGOUTPUT_MSG_RELATION;
	m.u.relation.relid = relid;
	m.u.relation.nspname = slice_from_str(nsp);
	m.u.relation.relname = slice_from_str(name);
	m.u.relation.replident = 'd';
	for (int i = 0; i < ncols; i++) {
		cols[i].flags = i == 0 ? 1 : 0;
		cols[i].name = slice_from_str(outbox_cols[i]);
		cols[i].type_oid = i == 0 ? 2950 : i == 4 ? 3802 : 25;
		cols[i].typmod = -1;
	}
	m.u.relation.ncols = ncols;
	m.u.relation.cols = ncols ? cols : NULL;
	return m;
}

/* free_user for tests: the user pointers are heap ints; count the calls. */
static void
count_free(void *user)
{
	freed++;
	free(user);
}

static int *
user_int(int v)
{
	int *p = xmalloc(sizeof(*p));

	*p = v;
	return p;
}

START_TEST(test_applied_relation_is_found_by_relid)
{
	struct relcache *rc = relcache_new();
	struct pgoutput_msg m = relation(16384, "public", "outbox", 5);
	const struct relcache_rel *rel = relcache_apply(rc, &m, NULL);
	struct relcache_rel *got;

	ck_assert_ptr_nonnull(rel);
	ck_assert_int_eq(relcache_count(rc), 1);
	got = relcache_get(rc, 16384);
	ck_assert_ptr_eq(got, rel);
	ck_assert_uint_eq(got->relid, 16384);
	ck_assert_str_eq(got->nspname, "public");
	ck_assert_str_eq(got->relname, "outbox");
	ck_assert_int_eq(got->replident, 'd');
	ck_assert_int_eq(got->ncols, 5);
	ck_assert_str_eq(got->cols[0].name, "id");
	ck_assert(got->cols[0].key);
	ck_assert_uint_eq(got->cols[0].type_oid, 2950);
	ck_assert_int_eq(got->cols[0].typmod, -1);
	ck_assert_str_eq(got->cols[4].name, "payload");
	ck_assert(!got->cols[4].key);
	ck_assert_uint_eq(got->cols[4].type_oid, 3802);
	ck_assert_ptr_null(got->user);
	relcache_free(rc, NULL);
}
END_TEST

/* The entry owns its bytes: the message's buffer may go away. */
START_TEST(test_entry_copies_the_message_bytes)
{
	struct relcache *rc = relcache_new();
	char nsp[] = "public", name[] = "outbox";
	struct pgoutput_msg m = relation(16384, nsp, name, 1);
	const struct relcache_rel *rel = relcache_apply(rc, &m, NULL);

	memset(nsp, 'x', strlen(nsp));
	memset(name, 'y', strlen(name));
	ck_assert_str_eq(rel->nspname, "public");
	ck_assert_str_eq(rel->relname, "outbox");
	ck_assert_ptr_ne(rel->cols[0].name, outbox_cols[0]);
	relcache_free(rc, NULL);
}
END_TEST

START_TEST(test_unknown_relid_is_null_and_not_counted)
{
	struct relcache *rc = relcache_new();
	struct pgoutput_msg m = relation(16384, "public", "outbox", 5);

	ck_assert_ptr_null(relcache_get(rc, 16384));
	ck_assert_int_eq(relcache_count(rc), 0);
	relcache_apply(rc, &m, NULL);
	ck_assert_ptr_null(relcache_get(rc, 16383));
	ck_assert_ptr_null(relcache_get(rc, 16385));
	ck_assert_ptr_null(relcache_get(rc, 0));
	relcache_free(rc, NULL);
	relcache_free(NULL, NULL);
}
END_TEST

START_TEST(test_empty_namespace_is_pg_catalog)
{
	struct relcache *rc = relcache_new();
	struct pgoutput_msg m = relation(1259, "", "pg_class", 0);
	const struct relcache_rel *rel = relcache_apply(rc, &m, NULL);

	ck_assert_str_eq(rel->nspname, "pg_catalog");
	ck_assert_str_eq(rel->relname, "pg_class");
	ck_assert_int_eq(rel->ncols, 0);
	relcache_free(rc, NULL);
}
END_TEST

/* ALTER TABLE outbox ADD COLUMN: the next Relation has 6 columns (reference 4.5). */
START_TEST(test_replace_after_alter)
{
	struct relcache *rc = relcache_new();
	struct pgoutput_msg m = relation(16384, "public", "outbox", 5);
	struct relcache_rel *rel = (struct relcache_rel *)relcache_apply(rc, &m, count_free);

	rel->user = user_int(1);
	freed = 0;
	m = relation(16384, "public", "outbox", 6);
	rel = (struct relcache_rel *)relcache_apply(rc, &m, count_free);
	ck_assert_int_eq(freed, 1);
	ck_assert_int_eq(relcache_count(rc), 1);
	ck_assert_ptr_eq(relcache_get(rc, 16384), rel);
	ck_assert_int_eq(rel->ncols, 6);
	ck_assert_str_eq(rel->cols[5].name, "tracingspancontext");
	ck_assert_ptr_null(rel->user);
	rel->user = user_int(2);
	relcache_free(rc, count_free);
	ck_assert_int_eq(freed, 2);
}
END_TEST

/* Renames keep the relid: the entry follows it. */
START_TEST(test_replace_rename)
{
	struct relcache *rc = relcache_new();
	struct pgoutput_msg m = relation(16384, "public", "outbox", 5);

	relcache_apply(rc, &m, NULL);
	m = relation(16384, "app", "events", 5);
	relcache_apply(rc, &m, NULL);
	ck_assert_str_eq(relcache_get(rc, 16384)->nspname, "app");
	ck_assert_str_eq(relcache_get(rc, 16384)->relname, "events");
	relcache_free(rc, NULL);
}
END_TEST

START_TEST(test_free_calls_free_user)
{
	struct relcache *rc = relcache_new();

	freed = 0;
	for (uint32_t relid = 1; relid <= 10; relid++) {
		struct pgoutput_msg m = relation(relid, "public", "t", 1);

		relcache_get(rc, relid);
		((struct relcache_rel *)relcache_apply(rc, &m, count_free))->user =
			relid % 2 ? user_int((int)relid) : NULL;
	}
	relcache_free(rc, count_free);
	ck_assert_int_eq(freed, 5);
}
END_TEST

START_TEST(test_thousands_of_relids_in_any_order_are_all_found)
{
	struct relcache *rc = relcache_new();
	const int n = 5000;
	struct relcache_rel *rels[64];

	/* a scattered order, so inserts land at the front, middle and back */
	for (int i = 0; i < n; i++) {
		uint32_t relid = (uint32_t)((i * 7919) % n) * 3 + 16384;
		struct pgoutput_msg m = relation(relid, "public", "t", 2);

		relcache_apply(rc, &m, NULL);
		if (i < 64) {
			rels[i] = relcache_get(rc, relid);
		}
	}
	ck_assert_int_eq(relcache_count(rc), n);
	for (int i = 0; i < n; i++) {
		uint32_t relid = (uint32_t)i * 3 + 16384;

		ck_assert_ptr_nonnull(relcache_get(rc, relid));
		ck_assert_uint_eq(relcache_get(rc, relid)->relid, relid);
		ck_assert_ptr_null(relcache_get(rc, relid + 1));
	}
	/* entries do not move when others are added */
	for (int i = 0; i < 64; i++) {
		ck_assert_ptr_eq(relcache_get(rc, rels[i]->relid), rels[i]);
	}
	ck_assert_ptr_nonnull(relcache_get(rc, 16384));
	ck_assert_ptr_null(relcache_get(rc, UINT32_MAX));
	relcache_free(rc, NULL);
}
END_TEST

START_TEST(test_decoded_relation_applies_and_other_messages_are_refused)
{
	/* the captured Relation of reference 6, through the decoder */
	static const uint8_t rel[] = {
		'R', 0,	  0,   0x40, 0,	   'p',	 'u',  'b',  'l',  'i',	 'c', 0,
		'o', 'u', 't', 'b',  'o',  'x',	 0,    'd',  0,	   1,	 1,   'i',
		'd', 0,	  0,   0,    0x0b, 0x86, 0xff, 0xff, 0xff, 0xff,
	};
	struct pgoutput_decoder d;
	struct pgoutput_msg m;
	struct relcache *rc = relcache_new();
	const struct relcache_rel *r;

	pgoutput_decoder_init(&d, 1);
	ck_assert_int_eq(pgoutput_decode(&d, rel, sizeof(rel), &m, NULL, 0), 0);
	r = relcache_apply(rc, &m, NULL);
	ck_assert_str_eq(r->nspname, "public");
	ck_assert_str_eq(r->cols[0].name, "id");
	ck_assert(r->cols[0].key);
	m.type = PGOUTPUT_MSG_INSERT;
	ck_assert_ptr_null(relcache_apply(rc, &m, NULL));
	ck_assert_int_eq(relcache_count(rc), 1);
	pgoutput_decoder_fini(&d);
	relcache_free(rc, NULL);
}
END_TEST

static Suite *
relcache_suite(void)
{
	Suite *s = suite_create("relcache");
	TCase *tc = tcase_create("apply");

	tcase_add_test(tc, test_applied_relation_is_found_by_relid);
	tcase_add_test(tc, test_entry_copies_the_message_bytes);
	tcase_add_test(tc, test_unknown_relid_is_null_and_not_counted);
	tcase_add_test(tc, test_empty_namespace_is_pg_catalog);
	tcase_add_test(tc, test_decoded_relation_applies_and_other_messages_are_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("replace");
	tcase_add_test(tc, test_replace_after_alter);
	tcase_add_test(tc, test_replace_rename);
	tcase_add_test(tc, test_free_calls_free_user);
	suite_add_tcase(s, tc);

	tc = tcase_create("scale");
	tcase_add_test(tc, test_thousands_of_relids_in_any_order_are_all_found);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(relcache_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
