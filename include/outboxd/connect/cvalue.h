/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_CVALUE_H
#define OUTBOXD_CVALUE_H

/*
 * The Kafka Connect value model: a value together with its Connect schema, as Debezium hands
 * it to the converters (Schema + Object in Java). pgvalue builds them from columns, the router
 * and its JSON expansion assemble records from them, convert writes them as bytes.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/util/slice.h"

/* Connect schema types. CVALUE_NONE is "no schema": with no value it is a Kafka tombstone. */
enum cvalue_type {
	CVALUE_NONE,
	CVALUE_INT8,
	CVALUE_INT16,
	CVALUE_INT32,
	CVALUE_INT64,
	CVALUE_FLOAT32,
	CVALUE_FLOAT64,
	CVALUE_BOOLEAN,
	CVALUE_STRING,
	CVALUE_BYTES,
	CVALUE_STRUCT,
	CVALUE_ARRAY,
	CVALUE_MAP,
};

/* Logical type name of a Connect Decimal: BYTES holding the unscaled two's-complement value. */
#define CVALUE_DECIMAL_NAME "org.apache.kafka.connect.data.Decimal"

/*
 * Connect's own temporal logical types (time.precision.mode=connect), whose Java values are
 * java.util.Date: INT32 days since the epoch, INT32 milliseconds of the day, INT64 epoch
 * milliseconds. JsonConverter writes the numbers; Values and Date.toString() write dates
 * (convert_date.c).
 */
#define CVALUE_DATE_NAME      "org.apache.kafka.connect.data.Date"
#define CVALUE_TIME_NAME      "org.apache.kafka.connect.data.Time"
#define CVALUE_TIMESTAMP_NAME "org.apache.kafka.connect.data.Timestamp"

/* A schema parameter; Connect keeps them in insertion order. */
struct cvalue_param {
	const char *key;   /* borrowed */
	const char *value; /* borrowed */
};

/*
 * A Connect value together with its schema. Everything is borrowed: the caller keeps the
 * strings, bytes and arrays alive while converting. For CVALUE_STRUCT the fields carry their
 * own schemas (and, unless the struct is null, their values) and their names in @field. For
 * CVALUE_ARRAY @u.array.items is the element schema (its value is ignored) and the elements
 * carry that schema with their own values. For CVALUE_MAP @u.map.keys and @u.map.values are
 * the key and value schemas and @u.map.kv the entries, key then value, 2 * @u.map.n of them.
 */
struct cvalue {
	enum cvalue_type type;
	bool optional;
	bool is_null;			   /* the value is null (the schema still applies) */
	const char *name;		   /* schema name or NULL */
	int32_t version;		   /* schema version; 0 = none */
	const char *doc;		   /* schema doc or NULL */
	const struct cvalue_param *params; /* NULL when the schema has no parameters */
	size_t nparams;
	const struct cvalue *def; /* schema default value (same type) or NULL */
	const char *field;	  /* field name when this is a struct member */
	/*
	 * The Java value is a String (@u.s) whatever the schema says: the schema and value
	 * EventRouter leaves behind when JSON expansion fails half-way (reference §2.6 hazard
	 * (a)). JsonConverter writes it only without a schema (CVALUE_NONE: {"schema":null,
	 * "payload":"..."}) and fails otherwise; StringConverter writes the text. Top level only.
	 */
	bool java_string;
	union {
		int64_t i;	/* INT8..INT64 */
		double f;	/* FLOAT32 (exactly a float), FLOAT64 */
		bool b;		/* BOOLEAN */
		struct slice s; /* STRING (UTF-8) and BYTES */
		struct {
			const struct cvalue *v;
			size_t n;
		} fields; /* STRUCT */
		struct {
			const struct cvalue *items;
			const struct cvalue *v;
			size_t n;
		} array; /* ARRAY */
		struct {
			const struct cvalue *keys, *values;
			const struct cvalue *kv;
			size_t n;
		} map; /* MAP */
	} u;
};

#endif
