/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/jsonw.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "outboxd/javafloat.h"

/*
 * Doubles and floats are printed by javafloat.c, which reproduces both Java 17's
 * FloatingDecimal (not always the shortest form: 1e23 -> "9.999999999999999E22",
 * 2.82879384806159E17 -> "2.82879384806159008E17") and the shortest form of Java 19+.
 */

int
jsonw_double_format_parse(const char *s, enum jsonw_double_format *ret, char *errbuf,
			  size_t errlen)
{
	size_t n;

	if (!s) {
		*ret = JSONW_DOUBLE_JDK17;
		return 0;
	}
	while (*s == ' ' || *s == '\t') {
		s++;
	}
	n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) {
		n--;
	}
	if (n == 5 && strncasecmp(s, "jdk17", 5) == 0) {
		*ret = JSONW_DOUBLE_JDK17;
		return 0;
	}
	if (n == 8 && strncasecmp(s, "shortest", 8) == 0) {
		*ret = JSONW_DOUBLE_SHORTEST;
		return 0;
	}
	if (errbuf && errlen) {
		snprintf(errbuf, errlen,
			 "outboxd.java.double.format: invalid value '%s'; use 'jdk17' (Java 17's "
			 "Double.toString, what Debezium 3.6.1 on Java 17 prints) or 'shortest' "
			 "(Java 19+)", s);
	}
	return -EINVAL;
}

/* Decode one UTF-8 sequence at @s; 0 on malformed input, else its length and *cp. */
static size_t
utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
	uint32_t c;
	size_t n, i;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		n = 2;
		c = s[0] & 0x1F;
	} else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		n = 3;
		c = s[0] & 0x0F;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		n = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len < n) {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80) {
			return 0;
		}
		c = (c << 6) | (s[i] & 0x3F);
	}
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
	    (c >= 0xD800 && c <= 0xDFFF)) {
		return 0;
	}
	*cp = c;
	return n;
}

bool
jsonw_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;
	uint32_t cp;

	while (i < len) {
		n = utf8_decode(p + i, len - i, &cp);
		if (!n) {
			return false;
		}
		i += n;
	}
	return true;
}

static void
add_u_escape(struct buf *b, unsigned v)
{
	buf_add_fmt(b, "\\u%04X", v);
}

int
jsonw_string(struct buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;
	uint32_t cp = 0;

	if (!jsonw_utf8_valid(s, len)) {
		return -EINVAL;
	}
	buf_reserve(b, len + 2);
	buf_add_char(b, '"');
	while (i < len) {
		size_t run = i;

		/*
		 * The common case, copied in one piece: bytes Jackson writes as they are (printable
		 * ASCII but the quote and the backslash, DEL, and whole BMP sequences, whose lead
		 * bytes are below 0xF0). The input is valid UTF-8, so a run never ends inside a
		 * sequence it started.
		 */
		while (run < len && p[run] >= 0x20 && p[run] < 0xF0 && p[run] != '"' &&
		       p[run] != '\\') {
			run++;
		}
		if (run > i) {
			buf_add(b, p + i, run - i);
			i = run;
			continue;
		}
		n = utf8_decode(p + i, len - i, &cp);
		if (cp >= 0x10000) {
			cp -= 0x10000;
			add_u_escape(b, 0xD800 + (cp >> 10));
			add_u_escape(b, 0xDC00 + (cp & 0x3FF));
		} else if (cp == '"' || cp == '\\') {
			buf_add_char(b, '\\');
			buf_add_char(b, (char)cp);
		} else if (cp < 0x20) {
			switch (cp) {
			case '\b': buf_add_str(b, "\\b"); break;
			case '\t': buf_add_str(b, "\\t"); break;
			case '\n': buf_add_str(b, "\\n"); break;
			case '\f': buf_add_str(b, "\\f"); break;
			case '\r': buf_add_str(b, "\\r"); break;
			default: add_u_escape(b, cp); break;
			}
		} else {
			buf_add(b, p + i, n);
		}
		i += n;
	}
	buf_add_char(b, '"');
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
