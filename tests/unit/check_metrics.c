/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/kafka/kafkasink.h"
#include "outboxd/kafka/rdstats.h"
#include "outboxd/obs/metrics.h"
#include "outboxd/obs/procstat.h"
#include "outboxd/pg/slotstat.h"
#include "outboxd/pipeline/publish.h"
#include "outboxd/poll/poll_metrics.h"
#include "outboxd/relay/slotwatch.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/prom.h"
#include "outboxd/util/version.h"

/* A clock the test moves by hand. */
static int64_t
fake_clock(void *arg)
{
	return *(int64_t *)arg;
}

/* True if @text has @line as one whole line. */
static bool
has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++) {
		if ((p == text || p[-1] == '\n') && p[n] == '\n') {
			return true;
		}
	}
	return false;
}

#define ck_assert_line(text, line) ck_assert_msg(has_line(text, line), "missing line: %s", line)

/* The whole of the file @path, NUL-terminated; NULL if it cannot be read. Caller frees. */
static char *
read_file(const char *path)
{
	struct buf b = BUF_INIT;
	char chunk[4096];
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f) {
		return NULL;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		buf_add(&b, chunk, n);
	}
	fclose(f);
	return buf_steal(&b);
}

/* The slot's section as the relay's slotwatch registers and sets it. */
static void
set_slot(struct metrics *m, const struct slotstat *st)
{
	metrics_section_set(m, metrics_section_add(m, &slotwatch_section), st);
}

/* librdkafka's statistics' section as publish's statistics callback registers and sets it. */
static void
set_kafka(struct metrics *m, const struct rdstats *st)
{
	metrics_section_set(m, publish_stats_section(m, &kafkasink_kind), st);
}

static char *
render(const struct metrics *m)
{
	struct buf b = BUF_INIT;

	metrics_render(m, &b);
	return buf_steal(&b);
}

static char *
health(const struct metrics *m, int *status)
{
	struct buf b = BUF_INIT;

	*status = metrics_health(m, &b);
	return buf_steal(&b);
}

START_TEST(test_fresh_metrics_render_zeros_and_the_starting_state)
{
	struct metrics *m = metrics_new();
	char *t = render(m);
	struct buf info = BUF_INIT;

	ck_assert_line(t, "# HELP outboxd_records_published_total Records handed to the Kafka "
			  "producer.");
	ck_assert_line(t, "# TYPE outboxd_records_published_total counter");
	ck_assert_line(t, "outboxd_records_published_total 0");
	ck_assert_line(t, "# TYPE outboxd_rows_skipped_total counter");
	ck_assert_line(t, "outboxd_rows_skipped_total{reason=\"other_table\"} 0");
	ck_assert_line(t, "# TYPE outboxd_confirmed_lsn gauge");
	ck_assert_line(t, "outboxd_in_flight_records 0");
	ck_assert_line(t, "outboxd_last_ack_age_seconds 0.000");
	ck_assert_line(t, "outboxd_stalled 0");
	ck_assert_line(t, "outboxd_up 1");
	ck_assert_line(t, "outboxd_state{state=\"starting\"} 1");
	ck_assert_line(t, "outboxd_state{state=\"streaming\"} 0");
	buf_add_fmt(&info, "outboxd_build_info{version=\"%s\"} 1", version_string());
	ck_assert_line(t, buf_cstr(&info));
	ck_assert_uint_eq(t[strlen(t) - 1], '\n');
	buf_fini(&info);
	free(t);
	metrics_free(m);
}
END_TEST

/*
 * Every sample line of @t belongs to a family announced by exactly one HELP and one TYPE before
 * it, and no family is announced twice. Return: the number of families.
 */
static int
check_families(char *t)
{
	char *save = NULL;
	char family[128] = "", seen[8192] = " ";
	int families = 0;

	for (char *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n;

		if (strncmp(line, "# HELP ", 7) == 0) {
			n = strcspn(line + 7, " ");
			ck_assert_uint_lt(n, sizeof(family));
			memcpy(family, line + 7, n);
			family[n] = '\0';
			families++;
			ck_assert_msg(strstr(seen, family) == NULL ||
					      strstr(seen, family)[-1] != ' ' ||
					      strstr(seen, family)[n] != ' ',
				      "family %s announced twice", family);
			ck_assert_uint_lt(strlen(seen) + n + 2, sizeof(seen));
			strcat(seen, family);
			strcat(seen, " ");
			continue;
		}
		if (strncmp(line, "# TYPE ", 7) == 0) {
			ck_assert_int_eq(strncmp(line + 7, family, strlen(family)), 0);
			continue;
		}
		n = strcspn(line, "{ ");
		ck_assert_msg(n == strlen(family) ||
				      strncmp(line + strlen(family), "_bucket", 7) == 0 ||
				      strncmp(line + strlen(family), "_sum", 4) == 0 ||
				      strncmp(line + strlen(family), "_count", 6) == 0,
			      "sample %s outside its family %s", line, family);
		ck_assert_msg(strncmp(line, family, strlen(family)) == 0,
			      "sample %s outside its family %s", line, family);
	}
	return families;
}

