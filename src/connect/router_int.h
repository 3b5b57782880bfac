/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_ROUTER_INT_H
#define OUTBOXD_ROUTER_INT_H

/*
 * What the router's files share: router.c (routing a row), router_columns.c (columns as
 * Connect values, headers), router_envelope.c (the value: payload, placements, envelope),
 * router_records.c (dead letters, heartbeats, logical messages), router_opts.c (option
 * parsing), router_expand.c (JSON payload expansion) and router_memo.c (the topic memo). Calls go
 * one way: router.c and router_records.c -> router_envelope.c -> router_columns.c. Private to
 * the router: not installed, not part of its API.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "outboxd/connect/convert.h"
#include "outboxd/connect/jsonw.h"
#include "outboxd/connect/pgvalue.h"
#include "outboxd/connect/regex_java.h"
#include "outboxd/connect/router.h"
#include "outboxd/util/buf.h"

/* Scratch slots for the converted columns of a row; placements follow. */
enum {
	SLOT_KEY,
	SLOT_ID,
	SLOT_PAYLOAD,
	SLOT_ROUTE,
	SLOT_TS,
	SLOT_VERSION,
	SLOT_PLACEMENTS,
};

enum placement_where {
	PLACE_HEADER,
	PLACE_ENVELOPE,
	PLACE_PARTITION,
};

struct placement {
	char *column; /* owned */
	char *alias;  /* owned */
	enum placement_where where;
};

enum invalid_op {
	INVALID_OP_WARN,
	INVALID_OP_ERROR,
	INVALID_OP_FATAL,
};

/* field.name.adjustment.mode (SchemaNameAdjuster) for expanded JSON field names. */
enum name_adjust {
	ADJUST_NONE,
	ADJUST_AVRO,
	ADJUST_AVRO_UNICODE,
};

/* A list of Java regexes (table.include.list and friends). */
struct relist {
	struct regex_java **re; /* owned */
	size_t n;
	bool set; /* the option was given (an empty list selects nothing special) */
};

/*
 * Envelope value schemas, cached as Debezium caches them (quirk §2.10): by payload schema
 * (the name keeps the first route value), or by schema version (the first payload schema
 * wins for that version).
 */
struct envname {
	char *key;		/* owned: payload schema JSON, or "v<version>" */
	char *name;		/* owned */
	char *payload_key;	/* owned: versioned only, the cached payload schema JSON */
	struct cvalue *payload; /* owned deep copy (versioned only): the cached payload schema */
};

struct router_expand;

/*
 * The topic of recent routing values (router_memo.c). 16 slots made 100 aggregate types cost 19%
 * more per event than one (bench/results/2026-12-06.md, cost curves); 256 take about 14 KB.
 */
#define ROUTER_MEMO_SLOTS     256
#define ROUTER_MEMO_MAX_VALUE 256 /* longer values are not remembered */

struct router_memo_slot {
	struct buf value, topic;
	bool used;
};

struct router_memo {
	struct router_memo_slot slot[ROUTER_MEMO_SLOTS];
};

/* router_memo_lookup() - append @value's remembered topic to @topic; false if not remembered. */
bool router_memo_lookup(struct router_memo *m, const char *value, size_t len, struct buf *topic);

/* router_memo_store() - remember that @value routes to @topic (both borrowed, copied). */
void router_memo_store(struct router_memo *m, const char *value, size_t len, const char *topic,
		       size_t topic_len);

/* router_memo_fini() - free the remembered values; @m is left empty and reusable. */
void router_memo_fini(struct router_memo *m);

/* Debezium's __debezium.context.* headers (router.c context_headers()). */
#define ROUTER_CONTEXT_HEADERS 4

/*
 * A type the catalog named, whose number differs per database: an enum with its labels, for
 * Debezium's Enum schema, an extension's ltree or hstore, or a domain with its base
 * (router_enum_labels(), router_named_type(), router_domain()).
 */
struct router_type {
	uint32_t oid;
	enum {
		ROUTER_TYPE_ENUM,
		ROUTER_TYPE_LTREE,
		ROUTER_TYPE_HSTORE,
		ROUTER_TYPE_DOMAIN,
		ROUTER_TYPE_ARRAY,
	} kind;
	char *labels;	   /* owned; an enum's */
	uint32_t base_oid; /* a domain's base type and its typmod; an array's element type */
	int32_t base_typmod;
	struct cvalue_param allowed;
};

struct router {
	char *topic_prefix, *run_id;
	struct relist tinc, texc, sinc, sexc; /* table/schema include/exclude lists */
	struct relist minc, mexc;	      /* message.prefix include/exclude lists */
	char *col_id, *col_key, *col_payload, *col_route, *col_ts, *col_version;
	struct regex_java *route_re;
	bool tombstone_on_empty;
	enum invalid_op invalid_op;
	bool missing_error;
	bool expand;	 /* table.expand.json.payload */
	bool null_bytes; /* table.json.payload.null.behavior=optional_bytes */
	enum name_adjust adjust;
	bool server; /* Debezium Server flavour (reference §3.6) */
	struct placement *pl;
	size_t npl;
	bool envelope;
	struct convert *key_conv, *value_conv, *header_conv;
	bool extended_headers;
	/*
	 * The four __debezium.context.* headers never change: their values through the header
	 * converter are written once (ctx_ready) and copied into each record.
	 */
	struct buf ctx[ROUTER_CONTEXT_HEADERS];
	bool ctx_null[ROUTER_CONTEXT_HEADERS];
	bool ctx_ready;
	struct pgvalue_modes modes; /* binary.handling.mode, decimal.handling.mode */
	enum jsonw_double_format dfmt;
	struct envname *envnames;
	size_t nenvnames;
	/* scratch, reused per row: key, id, payload, then one per placement */
	struct pgvalue *vals;
	struct pgvalue *defs;  /* column DEFAULTs of the same slots */
	struct buf *deftxt;    /* their literal text, which defs borrow */
	struct cvalue payload; /* the payload value after expansion */
	struct cvalue *envfields;
	struct router_expand *exp;
	struct buf route, tmp;
	struct router_memo memo;
	struct router_type *types; /* learnt from the catalog (router_type) */
	size_t ntypes;
};

