/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/poll/poll.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgconn.h"
#include "outboxd/pg/pgsql.h"
#include "outboxd/pipeline/publish.h"
#include "outboxd/pipeline/sinks.h"
#include "outboxd/pipeline/stall.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/failpoint.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/now.h"
#include "poll_int.h"

#define MOD "poll"

/* The stall watchdog looks this often. */
#define WATCHDOG_US INT64_C(1000000)

/* The longest a failing side job (the count, the cleanup) waits between attempts. */
#define UPKEEP_BACKOFF_MAX_US (INT64_C(5) * 60 * 1000000)

static void
on_produced(void *opaque, uint64_t token)
{
	struct poller *s = opaque;

	s->rows[token - 1].produced = true;
	s->produced++;
#ifdef OUTBOXD_TEST_CONFIRM_AT_PRODUCE
	/*
	 * The fault suite's mutant (outboxd-mutant, tests/fault/meson.build), never in outboxd: a
	 * row counts as acknowledged once the producer took it, so it is marked before the broker
	 * has it. The checker must catch this (a mark before the append, or a lost row).
	 */
	s->rows[token - 1].acked = true;
	s->reported++;
	s->acked++;
#endif
}

static void
on_delivery(void *opaque, uint64_t token, bool ok, const char *reason)
{
	struct poller *s = opaque;

#ifdef OUTBOXD_TEST_CONFIRM_AT_PRODUCE
	return; /* counted at produce time */
#endif
	s->reported++;
	s->acked += ok;
	s->rows[token - 1].acked = ok;
	if (!ok && !s->fail_id) {
		s->fail_id = xstrdup(s->rows[token - 1].id);
		errbuf_set(s->why, sizeof(s->why), "delivery failed for row id=%s of %s: %s",
			   s->rows[token - 1].id,
			   buf_cstr(&s->tables[s->rows[token - 1].table].name),
			   reason ? reason : "unknown");
	}
}

/*
 * Once a second (periodic_step_fn), also while a cycle waits for its reports: the stall
 * watchdog (the one `outboxd run` has).
 */
static enum outcome
watchdog(void *arg, int64_t now, enum periodic_left *ret_left)
{
	struct poller *s = arg;
	char broker[512];
	struct stall_view v = { .now_us = now, .warn_ms = s->cfg->stall_warn_ms };

	*ret_left = PERIODIC_DONE;
	if (!s->pub) {
		return OUTCOME_OK;
	}
	v.waiting = s->produced - s->reported + (publish_waiting(s->pub) ? 1 : 0);
	v.progress = s->acked != s->tick_acked;
	v.queue_len = publish_queue_len(s->pub);
	v.broker = publish_broker_state(s->pub, now, broker, sizeof(broker)) ? broker : NULL;
	s->tick_acked = s->acked;
	stall_check(s->stall, &v, s->p->metrics);
	metrics_gauge(s->p->metrics, METRICS_IN_FLIGHT_RECORDS, (int64_t)v.waiting);
	metrics_gauge(s->p->metrics, METRICS_PRODUCER_QUEUE_RECORDS, v.queue_len);
	return OUTCOME_OK;
}

/*
 * Notifications libpq has read (during any statement, too): s->notified, until the next cycle
 * starts. Kept, not dropped, so a NOTIFY that arrives while a cycle is running wakes the next
 * one instead of waiting for outboxd.poll.interval.ms.
 */
static void
take_notifies(struct poller *s)
{
	PGnotify *n;

	while ((n = PQnotifies(s->sql)) != NULL) {
		s->notified = true;
		PQfreemem(n);
	}
}

