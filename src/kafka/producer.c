/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/kafka/producer.h"

#include <errno.h>
#include <librdkafka/rdkafka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/kafka/authgrace.h"
#include "outboxd/kafka/kafkasec.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/hash.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/now.h"
#include "outboxd/util/secret.h"

#define MOD "producer"

/* Topics produced to so far, by name: see topic_get(). Open addressing, never more than half full. */
struct topic_slot {
	char *name;
	rd_kafka_topic_t *rkt;
};

/* beyond that many names, records go by name, without a lookup first; librdkafka then finds the
 * topic by a scan of all it knows, per record */
#define TOPICS_MAX		65536
#define TOPIC_LOOKUP_MS		500
#define TOPIC_LOOKUP_BACKOFF_US 10000000 /* after a lookup timed out, new topics do not wait */
#define TOPIC_LOOKUPS_PER_S	10	 /* see topic_get() */
#define TOPIC_LOOKUP_US_PER_S	100000	 /* and at most this long spent in them each second */
/*
 * librdkafka's statistics describe every topic and partition: with 10,000 one-partition topics
 * the bench measured outboxd's peak RSS at 294 MB with them (every 10 s) and 60 MB without, and
 * a quarter of its CPU. Past this many topics, a warning says so once.
 */
#define TOPICS_STATS_WARN 1000

struct producer {
	rd_kafka_t *rk;
	rd_kafka_queue_t *mainq;
	producer_on_delivery on_delivery;
	void *opaque;
	producer_on_stats on_stats; /* NULL = none */
	void *stats_arg;
	int64_t max_message_bytes;
	struct topic_slot *topics;
	size_t topics_cap; /* a power of two */
	size_t topics_n;
	bool lookup;		      /* producer_needs_topic_lookup() */
	int64_t lookup_skip_until_us; /* monotonic; see topic_get() */
	int64_t lookup_window_us;     /* the start of the second lookups_in_window counts in */
	int lookups_in_window;
	int64_t lookup_us_in_window; /* the time they took */
	int64_t lookups;	     /* every lookup made: producer_topic_lookups() */
	bool stats_on;		     /* statistics.interval.ms > 0: see TOPICS_STATS_WARN */
	char last_error[256];	     /* what the error callback last said about the brokers */
	int64_t last_error_us;	     /* monotonic; 0 = nothing yet */
	char mechanism[32];	     /* librdkafka's sasl.mechanisms (GSSAPI by default) */
	char precondition[768];	     /* a failure no retry fixes: see kafkasec_fix(); "" = none */
	struct authgrace grace;	     /* outboxd.kafka.auth.grace.ms: see authgrace.h */
	bool discarding;	     /* producer_discard() runs: its fatal error is expected */
	int purged_late;  /* records producer_discard() purged after its wait (their reports) */
	char report[768]; /* the failed delivery report's reason, during the callback */
	struct sink_failure failure; /* and the rest of what it says */
};

/*
 * Settings forced for the delivery guarantee (DESIGN.md "Producer settings"), each with what a
 * user override gives up. message.max.bytes is the Java client's max.request.size default.
 * The queue bounds keep memory bounded: the relay stops reading PostgreSQL while they are hit.
 * The byte bound is not here: see queue_bound().
 */
static const struct forced {
	const char *key;
	const char *value;
	const char *gives_up;
} forced[] = {
	{ "enable.idempotence", "true",
	  "retries may duplicate or reorder records of an aggregate" },
	{ "acks", "all", "an acknowledged record may be lost when a broker fails" },
	{ "enable.gapless.guarantee", "true",
	  "a failed batch may leave a gap while later records land" },
	{ "message.timeout.ms", "0", "records that time out leave a gap; later ones still land" },
	{ "partitioner", "murmur2_random", "partitions no longer match Debezium's (Java murmur2)" },
	{ "message.max.bytes", "1048576", NULL },
	/* outboxd.kafka.queue.records sets it from a configuration; this is for other callers */
	{ "queue.buffering.max.messages", "1000", NULL },
	{ "log.queue", "true", NULL },
	/*
	 * The Java client's default (so Kafka Connect's producer's): librdkafka's 10 s let a
	 * broker's restart cost up to 10 s more before the first record went again, as its backoff
	 * had grown while the broker was down (tests/fault/run broker_crash_one_session: 4.2 s with
	 * librdkafka's, 0.0 s with this). Left out when the user's reconnect.backoff.ms exceeds it.
	 */
	{ "reconnect.backoff.max.ms", "1000", NULL },
};

