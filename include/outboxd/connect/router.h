/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_ROUTER_H
#define OUTBOXD_ROUTER_H

/*
 * Folder connect/: Kafka Connect and Debezium semantics, pure: the outbox EventRouter, the
 * converters and their JSON, Java's regexes and numbers, PostgreSQL values as Debezium converts
 * them. It may call: util, pg.
 */

/*
 * Debezium 3.6.1's outbox EventRouter (plus the connector's column conversion and Kafka
 * Connect's converters): one outbox row -> one Kafka record {topic, key, value, headers,
 * partition, timestamp} as bytes (reference debezium-outbox.md §1-§3). Pure: no I/O, no
 * logging; reasons come back in errbuf for the caller to log once.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/connect/record.h"
#include "outboxd/pg/pgoutput.h"
#include "outboxd/pg/relcache.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/kv.h"

struct router_config {
	const char *topic_prefix; /* topic.prefix: __debezium.context.connectorLogicalName */
	const char *run_id;	  /* a fresh UUID per start: __debezium.context.runId */
	/*
	 * Table selection (Debezium's RelationalTableFilters): comma-separated Java regexes,
	 * "\," a literal comma, case-insensitive, full match; tables on "schema.table",
	 * schemas on the schema name. NULL or "" = absent. Include and exclude of one kind
	 * together are refused by config, as Debezium refuses them.
	 */
	const char *table_include_list;
	const char *table_exclude_list;
	const char *schema_include_list;
	const char *schema_exclude_list;
	const char *message_prefix_include_list; /* logical decoding messages by prefix */
	const char *message_prefix_exclude_list;
	const struct kv *smt;	     /* transforms.<alias>.* with the prefix stripped; may
					 * include "type" */
	const char *key_converter;   /* class names; NULL = JsonConverter (key, value) and */
	const char *value_converter; /* SimpleHeaderConverter (header) */
	const char *header_converter;
	const struct kv *key_converter_opts; /* prefix-stripped converter options; NULL = none */
	const struct kv *value_converter_opts;
	const struct kv *header_converter_opts;
	bool extended_headers;		    /* extended.headers.enabled (Debezium default true) */
	const char *double_format;	    /* outboxd.java.double.format; NULL = jdk17 */
	const char *binary_handling_mode;   /* bytes (NULL) | base64 | base64-url-safe | hex */
	const char *time_precision_mode;    /* adaptive (NULL) | adaptive_time_microseconds */
	const char *decimal_handling_mode;  /* precise (NULL) | double | string */
	const char *interval_handling_mode; /* numeric (NULL) | string */
	const char *hstore_handling_mode;   /* json (NULL); map refused for now */
	int money_fraction_digits;	    /* money.fraction.digits (Decimal scale of money) */
	/*
	 * Debezium Server's Kafka sink (reference §3.6): the header converter defaults to
	 * JsonConverter (config passes debezium.format.header.* as header_converter_opts, e.g.
	 * schemas.enable=false), headers whose value is null are dropped, partition placement
	 * is ignored, and the record timestamp is always the producer's (-1).
	 */
	bool server_flavour;
};

struct router;

/**
 * router_new() - validate every option as EventRouter.configure() and the connector do at start.
 * @cfg: borrowed; strings are copied.
 * @ret: written only on success; caller frees with router_free().
 *
 * Return: 0, or -EINVAL with the option, the reason and the fix in @errbuf (bad regex, bad
 * enum or boolean value, bad placement, unknown EventRouter option, an option outboxd does
 * not support yet, an unsupported converter).
 */
int router_new(const struct router_config *cfg, struct router **ret, char *errbuf, size_t errlen);

/* router_free() - NULL allowed. */
void router_free(struct router *r);

/**
 * router_selects() - is the table captured? @nspname must match schema.include.list (when
 * given) and no pattern of schema.exclude.list; "nspname.relname" must match
 * table.include.list (when given) and no pattern of table.exclude.list. Every table when no
 * list is given. The result is stable per relation, so callers cache it (relcache_rel.user).
 */
bool router_selects(const struct router *r, const char *nspname, const char *relname);