START_TEST(test_every_family_has_help_and_type)
{
	struct metrics *m = metrics_new();
	char *t = render(m);

	ck_assert_int_eq(check_families(t), 22);
	free(t);
	metrics_free(m);
}
END_TEST

/* The same with every optional section: the lag, the slot (all of 17's columns), librdkafka's. */
START_TEST(test_every_optional_family_has_help_and_type)
{
	static const char *const row[SLOTSTAT_NCOLS] = {
		"10", "5", "lost", "0", "f", NULL, "wal_removed", "1733333333000", "true", "false"
	};
	struct metrics *m = metrics_new();
	struct slotstat st;
	struct rdstats rs = { .queue_capacity_records = 5000 };
	struct poll_metrics pm;
	char *t;

	ck_assert_int_eq(slotstat_parse(row, &st, NULL, 0), 0);
	set_slot(m, &st);
	set_kafka(m, &rs);
	metrics_lag(m, 2000000, 1000000, 500000);
	metrics_observe_ack(m, 3000);
	poll_metrics_init(&pm, m);
	t = render(m);
	ck_assert_ptr_nonnull(
		strstr(t, "\noutboxd_slot_invalidation_reason{reason=\"wal_removed\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(t, "\noutboxd_producer_queue_capacity_records 5000\n"));
	ck_assert_int_eq(check_families(t), 22 + 12 + 10 + 3 + 7);
	free(t);
	metrics_free(m);
}
END_TEST

/* Every family a process can render: all optional sections on, and /proc/self's. */
static char *
render_everything(void)
{
	static const char *const row[SLOTSTAT_NCOLS] = {
		"10", "5", "lost", "0", "f", NULL, "wal_removed", "1733333333000", "true", "false"
	};
	struct metrics *m = metrics_new();
	struct procstat ps = { 0 };
	struct slotstat st;
	struct rdstats rs = { .queue_capacity_records = 5000 };
	struct poll_metrics pm;
	struct buf out = BUF_INIT;

	ck_assert_int_eq(slotstat_parse(row, &st, NULL, 0), 0);
	set_slot(m, &st);
	set_kafka(m, &rs);
	metrics_lag(m, 2000000, 1000000, 500000);
	metrics_observe_ack(m, 3000);
	poll_metrics_init(&pm, m);
	poll_metrics_stats(&pm, 10, 5);
	metrics_render(m, &out);
	procstat_render(&ps, &out);
	metrics_free(m);
	return buf_steal(&out);
}

/* Whether @name is a family of @t, or a histogram's series of one. */
static bool
rendered(const char *t, const char *name)
{
	static const char *const suffixes[] = { "", "_bucket", "_sum", "_count" };
	char family[160], needle[200];

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t n = strlen(name), k = strlen(suffixes[i]);

		if (n <= k || strcmp(name + n - k, suffixes[i]) != 0 || n - k >= sizeof(family)) {
			continue;
		}
		memcpy(family, name, n - k);
		family[n - k] = '\0';
		snprintf(needle, sizeof(needle), "# TYPE %s ", family);
		if (strstr(t, needle)) {
			return true;
		}
	}
	return false;
}

/*
 * Every outboxd_* metric name that the documents, the alert rules and the dashboard speak of is a
 * family outboxd renders: a renamed or removed metric cannot stay documented. Names followed by
 * '*' are prefixes; the others listed here are not metrics.
 */
START_TEST(test_documented_names_are_rendered)
{
	static const char *const docs[] = { "README.md",
					    "CONTRIBUTING.md",
					    "bench/README.md",
					    "docs/running.md",
					    "docs/publishing.md",
					    "docs/failures.md",
					    "docs/polling.md",
					    "docs/operating.md",
					    "docs/debezium.md",
					    "docs/benchmarks.md",
					    "docs/postgresql.md",
					    "docs/security.md",
					    "docs/installing.md",
					    "deploy/prometheus/outboxd-alerts.yml",
					    "deploy/grafana/outboxd-dashboard.json" };
	static const char *const not_metrics[] = {
		"outboxd_outbox",  /* outboxd.poll.notify.channel's default */
		"outboxd_standby", /* the test stack's physical slot */
		"outboxd_cert",	   /* a role of the test stack */
		"outboxd_keys",	   /* config.c's table */
	};
	const char *root = getenv("OUTBOXD_SOURCE_ROOT");
	char *t = render_everything();
	int checked = 0;

	ck_assert_msg(root != NULL, "OUTBOXD_SOURCE_ROOT is not set (tests/meson.build sets it)");
	for (size_t d = 0; d < sizeof(docs) / sizeof(docs[0]); d++) {
		struct buf path = BUF_INIT;
		char *text;

		buf_add_fmt(&path, "%s/%s", root, docs[d]);
		text = read_file(buf_cstr(&path));
		ck_assert_msg(text != NULL, "cannot read %s", buf_cstr(&path));
		for (const char *p = strstr(text, "outboxd_"); p; p = strstr(p + 1, "outboxd_")) {
			char name[160];
			size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
			bool skip = p[n] == '*' || n >= sizeof(name) ||
				    (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_'));

			while (n && p[n - 1] == '_') {
				n--;
			}
			if (skip || n < sizeof("outboxd_x") - 1) {
				continue;
			}
			memcpy(name, p, n);
			name[n] = '\0';
			for (size_t i = 0; i < sizeof(not_metrics) / sizeof(not_metrics[0]); i++) {
				skip = skip || strcmp(name, not_metrics[i]) == 0;
			}
			if (!skip) {
				ck_assert_msg(rendered(t, name),
					      "%s names %s, which outboxd does not render", docs[d],
					      name);
				checked++;
			}
		}
		free(text);
		buf_fini(&path);
	}
	ck_assert_int_gt(checked, 100);
	free(t);
}
END_TEST

/* The poller's families: absent for `run`, present after poll_metrics_init(). */
START_TEST(test_poll_families_only_for_the_poller)
{
	int64_t now = 1000000;
	struct metrics *m = metrics_new();
	struct poll_metrics pm;
	char *t = render(m);

	metrics_set_clock(m, fake_clock, &now);
	ck_assert_ptr_null(strstr(t, "outboxd_poll_"));
	free(t);
	poll_metrics_init(&pm, m);
	t = render(m);
	ck_assert_line(t, "outboxd_poll_unpublished_rows 0");
	ck_assert_ptr_null(strstr(t, "outboxd_poll_oldest_unpublished_age_seconds"));
	ck_assert_line(t, "outboxd_poll_partitions_owned 0");
	ck_assert_line(t, "outboxd_poll_partitions_other_count 0");
	ck_assert_line(t, "outboxd_poll_last_poll_age_seconds 0.000");
	ck_assert_line(t, "# TYPE outboxd_poll_rows_marked_total counter");
	ck_assert_line(t, "outboxd_poll_upkeep_failures_total{job=\"count\"} 0");
	ck_assert_line(t, "outboxd_poll_upkeep_failures_total{job=\"cleanup\"} 0");
	free(t);
	poll_metrics_stats(&pm, 1234, 61500);
	poll_metrics_partitions(&pm, 16);
	poll_metrics_other_count(&pm, 8);
	poll_metrics_done(&pm, 40);
	poll_metrics_done(&pm, 2);
	poll_metrics_cleaned(&pm, 7);
	poll_metrics_upkeep_failed(&pm, POLL_UPKEEP_CLEANUP);
	poll_metrics_upkeep_failed(&pm, POLL_UPKEEP_CLEANUP);
	poll_metrics_upkeep_failed(&pm, POLL_UPKEEP_COUNT);
	now += 2500000;
	t = render(m);
	ck_assert_line(t, "outboxd_poll_unpublished_rows 1234");
	ck_assert_line(t, "outboxd_poll_oldest_unpublished_age_seconds 61.500");
	ck_assert_line(t, "outboxd_poll_partitions_owned 16");
	ck_assert_line(t, "outboxd_poll_partitions_other_count 8");
	ck_assert_line(t, "outboxd_poll_last_poll_age_seconds 2.500");
	ck_assert_line(t, "outboxd_poll_rows_marked_total 42");
	ck_assert_line(t, "outboxd_poll_rows_cleaned_total 7");
	ck_assert_line(t, "outboxd_poll_upkeep_failures_total{job=\"count\"} 1");
	ck_assert_line(t, "outboxd_poll_upkeep_failures_total{job=\"cleanup\"} 2");
	free(t);
	poll_metrics_stats(&pm, 0, -1); /* no creation time column */
	t = render(m);
	ck_assert_ptr_null(strstr(t, "outboxd_poll_oldest_unpublished_age_seconds"));
	free(t);
	metrics_free(m);
}
END_TEST

/* A test section's figures: its family's name and a value. */
struct probe {
	char name[32];
	int64_t v;
};

/* Renders the family outboxd_test_<name> and the age of the copy as outboxd_test_<name>_age. */
static void
render_probe(const void *data, int64_t now_us, int64_t set_us, struct buf *out)
{
	const struct probe *p = data;
	struct buf name = BUF_INIT;

	buf_add_fmt(&name, "outboxd_test_%s", p->name);
	prom_int(out, buf_cstr(&name), "gauge", "A test section's value.", p->v);
	buf_add_str(&name, "_age");
	prom_family(out, buf_cstr(&name), "gauge", "A test section's age.");
	prom_seconds_ms(out, buf_cstr(&name), now_us - set_us);
	buf_fini(&name);
}

/* Where @line starts in @t, or NULL. */
static const char *
line_at(const char *t, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = t; (p = strstr(p, line)); p++) {
		if ((p == t || p[-1] == '\n') && p[n] == '\n') {
			return p;
		}
	}
	return NULL;
}

/* @t has the line @a, and later the line @b. */
static void
assert_before(const char *t, const char *a, const char *b)
{
	const char *pa = line_at(t, a), *pb = line_at(t, b);

	ck_assert_msg(pa && pb && pa < pb, "%s is not before %s", a, b);
}

/*
 * A section renders only after its first set, in the order of registration (not of the sets,
 * not of the names), between the core gauges and outboxd_up, from the copy the set took.
 */
START_TEST(test_sections_render_after_their_first_set_in_registration_order_from_a_copy)
{
	static const struct metrics_section zeta_s = { "zeta", sizeof(struct probe), render_probe };
	static const struct metrics_section alpha_s = { "alpha", sizeof(struct probe),
							render_probe };
	int64_t now = 1000000;
	struct metrics *m = metrics_new();
	struct probe zeta = { "zeta", 1 }, alpha = { "alpha", 2 };
	int zid, aid;
	char *t;

	metrics_set_clock(m, fake_clock, &now);
	zid = metrics_section_add(m, &zeta_s);
	aid = metrics_section_add(m, &alpha_s);
	ck_assert_int_ne(zid, aid);
	t = render(m);
	ck_assert_ptr_null(strstr(t, "outboxd_test_"));
	ck_assert_int_eq(check_families(t), 22);
	free(t);

	metrics_section_set(m, aid, &alpha);
	alpha.v = 99; /* after the set: not seen until the next one */
	now += 1500000;
	t = render(m);
	ck_assert_line(t, "outboxd_test_alpha 2");
	ck_assert_line(t, "outboxd_test_alpha_age 1.500");
	ck_assert_ptr_null(strstr(t, "outboxd_test_zeta"));
	free(t);

	metrics_section_set(m, zid, &zeta);
	metrics_section_set(m, aid, &alpha);
	t = render(m);
	ck_assert_line(t, "outboxd_test_alpha 99");
	ck_assert_line(t, "outboxd_test_alpha_age 0.000");
	ck_assert_line(t, "outboxd_test_zeta 1");
	assert_before(t, "outboxd_stalled 0", "outboxd_test_zeta 1");
	assert_before(t, "outboxd_test_zeta 1", "outboxd_test_alpha 99");
	assert_before(t, "outboxd_test_alpha 99", "outboxd_up 1");
	ck_assert_int_eq(check_families(t), 22 + 4);
	free(t);
	metrics_free(m);
}
END_TEST

/* A name is registered once: adding it again returns its id and changes nothing. */
START_TEST(test_a_section_added_twice_keeps_its_first_id_and_renders_once)
{
	static const struct metrics_section a = { "a", sizeof(struct probe), render_probe };
	static const struct metrics_section b = { "b", sizeof(struct probe), render_probe };
	struct metrics *m = metrics_new();
	struct probe pa = { "a", 1 }, pb = { "b", 2 };
	char name[] = "a"; /* the registry copies the name: this one changes below */
	struct metrics_section again = { name, 1, render_probe };
	int ida = metrics_section_add(m, &a);
	int idb = metrics_section_add(m, &b);
	char *t;

	ck_assert_int_ne(ida, idb);
	ck_assert_int_eq(metrics_section_add(m, &again), ida);
	name[0] = 'x';
	ck_assert_int_eq(metrics_section_add(m, &a), ida);
	ck_assert_int_eq(metrics_section_add(m, &b), idb);
	metrics_section_set(m, ida, &pa); /* the first registration's size: all of pa */
	metrics_section_set(m, idb, &pb);
	metrics_section_set(m, -1, &pa); /* unknown ids: ignored */
	metrics_section_set(m, idb + 1, &pa);
	t = render(m);
	ck_assert_line(t, "outboxd_test_a 1");
	ck_assert_line(t, "outboxd_test_b 2");
	ck_assert_int_eq(check_families(t), 22 + 4);
	free(t);
	/* The real sections too: each owner may add its own again (a restarted producer does). */
	ck_assert_int_eq(publish_stats_section(m, &kafkasink_kind),
			 publish_stats_section(m, &kafkasink_kind));
	ck_assert_int_eq(metrics_section_add(m, &slotwatch_section),
			 metrics_section_add(m, &slotwatch_section));
	metrics_free(m);
}
END_TEST

START_TEST(test_counters_add_up_gauges_keep_the_last_value_bad_enums_ignored)
{
	struct metrics *m = metrics_new();
	char *t;

	metrics_count(m, METRICS_RECORDS_PUBLISHED, 5);
	metrics_count(m, METRICS_RECORDS_PUBLISHED, 2);
	metrics_count(m, METRICS_RECORDS_ACKNOWLEDGED, 6);
	metrics_count(m, METRICS_TRANSACTIONS, 3);
	metrics_count(m, METRICS_PIPELINE_RESTARTS, 1);
	metrics_count(m, METRICS_STATUS_UPDATES, 9);
	metrics_count(m, METRICS_HEARTBEAT_FAILURES, 2);
	metrics_count(m, METRICS_PRODUCER_FATAL_ERRORS, 1);
	metrics_skipped(m, METRICS_SKIP_UPDATE);
	metrics_skipped(m, METRICS_SKIP_DELETE);
	metrics_skipped(m, METRICS_SKIP_DELETE);
	metrics_skipped(m, METRICS_SKIP_TRUNCATE);
	metrics_skipped(m, METRICS_SKIP_OTHER_TABLE);
	metrics_skipped(m, METRICS_SKIP_OTHER_TABLE);
	metrics_skipped(m, METRICS_SKIP_OTHER_TABLE);
	metrics_gauge(m, METRICS_CONFIRMED_LSN, 0x16B3748);
	metrics_gauge(m, METRICS_RECEIVED_LSN, (int64_t)UINT64_C(0xFFFFFFFF00000000));
	metrics_gauge(m, METRICS_IN_FLIGHT_RECORDS, 1);
	metrics_gauge(m, METRICS_PENDING_TRANSACTIONS, 2);
	metrics_gauge(m, METRICS_PRODUCER_QUEUE_RECORDS, 4);
	/* Out-of-range enums are ignored. */
	metrics_count(m, METRICS_COUNTER_COUNT_, 1);
	metrics_skipped(m, METRICS_SKIP_COUNT_);
	metrics_gauge(m, METRICS_GAUGE_COUNT_, 1);
	t = render(m);
	ck_assert_line(t, "outboxd_records_published_total 7");
	ck_assert_line(t, "outboxd_records_acknowledged_total 6");
	ck_assert_line(t, "outboxd_transactions_total 3");
	ck_assert_line(t, "outboxd_pipeline_restarts_total 1");
	ck_assert_line(t, "outboxd_status_updates_total 9");
	ck_assert_line(t, "outboxd_heartbeat_failures_total 2");
	ck_assert_line(t, "outboxd_producer_fatal_errors_total 1");
	ck_assert_line(t, "outboxd_rows_skipped_total{reason=\"update\"} 1");
	ck_assert_line(t, "outboxd_rows_skipped_total{reason=\"delete\"} 2");
	ck_assert_line(t, "outboxd_rows_skipped_total{reason=\"truncate\"} 1");
	ck_assert_line(t, "outboxd_rows_skipped_total{reason=\"other_table\"} 3");
	ck_assert_line(t, "outboxd_confirmed_lsn 23803720");
	ck_assert_line(t, "outboxd_received_lsn 18446744069414584320");
	ck_assert_line(t, "outboxd_in_flight_records 1");
	ck_assert_line(t, "outboxd_pending_transactions 2");
	ck_assert_line(t, "outboxd_producer_queue_records 4");
	free(t);
	metrics_free(m);
}
END_TEST

START_TEST(test_last_ack_age_counts_from_the_start_of_the_wait)
{
	struct metrics *m = metrics_new();
	int64_t now = 1000000;
	char *t;

	metrics_set_clock(m, fake_clock, &now);
	/* An old report does not count once nothing was awaited: the wait starts in flight. */
	metrics_count(m, METRICS_RECORDS_ACKNOWLEDGED, 1);
	now += 50000000;
	metrics_gauge(m, METRICS_IN_FLIGHT_RECORDS, 3);
	now += 2500000;
	t = render(m);
	ck_assert_line(t, "outboxd_last_ack_age_seconds 2.500");
	free(t);

	metrics_gauge(m, METRICS_IN_FLIGHT_RECORDS, 5); /* no reset while already in flight */
	now += 1000;
	t = render(m);
	ck_assert_line(t, "outboxd_last_ack_age_seconds 2.501");
	free(t);

	metrics_count(m, METRICS_RECORDS_ACKNOWLEDGED, 2);
	metrics_gauge(m, METRICS_IN_FLIGHT_RECORDS, 3);
	now += 125000;
	t = render(m);
	ck_assert_line(t, "outboxd_last_ack_age_seconds 0.125");
	free(t);

	metrics_count(m, METRICS_RECORDS_ACKNOWLEDGED, 0); /* adds nothing, stamps nothing */
	now += 1000000;
	t = render(m);
	ck_assert_line(t, "outboxd_last_ack_age_seconds 1.125");
	free(t);

	metrics_gauge(m, METRICS_IN_FLIGHT_RECORDS, 0);
	t = render(m);
	ck_assert_line(t, "outboxd_last_ack_age_seconds 0.000");
	free(t);

	metrics_set_clock(m, NULL, NULL); /* back to the real clock */
	metrics_free(m);
}
END_TEST

static void
assert_only_state(const char *t, const char *state)
{
	static const char *const all[] = { "starting", "streaming", "restarting", "halted",
					   "stopping" };
	struct buf line = BUF_INIT;

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		buf_reset(&line);
		buf_add_fmt(&line, "outboxd_state{state=\"%s\"} %d", all[i],
			    strcmp(all[i], state) == 0);
		ck_assert_line(t, buf_cstr(&line));
	}
	buf_fini(&line);
}

