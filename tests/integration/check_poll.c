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
#include <sys/wait.h>
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
	itest_sqlf(
		f->pg,
		"ALTER TABLE %s.outbox ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY (CACHE 1), "
		"ADD COLUMN published_at timestamptz NULL",
		f->name);
	itest_sqlf(f->pg, "CREATE INDEX ON %s.outbox (seq) WHERE published_at IS NULL", f->name);
	itest_sqlf(
		f->pg,
		"CREATE FUNCTION %s.outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
		"PERFORM pg_notify('%s', ''); RETURN NULL; END; $$",
		f->name, f->name);
	itest_sqlf(f->pg,
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

		itest_sqlf(c,
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

/* @recs holds two copies of each row, run's then poll's: each pair equal in every byte that
 * is the record's (runId aside). Returns the pairs compared. */
static size_t
same_pairs(struct itest_record *recs, size_t n)
{
	size_t compared = 0;

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
	return compared;
}

/* The same rows through `outboxd run`, then `outboxd poll`: record for record the same. */
START_TEST(test_poll_publishes_the_records_run_publishes)
{
	struct relayfix f;
	struct itest_record *recs;
	char *topic;
	size_t n, compared;

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
	compared = same_pairs(recs, n);
	note("# %zu record pairs (run, poll) equal in topic, partition, key, value, headers\n",
	     compared);
	ck_assert_uint_eq(compared, 1000);
	itest_records_free(recs, n);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/* The rows of @recs (each partition in offset order) per aggregate: the first copy of each row
 * comes in increasing k, as a consumer that dedupes by id sees them. Returns the distinct rows. */
static long
first_copies_in_order(const struct itest_record *recs, size_t n, long nrows)
{
	char *seen = xcalloc((size_t)nrows, 1);
	long last[N_AGGS], distinct = 0;

	for (int a = 0; a < N_AGGS; a++) {
		last[a] = -1;
	}
	for (size_t i = 0; i < n; i++) {
		int a;
		long k;

		ck_assert_int_eq(sscanf(recs[i].key, "\"agg-%d\"", &a), 1);
		k = strtol(strstr(recs[i].value, "\\\"k\\\": ") + 7, NULL, 10);
		ck_assert(k >= 0 && k < nrows && a >= 0 && a < N_AGGS);
		if (seen[k]) {
			continue; /* a duplicate: published again after a crash before its mark */
		}
		ck_assert_msg(k > last[a], "aggregate %d: row %ld first seen after %ld", a, k,
			      last[a]);
		last[a] = k;
		seen[k] = 1;
		distinct++;
	}
	free(seen);
	return distinct;
}

/*
 * Stops the poller @pid (exit 0 expected), reads every record @topic holds (duplicates too) and
 * checks their first copies: @nrows distinct rows, in order per aggregate. Returns the records.
 */
static size_t
stop_and_read_in_order(pid_t pid, const char *topic, long nrows)
{
	struct itest_record *recs = NULL;
	long total;
	size_t n;
	int st;

	kill(pid, SIGTERM);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	total = itest_topic_count(topic);
	n = itest_consume_all(topic, (size_t)total, 60000, &recs);
	ck_assert_int_eq((long)n, total);
	ck_assert_int_eq(first_copies_in_order(recs, n, nrows), nrows);
	itest_records_free(recs, n);
	return n;
}

/* Two writer connections taking turns, batches smaller than a transaction: each aggregate's rows in order. */
START_TEST(test_per_aggregate_order_with_interleaved_writers)
{
	struct relayfix f;
	struct itest_record *recs;
	PGconn *w2;
	char *topic;
	size_t n;

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
	/* itest_consume_all() returns each partition's records in offset order; no copy twice */
	ck_assert_int_eq(first_copies_in_order(recs, n, 1000), 1000);
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

	int port = itest_free_port();
	char *body = NULL;
	int code;

	poll_fixture(&f, "outboxd.stall.warn.ms=1000\n", &topic);
	f.pid = relayfix_spawn(&f, "poll", "outboxd.log", port);
	ck_assert(relayfix_wait_log(&f, "owns 16 of 16", 30));
	insert_rows(&f, f.pg, 0, 1, 10);
	ck_assert(wait_published(&f, 10, false, 30) >= 0);
	ck_assert_int_eq(itest_http_wait(port, "/health", 200, 10, NULL), 200);
	ck_assert_int_eq(kill(kpid, SIGSTOP), 0);
	insert_rows(&f, f.pg, 10, 10, 10);
	/* records wait without a report: the watchdog's verdict within a few of its looks */
	code = itest_http_wait(port, "/health", 503, 15, &body);
	ck_assert_msg(code == 503 && strstr(body, "\"stalled\":true"), "%d %s", code, body);
	free(body);
	ck_assert_int_eq(itest_http_get(port, "/health/live", &body), 200); /* alive, not ready */
	free(body);
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
	note("# broker frozen: /health 503 stalled, 0 of 100 rows marked; all marked %.1f s after "
	     "SIGCONT\n",
	     took);
	ck_assert_int_eq(itest_http_wait(port, "/health", 200, 15, NULL), 200);
	ck_assert(relayfix_wait_log(&f, "no delivery report for", 1));
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
	itest_sqlf(held, "BEGIN");
	insert_rows(&f, held, 0, 1, 1); /* seq 1, not committed yet */
	insert_rows(&f, f.pg, 1, 1, 1); /* seq 2, committed */
	t1 = wait_published(&f, 1, false, 30);
	ck_assert_msg(t1 >= 0 && t1 < 2, "row 2 not published by NOTIFY (%.2f s)", t1);
	itest_sqlf(held, "COMMIT");
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

/*
 * A NOTIFY that libpq reads while a cycle is under way (here: while the cycle's marking waits
 * for a row lock the test holds) wakes the next cycle at once; it was dropped, and the row
 * waited for the fallback interval (60 s here).
 */
START_TEST(test_notify_during_a_cycle_wakes_the_next)
{
	struct relayfix f;
	PGconn *lock = itest_pg();
	char *topic;
	double t0, t1;
	long blocked = 0;

	poll_fixture(&f, "outboxd.poll.interval.ms=60000\n", &topic);
	insert_rows(&f, f.pg, 0, 1, 1);
	itest_sqlf(lock, "BEGIN");
	itest_sqlf(lock, "SELECT 1 FROM %s.outbox FOR UPDATE", f.name);
	relayfix_start_command(&f, "poll");
	for (int i = 0; i < 1500 && !blocked; i++) { /* the marking waits for the lock */
		usleep(20 * 1000);
		blocked =
			intf(f.pg, "SELECT count(*) FROM pg_stat_activity WHERE application_name = "
				   "'outboxd' AND wait_event_type = 'Lock'");
	}
	ck_assert_msg(blocked, "the poller's marking never waited for the row lock: %s",
		      relayfix_log(&f));
	insert_rows(&f, f.pg, 1, 1, 1); /* its NOTIFY comes with the marking's result */
	t0 = now_s();
	itest_sqlf(lock, "COMMIT");
	t1 = wait_published(&f, 2, false, 30);
	ck_assert_msg(t1 >= 0 && t1 < 5,
		      "the row committed during a cycle waited for the interval (%.2f s)", t1);
	note("# NOTIFY during a cycle: the second row published %.0f ms after the lock's release\n",
	     (now_s() - t0) * 1000);
	ck_assert_int_eq(itest_topic_count(topic), 2);
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	PQfinish(lock);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/*
 * A cycle's batch is complete once read, so it is sent at once: with linger.ms at 20 s a row is
 * published within 5 s (it waited the whole linger, and so did every cycle's rows, before).
 */
START_TEST(test_a_cycle_does_not_wait_for_linger)
{
	struct relayfix f;
	char *topic;
	double t1;

	poll_fixture(&f, "producer.linger.ms=20000\n", &topic);
	relayfix_start_command(&f, "poll");
	ck_assert(relayfix_wait_log(&f, "owns 16 of 16", 30));
	insert_rows(&f, f.pg, 0, 1, 3);
	t1 = wait_published(&f, 3, false, 60);
	ck_assert_msg(t1 >= 0 && t1 < 5, "the cycle's rows waited for linger.ms (%.2f s)", t1);
	note("# linger.ms 20000: 3 rows published %.0f ms after their commit\n", t1 * 1000);
	ck_assert_int_eq(itest_topic_count(topic), 3);
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

/*
 * A NULL key (Debezium's outbox allows one; the record's key is then null) is published: it
 * has no hashtext(), and a partition query that compared NULL % N with p read it in none.
 */
START_TEST(test_null_key_rows_are_published)
{
	struct relayfix f;
	char *topic;

	poll_fixture(&f, NULL, &topic);
	itest_sqlf(f.pg, "ALTER TABLE %s.outbox ALTER COLUMN aggregateid DROP NOT NULL", f.name);
	insert_rows(&f, f.pg, 0, 1, 10);
	itest_sqlf(
		f.pg,
		"INSERT INTO %s.outbox (id, aggregatetype, aggregateid, type, payload) SELECT "
		"gen_random_uuid(), '%s_order', NULL, 'Created', jsonb_build_object('k', k) FROM "
		"generate_series(10, 14) AS k",
		f.name, f.name);
	relayfix_start_command(&f, "poll");
	ck_assert_msg(wait_published(&f, 15, false, 30) >= 0, "%s", relayfix_log(&f));
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	sleep(1);
	ck_assert_int_eq(itest_topic_count(topic), 15);
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

/* A missing column, a retention that is no interval, cleanup settings that contradict: exit 2. */
START_TEST(test_missing_column_exits_2)
{
	struct relayfix f;
	struct buf extra = BUF_INIT;
	int port = itest_free_port();
	char *topic, *log, *body;

	poll_fixture(&f, "outboxd.poll.order.column=position\n", &topic);
	relayfix_start_command(&f, "poll");
	ck_assert_int_eq(relayfix_wait_exit(&f, 30), 2);
	log = relayfix_log(&f);
	ck_assert_msg(strstr(log, "has no column \"position\" (outboxd.poll.order.column)"), "%s",
		      log);
	free(log);
	relayfix_config(&f, "outboxd.poll.retention=a while\n", NULL);
	relayfix_start_command(&f, "poll");
	ck_assert_int_eq(relayfix_wait_exit(&f, 30), 2);
	ck_assert(relayfix_wait_log(&f, "outboxd.poll.retention=a while is not a positive", 1));
	relayfix_config(&f, "outboxd.poll.retention=1 day\noutboxd.poll.after=delete\n", NULL);
	relayfix_start_command(&f, "poll");
	ck_assert_int_eq(relayfix_wait_exit(&f, 30), 2);
	ck_assert(relayfix_wait_log(&f, "outboxd.poll.retention has nothing to clean", 1));
	relayfix_config(&f, "outboxd.poll.retention=1 day\noutboxd.poll.archive.table=nowhere\n",
			NULL);
	relayfix_start_command(&f, "poll");
	ck_assert_int_eq(relayfix_wait_exit(&f, 30), 2);
	ck_assert(relayfix_wait_log(&f, "outboxd.poll.archive.table=nowhere: no such table", 1));
	/* outboxd.halt.stay=true: the same halt, and the process stays up, until SIGTERM (exit 2) */
	buf_add_fmt(&extra,
		    "outboxd.poll.order.column=position\noutboxd.halt.stay=true\n"
		    "outboxd.http.port=%d\n",
		    port);
	relayfix_config(&f, buf_cstr(&extra), NULL);
	relayfix_start_command(&f, "poll");
	ck_assert(relayfix_wait_log(&f, "staying up until SIGTERM", 30));
	ck_assert(itest_wait_metric(port, "outboxd_halts_total{reason=\"precondition\"}", 1, 10));
	ck_assert_int_eq(itest_http_get(port, "/health/ready", &body), 503);
	free(body);
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 2);
	buf_fini(&extra);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/*
 * Two outbox tables selected by table.include.list: `outboxd run` over both, then `outboxd
 * poll` over both (each table its own partitions and marks): per topic, record for record the
 * same, every row of each table marked, each aggregate's rows in order.
 */
START_TEST(test_several_tables_publish_what_run_publishes)
{
	struct relayfix f;
	struct itest_record *recs;
	struct buf list = BUF_INIT, topic2 = BUF_INIT;
	int port = itest_free_port(), st;
	pid_t pb;
	int64_t run_end[2][64];
	char *topic;
	size_t n, pairs = 0;

	for (int i = 0; i < 64; i++) {
		run_end[0][i] = run_end[1][i] = -1;
	}

	poll_fixture(&f, "outboxd.poll.partitions=4\n", &topic);
	itest_sqlf(f.pg, "CREATE TABLE %s.invoice_outbox (LIKE %s.outbox INCLUDING ALL)", f.name,
		   f.name);
	itest_sqlf(
		f.pg,
		"CREATE TRIGGER outbox_notify AFTER INSERT ON %s.invoice_outbox FOR EACH STATEMENT "
		"EXECUTE FUNCTION %s.outbox_notify()",
		f.name, f.name);
	itest_sqlf(f.pg, "ALTER PUBLICATION %s ADD TABLE %s.invoice_outbox", f.pub, f.name);
	buf_add_fmt(&list, "table.include.list=%s.outbox,%s.invoice_outbox\n", f.name, f.name);
	{
		struct buf w = BUF_INIT;

		buf_add_fmt(&w, "outboxd.poll.notify.channel=%s\noutboxd.poll.partitions=4\n",
			    f.name);
		relayfix_config(&f, buf_cstr(&w), buf_cstr(&list));
		buf_fini(&w);
	}
	buf_add_fmt(&topic2, "outbox.event.%s_invoice", f.name);
	relayfix_start(&f);
	ck_assert_msg(relayfix_wait_log(&f, "streaming slot", 30), "%s", relayfix_log(&f));
	insert_rows(&f, f.pg, 0, 30, 10);
	itest_sqlf(f.pg,
		   "INSERT INTO %s.invoice_outbox (id, aggregatetype, aggregateid, type, payload) "
		   "SELECT gen_random_uuid(), '%s_invoice', 'agg-' || (k %% %d), 'Billed', "
		   "jsonb_build_object('k', k) FROM generate_series(0, 199) AS k",
		   f.name, f.name, N_AGGS);
	for (int t = 0; t < 2; t++) {
		n = itest_consume_all(t ? buf_cstr(&topic2) : topic, t ? 200 : 300, 60000, &recs);
		ck_assert_uint_eq(n, t ? 200 : 300);
		for (size_t i = 0; i < n; i++) {
			ck_assert_int_lt(recs[i].partition, 64);
			if (recs[i].offset > run_end[t][recs[i].partition]) {
				run_end[t][recs[i].partition] = recs[i].offset;
			}
		}
		itest_records_free(recs, n);
	}
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	pb = relayfix_spawn(&f, "poll", "poll.log", port);
	ck_assert_msg(itest_wait_metric(port, "outboxd_poll_partitions_owned", 8, 30), "%s",
		      relayfix_log_named(&f, "poll.log"));
	ck_assert_msg(wait_published(&f, 300, false, 60) >= 0, "%s",
		      relayfix_log_named(&f, "poll.log"));
	for (int i = 0; i < 600; i++) {
		if (intf(f.pg, "SELECT count(*) FROM %s.invoice_outbox WHERE published_at IS NULL",
			 f.name) == 0) {
			break;
		}
		usleep(50 * 1000);
	}
	ck_assert_int_eq(intf(f.pg,
			      "SELECT count(*) FROM %s.invoice_outbox WHERE published_at IS NULL",
			      f.name),
			 0);
	ck_assert_msg(itest_wait_metric(port, "outboxd_poll_rows_marked_total", 500, 30), "%s",
		      relayfix_log_named(&f, "poll.log"));
	kill(pb, SIGTERM);
	ck_assert_int_eq(waitpid(pb, &st, 0), pb);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (int t = 0; t < 2; t++) {
		const char *tp = t ? buf_cstr(&topic2) : topic;
		size_t want = t ? 400 : 600;

		struct itest_record *polled;
		size_t np = 0;

		n = itest_consume_all(tp, want, 60000, &recs);
		ck_assert_uint_eq(n, want);
		/* poll's copies, each partition in offset order, after run's: each row once, each
		 * aggregate's rows in order */
		polled = xcalloc(n, sizeof(*polled));
		for (size_t i = 0; i < n; i++) {
			if (recs[i].offset > run_end[t][recs[i].partition]) {
				polled[np++] = recs[i];
			}
		}
		ck_assert_uint_eq(np, want / 2);
		ck_assert_int_eq(first_copies_in_order(polled, np, 300), (long)np);
		free(polled); /* shallow copies: recs owns them */
		pairs += same_pairs(recs, n);
		itest_records_free(recs, n);
	}
	note("# two tables, 4 partitions each (8 owned): %zu record pairs (run, poll) equal\n",
	     pairs);
	ck_assert_uint_eq(pairs, 500);
	buf_fini(&list);
	buf_fini(&topic2);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/*
 * Two pollers in ordered mode: the second owns nothing while the first runs; the first killed
 * with -9 mid-backlog, the second takes its partitions within a bounded time and publishes the
 * rest, each aggregate's rows in order (first copies), none lost.
 */
START_TEST(test_second_poller_takes_over_and_keeps_order)
{
	struct relayfix f;
	int port = itest_free_port();
	char *topic, *body = NULL;
	double t_kill, took;
	long left;
	pid_t b;
	size_t n;

	poll_fixture(&f, "outboxd.poll.interval.ms=200\noutboxd.poll.batch.size=20\n", &topic);
	relayfix_start_command(&f, "poll");
	ck_assert(relayfix_wait_log(&f, "owns 16 of 16", 30));
	b = relayfix_spawn(&f, "poll", "b.log", port);
	ck_assert_msg(relayfix_wait_log_named(&f, "b.log", "polling", 30), "%s",
		      relayfix_log_named(&f, "b.log"));
	ck_assert(itest_wait_metric(port, "outboxd_poll_partitions_owned", 0, 10));
	insert_rows(&f, f.pg, 0, 20, 1000);
	/* the first poller is busy with the backlog: kill it in the middle */
	while (intf(f.pg, "SELECT count(*) FROM %s.outbox WHERE published_at IS NOT NULL", f.name) <
	       2000) {
		usleep(10 * 1000);
	}
	relayfix_stop(&f, SIGKILL);
	t_kill = now_s();
	left = intf(f.pg, "SELECT count(*) FROM %s.outbox WHERE published_at IS NULL", f.name);
	ck_assert_msg(left > 0, "the first poller published everything before the kill");
	ck_assert_msg(relayfix_wait_log_named(&f, "b.log", "owns 16 of 16 partitions", 10), "%s",
		      relayfix_log_named(&f, "b.log"));
	took = now_s() - t_kill;
	ck_assert(itest_wait_metric(port, "outboxd_poll_partitions_owned", 16, 5));
	ck_assert_msg(wait_published(&f, 20000, false, 120) >= 0, "%s",
		      relayfix_log_named(&f, "b.log"));
	ck_assert(itest_wait_metric(port, "outboxd_poll_unpublished_rows", 0, 15));
	ck_assert_int_eq(itest_http_get(port, "/metrics", &body), 200);
	ck_assert_msg(itest_metric(body, "outboxd_poll_rows_marked_total") > 0, "%s", body);
	ck_assert_msg(itest_metric(body, "outboxd_poll_oldest_unpublished_age_seconds") == 0, "%s",
		      body);
	free(body);
	/* duplicates: every record the topic holds, not the first 20,000 */
	n = stop_and_read_in_order(b, topic, 20000);
	note("# ordered, two pollers, the owner killed -9 with %ld of 20000 rows unpublished: "
	     "partitions taken over in %.2f s, %zu records, 20000 distinct, %ld duplicates, first "
	     "copies in order\n",
	     left, took, n, (long)n - 20000);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/* The sessions that hold partition locks of the fixture's table now (the gate lock aside). */
static long
lock_holders(struct relayfix *f)
{
	return intf(
		f->pg,
		"SELECT count(DISTINCT pid) FROM pg_locks WHERE locktype = 'advisory' AND granted "
		"AND objsubid = 2 AND database = (SELECT oid FROM pg_database WHERE datname = "
		"current_database()) AND classid::bigint = (hashtext('outboxd.poll %s.outbox')"
		"::bigint & 4294967295) AND objid::bigint <> 4294967295",
		f->name);
}

/* Exactly one session holds partitions of the table: else what the new poller said it owns. */
static void
one_holder(struct relayfix *f)
{
	long holders = lock_holders(f);
	char *log;
	const char *owns;

	if (holders == 1) {
		return;
	}
	log = relayfix_log_named(f, "b.log");
	owns = strstr(log, "this process owns");
	ck_assert_msg(holders == 1, "%ld sessions hold partitions of the table; b.log: %.200s",
		      holders, owns ? owns : log);
}

/*
 * A rolling update that changes outboxd.poll.partitions from 8 to 16: the new poller owns no
 * partition while the old one lives (no moment shows two sessions holding the table's
 * partitions), says why once, stays healthy; the old one stopped, it takes all 16 and
 * publishes the rest, each aggregate's rows in order.
 */
START_TEST(test_a_changed_partition_count_waits_for_the_old_owners)
{
	struct relayfix f;
	int port = itest_free_port(), said = 0;
	struct buf why = BUF_INIT;
	char *topic, *log;
	double t0, took;
	pid_t b;
	size_t n;

	poll_fixture(&f,
		     "outboxd.poll.interval.ms=200\noutboxd.poll.batch.size=20\n"
		     "outboxd.poll.partitions=8\n",
		     &topic);
	relayfix_start_command(&f, "poll");
	ck_assert_msg(relayfix_wait_log(&f, "owns 8 of 8 partitions", 30), "%s", relayfix_log(&f));
	/* the new version of the configuration: the environment wins over the files */
	setenv("OUTBOXD_POLL_PARTITIONS", "16", 1);
	b = relayfix_spawn(&f, "poll", "b.log", port);
	unsetenv("OUTBOXD_POLL_PARTITIONS");
	ck_assert_msg(relayfix_wait_log_named(&f, "b.log", "polling", 30), "%s",
		      relayfix_log_named(&f, "b.log"));
	/* ten of its lock turns: it never holds a partition beside the old poller */
	for (t0 = now_s(); now_s() - t0 < 2;) {
		one_holder(&f);
		usleep(20 * 1000);
	}
	buf_add_fmt(&why,
		    "8 partitions of %s.outbox are held by sessions with "
		    "outboxd.poll.partitions=8 (this process has 16): waiting until they end",
		    f.name);
	ck_assert_msg(relayfix_wait_log_named(&f, "b.log", buf_cstr(&why), 10), "%s",
		      relayfix_log_named(&f, "b.log"));
	ck_assert(itest_wait_metric(port, "outboxd_poll_partitions_owned", 0, 10));
	ck_assert(itest_wait_metric(port, "outboxd_poll_partitions_other_count", 8, 10));
	/* waiting is no outage: a rolling update waits for the new pod to be ready */
	ck_assert_int_eq(itest_http_wait(port, "/health", 200, 10, NULL), 200);
	insert_rows(&f, f.pg, 0, 20, 100);
	while (intf(f.pg, "SELECT count(*) FROM %s.outbox WHERE published_at IS NOT NULL", f.name) <
	       1000) {
		one_holder(&f);
		ck_assert_msg(now_s() - t0 < 60, "%s", relayfix_log(&f));
		usleep(10 * 1000);
	}
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	t0 = now_s();
	insert_rows(&f, f.pg, 2000, 10, 100);
	ck_assert_msg(relayfix_wait_log_named(&f, "b.log", "owns 16 of 16 partitions", 10), "%s",
		      relayfix_log_named(&f, "b.log"));
	took = now_s() - t0;
	ck_assert(itest_wait_metric(port, "outboxd_poll_partitions_other_count", 0, 5));
	ck_assert_msg(wait_published(&f, 3000, false, 120) >= 0, "%s",
		      relayfix_log_named(&f, "b.log"));
	log = relayfix_log_named(&f, "b.log");
	/* said once, not every turn; its end said before the taking */
	for (const char *at = strstr(log, buf_cstr(&why)); at;
	     at = strstr(at + 1, buf_cstr(&why))) {
		said++;
	}
	ck_assert_msg(said == 1, "said %d times: %s", said, log);
	ck_assert_msg(strstr(log, "with another outboxd.poll.partitions any more") &&
			      strstr(log, "with another outboxd.poll.partitions any more") <
				      strstr(log, "this process owns"),
		      "%s", log);
	free(log);
	n = stop_and_read_in_order(b, topic, 3000);
	note("# outboxd.poll.partitions 8 -> 16 in a rolling update: the new poller waited, owned "
	     "all 16 %.2f s after the old one stopped; %zu records, 3000 distinct, first copies in "
	     "order\n",
	     took, n);
	buf_fini(&why);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/* The "stopped: N rows published and marked" count of a poller's log. */
static long
marked_in_log(const struct relayfix *f, const char *log)
{
	char *text = relayfix_log_named(f, log);
	const char *p = strstr(text, "stopped: ");
	long v = p ? strtol(p + 9, NULL, 10) : -1;

	free(text);
	return v;
}

/* Two pollers in unordered mode share the table by SKIP LOCKED: every row exactly once. */
START_TEST(test_unordered_workers_share_the_table)
{
	struct relayfix f;
	PGconn *w2 = itest_pg();
	char *topic;
	long a, b;
	pid_t pb;
	int st;

	poll_fixture(&f, "outboxd.poll.mode=unordered\noutboxd.poll.batch.size=25\n", &topic);
	relayfix_start_command(&f, "poll");
	pb = relayfix_spawn(&f, "poll", "b.log", 0);
	ck_assert(relayfix_wait_log(&f, "unordered: batches claimed", 30));
	ck_assert(relayfix_wait_log_named(&f, "b.log", "unordered: batches claimed", 30));
	for (int t = 0; t < 100; t++) {
		insert_rows(&f, (t % 2) ? w2 : f.pg, t * 30, 1, 30);
	}
	ck_assert_msg(wait_published(&f, 3000, false, 60) >= 0, "%s", relayfix_log(&f));
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	kill(pb, SIGTERM);
	ck_assert_int_eq(waitpid(pb, &st, 0), pb);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	a = marked_in_log(&f, "outboxd.log");
	b = marked_in_log(&f, "b.log");
	note("# unordered, two workers, 3000 rows in 100 transactions: %ld and %ld rows\n", a, b);
	ck_assert_int_eq(a + b, 3000);
	sleep(1);
	ck_assert_int_eq(itest_topic_count(topic), 3000); /* no row twice: each claimed once */
	PQfinish(w2);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/* Cleanup: published rows older than the retention are deleted, then (archive) moved. */
START_TEST(test_cleanup_deletes_then_archives)
{
	struct relayfix f;
	char *topic;
	double t0;

	poll_fixture(&f,
		     "outboxd.poll.retention=1 second\noutboxd.poll.cleanup.interval.ms=200\n"
		     "outboxd.poll.cleanup.batch.size=7\n",
		     &topic);
	relayfix_start_command(&f, "poll");
	insert_rows(&f, f.pg, 0, 10, 10);
	t0 = now_s();
	while (intf(f.pg, "SELECT count(*) FROM %s.outbox", f.name) > 0 && now_s() - t0 < 30) {
		usleep(100 * 1000);
	}
	ck_assert_msg(intf(f.pg, "SELECT count(*) FROM %s.outbox", f.name) == 0, "%s",
		      relayfix_log(&f));
	ck_assert(relayfix_wait_log(&f, "published rows older than 1 second deleted", 5));
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	ck_assert_int_eq(itest_topic_count(topic), 100);

	itest_sqlf(f.pg, "CREATE TABLE %s.outbox_archive (LIKE %s.outbox)", f.name, f.name);
	{
		struct buf w = BUF_INIT;

		buf_add_fmt(
			&w,
			"outboxd.poll.notify.channel=%s\noutboxd.poll.retention=1 second\n"
			"outboxd.poll.cleanup.interval.ms=200\noutboxd.poll.cleanup.batch.size=7\n"
			"outboxd.poll.archive.table=%s.outbox_archive\n",
			f.name, f.name);
		relayfix_config(&f, buf_cstr(&w), NULL);
		buf_fini(&w);
	}
	relayfix_start_command(&f, "poll");
	insert_rows(&f, f.pg, 100, 10, 10);
	t0 = now_s();
	while (intf(f.pg, "SELECT count(*) FROM %s.outbox_archive", f.name) < 100 &&
	       now_s() - t0 < 30) {
		usleep(100 * 1000);
	}
	ck_assert_msg(intf(f.pg, "SELECT count(*) FROM %s.outbox_archive", f.name) == 100, "%s",
		      relayfix_log(&f));
	ck_assert_int_eq(intf(f.pg, "SELECT count(*) FROM %s.outbox", f.name), 0);
	ck_assert_int_eq(intf(f.pg,
			      "SELECT count(*) FROM %s.outbox_archive WHERE published_at IS NOT "
			      "NULL AND (payload->>'k')::int BETWEEN 100 AND 199",
			      f.name),
			 100);
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	ck_assert_int_eq(itest_topic_count(topic), 200);
	note("# cleanup: 100 published rows deleted, 100 moved to the archive, in batches of 7\n");
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/*
 * A cleanup with much to do keeps the loop turning (issue 33): 200,000 published rows older
 * than the retention, removed in batches of 50, one batch per turn. While it runs, /health/live
 * stays 200 under outboxd.health.live.ms=1000 (the loop's age under a second), and a SIGTERM
 * in its middle is answered within a second. It used to remove batch after batch until done,
 * with no signal served and the liveness clock stopped.
 */
START_TEST(test_a_long_cleanup_keeps_the_loop_turning)
{
	struct relayfix f;
	char *topic, *body = NULL;
	int port = itest_free_port(), rc, live = 0;
	long left;
	double t0, took, published;

	/* an interval longer than the test: only the NOTIFY can make the cycle due */
	poll_fixture(&f,
		     "outboxd.poll.retention=1 second\noutboxd.poll.cleanup.batch.size=50\n"
		     "outboxd.health.live.ms=1000\noutboxd.poll.interval.ms=60000\n",
		     &topic);
	itest_sqlf(f.pg,
		   "INSERT INTO %s.outbox (id, aggregatetype, aggregateid, type, payload, "
		   "published_at) SELECT gen_random_uuid(), '%s_order', 'agg-' || (k %% 8), "
		   "'Created', jsonb_build_object('k', k), now() - interval '1 hour' "
		   "FROM generate_series(1, 200000) AS k",
		   f.name, f.name);
	f.pid = relayfix_spawn(&f, "poll", "outboxd.log", port);
	t0 = now_s();
	while ((left = intf(f.pg, "SELECT count(*) FROM %s.outbox", f.name)) > 190000 &&
	       now_s() - t0 < 60) {
		usleep(20 * 1000);
	}
	ck_assert_msg(left <= 190000, "the cleanup did not start within 60 s: %s",
		      relayfix_log(&f));
	/* a second of the cleanup under way: the loop's age stays under the bound */
	for (t0 = now_s(); now_s() - t0 < 1.0; usleep(50 * 1000)) {
		rc = itest_http_get(port, "/health/live", &body);
		ck_assert_msg(rc == 200, "/health/live %d during the cleanup: %s", rc, body);
		free(body);
		body = NULL;
		live++;
	}
	/*
	 * Publishing goes on meanwhile: a row inserted now is published (its NOTIFY makes the
	 * cycle due), however much the cleanup has left.
	 */
	itest_sqlf(f.pg,
		   "INSERT INTO %s.outbox (id, aggregatetype, aggregateid, type, payload) VALUES "
		   "('00000000-0000-0000-0000-0000000c1ea7', '%s_order', 'agg-new', 'Created', "
		   "'{}')",
		   f.name, f.name);
	for (t0 = now_s();
	     now_s() - t0 < 5 &&
	     !intf(f.pg,
		   "SELECT count(*) FROM %s.outbox WHERE id = "
		   "'00000000-0000-0000-0000-0000000c1ea7' AND published_at IS NOT NULL",
		   f.name);
	     usleep(20 * 1000)) {
	}
	published = now_s() - t0;
	ck_assert_msg(published < 5,
		      "a row inserted during the cleanup was not published in 5 s: %s",
		      relayfix_log(&f));
	left = intf(f.pg, "SELECT count(*) FROM %s.outbox", f.name);
	ck_assert_msg(left > 0, "the cleanup ended before the SIGTERM: make it longer");
	t0 = now_s();
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	took = now_s() - t0;
	ck_assert_msg(took < 1.0, "SIGTERM in the middle of a cleanup answered after %.2f s", took);
	ck_assert_msg(intf(f.pg, "SELECT count(*) FROM %s.outbox", f.name) > 0,
		      "the cleanup went on to its end after the SIGTERM");
	note("# cleanup of 200,000 rows in batches of 50: %d /health/live answers 200, a new row "
	     "published in %.3f s while %ld rows were left; SIGTERM answered in %.3f s\n",
	     live, published, left, took);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/*
 * A cleanup that fails every time (issue 34): the archive refuses every moved row (a CHECK only
 * unpublished rows pass). Each failure is a warning naming the outbox, the archive and the
 * constraint, counted in outboxd_poll_upkeep_failures_total, and the cleanup backs off while
 * publishing goes on: a backlog of 300 rows in batches of 5 (60 cycles) is published within
 * 30 s, never restarting the session, and nothing moves or is lost. Once the constraint goes,
 * the cleanup's next attempt moves them all. It used to restart the session at each failed
 * cleanup, so one batch was published per session, each after a backoff growing to 30 s.
 */
START_TEST(test_a_failing_cleanup_does_not_stop_publishing)
{
	struct relayfix f;
	char *topic, *body = NULL, *log;
	struct buf w = BUF_INIT, warn = BUF_INIT;
	int port = itest_free_port();
	double took, failures, restarts, t0, moved = 0;

	poll_fixture(&f, NULL, &topic);
	itest_sqlf(f.pg, "CREATE TABLE %s.outbox_archive (LIKE %s.outbox)", f.name, f.name);
	itest_sqlf(f.pg,
		   "ALTER TABLE %s.outbox_archive ADD CONSTRAINT only_unpublished CHECK "
		   "(published_at IS NULL)",
		   f.name);
	buf_add_fmt(&w,
		    "outboxd.poll.notify.channel=%s\noutboxd.poll.retention=1 millisecond\n"
		    "outboxd.poll.cleanup.interval.ms=100\noutboxd.poll.partitions=1\n"
		    "outboxd.poll.batch.size=5\noutboxd.poll.archive.table=%s.outbox_archive\n",
		    f.name, f.name);
	relayfix_config(&f, buf_cstr(&w), NULL);
	insert_rows(&f, f.pg, 0, 3, 100);
	f.pid = relayfix_spawn(&f, "poll", "outboxd.log", port);
	took = wait_published(&f, 300, false, 30);
	ck_assert_msg(took >= 0, "300 rows not published within 30 s while the cleanup fails: %s",
		      relayfix_log_tail(&f));
	buf_add_fmt(&warn,
		    "cleanup of %s.outbox failed: moving published rows to the archive: ", f.name);
	ck_assert_msg(relayfix_wait_log(&f, buf_cstr(&warn), 5), "%s", relayfix_log_tail(&f));
	log = relayfix_log_tail(&f);
	ck_assert_msg(strstr(log, "only_unpublished") && strstr(log, "outbox_archive takes them") &&
			      strstr(log, "publishing goes on, the cleanup is tried again in"),
		      "the warning names the constraint, the archive and what happens: %s",
		      relayfix_log_tail(&f));
	ck_assert_msg(!strstr(log, "polling again from the oldest"), "the session restarted: %s",
		      relayfix_log_tail(&f));
	free(log);
	ck_assert_int_eq(itest_http_get(port, "/metrics", &body), 200);
	failures = itest_metric(body, "outboxd_poll_upkeep_failures_total{job=\"cleanup\"}");
	restarts = itest_metric(body, "outboxd_pipeline_restarts_total");
	free(body);
	ck_assert_msg(failures >= 1, "outboxd_poll_upkeep_failures_total{job=cleanup} %.0f",
		      failures);
	ck_assert_msg(restarts == 0, "outboxd_pipeline_restarts_total %.0f", restarts);
	ck_assert_int_eq(intf(f.pg, "SELECT count(*) FROM %s.outbox", f.name), 300);
	ck_assert_int_eq(intf(f.pg, "SELECT count(*) FROM %s.outbox_archive", f.name), 0);

	/* fixed: the cleanup's next attempt (within its backoff) moves every row */
	itest_sqlf(f.pg, "ALTER TABLE %s.outbox_archive DROP CONSTRAINT only_unpublished", f.name);
	for (t0 = now_s(); now_s() - t0 < 30 &&
			   intf(f.pg, "SELECT count(*) FROM %s.outbox_archive", f.name) < 300;
	     usleep(100 * 1000)) {
	}
	ck_assert_msg(intf(f.pg, "SELECT count(*) FROM %s.outbox_archive", f.name) == 300,
		      "the archive has not taken the rows 30 s after its fix: %s",
		      relayfix_log_tail(&f));
	moved = now_s() - t0;
	ck_assert_int_eq(intf(f.pg, "SELECT count(*) FROM %s.outbox", f.name), 0);
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	ck_assert_int_eq(itest_topic_count(topic), 300);
	note("# the archive refusing every row: 300 rows published in batches of 5 in %.2f s, the "
	     "cleanup failing %.0f times meanwhile, 0 restarts; moved within %.2f s of the fix\n",
	     took, failures, moved);
	buf_fini(&warn);
	buf_fini(&w);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/* A record the broker refuses every time (topic max.message.bytes): a halt naming the row. */
START_TEST(test_refused_row_halts_naming_it)
{
	struct relayfix f;
	char *topic, *log;

	poll_fixture(&f, "outboxd.halt.after.failures=2\noutboxd.restart.backoff.max.ms=200\n",
		     &topic);
	itest_topic_config(topic, true, "max.message.bytes", "2000");
	relayfix_start_command(&f, "poll");
	insert_rows(&f, f.pg, 0, 1, 5);
	ck_assert_msg(wait_published(&f, 5, false, 30) >= 0, "%s", relayfix_log(&f));
	itest_sqlf(f.pg,
		   "INSERT INTO %s.outbox (id, aggregatetype, aggregateid, type, payload) VALUES "
		   "('00000000-0000-0000-0000-00000000b16b', '%s_order', 'agg-big', 'Created', "
		   "jsonb_build_object('k', 5, 'pad', repeat('x', 5000)))",
		   f.name, f.name);
	ck_assert_int_eq(relayfix_wait_exit(&f, 60), 1);
	log = relayfix_log(&f);
	ck_assert_msg(strstr(log, "halt: row id=00000000-0000-0000-0000-00000000b16b failed 2 "
				  "sessions in a row"),
		      "%s", log);
	free(log);
	ck_assert_int_eq(
		intf(f.pg, "SELECT count(*) FROM %s.outbox WHERE published_at IS NULL", f.name), 1);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/* `outboxd check --poll` on the fixture's files: its exit status, its output in @out. */
static int
check_poll(const struct relayfix *f, char *out, size_t len)
{
	struct buf cmd = BUF_INIT;
	char *first = NULL;
	size_t n;
	FILE *p;
	int st;

	/* stdout only: the diagnosis (the log on stderr lists accepted keys) */
	buf_add_fmt(
		&cmd,
		"'%s' check --poll '%s/worker.properties' '%s/connector.properties' 2>/dev/null",
		itest_env("OUTBOXD_BIN"), f->dir, f->dir);
	p = popen(buf_cstr(&cmd), "r");
	ck_assert_ptr_nonnull(p);
	n = fread(out, 1, len - 1, p);
	out[n] = '\0';
	/* read to the end: a pipe closed early would kill outboxd with SIGPIPE */
	while (n == len - 1 && fgetc(p) != EOF) {
	}
	st = pclose(p);
	buf_fini(&cmd);
	/* the diagnosis lines only, not the description of the configuration before them */
	for (const char *const *w = (const char *const[]){ "\nok   ", "\nFAIL ", "\nwarn ", NULL };
	     *w; w++) {
		char *at = strstr(out, *w);

		if (at && (!first || at < first)) {
			first = at;
		}
	}
	if (first) {
		memmove(out, first + 1, strlen(first));
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* check --poll: ready is exit 0; a role without UPDATE fails naming the GRANT; no index warns. */
START_TEST(test_check_poll_names_what_is_missing)
{
	struct relayfix f;
	PGconn *admin;
	char out[8192], *topic; /* printed cut: check's messages hold 4 KiB */
	struct buf extra = BUF_INIT;

	poll_fixture(&f, NULL, &topic);
	ck_assert_msg(check_poll(&f, out, sizeof(out)) == 0, "%.3000s", out);
	ck_assert_msg(strstr(out, "ok   table") && strstr(out, "ok   columns") &&
			      strstr(out, "ok   privileges    SELECT, UPDATE on ") &&
			      strstr(out, "ok   index") && strstr(out, "ok   notify") &&
			      strstr(out, "ok   kafka") && !strstr(out, "warn"),
		      "%.3000s", out);
	itest_sqlf(f.pg, "CREATE ROLE %s_r LOGIN PASSWORD 'poll-check-pw'", f.name);
	itest_sqlf(f.pg, "GRANT USAGE ON SCHEMA %s TO %s_r", f.name, f.name);
	itest_sqlf(f.pg, "GRANT SELECT ON %s.outbox TO %s_r", f.name, f.name);
	buf_add_fmt(&extra, "database.user=%s_r\ndatabase.password=poll-check-pw\n", f.name);
	{
		struct buf w = BUF_INIT;

		buf_add_fmt(&w, "outboxd.poll.notify.channel=%s\n", f.name);
		relayfix_config(&f, buf_cstr(&w), buf_cstr(&extra));
		buf_fini(&w);
	}
	ck_assert_msg(check_poll(&f, out, sizeof(out)) == 2, "%.3000s", out);
	ck_assert_msg(strstr(out, "FAIL privileges    the role lacks UPDATE on ") &&
			      strstr(out, "GRANT UPDATE ON ") && !strstr(out, "poll-check-pw"),
		      "%.3000s", out);
	itest_sqlf(f.pg, "GRANT UPDATE ON %s.outbox TO %s_r", f.name, f.name);
	itest_sqlf(f.pg, "DROP INDEX %s.outbox_seq_idx", f.name);
	ck_assert_msg(check_poll(&f, out, sizeof(out)) == 0, "%.3000s", out);
	ck_assert_msg(strstr(out, "warn index         no partial index on seq"), "%.3000s", out);
	note("# check --poll: ready, a role without UPDATE (FAIL, the GRANT named), no index (warn)\n");
	buf_fini(&extra);
	admin = itest_pg();
	{
		char *name = xstrdup(f.name);

		relayfix_fini(&f);
		itest_sqlf(admin, "DROP ROLE %s_r", name);
		free(name);
	}
	PQfinish(admin);
	free(topic);
}
END_TEST

/*
 * A placed column of a type outboxd does not convert (box) is exit 2 before the first batch,
 * naming the table, the column, the option and the type, and a FAIL line of `check --poll`;
 * unplaced, the rows are published.
 */
START_TEST(test_placed_column_of_a_type_outboxd_does_not_convert_exits_2)
{
	struct relayfix f;
	struct buf w = BUF_INIT, needle = BUF_INIT;
	char out[8192], *topic, *log;

	poll_fixture(&f, NULL, &topic);
	itest_sqlf(f.pg, "ALTER TABLE %s.outbox ADD COLUMN dur box DEFAULT '((0,0),(1,2))'",
		   f.name);
	insert_rows(&f, f.pg, 0, 1, 3);
	buf_add_fmt(&w, "outboxd.poll.notify.channel=%s\n", f.name);
	relayfix_config(&f, buf_cstr(&w),
			"transforms.outbox.table.fields.additional.placement=dur:header:d");
	buf_add_fmt(&needle,
		    "table %s.outbox: column \"dur\" (table.fields.additional.placement) has type "
		    "box, which outboxd does not convert yet",
		    f.name);
	relayfix_start_command(&f, "poll");
	ck_assert_int_eq(relayfix_wait_exit(&f, 30), 2);
	log = relayfix_log(&f);
	ck_assert_msg(strstr(log, buf_cstr(&needle)), "%s", log);
	free(log);
	ck_assert_int_eq(
		intf(f.pg, "SELECT count(*) FROM %s.outbox WHERE published_at IS NOT NULL", f.name),
		0);
	ck_assert_int_eq(check_poll(&f, out, sizeof(out)), 2);
	ck_assert_msg(strstr(out, "FAIL columns") && strstr(out, buf_cstr(&needle)), "%.3000s",
		      out);
	relayfix_config(&f, buf_cstr(&w), NULL);
	ck_assert_msg(check_poll(&f, out, sizeof(out)) == 0, "%.3000s", out);
	relayfix_start_command(&f, "poll");
	ck_assert_msg(wait_published(&f, 3, false, 30) >= 0, "%s", relayfix_log(&f));
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	buf_fini(&w);
	buf_fini(&needle);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/*
 * A range-partitioned outbox (by seq, three partitions, the id unique with the partition key)
 * listed by its root: every row of every partition published through it, each aggregate's rows
 * (which span the partitions) in order, and marked; `check --poll` passes on the root and
 * fails on a listed partition, naming the root.
 */
START_TEST(test_partitioned_outbox_is_published_through_its_root)
{
	struct relayfix f;
	struct itest_record *recs;
	char out[8192], *topic, *log;
	struct buf w = BUF_INIT, c = BUF_INIT;
	size_t n;

	poll_fixture(&f, "outboxd.poll.batch.size=7\n", &topic);
	itest_sqlf(f.pg, "ALTER TABLE %s.outbox RENAME TO outbox_plain", f.name);
	itest_sqlf(f.pg,
		   "CREATE TABLE %s.outbox (id uuid NOT NULL, aggregatetype varchar(255) NOT NULL, "
		   "aggregateid varchar(255) NOT NULL, type varchar(255) NOT NULL, payload jsonb, "
		   "created_at timestamptz NOT NULL DEFAULT now(), seq bigint GENERATED ALWAYS AS "
		   "IDENTITY (CACHE 1), published_at timestamptz NULL, PRIMARY KEY (id, seq)) "
		   "PARTITION BY RANGE (seq)",
		   f.name);
	itest_sqlf(f.pg,
		   "CREATE TABLE %s.outbox_a PARTITION OF %s.outbox FOR VALUES FROM (1) TO "
		   "(101)",
		   f.name, f.name);
	itest_sqlf(f.pg,
		   "CREATE TABLE %s.outbox_b PARTITION OF %s.outbox FOR VALUES FROM (101) TO "
		   "(201)",
		   f.name, f.name);
	itest_sqlf(f.pg,
		   "CREATE TABLE %s.outbox_c PARTITION OF %s.outbox FOR VALUES FROM (201) TO "
		   "(MAXVALUE)",
		   f.name, f.name);
	itest_sqlf(f.pg, "CREATE INDEX ON %s.outbox (seq) WHERE published_at IS NULL", f.name);
	itest_sqlf(f.pg,
		   "CREATE TRIGGER outbox_notify AFTER INSERT ON %s.outbox FOR EACH STATEMENT "
		   "EXECUTE FUNCTION %s.outbox_notify()",
		   f.name, f.name);
	insert_rows(&f, f.pg, 0, 30, 10); /* seq 1..300: every aggregate in all three */
	ck_assert_int_eq(intf(f.pg, "SELECT count(*) FROM %s.outbox_b", f.name), 100);
	ck_assert_msg(check_poll(&f, out, sizeof(out)) == 0, "%.3000s", out);
	ck_assert_msg(strstr(out, "ok   table") && strstr(out, ".outbox (selected"), "%.3000s",
		      out);
	relayfix_start_command(&f, "poll");
	ck_assert_msg(wait_published(&f, 300, false, 60) >= 0, "%.2000s", relayfix_log(&f));
	n = itest_consume_all(topic, 300, 60000, &recs);
	ck_assert_uint_eq(n, 300);
	ck_assert_int_eq(first_copies_in_order(recs, n, 300), 300);
	itest_records_free(recs, n);
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	/* the cleanup through the root: every partition's published rows, none twice */
	buf_add_fmt(&w,
		    "outboxd.poll.notify.channel=%s\noutboxd.poll.retention=1 millisecond\n"
		    "outboxd.poll.cleanup.interval.ms=100\noutboxd.poll.cleanup.batch.size=7\n",
		    f.name);
	relayfix_config(&f, buf_cstr(&w), NULL);
	relayfix_start_command(&f, "poll");
	for (int i = 0; i < 300 && intf(f.pg, "SELECT count(*) FROM %s.outbox", f.name); i++) {
		usleep(100 * 1000);
	}
	ck_assert_int_eq(intf(f.pg, "SELECT count(*) FROM %s.outbox", f.name), 0);
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	buf_reset(&w);
	/* a partition listed alone would be a "table" of its own, with an order of its own */
	buf_add_fmt(&w, "outboxd.poll.notify.channel=%s\n", f.name);
	buf_add_fmt(&c, "table.include.list=%s.outbox_b\n", f.name);
	relayfix_config(&f, buf_cstr(&w), buf_cstr(&c));
	ck_assert_msg(check_poll(&f, out, sizeof(out)) == 2, "%.3000s", out);
	ck_assert_msg(strstr(out, "a partition of ") && strstr(out, "list the partitioned table"),
		      "%.3000s", out);
	relayfix_start_command(&f, "poll");
	ck_assert_int_eq(relayfix_wait_exit(&f, 30), 2);
	log = relayfix_log(&f);
	ck_assert_msg(strstr(log, ".outbox_b, a partition of "), "%s", log);
	free(log);
	note("# partitioned outbox: 300 rows over 3 partitions through the root, in order\n");
	buf_fini(&w);
	buf_fini(&c);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/*
 * The mark needs a key that reaches the row read and no other: a nullable, non-unique id is
 * refused at start and by check --poll (naming table, column and fix); a row whose mark reaches
 * nothing (a trigger skips its UPDATE) is published once and halts naming it, not every cycle.
 */
START_TEST(test_a_row_that_cannot_be_marked_is_not_republished)
{
	struct relayfix f;
	char out[8192], *topic, *log;

	poll_fixture(&f, "outboxd.restart.backoff.max.ms=200\n", &topic);
	itest_sqlf(f.pg, "ALTER TABLE %s.outbox DROP CONSTRAINT outbox_pkey", f.name);
	itest_sqlf(f.pg,
		   "ALTER TABLE %s.outbox ALTER COLUMN id TYPE text, ALTER COLUMN id DROP "
		   "NOT NULL",
		   f.name);
	ck_assert_msg(check_poll(&f, out, sizeof(out)) == 2, "%.3000s", out);
	ck_assert_msg(strstr(out, "FAIL id ") && strstr(out, "the id column \"id\"") &&
			      strstr(out, "is nullable") && strstr(out, "SET NOT NULL") &&
			      strstr(out, "ADD PRIMARY KEY (id)"),
		      "%.3000s", out);
	relayfix_start_command(&f, "poll");
	ck_assert_int_eq(relayfix_wait_exit(&f, 30), 2);
	ck_assert(relayfix_wait_log(&f, "is nullable and is in no unique index", 1));
	itest_sqlf(f.pg, "ALTER TABLE %s.outbox ADD PRIMARY KEY (id)", f.name);
	itest_sqlf(f.pg,
		   "CREATE FUNCTION %s.skip() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF "
		   "OLD.id = 'stuck' THEN RETURN NULL; END IF; RETURN NEW; END; $$",
		   f.name);
	itest_sqlf(f.pg,
		   "CREATE TRIGGER skip BEFORE UPDATE ON %s.outbox FOR EACH ROW EXECUTE FUNCTION "
		   "%s.skip()",
		   f.name, f.name);
	insert_rows(&f, f.pg, 0, 1, 5);
	itest_sqlf(f.pg,
		   "INSERT INTO %s.outbox (id, aggregatetype, aggregateid, type, payload) VALUES "
		   "('stuck', '%s_order', 'agg-stuck', 'Created', '{\"k\": 5}')",
		   f.name, f.name);
	relayfix_start_command(&f, "poll");
	ck_assert_int_eq(relayfix_wait_exit(&f, 30), 1);
	log = relayfix_log(&f);
	ck_assert_msg(strstr(log, "halt: row id=stuck of ") &&
			      strstr(log, "was published but its mark matched no row"),
		      "%s", log);
	free(log);
	sleep(1);
	ck_assert_int_eq(itest_topic_count(topic), 6); /* the row once, not once per cycle */
	ck_assert_int_eq(
		intf(f.pg, "SELECT count(*) FROM %s.outbox WHERE published_at IS NULL", f.name), 1);
	note("# an id that is nullable and not unique: exit 2; a row the mark misses: halt\n");
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/*
 * An id of 400 characters whose record the broker refuses: its dead letter goes to the
 * dead-letter topic once (the poller remembers the id whole) and is marked; not a halt.
 */
START_TEST(test_a_long_id_goes_to_the_dead_letter_topic_once)
{
	struct relayfix f;
	struct buf w = BUF_INIT, c = BUF_INIT;
	char *topic, *dlq;

	poll_fixture(&f, NULL, &topic);
	dlq = relayfix_aggtype(&f, "dlq");
	buf_add_fmt(&w,
		    "outboxd.poll.notify.channel=%s\noutboxd.halt.after.failures=2\n"
		    "outboxd.restart.backoff.max.ms=200\n",
		    f.name);
	buf_add_fmt(&c, "outboxd.errors.deadletterqueue.topic.name=%s\n", dlq);
	relayfix_config(&f, buf_cstr(&w), buf_cstr(&c));
	itest_sqlf(f.pg, "ALTER TABLE %s.outbox ALTER COLUMN id TYPE text", f.name);
	itest_topic_config(topic, true, "max.message.bytes", "2000");
	relayfix_start_command(&f, "poll");
	insert_rows(&f, f.pg, 0, 1, 5);
	ck_assert_msg(wait_published(&f, 5, false, 30) >= 0, "%s", relayfix_log(&f));
	itest_sqlf(f.pg,
		   "INSERT INTO %s.outbox (id, aggregatetype, aggregateid, type, payload) VALUES "
		   "(repeat('L', 400), '%s_order', 'agg-big', 'Created', "
		   "jsonb_build_object('k', 5, 'pad', repeat('x', 5000)))",
		   f.name, f.name);
	if (wait_published(&f, 6, false, 60) < 0) {
		char *log = relayfix_log(&f);
		size_t len = strlen(log);

		ck_abort_msg("not published: %s", log + (len > 3000 ? len - 3000 : 0));
	}
	sleep(2);
	ck_assert_int_eq(itest_topic_count(dlq), 1);
	ck_assert_int_eq(itest_topic_count(topic), 5);
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	note("# a 400-character id refused by the broker: one dead letter, marked, no halt\n");
	buf_fini(&w);
	buf_fini(&c);
	free(dlq);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/*
 * A backlog of large rows is read in chunks: 400 rows of 100 KB (40 MB), 8 partitions of 500
 * rows each (one read of every row at once before), outboxd.poll.batch.max.bytes=1 MiB. The
 * process' peak resident memory stays far below the backlog's size, and every row is published.
 */
START_TEST(test_a_batch_is_bounded_in_bytes)
{
	struct relayfix f;
	char *topic;
	long peak;

	poll_fixture(&f,
		     "outboxd.poll.partitions=8\noutboxd.poll.batch.size=500\n"
		     "outboxd.poll.batch.max.bytes=1048576\n",
		     &topic);
	/* 100 KB of incompressible text per row: what the process holds is what was read */
	itest_sqlf(f.pg,
		   "INSERT INTO %s.outbox (id, aggregatetype, aggregateid, type, payload) "
		   "SELECT gen_random_uuid(), '%s_order', 'agg-' || (k %% %d), 'Created', "
		   "jsonb_build_object('k', k, 'blob', (SELECT string_agg(md5(random()::text || "
		   "k || j), '') FROM generate_series(1, 3200) AS j)) FROM generate_series(0, 399) "
		   "AS k",
		   f.name, f.name, N_AGGS);
	relayfix_start_command(&f, "poll");
	ck_assert_msg(wait_published(&f, 400, false, 90) >= 0, "%s", relayfix_log(&f));
	peak = relayfix_peak_rss_kb(&f);
	note("# 400 rows of 100 KB, 8 partitions, batch.max.bytes 1 MiB: peak RSS %ld KiB\n", peak);
	ck_assert_int_gt(peak, 0);
	ck_assert_msg(peak < 32 * 1024, "peak RSS %ld KiB: the batch was not bounded", peak);
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	ck_assert_int_eq(itest_topic_count(topic), 400);
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/* The oldest running xid of the database (the xmin horizon the open transactions hold). */
static long long
horizon(PGconn *c)
{
	PGresult *r = itest_sql(c, "SELECT txid_snapshot_xmin(txid_current_snapshot())");
	long long v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);

	PQclear(r);
	return v;
}

/*
 * Unordered mode, the broker frozen for 60 s with a claim's records in flight: the claim ends
 * after outboxd.poll.claim.timeout.ms (5 s here), so the database's xmin horizon keeps
 * advancing while transactions go on; thawed, every row is published.
 */
START_TEST(test_unordered_claim_does_not_hold_the_horizon_through_a_freeze)
{
	struct relayfix f;
	int kpid = itest_kafka_pid();
	char *topic;
	long long first, last, held_since_v;
	double t0, held_since, longest = 0;

	poll_fixture(&f, "outboxd.poll.mode=unordered\noutboxd.poll.claim.timeout.ms=5000\n",
		     &topic);
	relayfix_start_command(&f, "poll");
	ck_assert(relayfix_wait_log(&f, "unordered: batches claimed", 30));
	insert_rows(&f, f.pg, 0, 1, 10);
	ck_assert(wait_published(&f, 10, false, 30) >= 0);
	ck_assert_int_eq(kill(kpid, SIGSTOP), 0);
	insert_rows(&f, f.pg, 10, 1, 10); /* claimed, produced, never acknowledged while frozen */
	usleep(500 * 1000);
	t0 = held_since = now_s();
	first = held_since_v = horizon(f.pg);
	last = first;
	for (int i = 0; now_s() - t0 < 60; i++) {
		insert_rows(&f, f.pg, 20 + i, 1, 1); /* one xid more each time */
		last = horizon(f.pg);
		if (last != held_since_v) {
			held_since_v = last;
			held_since = now_s();
		}
		longest = now_s() - held_since > longest ? now_s() - held_since : longest;
		usleep(200 * 1000);
	}
	ck_assert_int_eq(kill(kpid, SIGCONT), 0);
	note("# unordered, broker frozen 60 s, claim.timeout.ms 5000: horizon %lld -> %lld, held at "
	     "most %.1f s\n",
	     first, last, longest);
	ck_assert_msg(longest < 15, "the xmin horizon stood still %.1f s", longest);
	ck_assert(last > first);
	ck_assert_msg(relayfix_wait_log(&f, "a claim outlived outboxd.poll.claim.timeout.ms", 1),
		      "%s", relayfix_log(&f));
	ck_assert_msg(wait_published(&f, intf(f.pg, "SELECT count(*) FROM %s.outbox", f.name),
				     false, 90) >= 0,
		      "%s", relayfix_log(&f));
	ck_assert_int_eq(relayfix_stop(&f, SIGTERM), 0);
	ck_assert_int_ge(itest_topic_count_settled(topic, 30),
			 intf(f.pg, "SELECT count(*) FROM %s.outbox", f.name));
	free(topic);
	relayfix_fini(&f);
}
END_TEST

/* A test case of one test (CK_RUN_CASE=@name runs it alone), with @tags (may be NULL). */
static void
add_case(Suite *s, const char *name, const char *tags, const TTest *test)
{
	TCase *t = tcase_create(name);

	tcase_set_timeout(t, 300);
	if (tags) {
		tcase_set_tags(t, tags);
	}
	tcase_add_test(t, test);
	suite_add_tcase(s, t);
}

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
	tcase_add_test(t, test_notify_during_a_cycle_wakes_the_next);
	tcase_add_test(t, test_a_cycle_does_not_wait_for_linger);
	tcase_add_test(t, test_after_delete_deletes_published_rows);
	tcase_add_test(t, test_frozen_broker_marks_nothing);
	tcase_add_test(t, test_null_key_rows_are_published);
	tcase_add_test(t, test_sigkill_loses_nothing);
	tcase_add_test(t, test_second_poller_takes_over_and_keeps_order);
	tcase_add_test(t, test_unordered_workers_share_the_table);
	tcase_add_test(t, test_cleanup_deletes_then_archives);
	tcase_add_test(t, test_a_long_cleanup_keeps_the_loop_turning);
	tcase_add_test(t, test_refused_row_halts_naming_it);
	tcase_add_test(t, test_check_poll_names_what_is_missing);
	tcase_add_test(t, test_several_tables_publish_what_run_publishes);
	suite_add_tcase(s, t);
	/* what the mark reaches: a partitioned root's rows, a key it can match, an id of any length */
	t = tcase_create("mark");
	tcase_set_timeout(t, 300);
	tcase_add_test(t, test_partitioned_outbox_is_published_through_its_root);
	tcase_add_test(t, test_a_row_that_cannot_be_marked_is_not_republished);
	tcase_add_test(t, test_a_long_id_goes_to_the_dead_letter_topic_once);
	suite_add_tcase(s, t);
	/* what a batch may hold: bytes, and (unordered) how long its claim locks its rows */
	add_case(s, "bounds", NULL, test_a_batch_is_bounded_in_bytes);
	add_case(s, "types", NULL, test_placed_column_of_a_type_outboxd_does_not_convert_exits_2);
	/* a broker frozen for a minute: the same on every PostgreSQL major, run on 15 only */
	add_case(s, "outage", "broker-outage pg-independent",
		 test_unordered_claim_does_not_hold_the_horizon_through_a_freeze);
	/* the side jobs' failures: warned, backed off, never in publishing's way */
	add_case(s, "upkeep", NULL, test_a_failing_cleanup_does_not_stop_publishing);
	/* the partitions' locks across processes of different outboxd.poll.partitions */
	add_case(s, "locks", NULL, test_a_changed_partition_count_waits_for_the_old_owners);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
