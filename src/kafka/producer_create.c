/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kafka Connect's topic creation (KIP-158, connect/topiccreation.h) in the producer: the first
 * record of a topic asks CreateTopics with its group's settings, asynchronously (librdkafka's
 * Admin API on the producer's own handle, the result on adminq, which wakes the main loop as
 * the delivery reports do), and that topic's records are held, in order, until the topic exists;
 * then they go to librdkafka as any other. Until then librdkafka knows nothing of the topic, so
 * its metadata requests cannot have the broker auto-create it with the broker's defaults first.
 *
 * Connect asks describeTopics first and creates only a missing topic; CreateTopics answering
 * TOPIC_ALREADY_EXISTS is the same knowledge in one round trip. Connect fails its task when the
 * creation fails; outboxd classifies: a refusal no retry fixes (no CREATE permission on a topic
 * that does not exist, a replication factor or setting the cluster refuses) stops the process
 * with exit 2 and the fix (producer_precondition()); no answer (an outage, a timeout, a
 * controller moving) is retried with a backoff while the records wait, as any delivery does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/topiccreation.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/now.h"
#include "producer_int.h"

#define MOD "producer"

#define PREFIX "outboxd.topic.creation."

#define CREATE_TIMEOUT_MS 30000
#define RETRY_MIN_US	  1000000
#define RETRY_MAX_US	  30000000
#define EXISTS_LOOKUP_MS  5000

/* A record copied until its topic exists. */
struct held {
	struct held *next;
	struct sink_record rec; /* its pointers into data */
	void *opaque;
	struct sink_header *hdrs;
	size_t size; /* of data */
	char data[];
};

int
producer_create_init(struct producer *p, const struct kv *settings, int wake_fd, char *errbuf,
		     size_t errlen)
{
	struct kv keys = KV_INIT;
	int rc;

	for (size_t i = 0; i < settings->n; i++) {
		if (strncmp(settings->v[i].key, PREFIX, strlen(PREFIX)) == 0) {
			kv_set(&keys, settings->v[i].key, settings->v[i].value,
			       settings->v[i].origin);
		}
	}
	rc = topiccreation_parse(&keys, PREFIX, true, &p->tc, errbuf, errlen);
	kv_fini(&keys);
	if (rc < 0 || !p->tc) {
		return rc;
	}
	p->adminq = rd_kafka_queue_new(p->rk);
	if (wake_fd >= 0) {
		rd_kafka_queue_io_event_enable(p->adminq, wake_fd, "1", 1);
	}
	for (size_t i = 0; i < topiccreation_ngroups(p->tc); i++) {
		struct buf d = BUF_INIT;

		topiccreation_describe(topiccreation_group(p->tc, i), &d);
		log_info(MOD, "topics are created as Kafka Connect creates them: group %s: %s",
			 topiccreation_group(p->tc, i)->name, buf_cstr(&d));
		buf_fini(&d);
	}
	return 0;
}

