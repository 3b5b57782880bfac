/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/obs/metrics.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/mem.h"
#include "outboxd/util/now.h"
#include "outboxd/util/prom.h"
#include "outboxd/util/version.h"

/* The commit-to-acknowledgement histogram's upper bounds (1 ms to 60 s), and their labels. */
static const int64_t ack_bounds_us[] = { 1000,	  2500,	   5000,     10000,    25000,
					 50000,	  100000,  250000,   500000,   1000000,
					 2500000, 5000000, 10000000, 30000000, 60000000 };
static const char *const ack_le[] = { "0.001", "0.0025", "0.005", "0.01", "0.025",
				      "0.05",  "0.1",	 "0.25",  "0.5",  "1",
				      "2.5",   "5",	 "10",	  "30",	  "60" };
#define ACK_BUCKETS (sizeof(ack_bounds_us) / sizeof(ack_bounds_us[0]))

/* What one rendering needs, copied under the lock so formatting happens outside it. */
struct snapshot {
	uint64_t counters[METRICS_COUNTER_COUNT_];
	uint64_t skipped[METRICS_SKIP_COUNT_];
	uint64_t halts[METRICS_HALT_COUNT_];
	int64_t gauges[METRICS_GAUGE_COUNT_];
	int64_t last_ack_us; /* last delivery report, or the moment something went in flight */
	enum metrics_state state;
	bool stalled;
	/* the relay's commit-time view (metrics_observe_ack, metrics_lag) */
	uint64_t ack_buckets[ACK_BUCKETS]; /* per bucket, not cumulative */
	uint64_t ack_count;
	int64_t ack_sum_us;
	bool lag_known;
	int64_t lag_us, confirmed_commit_us;
};

/* A registered section (metrics_section_add) and its figures as last set. */
struct section {
	struct metrics_section s; /* the name owned */
	void *data;		  /* owned: s.size bytes; NULL until the first set */
	int64_t set_us;
};

struct metrics {
	pthread_mutex_t lock; /* guards everything below */
	struct snapshot v;
	struct section *sections; /* owned; in the order of registration */
	int nsections;
	const char
		*state_code; /* static storage: /health's reason while not streaming; NULL none */
	metrics_clock now_us;
	void *clock_arg;
	/* outside the lock: stamped on every turn of the main loop */
	_Atomic int64_t turned_us;
	_Atomic int64_t live_bound_us;
};

static const char *const counter_names[METRICS_COUNTER_COUNT_][2] = {
	[METRICS_RECORDS_PUBLISHED] = { "outboxd_records_published_total",
					"Records handed to the Kafka producer." },
	[METRICS_RECORDS_ACKNOWLEDGED] = { "outboxd_records_acknowledged_total",
					   "Records the broker acknowledged (successful delivery "
					   "reports)." },
	[METRICS_TRANSACTIONS] = { "outboxd_transactions_total",
				   "Transaction commits received from PostgreSQL." },
	[METRICS_PIPELINE_RESTARTS] = { "outboxd_pipeline_restarts_total",
					"Pipeline restarts from the replication slot." },
	[METRICS_STATUS_UPDATES] = { "outboxd_status_updates_total",
				     "Standby status updates sent to PostgreSQL." },
	[METRICS_HEARTBEAT_FAILURES] = { "outboxd_heartbeat_failures_total",
					 "Heartbeat records the broker refused (they confirm "
					 "nothing; see the log)." },
	[METRICS_CLEANUP_DELETED] = { "outboxd_cleanup_rows_deleted_total",
				      "Confirmed outbox rows the cleanup deleted "
				      "(outboxd.cleanup.retention)." },
	[METRICS_CLEANUP_PARTITIONS] = { "outboxd_cleanup_partitions_total",
					 "Outbox partitions the cleanup dropped or detached "
					 "(outboxd.cleanup.partitions)." },
	[METRICS_DEAD_LETTERS] = { "outboxd_dead_letter_records_total",
				   "Poison rows produced to the dead-letter topic "
				   "(outboxd.errors.deadletterqueue.topic.name)." },
	[METRICS_PRODUCER_FATAL_ERRORS] = { "outboxd_producer_fatal_errors_total",
					    "Fatal errors librdkafka raised (each ends its "
					    "producer), including one raised while a restart "
					    "discarded a producer with records in flight." },
};