/**
 * router_reads() - whether a row's column @column is converted (pgvalue) when the router routes
 * it: the option that names it (table.field.event.key, table.field.event.id,
 * table.field.event.payload, route.by.field, table.field.event.timestamp,
 * table.field.event.schema.version, table.fields.additional.placement), or NULL for a column
 * the router never converts. The name is compared exactly, as the router finds its columns.
 */
const char *router_reads(const struct router *r, const char *column);

/**
 * router_enum_labels() - the labels of enum type @type_oid (@labels: comma-joined in sort order,
 * as pg_enum gives them), learnt from the catalog before its first row (typecheck.h): a value of
 * a column of that type then carries Debezium's Enum schema (io.debezium.data.Enum, version 1,
 * parameter "allowed" = @labels), which JsonConverter with schemas writes. Replaces what was
 * learnt for @type_oid before (an ALTER TYPE ... ADD VALUE, seen at the next check).
 */
void router_enum_labels(struct router *r, uint32_t type_oid, const char *labels);

/**
 * router_named_type() - type @type_oid is an extension's @typname (pg_type.typname), learnt from
 * the catalog before its first row (typecheck.h): "ltree" (a string named
 * io.debezium.data.Ltree) or "hstore" (hstore.handling.mode=json's JSON object).
 * Return: 0, or -EINVAL for another name.
 */
int router_named_type(struct router *r, uint32_t type_oid, const char *typname);

/**
 * router_array_type() - type @type_oid is an array of @elem_oid, an enum (its labels learnt by
 * router_enum_labels()) or a string type, learnt from the catalog before its first row
 * (typecheck.h): its values are Connect arrays of strings, of Debezium's Enum schema (required
 * elements: a NULL element nulls the array) for an enum, as Debezium writes them.
 */
void router_array_type(struct router *r, uint32_t type_oid, uint32_t elem_oid);

/**
 * router_domain() - type @type_oid is a domain over @base_oid with @base_typmod (-1 for none),
 * learnt from the catalog before its first row (typecheck.h): its values are converted as
 * Debezium converts a domain, as its base type.
 */
void router_domain(struct router *r, uint32_t type_oid, uint32_t base_oid, int32_t base_typmod);

enum router_verdict {
	ROUTER_PUBLISH,	   /* @out holds the record */
	ROUTER_DROP,	   /* nothing to publish, nothing to say: DELETE, TRUNCATE */
	ROUTER_DROP_WARN,  /* UPDATE, table.op.invalid.behavior=warn: log a warning */
	ROUTER_DROP_ERROR, /* UPDATE, table.op.invalid.behavior=error: log an error */
	ROUTER_HALT,	   /* UPDATE, table.op.invalid.behavior=fatal: stop the relay */
	ROUTER_POISON,	   /* a row Debezium's task would fail on (DESIGN.md "poison row") */
};

/*
 * One row as the router takes it (router_route(), router_dead_letter()): the caller builds it once
 * per row, and the router's steps read the row from it instead of from loose arguments. Every
 * pointer is borrowed for the call.
 */
struct router_row {
	const struct relcache_rel *rel; /* the row's relation; router_selects() said yes */
	/* the new tuple ('I', 'r', 'U'); may be NULL for 'D'/'T' */
	const struct pgoutput_tuple *tup;
	/*
	 * rel->ncols flags, true for a column declared NOT NULL (read once per relation from
	 * pg_attribute.attnotnull: pgoutput does not carry it), which makes its Connect schema
	 * required ("optional":false). NULL = every column optional.
	 */
	const bool *notnull;
	/*
	 * rel->ncols entries (NULL = no column has one): the column's DEFAULT as
	 * pg_get_expr(pg_attrdef.adbin, adrelid) prints it, or NULL. Debezium puts a constant
	 * default into the column's Connect schema ("default" under schemas.enable=true) and
	 * JsonConverter's replace.null.with.default writes it for a NULL value. Understood: a
	 * quoted literal with an optional cast ('x'::character varying, '{}'::jsonb), a number,
	 * (-1), true, false. Anything else (now(), nextval(...), NULL::text) is no default.
	 */
	const char *const *defaults;
	char op; /* 'I' insert, 'r' snapshot read, 'U' update, 'D' delete, 'T' truncate */
};

