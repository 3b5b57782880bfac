/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/util/buf.h"

#include <stdio.h>
#include <string.h>

#include "outboxd/util/mem.h"

void
buf_reserve(struct buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	size_t cap;

	if (need <= b->cap) {
		return;
	}
	cap = b->cap ? b->cap : 64;
	while (cap < need) {
		cap *= 2;
	}
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

void
buf_add(struct buf *b, const void *p, size_t len)
{
	buf_reserve(b, len);
	if (len) {
		memcpy(b->data + b->len, p, len);
	}
	b->len += len;
	b->data[b->len] = '\0';
}

void
buf_add_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_add_char(struct buf *b, char c)
{
	buf_reserve(b, 1);
	b->data[b->len++] = c;
	b->data[b->len] = '\0';
}

void
buf_add_vfmt(struct buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	size_t room;
	int n;

	/* Format into the spare room first; only a longer result needs a second pass. */
	buf_reserve(b, 64);
	room = b->cap - b->len;
	va_copy(ap2, ap);
	n = vsnprintf(b->data + b->len, room, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		b->data[b->len] = '\0';
		return;
	}
	if ((size_t)n >= room) {
		buf_reserve(b, (size_t)n);
		vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	}
	b->len += (size_t)n;
}

void
buf_add_fmt(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_add_vfmt(b, fmt, ap);
	va_end(ap);
}

const char *
buf_cstr(const struct buf *b)
{
	return b->data ? b->data : "";
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data) {
		b->data[0] = '\0';
	}
}

char *
buf_steal(struct buf *b)
{
	char *p = b->data ? b->data : xstrdup("");

	*b = BUF_INIT;
	return p;
}

void
buf_fini(struct buf *b)
{
	free(b->data);
	*b = BUF_INIT;
}
