/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hstore, as Debezium converts it: pgjdbc's HStoreConverter puts the pairs into a
 * java.util.HashMap in the order of PostgreSQL's text; with hstore.handling.mode=json Jackson
 * writes the map in the HashMap's iteration order, with map it is a Connect MAP, which the
 * converters write in that order too. That order is reproduced here: String.hashCode() over
 * UTF-16, HashMap's spread (h ^ h >>> 16), the table's final capacity (16, doubled whenever the
 * size passes three quarters), buckets ascending, insertion order within a bucket (a resize
 * keeps it). A bucket of 8 or more keys (HashMap then resizes or builds a tree) is refused
 * rather than guessed. Parsed by hand: libpq has no hstore parser.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/pgvalue.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/utf8.h"

struct pair {
	size_t key, klen, val, vlen; /* offsets into the unquoted text */
	bool null;
	size_t bucket, order;
};

/* A "..." of hstore's output into @out, '\' escapes undone; false if malformed. */
static bool
hs_quoted(const char **p, const char *end, struct buf *out)
{
	const char *s = *p;

	if (s >= end || *s++ != '"') {
		return false;
	}
	for (; s < end; s++) {
		if (*s == '"') {
			*p = s + 1;
			return true;
		}
		if (*s == '\\' && ++s == end) {
			return false;
		}
		buf_add_char(out, *s);
	}
	return false;
}

/*
 * @s as a JSON string the way the ObjectMapper Debezium converts hstore with writes it: '"',
 * '\\' and control characters escaped (\b \t \n \f \r, else \u00XX), everything else raw,
 * supplementary characters too (unlike JsonConverter's, jsonw_string(): the compat suite's
 * ob_ext). -EILSEQ if @s is not UTF-8.
 */
static int
mapper_string(struct buf *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";

	if (!utf8_valid(s, n)) {
		return -EILSEQ;
	}
	buf_add_char(out, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		const char *esc = ch == '"'  ? "\\\"" :
				  ch == '\\' ? "\\\\" :
				  ch == '\b' ? "\\b" :
				  ch == '\t' ? "\\t" :
				  ch == '\n' ? "\\n" :
				  ch == '\f' ? "\\f" :
				  ch == '\r' ? "\\r" :
					       NULL;

		if (esc) {
			buf_add_str(out, esc);
		} else if (ch < 0x20) {
			buf_add_str(out, "\\u00");
			buf_add_char(out, hex[ch >> 4]);
			buf_add_char(out, hex[ch & 15]);
		} else {
			buf_add_char(out, (char)ch);
		}
	}
	buf_add_char(out, '"');
	return 0;
}

/* Java's String.hashCode() of UTF-8 @s: 31 * h + each UTF-16 code unit. */
static uint32_t
java_hash(const unsigned char *s, size_t n)
{
	uint32_t h = 0;

	for (size_t i = 0; i < n;) {
		uint32_t cp = s[i];
		size_t len = cp < 0x80 ? 1 : cp < 0xE0 ? 2 : cp < 0xF0 ? 3 : 4;

		if (len > 1) {
			cp &= 0xFF >> (len + 1);
			for (size_t k = 1; k < len && i + k < n; k++) {
				cp = (cp << 6) | (s[i + k] & 0x3F);
			}
		}
		i += len;
		if (cp >= 0x10000) {
			cp -= 0x10000;
			h = 31 * h + (0xD800 + (cp >> 10));
			h = 31 * h + (0xDC00 + (cp & 0x3FF));
		} else {
			h = 31 * h + cp;
		}
	}
	return h;
}