/**
 * router_route() - apply the EventRouter to one row.
 * @row: borrowed; see struct router_row.
 * @out: reset, then filled when the verdict is ROUTER_PUBLISH.
 * @ret_verdict: what to do with the row.
 *
 * Return: 0 with a verdict (@errbuf holds the reason and the fix for every verdict but
 * PUBLISH and DROP), or -EINVAL for a call that breaks this contract (unknown @row->op, a
 * tuple whose column count differs from @row->rel).
 */
int router_route(struct router *r, const struct router_row *row, struct record *out,
		 enum router_verdict *ret_verdict, char *errbuf, size_t errlen);

/**
 * router_row_id() - append the row's event id (the table.field.event.id column's text) to
 * @out, for messages that must name a row; "NULL" or "(no id column)" when it has none.
 * @rel, @tup: borrowed.
 */
void router_row_id(const struct router *r, const struct relcache_rel *rel,
		   const struct pgoutput_tuple *tup, struct buf *out);

/**
 * router_heartbeat() - the heartbeat record Debezium writes every heartbeat.interval.ms:
 * @topic (topic.heartbeat.prefix + topic.delimiter + topic.prefix), partition 0, key
 * io.debezium.connector.common.ServerNameKey {serverName = topic.prefix}, value
 * io.debezium.connector.common.Heartbeat {ts_ms = @now_ms}, both through the configured
 * converters, no headers, processing-time timestamp. @out: reset, then filled.
 * Return: 0, or -EINVAL when a converter cannot write them (ByteArrayConverter: text in @errbuf).
 */
int router_heartbeat(struct router *r, const char *topic, int64_t now_ms, struct record *out,
		     char *errbuf, size_t errlen);

/* What Debezium's source block says about a logical decoding message. */
struct router_message_info {
	const char *dbname;	/* database.dbname */
	int64_t commit_time_us; /* the transaction's commit time (Unix microseconds); for a
				      non-transactional message the last one seen */
	bool has_xid;		/* transactional: txId = @xid; else null */
	uint32_t xid;
	bool has_last_commit; /* sequence[0]: the last commit's LSN seen since start, or null */
	uint64_t last_commit_lsn;
	int64_t now_ms; /* processing time: the envelope's ts_ms */
};

/**
 * router_message_selected() - message.prefix.include.list / exclude.list (Java regexes, full
 * match on the prefix; absent = every prefix).
 */
bool router_message_selected(const struct router *r, const char *prefix, size_t len);

/**
 * router_message() - the record Debezium's PostgreSQL connector writes for a logical decoding
 * message (pg_logical_emit_message), which the EventRouter passes through unchanged: topic
 * "<topic.prefix>.message", key io.debezium.connector.postgresql.MessageKey {prefix}, value
 * io.debezium.connector.postgresql.MessageValue {op "m", ts_ms, source, transaction null,
 * message {prefix, content}}, no headers. @m must be a PGOUTPUT_MSG_MESSAGE. @out: reset, then
 * filled. Return: 0, or -EINVAL when a converter cannot write it (text in @errbuf).
 */
int router_message(struct router *r, const struct pgoutput_msg *m,
		   const struct router_message_info *info, struct record *out, char *errbuf,
		   size_t errlen);

/* What a dead-letter record says about the row it stands for. Borrowed strings. */
struct router_dead_letter_info {
	const char *topic;	/* outboxd.errors.deadletterqueue.topic.name */
	const char *reason;	/* why the row could not be published, and the fix */
	const char *commit_lsn; /* its transaction's commit LSN, %X/%X */
	bool keep_value;	/* false when the value itself was the problem (too large) */
};

/**
 * router_dead_letter() - the dead-letter record for a poison row: @info->topic, the key the
 * record would have had (its raw key column text when even the key cannot be converted), the
 * raw payload column text as value (null without @info->keep_value), headers `id` (the row id),
 * `__outboxd.error.reason`, `__outboxd.error.commit.lsn` and `__outboxd.error.table`.
 * @row: borrowed, as for router_route() (@row->op is not read). @out: reset, then filled.
 */
void router_dead_letter(struct router *r, const struct router_row *row,
			const struct router_dead_letter_info *info, struct record *out);

#endif
