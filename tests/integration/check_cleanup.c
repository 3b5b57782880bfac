/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cleanup's statements (src/run/cleanup.c) against the real PostgreSQL, step by step: a
 * row whose transaction commits after the mark's snapshot stays, however old its created_at,
 * though the slot has confirmed past the mark; a row visible in the mark goes once the slot
 * confirmed the mark's horizon, and not before. The relay's own cycle is tested end to end in
 * check_relay (test_cleanup_deletes_only_confirmed_rows) and in the fault suite.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "itest.h"
#include "outboxd/run/cleanup.h"
#include "outboxd/util/buf.h"

/* A mark: its snapshot, horizon and the one leaf, on @c. */
struct mark {
	char snapshot[4096], horizon[32], leaf[256];
};

static void
take_mark(PGconn *c, const char *schema, struct mark *m)
{
	struct cleanup_table t = { schema, "outbox" };
	char *q = cleanup_mark_sql(c, &t, 1);
	PGresult *r = PQexec(c, q);

	ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1, "%s",
		      PQerrorMessage(c));
	snprintf(m->snapshot, sizeof(m->snapshot), "%s", PQgetvalue(r, 0, 0));
	snprintf(m->horizon, sizeof(m->horizon), "%s", PQgetvalue(r, 0, 1));
	snprintf(m->leaf, sizeof(m->leaf), "%s", PQgetvalue(r, 0, 2));
	PQclear(r);
	free(q);
}

/* One batch with @m; returns the rows deleted, -1 when the slot had not confirmed the horizon. */
static long
delete_batch(PGconn *c, const struct mark *m, const char *slot)
{
	const char *params[5] = { m->snapshot, "1 second", "100", slot, m->horizon };
	struct buf q = BUF_INIT;
	PGresult *r;
	long n;

	cleanup_delete_sql(m->leaf, "\"created_at\"", &q);
	r = PQexecParams(c, buf_cstr(&q), 5, NULL, params, NULL, NULL, 0);
	ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s", PQerrorMessage(c));
	n = strcmp(PQgetvalue(r, 0, 0), "t") == 0 ? atol(PQgetvalue(r, 0, 1)) : -1;
	PQclear(r);
	buf_fini(&q);
	return n;
}

static void
advance(PGconn *c, const char *slot)
{
	itest_sqlf(c, "SELECT pg_replication_slot_advance('%s', pg_current_wal_lsn())", slot);
}

static char *
ids(PGconn *c, const char *schema)
{
	struct buf q = BUF_INIT;
	PGresult *r;
	char *out;

	buf_add_fmt(&q, "SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM %s.outbox",
		    schema);
	r = PQexec(c, buf_cstr(&q));
	ck_assert_int_eq(PQresultStatus(r), PGRES_TUPLES_OK);
	out = strdup(PQgetvalue(r, 0, 0));
	PQclear(r);
	buf_fini(&q);
	return out;
}

START_TEST(test_only_rows_visible_in_the_mark_and_confirmed_go)
{
	PGconn *a = itest_pg(), *b = itest_pg();
	char *schema = itest_unique("cl"), *slot = itest_unique("cl_slot"), *left;
	struct mark m1, m2, m3;

	itest_sqlf(b,
		   "CREATE SCHEMA %s; CREATE TABLE %s.outbox (id int PRIMARY KEY, "
		   "created_at timestamptz NOT NULL DEFAULT now())",
		   schema, schema);
	itest_sqlf(b, "SELECT pg_create_logical_replication_slot('%s', 'test_decoding')", slot);
	itest_sqlf(b, "INSERT INTO %s.outbox VALUES (1, '2000-01-01'), (2, '2000-01-01')", schema);
	/* row 10: inserted long ago by its created_at, committed only after the mark */
	PQclear(itest_sql(a, "BEGIN"));
	itest_sqlf(a, "INSERT INTO %s.outbox VALUES (10, '2000-01-01')", schema);
	take_mark(b, schema, &m1);
	PQclear(itest_sql(a, "COMMIT"));
	/* the slot has not confirmed the horizon yet: nothing goes */
	ck_assert_int_eq(delete_batch(b, &m1, slot), -1);
	ck_assert_str_eq(left = ids(b, schema), "1,2,10");
	free(left);
	/* confirmed past the horizon (and past row 10's commit): only the mark's rows go */
	advance(b, slot);
	ck_assert_int_eq(delete_batch(b, &m1, slot), 2);
	ck_assert_str_eq(left = ids(b, schema), "10");
	free(left);
	/* the next mark sees row 10; it goes once the slot confirmed that mark's horizon */
	take_mark(b, schema, &m2);
	itest_sqlf(b, "INSERT INTO %s.outbox VALUES (11, '2000-01-01')", schema);
	take_mark(b, schema, &m3);
	advance(b, slot);
	ck_assert_int_eq(delete_batch(b, &m2, slot), 1);
	ck_assert_str_eq(left = ids(b, schema), "11");
	free(left);
	/* a row younger than the retention stays */
	itest_sqlf(b, "UPDATE %s.outbox SET created_at = now()", schema);
	ck_assert_int_eq(delete_batch(b, &m3, slot), 0);
	ck_assert_str_eq(left = ids(b, schema), "11");
	free(left);
	itest_sqlf(b, "SELECT pg_drop_replication_slot('%s')", slot);
	itest_sqlf(b, "DROP SCHEMA %s CASCADE", schema);
	PQfinish(a);
	PQfinish(b);
	free(schema);
	free(slot);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cleanup");
	TCase *tc = tcase_create("statements");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_only_rows_visible_in_the_mark_and_confirmed_go);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
