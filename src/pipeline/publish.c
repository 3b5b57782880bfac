/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pipeline/publish.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/sink/sink.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/failpoint.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"

#define MOD "publish"

struct publish {
	const struct publish_params *p;
	struct publish_source src;
	struct sink *sink;
	int stats_section; /* the sink's statistics' metrics section (publish_stats_section) */
	struct record rec; /* rows, dead letters and messages are built here */
	struct sink_header *hdrs; /* rec's headers as the sink takes them */
	size_t hdrs_cap;
	bool waiting; /* rec waits for queue space */
	uint64_t waiting_token;
	struct buf waiting_where; /* its position, should it turn out to be too large */
	lsn_t waiting_lsn;
	bool closing;	    /* purging: the reports that follow reach nobody */
	bool fatal_counted; /* the producer's fatal error is in the metrics */
	/*
	 * The failed record to blame: a refusal no retry fixes over any other failure, and among
	 * refusals the largest record (a batch refused for one large record fails every record
	 * in it), else the first failure.
	 */
	bool failed;
	struct sink_failure culprit; /* id borrowed from failed_id */
	uint64_t culprit_token;
	struct buf failed_id, culprit_reason;
	lsn_t produce_failed_lsn; /* a record the producer refused outright: its position */
	/* publish_set_poison(): the row that goes to the dead-letter topic on this replay */
	bool poison_set;
	lsn_t poison_lsn;
	struct buf poison_id, poison_reason;
	struct buf halted_id; /* the row a halt names (publish_halted_row) */
	lsn_t halted_lsn;
	bool heartbeat_in_flight;
	uint64_t heartbeat_failures; /* since publish_heartbeat_failures() last asked */
	char heartbeat_failure[768];
};

/* The token of heartbeat records: sources number their records from 1 up, never this high. */
#define HEARTBEAT_TOKEN UINT64_MAX

/* The sink's view of @r: every pointer borrows from @r, the headers from pub->hdrs. */
static struct sink_record
view(struct publish *pub, const struct record *r)
{
	struct sink_record pr = {
		.topic = buf_cstr(&r->topic),
		.key = r->key_null ? NULL : buf_cstr(&r->key),
		.key_len = r->key.len,
		.value = r->value_null ? NULL : buf_cstr(&r->value),
		.value_len = r->value.len,
		.nheaders = r->nheaders,
		.partition = r->partition,
		.timestamp_ms = r->timestamp_ms < 0 ? 0 : r->timestamp_ms, /* 0: the client's now */
	};

	if (pub->hdrs_cap < r->nheaders) {
		pub->hdrs_cap = r->nheaders;
		pub->hdrs = xrealloc(pub->hdrs, pub->hdrs_cap * sizeof(*pub->hdrs));
	}
	for (size_t i = 0; i < r->nheaders; i++) {
		pub->hdrs[i] = (struct sink_header){
			.name = buf_cstr(&r->headers[i].name),
			.value = r->headers[i].null ? NULL : buf_cstr(&r->headers[i].value),
			.len = r->headers[i].value.len,
		};
	}
	pr.headers = pub->hdrs;
	return pr;
}

static void
blame(struct publish *pub, uint64_t token, struct sink_failure f, const char *reason)
{
	if (pub->failed && !(f.refused && (!pub->culprit.refused || f.size > pub->culprit.size))) {
		return;
	}
	pub->failed = true;
	pub->culprit = f;
	pub->culprit_token = token;
	buf_reset(&pub->failed_id);
	if (f.id) {
		buf_add(&pub->failed_id, f.id, f.id_len);
	}
	buf_reset(&pub->culprit_reason);
	buf_add_fmt(&pub->culprit_reason, "delivery failed: %s", reason ? reason : "unknown");
}

