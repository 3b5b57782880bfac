/* SPDX-License-Identifier: Apache-2.0 */
/* The producer's topic handles by name (producer_int.h). */
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/hash.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/now.h"
#include "producer_int.h"

#define MOD "producer"

/* Topics produced to so far (struct topic_slot), by name: see producer_topics_get(). Open
 * addressing, never more than half full. */

/* beyond that many names, records go by name, without a lookup first; librdkafka then finds the
 * topic by a scan of all it knows, per record */
#define TOPICS_MAX		65536
#define TOPIC_LOOKUP_MS		500
#define TOPIC_LOOKUP_BACKOFF_US 10000000 /* after a lookup timed out, new topics do not wait */
#define TOPIC_LOOKUPS_PER_S	10	 /* see producer_topics_get() */
#define TOPIC_LOOKUP_US_PER_S	100000	 /* and at most this long spent in them each second */
/*
 * librdkafka's statistics describe every topic and partition: with 10,000 one-partition topics
 * the bench measured outboxd's peak RSS at 294 MB with them (every 10 s) and 60 MB without, and
 * a quarter of its CPU. Past this many topics, a warning says so once.
 */
#define TOPICS_STATS_WARN 1000

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
struct topic_slot *
producer_topics_slot(struct producer *p, const char *name)
{
	if (!p->topics_cap) {
		return NULL;
	}
	for (size_t j = topic_hash(name) & (p->topics_cap - 1); p->topics[j].name;
	     j = (j + 1) & (p->topics_cap - 1)) {
		if (strcmp(p->topics[j].name, name) == 0) {
			return &p->topics[j];
		}
	}
	return NULL;
}

struct topic_slot *
producer_topics_add(struct producer *p, const char *name)
{
	struct topic_slot *t = producer_topics_slot(p, name);
	size_t j;

	if (t || p->topics_n >= TOPICS_MAX) {
		return t;
	}
	if ((p->topics_n + 1) * 2 > p->topics_cap) {
		topics_grow(p);
	}
	for (j = topic_hash(name) & (p->topics_cap - 1); p->topics[j].name;
	     j = (j + 1) & (p->topics_cap - 1)) {
	}
	t = &p->topics[j];
	*t = (struct topic_slot){ .name = xstrdup(name),
				  /* with creation off, every topic is taken to exist (or to
				   * be auto-created by the broker) */
				  .state = p->tc ? TOPIC_UNCHECKED : TOPIC_READY };
	p->topics_n++;
	return t;
}

rd_kafka_topic_t *
producer_topics_open(struct producer *p, struct topic_slot *t)
{
	const struct rd_kafka_metadata *md = NULL;
	rd_kafka_resp_err_t err;
	int64_t t0;

	if (t->rkt) {
		return t->rkt;
	}
	t->rkt = rd_kafka_topic_new(p->rk, t->name, NULL);
	if (!t->rkt) {
		return NULL; /* an invalid name: producev by name reports why */
	}
	if (++p->topics_open == TOPICS_STATS_WARN && p->stats_on) {
		log_warn(
			MOD,
			"%d topics produced to: librdkafka's statistics grow with every topic and "
			"partition (about 24 KB of memory each, and CPU, every outboxd.kafka.stats.ms); "
			"set outboxd.kafka.stats.ms=0, or a longer interval, unless the "
			"outboxd_kafka_* metrics are needed",
			TOPICS_STATS_WARN);
	}
	/* a topic just created is known to exist: librdkafka asks for it at once */
	if (!p->lookup || t->tries || lookup_budget_spent(p)) {
		return t->rkt;
	}
	p->lookups++;
	t0 = now_monotonic_us();
	err = rd_kafka_metadata(p->rk, 0, t->rkt, &md, TOPIC_LOOKUP_MS);
	p->lookup_us_in_window += now_monotonic_us() - t0;
	if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
		rd_kafka_metadata_destroy(md);
	} else {
		p->lookup_skip_until_us = now_monotonic_us() + TOPIC_LOOKUP_BACKOFF_US;
		log_debug(MOD, "no metadata for topic %s within %d ms; librdkafka keeps asking",
			  t->name, TOPIC_LOOKUP_MS);
	}
	return t->rkt;
}

rd_kafka_topic_t *
producer_topics_get(struct producer *p, const char *name)
{
	struct topic_slot *t = producer_topics_add(p, name);

	return t ? producer_topics_open(p, t) : NULL;
}

void
producer_topics_free(struct producer *p)
{
	for (size_t i = 0; i < p->topics_cap; i++) {
		if (p->topics[i].name) {
			if (p->topics[i].rkt) {
				rd_kafka_topic_destroy(p->topics[i].rkt);
			}
			free(p->topics[i].name);
		}
	}
	free(p->topics);
	p->topics = NULL;
	p->topics_cap = p->topics_n = p->topics_open = 0;
}

int
producer_topics_exists(struct producer *p, const char *name, int timeout_ms)
{
	const struct rd_kafka_metadata *md = NULL;
	rd_kafka_topic_t *rkt = rd_kafka_topic_new(p->rk, name, NULL);
	int yes = -1;

	if (!rkt) {
		return 0;
	}
	if (rd_kafka_metadata(p->rk, 0, rkt, &md, timeout_ms) == RD_KAFKA_RESP_ERR_NO_ERROR) {
		if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
		    md->topics[0].partition_cnt > 0) {
			yes = 1;
		} else if (md->topic_cnt == 1 &&
			   (md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
			    md->topics[0].err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED)) {
			yes = 0;
		}
		rd_kafka_metadata_destroy(md);
	}
	rd_kafka_topic_destroy(rkt);
	return yes;
}