/* Waits at most @us for delivery reports, a notification or a signal. */
static enum outcome
wait_events(struct poller *s, int64_t us)
{
	struct loop_wait w = { .source_fd = PQsocket(s->sql),
			       .source_read = true,
			       .wake_fd = s->pub ? publish_wake_fd(s->pub) : -1,
			       .max_us = us };
	int64_t watch;
	enum outcome o = periodic_run_job(&s->jobs, JOB_WATCHDOG);

	if (o != OUTCOME_OK) {
		return o;
	}
	/* the watchdog keeps its cadence through the waits within a cycle too */
	if ((watch = periodic_job_next_us(&s->jobs, JOB_WATCHDOG)) != 0) {
		watch -= now_monotonic_us();
		w.max_us = watch < w.max_us ? (watch > 0 ? watch : 0) : w.max_us;
	}
	if (s->claim_until) {
		int64_t left = s->claim_until - now_monotonic_us();

		w.max_us = left < w.max_us ? (left > 0 ? left : 0) : w.max_us;
	}
	if (loop_wait(s->p->loop, &w, s->why, sizeof(s->why)) < 0) {
		return OUTCOME_HALT;
	}
	if (s->p->loop->stopping) {
		return OUTCOME_STOP;
	}
	if (w.source_ready && !PQconsumeInput(s->sql)) {
		pgconn_error_line(s->sql, s->why, sizeof(s->why));
		return OUTCOME_RESTART;
	}
	take_notifies(s);
	o = publish_serve(s->pub, s->why, sizeof(s->why));
	return o == OUTCOME_OK ? poll_claim_check(s) : o;
}

/* One fetched row through the publish path, waiting for queue space. */
static enum outcome
publish_fetched(struct poller *s, PGresult *r, int row, int ti, int part, struct pgoutput_col *cols)
{
	const struct poll_table *t = &s->tables[ti];
	struct pgoutput_tuple tup = { .ncols = t->rel->ncols, .cols = cols };
	struct publish_row pr = { .rel = t->rel,
				  .notnull = t->notnull,
				  .defaults = (const char *const *)t->defaults,
				  .op = 'I', /* the records of `outboxd run`, which sees INSERTs */
				  .tup = &tup,
				  .where = buf_cstr(&t->where) };
	struct poll_pending *pe;
	struct buf id = BUF_INIT;
	enum outcome o;

	for (int c = 0; c < t->rel->ncols; c++) {
		bool null = PQgetisnull(r, row, c);

		cols[c].kind = null ? 'n' : 't';
		cols[c].value = null ? SLICE_NULL :
				       (struct slice){ PQgetvalue(r, row, c),
						       (size_t)PQgetlength(r, row, c) };
	}
	if (s->nrows == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->rows = xrealloc(s->rows, s->cap * sizeof(*s->rows));
	}
	router_row_id(s->p->router, t->rel, &tup, &id);
	pe = &s->rows[s->nrows++];
	*pe = (struct poll_pending){
		.table = ti, .part = part, .id = buf_steal(&id), .key = poll_key_of(t, r, row)
	};
	o = publish_row(s->pub, &pr, s->nrows, s->why, sizeof(s->why));
	while (o == OUTCOME_OK && publish_waiting(s->pub)) {
		if ((o = wait_events(s, 100000)) == OUTCOME_OK) {
			o = publish_retry(s->pub, s->why, sizeof(s->why));
		}
	}
	pe = &s->rows[s->nrows - 1];
	if (o == OUTCOME_OK && !pe->produced) {
		pe->acked = true; /* the verdict publishes nothing: nothing to wait for */
	}
	if (o != OUTCOME_OK && !pe->produced) {
		s->nrows--; /* a poison row that halts, or a refusal: never marked */
		free(pe->id);
		free(pe->key);
	}
	return o;
}

/* one flush's bound while a cycle waits: how soon a stop or a NOTIFY is seen meanwhile */
#define AWAIT_FLUSH_SLICE_MS 100

/* Waits until every produced row has its report; a stop flushes for a bounded time. */
static enum outcome
await_reports(struct poller *s)
{
	enum outcome o = OUTCOME_OK;

	while (o == OUTCOME_OK && s->reported < s->produced) {
		/*
		 * The cycle's batch is complete: no record joins it before its reports are in, so
		 * lingering for more (linger.ms) would only add that delay to every row. librdkafka
		 * ignores linger.ms only while a flush is under way, so a bounded flush (which also
		 * serves the reports) comes before each wait for the loop's other events.
		 */
		(void)publish_flush(s->pub, AWAIT_FLUSH_SLICE_MS);
		o = wait_events(s, 0);
	}
	if (o == OUTCOME_STOP && publish_flush(s->pub, s->cfg->shutdown_flush_ms) < 0) {
		log_warn(MOD,
			 "%d records still unacknowledged after %lld ms; their rows stay "
			 "unpublished and are published again at the next start",
			 publish_queue_len(s->pub), (long long)s->cfg->shutdown_flush_ms);
	}
	return o;
}

