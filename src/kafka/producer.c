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
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/now.h"
#include "producer_int.h"

#define MOD "producer"

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
	if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR && !producer_report_proven(m->offset, p->acks)) {
		/* not proof of a write: the session replays from the confirmed position instead */
		snprintf(
			p->report, sizeof(p->report),
			"topic %s partition %d: librdkafka reported the record delivered without an "
			"offset (acknowledged only by a later batch's success), which does not prove "
			"the broker wrote it; publishing again from the last confirmed position",
			m->rkt ? rd_kafka_topic_name(m->rkt) : "?", (int)m->partition);
		p->failure = (struct sink_failure){ .size = m->len + m->key_len };
		p->on_delivery(p->opaque, m->_private, false, p->report);
		p->failure = (struct sink_failure){ 0 };
		return;
	}
	if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
		p->last_ok_us = now_monotonic_us();
		p->leaderless_answered = p->leaderless_us != 0;
		if (p->grace.first_us) {
			/* a broker took the record: its login and certificates were accepted */
			refusal_ended(p);
		}
		p->on_delivery(p->opaque, m->_private, true, NULL);
		return;
	}
	if ((m->err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
	     m->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) &&
	    !p->unknown_topic[0] && m->rkt) {
		/* judged after the callbacks (producer_precondition()): a topic a broker is
		 * creating automatically fails its first records alike */
		snprintf(p->unknown_topic, sizeof(p->unknown_topic), "%s",
			 rd_kafka_topic_name(m->rkt));
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

bool
producer_report_proven(int64_t offset, int acks)
{
	return acks == 0 || offset >= 0;
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
	/* enable.gapless.guarantee is forced on purpose; librdkafka calls it experimental. */
	if (strcmp(fac, "CONFWARN") == 0 && strstr(buf, "enable.gapless.guarantee")) {
		log_debug("rdkafka", "%s: %s", fac, buf);
		return;
	}
	if (strcmp(fac, "METADATAUPDATE") == 0 && strstr(buf, "new leader-1 not found in cache")) {
		struct producer *p = rd_kafka_opaque(rk);

		p->leaderless_us = now_monotonic_us();
		p->leaderless_answered = false;
		snprintf(p->leaderless, sizeof(p->leaderless), "%s", buf);
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
	if (producer_conf_apply(conf, settings, errbuf, errlen) < 0) {
		rd_kafka_conf_destroy(conf);
		free(p);
		return -EINVAL;
	}
	p->max_message_bytes = producer_conf_int(conf, "message.max.bytes");
	/* the same bounds for the records held while their topics are created */
	p->held_max = producer_conf_int(conf, "queue.buffering.max.messages");
	p->held_max_bytes = producer_conf_int(conf, "queue.buffering.max.kbytes") * 1024;
	p->acks = (int)producer_conf_int(conf, "acks");
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
	if (producer_create_init(p, settings, wake_fd, errbuf, errlen) < 0) {
		producer_free(p);
		return -EINVAL;
	}
	*ret = p;
	return 0;
}

int
producer_send(struct producer *p, const struct sink_record *rec, void *msg_opaque, char *errbuf,
	      size_t errlen)
{
	int held = p->tc ? producer_create_hold(p, rec, msg_opaque, errbuf, errlen) : 0;

	if (held) {
		return held < 0 ? held : 0; /* its topic is being created: sent once it exists */
	}
	return producer_produce(p, producer_topics_get(p, rec->topic), rec, msg_opaque, errbuf,
				errlen);
}

void
producer_poll(struct producer *p)
{
	rd_kafka_poll(p->rk, 0);
	producer_create_serve(p);
}

int
producer_flush(struct producer *p, int timeout_ms)
{
	int64_t end = now_monotonic_us() + (int64_t)timeout_ms * 1000;

	/* records held for their topics' creation (producer_create.c) count as queued */
	for (;;) {
		int64_t left_ms = (end - now_monotonic_us()) / 1000;
		int slice = p->nheld ? (left_ms < 100 ? (int)left_ms : 100) : (int)left_ms;

		producer_create_serve(p);
		if (p->nheld && !rd_kafka_outq_len(p->rk)) {
			/* all of it held: rd_kafka_flush() would return at once; wait for the
			 * creation's answer instead */
			producer_create_wait(p, slice > 0 ? slice : 0);
		} else if (rd_kafka_flush(p->rk, slice > 0 ? slice : 0) ==
				   RD_KAFKA_RESP_ERR_NO_ERROR &&
			   !p->nheld) {
			return 0;
		}
		if (now_monotonic_us() >= end) {
			return -ETIMEDOUT;
		}
	}
}

/*
 * librdkafka#5430 (open; 2.5.0 and later): a produce response that names no leader for a
 * partition (leader -1, as when a KRaft controller fences a broker for a moment) makes
 * librdkafka log "new leader-1 not found in cache" and may leave that partition without a leader
 * for good, later metadata notwithstanding; with message.timeout.ms=0 its records then wait
 * forever. Only a new producer recovers, so the producer counts as ended (the session starts
 * again from the last confirmed position) when, after that line, a record was delivered (the
 * broker answers: not an outage, which stays one session) and yet records have waited
 * LEADERLESS_WAIT_US with no delivery at all. A partition that is really without a leader for
 * longer costs one restart per such line, not one per wait: the new producer has not seen it.
 */
#define LEADERLESS_WAIT_US (5 * 1000000LL)
#define UNKNOWN_LOOKUP_MS  5000
#define UNKNOWN_QUIET_US   (15 * 1000000LL) /* no broker error for this long before */

bool
producer_leaderless_wedged(int64_t leaderless_us, bool answered, int waiting, int64_t last_ok_us,
			   int64_t now_us)
{
	int64_t since = last_ok_us > leaderless_us ? last_ok_us : leaderless_us;

	return leaderless_us && answered && waiting > 0 && now_us - since >= LEADERLESS_WAIT_US;
}

static bool
leaderless_wedged(const struct producer *p, int64_t now_us)
{
	return producer_leaderless_wedged(p->leaderless_us, p->leaderless_answered,
					  rd_kafka_outq_len(p->rk), p->last_ok_us, now_us);
}

bool
producer_fatal(struct producer *p, char *errbuf, size_t errlen)
{
	char err[512];

	if (rd_kafka_fatal_error(p->rk, err, sizeof(err)) == RD_KAFKA_RESP_ERR_NO_ERROR) {
		int64_t now = now_monotonic_us();

		if (!leaderless_wedged(p, now)) {
			return false;
		}
		if (errbuf) {
			snprintf(
				errbuf, errlen,
				"librdkafka left a partition without a leader (\"%s\") and has "
				"delivered nothing for %lld s while %d records wait, although the "
				"broker answered since (librdkafka issue 5430): a new producer takes "
				"over",
				p->leaderless, (long long)((now - p->last_ok_us) / 1000000),
				rd_kafka_outq_len(p->rk));
		}
		return true;
	}
	if (errbuf) {
		snprintf(errbuf, errlen, "%s", err);
	}
	return true;
}

/*
 * A record failed as of an unknown topic: a refusal (exit 2) only when the cluster says the
 * topic does not exist, asked now, and the brokers reported no error for UNKNOWN_QUIET_US. A
 * broker that creates topics automatically (the producer's metadata request has it create the
 * topic) fails alike the records that waited for a new topic through an outage longer than
 * topic.metadata.propagation.max.ms; then the failed record restarts the session, which finds
 * the topic. Said once as a refusal, not as a poison row or a session restarted again and
 * again: the next start publishes the record again from the slot. Blocks up to
 * UNKNOWN_LOOKUP_MS, on this rare path only.
 */
static void
judge_unknown_topic(struct producer *p)
{
	const char *t = p->unknown_topic;
	bool quiet = !p->last_error_us || now_monotonic_us() - p->last_error_us >= UNKNOWN_QUIET_US;

	/* right after a broker came back, its first answers may still say "unknown" for a topic
	 * it is about to create automatically (measured: a KRaft broker a second after its
	 * restart, its coordinator loading): no refusal then; the next session asks again */
	if (!p->precondition[0] && quiet && producer_topics_exists(p, t, UNKNOWN_LOOKUP_MS) == 0) {
		snprintf(
			p->precondition, sizeof(p->precondition),
			p->tc ? "topic %s does not exist any more (outboxd created or found it "
				"earlier): create it again, or restart outboxd to create it" :
				"topic %s does not exist and the broker does not create it "
				"(auto.create.topics.enable=false): create it; or, in a Kafka "
				"Connect connector file, set topic.creation.default.partitions and "
				"topic.creation.default.replication.factor for outboxd to create "
				"topics as Kafka Connect does",
			t);
	}
	p->unknown_topic[0] = '\0';
}

bool
producer_precondition(struct producer *p, char *errbuf, size_t errlen)
{
	if (p->unknown_topic[0]) {
		judge_unknown_topic(p);
	}
	if (!p->precondition[0]) {
		return false;
	}
	if (errbuf) {
		snprintf(errbuf, errlen, "%s", p->precondition);
	}
	return true;
}

int
producer_check_topic_creation(struct producer *p, int timeout_ms, struct buf *out)
{
	return producer_create_check(p, timeout_ms, out);
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
	return rd_kafka_outq_len(p->rk) + p->nheld;
}

int64_t
producer_max_message_bytes(const struct producer *p)
{
	return p->max_message_bytes;
}

/*
 * What is queued and in flight is given @inflight_ms to be answered, and purged after that:
 * purging a produce request that has its sequence numbers makes an idempotent producer with the
 * gap-less guarantee raise its fatal error ("Purged in flight", "Purged in queue"), harmless in
 * a producer about to be destroyed but not to be mistaken for a new failure. With one request
 * in flight per broker (max.in.flight.requests.per.connection=1), librdkafka holds the next one
 * already built, numbered and waiting in its transmit queue, so the queue is not purged first:
 * what it holds goes out within the same wait (at least once: the next session sends it again).
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
	/* records held for a topic's creation never reached librdkafka: failed too */
	producer_create_fail(p, "not sent: the producer ended before its topic was created");
	producer_create_free(p);
	producer_topics_free(p);
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
