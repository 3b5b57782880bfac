/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_KAFKA_RDSTATS_H
#define OUTBOXD_KAFKA_RDSTATS_H

/*
 * librdkafka's own view of the producer, from the JSON its statistics callback emits every
 * outboxd.kafka.stats.ms (STATISTICS.md): read (rdstats_parse, by a walker that skips what it
 * does not read: see rdstats.c) into a few figures and rendered as the outboxd_kafka_* and
 * outboxd_producer_queue_*_capacity metrics (rdstats_render). Pure. Figures are summed or taken at their worst over the brokers, so the
 * cardinality does not grow with the cluster: no label per broker, topic or partition.
 */

#include <stddef.h>
#include <stdint.h>

#include "outboxd/util/buf.h"

/* Brokers by what librdkafka says of their connection. */
enum rdstats_bstate {
	RDSTATS_UP,	    /* UP, UPDATE: requests flow */
	RDSTATS_CONNECTING, /* TRY_CONNECT, CONNECT, SSL_HANDSHAKE, AUTH_*, APIVERSION_QUERY */
	RDSTATS_DOWN,	    /* INIT, DOWN */
	RDSTATS_BSTATES,
};

struct rdstats {
	int64_t queue_records, queue_capacity_records; /* msg_cnt, msg_max */
	int64_t queue_bytes, queue_capacity_bytes;     /* msg_size, msg_size_max */
	int64_t brokers[RDSTATS_BSTATES]; /* the brokers the metadata names; the bootstrap
					     names while none is known */
	int64_t retries;		  /* txretries, over the brokers */
	int64_t timeouts;		  /* req_timeouts */
	int64_t disconnects;
	int64_t rtt_avg_us, rtt_p99_us; /* the worst broker's, over the last interval; 0 if none */
};

/**
 * rdstats_parse() - @st from the statistics JSON @json of @len bytes. A bootstrap name
 * librdkafka has matched with a broker of the metadata carries that broker's node id and counts
 * once; the round-trip times are the known brokers'.
 * Return: 0, or -EINVAL when it is not a JSON object (the reason in @errbuf).
 */
int rdstats_parse(const char *json, size_t len, struct rdstats *st, char *errbuf, size_t errlen);

/* rdstats_render() - append the families of @st, read @age_us ago, to @out. */
void rdstats_render(const struct rdstats *st, int64_t age_us, struct buf *out);

#endif