static int
conf_set(rd_kafka_conf_t *conf, const char *key, const char *value, char *errbuf, size_t errlen)
{
	char err[512];

	if (rd_kafka_conf_set(conf, key, value, err, sizeof(err)) == RD_KAFKA_CONF_OK) {
		return 0;
	}
	if (errbuf) {
		/* e.g. OIDC in a librdkafka built without libcurl (Debian 12's 2.0.2, the minimum) */
		snprintf(errbuf, errlen, "producer setting %s%s%s: %s%s", key,
			 secret_key(key) ? "" : "=", secret_key(key) ? "" : value, err,
			 strstr(err, "not supported in this build") ?
				 "; run outboxd built with a librdkafka that has it (the container "
				 "image's " OUTBOXD_RDKAFKA_PINNED " has OIDC)" :
				 "");
	}
	return -EINVAL;
}

/* What to do about a broker's refusal that no retry fixes; NULL for the rest. */
static const char *
refusal_fix(rd_kafka_resp_err_t err)
{
	switch (err) {
	case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
		return "the record is larger than the topic's max.message.bytes (or the broker's "
		       "message.max.bytes): raise it, or set "
		       "outboxd.errors.deadletterqueue.topic.name";
	case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
	case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
		return "the principal may not write to this topic: grant it WRITE (and IDEMPOTENT_WRITE "
		       "on the cluster)";
	case RD_KAFKA_RESP_ERR_POLICY_VIOLATION:
	case RD_KAFKA_RESP_ERR_INVALID_RECORD:
		return "the broker's policy refuses this record: change the policy or the row";
	case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
	case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
		return "the topic does not exist and is not created automatically: create it";
	default: return NULL;
	}
}

/* A connection succeeded after refusals: they were transient. */
static void
refusal_ended(struct producer *p)
{
	if (p->grace.refusal[0]) {
		log_info(MOD, "the brokers accept outboxd again after %lld s of refusals",
			 (long long)(authgrace_since_us(&p->grace, now_monotonic_us()) / 1000000));
	}
	authgrace_ok(&p->grace);
}

static void
on_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct producer *p = opaque;
	rd_kafka_headers_t *hdrs = NULL;
	const char *fix;

	(void)rk;
	if (p->purged_late >= 0 && m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
		p->purged_late++;
	}
	if (!p->on_delivery) {
		return;
	}
	if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
		if (p->grace.first_us) {
			/* a broker took the record: its login and certificates were accepted */
			refusal_ended(p);
		}
		p->on_delivery(p->opaque, m->_private, true, NULL);
		return;
	}
	fix = refusal_fix(m->err);
	snprintf(p->report, sizeof(p->report), "%s (%s), topic %s partition %d%s%s",
		 rd_kafka_err2str(m->err), rd_kafka_err2name(m->err),
		 m->rkt ? rd_kafka_topic_name(m->rkt) : "?", (int)m->partition, fix ? ": " : "",
		 fix ? fix : "");
	p->failure = (struct sink_failure){ .size = m->len + m->key_len, .refused = fix != NULL };
	if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR &&
	    rd_kafka_header_get_last(hdrs, "id", &p->failure.id, &p->failure.id_len) !=
		    RD_KAFKA_RESP_ERR_NO_ERROR) {
		p->failure.id = NULL;
	}
	p->on_delivery(p->opaque, m->_private, false, p->report);
	p->failure = (struct sink_failure){ 0 };
}

struct sink_failure
producer_report_failure(const struct producer *p)
{
	return p->failure;
}

