/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_JSONR_H
#define OUTBOXD_JSONR_H

/*
 * A JSON reader that keeps what Jackson's readTree() keeps, for the EventRouter's
 * table.expand.json.payload (reference §2.6), beside jsonw, the writer. json-c cannot serve:
 * it keeps a number only as int64 or double, losing what decides the Connect type (1 vs 1.0,
 * an integer beyond int64 that Jackson holds as BigInteger), and its objects are hash tables
 * that do not keep Jackson's order for a duplicate key (first position, last value).
 *
 * The input is foreign text (an outbox column), so the reader is bounded and strict: it
 * never reads past the end, and malformed input fails cleanly with -EPROTO. It is as strict
 * as Jackson's defaults (no leading zeros, no raw control characters in strings, nesting at
 * most 1000 deep, numbers at most 1000 characters) and, like readTree() without
 * FAIL_ON_TRAILING_TOKENS, ignores what follows the first value. Known differences, on input
 * PostgreSQL's jsonb never produces: a lone surrogate escape is refused, and so is "\u0000" in
 * a member name (Jackson keeps both); a number at the top level followed by other text ("12x")
 * is read as the number, where Jackson wants a space after a root-level number (the router
 * reads only objects and arrays). String bytes are copied as they are (the column was checked
 * as UTF-8 already).
 *
 * Every node, string and member name lives in the reader's arena until jsonr_reset(); the
 * caller may put memory of its own with the same lifetime there (jsonr_alloc).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/util/slice.h"

/* The kinds of Jackson's JsonNode that matter to a Connect schema. */
enum jsonr_type {
	JSONR_NULL,
	JSONR_BOOL,
	JSONR_INT,    /* an integer that fits an int: IntNode */
	JSONR_LONG,   /* one that fits a long: LongNode */
	JSONR_BIG,    /* a larger one: BigIntegerNode (its value is not kept) */
	JSONR_DOUBLE, /* any number with '.' or an exponent: DoubleNode */
	JSONR_STRING,
	JSONR_ARRAY,
	JSONR_OBJECT,
};

struct jsonr_node {
	enum jsonr_type type;
	bool b;			 /* BOOL */
	int64_t i;		 /* INT, LONG */
	double d;		 /* DOUBLE */
	struct slice s;		 /* STRING: the decoded bytes (NUL-terminated in memory) */
	const char *key;	 /* member name (decoded) inside an object, else NULL */
	struct jsonr_node *kids; /* ARRAY elements or OBJECT members, in order */
	size_t n;
};

struct jsonr;

/* jsonr_new() - an empty reader; free with jsonr_free(). */
struct jsonr *jsonr_new(void);

/* jsonr_free() - free @r and everything in its arena; NULL allowed. */
void jsonr_free(struct jsonr *r);

/* jsonr_reset() - free every tree read and every jsonr_alloc() since the last reset. */
void jsonr_reset(struct jsonr *r);

/**
 * jsonr_parse() - read the first JSON value of @s.
 * @s: borrowed, @len bytes; not read beyond them, need not be NUL-terminated.
 * @ret: on success the root, owned by @r until jsonr_reset() or jsonr_free().
 *
 * Return: 0, or -EPROTO for malformed or too deeply nested input.
 */
int jsonr_parse(struct jsonr *r, const char *s, size_t len, const struct jsonr_node **ret);

/* jsonr_alloc() - @size zeroed bytes in @r's arena (freed by jsonr_reset()). */
void *jsonr_alloc(struct jsonr *r, size_t size);

/* jsonr_strndup() - a NUL-terminated copy of @n bytes at @s in @r's arena. */
char *jsonr_strndup(struct jsonr *r, const char *s, size_t n);

#endif