static const char *const skip_names[METRICS_SKIP_COUNT_] = {
	[METRICS_SKIP_UPDATE] = "update",
	[METRICS_SKIP_DELETE] = "delete",
	[METRICS_SKIP_TRUNCATE] = "truncate",
	[METRICS_SKIP_OTHER_TABLE] = "other_table",
};

static const char *const halt_names[METRICS_HALT_COUNT_] = {
	[METRICS_HALT_POISON_ROW] = "poison_row",
	[METRICS_HALT_DELIVERY_REFUSED] = "delivery_refused",
	[METRICS_HALT_INVALID_CHANGE] = "invalid_change",
	[METRICS_HALT_PRECONDITION] = "precondition",
};

static const char *const gauge_names[METRICS_GAUGE_COUNT_][2] = {
	[METRICS_CONFIRMED_LSN] = { "outboxd_confirmed_lsn",
				    "LSN last confirmed to the replication slot, as a number." },
	[METRICS_RECEIVED_LSN] = { "outboxd_received_lsn",
				   "Highest LSN received from PostgreSQL, as a number." },
	[METRICS_IN_FLIGHT_RECORDS] = { "outboxd_in_flight_records",
					"Records produced whose delivery report is awaited." },
	[METRICS_PENDING_TRANSACTIONS] = { "outboxd_pending_transactions",
					   "Transactions received and not yet confirmable." },
	[METRICS_PRODUCER_QUEUE_RECORDS] = { "outboxd_producer_queue_records",
					     "Records in the Kafka producer's queue." },
};

static const char *const state_names[METRICS_STATE_COUNT_] = {
	[METRICS_STATE_STARTING] = "starting",	   [METRICS_STATE_STREAMING] = "streaming",
	[METRICS_STATE_RESTARTING] = "restarting", [METRICS_STATE_HALTED] = "halted",
	[METRICS_STATE_STOPPING] = "stopping",
};

/*
 * /health's reason for a state entered with a reason but no halt reason of its own: the codes
 * are fixed tokens because /health answers whoever reaches the port, and the caller's text
 * (SQL DETAIL lines, row ids, broker names) is for the log, where every caller writes it.
 */
static const char *const state_codes[METRICS_STATE_COUNT_] = {
	[METRICS_STATE_STARTING] = "starting",	       [METRICS_STATE_STREAMING] = NULL,
	[METRICS_STATE_RESTARTING] = "session_failed", [METRICS_STATE_HALTED] = "halted",
	[METRICS_STATE_STOPPING] = "stopping",
};

/* /health's reason while streaming and stalled (the stall watchdog's verdict). */
#define STALL_CODE "delivery_stalled"

static int64_t
monotonic_us(void *arg)
{
	return now_monotonic_us();
}

/* The mutex is the one part of a const metrics that changes; the object is never const-made. */
static struct metrics *
lock(const struct metrics *m)
{
	struct metrics *w = (struct metrics *)m;

	pthread_mutex_lock(&w->lock);
	return w;
}

static void
unlock(struct metrics *m)
{
	pthread_mutex_unlock(&m->lock);
}

struct metrics *
metrics_new(void)
{
	struct metrics *m = znew(*m);

	pthread_mutex_init(&m->lock, NULL);
	m->now_us = monotonic_us;
	m->v.state = METRICS_STATE_STARTING;
	m->v.last_ack_us = m->now_us(NULL);
	atomic_store(&m->turned_us, m->v.last_ack_us);
	atomic_store(&m->live_bound_us, INT64_C(120000) * 1000);
	return m;
}

void
metrics_free(struct metrics *m)
{
	if (!m) {
		return;
	}
	pthread_mutex_destroy(&m->lock);
	for (int i = 0; i < m->nsections; i++) {
		free((char *)m->sections[i].s.name);
		free(m->sections[i].data);
	}
	free(m->sections);
	free(m);
}

void
metrics_set_clock(struct metrics *m, metrics_clock now_us, void *arg)
{
	lock(m);
	m->now_us = now_us ? now_us : monotonic_us;
	m->clock_arg = now_us ? arg : NULL;
	unlock(m);
}