size_t
producer_broker_state(const struct producer *p, int64_t now_us, char *out, size_t len)
{
	if (!p->last_error_us) {
		return 0;
	}
	/* the refusal within its grace, not the "brokers are down" that follows it */
	if (!p->precondition[0] && p->grace.refusal[0]) {
		return authgrace_describe(&p->grace, now_us, out, len);
	}
	return (size_t)snprintf(out, len, "%s (%lld s ago)", p->last_error,
				(long long)((now_us - p->last_error_us) / 1000000));
}

static void
on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	struct producer *p = opaque;
	const char *fix;
	char text[768];

	(void)rk;
	snprintf(p->last_error, sizeof(p->last_error), "%s (%s)", reason,
		 rd_kafka_err2name((rd_kafka_resp_err_t)err));
	p->last_error_us = now_monotonic_us();
	fix = kafkasec_fix(err, reason, p->mechanism, rd_kafka_version());
	if (fix) {
		/* the reason names the broker and the mechanism; it never holds a credential */
		snprintf(text, sizeof(text), "%s: %s", reason, fix);
	}
	if (fix && authgrace_refused(&p->grace, p->last_error_us, text) && !p->precondition[0]) {
		snprintf(p->precondition, sizeof(p->precondition), "%s", text);
	}
	if (fix && p->precondition[0]) {
		log_error(MOD, "%s: %s", reason, fix);
	} else if (fix) {
		authgrace_describe(&p->grace, p->last_error_us, text, sizeof(text));
		log_warn(MOD, "%s; retrying", text);
	} else if (p->discarding) {
		/* producer_discard()'s caller says what it means */
		log_debug(MOD, "while discarding the producer: %s (%s)", reason,
			  rd_kafka_err2name((rd_kafka_resp_err_t)err));
	} else if (err == RD_KAFKA_RESP_ERR__FATAL) {
		log_error(MOD, "fatal producer error: %s; the pipeline restarts from the slot",
			  reason);
	} else if (p->precondition[0] || p->grace.refusal[0]) {
		/* the brokers are down because of it: the line above said why */
		log_debug(MOD, "%s (%s)", reason, rd_kafka_err2name(err));
	} else if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN ||
		   err == RD_KAFKA_RESP_ERR__TRANSPORT) {
		log_warn(MOD, "%s; librdkafka keeps retrying, nothing is confirmed meanwhile",
			 reason);
	} else {
		log_warn(MOD, "%s (%s); librdkafka retries", reason, rd_kafka_err2name(err));
	}
}

/* librdkafka's own log lines, served on the main queue (log.queue=true). */
static void
on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	(void)rk;
	/* enable.gapless.guarantee is forced on purpose; librdkafka calls it experimental. */
	if (strcmp(fac, "CONFWARN") == 0 && strstr(buf, "enable.gapless.guarantee")) {
		log_debug("rdkafka", "%s: %s", fac, buf);
		return;
	}
	if (level <= 3) {
		log_error("rdkafka", "%s: %s", fac, buf);
	} else if (level <= 4) {
		log_warn("rdkafka", "%s: %s", fac, buf);
	} else if (level <= 6) {
		log_info("rdkafka", "%s: %s", fac, buf);
	} else {
		log_debug("rdkafka", "%s: %s", fac, buf);
	}
}

/* A forced value the user's other settings rule out: librdkafka refuses a reconnect backoff
 * whose maximum is below its start. */
static bool
forced_yields(const struct forced *f, const struct kv *settings)
{
	const char *start = kv_get(settings, "reconnect.backoff.ms");

	return strcmp(f->key, "reconnect.backoff.max.ms") == 0 && start &&
	       strtoll(start, NULL, 10) > strtoll(f->value, NULL, 10);
}

