/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PRODUCER_INT_H
#define OUTBOXD_PRODUCER_INT_H

/*
 * What the producer's files share: producer.c (the handle's life, librdkafka's callbacks,
 * sending, flushing, discarding), producer_conf.c (the librdkafka configuration: the settings
 * forced for the guarantee, the user's, the queue's byte bound) and producer_topics.c (the
 * topic handles by name, and the first record's metadata lookup of older librdkafka versions).
 * Calls go one way: producer.c -> producer_conf.c and producer.c -> producer_topics.c. Private
 * to the producer: not installed, not part of its API.
 */

#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/kafka/authgrace.h"
#include "outboxd/kafka/producer.h"
#include "outboxd/util/kv.h"

struct topic_slot;

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

#endif