START_TEST(test_exactly_one_state_series_is_1_after_each_transition)
{
	static const enum metrics_state seq[] = {
		METRICS_STATE_STARTING,	 METRICS_STATE_STREAMING, METRICS_STATE_RESTARTING,
		METRICS_STATE_STREAMING, METRICS_STATE_HALTED,	  METRICS_STATE_STOPPING,
	};
	struct metrics *m = metrics_new();
	char *t;

	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		metrics_set_state(m, seq[i], i % 2 ? "why" : NULL);
		t = render(m);
		assert_only_state(t, metrics_state_name(seq[i]));
		free(t);
	}
	metrics_set_state(m, METRICS_STATE_COUNT_, NULL); /* ignored */
	t = render(m);
	assert_only_state(t, "stopping");
	free(t);
	ck_assert_str_eq(metrics_state_name(METRICS_STATE_HALTED), "halted");
	ck_assert_str_eq(metrics_state_name(METRICS_STATE_COUNT_), "unknown");
	metrics_free(m);
}
END_TEST

START_TEST(test_health_is_200_only_when_streaming_and_not_stalled)
{
	struct metrics *m = metrics_new();
	int status;
	char *j;

	j = health(m, &status);
	ck_assert_int_eq(status, 503);
	ck_assert_str_eq(j, "{\"status\":\"starting\",\"stalled\":false,\"reason\":null}");
	free(j);

	metrics_set_state(m, METRICS_STATE_STREAMING, NULL);
	j = health(m, &status);
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(j, "{\"status\":\"streaming\",\"stalled\":false,\"reason\":null}");
	free(j);

	metrics_set_stalled(m, true, "42 records waiting, no delivery report for 61s");
	j = health(m, &status);
	ck_assert_int_eq(status, 503);
	/* a code, not the watchdog's text (which the watchdog logs) */
	ck_assert_str_eq(j, "{\"status\":\"streaming\",\"stalled\":true,\"reason\":"
			    "\"delivery_stalled\"}");
	free(j);
	j = render(m);
	ck_assert_line(j, "outboxd_stalled 1");
	free(j);

	metrics_set_stalled(m, false, NULL);
	j = health(m, &status);
	ck_assert_int_eq(status, 200);
	free(j);

	metrics_set_state(m, METRICS_STATE_RESTARTING, "broker unreachable");
	j = health(m, &status);
	ck_assert_int_eq(status, 503);
	ck_assert_str_eq(j, "{\"status\":\"restarting\",\"stalled\":false,\"reason\":"
			    "\"session_failed\"}");
	free(j);

	metrics_set_state(m, METRICS_STATE_STOPPING, NULL);
	j = health(m, &status);
	ck_assert_int_eq(status, 503);
	ck_assert_str_eq(j, "{\"status\":\"stopping\",\"stalled\":false,\"reason\":null}");
	free(j);
	metrics_free(m);
}
END_TEST

