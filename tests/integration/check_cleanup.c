/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cleanup's statements (src/relay/cleanup.c) against the real PostgreSQL, step by step: a
 * row whose transaction commits after the mark's snapshot stays, however old its created_at,
 * though the slot has confirmed past the mark; a row visible in the mark goes once the slot
 * confirmed the mark's horizon, and not before. The relay's own cycle is tested end to end in
 * check_relay (test_cleanup_deletes_only_confirmed_rows) and in the fault suite.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <signal.h>
#include <unistd.h>

#include "itest.h"
#include "outboxd/relay/cleanup.h"
#include "outboxd/util/buf.h"
#include "relayfix.h"

/* A mark: its snapshot, horizon and the one leaf, on @c. */
struct mark {
	char snapshot[4096], horizon[32], leaf[256];
};

static void
take_mark(PGconn *c, const char *schema, struct mark *m)
{
	struct cleanup_table t = { schema, "outbox" };
	char *q = cleanup_sql_mark(c, &t, 1, "created_at", "1 second");
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

	cleanup_sql_delete(m->leaf, "\"created_at\"", &q);
	r = PQexecParams(c, buf_cstr(&q), 5, NULL, params, NULL, NULL, 0);
	ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s", PQerrorMessage(c));
	n = strcmp(PQgetvalue(r, 0, 0), "t") == 0 ? atol(PQgetvalue(r, 0, 1)) : -1;
	PQclear(r);
	buf_fini(&q);
	return n;
}

/*
 * Confirms the slot past every WAL record inserted so far. A mark's horizon is the insert
 * position, which can be ahead of what is written (a running_xacts record of the background
 * writer still in the WAL buffers), and a slot advances only to what is flushed: a transaction
 * with a logical message flushes the WAL through its commit first (a fresh run on PostgreSQL 17 lost that race).
 */