static void
on_report(void *opaque, uint64_t token, bool ok, const char *reason)
{
	struct publish *pub = opaque;

	if (pub->closing) {
		return;
	}
	if (token == HEARTBEAT_TOKEN) {
		pub->heartbeat_in_flight = false;
		if (!ok) {
			pub->heartbeat_failures++;
			snprintf(pub->heartbeat_failure, sizeof(pub->heartbeat_failure), "%s",
				 reason ? reason : "unknown");
		}
		return;
	}
	if (ok && token) {
		metrics_count(pub->p->metrics, METRICS_RECORDS_ACKNOWLEDGED, 1);
	}
	if (!ok) {
		blame(pub, token, sink_report_failure(pub->sink), reason);
	}
	pub->src.on_delivery(pub->src.opaque, token, ok, reason);
}

int
publish_stats_section(struct metrics *m, const struct sink_kind *kind)
{
	const struct sink_stats_kind *k = kind->stats;

	if (!k) {
		return -1;
	}
	return metrics_section_add(m, &(const struct metrics_section){ .name = k->name,
								       .size = k->size,
								       .render = k->render });
}

/* The sink's statistics into the metrics, as the section its kind registered. */
static void
on_stats(void *opaque, const void *stats)
{
	struct publish *pub = opaque;

	metrics_section_set(pub->p->metrics, pub->stats_section, stats);
}

int
publish_new(const struct publish_params *p, const struct publish_source *src, struct publish **ret,
	    char *errbuf, size_t errlen)
{
	struct publish *pub = znew(*pub);
	const struct sink_params sp = {
		.settings = p->sink.settings,
		.on_delivery = on_report,
		.on_stats = p->sink.kind->stats ? on_stats : NULL,
		.opaque = pub,
	};

	pub->p = p;
	pub->src = *src;
	record_init(&pub->rec);
	pub->stats_section = publish_stats_section(p->metrics, p->sink.kind);
	if (p->sink.kind->open(&sp, &pub->sink, errbuf, errlen) < 0) {
		publish_free(pub, PUBLISH_END_FINAL);
		return -EINVAL;
	}
	*ret = pub;
	return 0;
}

/* A fatal error the producer raised that publish_serve() has not seen yet: counted once. */
static void
count_fatal(struct publish *pub)
{
	if (!pub->fatal_counted && pub->sink && sink_fatal(pub->sink, NULL, 0)) {
		pub->fatal_counted = true;
		metrics_count(pub->p->metrics, METRICS_PRODUCER_FATAL_ERRORS, 1);
	}
}

void
publish_free(struct publish *pub, enum publish_end end)
{
	int64_t wait_ms = end == PUBLISH_END_RESTART ? PUBLISH_DISCARD_INFLIGHT_MS : 0;
	const struct sink_kind *k;
	char fatal[512];
	int purged;

	if (!pub) {
		return;
	}
	k = pub->p->sink.kind;
	pub->closing = true;
	if (pub->sink) {
		sink_serve(pub->sink); /* its error event is logged as it would have been */
	}
	count_fatal(pub);
	purged = sink_discard(pub->sink, wait_ms, fatal, sizeof(fatal));
	if (fatal[0]) {
		metrics_count(pub->p->metrics, METRICS_PRODUCER_FATAL_ERRORS, 1);
	}
	if (fatal[0] && end == PUBLISH_END_RESTART) {
		log_warn(
			MOD,
			"the discarded %s raised %s's fatal error \"%s\" as it purged %d "
			"record(s) no broker had acknowledged within %lld ms; it ends that %s only "
			"(the next one is new), and those records are sent again",
			k->client, k->library, fatal, purged, (long long)wait_ms, k->client);
	} else if (fatal[0]) {
		/* a stop or a halt: the flush before it already said what stays unacknowledged */
		log_debug(MOD, "the %s, ended, raised %s's fatal error \"%s\"", k->client,
			  k->library, fatal);
	}
	record_fini(&pub->rec);
	buf_fini(&pub->waiting_where);
	buf_fini(&pub->failed_id);
	buf_fini(&pub->culprit_reason);
	buf_fini(&pub->poison_id);
	buf_fini(&pub->halted_id);
	buf_fini(&pub->poison_reason);
	free(pub->hdrs);
	free(pub);
}