/* The lag families appear with the first metrics_lag(); the histogram is cumulative. */
START_TEST(test_lag_and_commit_to_ack_histogram)
{
	struct metrics *m = metrics_new();
	char *t = render(m);

	ck_assert_ptr_null(strstr(t, "outboxd_lag_seconds"));
	ck_assert_ptr_null(strstr(t, "outboxd_commit_to_ack_seconds"));
	free(t);
	metrics_observe_ack(m, 800);	  /* <= 1 ms */
	metrics_observe_ack(m, 1000);	  /* <= 1 ms: the bound is inclusive */
	metrics_observe_ack(m, 7000);	  /* <= 10 ms */
	metrics_observe_ack(m, -50);	  /* clock skew: 0 */
	metrics_observe_ack(m, 90000000); /* beyond 60 s: only +Inf */
	metrics_lag(m, 10000000, 7500000, 0);
	t = render(m);
	ck_assert_line(t, "# TYPE outboxd_commit_to_ack_seconds histogram");
	ck_assert_line(t, "outboxd_commit_to_ack_seconds_bucket{le=\"0.001\"} 3");
	ck_assert_line(t, "outboxd_commit_to_ack_seconds_bucket{le=\"0.005\"} 3");
	ck_assert_line(t, "outboxd_commit_to_ack_seconds_bucket{le=\"0.01\"} 4");
	ck_assert_line(t, "outboxd_commit_to_ack_seconds_bucket{le=\"60\"} 4");
	ck_assert_line(t, "outboxd_commit_to_ack_seconds_bucket{le=\"+Inf\"} 5");
	ck_assert_line(t, "outboxd_commit_to_ack_seconds_count 5");
	ck_assert_line(t, "outboxd_commit_to_ack_seconds_sum 90.008");
	ck_assert_line(t, "outboxd_lag_seconds 2.500");
	ck_assert_ptr_null(strstr(t, "outboxd_last_confirmed_commit_timestamp_seconds"));
	free(t);
	metrics_lag(m, 20000000, 0, 1764806400123456);
	t = render(m);
	ck_assert_line(t, "outboxd_lag_seconds 0.000");
	ck_assert_line(t, "outboxd_last_confirmed_commit_timestamp_seconds 1764806400.123");
	free(t);
	metrics_lag(m, 30000000, 0, 0); /* nothing newer confirmed: the last time stays */
	t = render(m);
	ck_assert_line(t, "outboxd_last_confirmed_commit_timestamp_seconds 1764806400.123");
	free(t);
	metrics_free(m);
}
END_TEST

