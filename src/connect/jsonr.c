/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/connect/jsonr.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/utf8.h"

/* Jackson's StreamReadConstraints defaults. */
#define MAX_DEPTH  1000
#define MAX_NUMBER 1000

/*
 * The reader is bounded: every byte is looked at through peek(), which answers -1 at the end
 * and after a failure, and a failure is sticky, so once something is malformed nothing more is
 * read and the caller checks the flag once.
 */
struct jsonr {
	const char *p, *end;
	bool failed;
	int depth;
	struct buf tmp; /* the string being decoded */
	void **blocks;	/* the arena: everything allocated since the last reset */
	size_t n, cap;
};

struct jsonr *
jsonr_new(void)
{
	return znew(struct jsonr);
}

void
jsonr_reset(struct jsonr *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->blocks[i]);
	}
	r->n = 0;
}

void
jsonr_free(struct jsonr *r)
{
	if (!r) {
		return;
	}
	jsonr_reset(r);
	free(r->blocks);
	buf_fini(&r->tmp);
	free(r);
}

static void *
keep(struct jsonr *r, void *p)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->blocks = xrealloc(r->blocks, r->cap * sizeof(*r->blocks));
	}
	r->blocks[r->n++] = p;
	return p;
}

void *
jsonr_alloc(struct jsonr *r, size_t size)
{
	return keep(r, xcalloc(1, size ? size : 1));
}

char *
jsonr_strndup(struct jsonr *r, const char *s, size_t n)
{
	return keep(r, xstrndup(s, n));
}

/* --- the bounded reader ------------------------------------------------------------------ */

static int
fail(struct jsonr *r)
{
	r->failed = true;
	return -EPROTO;
}

/* The next byte, or -1 at the end (or after a failure). */
static int
peek(const struct jsonr *r)
{
	return r->failed || r->p == r->end ? -1 : (unsigned char)*r->p;
}

/* Take the next byte if it is @c. */
static bool
eat(struct jsonr *r, char c)
{
	if (peek(r) != (unsigned char)c) {
		return false;
	}
	r->p++;
	return true;
}

static void
skip_ws(struct jsonr *r)
{
	while (peek(r) == ' ' || peek(r) == '\t' || peek(r) == '\n' || peek(r) == '\r') {
		r->p++;
	}
}

/* The literal @word, whole, or a failure. */
static int
literal(struct jsonr *r, const char *word)
{
	size_t n = strlen(word);

	if (r->failed || (size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0) {
		return fail(r);
	}
	r->p += n;
	return 0;
}

/* One "\u" escape (after the backslash and 'u'), a surrogate pair joined; a lone one fails. */
static int
read_uescape(struct jsonr *r)
{
	uint32_t cp;
	int n = utf8_uescape(r->p, r->end, &cp);

	if (n < 0 || utf8_is_surrogate(cp)) {
		return fail(r);
	}
	r->p += n;
	utf8_put(&r->tmp, cp);
	return 0;
}

/* The escape after a backslash: \" \\ \/ \b \f \n \r \t \uHHHH, nothing else. */
static int
read_escape(struct jsonr *r)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	int c = peek(r);
	const char *at = c > 0 ? strchr(from, c) : NULL;

	if (c == 'u') {
		r->p++;
		return read_uescape(r);
	}
	if (!at) {
		return fail(r);
	}
	r->p++;
	buf_add_char(&r->tmp, to[at - from]);
	return 0;
}

/* A string after its opening quote, decoded into r->tmp (NUL-terminated). */
static int
read_string(struct jsonr *r)
{
	buf_reset(&r->tmp);
	buf_add(&r->tmp, "", 0);
	for (;;) {
		int c = peek(r);

		if (c < 0x20) {
			return fail(r); /* the end, or Jackson's "illegal unquoted character" */
		}
		r->p++;
		if (c == '"') {
			return 0;
		}
		if (c != '\\') {
			buf_add_char(&r->tmp, (char)c);
		} else if (read_escape(r) < 0) {
			return -EPROTO;
		}
	}
}

static bool
digit(const struct jsonr *r, const char *p)
{
	return !r->failed && p < r->end && *p >= '0' && *p <= '9';
}