/* The owned partitions of @t as an int[] literal. */
static void
owned_array(const struct poller *s, const struct poll_table *t, struct buf *owned)
{
	buf_add_char(owned, '{');
	for (int p = 0; p < s->cfg->poll_partitions; p++) {
		if (t->owned[p]) {
			buf_add_fmt(owned, "%s%d", owned->len > 1 ? "," : "", p);
		}
	}
	buf_add_char(owned, '}');
}

/*
 * Table @ti's batch read and published, chunk by chunk (each chunk's result freed once its
 * rows are in the producer). @ret_more: rows may be left.
 */
static enum outcome
publish_table(struct poller *s, int ti, bool *ret_more)
{
	const struct poll_table *t = &s->tables[ti];
	struct buf owned = BUF_INIT;
	int64_t max = s->cfg->poll_batch_size;
	struct poll_batch b;
	struct pgoutput_col *cols;
	enum outcome o;

	if (!s->unordered && !t->nowned) {
		return OUTCOME_OK;
	}
	if (!s->unordered) {
		owned_array(s, t, &owned);
		max *= t->nowned; /* batch.size rows per owned partition */
	}
	o = poll_batch_read(s, ti, s->unordered ? NULL : buf_cstr(&owned), max, &b);
	buf_fini(&owned);
	*ret_more |= b.more;
	cols = xcalloc((size_t)t->rel->ncols + 1, sizeof(*cols));
	for (int k = 0; k < b.nres && o == OUTCOME_OK; k++) {
		PGresult *r = b.res[k];

		for (int i = 0; i < PQntuples(r) && o == OUTCOME_OK && !s->claim_released; i++) {
			int part = s->unordered ? 0 : atoi(PQgetvalue(r, i, t->rel->ncols));

			o = publish_fetched(s, r, i, ti, part, cols);
		}
		PQclear(r);
		b.res[k] = NULL;
	}
	*ret_more |= s->claim_released; /* the rows not produced are read again */
	free(cols);
	poll_batch_free(&b);
	return o;
}

/*
 * One cycle: a batch of every owned partition, oldest unpublished first; their reports; the
 * marking. @ret_more: a batch was cut by its bounds, so poll again at once.
 */
static enum outcome
cycle(struct poller *s, bool *ret_more)
{
	enum outcome o = OUTCOME_OK, m;
	bool failed_delivery;

	*ret_more = false;
	take_notifies(s);
	s->notified = false; /* what is notified from here on may be after this cycle's reads */
	s->claim_released = false;
	if (s->unordered) {
		/* the claim's row locks last until the COMMIT after the marking, or its timeout */
		o = poll_exec(s, "BEGIN", 0, NULL, "starting the claim's transaction", NULL);
		s->claim_until = now_monotonic_us() + s->cfg->poll_claim_timeout_ms * 1000;
	}
	for (int ti = 0; ti < s->ntables && o == OUTCOME_OK && !s->claim_released; ti++) {
		o = publish_table(s, ti, ret_more);
	}
	/* What was produced before a halt or a failure is delivered and marked first. */
	m = await_reports(s);
	if (s->nrows) {
		failpoint_hit(FAILPOINT_POLL_BEFORE_MARK);
	}
	failed_delivery = false;
	for (size_t i = 0; i < s->nrows; i++) {
		failed_delivery |= !s->rows[i].acked;
	}
	s->claim_until = 0;
	if (m == OUTCOME_OK || m == OUTCOME_STOP) {
		enum outcome mk = poll_mark_acked(s);

		if (mk == OUTCOME_OK && s->unordered &&
		    PQtransactionStatus(s->sql) == PQTRANS_INTRANS) {
			mk = poll_exec(s, "COMMIT", 0, NULL, "committing the marks", NULL);
		}
		m = mk == OUTCOME_OK ? m : mk;
	}
	poll_mark_forget(s);
	if (o == OUTCOME_OK) {
		o = m;
	}
	if (o == OUTCOME_OK && failed_delivery) {
		o = OUTCOME_RESTART; /* the reason is in s->why: read again from the oldest */
	}
	return o;
}

void
poll_session_close(struct poller *s, enum publish_end end)
{
	publish_free(s->pub, end);
	PQfinish(s->sql); /* ends the session: its advisory locks go with it */
	poll_tables_free(s);
	relcache_free(s->rc, NULL);
	for (size_t i = 0; i < s->nrows; i++) {
		free(s->rows[i].id);
		free(s->rows[i].key);
	}
	free(s->rows);
	free(s->fail_id);
}

