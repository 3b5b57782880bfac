/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer entry point for jsonr, the reader of table.expand.json.payload (the application
 * writes those bytes). The input is parsed from an exact-size heap copy, so a read past its
 * end shows. A tree that parses must be well-formed (every string NUL-terminated, member
 * names only inside objects and none twice, each integer of the kind its value says), and it
 * must survive a round trip: written back as JSON and read again, it gives the same tree.
 * A broken property abort()s, which libFuzzer reports as a crash.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/jsonr.h"
#include "outboxd/util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The value of a BigIntegerNode is not kept; any integer beyond a long reads as one. */
#define BIG_TEXT "99999999999999999999"

/* Abort unless @n (inside an object if @in_object) is well-formed. */
static void
check_node(const struct jsonr_node *n, bool in_object)
{
	if (in_object != (n->key != NULL)) {
		abort();
	}
	switch (n->type) {
	case JSONR_STRING:
		if (!n->s.p || n->s.p[n->s.len] != '\0') {
			abort();
		}
		break;
	case JSONR_INT:
		if (n->i < INT32_MIN || n->i > INT32_MAX) {
			abort();
		}
		break;
	case JSONR_LONG:
		if (n->i >= INT32_MIN && n->i <= INT32_MAX) {
			abort();
		}
		break;
	case JSONR_ARRAY:
	case JSONR_OBJECT:
		for (size_t i = 0; i < n->n; i++) {
			check_node(&n->kids[i], n->type == JSONR_OBJECT);
			for (size_t k = 0; n->type == JSONR_OBJECT && k < i; k++) {
				if (strcmp(n->kids[k].key, n->kids[i].key) == 0) {
					abort(); /* a duplicate keeps one place */
				}
			}
		}
		break;
	default: break;
	}
}

/* A JSON string literal of @n bytes at @s; control bytes and '"' '\\' escaped. */
static void
write_string(struct buf *b, const char *s, size_t n)
{
	buf_add_char(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == '"' || c == '\\') {
			buf_add_fmt(b, "\\u%04x", c);
		} else {
			buf_add_char(b, (char)c);
		}
	}
	buf_add_char(b, '"');
}

/* A double as text that reads back as the same double (and as a double). */
static void
write_double(struct buf *b, double d)
{
	if (isinf(d)) {
		buf_add_str(b, d < 0 ? "-1e999" : "1e999");
	} else {
		buf_add_fmt(b, "%.17e", d);
	}
}

static void
write_node(struct buf *b, const struct jsonr_node *n)
{
	switch (n->type) {
	case JSONR_NULL: buf_add_str(b, "null"); break;
	case JSONR_BOOL: buf_add_str(b, n->b ? "true" : "false"); break;
	case JSONR_INT:
	case JSONR_LONG: buf_add_fmt(b, "%lld", (long long)n->i); break;
	case JSONR_BIG: buf_add_str(b, BIG_TEXT); break;
	case JSONR_DOUBLE: write_double(b, n->d); break;
	case JSONR_STRING: write_string(b, n->s.p, n->s.len); break;
	case JSONR_ARRAY:
	case JSONR_OBJECT:
		buf_add_char(b, n->type == JSONR_ARRAY ? '[' : '{');
		for (size_t i = 0; i < n->n; i++) {
			if (i) {
				buf_add_char(b, ',');
			}
			if (n->type == JSONR_OBJECT) {
				write_string(b, n->kids[i].key, strlen(n->kids[i].key));
				buf_add_char(b, ':');
			}
			write_node(b, &n->kids[i]);
		}
		buf_add_char(b, n->type == JSONR_ARRAY ? ']' : '}');
		break;
	}
}

/* Do two trees hold the same values (a double compared bit for bit)? */
static bool
same(const struct jsonr_node *a, const struct jsonr_node *b)
{
	if (a->type != b->type || (!a->key != !b->key) || (a->key && strcmp(a->key, b->key))) {
		return false;
	}
	switch (a->type) {
	case JSONR_BOOL: return a->b == b->b;
	case JSONR_INT:
	case JSONR_LONG: return a->i == b->i;
	case JSONR_DOUBLE: return memcmp(&a->d, &b->d, sizeof(a->d)) == 0;
	case JSONR_STRING: return a->s.len == b->s.len && memcmp(a->s.p, b->s.p, a->s.len) == 0;
	case JSONR_ARRAY:
	case JSONR_OBJECT:
		if (a->n != b->n) {
			return false;
		}
		for (size_t i = 0; i < a->n; i++) {
			if (!same(&a->kids[i], &b->kids[i])) {
				return false;
			}
		}
		return true;
	default: return true;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jsonr *r = jsonr_new(), *r2 = jsonr_new();
	const struct jsonr_node *root, *again;
	struct buf text = BUF_INIT;
	char *copy = malloc(size ? size : 1);

	if (!copy) {
		abort();
	}
	if (size) {
		memcpy(copy, data, size);
	}
	if (jsonr_parse(r, copy, size, &root) == 0) {
		check_node(root, false);
		write_node(&text, root);
		/* the copy goes first: the tree must own everything it points to */
		free(copy);
		copy = NULL;
		if (jsonr_parse(r2, text.data, text.len, &again) < 0 || !same(root, again)) {
			abort();
		}
	}
	free(copy);
	buf_fini(&text);
	jsonr_free(r2);
	jsonr_free(r);
	return 0;
}
