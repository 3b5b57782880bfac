/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/connect/jsonw.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/configdef.h"
#include "outboxd/connect/javafloat.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/utf8.h"

/*
 * Doubles and floats are printed by javafloat.c, which reproduces both Java 17's
 * FloatingDecimal (not always the shortest form: 1e23 -> "9.999999999999999E22",
 * 2.82879384806159E17 -> "2.82879384806159008E17") and the shortest form of Java 19+.
 */

int
jsonw_double_format_parse(const char *s, enum jsonw_double_format *ret, char *errbuf, size_t errlen)
{
	int i = s ? configdef_enum(s, "jdk17|shortest", NULL) : JSONW_DOUBLE_JDK17;

	if (i < 0) {
		errbuf_set(errbuf, errlen,
			   "outboxd.java.double.format: invalid value '%s'; use 'jdk17' (Java 17's "
			   "Double.toString, what Debezium 3.6.1 on Java 17 prints) or 'shortest' "
			   "(Java 19+)",
			   s);
		return -EINVAL;
	}
	*ret = i == 1 ? JSONW_DOUBLE_SHORTEST : JSONW_DOUBLE_JDK17;
	return 0;
}

/*
 * 1 for the bytes Jackson writes as they are: printable ASCII but the quote and the backslash,
 * and DEL. Anything else takes the slow path: an escape, or a UTF-8 sequence to check.
 */
static const unsigned char plain[256] = {
	/* 0x00 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 0x10 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 0x20 */ 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x30 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x40 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x50 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
	/* 0x60 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x70 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x80 to 0xFF: 0 */
};

#if defined(__SSE2__)
#include <emmintrin.h>
#define JSONW_SSE2
#endif

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define JSONW_SWAR
#define ONES  0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/*
 * The high bit of each byte of @w (little-endian) that is not plain: below 0x20, 0x80 or above,
 * '"' or '\\'. A borrow can flag a byte after a flagged one, never before it, so the lowest flag
 * is exact, which is all the caller uses.
 */
static uint64_t
special8(uint64_t w)
{
	return ((w - 0x20 * ONES) | ((w ^ ('"' * ONES)) - ONES) | ((w ^ ('\\' * ONES)) - ONES) |
		w) &
	       HIGHS;
}
#endif

/* Writes "\uHHHH" (upper-case hex, as Jackson) at @o; room for 6 bytes was reserved. */
static char *
put_u_escape(char *o, unsigned v)
{
	static const char hex[] = "0123456789ABCDEF";

	o[0] = '\\';
	o[1] = 'u';
	o[2] = hex[(v >> 12) & 0xF];
	o[3] = hex[(v >> 8) & 0xF];
	o[4] = hex[(v >> 4) & 0xF];
	o[5] = hex[v & 0xF];
	return o + 6;
}

/* The short escapes Jackson writes (\" \\ \b \t \n \f \r); 0: the byte is written \uHHHH. */
static const char short_escape[128] = {
	['"'] = '"',  ['\\'] = '\\', ['\b'] = 'b', ['\t'] = 't',
	['\n'] = 'n', ['\f'] = 'f',  ['\r'] = 'r',
};

/* Writes the escape of @c (an ASCII byte that is not plain) at @o; room for 6 was reserved. */
static inline char *
put_escape(char *o, unsigned char c)
{
	if (short_escape[c]) {
		o[0] = '\\';
		o[1] = short_escape[c];
		return o + 2;
	}
	return put_u_escape(o, c);
}

/*
 * The UTF-8 character at @p (@left bytes remain), written at @o: as it is in the BMP, as a
 * surrogate pair of escapes beyond it (Jackson's form: 12 bytes for 4 read). Return: the bytes
 * read, 0 when malformed; *@ret_o: past what was written.
 */
static inline size_t
put_non_ascii(char *o, const unsigned char *p, size_t left, char **ret_o)
{
	uint32_t cp;
	size_t n = utf8_decode(p, left, &cp);

	if (n && cp < 0x10000) {
		memcpy(o, p, n);
		o += n;
	} else if (n) {
		cp -= 0x10000;
		o = put_u_escape(o, 0xD800 + (cp >> 10));
		o = put_u_escape(o, 0xDC00 + (cp & 0x3FF));
	}
	*ret_o = o;
	return n;
}

/* The most one escape or character writes (a surrogate pair: 12 bytes, for 4 read). */
#define JSONW_ESCAPE_EXTRA 12

#ifdef JSONW_SSE2
/*
 * Sixteen bytes at a time, with an exact mask of the bytes that are not plain (a signed compare
 * flags both those below 0x20 and those from 0x80 up). A quote or a backslash, one every few
 * bytes in a JSON payload, is escaped here and the next chunk loaded from the byte after it; it
 * stops at any other byte that is not plain, for jsonw_string()'s general path, or with fewer
 * than 16 bytes left. The room reserved for the rest of the input lets each chunk be stored
 * whole; an escape is written only while that reservation still holds (otherwise the general
 * path renews it). *@ret_i and *@ret_o: the cursors, in and out.
 */