static void
advance(PGconn *c, const char *slot)
{
	itest_sqlf(c, "SELECT pg_logical_emit_message(true, 'outboxd-cleanup-test', '')");
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

/*
 * A row inserted under a SAVEPOINT (an ORM's nested transaction) by a transaction still running
 * at the mark stays, though it is older than the retention and the slot confirmed the mark's
 * horizon (issue 34 item 10): its xmin is the subtransaction's xid, which the snapshot's list of
 * running transactions does not hold, so pg_visible_in_snapshot() called it committed, and the
 * cycle deleted it before its commit was confirmed. A row committed while that transaction ran
 * waits for a later mark too; the next mark takes both.
 */
START_TEST(test_a_savepoints_row_stays_until_its_commit_is_confirmed)
{
	PGconn *a = itest_pg(), *b = itest_pg();
	char *schema = itest_unique("cls"), *slot = itest_unique("cls_slot"), *left;
	struct mark m1, m2;

	itest_sqlf(b,
		   "CREATE SCHEMA %s; CREATE TABLE %s.outbox (id int PRIMARY KEY, "
		   "created_at timestamptz NOT NULL DEFAULT now())",
		   schema, schema);
	itest_sqlf(b, "SELECT pg_create_logical_replication_slot('%s', 'test_decoding')", slot);
	/* row 20 under a savepoint of a transaction that outlives the mark */
	PQclear(itest_sql(a, "BEGIN"));
	PQclear(itest_sql(a, "SAVEPOINT orm_nested"));
	itest_sqlf(a, "INSERT INTO %s.outbox VALUES (20, '2000-01-01')", schema);
	PQclear(itest_sql(a, "RELEASE SAVEPOINT orm_nested"));
	/* a transaction that ends after it: the snapshot's xmax passes the subtransaction's xid */
	itest_sqlf(b, "INSERT INTO %s.outbox VALUES (21, '2000-01-01')", schema);
	take_mark(b, schema, &m1);
	PQclear(itest_sql(a, "COMMIT"));
	advance(b, slot);
	ck_assert_int_eq(delete_batch(b, &m1, slot), 0);
	ck_assert_str_eq(left = ids(b, schema), "20,21");
	free(left);
	/* the next mark: both ended before it; they go once the slot confirmed its horizon */
	take_mark(b, schema, &m2);
	advance(b, slot);
	ck_assert_int_eq(delete_batch(b, &m2, slot), 2);
	ck_assert_str_eq(left = ids(b, schema), "");
	free(left);
	itest_sqlf(b, "SELECT pg_drop_replication_slot('%s')", slot);
	itest_sqlf(b, "DROP SCHEMA %s CASCADE", schema);
	PQfinish(a);
	PQfinish(b);
	free(schema);
	free(slot);
}
END_TEST

/* The one value of @q on @c, as a bool. */
static bool
truth(PGconn *c, const char *q)
{
	PGresult *r = itest_sql(c, q);
	bool t = strcmp(PQgetvalue(r, 0, 0), "t") == 0;

	PQclear(r);
	return t;
}

/* Waits up to @timeout_s for @q to be true. */
static bool
wait_truth(PGconn *c, const char *q, int timeout_s)
{
	for (int i = 0; i < timeout_s * 10; i++) {
		if (truth(c, q)) {
			return true;
		}
		usleep(100 * 1000);
	}
	return false;
}

/* The expired partitions a mark names, as "leaf=t|f" in order. */
static char *
expired_of(PGconn *c, const char *schema)
{
	struct cleanup_table t = { schema, "outbox" };
	char *q = cleanup_sql_mark(c, &t, 1, "created_at", "1 second");
	PGresult *r = itest_sql(c, q);
	struct buf out = BUF_INIT;

	for (int i = 0; i < PQntuples(r); i++) {
		const char *leaf = strrchr(PQgetvalue(r, i, CLEANUP_MARK_LEAF), '_');

		buf_add_fmt(&out, "%s%s=%s", i ? "," : "", leaf ? leaf + 1 : "?",
			    PQgetvalue(r, i, CLEANUP_MARK_EXPIRED));
	}
	PQclear(r);
	free(q);
	return buf_steal(&out);
}

/*
 * outboxd.cleanup.partitions=drop with a relay: an outbox partitioned by created_at; the
 * partitions whose range lies before the retention go whole once confirmed (an empty one too),
 * the current one keeps its place and loses its rows one by one; a partition that receives a
 * row while the broker is frozen stays until that row is delivered.
 */
START_TEST(test_the_relay_drops_expired_partitions_once_confirmed)
{
	struct relayfix f;
	int kpid = itest_kafka_pid(), port = itest_free_port();
	struct buf extra = BUF_INIT, q = BUF_INIT;
	char *expired;

	relayfix_init(&f, false);
	itest_sqlf(f.pg,
		   "DROP PUBLICATION %s; DROP TABLE %s.outbox; CREATE TABLE %s.outbox (id uuid NOT "
		   "NULL, aggregatetype varchar(255) NOT NULL, aggregateid varchar(255) NOT NULL, "
		   "type varchar(255) NOT NULL, payload jsonb, created_at timestamptz NOT NULL "
		   "DEFAULT now(), PRIMARY KEY (id, created_at)) PARTITION BY RANGE (created_at)",
		   f.pub, f.name, f.name);
	itest_sqlf(f.pg,
		   "CREATE TABLE %s.outbox_a PARTITION OF %s.outbox FOR VALUES FROM ('2000-01-01') "
		   "TO ('2000-01-02'); CREATE TABLE %s.outbox_b PARTITION OF %s.outbox FOR VALUES "
		   "FROM ('2000-01-02') TO ('2000-01-03'); CREATE TABLE %s.outbox_c PARTITION OF "
		   "%s.outbox FOR VALUES FROM ('2000-01-03') TO (MAXVALUE)",
		   f.name, f.name, f.name, f.name, f.name, f.name);
	itest_sqlf(f.pg,
		   "CREATE PUBLICATION %s FOR TABLE %s.outbox WITH (publish = 'insert', "
		   "publish_via_partition_root = true)",
		   f.pub, f.name);
	/* the publication before the slot (reference pgoutput.md 1.4) */
	itest_sqlf(f.pg, "SELECT pg_drop_replication_slot('%s')", f.slot);
	itest_sqlf(f.pg, "SELECT pg_create_logical_replication_slot('%s', 'pgoutput')", f.slot);
	ck_assert_str_eq(expired = expired_of(f.pg, f.name), "a=t,b=t,c=f");
	free(expired);
	buf_add_fmt(&extra,
		    "outboxd.cleanup.retention=1 second\noutboxd.cleanup.interval.ms=200\n"
		    "outboxd.cleanup.partitions=drop\noutboxd.http.port=%d",
		    port);
	/* the rows before the relay starts: an empty expired partition may go at the first
	 * cleanup cycle, so a row inserted after it could find its partition gone */
	itest_sqlf(
		f.pg,
		"INSERT INTO %s.outbox VALUES (gen_random_uuid(), 'T', 'a', 'E', '{}', "
		"'2000-01-01 12:00'), (gen_random_uuid(), 'T', 'a', 'E', '{}', '2000-01-01 13:00'), "
		"(gen_random_uuid(), 'T', 'a', 'E', '{}', DEFAULT)",
		f.name);
	relayfix_config(&f, buf_cstr(&extra), NULL);
	relayfix_start(&f);
	ck_assert(relayfix_wait_log(&f, "streaming slot", 30));
	buf_add_fmt(&q,
		    "SELECT to_regclass('%s.outbox_a') IS NULL AND to_regclass('%s.outbox_b') IS "
		    "NULL AND to_regclass('%s.outbox_c') IS NOT NULL AND (SELECT count(*) = 0 FROM "
		    "%s.outbox)",
		    f.name, f.name, f.name, f.name);
	ck_assert_msg(wait_truth(f.pg, buf_cstr(&q), 30), "expired partitions not dropped:\n%s",
		      relayfix_log(&f));
	ck_assert_msg(itest_wait_metric(port, "outboxd_cleanup_partitions_total", 2, 5), "%s",
		      "outboxd_cleanup_partitions_total is not 2");
	/* a row for an old range while the broker is frozen: its partition stays. The partition
	 * and its row in one transaction, or the cleanup could drop it while still empty. */
	ck_assert_int_eq(kill(kpid, SIGSTOP), 0);
	itest_sqlf(f.pg,
		   "CREATE TABLE %s.outbox_d PARTITION OF %s.outbox FOR VALUES FROM ('1999-01-01') "
		   "TO ('1999-01-02'); INSERT INTO %s.outbox VALUES (gen_random_uuid(), 'T', 'a', "
		   "'E', '{}', '1999-01-01 12:00')",
		   f.name, f.name, f.name);
	buf_reset(&q);
	buf_add_fmt(&q, "SELECT to_regclass('%s.outbox_d') IS NOT NULL", f.name);
	for (int i = 0; i < 20; i++) {
		if (!truth(f.pg, buf_cstr(&q))) {
			kill(kpid, SIGCONT);
			ck_abort_msg("a partition with an unconfirmed row was dropped");
		}
		usleep(200 * 1000);
	}
	ck_assert_int_eq(kill(kpid, SIGCONT), 0);
	buf_reset(&q);
	buf_add_fmt(&q, "SELECT to_regclass('%s.outbox_d') IS NULL", f.name);
	ck_assert_msg(wait_truth(f.pg, buf_cstr(&q), 30), "the partition was not dropped after "
							  "its row was delivered");
	ck_assert(relayfix_wait_log(&f, "dropped partition", 5));
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	buf_fini(&extra);
	buf_fini(&q);
	relayfix_fini(&f);
}
END_TEST

/* The partition step itself: detach, and not while a row is not visible in the mark. */
START_TEST(test_partition_step_detaches_only_when_every_row_is_in_the_mark)
{
	PGconn *a = itest_pg(), *b = itest_pg();
	char *schema = itest_unique("clp"), *slot = itest_unique("clp_slot"), *q;
	struct mark m;
	struct buf leaf = BUF_INIT, parent = BUF_INIT;
	PGresult *r;

	itest_sqlf(b,
		   "CREATE SCHEMA %s; CREATE TABLE %s.outbox (id int, created_at timestamptz NOT "
		   "NULL) PARTITION BY RANGE (created_at); CREATE TABLE %s.outbox_old PARTITION OF "
		   "%s.outbox FOR VALUES FROM ('2000-01-01') TO ('2000-01-02')",
		   schema, schema, schema, schema);
	itest_sqlf(b, "SELECT pg_create_logical_replication_slot('%s', 'test_decoding')", slot);
	itest_sqlf(b, "INSERT INTO %s.outbox VALUES (1, '2000-01-01 01:00')", schema);
	PQclear(itest_sql(a, "BEGIN"));
	itest_sqlf(a, "INSERT INTO %s.outbox VALUES (2, '2000-01-01 02:00')", schema);
	take_mark(b, schema, &m);
	PQclear(itest_sql(a, "COMMIT"));
	itest_sqlf(b, "SELECT pg_replication_slot_advance('%s', pg_current_wal_lsn())", slot);
	buf_add_fmt(&leaf, "%s.outbox_old", schema);
	buf_add_fmt(&parent, "%s.outbox", schema);
	/* row 2 committed after the mark: the partition stays attached */
	q = cleanup_sql_partition(b, buf_cstr(&leaf), buf_cstr(&parent), m.snapshot, slot,
				  m.horizon, false);
	r = itest_sql(b, q);
	ck_assert_str_eq(PQgetvalue(r, 0, 0), "f");
	PQclear(r);
	free(q);
	/* the next mark has it: detached, the table and its rows kept */
	take_mark(b, schema, &m);
	itest_sqlf(b, "SELECT pg_replication_slot_advance('%s', pg_current_wal_lsn())", slot);
	q = cleanup_sql_partition(b, buf_cstr(&leaf), buf_cstr(&parent), m.snapshot, slot,
				  m.horizon, false);
	r = itest_sql(b, q);
	ck_assert_str_eq(PQgetvalue(r, 0, 0), "t");
	PQclear(r);
	free(q);
	r = itest_sql(b, "SELECT 1");
	PQclear(r);
	buf_reset(&parent);
	buf_add_fmt(&parent,
		    "SELECT NOT relispartition AND (SELECT count(*) = 2 FROM %s.outbox_old) FROM "
		    "pg_class WHERE oid = '%s.outbox_old'::regclass",
		    schema, schema);
	ck_assert(truth(b, buf_cstr(&parent)));
	itest_sqlf(b, "SELECT pg_drop_replication_slot('%s')", slot);
	itest_sqlf(b, "DROP SCHEMA %s CASCADE", schema);
	buf_fini(&leaf);
	buf_fini(&parent);
	PQfinish(a);
	PQfinish(b);
	free(schema);
	free(slot);
}
END_TEST

/* @name (a partition of @schema.outbox) as the mark names it: regclass text, quoted as needed. */
static char *
leaf_text(PGconn *c, const char *schema, const char *name)
{
	const char *params[2] = { schema, name };
	PGresult *r = PQexecParams(c, "SELECT format('%I.%I', $1::text, $2::text)::regclass::text",
				   2, NULL, params, NULL, NULL, 0);
	char *out;

	ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s", PQerrorMessage(c));
	out = strdup(PQgetvalue(r, 0, 0));
	PQclear(r);
	return out;
}

/*
 * Partition names are data, never SQL (issue 34 item 11): the partition step used to paste them
 * into its DO block's dollar-quoted body, where "p$outboxd$x" ended the body (a syntax error: the
 * partition never went) and a crafted name ran its own SQL as outboxd's role. Each name here is
 * dropped or detached as any other, and the canary table the crafted one asks for never exists.
 */
START_TEST(test_partition_names_are_data_not_sql)
{
	static const char *const names[] = {
		"p$outboxd$x",
		"q$outboxd$; CREATE TABLE outboxd_canary (); DO $outboxd$ BEGIN END $outboxd$; --",
		"r'); CREATE TABLE outboxd_canary (); --\\",
	};
	PGconn *c = itest_pg();
	char *schema = itest_unique("cln"), *slot = itest_unique("cln_slot"), *q;
	struct buf parent = BUF_INIT, canary = BUF_INIT;
	struct mark m;
	PGresult *r;

	itest_sqlf(c,
		   "CREATE SCHEMA %s; CREATE TABLE %s.outbox (id int, created_at timestamptz NOT "
		   "NULL) PARTITION BY RANGE (created_at)",
		   schema, schema);
	for (int i = 0; i < 3; i++) {
		char from[32], to[32];

		snprintf(from, sizeof(from), "2000-01-0%d", i + 1);
		snprintf(to, sizeof(to), "2000-01-0%d", i + 2);
		r = PQexecParams(
			c,
			"SELECT format('CREATE TABLE %I.%I PARTITION OF %I.outbox FOR "
			"VALUES FROM (%L) TO (%L)', $1::text, $2::text, $1::text, $3::text, "
			"$4::text)",
			4, NULL, (const char *[]){ schema, names[i], from, to }, NULL, NULL, 0);
		ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s", PQerrorMessage(c));
		itest_sqlf(c, "%s", PQgetvalue(r, 0, 0));
		PQclear(r);
		itest_sqlf(c, "INSERT INTO %s.outbox VALUES (%d, '2000-01-0%d 12:00')", schema, i,
			   i + 1);
	}
	itest_sqlf(c, "SELECT pg_create_logical_replication_slot('%s', 'test_decoding')", slot);
	q = cleanup_sql_mark(c, &(struct cleanup_table){ schema, "outbox" }, 1, "created_at",
			     "1 second");
	r = itest_sql(c, q);
	ck_assert_int_eq(PQntuples(r), 3);
	snprintf(m.snapshot, sizeof(m.snapshot), "%s", PQgetvalue(r, 0, CLEANUP_MARK_SNAPSHOT));
	snprintf(m.horizon, sizeof(m.horizon), "%s", PQgetvalue(r, 0, CLEANUP_MARK_HORIZON));
	PQclear(r);
	free(q);
	advance(c, slot);
	buf_add_fmt(&parent, "%s.outbox", schema);
	for (int i = 0; i < 3; i++) {
		char *leaf = leaf_text(c, schema, names[i]);

		q = cleanup_sql_partition(c, leaf, buf_cstr(&parent), m.snapshot, slot, m.horizon,
					  i != 1);
		r = PQexec(c, q);
		ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "partition %s: %s", leaf,
			      PQerrorMessage(c));
		ck_assert_msg(strcmp(PQgetvalue(r, 0, 0), "t") == 0, "partition %s stayed", leaf);
		PQclear(r);
		free(q);
		free(leaf);
	}
	buf_add_fmt(
		&canary,
		"SELECT to_regclass('outboxd_canary') IS NULL AND to_regclass('%s.outboxd_canary') "
		"IS NULL AND (SELECT count(*) FROM pg_inherits WHERE inhparent = '%s.outbox'::regclass) = 0 "
		"AND (SELECT count(*) FROM pg_class WHERE relnamespace = '%s'::regnamespace AND "
		"relkind = 'r') = 1",
		schema, schema, schema);
	ck_assert_msg(truth(c, buf_cstr(&canary)),
		      "a partition name ran as SQL, or a partition was not dropped or detached");
	itest_sqlf(c, "SELECT pg_drop_replication_slot('%s')", slot);
	itest_sqlf(c, "DROP SCHEMA %s CASCADE", schema);
	buf_fini(&parent);
	buf_fini(&canary);
	PQfinish(c);
	free(schema);
	free(slot);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cleanup");
	TCase *tc = tcase_create("statements");
	TCase *names = tcase_create("statements-alone"); /* PostgreSQL only, no broker */
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_only_rows_visible_in_the_mark_and_confirmed_go);
	tcase_add_test(tc, test_partition_step_detaches_only_when_every_row_is_in_the_mark);
	tcase_add_test(tc, test_the_relay_drops_expired_partitions_once_confirmed);
	suite_add_tcase(s, tc);
	tcase_set_timeout(names, 60);
	tcase_add_test(names, test_partition_names_are_data_not_sql);
	tcase_add_test(names, test_a_savepoints_row_stays_until_its_commit_is_confirmed);
	suite_add_tcase(s, names);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
