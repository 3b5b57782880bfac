/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_BUF_H
#define OUTBOXD_BUF_H

#include <stdarg.h>
#include <stddef.h>

/*
 * A growable byte buffer, always NUL-terminated after its @len bytes so it can be used as a
 * C string when it holds text. All string building goes through it (STYLE.md rule 12).
 */
struct buf {
	char *data; /* owned; NULL until the first append */
	size_t len; /* bytes used, not counting the terminating NUL */
	size_t cap; /* bytes allocated */
};

#define BUF_INIT ((struct buf){ NULL, 0, 0 })

/* buf_add() - append @len bytes of @p (borrowed). */
void buf_add(struct buf *b, const void *p, size_t len);

/* buf_add_str() - append a NUL-terminated string (borrowed). */
void buf_add_str(struct buf *b, const char *s);

/* buf_add_char() - append one byte. */
void buf_add_char(struct buf *b, char c);

/* buf_add_fmt() - append printf-formatted text; never truncates. */
void buf_add_fmt(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* buf_add_vfmt() - va_list form of buf_add_fmt(). */
void buf_add_vfmt(struct buf *b, const char *fmt, va_list ap);

/* buf_reserve() - make room for @extra more bytes (plus the NUL). */
void buf_reserve(struct buf *b, size_t extra);

/* buf_cstr() - the contents as a C string; "" for an empty buffer. Borrowed from @b. */
const char *buf_cstr(const struct buf *b);

/* buf_reset() - empty the buffer but keep its memory for reuse. */
void buf_reset(struct buf *b);

/* buf_steal() - take the contents; the caller frees them; @b is left empty. Never NULL. */
char *buf_steal(struct buf *b);

/* buf_fini() - free the contents; @b is left empty and reusable. */
void buf_fini(struct buf *b);

#endif