static char *
liveness(const struct metrics *m, int *status)
{
	struct buf b = BUF_INIT;

	*status = metrics_liveness(m, &b);
	return buf_steal(&b);
}

/* Liveness follows the loop's turns alone: restarting or halted is alive, a silent loop is not. */
START_TEST(test_liveness_fails_only_when_the_loop_stops_turning)
{
	struct metrics *m = metrics_new();
	int64_t now = 1000000;
	int status;
	char *j;

	metrics_set_clock(m, fake_clock, &now);
	metrics_set_live_bound(m, 5000);
	metrics_loop_turned(m);
	now += 4999000;
	metrics_set_state(m, METRICS_STATE_RESTARTING, "broker unreachable");
	j = liveness(m, &status);
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(j, "{\"status\":\"live\",\"loop_age_seconds\":4.999,\"reason\":null}");
	free(j);
	now += 1002000;
	j = liveness(m, &status);
	ck_assert_int_eq(status, 503);
	ck_assert_str_eq(
		j, "{\"status\":\"wedged\",\"loop_age_seconds\":6.001,\"reason\":"
		   "\"the main loop has not turned for 6.0 s (outboxd.health.live.ms=5000)\"}");
	free(j);
	metrics_loop_turned(m);
	metrics_set_state(m, METRICS_STATE_HALTED, "poison row");
	j = liveness(m, &status);
	ck_assert_int_eq(status, 200);
	free(j);
	j = health(m, &status); /* readiness is another question */
	ck_assert_int_eq(status, 503);
	free(j);
	metrics_free(m);
}
END_TEST

