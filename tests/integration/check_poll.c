/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The polling publisher (`outboxd poll`) end to end, against the real PostgreSQL and Kafka of
 * the test stack, on a relayfix outbox extended as sql/outbox_poll.sql makes it (seq identity,
 * published_at, partial index, NOTIFY trigger), so `outboxd run` can publish the same rows.
 */
#include <check.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"
#include "outboxd/util/mem.h"
#include "relayfix.h"

enum { N_AGGS = 20 };

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static void sqlf(PGconn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
sqlf(PGconn *c, const char *fmt, ...)
{
	struct buf q = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_add_vfmt(&q, fmt, ap);
	va_end(ap);
	PQclear(itest_sql(c, buf_cstr(&q)));
	buf_fini(&q);
}

static long intf(PGconn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static long
intf(PGconn *c, const char *fmt, ...)
{
	struct buf q = BUF_INIT;
	PGresult *r;
	va_list ap;
	long v;

	va_start(ap, fmt);
	buf_add_vfmt(&q, fmt, ap);
	va_end(ap);
	r = itest_sql(c, buf_cstr(&q));
	v = strtol(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	buf_fini(&q);
	return v;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The fixture's outbox as sql/outbox_poll.sql makes it, and the configuration files. */
static void
poll_fixture(struct relayfix *f, const char *worker_extra, char **ret_topic)
{
	relayfix_init(f, false);
	sqlf(f->pg,
	     "ALTER TABLE %s.outbox ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY (CACHE 1), "
	     "ADD COLUMN published_at timestamptz NULL",
	     f->name);
	sqlf(f->pg, "CREATE INDEX ON %s.outbox (seq) WHERE published_at IS NULL", f->name);
	sqlf(f->pg,
	     "CREATE FUNCTION %s.outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
	     "PERFORM pg_notify('%s', ''); RETURN NULL; END; $$",
	     f->name, f->name);
	sqlf(f->pg,
	     "CREATE TRIGGER outbox_notify AFTER INSERT ON %s.outbox FOR EACH STATEMENT "
	     "EXECUTE FUNCTION %s.outbox_notify()",
	     f->name, f->name);
	{
		struct buf w = BUF_INIT;

		buf_add_fmt(&w, "outboxd.poll.notify.channel=%s\n%s", f->name,
			    worker_extra ? worker_extra : "");
		relayfix_config(f, buf_cstr(&w), NULL);
		buf_fini(&w);
	}
	{
		struct buf t = BUF_INIT;

		buf_add_fmt(&t, "outbox.event.%s_order", f->name);
		*ret_topic = buf_steal(&t);
	}
}

/* @ntx transactions of @per rows; row k goes to aggregate k % N_AGGS with its number k. */
static void
insert_rows(struct relayfix *f, PGconn *c, int first, int ntx, int per)
{
	for (int t = 0; t < ntx; t++) {
		int k0 = first + t * per;

		sqlf(c,
		     "INSERT INTO %s.outbox (id, aggregatetype, aggregateid, type, payload) "
		     "SELECT gen_random_uuid(), '%s_order', 'agg-' || (k %% %d), 'Created', "
		     "jsonb_build_object('k', k) FROM generate_series(%d, %d) AS k",
		     f->name, f->name, N_AGGS, k0, k0 + per - 1);
	}
}

/* Waits until @want rows are published (or gone, after=delete); the seconds it took or -1. */
static double
wait_published(struct relayfix *f, long want, bool deleted, int timeout_s)
{
	double t0 = now_s();

	while (now_s() - t0 < timeout_s) {
		long n = deleted ? intf(f->pg, "SELECT %ld - count(*) FROM %s.outbox", want,
					f->name) :
				   intf(f->pg,
					"SELECT count(*) FROM %s.outbox WHERE published_at IS "
					"NOT NULL",
					f->name);

		if (n >= want) {
			return now_s() - t0;
		}
		usleep(20 * 1000);
	}
	return -1;
}

static const char *
header(const struct itest_record *r, const char *name, size_t *len)
{
	const void *v = NULL;

	if (rd_kafka_header_get_last(r->headers, name, &v, len) != 0) {
		return NULL;
	}
	return v;
}

/* Every header of @a equals @b's, name, order and bytes, but runId (fresh per start). */
static void
same_headers(const struct itest_record *a, const struct itest_record *b)
{
	size_t n = rd_kafka_header_cnt(a->headers);

	ck_assert_uint_eq(n, rd_kafka_header_cnt(b->headers));
	for (size_t i = 0; i < n; i++) {
		const char *na, *nb;
		const void *va, *vb;
		size_t la, lb;

		ck_assert_int_eq(rd_kafka_header_get_all(a->headers, i, &na, &va, &la), 0);
		ck_assert_int_eq(rd_kafka_header_get_all(b->headers, i, &nb, &vb, &lb), 0);
		ck_assert_str_eq(na, nb);
		if (strcmp(na, "__debezium.context.runId") != 0) {
			ck_assert_uint_eq(la, lb);
			ck_assert(la == 0 || memcmp(va, vb, la) == 0);
		}
	}
}

static int
by_id(const void *x, const void *y)
{
	const struct itest_record *a = x, *b = y;
	size_t la, lb;
	const char *ia = header(a, "id", &la), *ib = header(b, "id", &lb);
	int c = memcmp(ia, ib, la < lb ? la : lb);

	return c ? c : (a->offset > b->offset) - (a->offset < b->offset);
}

/* The same rows through `outboxd run`, then `outboxd poll`: record for record the same. */
START_TEST(test_poll_publishes_the_records_run_publishes)
{
	struct relayfix f;
	struct itest_record *recs;
	char *topic;
	size_t n, compared = 0;

	poll_fixture(&f, NULL, &topic);
	relayfix_start(&f);
	ck_assert_msg(relayfix_wait_log(&f, "streaming slot", 30), "%s", relayfix_log(&f));
	insert_rows(&f, f.pg, 0, 100, 10);
	n = itest_consume_all(topic, 1000, 60000, &recs);
	ck_assert_uint_eq(n, 1000);
	itest_records_free(recs, n);
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	relayfix_start_command(&f, "poll");
	ck_assert_msg(wait_published(&f, 1000, false, 60) >= 0, "%s", relayfix_log(&f));
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	n = itest_consume_all(topic, 2000, 60000, &recs);
	ck_assert_uint_eq(n, 2000);
	sleep(1);
	ck_assert_int_eq(itest_topic_count(topic), 2000); /* once each, nothing more */
	qsort(recs, n, sizeof(*recs), by_id);
	for (size_t i = 0; i + 1 < n; i += 2) {
		const struct itest_record *r = &recs[i], *p = &recs[i + 1];
		size_t la, lb;

		/* the two copies of one row: run's, then poll's */
		ck_assert_ptr_nonnull(header(r, "id", &la));
		ck_assert_ptr_nonnull(header(p, "id", &lb));
		ck_assert_uint_eq(la, lb);
		ck_assert_int_eq(memcmp(header(r, "id", &la), header(p, "id", &lb), la), 0);
		ck_assert_int_ne(r->offset, p->offset);
		ck_assert_int_eq(r->partition, p->partition);
		ck_assert_uint_eq(r->key_len, p->key_len);
		ck_assert_int_eq(memcmp(r->key, p->key, r->key_len), 0);
		ck_assert_uint_eq(r->value_len, p->value_len);
		ck_assert_int_eq(memcmp(r->value, p->value, r->value_len), 0);
		same_headers(r, p);
		compared++;
	}
	note("# %zu record pairs (run, poll) equal in topic, partition, key, value, headers\n",
	     compared);
	ck_assert_uint_eq(compared, 1000);
	itest_records_free(recs, n);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/* Two writer connections taking turns, batches smaller than a transaction: each aggregate's rows in order. */
START_TEST(test_per_aggregate_order_with_interleaved_writers)
{
	struct relayfix f;
	struct itest_record *recs;
	PGconn *w2;
	char *topic;
	size_t n;
	long last[N_AGGS];

	poll_fixture(&f, "outboxd.poll.batch.size=7\n", &topic);
	relayfix_start_command(&f, "poll");
	ck_assert_msg(relayfix_wait_log(&f, "owns 16 of 16 partitions", 30), "%s",
		      relayfix_log(&f));
	w2 = itest_pg();
	for (int t = 0; t < 100; t++) {
		/* two writers interleave; each aggregate is written by one of them */
		insert_rows(&f, (t % 2) ? w2 : f.pg, t * 10, 1, 10);
	}
	ck_assert_msg(wait_published(&f, 1000, false, 60) >= 0, "%s", relayfix_log(&f));
	n = itest_consume_all(topic, 1000, 60000, &recs);
	ck_assert_uint_eq(n, 1000);
	for (int a = 0; a < N_AGGS; a++) {
		last[a] = -1;
	}
	/* itest_consume_all() returns each partition's records in offset order */
	for (size_t i = 0; i < n; i++) {
		int a;
		long k;

		ck_assert_int_eq(sscanf(recs[i].key, "\"agg-%d\"", &a), 1);
		k = strtol(strstr(recs[i].value, "\\\"k\\\": ") + 7, NULL, 10);
		ck_assert_msg(k > last[a], "aggregate %d: row %ld after %ld", a, k, last[a]);
		last[a] = k;
	}
	note("# 1000 rows of %d aggregates from two writers, batches of 7: in order\n", N_AGGS);
	itest_records_free(recs, n);
	PQfinish(w2);
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/* The broker frozen: nothing is marked; thawed: everything is, once. */
START_TEST(test_frozen_broker_marks_nothing)
{
	struct relayfix f;
	int kpid = itest_kafka_pid();
	char *topic;
	double took;

	poll_fixture(&f, NULL, &topic);
	relayfix_start_command(&f, "poll");
	ck_assert(relayfix_wait_log(&f, "owns 16 of 16", 30));
	insert_rows(&f, f.pg, 0, 1, 10);
	ck_assert(wait_published(&f, 10, false, 30) >= 0);
	ck_assert_int_eq(kill(kpid, SIGSTOP), 0);
	insert_rows(&f, f.pg, 10, 10, 10);
	for (int i = 0; i < 10; i++) {
		ck_assert_int_eq(intf(f.pg,
				      "SELECT count(*) FROM %s.outbox WHERE published_at IS NOT "
				      "NULL",
				      f.name),
				 10);
		usleep(500 * 1000);
	}
	ck_assert_int_eq(kill(kpid, SIGCONT), 0);
	took = wait_published(&f, 110, false, 60);
	ck_assert_msg(took >= 0, "%s", relayfix_log(&f));
	note("# broker frozen 5 s: 0 of 100 rows marked; all marked %.1f s after SIGCONT\n", took);
	ck_assert_int_eq(itest_topic_count(topic), 110);
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/* A lower seq committed after a higher one is published all the same; NOTIFY wakes at once. */
START_TEST(test_out_of_order_commit_is_not_skipped_and_notify_wakes)
{
	struct relayfix f;
	PGconn *held = itest_pg();
	char *topic;
	double t1, t2;

	poll_fixture(&f, "outboxd.poll.interval.ms=60000\n", &topic);
	relayfix_start_command(&f, "poll");
	ck_assert(relayfix_wait_log(&f, "owns 16 of 16", 30));
	sleep(1);
	sqlf(held, "BEGIN");
	insert_rows(&f, held, 0, 1, 1); /* seq 1, not committed yet */
	insert_rows(&f, f.pg, 1, 1, 1); /* seq 2, committed */
	t1 = wait_published(&f, 1, false, 30);
	ck_assert_msg(t1 >= 0 && t1 < 2, "row 2 not published by NOTIFY (%.2f s)", t1);
	sqlf(held, "COMMIT");
	t2 = wait_published(&f, 2, false, 30);
	ck_assert_msg(t2 >= 0 && t2 < 2, "row 1 committed later not published (%.2f s)", t2);
	note("# interval 60 s: NOTIFY to published_at %.0f ms and %.0f ms (out-of-order commit)\n",
	     t1 * 1000, t2 * 1000);
	ck_assert_int_eq(
		intf(f.pg, "SELECT count(*) FROM %s.outbox WHERE published_at IS NULL", f.name), 0);
	ck_assert_int_eq(itest_topic_count(topic), 2);
	PQfinish(held);
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/* outboxd.poll.after=delete: published rows are deleted, after their acknowledgement. */
START_TEST(test_after_delete_deletes_published_rows)
{
	struct relayfix f;
	char *topic;

	poll_fixture(&f, "outboxd.poll.after=delete\n", &topic);
	insert_rows(&f, f.pg, 0, 10, 50);
	relayfix_start_command(&f, "poll");
	ck_assert_msg(wait_published(&f, 500, true, 60) >= 0, "%s", relayfix_log(&f));
	sleep(1);
	ck_assert_int_eq(itest_topic_count(topic), 500);
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/* kill -9 at any time: every row is published at least once, a duplicate only if unmarked. */
START_TEST(test_sigkill_loses_nothing)
{
	struct relayfix f;
	char *topic;
	long records;

	poll_fixture(&f, "outboxd.poll.batch.size=50\n", &topic);
	insert_rows(&f, f.pg, 0, 40, 100);
	relayfix_start_command(&f, "poll");
	ck_assert(relayfix_wait_log(&f, "owns 16 of 16", 30));
	usleep(300 * 1000);
	relayfix_stop(&f, SIGKILL);
	relayfix_start_command(&f, "poll");
	ck_assert_msg(wait_published(&f, 4000, false, 60) >= 0, "%s", relayfix_log(&f));
	sleep(1);
	records = itest_topic_count(topic);
	note("# kill -9 during publishing: 4000 rows, %ld records (%ld duplicates)\n", records,
	     records - 4000);
	ck_assert_int_ge(records, 4000);
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/* A missing column is exit 2 naming it and the fix; unordered mode is refused. */
START_TEST(test_missing_column_exits_2)
{
	struct relayfix f;
	char *topic, *log;

	poll_fixture(&f, "outboxd.poll.order.column=position\n", &topic);
	relayfix_start_command(&f, "poll");
	ck_assert_int_eq(relayfix_wait_exit(&f, 30), 2);
	log = relayfix_log(&f);
	ck_assert_msg(strstr(log, "has no column \"position\" (outboxd.poll.order.column)"), "%s",
		      log);
	free(log);
	relayfix_config(&f, "outboxd.poll.mode=unordered\n", NULL);
	relayfix_start_command(&f, "poll");
	ck_assert_int_eq(relayfix_wait_exit(&f, 30), 2);
	ck_assert(relayfix_wait_log(&f, "outboxd.poll.mode=unordered is not built yet", 1));
	free(topic);
	relayfix_fini(&f);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("poll");
	TCase *t = tcase_create("poll");
	SRunner *sr;
	int failed;

	tcase_set_timeout(t, 300);
	tcase_add_test(t, test_missing_column_exits_2);
	tcase_add_test(t, test_poll_publishes_the_records_run_publishes);
	tcase_add_test(t, test_per_aggregate_order_with_interleaved_writers);
	tcase_add_test(t, test_out_of_order_commit_is_not_skipped_and_notify_wakes);
	tcase_add_test(t, test_after_delete_deletes_published_rows);
	tcase_add_test(t, test_frozen_broker_marks_nothing);
	tcase_add_test(t, test_sigkill_loses_nothing);
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
