/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_UTF8_H
#define OUTBOXD_UTF8_H

/*
 * UTF-8 and Java's \uHHHH escapes, in one place (H: a hex digit): the strict decoder and validator (RFC 3629:
 * no overlong forms, no surrogates, nothing above U+10FFFF), the encoder, and the reader of a
 * "\uHHHH" escape as java.util.Properties, Jackson and java.util.regex spell it, surrogate
 * pairs joined. What a lone surrogate means is the caller's business (Properties substitutes
 * U+FFFD, Jackson's reader here refuses it), so the reader reports it rather than deciding.
 * Pure: no I/O.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/util/buf.h"

/* utf8_is_surrogate() - true for U+D800..U+DFFF, which UTF-8 cannot carry. */
static inline bool
utf8_is_surrogate(uint32_t cp)
{
	return cp >= 0xD800 && cp <= 0xDFFF;
}

/**
 * utf8_decode() - decode the one well-formed UTF-8 sequence at @s.
 * @s: borrowed; at least one byte (@len > 0); never read beyond @len bytes.
 * @cp: written only on success.
 *
 * Return: the sequence's length (1 to 4), or 0 if it is malformed or truncated.
 */
size_t utf8_decode(const unsigned char *s, size_t len, uint32_t *cp);

/* utf8_valid() - true if @s (borrowed, @len bytes) is well-formed UTF-8. */
bool utf8_valid(const char *s, size_t len);

/**
 * utf8_put() - append the UTF-8 encoding of @cp to @b.
 * @cp: a code point up to U+10FFFF that is not a surrogate (the caller checked).
 */
void utf8_put(struct buf *b, uint32_t cp);

/* utf8_hex_digit() - the value of hex digit @c (either case), or -1 if it is none. */
int utf8_hex_digit(char c);

/**
 * utf8_hex4() - the value of the four hex digits (either case) at @p.
 * @p: borrowed; at most @avail bytes are read, and reading stops at the first byte that is
 *	not a hex digit (so a NUL-terminated string shorter than four is safe).
 * @ret: written only on success.
 *
 * Return: 0, or -EINVAL when fewer than four hex digits are there.
 */
int utf8_hex4(const char *p, size_t avail, uint32_t *ret);

/**
 * utf8_uescape() - read the "HHHH" of a "\uHHHH" escape, and when it is a high surrogate
 * followed by "\uHHHH" holding a low surrogate, that one too, joined into one code point.
 * @p: borrowed; just after the "\u"; nothing at or beyond @end is read.
 * @ret_cp: written only on success: the code point, or the code unit of a lone surrogate
 *	(a high one not followed by an escaped low one, or a low one), which the caller
 *	refuses or replaces (utf8_is_surrogate()).
 *
 * Return: the bytes taken from @p (4, or 10 for a joined pair), or -EINVAL when the first
 * four are not hex digits.
 */
int utf8_uescape(const char *p, const char *end, uint32_t *ret_cp);

#endif