static int
apply_settings(rd_kafka_conf_t *conf, const struct kv *settings, char *errbuf, size_t errlen)
{
	for (size_t i = 0; i < sizeof(forced) / sizeof(forced[0]); i++) {
		const char *user = kv_get(settings, forced[i].key);

		if (user && forced[i].gives_up && strcmp(user, forced[i].value) != 0) {
			log_warn(MOD, "%s=%s overrides outboxd's %s: %s", forced[i].key, user,
				 forced[i].value, forced[i].gives_up);
		}
		if (!user && !forced_yields(&forced[i], settings) &&
		    conf_set(conf, forced[i].key, forced[i].value, errbuf, errlen) < 0) {
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < settings->n; i++) {
		/* outboxd's own (AUTHGRACE_KEY), read by producer_new() */
		if (strncmp(settings->v[i].key, "outboxd.", 8) == 0) {
			continue;
		}
		if (conf_set(conf, settings->v[i].key, settings->v[i].value, errbuf, errlen) < 0) {
			return -EINVAL;
		}
	}
	/* As Kafka Connect does: without idempotence, one request in flight keeps the order. */
	if (kv_get(settings, "enable.idempotence") &&
	    strcmp(kv_get(settings, "enable.idempotence"), "false") == 0 &&
	    !kv_get(settings, "max.in.flight.requests.per.connection") &&
	    conf_set(conf, "max.in.flight.requests.per.connection", "1", errbuf, errlen) < 0) {
		return -EINVAL;
	}
	return 0;
}

static int64_t
conf_int(rd_kafka_conf_t *conf, const char *key)
{
	char v[64];
	size_t n = sizeof(v);

	if (rd_kafka_conf_get(conf, key, v, &n) != RD_KAFKA_CONF_OK) {
		return -1;
	}
	return strtoll(v, NULL, 10);
}

/*
 * The producer queue's byte bound: by default room for one record of message.max.bytes, the
 * smallest bound that never refuses a record for good (librdkafka counts the values' bytes
 * against it). Why that small: it is most of outboxd's memory during a catch-up; at 4 MB peak RSS
 * was 28 MB, at 1 MB 19 MB, with the same throughput (bench/results/2026-12-02-analysis.md): a
 * few thousand ~400-byte records still cover the broker's round trip and the linger. A user
 * bound (producer.buffer.memory) below message.max.bytes is raised to it, with a warning.
 */
static int
queue_bound(rd_kafka_conf_t *conf, const struct kv *settings, char *errbuf, size_t errlen)
{
	int64_t need_kb = (conf_int(conf, "message.max.bytes") + 1023) / 1024;
	const char *user = kv_get(settings, "queue.buffering.max.kbytes");
	char v[32];

	if (user && conf_int(conf, "queue.buffering.max.kbytes") >= need_kb) {
		return 0;
	}
	if (user) {
		log_warn(MOD,
			 "queue.buffering.max.kbytes=%s (producer.buffer.memory) is below "
			 "message.max.bytes: raised to %lld so that every record fits",
			 user, (long long)need_kb);
	}
	snprintf(v, sizeof(v), "%lld", (long long)need_kb);
	return conf_set(conf, "queue.buffering.max.kbytes", v, errbuf, errlen);
}

/* librdkafka's statistics (statistics.interval.ms), served by producer_poll(). */
static int
on_stats(rd_kafka_t *rk, char *json, size_t len, void *opaque)
{
	struct producer *p = opaque;

	(void)rk;
	if (p->on_stats) {
		p->on_stats(p->stats_arg, json, len);
	}
	return 0; /* librdkafka frees @json */
}

void
producer_set_stats(struct producer *p, producer_on_stats fn, void *arg)
{
	p->on_stats = fn;
	p->stats_arg = arg;
}

const char *
producer_version_refusal(int version)
{
	if (version >= 0x02020000 && version < 0x02050000) {
		return "librdkafka 2.2.0 to 2.4.x can fail produce requests with \"Unable to "
		       "reconstruct MessageSet\" (librdkafka#4750): install 2.5.0 or later (the "
		       "container image has " OUTBOXD_RDKAFKA_PINNED ")";
	}
	return NULL;
}

/* 2.10.1 asks for an unknown topic's metadata at once (confluentinc/librdkafka#5032). */
bool
producer_needs_topic_lookup(int version)
{
	return version < 0x020a0100;
}

int
producer_new(const struct kv *settings, int wake_fd, producer_on_delivery on_delivery, void *opaque,
	     struct producer **ret, char *errbuf, size_t errlen)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	struct producer *p = znew(*p);
	char err[512];

	p->purged_late = -1;
	const char *refusal = producer_version_refusal(rd_kafka_version());

	if (refusal) {
		rd_kafka_conf_destroy(conf);
		free(p);
		if (errbuf) {
			snprintf(errbuf, errlen, "librdkafka %s is refused: %s",
				 rd_kafka_version_str(), refusal);
		}
		return -EINVAL;
	}
	p->lookup = producer_needs_topic_lookup(rd_kafka_version());
	p->stats_on = kv_get(settings, "statistics.interval.ms") &&
		      atoll(kv_get(settings, "statistics.interval.ms")) > 0;
	p->on_delivery = on_delivery;
	p->opaque = opaque;
	authgrace_init(&p->grace, settings);
	if (apply_settings(conf, settings, errbuf, errlen) < 0 ||
	    queue_bound(conf, settings, errbuf, errlen) < 0) {
		rd_kafka_conf_destroy(conf);
		free(p);
		return -EINVAL;
	}
	p->max_message_bytes = conf_int(conf, "message.max.bytes");
	/* librdkafka's own value: its alias sasl.mechanism and its default included */
	size_t mlen = sizeof(p->mechanism);

	if (rd_kafka_conf_get(conf, "sasl.mechanisms", p->mechanism, &mlen) != RD_KAFKA_CONF_OK) {
		p->mechanism[0] = '\0';
	}
	rd_kafka_conf_set_dr_msg_cb(conf, on_dr);
	rd_kafka_conf_set_error_cb(conf, on_error);
	rd_kafka_conf_set_log_cb(conf, on_log);
	rd_kafka_conf_set_stats_cb(conf, on_stats);
	rd_kafka_conf_set_opaque(conf, p);
	p->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
	if (!p->rk) {
		rd_kafka_conf_destroy(conf);
		free(p);
		if (errbuf) {
			snprintf(errbuf, errlen, "cannot create the Kafka producer: %s", err);
		}
		return -EINVAL;
	}
	p->mainq = rd_kafka_queue_get_main(p->rk);
	rd_kafka_set_log_queue(p->rk, NULL);
	if (wake_fd >= 0) {
		rd_kafka_queue_io_event_enable(p->mainq, wake_fd, "1", 1);
	}
	*ret = p;
	return 0;
}