/* CreateTopics for @t with its group's settings; the result comes on adminq. */
static void
ask(struct producer *p, struct topic_slot *t)
{
	const struct topiccreation_group *g = topiccreation_match(p->tc, t->name);
	char err[256];
	rd_kafka_NewTopic_t *nt =
		rd_kafka_NewTopic_new(t->name, g->partitions, g->replication, err, sizeof(err));
	rd_kafka_AdminOptions_t *o;

	t->state = TOPIC_CREATING;
	t->tries++;
	if (!nt) {
		snprintf(p->precondition, sizeof(p->precondition),
			 "topic %s cannot be created with group %s's settings: %s", t->name,
			 g->name, err);
		return;
	}
	for (size_t i = 0; i < g->settings->n; i++) {
		rd_kafka_NewTopic_set_config(nt, g->settings->v[i].key, g->settings->v[i].value);
	}
	o = rd_kafka_AdminOptions_new(p->rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
	rd_kafka_AdminOptions_set_request_timeout(o, CREATE_TIMEOUT_MS, err, sizeof(err));
	rd_kafka_AdminOptions_set_operation_timeout(o, CREATE_TIMEOUT_MS, err, sizeof(err));
	rd_kafka_AdminOptions_set_opaque(o, t->name);
	rd_kafka_CreateTopics(p->rk, &nt, 1, o, p->adminq);
	rd_kafka_AdminOptions_destroy(o);
	rd_kafka_NewTopic_destroy(nt);
}

int
producer_create_hold(struct producer *p, const struct sink_record *rec, void *msg_opaque,
		     char *errbuf, size_t errlen)
{
	struct topic_slot *t = producer_topics_add(p, rec->topic);
	size_t size = strlen(rec->topic) + 1 + (rec->key ? rec->key_len : 0) +
		      (rec->value ? rec->value_len : 0);
	struct held *h;
	char *d;

	if (!t || (t->state == TOPIC_READY && !t->held)) {
		return 0; /* exists, nothing of it waits: send now (past the table's bound, too) */
	}

	for (size_t i = 0; i < rec->nheaders; i++) {
		size += strlen(rec->headers[i].name) + 1 +
			(rec->headers[i].value ? rec->headers[i].len : 0);
	}
	/* held within librdkafka's own queue bounds (records and bytes): beyond them the source
	 * waits (-EAGAIN), as for a full queue */
	if (p->nheld &&
	    (p->nheld >= p->held_max || p->held_bytes + (int64_t)size > p->held_max_bytes)) {
		snprintf(errbuf, errlen, "%d records wait for their topics to be created",
			 p->nheld);
		return -EAGAIN;
	}
	h = xmalloc(sizeof(*h) + size);
	h->size = size;
	h->next = NULL;
	h->opaque = msg_opaque;
	h->rec = *rec;
	h->hdrs = rec->nheaders ? xcalloc(rec->nheaders, sizeof(*h->hdrs)) : NULL;
	d = h->data;
	h->rec.topic = memcpy(d, rec->topic, strlen(rec->topic) + 1);
	d += strlen(rec->topic) + 1;
	if (rec->key) {
		h->rec.key = memcpy(d, rec->key, rec->key_len);
		d += rec->key_len;
	}
	if (rec->value) {
		h->rec.value = memcpy(d, rec->value, rec->value_len);
		d += rec->value_len;
	}
	for (size_t i = 0; i < rec->nheaders; i++) {
		const struct sink_header *s = &rec->headers[i];

		h->hdrs[i].name = memcpy(d, s->name, strlen(s->name) + 1);
		d += strlen(s->name) + 1;
		h->hdrs[i].len = s->len;
		if (s->value) {
			h->hdrs[i].value = memcpy(d, s->value, s->len);
			d += s->len;
		}
	}
	h->rec.headers = h->hdrs;
	if (p->held_tail) {
		p->held_tail->next = h;
	} else {
		p->held_head = h;
	}
	p->held_tail = h;
	p->nheld++;
	p->held_bytes += (int64_t)size;
	t->held++;
	if (t->state == TOPIC_UNCHECKED) {
		ask(p, t);
	}
	return 1;
}

/* The fix for a creation refused with @err, or NULL when a retry may succeed. */
static const char *
creation_fix(rd_kafka_resp_err_t err)
{
	switch (err) {
	case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
	case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
		return "grant the principal CREATE on the cluster or on the topic (kafka-acls.sh "
		       "--add --allow-principal User:<name> --operation Create --topic <topic>), or "
		       "create the topic beforehand";
	case RD_KAFKA_RESP_ERR_INVALID_REPLICATION_FACTOR:
		return "lower topic.creation.<group>.replication.factor to the number of brokers, or "
		       "set it to -1 for the broker's default.replication.factor";
	case RD_KAFKA_RESP_ERR_INVALID_PARTITIONS:
		return "fix topic.creation.<group>.partitions (at least 1, or -1 for the broker's "
		       "num.partitions)";
	case RD_KAFKA_RESP_ERR_INVALID_CONFIG:
	case RD_KAFKA_RESP_ERR_POLICY_VIOLATION:
	case RD_KAFKA_RESP_ERR_INVALID_REQUEST:
	case RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION:
	case RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION:
		return "fix the topic.creation.<group>.* settings the broker refuses, or create the "
		       "topic beforehand";
	default: return NULL;
	}
}

/* One topic's CreateTopics answer. */
static void
answered(struct producer *p, struct topic_slot *t, rd_kafka_resp_err_t err, const char *msg)
{
	const struct topiccreation_group *g = topiccreation_match(p->tc, t->name);
	const char *fix = creation_fix(err);
	struct buf d = BUF_INIT;
	int there = 0;

	if (err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
	    err == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED) {
		/* a refusal to create what exists (WRITE without CREATE) is none: Connect asks
		 * whether the topic exists first; a lookup with no answer is no refusal yet:
		 * asked again. Blocks up to EXISTS_LOOKUP_MS, on this rare path only. */
		there = producer_topics_exists(p, t->name, EXISTS_LOOKUP_MS);
		fix = there < 0 ? NULL : fix;
	} else if (err == RD_KAFKA_RESP_ERR_INVALID_REPLICATION_FACTOR && t->tries < 4) {
		fix = NULL; /* also while brokers restart: a refusal once it persists, ~7 s */
	}
	if (err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS ||
	    there > 0) {
		if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
			topiccreation_describe(g, &d);
			log_info(MOD, "created topic %s (group %s: %s)", t->name, g->name,
				 buf_cstr(&d));
		}
		t->state = TOPIC_READY;
		p->release_due = true;
	} else if (fix) {
		if (!p->precondition[0]) {
			snprintf(p->precondition, sizeof(p->precondition),
				 "topic %s was not created (group %s): %s (%s): %s", t->name,
				 g->name, msg && *msg ? msg : rd_kafka_err2str(err),
				 rd_kafka_err2name(err), fix);
		}
		t->state = TOPIC_RETRY;
		t->retry_us = INT64_MAX; /* never: the process stops */
	} else {
		int64_t backoff = RETRY_MIN_US << (t->tries < 5 ? t->tries - 1 : 5);

		t->state = TOPIC_RETRY;
		t->retry_us =
			now_monotonic_us() + (backoff < RETRY_MAX_US ? backoff : RETRY_MAX_US);
		if (!p->next_retry_us || t->retry_us < p->next_retry_us) {
			p->next_retry_us = t->retry_us;
		}
		log_warn(MOD,
			 "topic %s: not created yet (%s: %s); asking again in %lld s, its records "
			 "wait",
			 t->name, rd_kafka_err2name(err), msg && *msg ? msg : rd_kafka_err2str(err),
			 (long long)((t->retry_us - now_monotonic_us()) / 1000000));
	}
	buf_fini(&d);
}