static inline void
sse_run(const unsigned char *p, size_t len, size_t *ret_i, char **ret_o, const char *limit)
{
	size_t i = *ret_i;
	char *o = *ret_o;

	while (i + 16 <= len) {
		const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		const __m128i special =
			_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
						  _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
				     _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
		unsigned m = (unsigned)_mm_movemask_epi8(special);
		unsigned char c;
		size_t k;

		_mm_storeu_si128((__m128i *)(void *)o, v);
		if (!m) {
			i += 16;
			o += 16;
			continue;
		}
		k = (size_t)__builtin_ctz(m);
		i += k;
		o += k;
		c = p[i];
		if ((c != '"' && c != '\\') ||
		    (size_t)(limit - o) < len - i + JSONW_ESCAPE_EXTRA + 2) {
			break;
		}
		o[0] = '\\';
		o[1] = (char)c;
		o += 2;
		i++;
	}
	*ret_i = i;
	*ret_o = o;
}
#endif

/*
 * One pass with an output cursor: plain bytes are copied as they are read (eight at a time),
 * the rest escaped in place. The buffer has room for what is left of the input copied as it
 * is, plus a slack for the escapes, reserved up front (a JSON payload written as a string has
 * a quote to escape every few bytes: a reservation per escape was a fifth of the function's
 * cost); the slack is renewed only when the escapes have used it up. Malformed UTF-8 leaves @b
 * as it was.
 */
int
jsonw_string(struct buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t start = b->len, i = 0, n;
	char *o, *limit;

	buf_reserve(b, len + len / 4 + JSONW_ESCAPE_EXTRA + 2);
	o = b->data + b->len;
	limit = b->data + b->cap;
	*o++ = '"';
	while (i < len) {
#ifdef JSONW_SSE2
		sse_run(p, len, &i, &o, limit);
#endif
#ifdef JSONW_SWAR
		/*
		 * Eight bytes at a time while they are plain. The room reserved for the rest of the
		 * input lets the whole word be stored before it is known how much of it counts.
		 */
		while (i + 8 <= len) {
			uint64_t w, m;

			memcpy(&w, p + i, 8);
			memcpy(o, &w, 8);
			m = special8(w);
			if (m) {
				size_t k = (size_t)__builtin_ctzll(m) / 8;

				i += k;
				o += k;
				break;
			}
			i += 8;
			o += 8;
		}
#endif
		while (i < len && plain[p[i]]) {
			*o++ = (char)p[i++];
		}
		if (i == len) {
			break;
		}
		/* room for the rest as it is, this escape, the closing quote and the NUL */
		if ((size_t)(limit - o) < len - i + JSONW_ESCAPE_EXTRA + 2) {
			b->len = (size_t)(o - b->data);
			buf_reserve(b, len - i + (len - i) / 4 + JSONW_ESCAPE_EXTRA + 2);
			o = b->data + b->len;
			limit = b->data + b->cap;
		}
		if (p[i] >= 0x80) {
			n = put_non_ascii(o, p + i, len - i, &o);
			if (!n) {
				b->len = start;
				b->data[start] = '\0';
				return -EINVAL;
			}
			i += n;
			continue;
		}
		o = put_escape(o, p[i++]);
	}
	*o++ = '"';
	*o = '\0';
	b->len = (size_t)(o - b->data);
	return 0;
}

void
jsonw_int(struct buf *b, int64_t v)
{
	buf_add_fmt(b, "%lld", (long long)v);
}

void
jsonw_java_double(struct buf *b, double x, enum jsonw_double_format fmt)
{
	if (fmt == JSONW_DOUBLE_SHORTEST) {
		javafloat_double_shortest(x, b);
	} else {
		javafloat_double_jdk17(x, b);
	}
}

void
jsonw_java_float(struct buf *b, float x, enum jsonw_double_format fmt)
{
	if (fmt == JSONW_DOUBLE_SHORTEST) {
		javafloat_float_shortest(x, b);
	} else {
		javafloat_float_jdk17(x, b);
	}
}

void
jsonw_double(struct buf *b, double x, enum jsonw_double_format fmt)
{
	if (!isfinite(x)) {
		buf_add_char(b, '"');
		jsonw_java_double(b, x, fmt);
		buf_add_char(b, '"');
		return;
	}
	jsonw_java_double(b, x, fmt);
}

void
jsonw_float(struct buf *b, float x, enum jsonw_double_format fmt)
{
	if (!isfinite(x)) {
		buf_add_char(b, '"');
		jsonw_java_float(b, x, fmt);
		buf_add_char(b, '"');
		return;
	}
	jsonw_java_float(b, x, fmt);
}

static void
base64(struct buf *b, const void *data, size_t len, const char *alphabet)
{
	const unsigned char *p = data;
	size_t i;

	buf_reserve(b, (len + 2) / 3 * 4);
	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

		buf_add_char(b, alphabet[v >> 18]);
		buf_add_char(b, alphabet[(v >> 12) & 63]);
		buf_add_char(b, alphabet[(v >> 6) & 63]);
		buf_add_char(b, alphabet[v & 63]);
	}
	if (len - i == 1) {
		uint32_t v = (uint32_t)p[i] << 16;

		buf_add_char(b, alphabet[v >> 18]);
		buf_add_char(b, alphabet[(v >> 12) & 63]);
		buf_add_str(b, "==");
	} else if (len - i == 2) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;

		buf_add_char(b, alphabet[v >> 18]);
		buf_add_char(b, alphabet[(v >> 12) & 63]);
		buf_add_char(b, alphabet[(v >> 6) & 63]);
		buf_add_char(b, '=');
	}
}

void
jsonw_base64(struct buf *b, const void *p, size_t len)
{
	base64(b, p, len, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
}

void
jsonw_base64url(struct buf *b, const void *p, size_t len)
{
	base64(b, p, len, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");
}