static uint32_t
topic_hash(const char *s)
{
	return hash_fnv1a(s, strlen(s));
}

static void
topics_grow(struct producer *p)
{
	struct topic_slot *old = p->topics;
	size_t oldcap = p->topics_cap;

	p->topics_cap = oldcap ? oldcap * 2 : 16;
	p->topics = xcalloc(p->topics_cap, sizeof(*p->topics));
	for (size_t i = 0; i < oldcap; i++) {
		if (old[i].name) {
			size_t j = topic_hash(old[i].name) & (p->topics_cap - 1);

			while (p->topics[j].name) {
				j = (j + 1) & (p->topics_cap - 1);
			}
			p->topics[j] = old[i];
		}
	}
	free(old);
}

/*
 * Whether a new topic goes without its lookup: after a timed-out one, or past the second's
 * budget, in lookups or in the time they took (slow ones must not hold the relay thread either).
 */
static bool
lookup_budget_spent(struct producer *p)
{
	int64_t now = now_monotonic_us();

	if (now < p->lookup_skip_until_us) {
		return true;
	}
	if (now - p->lookup_window_us >= 1000000) {
		p->lookup_window_us = now;
		p->lookups_in_window = 0;
		p->lookup_us_in_window = 0;
	}
	return p->lookups_in_window++ >= TOPIC_LOOKUPS_PER_S ||
	       p->lookup_us_in_window >= TOPIC_LOOKUP_US_PER_S;
}

