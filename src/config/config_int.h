/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_CONFIG_INT_H
#define OUTBOXD_CONFIG_INT_H

/*
 * Private to the configuration loader: the state of one config_load() and its helpers
 * (config_ctx.c), which config.c (the PostgreSQL connector and outboxd keys) and config_kafka.c
 * (worker, converters, the EventRouter transform, producer settings, Server formats) both use.
 * Calls go one way: config.c -> config_kafka.c, config_http.c -> config_ctx.c; config_keys.c
 * holds the key tables (data only).
 */

#include <stdbool.h>
#include <stddef.h>

#include "outboxd/config/cfgsrc.h"
#include "outboxd/config/config.h"
#include "outboxd/util/kv.h"

#define EVENT_ROUTER "io.debezium.transforms.outbox.EventRouter"
#define UNKNOWN_WHY                                                                                \
	"(not a Kafka Connect, producer, Debezium PostgreSQL connector or EventRouter setting); "  \
	"check the spelling"

/* The state of one config_load(). */
struct ctx {
	struct config *cfg;
	const struct cfgsrc *src;
	struct kv java;	     /* Java producer settings in precedence order */
	struct kv java_disp; /* Java producer key -> key as the user wrote it */
	char *errbuf;
	size_t errlen;
};

/* config_ctx_seterr() - the one error line of config_load(), into the caller's errbuf. */
void config_ctx_seterr(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* config_ctx_starts_with() - @s begins with @prefix. */
bool config_ctx_starts_with(const char *s, const char *prefix);
/* The key as the user wrote it (Server connector keys carry debezium.source.). Caller-frees. */
char *config_ctx_display(const struct ctx *c, const char *key);
/* config_ctx_ignore() - list @shown as accepted without effect, for @why (logged at start-up). */
void config_ctx_ignore(struct ctx *c, const char *shown, const char *why, const char *origin);
/* config_ctx_ignore_all() - config_ctx_ignore() each entry of @ignored (key -> why). */
void config_ctx_ignore_all(struct ctx *c, const struct kv *ignored);
/* config_ctx_unknown() - the error for a key nobody defines (a typo). Return: -EINVAL. */
int config_ctx_unknown(struct ctx *c, const char *shown, const char *origin);
/* config_ctx_shown_value() - @value, or a placeholder when @key's value is a secret. */
const char *config_ctx_shown_value(const char *key, const char *value);

/* Connector-level Connect keys (converters, transforms, producer.override.*, ...): 1 if taken. */
int config_kafka_connector_key(struct ctx *c, const struct kv_entry *e);
/* The worker file (Connect) or the Server-only keys. */
int config_kafka_worker(struct ctx *c);
int config_kafka_server(struct ctx *c);
/* After every key is read: converters, the transform, producer translation. */
int config_kafka_finish(struct ctx *c);

/* config_http.c: outboxd.http.bind is a numeric address, after every key is read. */
int config_http_finish(struct ctx *c);

/*
 * config_kafka_settings() - the librdkafka settings of @cfg: the translated producer settings,
 * bootstrap.servers, and those outboxd.kafka.* sets.
 */
void config_kafka_settings(struct config *cfg);

/*
 * What the exactly-once keys get told (issue 37): the delivery a consumer can rely on today.
 * Kafka Connect fails a connector that requires a guarantee it cannot give; so does outboxd.
 */
#define CONFIG_AT_LEAST_ONCE                                                                       \
	"outboxd delivers at least once (a crash may publish the last unconfirmed rows again; "    \
	"consumers deduplicate by the id header): exactly-once to Kafka is not available"

/* Connector settings refused for a value (NULL: any non-empty value). A trailing '*' is a prefix. */
struct refusal {
	const char *key;
	const char *value;
	const char *why;
};

/* config_refusals.c: the refusals, and the keys accepted without effect with a specific note. */
extern const struct refusal config_refusals[];
extern const size_t config_nrefusals;
extern const struct refusal config_notes[];
extern const size_t config_nnotes;
/* The worker file's keys refused for a value (worker_key in config_kafka.c reads them). */
extern const struct refusal config_worker_refusals[];
extern const size_t config_nworker_refusals;

enum cf_type {
	CF_STR,	 /* char *; an empty value counts as unset */
	CF_INT,	 /* int64_t within [min, max] */
	CF_BOOL, /* bool; "true"/"false", any case, trimmed (as ConfigDef) */
	CF_ENUM, /* char *, lower case, one of the '|'-separated values in .extra */
	CF_PG,	 /* a libpq keyword (.extra) in pg_conn */
};

/* One honoured key, pgbouncer CF_ABS style, pointing into struct config with offsetof. */
struct cf_key {
	const char *name;
	enum cf_type type;
	size_t off;
	const char *def; /* default as text; NULL = none */
	const char *extra;
	int64_t min, max;
	const char *doc; /* its meaning, in the configuration reference (Markdown, one line) */
};

#define CF_ABS(n, t, field, def, extra, min, max, doc)                                             \
	{                                                                                          \
		n, t, offsetof(struct config, field), def, extra, min, max, doc                    \
	}
#define CF_PGKEY(n, kw, def, doc)                                                                  \
	{                                                                                          \
		n, CF_PG, 0, def, kw, 0, 0, doc                                                    \
	}
/* The fields no single row sets (config_assembled): a struct kv, else a char *. */
struct cf_assembled {
	size_t off;
	bool kv;
};

/* config_keys.c: the honoured keys' tables, and the fields assembled from several keys. */
extern const struct cf_key config_connector_keys[];
extern const size_t config_nconnector_keys;
extern const struct cf_key config_outboxd_keys[];
extern const size_t config_noutboxd_keys;
extern const struct cf_assembled config_assembled[];
extern const size_t config_nassembled;

#endif
