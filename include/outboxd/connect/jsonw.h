/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_JSONW_H
#define OUTBOXD_JSONW_H

/*
 * A JSON writer that produces the bytes Jackson (as used by Kafka Connect's JsonConverter)
 * produces, and Java's text forms of numbers. json-c cannot be used for Kafka records: it
 * escapes '/', prints lowercase "\u001f", writes non-ASCII as-is but emoji unescaped, and
 * prints doubles with "%.17g", so its bytes differ from Kafka Connect's (STYLE.md rule 12).
 *
 * Pure: appends to a struct buf, no I/O.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/util/buf.h"

/* How Java prints a double (DESIGN.md, outboxd.java.double.format). */
enum jsonw_double_format {
	JSONW_DOUBLE_JDK17, /* Double.toString of Java 17 (up to 18): FloatingDecimal, javafloat.h */
	JSONW_DOUBLE_SHORTEST, /* Java 19+: shortest decimal that rounds back, >= 2 digits */
};

/**
 * jsonw_double_format_parse() - parse "jdk17" or "shortest" (case-insensitive, trimmed).
 * @s: borrowed; NULL means the default (jdk17).
 * @ret: written only on success.
 *
 * Return: 0, or -EINVAL with the accepted values in @errbuf.
 */
int jsonw_double_format_parse(const char *s, enum jsonw_double_format *ret, char *errbuf,
			      size_t errlen);

/**
 * jsonw_string() - append @s as a quoted JSON string the way Jackson escapes it: '"' and '\'
 * escaped, \b \t \n \f \r, other control characters as \u00XX with uppercase hex, '/' DEL
 * U+2028 and other BMP characters raw, supplementary characters as an escaped surrogate pair.
 * @s: borrowed, @len bytes of UTF-8.
 *
 * Return: 0, or -EINVAL if @s is not well-formed UTF-8 (then @b is unchanged). Text from
 * PostgreSQL with client_encoding=UTF8 is always valid, so the caller treats -EINVAL as a
 * poison value rather than guessing what Java's decoder would have substituted.
 */
int jsonw_string(struct buf *b, const char *s, size_t len);

/* jsonw_int() - append a decimal integer. */
void jsonw_int(struct buf *b, int64_t v);

/* jsonw_java_double() - append Double.toString(@x): "1.0", "1.0E-4", "-0.0", "NaN", ... */
void jsonw_java_double(struct buf *b, double x, enum jsonw_double_format fmt);

/* jsonw_java_float() - append Float.toString(@x). */
void jsonw_java_float(struct buf *b, float x, enum jsonw_double_format fmt);

/*
 * jsonw_double() / jsonw_float() - a JSON number as Jackson writes it: Java's toString for
 * finite values, and quoted "NaN", "Infinity", "-Infinity" (Jackson's default
 * QUOTE_NON_NUMERIC_NUMBERS).
 */
void jsonw_double(struct buf *b, double x, enum jsonw_double_format fmt);
void jsonw_float(struct buf *b, float x, enum jsonw_double_format fmt);

/* jsonw_base64() - append standard Base64 with '=' padding (java.util.Base64.getEncoder()). */
void jsonw_base64(struct buf *b, const void *p, size_t len);

/* jsonw_base64url() - append URL-safe Base64 with padding (Base64.getUrlEncoder()). */
void jsonw_base64url(struct buf *b, const void *p, size_t len);

#endif