/* A number as Jackson reads it: int, long, BigInteger, or double for any '.' or exponent. */
static int
read_number(struct jsonr *r, struct jsonr_node *n)
{
	const char *s = r->p, *p = r->p;
	bool fp = false;
	char *text, *end;

	if (p < r->end && *p == '-') {
		p++;
	}
	if (!digit(r, p) || (*p == '0' && digit(r, p + 1))) {
		return fail(r); /* no digit, or a leading zero */
	}
	while (digit(r, p)) {
		p++;
	}
	if (p < r->end && *p == '.') {
		fp = true;
		if (!digit(r, ++p)) {
			return fail(r);
		}
		while (digit(r, p)) {
			p++;
		}
	}
	if (p < r->end && (*p == 'e' || *p == 'E')) {
		fp = true;
		p++;
		if (p < r->end && (*p == '+' || *p == '-')) {
			p++;
		}
		if (!digit(r, p)) {
			return fail(r);
		}
		while (digit(r, p)) {
			p++;
		}
	}
	if (p - s > MAX_NUMBER) {
		return fail(r);
	}
	r->p = p;
	text = xstrndup(s, (size_t)(p - s));
	errno = 0;
	if (fp) {
		n->type = JSONR_DOUBLE;
		n->d = strtod(text, &end);
	} else {
		n->i = strtoll(text, &end, 10);
		n->type = errno == ERANGE			 ? JSONR_BIG :
			  n->i >= INT32_MIN && n->i <= INT32_MAX ? JSONR_INT :
								   JSONR_LONG;
	}
	free(text);
	return 0;
}

static int read_value(struct jsonr *r, struct jsonr_node *n);

/* A member's name and its ':'; *ret_at is where it goes (a duplicate keeps its first place). */
static int
read_key(struct jsonr *r, const struct jsonr_node *obj, struct jsonr_node *kid, size_t *ret_at)
{
	size_t at;

	skip_ws(r);
	if (!eat(r, '"') || read_string(r) < 0 || memchr(r->tmp.data, '\0', r->tmp.len)) {
		return fail(r);
	}
	kid->key = jsonr_strndup(r, r->tmp.data, r->tmp.len);
	for (at = 0; at < obj->n && strcmp(obj->kids[at].key, kid->key) != 0; at++) {
	}
	skip_ws(r);
	if (!eat(r, ':')) {
		return fail(r);
	}
	*ret_at = at;
	return 0;
}

/* Members or elements after '[' / '{'; a duplicate key keeps its place, takes the last value. */
static int
read_container(struct jsonr *r, struct jsonr_node *n, bool object)
{
	char close = object ? '}' : ']';
	size_t cap = 0;

	if (++r->depth > MAX_DEPTH) {
		return fail(r);
	}
	n->type = object ? JSONR_OBJECT : JSONR_ARRAY;
	skip_ws(r);
	while (!eat(r, close)) {
		struct jsonr_node kid = { 0 };
		size_t at = n->n;

		if ((n->n && !eat(r, ',')) || (object && read_key(r, n, &kid, &at) < 0) ||
		    read_value(r, &kid) < 0) {
			free(n->kids);
			*n = (struct jsonr_node){ .type = n->type };
			return fail(r);
		}
		if (at == n->n) {
			if (n->n == cap) {
				cap = cap ? cap * 2 : 8;
				n->kids = xrealloc(n->kids, cap * sizeof(*n->kids));
			}
			n->n++;
		}
		n->kids[at] = kid;
		skip_ws(r);
	}
	keep(r, n->kids);
	r->depth--;
	return 0;
}

static int
read_value(struct jsonr *r, struct jsonr_node *n)
{
	skip_ws(r);
	switch (peek(r)) {
	case '{':
	case '[': return read_container(r, n, *r->p++ == '{');
	case '"':
		r->p++;
		if (read_string(r) < 0) {
			return -EPROTO;
		}
		n->type = JSONR_STRING;
		n->s.p = jsonr_strndup(r, r->tmp.data, r->tmp.len);
		n->s.len = r->tmp.len;
		return 0;
	case 't':
	case 'f':
		n->type = JSONR_BOOL;
		n->b = *r->p == 't';
		return literal(r, n->b ? "true" : "false");
	case 'n': n->type = JSONR_NULL; return literal(r, "null");
	case -1: return fail(r);
	default: return read_number(r, n);
	}
}

int
jsonr_parse(struct jsonr *r, const char *s, size_t len, const struct jsonr_node **ret)
{
	struct jsonr_node *root = jsonr_alloc(r, sizeof(*root));

	r->p = s;
	r->end = s + len;
	r->failed = false;
	r->depth = 0;
	if (read_value(r, root) < 0 || r->failed) {
		return -EPROTO;
	}
	*ret = root;
	return 0;
}