/* One CreateTopics result from adminq, served and destroyed. */
static void
result(struct producer *p, rd_kafka_event_t *ev)
{
	const rd_kafka_CreateTopics_result_t *r = rd_kafka_event_CreateTopics_result(ev);
	const char *name = rd_kafka_event_opaque(ev);
	struct topic_slot *t = name ? producer_topics_slot(p, name) : NULL;
	const rd_kafka_topic_result_t **res;
	size_t n = 0;

	res = r ? rd_kafka_CreateTopics_result_topics(r, &n) : NULL;
	if (t && n == 1) {
		answered(p, t, rd_kafka_topic_result_error(res[0]),
			 rd_kafka_topic_result_error_string(res[0]));
	} else if (t) {
		/* the request as a whole failed (no broker, a timeout) */
		answered(p, t, rd_kafka_event_error(ev), rd_kafka_event_error_string(ev));
	}
	rd_kafka_event_destroy(ev);
}

/* The CreateTopics results waiting on adminq. */
static void
results(struct producer *p)
{
	rd_kafka_event_t *ev;

	while ((ev = rd_kafka_queue_poll(p->adminq, 0))) {
		result(p, ev);
	}
}

void
producer_create_wait(struct producer *p, int ms)
{
	rd_kafka_event_t *ev;

	if (!p->adminq) {
		return;
	}
	if (p->next_retry_us) {
		int64_t until = (p->next_retry_us - now_monotonic_us()) / 1000;

		ms = until < ms ? (until > 0 ? (int)until : 0) : ms;
	}
	ev = rd_kafka_queue_poll(p->adminq, ms);
	if (ev) {
		result(p, ev);
	}
	producer_create_serve(p);
}