int
publish_wake_fd(const struct publish *pub)
{
	return sink_wake_fd(pub->sink);
}

struct record *
publish_scratch(struct publish *pub)
{
	return &pub->rec;
}

bool
publish_waiting(const struct publish *pub)
{
	return pub->waiting;
}

int
publish_queue_len(const struct publish *pub)
{
	return sink_queue_len(pub->sink);
}

/* "<where> <lsn>": a position as messages name it. */
static const char *
position(const char *where, lsn_t lsn, char *out, size_t len)
{
	char at[LSN_STRLEN];

	snprintf(out, len, "%.150s %s", where ? where : "committing at", lsn_format(lsn, at));
	return out;
}

/* "halt: row id=<id> <where> <lsn>: <reason>": what the one log line of a halt says. */
static enum outcome
halt_text(const char *id, const char *where, lsn_t lsn, const char *reason, char *why,
	  size_t whylen)
{
	char pos[200];

	errbuf_set(why, whylen, "halt: row id=%.100s %s: %.1800s", id,
		   position(where, lsn, pos, sizeof(pos)), reason);
	return OUTCOME_HALT;
}

static enum outcome
halt_row(struct publish *pub, const struct publish_row *row, const char *reason, char *why,
	 size_t whylen)
{
	buf_reset(&pub->halted_id);
	router_row_id(pub->p->router, row->rel, row->tup, &pub->halted_id);
	pub->halted_lsn = row->lsn;
	return halt_text(buf_cstr(&pub->halted_id), row->where, row->lsn, reason, why, whylen);
}

static enum outcome dead_letter(struct publish *pub, const struct publish_row *row, uint64_t token,
				const char *reason, bool keep_value, char *why, size_t whylen);

/* pub->rec is the row publish_set_poison() named: the broker refused it in earlier sessions. */
static bool
is_poison(struct publish *pub, const struct publish_row *row, lsn_t lsn)
{
	const char *id;

	if (!row || !pub->poison_set || lsn != pub->poison_lsn || !pub->p->dlq_topic) {
		return false;
	}
	id = record_header_text(&pub->rec, "id");
	return id && strcmp(id, buf_cstr(&pub->poison_id)) == 0;
}

/*
 * Hands pub->rec to the producer. A full queue keeps it (publish_waiting()); a record over
 * message.max.bytes is a poison row: its dead letter when @row is at hand and a dead-letter
 * topic is set, else a halt.
 */
static enum outcome
send(struct publish *pub, uint64_t token, const struct publish_row *row, const char *where,
     lsn_t lsn, char *why, size_t whylen)
{
	struct sink_record pr;
	const char *id;
	char err[512];
	int rc;

	if (is_poison(pub, row, lsn)) {
		pub->poison_set =
			false; /* once: should its dead letter fail too, the relay halts */
		return dead_letter(pub, row, token, buf_cstr(&pub->poison_reason), true, why,
				   whylen);
	}
	pr = view(pub, &pub->rec);
	rc = sink_send(pub->sink, &pr, token, err, sizeof(err));

	if (rc == 0) {
		pub->waiting = false;
		if (token) {
			metrics_count(pub->p->metrics, METRICS_RECORDS_PUBLISHED, 1);
		}
		pub->src.on_produced(pub->src.opaque, token);
		failpoint_hit(FAILPOINT_AFTER_PRODUCE);
		return OUTCOME_OK;
	}
	if (rc == -EAGAIN) {
		pub->waiting = true;
		pub->waiting_token = token;
		pub->waiting_lsn = lsn;
		if (where != buf_cstr(&pub->waiting_where)) {
			buf_reset(&pub->waiting_where);
			buf_add_str(&pub->waiting_where, where ? where : "committing at");
		}
		return OUTCOME_OK;
	}
	pub->waiting = false;
	if (rc == -EMSGSIZE) {
		snprintf(err, sizeof(err), "the record for topic %s is larger than %s (%lld); %s",
			 pr.topic, pub->p->sink.kind->size_setting,
			 (long long)sink_max_record_bytes(pub->sink), pub->p->sink.kind->size_fix);
		if (pub->p->dlq_topic && row && strcmp(pr.topic, pub->p->dlq_topic) != 0) {
			return dead_letter(pub, row, token, err, false, why, whylen);
		}
		id = record_header_text(&pub->rec, "id");
		return halt_text(id ? id : "(unknown)", where, lsn, err, why, whylen);
	}
	errbuf_set(why, whylen, "produce to %s failed: %s", pr.topic, err);
	pub->produce_failed_lsn = lsn;
	if (!pub->failed) {
		pub->failed = true;
		pub->culprit_token = token;
		id = record_header_text(&pub->rec, "id");
		buf_add_str(&pub->failed_id, id ? id : "");
		buf_add_str(&pub->culprit_reason, why);
	}
	return OUTCOME_RESTART;
}