enum outcome
poll_session_prepare(struct poller *s)
{
	const struct config *cfg = s->cfg;
	enum pgconn_failure f = PGCONN_TRANSIENT;
	int rc;

	s->rc = relcache_new();
	s->stage = "postgresql";
	if (pgconn_open(&cfg->pg_conn, false, &s->sql, &f, s->why, sizeof(s->why)) < 0) {
		return f == PGCONN_PRECONDITION ? OUTCOME_PRECONDITION : OUTCOME_RESTART;
	}
	if ((rc = pgconn_run_statements(s->sql, cfg->database_initial_statements, s->why,
					sizeof(s->why))) < 0) {
		return rc == -EIO ? OUTCOME_RESTART : OUTCOME_PRECONDITION;
	}
	return poll_tables_find(s);
}

/* Connects, finds and describes the tables, listens. */
static enum outcome
session_open(struct poller *s)
{
	const struct config *cfg = s->cfg;
	struct publish_source src = { .on_produced = on_produced,
				      .on_delivery = on_delivery,
				      .opaque = s };
	struct buf listen = BUF_INIT;
	enum outcome o;

	if ((o = poll_session_prepare(s)) != OUTCOME_OK) {
		return o;
	}
	buf_add_str(&listen, "LISTEN ");
	poll_add_ident(s, &listen, cfg->poll_notify_channel);
	o = poll_exec(s, buf_cstr(&listen), 0, NULL, "LISTEN", NULL);
	buf_fini(&listen);
	if (o != OUTCOME_OK) {
		return o;
	}
	if (publish_new(&s->pp, &src, &s->pub, s->why, sizeof(s->why)) < 0) {
		return OUTCOME_PRECONDITION;
	}
	if (s->poison_id && *s->poison_id) {
		publish_set_poison(s->pub, 0, s->poison_id, s->poison_reason);
	}
	if (s->unordered) {
		log_info(
			MOD,
			"polling %s (unordered: batches claimed with FOR UPDATE SKIP LOCKED, no "
			"per-aggregate order; every %lld ms or on NOTIFY %s; after publishing: %s)",
			buf_cstr(&s->names), (long long)cfg->poll_interval_ms,
			cfg->poll_notify_channel, cfg->poll_after);
	} else {
		log_info(MOD,
			 "polling %s (ordered, %lld partitions by hashtext(key), every %lld ms or "
			 "on NOTIFY %s; after publishing: %s)",
			 buf_cstr(&s->names), (long long)cfg->poll_partitions,
			 (long long)cfg->poll_interval_ms, cfg->poll_notify_channel,
			 cfg->poll_after);
	}
	metrics_set_state(s->p->metrics, METRICS_STATE_STREAMING, NULL);
	poll_metrics_partitions(s->pm, 0);
	return OUTCOME_OK;
}

/* One cycle (periodic_step_fn): a full batch polls again at the next turn, without a wait. */
static enum outcome
poll_cycle(void *arg, int64_t now, enum periodic_left *ret_left)
{
	struct poller *s = arg;
	bool more = false;
	enum outcome o = cycle(s, &more);

	*ret_left = more ? PERIODIC_MORE : PERIODIC_DONE;
	return o;
}

/*
 * The poller's work, its cadences in one place: the partitions' locks (ordered mode) and the
 * cycle at once, then every outboxd.poll.interval.ms (the cycle at once on a NOTIFY, too); the
 * count and the cleanup from the first turn, every outboxd.poll.stats.interval.ms and
 * outboxd.poll.cleanup.interval.ms (a failing one backs off, up to UPKEEP_BACKOFF_MAX_US); the
 * stall watchdog every second, in the waits within a cycle too.
 */