/*
 * The topic handle for @name, or NULL past TOPICS_MAX names. The first time a name is seen, its
 * metadata is asked for before its first record is queued. Why: librdkafka 2.0.2 does not ask at
 * once for a topic it has no metadata for when another metadata request has just gone out (as one
 * always has at start-up); the record then waits for its 1-second topic scan
 * (confluentinc/librdkafka#3202). That second was the whole of outboxd's start-up time and part of
 * every catch-up. An application metadata request is always sent (librdkafka forces it) and fills
 * the topic's partition count, so the record goes straight to its partition. librdkafka 2.10.1
 * asks at once itself, and there the lookup is left out (producer_needs_topic_lookup()). The
 * wait is bounded:
 * with no broker answering, the record is queued after TOPIC_LOOKUP_MS and librdkafka retries;
 * and for TOPIC_LOOKUP_BACKOFF_US after that, new topics do not wait at all, so that many new
 * topics during an outage cannot hold the relay thread (and its replies to the walsender) for long.
 * With a broker, at most TOPIC_LOOKUPS_PER_S new topics a second wait for a lookup, for at most
 * TOPIC_LOOKUP_US_PER_S in all (lookup_budget_spent()). Each is a round trip through librdkafka's
 * broker thread, about 8 ms on the bench machine: 80 s for 10,000 new topics one after another,
 * the whole relay waiting. Past the budget a new topic waits at most for librdkafka's next topic
 * scan, which asks for all of them in one request.
 */
static rd_kafka_topic_t *
topic_get(struct producer *p, const char *name)
{
	const struct rd_kafka_metadata *md = NULL;
	rd_kafka_resp_err_t err;
	int64_t t0;
	size_t j;

	if (p->topics_cap) {
		for (j = topic_hash(name) & (p->topics_cap - 1); p->topics[j].name;
		     j = (j + 1) & (p->topics_cap - 1)) {
			if (strcmp(p->topics[j].name, name) == 0) {
				return p->topics[j].rkt;
			}
		}
	}
	if (p->topics_n >= TOPICS_MAX) {
		return NULL;
	}
	if ((p->topics_n + 1) * 2 > p->topics_cap) {
		topics_grow(p);
	}
	for (j = topic_hash(name) & (p->topics_cap - 1); p->topics[j].name;
	     j = (j + 1) & (p->topics_cap - 1)) {
	}
	p->topics[j].rkt = rd_kafka_topic_new(p->rk, name, NULL);
	if (!p->topics[j].rkt) {
		return NULL; /* an invalid name: producev by name reports why */
	}
	p->topics[j].name = xstrdup(name);
	if (++p->topics_n == TOPICS_STATS_WARN && p->stats_on) {
		log_warn(
			MOD,
			"%d topics produced to: librdkafka's statistics grow with every topic and "
			"partition (about 24 KB of memory each, and CPU, every outboxd.kafka.stats.ms); "
			"set outboxd.kafka.stats.ms=0, or a longer interval, unless the "
			"outboxd_kafka_* metrics are needed",
			TOPICS_STATS_WARN);
	}
	if (!p->lookup || lookup_budget_spent(p)) {
		return p->topics[j].rkt;
	}
	p->lookups++;
	t0 = now_monotonic_us();
	err = rd_kafka_metadata(p->rk, 0, p->topics[j].rkt, &md, TOPIC_LOOKUP_MS);
	p->lookup_us_in_window += now_monotonic_us() - t0;
	if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
		rd_kafka_metadata_destroy(md);
	} else {
		p->lookup_skip_until_us = now_monotonic_us() + TOPIC_LOOKUP_BACKOFF_US;
		log_debug(MOD, "no metadata for topic %s within %d ms; librdkafka keeps asking",
			  name, TOPIC_LOOKUP_MS);
	}
	return p->topics[j].rkt;
}

/* Builds librdkafka headers; they belong to librdkafka once producev() succeeds. */
static rd_kafka_headers_t *
headers_new(const struct sink_record *rec)
{
	rd_kafka_headers_t *h = rd_kafka_headers_new(rec->nheaders ? rec->nheaders : 1);

	for (size_t i = 0; i < rec->nheaders; i++) {
		rd_kafka_header_add(h, rec->headers[i].name, -1, rec->headers[i].value,
				    rec->headers[i].value ? (ssize_t)rec->headers[i].len : 0);
	}
	return h;
}