/*
 * /health answers whoever reaches the port: its reason is a fixed code, never the caller's text
 * (SQL DETAIL lines, row ids), which the callers log. It used to carry that text, escaped.
 */
START_TEST(test_health_reason_is_a_code_never_the_text)
{
	struct metrics *m = metrics_new();
	int status;
	char *j;

	metrics_set_state(m, METRICS_STATE_HALTED,
			  "row \"a\\b\"\n\tat 0/16B3748: caf\xc3\xa9 \x01");
	j = health(m, &status);
	ck_assert_int_eq(status, 503);
	ck_assert_str_eq(j, "{\"status\":\"halted\",\"stalled\":false,\"reason\":\"halted\"}");
	free(j);

	for (int r = 0; r < METRICS_HALT_COUNT_; r++) {
		static const char *const codes[] = { "poison_row", "delivery_refused",
						     "invalid_change", "precondition" };
		struct buf want = BUF_INIT;

		metrics_halted(
			m, (enum metrics_halt_reason)r,
			"row id=7 at 0/16B3748: ERROR: duplicate key\nDETAIL:  Key (id)=(7)");
		j = health(m, &status);
		ck_assert_int_eq(status, 503);
		buf_add_fmt(&want, "{\"status\":\"halted\",\"stalled\":false,\"reason\":\"%s\"}",
			    codes[r]);
		ck_assert_str_eq(j, buf_cstr(&want));
		free(j);
		buf_fini(&want);
	}

	/* While halted the state's reason wins over a stall's. */
	metrics_set_stalled(m, true, "no delivery report for 61 s; the brokers: b1:9092 down");
	j = health(m, &status);
	ck_assert_str_eq(j, "{\"status\":\"halted\",\"stalled\":true,\"reason\":"
			    "\"precondition\"}");
	free(j);

	/* starting after a restart: the restart's code is gone with the state */
	metrics_set_state(m, METRICS_STATE_STARTING, NULL);
	j = health(m, &status);
	ck_assert_str_eq(j, "{\"status\":\"starting\",\"stalled\":true,\"reason\":null}");
	free(j);
	metrics_free(m);
}
END_TEST