/*
 * outboxd.errors.deadletterqueue.topic.name: the poison row goes to the dead-letter topic
 * instead of halting, and counts as delivered once that record is acknowledged.
 */
static enum outcome
dead_letter(struct publish *pub, const struct publish_row *row, uint64_t token, const char *reason,
	    bool keep_value, char *why, size_t whylen)
{
	char lsn[LSN_STRLEN], pos[200];
	struct router_dead_letter_info info = { .topic = pub->p->dlq_topic,
						.reason = reason,
						.commit_lsn = lsn_format(row->lsn, lsn),
						.keep_value = keep_value };
	const struct router_row rr = { .rel = row->rel,
				       .tup = row->tup,
				       .notnull = row->notnull,
				       .defaults = row->defaults,
				       .op = row->op };
	struct buf id = BUF_INIT;
	enum outcome o;

	router_row_id(pub->p->router, row->rel, row->tup, &id);
	log_fields(LOG_WARN, MOD,
		   (const struct log_field[]){ { "row_id", buf_cstr(&id) },
					       { "position", lsn },
					       { "topic", pub->p->dlq_topic } },
		   3, "poison row id=%s %s sent to dead-letter topic %s: %s", buf_cstr(&id),
		   position(row->where, row->lsn, pos, sizeof(pos)), pub->p->dlq_topic, reason);
	buf_fini(&id);
	router_dead_letter(pub->p->router, &rr, &info, &pub->rec);
	if ((o = send(pub, token, NULL, row->where, row->lsn, why, whylen)) == OUTCOME_OK) {
		metrics_count(pub->p->metrics, METRICS_DEAD_LETTERS, 1);
	}
	return o;
}

enum outcome
publish_row(struct publish *pub, const struct publish_row *row, uint64_t token, char *why,
	    size_t whylen)
{
	const struct router_row rr = { .rel = row->rel,
				       .tup = row->tup,
				       .notnull = row->notnull,
				       .defaults = row->defaults,
				       .op = row->op };
	enum router_verdict v = ROUTER_DROP;
	char err[1024] = "";

	if (router_route(pub->p->router, &rr, &pub->rec, &v, err, sizeof(err)) < 0) {
		return halt_row(pub, row, err, why, whylen);
	}
	switch (v) {
	case ROUTER_PUBLISH: return send(pub, token, row, row->where, row->lsn, why, whylen);
	case ROUTER_POISON:
		return pub->p->dlq_topic ? dead_letter(pub, row, token, err, true, why, whylen) :
					   halt_row(pub, row, err, why, whylen);
	case ROUTER_DROP: return OUTCOME_OK;
	case ROUTER_DROP_WARN:
		log_warn(MOD, "%s", err);
		metrics_skipped(pub->p->metrics, METRICS_SKIP_UPDATE);
		return OUTCOME_OK;
	case ROUTER_DROP_ERROR:
		log_error(MOD, "%s", err);
		metrics_skipped(pub->p->metrics, METRICS_SKIP_UPDATE);
		return OUTCOME_OK;
	case ROUTER_HALT:
	default: return halt_row(pub, row, err, why, whylen);
	}
}