int
producer_send(struct producer *p, const struct sink_record *rec, void *msg_opaque, char *errbuf,
	      size_t errlen)
{
	rd_kafka_topic_t *rkt = topic_get(p, rec->topic);
	rd_kafka_headers_t *h = headers_new(rec);
	/* F_COPY: the router reuses its buffers; librdkafka copies into the message's own block. */
	rd_kafka_vu_t vu[] = {
		rkt ? (rd_kafka_vu_t){ .vtype = RD_KAFKA_VTYPE_RKT, .u.rkt = rkt } :
		      (rd_kafka_vu_t){ .vtype = RD_KAFKA_VTYPE_TOPIC, .u.cstr = rec->topic },
		{ .vtype = RD_KAFKA_VTYPE_PARTITION,
		  .u.i32 = rec->partition < 0 ? RD_KAFKA_PARTITION_UA : rec->partition },
		{ .vtype = RD_KAFKA_VTYPE_KEY,
		  .u.mem = { (void *)rec->key, rec->key ? rec->key_len : 0 } },
		{ .vtype = RD_KAFKA_VTYPE_VALUE,
		  .u.mem = { (void *)rec->value, rec->value ? rec->value_len : 0 } },
		{ .vtype = RD_KAFKA_VTYPE_TIMESTAMP, .u.i64 = rec->timestamp_ms },
		{ .vtype = RD_KAFKA_VTYPE_HEADERS, .u.headers = h },
		{ .vtype = RD_KAFKA_VTYPE_MSGFLAGS, .u.i = RD_KAFKA_MSG_F_COPY },
		{ .vtype = RD_KAFKA_VTYPE_OPAQUE, .u.ptr = msg_opaque },
	};
	rd_kafka_error_t *error = rd_kafka_produceva(p->rk, vu, sizeof(vu) / sizeof(vu[0]));
	rd_kafka_resp_err_t err;

	if (!error) {
		return 0;
	}
	/* after a fatal error, the code is the original cause; the flag says it was fatal */
	err = rd_kafka_error_is_fatal(error) ? RD_KAFKA_RESP_ERR__FATAL :
					       rd_kafka_error_code(error);
	rd_kafka_headers_destroy(h); /* still the caller's when the record was not queued */
	if (errbuf) {
		snprintf(errbuf, errlen, "%s", rd_kafka_error_string(error));
	}
	rd_kafka_error_destroy(error);
	switch (err) {
	case RD_KAFKA_RESP_ERR__QUEUE_FULL: return -EAGAIN;
	case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE: return -EMSGSIZE;
	case RD_KAFKA_RESP_ERR__FATAL: return -ESHUTDOWN;
	default: return -EINVAL;
	}
}

void
producer_poll(struct producer *p)
{
	rd_kafka_poll(p->rk, 0);
}

int
producer_flush(struct producer *p, int timeout_ms)
{
	return rd_kafka_flush(p->rk, timeout_ms) == RD_KAFKA_RESP_ERR_NO_ERROR ? 0 : -ETIMEDOUT;
}

bool
producer_fatal(struct producer *p, char *errbuf, size_t errlen)
{
	char err[512];

	if (rd_kafka_fatal_error(p->rk, err, sizeof(err)) == RD_KAFKA_RESP_ERR_NO_ERROR) {
		return false;
	}
	if (errbuf) {
		snprintf(errbuf, errlen, "%s", err);
	}
	return true;
}

bool
producer_precondition(struct producer *p, char *errbuf, size_t errlen)
{
	if (!p->precondition[0]) {
		return false;
	}
	if (errbuf) {
		snprintf(errbuf, errlen, "%s", p->precondition);
	}
	return true;
}