void
metrics_count(struct metrics *m, enum metrics_counter c, uint64_t n)
{
	if ((unsigned)c >= METRICS_COUNTER_COUNT_) {
		return;
	}
	lock(m);
	m->v.counters[c] += n;
	if (c == METRICS_RECORDS_ACKNOWLEDGED && n) {
		m->v.last_ack_us = m->now_us(m->clock_arg);
	}
	unlock(m);
}

void
metrics_skipped(struct metrics *m, enum metrics_skip_reason reason)
{
	if ((unsigned)reason >= METRICS_SKIP_COUNT_) {
		return;
	}
	lock(m);
	m->v.skipped[reason]++;
	unlock(m);
}

void
metrics_gauge(struct metrics *m, enum metrics_gauge g, int64_t v)
{
	if ((unsigned)g >= METRICS_GAUGE_COUNT_) {
		return;
	}
	lock(m);
	/* Nothing was awaited before, so the wait starts now, not at the last (old) report. */
	if (g == METRICS_IN_FLIGHT_RECORDS && m->v.gauges[g] <= 0 && v > 0) {
		m->v.last_ack_us = m->now_us(m->clock_arg);
	}
	m->v.gauges[g] = v;
	unlock(m);
}

void
metrics_set_state(struct metrics *m, enum metrics_state state, const char *reason)
{
	if ((unsigned)state >= METRICS_STATE_COUNT_) {
		return;
	}
	lock(m);
	m->v.state = state;
	m->state_code = reason ? state_codes[state] : NULL;
	unlock(m);
}

void
metrics_halted(struct metrics *m, enum metrics_halt_reason reason, const char *why)
{
	(void)why; /* the caller's to log: see state_codes */
	if ((unsigned)reason >= METRICS_HALT_COUNT_) {
		return;
	}
	lock(m);
	m->v.halts[reason]++;
	m->v.state = METRICS_STATE_HALTED;
	m->state_code = halt_names[reason];
	unlock(m);
}

enum metrics_state
metrics_state(const struct metrics *m)
{
	struct metrics *w = lock(m);
	enum metrics_state s = w->v.state;

	unlock(w);
	return s;
}

void
metrics_set_stalled(struct metrics *m, bool stalled, const char *reason)
{
	lock(m);
	(void)reason; /* the watchdog logs it: see state_codes */
	m->v.stalled = stalled;
	unlock(m);
}

int
metrics_section_add(struct metrics *m, const struct metrics_section *s)
{
	int id;

	lock(m);
	for (id = 0; id < m->nsections; id++) {
		if (strcmp(m->sections[id].s.name, s->name) == 0) {
			unlock(m);
			return id;
		}
	}
	m->sections = xrealloc(m->sections, (size_t)(id + 1) * sizeof(*m->sections));
	m->sections[id] = (struct section){ .s = *s };
	m->sections[id].s.name = xstrdup(s->name);
	m->nsections++;
	unlock(m);
	return id;
}

void
metrics_section_set(struct metrics *m, int id, const void *data)
{
	struct section *sec;

	lock(m);
	if (id >= 0 && id < m->nsections) {
		sec = &m->sections[id];
		if (!sec->data) {
			sec->data = xmalloc(sec->s.size ? sec->s.size : 1);
		}
		memcpy(sec->data, data, sec->s.size);
		sec->set_us = m->now_us(m->clock_arg);
	}
	unlock(m);
}

int64_t
metrics_now_us(const struct metrics *m)
{
	struct metrics *w = lock(m);
	int64_t now = w->now_us(w->clock_arg);

	unlock(w);
	return now;
}

const char *
metrics_state_name(enum metrics_state state)
{
	return (unsigned)state < METRICS_STATE_COUNT_ ? state_names[state] : "unknown";
}

static void
render_counters(const struct snapshot *s, struct buf *out)
{
	for (int i = 0; i < METRICS_COUNTER_COUNT_; i++) {
		prom_family(out, counter_names[i][0], "counter", counter_names[i][1]);
		buf_add_fmt(out, "%s %" PRIu64 "\n", counter_names[i][0], s->counters[i]);
	}
	prom_family(out, "outboxd_rows_skipped_total", "counter",
		    "Rows received that published nothing, by reason.");
	for (int i = 0; i < METRICS_SKIP_COUNT_; i++) {
		buf_add_fmt(out, "outboxd_rows_skipped_total{reason=\"%s\"} %" PRIu64 "\n",
			    skip_names[i], s->skipped[i]);
	}
	prom_family(
		out, "outboxd_halts_total", "counter",
		"Halts, by reason (with outboxd.halt.stay=true the process stays up after one).");
	for (int i = 0; i < METRICS_HALT_COUNT_; i++) {
		buf_add_fmt(out, "outboxd_halts_total{reason=\"%s\"} %" PRIu64 "\n", halt_names[i],
			    s->halts[i]);
	}
}