START_TEST(test_free_accepts_null)
{
	metrics_free(NULL);
}
END_TEST

#define ROUNDS 20000

static const struct metrics_section writer_section = { "writer", sizeof(struct probe),
						       render_probe };

static void *
writer(void *arg)
{
	struct metrics *m = arg;
	struct probe p = { "writer", 0 };
	int id = metrics_section_add(m, &writer_section);

	for (int i = 0; i < ROUNDS; i++) {
		p.v = i + 1;
		metrics_section_set(m, id, &p);
		metrics_count(m, METRICS_RECORDS_PUBLISHED, 1);
		metrics_count(m, METRICS_RECORDS_ACKNOWLEDGED, 1);
		metrics_skipped(m, (enum metrics_skip_reason)(i % METRICS_SKIP_COUNT_));
		metrics_gauge(m, METRICS_IN_FLIGHT_RECORDS, i % 3);
		metrics_set_state(m, (enum metrics_state)(i % METRICS_STATE_COUNT_),
				  i % 2 ? "reason text" : NULL);
		metrics_set_stalled(m, i % 2, i % 2 ? "stalled" : NULL);
	}
	return NULL;
}

START_TEST(test_concurrent_update_and_render)
{
	struct metrics *m = metrics_new();
	struct buf b = BUF_INIT;
	pthread_t th;
	char *t;

	ck_assert_int_eq(pthread_create(&th, NULL, writer, m), 0);
	for (int i = 0; i < ROUNDS / 10; i++) {
		buf_reset(&b);
		metrics_render(m, &b);
		ck_assert(has_line(buf_cstr(&b), "outboxd_up 1"));
		buf_reset(&b);
		(void)metrics_health(m, &b);
		ck_assert_uint_eq(b.data[0], '{');
	}
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	t = render(m);
	ck_assert_line(t, "outboxd_records_published_total 20000");
	ck_assert_line(t, "outboxd_records_acknowledged_total 20000");
	ck_assert_line(t, "outboxd_rows_skipped_total{reason=\"update\"} 5000");
	ck_assert_line(t, "outboxd_test_writer 20000");
	free(t);
	buf_fini(&b);
	metrics_free(m);
}
END_TEST

