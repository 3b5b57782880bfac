/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_VOCAB_H
#define OUTBOXD_VOCAB_H

/*
 * The configuration keys the reference knows, by the component that defines them. The bulk is
 * generated from the pinned jars' own ConfigDefs (src/vocab_data.c, tests/compat/vocab/generate);
 * src/vocab.c adds a short hand list of legacy names Debezium 3.6.1 no longer reads and of keys a
 * component reads outside its ConfigDef. config uses it to tell a typo from a key it may ignore.
 */

#include <stdbool.h>
#include <stddef.h>

enum vocab_group {
	VOCAB_WORKER = 1u << 0,	   /* Kafka Connect worker (standalone and distributed) */
	VOCAB_PRODUCER = 1u << 1,  /* Java producer (ProducerConfig, with its SASL/SSL keys) */
	VOCAB_CONNECT = 1u << 2,   /* Connect's own per-connector keys (SourceConnectorConfig) */
	VOCAB_CONNECTOR = 1u << 3, /* Debezium PostgreSQL connector */
	VOCAB_JDBC = 1u << 4,	   /* database.<PostgreSQL JDBC driver property> */
	VOCAB_ENGINE = 1u << 5,	   /* Debezium embedded engine (debezium.source.* in Server) */
	VOCAB_SMT = 1u << 6,	   /* io.debezium.transforms.outbox.EventRouter */
	VOCAB_CONVERTER = 1u << 7, /* JsonConverter, StringConverter, BinaryDataConverter */
	VOCAB_HEADER = 1u << 8,	   /* SimpleHeaderConverter */
	VOCAB_LEGACY = 1u << 9,	   /* hand list: a name 3.6.1 no longer reads (see vocab_note) */
};

struct vocab_entry {
	const char *key; /* may be a pattern with "(d+)", "([^.]+)" or "(.+)" parts */
	unsigned groups; /* enum vocab_group bits */
};

/* The generated table, sorted by key (strcmp). */
extern const struct vocab_entry vocab_data[];
extern const size_t vocab_data_len;

/**
 * vocab_groups() - the groups that define @key.
 * @key: borrowed; the name without any Connect/Server prefix ("slot.name", "schemas.enable").
 *
 * Return: enum vocab_group bits, 0 if no component knows the key.
 */
unsigned vocab_groups(const char *key);

/* vocab_is() - true if @key is defined by any of the @groups bits. */
bool vocab_is(const char *key, unsigned groups);

/**
 * vocab_note() - why a legacy or hand-listed key has no effect in 3.6.1, or NULL.
 * Return: a static string.
 */
const char *vocab_note(const char *key, unsigned groups);

#endif