static void
render_gauges(const struct snapshot *s, int64_t now, struct buf *out)
{
	int64_t age = 0;

	for (int i = 0; i < METRICS_GAUGE_COUNT_; i++) {
		prom_family(out, gauge_names[i][0], "gauge", gauge_names[i][1]);
		if (i == METRICS_CONFIRMED_LSN || i == METRICS_RECEIVED_LSN) {
			buf_add_fmt(out, "%s %" PRIu64 "\n", gauge_names[i][0],
				    (uint64_t)s->gauges[i]);
		} else {
			buf_add_fmt(out, "%s %" PRId64 "\n", gauge_names[i][0], s->gauges[i]);
		}
	}
	if (s->gauges[METRICS_IN_FLIGHT_RECORDS] > 0 && now > s->last_ack_us) {
		age = now - s->last_ack_us;
	}
	prom_family(
		out, "outboxd_last_ack_age_seconds", "gauge",
		"Seconds since the last delivery report while records are in flight; 0 otherwise.");
	prom_seconds_ms(out, "outboxd_last_ack_age_seconds", age);
	prom_family(out, "outboxd_stalled", "gauge",
		    "1 while records wait without delivery progress (outboxd.stall.warn.ms).");
	buf_add_fmt(out, "outboxd_stalled %d\n", s->stalled ? 1 : 0);
}

/* The relay's lag and latency, from PostgreSQL's commit times (`outboxd run` only). */
static void
render_lag(const struct snapshot *s, struct buf *out)
{
	uint64_t cum = 0;

	if (!s->lag_known) {
		return;
	}
	prom_family(
		out, "outboxd_lag_seconds", "gauge",
		"Age of the oldest transaction received and not yet confirmed (by its commit time); "
		"0 when none is pending.");
	prom_seconds_ms(out, "outboxd_lag_seconds", s->lag_us);
	if (s->confirmed_commit_us) {
		prom_family(
			out, "outboxd_last_confirmed_commit_timestamp_seconds", "gauge",
			"Commit time (Unix seconds) of the newest transaction confirmed to the slot.");
		prom_seconds_ms(out, "outboxd_last_confirmed_commit_timestamp_seconds",
				s->confirmed_commit_us);
	}
	prom_family(out, "outboxd_commit_to_ack_seconds", "histogram",
		    "Per record: the transaction's commit time to the broker's delivery report.");
	for (size_t b = 0; b < ACK_BUCKETS; b++) {
		cum += s->ack_buckets[b];
		buf_add_fmt(out, "outboxd_commit_to_ack_seconds_bucket{le=\"%s\"} %" PRIu64 "\n",
			    ack_le[b], cum);
	}
	buf_add_fmt(out, "outboxd_commit_to_ack_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n",
		    s->ack_count);
	prom_seconds_ms(out, "outboxd_commit_to_ack_seconds_sum", s->ack_sum_us);
	buf_add_fmt(out, "outboxd_commit_to_ack_seconds_count %" PRIu64 "\n", s->ack_count);
}

static void
render_info(const struct snapshot *s, struct buf *out)
{
	prom_family(out, "outboxd_up", "gauge", "1 while the process runs.");
	buf_add_str(out, "outboxd_up 1\n");
	prom_family(out, "outboxd_state", "gauge", "1 for the relay's current state.");
	for (int i = 0; i < METRICS_STATE_COUNT_; i++) {
		buf_add_fmt(out, "outboxd_state{state=\"%s\"} %d\n", state_names[i],
			    (int)s->state == i ? 1 : 0);
	}
	prom_family(out, "outboxd_build_info", "gauge", "outboxd's version, as a label.");
	buf_add_str(out, "outboxd_build_info{version=\"");
	prom_label_value(out, version_string());
	buf_add_str(out, "\"} 1\n");
}

