/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/connect/record.h"

#include <stdlib.h>
#include <string.h>

#include "outboxd/util/mem.h"

void
record_init(struct record *rec)
{
	*rec = (struct record){ .partition = -1, .timestamp_ms = -1 };
}

void
record_reset(struct record *rec)
{
	buf_reset(&rec->topic);
	buf_reset(&rec->key);
	buf_reset(&rec->value);
	rec->key_null = rec->value_null = false;
	rec->nheaders = 0;
	rec->partition = -1;
	rec->timestamp_ms = -1;
}

void
record_fini(struct record *rec)
{
	buf_fini(&rec->topic);
	buf_fini(&rec->key);
	buf_fini(&rec->value);
	for (size_t i = 0; i < rec->headers_cap; i++) {
		buf_fini(&rec->headers[i].name);
		buf_fini(&rec->headers[i].value);
	}
	free(rec->headers);
	record_init(rec);
}

struct record_header *
record_add_header(struct record *rec, const char *name)
{
	struct record_header *h;

	if (rec->nheaders == rec->headers_cap) {
		size_t cap = rec->headers_cap ? rec->headers_cap * 2 : 8;

		rec->headers = xrealloc(rec->headers, cap * sizeof(*rec->headers));
		memset(rec->headers + rec->headers_cap, 0,
		       (cap - rec->headers_cap) * sizeof(*rec->headers));
		rec->headers_cap = cap;
	}
	h = &rec->headers[rec->nheaders++];
	buf_reset(&h->name);
	buf_add_str(&h->name, name);
	buf_reset(&h->value);
	h->null = false;
	return h;
}

void
record_add_text_header(struct record *rec, const char *name, const char *p, size_t len)
{
	struct record_header *h = record_add_header(rec, name);

	buf_add(&h->value, p, len);
}

const char *
record_header_text(const struct record *rec, const char *name)
{
	for (size_t i = 0; i < rec->nheaders; i++) {
		if (strcmp(buf_cstr(&rec->headers[i].name), name) == 0 && !rec->headers[i].null) {
			return buf_cstr(&rec->headers[i].value);
		}
	}
	return NULL;
}
