/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PRODUCER_INT_H
#define OUTBOXD_PRODUCER_INT_H

/*
 * What the producer's files share: producer.c (the handle's life, librdkafka's callbacks,
 * flushing, discarding), producer_conf.c (the librdkafka configuration: the settings forced for
 * the guarantee, the user's, the queue's byte bound), producer_topics.c (the topic handles by
 * name, and the first record's metadata lookup of older librdkafka versions), producer_send.c
 * (one record handed to librdkafka) and producer_create.c (Kafka Connect's topic creation: the
 * records of a topic being created held until it exists). Calls go one way: producer.c -> conf,
 * topics, send, create; create -> topics, send. Private to the producer: not installed, not part
 * of its API.
 */

#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/kafka/authgrace.h"
#include "outboxd/kafka/producer.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/kv.h"

struct topiccreation;
struct held;

/* A topic produced to (producer_topics.c), and where its creation stands (producer_create.c). */
struct topic_slot {
	char *name;
	rd_kafka_topic_t *rkt;
	enum {
		TOPIC_UNCHECKED, /* creation on, not asked yet */
		TOPIC_CREATING,	 /* CreateTopics sent, its records held */
		TOPIC_RETRY,	 /* the broker did not answer: asked again at retry_us */
		TOPIC_READY,	 /* exists (or creation off) */
	} state;
	int held;	  /* records of this topic held */
	int64_t retry_us; /* monotonic */
	int tries;
};

struct producer {
	rd_kafka_t *rk;
	rd_kafka_queue_t *mainq;
	producer_on_delivery on_delivery;
	void *opaque;
	producer_on_stats on_stats; /* NULL = none */
	void *stats_arg;
	int64_t max_message_bytes;
	int acks;		   /* librdkafka's acks (-1: all): see producer_report_proven() */
	struct topic_slot *topics; /* producer_topics.c */
	size_t topics_cap;	   /* a power of two */
	size_t topics_n;
	int topics_open;	      /* with a librdkafka handle: see TOPICS_STATS_WARN */
	bool lookup;		      /* producer_needs_topic_lookup() */
	int64_t lookup_skip_until_us; /* monotonic; see producer_topics_get() */
	int64_t lookup_window_us;     /* the start of the second lookups_in_window counts in */
	int lookups_in_window;
	int64_t lookup_us_in_window; /* the time they took */
	int64_t lookups;	     /* every lookup made: producer_topic_lookups() */
	bool stats_on;		     /* statistics.interval.ms > 0: see TOPICS_STATS_WARN */
	char last_error[256];	     /* what the error callback last said about the brokers */
	int64_t last_error_us;	     /* monotonic; 0 = nothing yet */
	char mechanism[32];	     /* librdkafka's sasl.mechanisms (GSSAPI by default) */
	char precondition[768];	     /* a failure no retry fixes: see kafkasec_fix(); "" = none */
	char unknown_topic[256];     /* a record failed as of an unknown topic: judged by
				      * producer_precondition(); "" = none */
	struct authgrace grace;	     /* outboxd.kafka.auth.grace.ms: see authgrace.h */
	bool discarding;	     /* producer_discard() runs: its fatal error is expected */
	int purged_late; /* records producer_discard() purged after its wait (their reports) */
	/* librdkafka#5430: see leaderless_wedged() */
	int64_t leaderless_us;	  /* monotonic: librdkafka's "new leader-1 not found in cache"; 0 */
	bool leaderless_answered; /* a record was delivered after that line */
	int64_t last_ok_us;	  /* monotonic: the last successful delivery report */
	char leaderless[256];	  /* that line */
	char report[768];	  /* the failed delivery report's reason, during the callback */
	struct sink_failure failure; /* and the rest of what it says */
	/* KIP-158 (producer_create.c): NULL when topics are not created */
	struct topiccreation *tc;
	rd_kafka_queue_t *adminq; /* CreateTopics results */
	struct held *held_head, *held_tail;
	int nheld;
	int64_t held_bytes;
	int64_t held_max, held_max_bytes; /* librdkafka's queue bounds, for the held too */
	bool release_due;		  /* a topic turned ready, or librdkafka's queue was full */
	int64_t next_retry_us;		  /* monotonic: the earliest creation asked again; 0 none */
};

/*
 * Sets @settings on @conf, with the settings forced for the delivery guarantee where the user
 * gave none and the queue's byte bound; -EINVAL with @errbuf naming the setting.
 */
int producer_conf_apply(rd_kafka_conf_t *conf, const struct kv *settings, char *errbuf,
			size_t errlen);
/* A numeric setting of @conf as librdkafka holds it; -1 if unknown. */
int64_t producer_conf_int(rd_kafka_conf_t *conf, const char *key);

/* The topic handle for @name (made, and looked up, the first time), or NULL past the table's
 * bound or for an invalid name: the record then goes by name. */
rd_kafka_topic_t *producer_topics_get(struct producer *p, const char *name);
/* Destroys every topic handle. */
void producer_topics_free(struct producer *p);
/* The slot of topic @name, or NULL (never produced to, or past the table's bound). */
struct topic_slot *producer_topics_slot(struct producer *p, const char *name);
/* The slot of topic @name, made without a handle if new; NULL past the table's bound. */
struct topic_slot *producer_topics_add(struct producer *p, const char *name);
/* The slot's handle, made (and looked up) the first time; NULL for an invalid name. */
rd_kafka_topic_t *producer_topics_open(struct producer *p, struct topic_slot *t);

/*
 * Whether topic @name exists, from a metadata request that waits up to @timeout_ms: 1 yes, 0
 * the cluster says it does not (or hides it), -1 no answer, or a topic being created (the
 * producer's request has a broker that creates topics automatically create it: such a topic is
 * LEADER_NOT_AVAILABLE at first).
 */
int producer_topics_exists(struct producer *p, const char *name, int timeout_ms);

/* Hands one record to librdkafka (@rkt NULL: by name); as producer_send(). */
int producer_produce(struct producer *p, rd_kafka_topic_t *rkt, const struct sink_record *rec,
		     void *msg_opaque, char *errbuf, size_t errlen);

/*
 * Topic creation (producer_create.c). producer_create_init(): read the outboxd.topic.creation.*
 * keys of @settings (config.c's copy of the connector's topic.creation.*); no key, no creation.
 * Return: 0, or -EINVAL with the reason.
 */
int producer_create_init(struct producer *p, const struct kv *settings, int wake_fd, char *errbuf,
			 size_t errlen);
/*
 * producer_create_hold() - @rec for a topic not known to exist: its creation asked for (once)
 * and the record copied and held. Return: 1 held, 0 send it now, -EAGAIN too many held.
 */
int producer_create_hold(struct producer *p, const struct sink_record *rec, void *msg_opaque,
			 char *errbuf, size_t errlen);
/* producer_create_serve() - creation results, retries, and held records sent; never blocks. */
void producer_create_serve(struct producer *p);
/* producer_create_wait() - wait up to @ms for a creation's answer (or a retry's time), serve it. */
void producer_create_wait(struct producer *p, int ms);
/* producer_create_fail() - every held record reported failed with @why, then freed. */
void producer_create_fail(struct producer *p, const char *why);
/*
 * producer_create_check() - `outboxd check`'s line on topic creation into @out: off, or each
 * group's settings and what the broker says of creating a topic with the default group's
 * (validate_only: nothing is created). Return: 0 ok, 1 warn (no answer), 2 refused.
 */
int producer_create_check(struct producer *p, int timeout_ms, struct buf *out);
/* producer_create_free() - what producer_create_init() made (held records must be gone). */
void producer_create_free(struct producer *p);

#endif