static Suite *
metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *render_tc = tcase_create("render");
	TCase *state = tcase_create("state-and-health");
	TCase *threads = tcase_create("threads");
	TCase *registry = tcase_create("registry");

	tcase_add_test(render_tc, test_fresh_metrics_render_zeros_and_the_starting_state);
	tcase_add_test(render_tc, test_every_family_has_help_and_type);
	tcase_add_test(render_tc,
		       test_counters_add_up_gauges_keep_the_last_value_bad_enums_ignored);
	tcase_add_test(render_tc, test_last_ack_age_counts_from_the_start_of_the_wait);
	tcase_add_test(render_tc, test_poll_families_only_for_the_poller);
	tcase_add_test(render_tc, test_every_optional_family_has_help_and_type);
	tcase_add_test(render_tc, test_documented_names_are_rendered);
	tcase_add_test(render_tc, test_lag_and_commit_to_ack_histogram);
	tcase_add_test(
		registry,
		test_sections_render_after_their_first_set_in_registration_order_from_a_copy);
	tcase_add_test(registry, test_a_section_added_twice_keeps_its_first_id_and_renders_once);
	tcase_add_test(state, test_exactly_one_state_series_is_1_after_each_transition);
	tcase_add_test(state, test_health_is_200_only_when_streaming_and_not_stalled);
	tcase_add_test(state, test_health_reason_is_a_code_never_the_text);
	tcase_add_test(state, test_liveness_fails_only_when_the_loop_stops_turning);
	tcase_add_test(state, test_free_accepts_null);
	tcase_add_test(threads, test_concurrent_update_and_render);
	tcase_set_timeout(threads, 30);
	suite_add_tcase(s, render_tc);
	suite_add_tcase(s, state);
	suite_add_tcase(s, threads);
	suite_add_tcase(s, registry);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(metrics_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
