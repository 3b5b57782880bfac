/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_CONVERT_H
#define OUTBOXD_CONVERT_H

/*
 * Kafka Connect converter emulation: a Connect value with its schema (struct cvalue) -> the
 * bytes JsonConverter, StringConverter, ByteArrayConverter or SimpleHeaderConverter would
 * write (reference debezium-outbox.md §3). Pure: no I/O, no logging.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/connect/cvalue.h"
#include "outboxd/connect/jsonw.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/kv.h"

/* What a converter is configured for (Connect's converter.type). */
enum convert_role {
	CONVERT_KEY,
	CONVERT_VALUE,
	CONVERT_HEADER,
};

/* The converter classes outboxd writes the bytes of (their Java class names). */
#define CONVERT_CLASS_JSON	    "org.apache.kafka.connect.json.JsonConverter"
#define CONVERT_CLASS_STRING	    "org.apache.kafka.connect.storage.StringConverter"
#define CONVERT_CLASS_BYTEARRAY	    "org.apache.kafka.connect.converters.ByteArrayConverter"
#define CONVERT_CLASS_BINARY	    "io.debezium.converters.BinaryDataConverter"
#define CONVERT_CLASS_SIMPLE_HEADER "org.apache.kafka.connect.storage.SimpleHeaderConverter"

/* convert_role_name() - "key", "value" or "header" (Connect's ConverterType names); static. */
const char *convert_role_name(enum convert_role role);

/**
 * convert_class_supports() - whether convert_new() takes @class_name in @role: JsonConverter
 * and BinaryDataConverter in any role, StringConverter and ByteArrayConverter as key or value,
 * SimpleHeaderConverter as header only.
 * @class_name: borrowed; NULL or an unknown class is supported in no role.
 */
bool convert_class_supports(const char *class_name, enum convert_role role);

/**
 * convert_class_has_option() - whether @option (its converter prefix stripped) is an option
 * of @class_name's ConfigDef: converter.type for every class; JsonConverter schemas.enable,
 * schemas.cache.size, decimal.format, replace.null.with.default; StringConverter
 * converter.encoding; BinaryDataConverter delegate.converter.type and
 * delegate.converter.type.<option>. Kafka's converters ignore keys they do not define.
 * @class_name: borrowed; an unknown class has no options.
 */
bool convert_class_has_option(const char *class_name, const char *option);

/**
 * convert_class_list() - append the classes supported in @role to @out, in the registry's
 * order, separated by ", " and, before the last, " @conj " ("A, B and C").
 * @full_names: the Java class names, or (false) their simple names ("JsonConverter").
 * @conj: borrowed, e.g. "and" or "or".
 */
void convert_class_list(enum convert_role role, bool full_names, const char *conj, struct buf *out);

struct convert;

/**
 * convert_new() - configure a converter as Kafka Connect would.
 * @class_name: borrowed; a class convert_class_supports() in @role.
 * @options: borrowed; the converter's options with the "key.converter." etc. prefix stripped,
 *	NULL for none; each one convert_class_has_option() of the class (anything else is an
 *	error). StringConverter takes UTF-8 only; BinaryDataConverter's
 *	delegate.converter.type names a key/value class and delegate.converter.type.<option>
 *	are that converter's options.
 * @ret: written only on success; caller frees with convert_free().
 *
 * Return: 0, or -EINVAL with the class or option, the reason and the fix in @errbuf.
 */
int convert_new(const char *class_name, const struct kv *options, enum convert_role role,
		struct convert **ret, char *errbuf, size_t errlen);

/* convert_free() - NULL allowed. */
void convert_free(struct convert *c);

/* convert_set_double_format() - how doubles are printed (outboxd.java.double.format). */
void convert_set_double_format(struct convert *c, enum jsonw_double_format fmt);

/* convert_class() - the configured class name (borrowed from @c), for messages. */
const char *convert_class(const struct convert *c);

/**
 * convert_write() - the bytes @c writes for @v.
 * @v: borrowed; NULL is the same as a CVALUE_NONE null (a tombstone for every converter).
 * @out: reset, then receives the bytes (empty when *ret_null is set).
 * @ret_null: set to true when the converter produces a Kafka null rather than bytes.
 *
 * Return: 0, or -EINVAL where the Java converter throws DataException (a required field
 * that is null, a non-BYTES value for ByteArrayConverter, invalid UTF-8) with the reason and
 * the fix in @errbuf. On failure @out's content is unspecified.
 */
int convert_write(const struct convert *c, const struct cvalue *v, struct buf *out, bool *ret_null,
		  char *errbuf, size_t errlen);

/**
 * convert_schema_json() - append the schema of @v as JsonConverter writes it under
 * "schema" (asJsonSchema: type, items/fields, optional, name, version, doc, parameters,
 * default); the text also serves as a schema identity (Connect's Schema.equals).
 *
 * Return: 0, or -EINVAL for a name that is not valid UTF-8 or a java_string value (which
 * keeps only the top level of its schema).
 */
int convert_schema_json(const struct cvalue *v, struct buf *out);

/**
 * convert_java_string() - Java's toString of a Connect value as Struct.toString() and
 * StringConverter print it (strings raw, numbers as Java prints them, BYTES as
 * "java.nio.HeapByteBuffer[pos=0 lim=N cap=N]", structs as "Struct{a=1,b=x}", arrays as
 * List.toString() "[1, x, null]").
 *
 * Return: 0, or -EINVAL for invalid UTF-8.
 */
int convert_java_string(const struct cvalue *v, enum jsonw_double_format fmt, struct buf *out);

/**
 * convert_decimal_string() - BigDecimal.toString() of a Decimal given as big-endian
 * two's-complement unscaled bytes and a scale.
 */
void convert_decimal_string(const uint8_t *p, size_t len, int32_t scale, struct buf *out);

#endif
