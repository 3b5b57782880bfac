/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_CONNECT_RECORD_H
#define OUTBOXD_CONNECT_RECORD_H

/*
 * A routed Kafka record as bytes: what the router (and its converters) hand to the publish
 * path, which alone knows the producer. Owned buffers, reused from record to record.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/util/buf.h"

struct record_header {
	struct buf name;
	struct buf value;
	bool null; /* a header with a null value (still sent) */
};

struct record {
	struct buf topic;
	struct buf key;
	bool key_null; /* Kafka null key (StringConverter with a NULL key column) */
	struct buf value;
	bool value_null;	       /* Kafka null value: a tombstone or a converter's null */
	struct record_header *headers; /* owned; in send order */
	size_t nheaders;
	size_t headers_cap;
	int32_t partition;    /* -1 = unassigned (the partitioner decides) */
	int64_t timestamp_ms; /* -1 = processing time */
};

/* record_init() - an empty record: no partition, processing time. */
void record_init(struct record *rec);

/* record_reset() - empty for reuse; keeps the memory. */
void record_reset(struct record *rec);

/* record_fini() - free the buffers; @rec may be initialised again. */
void record_fini(struct record *rec);

/**
 * record_add_header() - append a header named @name with an empty, non-null value.
 * Return: the header (borrowed from @rec, valid until the next add), to fill its value.
 */
struct record_header *record_add_header(struct record *rec, const char *name);

/* record_add_text_header() - append header @name with the bytes [@p, @p + @len). */
void record_add_text_header(struct record *rec, const char *name, const char *p, size_t len);

/* record_header_text() - the value of the first non-null header @name, or NULL. Borrowed. */
const char *record_header_text(const struct record *rec, const char *name);

#endif
