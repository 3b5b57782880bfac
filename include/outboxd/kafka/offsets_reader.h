/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_OFFSETS_READER_H
#define OUTBOXD_OFFSETS_READER_H

/*
 * The last value stored under one key of a compacted topic, read as Kafka Connect reads its
 * offsets topic under exactly-once (issue 37): a read_committed consumer of the key's partition
 * (the Java client's murmur2, as Connect's producer chose it), from the beginning, until its
 * position has passed the partition's high watermark, not only the last stable offset: the
 * newest committed value may sit behind another producer's open transaction, and reading only
 * up to the stable offset would take an older one. Values of aborted transactions are never
 * seen.
 */

#include <stdbool.h>
#include <stddef.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/kv.h"

/**
 * offsets_reader_last() - the newest committed value of @key in @topic.
 * @settings: borrowed; the librdkafka settings of the producer (its connection, TLS and SASL
 *	      settings are used; the producer's own are left out).
 * @value: filled with the value when *@found (a tombstone counts as not found).
 * @timeout_ms: the bound on the whole read.
 *
 * Return: 0 (*@found false: no such topic, no record of @key, or a tombstone); -ETIMEDOUT
 * when the bound ended first (an open transaction in the partition, brokers away), -EACCES
 * when the broker refused (the ACL: Read and Describe on the topic), -EIO otherwise; the
 * reason in @errbuf.
 */
int offsets_reader_last(const struct kv *settings, const char *topic, const void *key,
			size_t keylen, int timeout_ms, struct buf *value, bool *found, char *errbuf,
			size_t errlen);

#endif