/* Reports @h failed (it never reached librdkafka) and frees it. */
static void
fail_one(struct producer *p, struct held *h, const char *why, bool refused)
{
	snprintf(p->report, sizeof(p->report), "topic %s: %s", h->rec.topic, why);
	p->failure = (struct sink_failure){ .size = h->rec.key_len + h->rec.value_len,
					    .refused = refused };
	for (size_t i = 0; i < h->rec.nheaders; i++) {
		if (strcmp(h->hdrs[i].name, "id") == 0) {
			p->failure.id = h->hdrs[i].value;
			p->failure.id_len = h->hdrs[i].len;
		}
	}
	if (p->on_delivery) {
		p->on_delivery(p->opaque, h->opaque, false, p->report);
	}
	p->failure = (struct sink_failure){ 0 };
	free(h->hdrs);
	free(h);
}

/* The held records whose topics exist, in order, until librdkafka's queue is full. */
static void
release(struct producer *p)
{
	struct held **pp = &p->held_head, *prev = NULL;

	while (*pp) {
		struct held *h = *pp;
		struct topic_slot *t = producer_topics_slot(p, h->rec.topic);
		char err[256] = "";
		int rc;

		if (t && t->state != TOPIC_READY) {
			prev = h;
			pp = &h->next;
			continue;
		}
		rc = producer_produce(p, t ? producer_topics_open(p, t) : NULL, &h->rec, h->opaque,
				      err, sizeof(err));
		if (rc == -EAGAIN) {
			p->release_due =
				true; /* the rest keep their order: the next serve goes on */
			break;
		}
		*pp = h->next;
		if (p->held_tail == h) {
			p->held_tail = prev;
		}
		p->nheld--;
		p->held_bytes -= (int64_t)h->size;
		if (t) {
			t->held--;
		}
		if (rc < 0) {
			fail_one(p, h, err, rc == -EMSGSIZE);
		} else {
			free(h->hdrs);
			free(h);
		}
	}
}

void
producer_create_serve(struct producer *p)
{
	int64_t now;

	if (!p->tc) {
		return;
	}
	results(p);
	now = now_monotonic_us();
	if (p->next_retry_us && now >= p->next_retry_us) {
		/* the topics whose retry is due asked again; the next earliest kept */
		p->next_retry_us = 0;
		for (struct held *h = p->held_head; h; h = h->next) {
			struct topic_slot *t = producer_topics_slot(p, h->rec.topic);

			if (t && t->state == TOPIC_RETRY && now >= t->retry_us) {
				ask(p, t);
			} else if (t && t->state == TOPIC_RETRY &&
				   (!p->next_retry_us || t->retry_us < p->next_retry_us)) {
				p->next_retry_us = t->retry_us;
			}
		}
	}
	/* only when something can go: the list is walked whole */
	if (p->release_due) {
		p->release_due = false;
		release(p);
	}
}

void
producer_create_fail(struct producer *p, const char *why)
{
	while (p->held_head) {
		struct held *h = p->held_head;
		struct topic_slot *t = producer_topics_slot(p, h->rec.topic);

		p->held_head = h->next;
		p->nheld--;
		p->held_bytes -= (int64_t)h->size;
		if (t) {
			t->held--;
		}
		fail_one(p, h, why, false);
	}
	p->held_tail = NULL;
}

void
producer_create_free(struct producer *p)
{
	if (p->adminq) {
		rd_kafka_queue_destroy(p->adminq);
		p->adminq = NULL;
	}
	topiccreation_free(p->tc);
	p->tc = NULL;
}

/*
 * CreateTopics for a probe topic with group @g's settings, validate_only (nothing is created):
 * the broker's answer, its text into @msg.
 */
