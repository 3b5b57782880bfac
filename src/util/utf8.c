/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/util/utf8.h"

#include <errno.h>
#include <string.h>

/*
 * Out of line on purpose: jsonw_string() calls it only for non-ASCII characters, and inlined
 * there it made every call of that hot function dearer (more registers saved on entry), which
 * outweighs the call it saves for the short strings of a record (field names, schema names).
 */
size_t
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
	    utf8_is_surrogate(c)) {
		return 0;
	}
	*cp = c;
	return n;
}

/* Eight bytes at @p, none of them >= 0x80 (the caller checked that 8 are there). */
static bool
ascii8(const unsigned char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return (w & 0x8080808080808080ull) == 0;
}

bool
utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;
	uint32_t cp;

	while (i < len) {
		/* Outbox payloads are mostly ASCII: skip it a word at a time. */
		while (i + 8 <= len && ascii8(p + i)) {
			i += 8;
		}
		if (i == len) {
			break;
		}
		n = utf8_decode(p + i, len - i, &cp);
		if (!n) {
			return false;
		}
		i += n;
	}
	return true;
}

void
utf8_put(struct buf *b, uint32_t cp)
{
	if (cp < 0x80) {
		buf_add_char(b, (char)cp);
	} else if (cp < 0x800) {
		buf_add_char(b, (char)(0xC0 | cp >> 6));
		buf_add_char(b, (char)(0x80 | (cp & 0x3F)));
	} else if (cp < 0x10000) {
		buf_add_char(b, (char)(0xE0 | cp >> 12));
		buf_add_char(b, (char)(0x80 | (cp >> 6 & 0x3F)));
		buf_add_char(b, (char)(0x80 | (cp & 0x3F)));
	} else {
		buf_add_char(b, (char)(0xF0 | cp >> 18));
		buf_add_char(b, (char)(0x80 | (cp >> 12 & 0x3F)));
		buf_add_char(b, (char)(0x80 | (cp >> 6 & 0x3F)));
		buf_add_char(b, (char)(0x80 | (cp & 0x3F)));
	}
}

int
utf8_hex_digit(char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

int
utf8_hex4(const char *p, size_t avail, uint32_t *ret)
{
	uint32_t v = 0;

	for (size_t i = 0; i < 4; i++) {
		int h = i < avail ? utf8_hex_digit(p[i]) : -1;

		if (h < 0) {
			return -EINVAL;
		}
		v = v << 4 | (uint32_t)h;
	}
	*ret = v;
	return 0;
}

int
utf8_uescape(const char *p, const char *end, uint32_t *ret_cp)
{
	uint32_t hi, lo;

	if (p > end || utf8_hex4(p, (size_t)(end - p), &hi) < 0) {
		return -EINVAL;
	}
	if (hi >= 0xD800 && hi <= 0xDBFF && end - p >= 10 && p[4] == '\\' && p[5] == 'u' &&
	    utf8_hex4(p + 6, 4, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
		*ret_cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
		return 10;
	}
	*ret_cp = hi;
	return 4;
}