static void
jobs_start(struct poller *s)
{
	const struct config *cfg = s->cfg;
	int64_t interval_us = cfg->poll_interval_ms * 1000;
	const struct periodic_job jobs[POLL_NJOBS] = {
		[JOB_LOCKS] = { "partition locks", s->unordered ? 0 : interval_us, 0,
				poll_locks_take, s },
		[JOB_CYCLE] = { "poll", interval_us, 0, poll_cycle, s },
		[JOB_COUNT] = { "unpublished rows", cfg->poll_stats_interval_ms * 1000, 0,
				poll_upkeep_count, s },
		[JOB_CLEAN] = { "cleanup",
				cfg->poll_retention ? cfg->poll_cleanup_interval_ms * 1000 : 0, 0,
				poll_upkeep_clean, s },
		[JOB_WATCHDOG] = { "stall watchdog", WATCHDOG_US, 0, watchdog, s },
	};

	periodic_start(&s->jobs, jobs, POLL_NJOBS, now_monotonic_us);
	periodic_backoff(&s->jobs, JOB_COUNT, UPKEEP_BACKOFF_MAX_US);
	periodic_backoff(&s->jobs, JOB_CLEAN, UPKEEP_BACKOFF_MAX_US);
}

/*
 * Waits until the earliest due job (the next cycle at the latest) or a notification, which
 * makes the cycle due at once. While a job has more work left (a cleanup under way, a full
 * batch) it does not wait, but serves signals, reports and the liveness clock all the same.
 */
static enum outcome
idle(struct poller *s)
{
	enum outcome o;
	int64_t now, until;

	take_notifies(s); /* read by the cycle's statements: the socket no longer says so */
	do {
		if (s->notified) {
			periodic_poke(&s->jobs, JOB_CYCLE);
		}
		now = now_monotonic_us();
		until = periodic_next_us(&s->jobs);
		o = wait_events(s, until > now ? until - now : 0);
	} while (o == OUTCOME_OK && !s->notified &&
		 periodic_next_us(&s->jobs) > now_monotonic_us());
	if (s->notified) {
		periodic_poke(&s->jobs, JOB_CYCLE);
	}
	return o;
}

static enum outcome
session_run(struct poller *s)
{
	enum outcome o = session_open(s);

	if (o == OUTCOME_OK) {
		jobs_start(s);
	}
	while (o == OUTCOME_OK) {
		o = periodic_run(&s->jobs);
		if (o == OUTCOME_OK) {
			o = idle(s);
		}
	}
	if (o == OUTCOME_STOP) {
		log_info(MOD, "stopped: %llu rows published and marked in this session",
			 (unsigned long long)s->marked);
	}
	return o;
}

/* Settings that contradict each other: exit 2 before anything connects. */
static bool
settings_fit(const struct config *cfg)
{
	if (strcmp(cfg->poll_after, "delete") == 0 &&
	    (cfg->poll_retention || cfg->poll_archive_table)) {
		log_error(MOD,
			  "outboxd.poll.after=delete deletes every row once published, so "
			  "outboxd.poll.%s has nothing to clean: remove it, or set "
			  "outboxd.poll.after=mark",
			  cfg->poll_retention ? "retention" : "archive.table");
		return false;
	}
	if (cfg->poll_archive_table && !cfg->poll_retention) {
		log_error(
			MOD,
			"outboxd.poll.archive.table=%s needs outboxd.poll.retention (how long a "
			"published row stays before it moves), e.g. outboxd.poll.retention=7 days",
			cfg->poll_archive_table);
		return false;
	}
	return true;
}

/*
 * A row whose delivery fails session after session (outboxd.halt.after.failures), as `outboxd
 * run` judges it (the supervisor's verdict): its dead letter on the next session when a
 * dead-letter topic is set (once), else a halt naming it. Return: true to halt.
 */
static bool
should_halt(struct poll_failing *f, const struct config *cfg, const char *id, const char *why)
{
	int64_t count = 0;

	switch (supervise_failed(&f->sv, id, NULL, &count)) {
	case SUPERVISE_RETRY: return false;
	case SUPERVISE_DEAD_LETTER:
		log_warn(MOD,
			 "row id=%s failed %lld sessions in a row (%s); it goes to the dead-letter "
			 "topic %s on the next poll",
			 id, (long long)count, why, cfg->dlq_topic);
		free(f->dead_lettered);
		f->dead_lettered = xstrdup(id);
		snprintf(f->reason, sizeof(f->reason), "%s", why);
		f->poison = true;
		return false;
	case SUPERVISE_HALT:
	default: break;
	}
	log_error(MOD,
		  "halt: row id=%s failed %lld sessions in a row: %s; it and the rows after it in "
		  "its partition stay unpublished; fix the cause (or set "
		  "outboxd.errors.deadletterqueue.topic.name) and start outboxd poll again",
		  id, (long long)count, why);
	return true;
}