static rd_kafka_resp_err_t
validate(struct producer *p, const struct topiccreation_group *g, int timeout_ms, struct buf *msg)
{
	rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__TIMED_OUT;
	rd_kafka_NewTopic_t *nt;
	rd_kafka_AdminOptions_t *o;
	rd_kafka_queue_t *q;
	rd_kafka_event_t *ev;
	char e[256];

	nt = rd_kafka_NewTopic_new("outboxd-check-topic-creation", g->partitions, g->replication, e,
				   sizeof(e));
	if (!nt) {
		buf_add_str(msg, e);
		return RD_KAFKA_RESP_ERR__INVALID_ARG;
	}
	for (size_t i = 0; i < g->settings->n; i++) {
		rd_kafka_NewTopic_set_config(nt, g->settings->v[i].key, g->settings->v[i].value);
	}
	o = rd_kafka_AdminOptions_new(p->rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
	rd_kafka_AdminOptions_set_validate_only(o, 1, e, sizeof(e));
	rd_kafka_AdminOptions_set_request_timeout(o, timeout_ms, e, sizeof(e));
	q = rd_kafka_queue_new(p->rk);
	rd_kafka_CreateTopics(p->rk, &nt, 1, o, q);
	ev = rd_kafka_queue_poll(q, timeout_ms + 1000);
	if (ev) {
		const rd_kafka_CreateTopics_result_t *r = rd_kafka_event_CreateTopics_result(ev);
		const rd_kafka_topic_result_t **res;
		const char *m;
		size_t n = 0;

		res = r ? rd_kafka_CreateTopics_result_topics(r, &n) : NULL;
		err = n == 1 ? rd_kafka_topic_result_error(res[0]) : rd_kafka_event_error(ev);
		m = n == 1 ? rd_kafka_topic_result_error_string(res[0]) :
			     rd_kafka_event_error_string(ev);
		buf_add_str(msg, m && *m ? m : rd_kafka_err2str(err));
		rd_kafka_event_destroy(ev);
	} else {
		buf_add_str(msg, rd_kafka_err2str(err));
	}
	rd_kafka_queue_destroy(q);
	rd_kafka_AdminOptions_destroy(o);
	rd_kafka_NewTopic_destroy(nt);
	return err;
}

int
producer_create_check(struct producer *p, int timeout_ms, struct buf *out)
{
	const struct topiccreation_group *g;
	struct buf msg = BUF_INIT;
	rd_kafka_resp_err_t err;
	const char *fix;
	int level;

	if (!p->tc) {
		buf_add_str(out,
			    "off: topics must exist, or the broker creates them "
			    "(auto.create.topics.enable); topic.creation.default.partitions and "
			    ".replication.factor turn Kafka Connect's creation on");
		return 0;
	}
	for (size_t i = 0; i < topiccreation_ngroups(p->tc); i++) {
		g = topiccreation_group(p->tc, i);
		buf_add_fmt(out, "%sgroup %s: ", i ? "; " : "", g->name);
		topiccreation_describe(g, out);
	}
	/* what the broker says of creating a topic with the default group's settings, without
	 * creating it: the permission, the replication factor, the settings */
	g = topiccreation_group(p->tc, topiccreation_ngroups(p->tc) - 1);
	err = validate(p, g, timeout_ms, &msg);
	fix = creation_fix(err);
	if (err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
		buf_add_str(out, "; the broker would create a topic with the default group's "
				 "settings (validated, nothing created)");
		level = 0;
	} else if (err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
		   err == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED ||
		   err == RD_KAFKA_RESP_ERR_POLICY_VIOLATION) {
		/* a warning: an ACL on a prefix or a naming policy may allow the outbox's topics */
		buf_add_fmt(out,
			    "; the broker refuses the topic outboxd-check-topic-creation: %s (%s): "
			    "%s (an ACL on a prefix or a naming policy may still allow the "
			    "outbox's topics)",
			    buf_cstr(&msg), rd_kafka_err2name(err), fix);
		level = 1;
	} else if (fix) {
		buf_add_fmt(out,
			    "; the broker refuses a topic with the default group's settings: "
			    "%s (%s): %s",
			    buf_cstr(&msg), rd_kafka_err2name(err), fix);
		level = 2;
	} else {
		buf_add_fmt(out,
			    "; no answer to whether the broker would create a topic with the "
			    "default group's settings: %s (%s)",
			    buf_cstr(&msg), rd_kafka_err2name(err));
		level = 1;
	}
	buf_fini(&msg);
	return level;
}