enum outcome
publish_scratch_send(struct publish *pub, uint64_t token, const char *where, lsn_t lsn, char *why,
		     size_t whylen)
{
	return send(pub, token, NULL, where, lsn, why, whylen);
}

int
publish_heartbeat(struct publish *pub, const struct record *rec, char *errbuf, size_t errlen)
{
	struct sink_record pr = view(pub, rec);
	int rc;

	if (pub->heartbeat_in_flight) {
		return -EBUSY;
	}
	rc = sink_send(pub->sink, &pr, HEARTBEAT_TOKEN, errbuf, errlen);
	pub->heartbeat_in_flight = rc == 0;
	return rc;
}

uint64_t
publish_heartbeat_failures(struct publish *pub, char *out, size_t len)
{
	uint64_t n = pub->heartbeat_failures;

	snprintf(out, len, "%s", pub->heartbeat_failure);
	pub->heartbeat_failures = 0;
	return n;
}

enum outcome
publish_serve(struct publish *pub, char *why, size_t whylen)
{
	char err[512];

	sink_serve(pub->sink);
	if (sink_fatal(pub->sink, err, sizeof(err))) {
		count_fatal(pub);
		errbuf_set(why, whylen, "fatal %s error: %s", pub->p->sink.kind->client, err);
		return OUTCOME_RESTART;
	}
	if (sink_precondition(pub->sink, err, sizeof(err))) {
		errbuf_set(why, whylen, "%s: %s", pub->p->sink.kind->name, err);
		return OUTCOME_PRECONDITION;
	}
	return OUTCOME_OK;
}

enum outcome
publish_retry(struct publish *pub, char *why, size_t whylen)
{
	if (!pub->waiting) {
		return OUTCOME_OK;
	}
	return send(pub, pub->waiting_token, NULL, buf_cstr(&pub->waiting_where), pub->waiting_lsn,
		    why, whylen);
}

int
publish_flush(struct publish *pub, int64_t timeout_ms)
{
	return sink_flush(pub->sink, timeout_ms);
}

bool
publish_culprit(const struct publish *pub, uint64_t *ret_token, const char **ret_id,
		const char **ret_reason)
{
	if (!pub->failed) {
		return false;
	}
	*ret_token = pub->culprit_token;
	*ret_id = pub->failed_id.len ? buf_cstr(&pub->failed_id) : NULL;
	*ret_reason = buf_cstr(&pub->culprit_reason);
	return true;
}

void
publish_collect_failures(struct publish *pub)
{
	char err[512];

	/* A fatal error fails what is queued: serve those reports before the session ends. */
	if (sink_fatal(pub->sink, err, sizeof(err))) {
		(void)sink_flush(pub->sink, 2000);
	} else {
		sink_serve(pub->sink);
	}
}

bool
publish_halted_row(const struct publish *pub, const char **ret_id, lsn_t *ret_lsn)
{
	if (!pub || !pub->halted_id.len) {
		return false;
	}
	*ret_id = buf_cstr(&pub->halted_id);
	*ret_lsn = pub->halted_lsn;
	return true;
}

lsn_t
publish_produce_failed_lsn(const struct publish *pub)
{
	return pub->produce_failed_lsn;
}

void
publish_set_poison(struct publish *pub, lsn_t lsn, const char *id, const char *reason)
{
	pub->poison_set = true;
	pub->poison_lsn = lsn;
	buf_reset(&pub->poison_id);
	buf_add_str(&pub->poison_id, id);
	buf_reset(&pub->poison_reason);
	buf_add_str(&pub->poison_reason, reason);
}

size_t
publish_broker_state(const struct publish *pub, int64_t now_us, char *out, size_t len)
{
	return sink_broker_state(pub->sink, now_us, out, len);
}