int
producer_check_brokers(struct producer *p, int timeout_ms, char *errbuf, size_t errlen)
{
	const struct rd_kafka_metadata *md = NULL;
	rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__TIMED_OUT;
	struct buf line = BUF_INIT;

	/* in slices, so that a refused login or certificate ends the wait (the error callback
	 * runs in rd_kafka_poll) instead of the whole timeout */
	for (int waited = 0; waited < timeout_ms && err != RD_KAFKA_RESP_ERR_NO_ERROR;) {
		int slice = timeout_ms - waited < 500 ? timeout_ms - waited : 500;

		err = rd_kafka_metadata(p->rk, 0, NULL, &md, slice);
		waited += slice;
		rd_kafka_poll(p->rk, 0);
		/* `check` says at once what a refusal is; run waits out its grace */
		if (err != RD_KAFKA_RESP_ERR_NO_ERROR && p->grace.refusal[0]) {
			if (errbuf) {
				snprintf(errbuf, errlen, "%s", p->grace.refusal);
			}
			return -EPERM;
		}
	}
	if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
		refusal_ended(p);
	}
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
		if (errbuf) {
			snprintf(errbuf, errlen, "no broker answered within %d ms: %s%s%s",
				 timeout_ms, rd_kafka_err2str(err),
				 p->last_error[0] ? "; last error: " : "", p->last_error);
		}
		return -EIO;
	}
	buf_add_fmt(&line, "%d broker%s:", md->broker_cnt, md->broker_cnt == 1 ? "" : "s");
	for (int i = 0; i < md->broker_cnt; i++) {
		buf_add_fmt(&line, " %s:%d", md->brokers[i].host, md->brokers[i].port);
	}
	if (errbuf) {
		snprintf(errbuf, errlen, "%s", buf_cstr(&line));
	}
	buf_fini(&line);
	rd_kafka_metadata_destroy(md);
	return 0;
}

int64_t
producer_topic_lookups(const struct producer *p)
{
	return p->lookups;
}

int
producer_queue_len(struct producer *p)
{
	return rd_kafka_outq_len(p->rk);
}

int64_t
producer_max_message_bytes(const struct producer *p)
{
	return p->max_message_bytes;
}

/*
 * What is queued and not yet sent is purged at once: it never reached a broker, so purging it
 * leaves nothing half done. What is in flight is given @inflight_ms to be answered, since
 * purging an in-flight request makes an idempotent producer with the gap-less guarantee raise
 * its fatal error ("Purged in flight"): harmless in a producer about to be destroyed, but not to
 * be mistaken for a new failure.
 */
int
producer_discard(struct producer *p, int64_t inflight_ms, char *fatal, size_t fatallen)
{
	char err[512];
	bool was_fatal;
	int purged;

	if (fatal && fatallen) {
		fatal[0] = '\0';
	}
	if (!p) {
		return 0;
	}
	/* a fatal error raised before the call: its event is served (and logged) as usual first */
	rd_kafka_poll(p->rk, 0);
	was_fatal = rd_kafka_fatal_error(p->rk, err, sizeof(err)) != RD_KAFKA_RESP_ERR_NO_ERROR;
	p->discarding = true;
	rd_kafka_purge(p->rk, RD_KAFKA_PURGE_F_QUEUE);
	rd_kafka_poll(p->rk, 0); /* their reports, so that purged_late counts only the later ones */
	if (inflight_ms <= 0 ||
	    rd_kafka_flush(p->rk, inflight_ms > INT_MAX ? INT_MAX : (int)inflight_ms) !=
		    RD_KAFKA_RESP_ERR_NO_ERROR) {
		p->purged_late = 0; /* counted from here by on_dr() */
		rd_kafka_purge(p->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
		rd_kafka_poll(p->rk, 0);
	}
	purged = p->purged_late > 0 ? p->purged_late : 0;
	if (!was_fatal && fatal &&
	    rd_kafka_fatal_error(p->rk, err, sizeof(err)) != RD_KAFKA_RESP_ERR_NO_ERROR) {
		snprintf(fatal, fatallen, "%s", err);
	}
	for (size_t i = 0; i < p->topics_cap; i++) {
		if (p->topics[i].name) {
			rd_kafka_topic_destroy(p->topics[i].rkt);
			free(p->topics[i].name);
		}
	}
	free(p->topics);
	rd_kafka_queue_destroy(p->mainq);
	rd_kafka_destroy(p->rk);
	free(p);
	return purged;
}

void
producer_free(struct producer *p)
{
	(void)producer_discard(p, 0, NULL, 0);
}
