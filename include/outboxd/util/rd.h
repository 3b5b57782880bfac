/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_UTIL_RD_H
#define OUTBOXD_UTIL_RD_H

/*
 * The bounded big-endian reader every reader of foreign bytes goes through (STYLE.md 3.2). An
 * overrun sets the sticky failed flag, after which every read returns a neutral value (0, an
 * empty slice), so a decoder reads its fields in wire order and checks the flag once. Inline:
 * the pgoutput decoder calls these per column and is on the relay's hot path.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "outboxd/util/slice.h"

struct rd {
	const uint8_t *p, *end;
	bool failed;
};

/* rd_init() - a reader over [@p, @p + @len); @p is borrowed. */
static inline struct rd
rd_init(const uint8_t *p, size_t len)
{
	return (struct rd){ p, p + len, false };
}

/* rd_left() - bytes not read yet (0 once failed). */
static inline size_t
rd_left(const struct rd *r)
{
	return r->failed ? 0 : (size_t)(r->end - r->p);
}

/* rd_take() - the next @n bytes (borrowed), or NULL and the failed flag. */
static inline const uint8_t *
rd_take(struct rd *r, size_t n)
{
	const uint8_t *q = r->p;

	if (r->failed || (size_t)(r->end - r->p) < n) {
		r->failed = true;
		return NULL;
	}
	r->p += n;
	return q;
}

/* rd_be() - an @n-byte (1..8) big-endian unsigned integer. */
static inline uint64_t
rd_be(struct rd *r, size_t n)
{
	const uint8_t *q = rd_take(r, n);
	uint64_t v = 0;

	for (size_t i = 0; q && i < n; i++) {
		v = v << 8 | q[i];
	}
	return v;
}

static inline uint8_t
rd_u8(struct rd *r)
{
	return (uint8_t)rd_be(r, 1);
}

static inline uint16_t
rd_u16(struct rd *r)
{
	return (uint16_t)rd_be(r, 2);
}

static inline uint32_t
rd_u32(struct rd *r)
{
	return (uint32_t)rd_be(r, 4);
}

static inline uint64_t
rd_u64(struct rd *r)
{
	return rd_be(r, 8);
}

/* Two's complement conversions spelled out: the casts are implementation-defined in C11. */
static inline int
rd_i16(struct rd *r)
{
	uint16_t v = rd_u16(r);

	return v & 0x8000u ? (int)v - 0x10000 : (int)v;
}

static inline int32_t
rd_i32(struct rd *r)
{
	uint32_t v = rd_u32(r);

	return v & 0x80000000u ? (int32_t)(v - 0x80000000u) - INT32_MAX - 1 : (int32_t)v;
}

static inline int64_t
rd_i64(struct rd *r)
{
	uint64_t v = rd_u64(r);
	uint64_t sign = UINT64_C(1) << 63;

	return v & sign ? (int64_t)(v - sign) - INT64_MAX - 1 : (int64_t)v;
}

/* rd_str() - a NUL-terminated string that ends before the buffer does; excludes the NUL. */
static inline struct slice
rd_str(struct rd *r)
{
	const uint8_t *nul;
	struct slice s = SLICE_NULL;

	if (r->failed || r->p == r->end) {
		r->failed = true;
		return s;
	}
	nul = memchr(r->p, 0, (size_t)(r->end - r->p));
	if (!nul) {
		r->failed = true;
		return s;
	}
	s.p = (const char *)r->p;
	s.len = (size_t)(nul - r->p);
	r->p = nul + 1;
	return s;
}

/* rd_bytes() - the next @n bytes as a slice (borrowed), or an empty one and the failed flag. */
static inline struct slice
rd_bytes(struct rd *r, size_t n)
{
	const uint8_t *q = rd_take(r, n);

	return q ? (struct slice){ (const char *)q, n } : SLICE_NULL;
}

#endif
