/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_CONVERT_INT_H
#define OUTBOXD_CONVERT_INT_H

/*
 * Private to the converter emulation. convert.c is the registry and the dispatch
 * (convert_new, convert_write); convert_json.c writes JsonConverter's bytes; convert_header.c
 * SimpleHeaderConverter's text; convert_text.c Java's toString forms (Struct/List toString,
 * BigDecimal, Schema.Type names); convert_date.c Java's text of a java.util.Date. Calls go one
 * way: convert -> json, header, text; header -> json, text, date; json -> text; text -> date.
 * convert_date.c calls none of them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/connect/convert.h"

enum convert_kind {
	KIND_JSON,
	KIND_STRING,
	KIND_BYTEARRAY,
	KIND_SIMPLEHEADER,
	KIND_BINARY,
};

/* A configured converter (convert_new). */
struct convert {
	enum convert_kind kind;
	enum convert_role role;
	const char *class_name; /* static, from the registry */
	bool schemas_enable;	/* JsonConverter: schemas.enable */
	bool decimal_numeric;	/* JsonConverter: decimal.format=NUMERIC */
	bool replace_null;	/* JsonConverter: replace.null.with.default */
	enum jsonw_double_format dfmt;
	struct convert *delegate; /* BinaryDataConverter: delegate.converter.type or NULL */
};

/* --- convert_text.c ----------------------------------------------------------------------- */

/* convert_text_type_name() - Schema.Type's name ("int32", "struct"; "null" for none); static. */
const char *convert_text_type_name(enum cvalue_type t);

/*
 * convert_text_decimal() - if @v is a Connect Decimal (BYTES named CVALUE_DECIMAL_NAME, its
 * "scale" parameter), append its BigDecimal.toString() to @out and return true; else false
 * and @out is untouched.
 */
bool convert_text_decimal(const struct cvalue *v, struct buf *out);

/* --- convert_date.c ----------------------------------------------------------------------- */

/*
 * convert_date_millis() - if the non-null @v is Connect's Date, Time or Timestamp, store its
 * java.util.Date in epoch milliseconds in @ms and return true; else false.
 */
bool convert_date_millis(const struct cvalue *v, int64_t *ms);

/* convert_date_values() - append Values.convertToString() of the java.util.Date @ms. */
void convert_date_values(int64_t ms, struct buf *out);

/* convert_date_java() - append java.util.Date.toString() of @ms in UTC. */
void convert_date_java(int64_t ms, struct buf *out);

/* --- convert_json.c ----------------------------------------------------------------------- */

/*
 * convert_json_str() - append @s as Jackson writes a string; -EINVAL with the UTF-8 message
 * in @errbuf if @s is not valid UTF-8.
 */
int convert_json_str(struct buf *out, const char *s, size_t len, char *errbuf, size_t errlen);

/* convert_json_nonnull() - JsonConverter.convertToJson() of a non-null @v (no envelope). */
int convert_json_nonnull(const struct convert *c, const struct cvalue *v, struct buf *out,
			 char *errbuf, size_t errlen);

/* convert_json_write() - what JsonConverter @c writes for @v: the envelope or the bare value. */
int convert_json_write(const struct convert *c, const struct cvalue *v, struct buf *out,
		       char *errbuf, size_t errlen);

/*
 * convert_json_write_java_string() - JsonConverter given a String under another schema
 * (cvalue.java_string): without a schema it writes the string, else DataException (-EINVAL).
 */
int convert_json_write_java_string(const struct convert *c, const struct cvalue *v, struct buf *out,
				   char *errbuf, size_t errlen);

/* --- convert_header.c --------------------------------------------------------------------- */

/* convert_header_write() - what SimpleHeaderConverter @c writes for the non-null @v. */
int convert_header_write(const struct convert *c, const struct cvalue *v, struct buf *out,
			 char *errbuf, size_t errlen);

#endif