/*
 * The row being routed as each private step takes it: the caller's row, the record being filled
 * and where the reason for a poison row goes. router_route() and router_dead_letter() build it
 * once per row on their stack; the steps take it by const pointer and write the record and the
 * reason through its pointers. The router itself stays a separate first argument: it is the
 * configuration and the scratch that outlive the row. The row is a copy, not a pointer to the
 * caller's: one load per use on this per-column path instead of two.
 */
struct router_view {
	struct router_row row;
	struct record *out;
	char *errbuf;
	size_t errlen;
};

/*
 * router_find_col() - the index of column @name of @rel, or -1 (also for a NULL @name). Inline:
 * it runs for every routed column of every row.
 */
static inline int
router_find_col(const struct relcache_rel *rel, const char *name)
{
	for (int i = 0; name && i < rel->ncols; i++) {
		if (strcmp(rel->cols[i].name, name) == 0) {
			return i;
		}
	}
	return -1;
}

/*
 * router_column() - convert column @name of @vw's tuple into r->vals[@slot], with its DEFAULT
 * (from @vw's defaults) in the schema. Return: 1 if the table has no such column, 0 done,
 * -EINVAL when the value cannot be converted (a poison row; text in @vw's errbuf).
 */
int router_column(struct router *r, const struct router_view *vw, const char *name, int slot);

/* router_raw_column() - the raw text of column @name, or NULL (absent or SQL NULL). Borrowed. */
const struct slice *router_raw_column(const struct router_row *row, const char *name);

/*
 * router_header_value() - append header @name = @v through the header converter. Debezium
 * Server drops a header whose Connect value is null; Kafka Connect sends it with a null value.
 */
int router_header_value(struct router *r, const struct router_view *vw, const char *name,
			const struct cvalue *v);

/* router_envelope_payload() - the payload after table.expand.json.payload, into r->payload. */
void router_envelope_payload(struct router *r);

/*
 * router_envelope_placements() - the additional placements in list order: headers appended to
 * @vw's record, envelope fields collected (their count in *@ret_nenv), the partition set.
 */
int router_envelope_placements(struct router *r, const struct router_view *vw, size_t *ret_nenv);

/*
 * router_envelope_value() - @vw's record's value: r->payload, or the envelope of @nenv placed
 * fields around it, through the value converter (a tombstone for an empty payload when asked).
 */
int router_envelope_value(struct router *r, const struct router_view *vw, size_t nenv);

/* router_opts_setup() - every option of @cfg into @r (router_new's validation). */
int router_opts_setup(struct router *r, const struct router_config *cfg, char *errbuf,
		      size_t errlen);

/* router_opts_fini() - free what router_opts_setup() allocated; half-built @r allowed. */
void router_opts_fini(struct router *r);

/* router_opts_list_matches() - does @s fully match one pattern of @l? */
bool router_opts_list_matches(const struct relist *l, const char *s, size_t len);

/* The outcome of table.expand.json.payload on one payload (EventRouterDelegate.apply). */
enum router_expand_result {
	ROUTER_EXPAND_DONE, /* *ret is the expanded Struct with its inferred schema */
	ROUTER_EXPAND_KEPT, /* not expanded (WARN in Debezium): the payload is unchanged */
	ROUTER_EXPAND_HALF, /* schema inferred, value conversion failed: *ret is the
				 * original String (java_string) under the new schema's top
				 * level (type, name, optional; no fields or items) */
};

/* router_expand_new() / router_expand_free() - scratch for one payload at a time. */
struct router_expand *router_expand_new(void);
void router_expand_free(struct router_expand *x);

/**
 * router_expand_payload() - JsonSchemaData of Debezium 3.6.1 on @payload.
 * @field: the payload column name: the name of the top-level struct schema.
 * @payload: borrowed; a non-null Java String is parsed when it starts with '{' or '['.
 * @ret: on DONE and HALF, a value owned by @x, valid until the next call or
 *	router_expand_free(); on KEPT, @payload itself.
 *
 * Return: what happened; never fails otherwise.
 */
enum router_expand_result router_expand_payload(struct router_expand *x, const char *field,
						bool null_bytes, enum name_adjust adjust,
						const struct cvalue *payload,
						const struct cvalue **ret);

/* router_expand_schema_dup() - a deep copy of @v's schema (values dropped, is_null set). */
struct cvalue *router_expand_schema_dup(const struct cvalue *v);

/* router_expand_schema_free() - free a router_expand_schema_dup() copy; NULL allowed. */
void router_expand_schema_free(struct cvalue *v);

#endif
