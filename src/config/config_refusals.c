/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The connector settings config.c refuses for a value, and the notes on keys it accepts
 * without effect (config_int.h).
 */
#include "config_int.h"

/* Refused for a value: a converter, option or setting outboxd cannot honour, with the fix. */
const struct refusal config_refusals[] = {
	{ "slot.drop.on.stop", "true",
	  "outboxd never drops the slot (it belongs to operations; `outboxd slot drop` does it on purpose); set it to false or remove it" },
	{ "provide.transaction.metadata", "true",
	  "outboxd does not produce transaction metadata records; set it to false or remove it" },
	{ "lsn.flush.mode", "manual",
	  "outboxd always confirms delivered transactions to the slot; remove it" },
	{ "flush.lsn.source", "false",
	  "outboxd always confirms delivered transactions to the slot; remove it" },
	{ "database.sslfactory", NULL,
	  "a Java SSL socket factory; use database.sslmode with database.sslrootcert, sslcert and sslkey" },
	{ "converters", NULL, "custom column converters are Java classes; remove it" },
	{ "post.processors", NULL, "post processors are Java classes; remove it" },
	{ "signal.data.collection", NULL, "signals are not supported by outboxd; remove it" },
	{ "notification.enabled.channels", NULL,
	  "notifications are not supported by outboxd; remove it" },
	{ "column.include.list", NULL,
	  "outboxd publishes every column of the outbox table; remove it" },
	{ "column.exclude.list", NULL,
	  "outboxd publishes every column of the outbox table; remove it" },
	{ "column.mask.*", NULL, "column masking is not supported by outboxd; remove it" },
	{ "column.truncate.*", NULL, "column truncation is not supported by outboxd; remove it" },
	{ "column.propagate.source.type", NULL,
	  "source type parameters are not supported by outboxd; remove it" },
	{ "datatype.propagate.source.type", NULL,
	  "source type parameters are not supported by outboxd; remove it" },
	{ "snapshot.select.statement.overrides", NULL,
	  "snapshot query overrides are not supported by outboxd; remove it" },
	/* Connect fails a connector that requires exactly-once where it cannot be given: so do we */
	{ "exactly.once.support", "required", CONFIG_AT_LEAST_ONCE "; set requested or remove it" },
};

/* The worker's: Connect runs every source task in transactions with it (KIP-618). */
const struct refusal config_worker_refusals[] = {
	{ "exactly.once.source.support", "enabled",
	  CONFIG_AT_LEAST_ONCE "; set it to disabled or remove it" },
};

/* Keys accepted without effect that deserve a specific note (a trailing '*' is a prefix). */
const struct refusal config_notes[] = {
	{ "publication.autocreate.mode", NULL,
	  "outboxd never creates publications; create it with the statement in sql/publication.sql" },
	{ "offset.*", NULL, "outboxd keeps no offsets; it resumes from the replication slot" },
	{ "tasks.max", NULL, "the PostgreSQL connector runs one task" },
	{ "tombstones.on.delete", NULL, "the EventRouter drops delete events" },
	{ "database.server.name", NULL, "Debezium 1.x name; 3.6.1 reads topic.prefix" },
	{ "exactly.once.support", NULL, CONFIG_AT_LEAST_ONCE },
	{ "transaction.boundary*", NULL,
	  "read with exactly-once delivery only; " CONFIG_AT_LEAST_ONCE },
};

const size_t config_nrefusals = sizeof(config_refusals) / sizeof(config_refusals[0]);
const size_t config_nnotes = sizeof(config_notes) / sizeof(config_notes[0]);
const size_t config_nworker_refusals =
	sizeof(config_worker_refusals) / sizeof(config_worker_refusals[0]);