/*
 * The sections set so far, each with a copy of its figures, taken under the lock so that
 * rendering (the sections' own code) runs outside it. Caller frees the array and each data.
 */
static struct section *
sections_copy(const struct metrics *m, int *n)
{
	struct section *c = xcalloc((size_t)m->nsections + 1, sizeof(*c));

	*n = 0;
	for (int i = 0; i < m->nsections; i++) {
		const struct section *sec = &m->sections[i];

		if (!sec->data) {
			continue;
		}
		c[*n] = *sec;
		c[*n].data = xmalloc(sec->s.size ? sec->s.size : 1);
		memcpy(c[*n].data, sec->data, sec->s.size);
		(*n)++;
	}
	return c;
}

void
metrics_render(const struct metrics *m, struct buf *out)
{
	struct metrics *w = lock(m);
	struct snapshot s = w->v;
	int64_t now = w->now_us(w->clock_arg);
	int nsec = 0;
	struct section *sec = sections_copy(w, &nsec);

	unlock(w);
	render_counters(&s, out);
	render_gauges(&s, now, out);
	render_lag(&s, out);
	for (int i = 0; i < nsec; i++) {
		sec[i].s.render(sec[i].data, now, sec[i].set_us, out);
		free(sec[i].data);
	}
	free(sec);
	render_info(&s, out);
}

void
metrics_observe_ack(struct metrics *m, int64_t us)
{
	size_t b = 0;

	us = us > 0 ? us : 0;
	while (b < ACK_BUCKETS && us > ack_bounds_us[b]) {
		b++;
	}
	lock(m);
	if (b < ACK_BUCKETS) {
		m->v.ack_buckets[b]++;
	}
	m->v.ack_count++;
	m->v.ack_sum_us += us;
	unlock(m);
}

void
metrics_lag(struct metrics *m, int64_t now_unix_us, int64_t oldest_commit_us,
	    int64_t confirmed_commit_us)
{
	lock(m);
	m->v.lag_known = true;
	m->v.lag_us = oldest_commit_us && now_unix_us > oldest_commit_us ?
			      now_unix_us - oldest_commit_us :
			      0;
	if (confirmed_commit_us) {
		m->v.confirmed_commit_us = confirmed_commit_us;
	}
	unlock(m);
}

void
metrics_loop_turned(struct metrics *m)
{
	atomic_store_explicit(&m->turned_us, m->now_us(m->clock_arg), memory_order_relaxed);
}

void
metrics_set_live_bound(struct metrics *m, int64_t ms)
{
	atomic_store(&m->live_bound_us, ms * 1000);
}

int
metrics_liveness(const struct metrics *m, struct buf *out)
{
	struct metrics *w = lock(m);
	int64_t now = w->now_us(w->clock_arg);

	unlock(w);
	{
		int64_t age = now - atomic_load(&w->turned_us);
		int64_t bound = atomic_load(&w->live_bound_us);
		bool live = age <= bound;

		buf_add_fmt(out, "{\"status\":\"%s\",\"loop_age_seconds\":%.3f,\"reason\":",
			    live ? "live" : "wedged", (double)(age > 0 ? age : 0) / 1e6);
		if (live) {
			buf_add_str(out, "null}");
		} else {
			buf_add_fmt(out,
				    "\"the main loop has not turned for %.1f s "
				    "(outboxd.health.live.ms=%lld)\"}",
				    (double)age / 1e6, (long long)(bound / 1000));
		}
		return live ? 200 : 503;
	}
}

int
metrics_health(const struct metrics *m, struct buf *out)
{
	struct metrics *w = lock(m);
	enum metrics_state state = w->v.state;
	bool stalled = w->v.stalled;
	const char *reason = NULL;

	if (state != METRICS_STATE_STREAMING) {
		reason = w->state_code;
	} else if (stalled) {
		reason = STALL_CODE;
	}
	unlock(w);

	buf_add_fmt(out, "{\"status\":\"%s\",\"stalled\":%s,\"reason\":", state_names[state],
		    stalled ? "true" : "false");
	if (reason) {
		buf_add_fmt(out, "\"%s\"}", reason);
	} else {
		buf_add_str(out, "null}");
	}
	return state == METRICS_STATE_STREAMING && !stalled ? 200 : 503;
}
