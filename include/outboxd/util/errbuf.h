/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_ERRBUF_H
#define OUTBOXD_ERRBUF_H

#include <stddef.h>

/*
 * The optional "char *errbuf, size_t errlen" pair every fallible function takes last
 * (STYLE.md 3.2): callers that do not want the text pass NULL.
 */

/**
 * errbuf_set() - format a message into @errbuf.
 * @errbuf: may be NULL (then nothing happens); truncated to @errlen including the NUL.
 */
void errbuf_set(char *errbuf, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
