/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_KAFKA_KAFKASINK_H
#define OUTBOXD_KAFKA_KAFKASINK_H

/*
 * Kafka behind the sink seam (sink/sink.h): the producer (producer.h) with librdkafka's wake-up
 * pipe, its statistics parsed into struct rdstats (rdstats.h) and rendered as the outboxd_kafka_*
 * families, and `outboxd check`'s Kafka lines (the brokers answer, how the connections are
 * secured). No transactions yet (the exactly-once issue adds them here).
 */

#include "outboxd/sink/sink.h"

/* The Kafka client: open, check, statistics. */
extern const struct sink_kind kafkasink_kind;

#endif