static void
poll_failing_fini(struct poll_failing *f)
{
	free(f->dead_lettered);
	free(f->unmarkable);
}

/*
 * A row published but not marked (poll_int.h's unmarkable): left, it would be published every
 * cycle. Its dead letter on the next session when a dead-letter topic is set; the same row
 * unmarkable again (its dead letter cannot be marked either) or no such topic: halt.
 */
static bool
unmarkable_halts(struct poll_failing *f, const struct config *cfg, const char *id, const char *why)
{
	if (cfg->dlq_topic && (!f->unmarkable || strcmp(f->unmarkable, id) != 0)) {
		log_warn(MOD, "%s; it goes to the dead-letter topic %s on the next poll", why,
			 cfg->dlq_topic);
		free(f->dead_lettered);
		f->dead_lettered = xstrdup(id);
		free(f->unmarkable);
		f->unmarkable = xstrdup(id);
		snprintf(f->reason, sizeof(f->reason), "%s", why);
		f->poison = true;
		return false;
	}
	log_error(MOD,
		  "halt: %s; fix the table (a NOT NULL unique id the mark reaches) and start "
		  "outboxd poll again",
		  why);
	return true;
}

enum outcome
poll_run(const struct poll_params *p)
{
	const struct config *cfg = p->cfg;
	struct stall stall = { 0 };
	struct poll_failing fail = { 0 };
	struct poll_metrics pm;
	int64_t backoff;

	if (!settings_fit(cfg)) {
		return OUTCOME_PRECONDITION;
	}
	supervise_init(&fail.sv, cfg->restart_backoff_max_ms, cfg->halt_after_failures,
		       cfg->dlq_topic != NULL);
	poll_metrics_init(&pm, p->metrics);
	for (;;) {
		struct poller s = { .p = p,
				    .cfg = cfg,
				    .unordered = strcmp(cfg->poll_mode, "unordered") == 0,
				    .stall = &stall,
				    .pm = &pm,
				    .clean_at = -1 };
		int64_t started = now_monotonic_us();
		enum outcome o;

		if (fail.poison) {
			s.poison_id = fail.dead_lettered;
			s.poison_reason = fail.reason;
			fail.poison = false;
		}
		s.pp = (struct publish_params){ .sink = sinks_choose(cfg),
						.router = p->router,
						.dlq_topic = cfg->dlq_topic,
						.metrics = p->metrics };
		metrics_set_state(p->metrics, METRICS_STATE_STARTING, NULL);
		o = session_run(&s);
		if (o == OUTCOME_RESTART &&
		    (s.unmarkable ? unmarkable_halts(&fail, cfg, s.fail_id, s.why) :
				    should_halt(&fail, cfg, s.fail_id, s.why))) {
			metrics_halted(p->metrics,
				       s.unmarkable ? METRICS_HALT_POISON_ROW :
						      METRICS_HALT_DELIVERY_REFUSED,
				       s.why);
			poll_session_close(&s, PUBLISH_END_FINAL);
			poll_failing_fini(&fail);
			return OUTCOME_HALT;
		}
		if (o != OUTCOME_RESTART) {
			if (o != OUTCOME_STOP) {
				const char *id;
				lsn_t at;

				log_error(MOD, "%s", s.why);
				metrics_halted(p->metrics,
					       o == OUTCOME_PRECONDITION ?
						       METRICS_HALT_PRECONDITION :
					       publish_halted_row(s.pub, &id, &at) ?
						       METRICS_HALT_POISON_ROW :
						       METRICS_HALT_INVALID_CHANGE,
					       s.why);
			}
			poll_session_close(&s, PUBLISH_END_FINAL);
			poll_failing_fini(&fail);
			return o;
		}
		backoff = supervise_wait_ms(&fail.sv, now_monotonic_us() - started);
		log_warn(MOD,
			 "%s; polling again from the oldest unpublished row in %lld ms (nothing is "
			 "marked before its delivery report: duplicates, never loss)",
			 s.why, (long long)backoff);
		poll_session_close(&s, PUBLISH_END_RESTART);
		metrics_set_state(p->metrics, METRICS_STATE_RESTARTING, s.why);
		metrics_count(p->metrics, METRICS_PIPELINE_RESTARTS, 1);
		if (!loop_sleep(p->loop, backoff)) {
			poll_failing_fini(&fail);
			return OUTCOME_STOP;
		}
	}
}