static int
by_bucket(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	if (x->bucket != y->bucket) {
		return x->bucket < y->bucket ? -1 : 1;
	}
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The pairs in HashMap's iteration order; -EINVAL for a bucket HashMap would not keep a list. */
static int
hashmap_order(const char *text, struct pair *pairs, size_t n, size_t cap)
{
	size_t run = 1;

	for (size_t i = 0; i < n; i++) {
		uint32_t h = java_hash((const unsigned char *)text + pairs[i].key, pairs[i].klen);

		pairs[i].bucket = (h ^ (h >> 16)) & (cap - 1);
	}
	qsort(pairs, n, sizeof(*pairs), by_bucket);
	for (size_t i = 1; i < n; i++) {
		run = pairs[i].bucket == pairs[i - 1].bucket ? run + 1 : 1;
		if (run >= 8) {
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * @t's pairs, unquoted into @pv->raw, in HashMap's iteration order into *@ret (n in *@ret_n,
 * to free). Return: 0, or -EINVAL (not hstore's output, a bucket of 8).
 */
static int
hstore_pairs(struct slice t, struct pgvalue *pv, struct pair **ret, size_t *ret_n)
{
	const char *p = t.p, *end = t.p + t.len;
	struct pair *pairs = NULL;
	size_t n = 0, cap = 16, alloc = 0;
	int rc = 0;

	buf_reset(&pv->raw);
	while (p < end) {
		struct pair pr = { .order = n };

		if (n) {
			if (end - p < 2 || p[0] != ',' || p[1] != ' ') {
				rc = -EINVAL;
				break;
			}
			p += 2;
		}
		pr.key = pv->raw.len;
		if (!hs_quoted(&p, end, &pv->raw) || end - p < 2 || p[0] != '=' || p[1] != '>') {
			rc = -EINVAL;
			break;
		}
		p += 2;
		pr.klen = pv->raw.len - pr.key;
		pr.val = pv->raw.len;
		if (end - p >= 4 && memcmp(p, "NULL", 4) == 0) {
			pr.null = true;
			p += 4;
		} else if (!hs_quoted(&p, end, &pv->raw)) {
			rc = -EINVAL;
			break;
		}
		pr.vlen = pv->raw.len - pr.val;
		if (n == alloc) {
			alloc = alloc ? alloc * 2 : 8;
			pairs = xrealloc(pairs, alloc * sizeof(*pairs));
		}
		pairs[n++] = pr;
		if (n > cap * 3 / 4) {
			cap *= 2;
		}
	}
	if (rc == 0) {
		rc = hashmap_order(pv->raw.data, pairs, n, cap);
	}
	*ret = pairs;
	*ret_n = n;
	return rc;
}

int
pgvalue_hstore_json(struct slice t, struct pgvalue *pv)
{
	struct pair *pairs;
	size_t n;
	int rc;

	pv->v.type = CVALUE_STRING;
	pv->v.name = "io.debezium.data.Json";
	pv->v.version = 1;
	if (pv->v.is_null) {
		return 0;
	}
	rc = hstore_pairs(t, pv, &pairs, &n);
	buf_reset(&pv->data);
	buf_add_char(&pv->data, '{');
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (i) {
			buf_add_char(&pv->data, ',');
		}
		rc = mapper_string(&pv->data, pv->raw.data + pairs[i].key, pairs[i].klen);
		buf_add_char(&pv->data, ':');
		if (pairs[i].null) {
			buf_add_str(&pv->data, "null");
		} else if (rc == 0) {
			rc = mapper_string(&pv->data, pv->raw.data + pairs[i].val, pairs[i].vlen);
		}
	}
	buf_add_char(&pv->data, '}');
	free(pairs);
	pv->v.u.s = (struct slice){ pv->data.data, pv->data.len };
	return rc;
}

int
pgvalue_hstore_map(struct slice t, struct pgvalue *pv)
{
	/* SchemaBuilder.map(STRING_SCHEMA, OPTIONAL_STRING_SCHEMA) */
	static const struct cvalue keys = { .type = CVALUE_STRING };
	static const struct cvalue values = { .type = CVALUE_STRING, .optional = true };
	struct pair *pairs;
	size_t n;
	int rc;

	pv->v.type = CVALUE_MAP;
	pv->v.name = NULL;
	pv->v.version = 0;
	pv->v.u.map.keys = &keys;
	pv->v.u.map.values = &values;
	pv->v.u.map.n = 0;
	if (pv->v.is_null) {
		return 0;
	}
	rc = hstore_pairs(t, pv, &pairs, &n);
	if (rc == 0 && !utf8_valid(pv->raw.data, pv->raw.len)) {
		rc = -EILSEQ;
	}
	if (rc == 0) {
		if (2 * n > pv->kvcap) {
			pv->kvcap = 2 * n;
			pv->kv = xrealloc(pv->kv, pv->kvcap * sizeof(*pv->kv));
		}
		for (size_t i = 0; i < n; i++) {
			pv->kv[2 * i] = (struct cvalue){
				.type = CVALUE_STRING,
				.u.s = { pv->raw.data + pairs[i].key, pairs[i].klen },
			};
			pv->kv[2 * i + 1] = (struct cvalue){
				.type = CVALUE_STRING,
				.optional = true,
				.is_null = pairs[i].null,
				.u.s = { pv->raw.data + pairs[i].val, pairs[i].vlen },
			};
		}
		pv->v.u.map.kv = pv->kv;
		pv->v.u.map.n = n;
	}
	free(pairs);
	return rc;
}
