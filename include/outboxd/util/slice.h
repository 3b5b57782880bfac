/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_SLICE_H
#define OUTBOXD_SLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/*
 * A borrowed run of bytes, not NUL-terminated. Decoded messages point into the CopyData
 * buffer through slices, valid until the next PQgetCopyData/PQfreemem (STYLE.md 3.4).
 */
struct slice {
	const char *p;
	size_t len;
};

#define SLICE_NULL ((struct slice){ NULL, 0 })

/* slice_from_str() - a slice over a NUL-terminated string (borrowed). */
static inline struct slice
slice_from_str(const char *s)
{
	return (struct slice){ s, s ? strlen(s) : 0 };
}

/* slice_eq_str() - true if @a holds exactly the bytes of @s. */
static inline bool
slice_eq_str(struct slice a, const char *s)
{
	size_t n = strlen(s);

	return a.p && a.len == n && memcmp(a.p, s, n) == 0;
}

#endif
