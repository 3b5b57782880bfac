/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer entry point for regex_java, the translation of the operator's Java patterns
 * (table.include.list, route.topic.regex) to PCRE2. The input is split at its first two NUL
 * bytes into a pattern, a subject and a replacement (a missing part is empty); the first byte
 * of the pattern part chooses Pattern.CASE_INSENSITIVE (bit 0) and is not part of the pattern.
 * Checked, besides the sanitizers:
 *  - a refusal says why; a subject that is not valid UTF-8 never matches;
 *  - replaceFirst with "$0" gives the subject back, and with any replacement that parses the
 *    output is valid UTF-8 when the subject and the replacement are;
 *  - \Q<subject>\E matches the subject (quoting is literal, caseless or not);
 *  - '.' matches a one-character subject unless it is one of Java's five line terminators.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/regex_java.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
expect(bool ok)
{
	if (!ok) {
		abort();
	}
}

/* The next NUL-separated part of [*@p, @end) as an exact-size heap copy plus a NUL. */
static char *
part(const uint8_t **p, const uint8_t *end, size_t *ret_len)
{
	const uint8_t *nul = memchr(*p, '\0', (size_t)(end - *p));
	size_t n = nul ? (size_t)(nul - *p) : (size_t)(end - *p);
	char *s = malloc(n + 1);

	expect(s != NULL);
	memcpy(s, *p, n);
	s[n] = '\0';
	*p = nul ? nul + 1 : end;
	*ret_len = n;
	return s;
}

static struct regex_java *
compile(const char *pattern, bool caseless)
{
	struct regex_java *re = NULL;
	char err[512];

	err[0] = '\0';
	if (regex_java_compile(pattern, caseless, &re, err, sizeof(err)) < 0) {
		expect(re == NULL && err[0] != '\0');
		return NULL;
	}
	expect(re != NULL);
	return re;
}

/* replaceFirst(@repl) on @s; the output, or NULL on a match error. */
static char *
replace(struct regex_java *re, const char *repl, const char *s, size_t len, size_t *ret_len)
{
	struct buf out = BUF_INIT;
	char err[512];

	err[0] = '\0';
	if (regex_java_set_replacement(re, repl, err, sizeof(err)) < 0) {
		expect(err[0] != '\0');
		return NULL;
	}
	if (regex_java_replace_first(re, s, len, &out) < 0) {
		buf_fini(&out);
		return NULL;
	}
	*ret_len = out.len;
	return buf_steal(&out);
}

/* The pattern the user wrote, with its own replacement. */
static void
check_pattern(const char *pattern, bool caseless, const char *s, size_t len, const char *repl,
	      size_t repl_len)
{
	struct regex_java *re = compile(pattern, caseless);
	bool valid = utf8_valid(s, len);
	size_t n;
	char *out;
	int m;

	if (!re) {
		return;
	}
	m = regex_java_matches(re, s, len);
	expect(m == 0 || m == 1 || m == -EINVAL);
	expect(valid || m == -EINVAL);
	out = replace(re, "$0", s, len, &n);
	expect(!out || (n == len && memcmp(out, s, len) == 0));
	free(out);
	regex_java_free(re);
	/* a replacement is parsed once per compiled pattern, as the router does */
	re = compile(pattern, caseless);
	expect(re != NULL);
	out = replace(re, repl, s, len, &n);
	expect(!out || !valid || !utf8_valid(repl, repl_len) || utf8_valid(out, n));
	free(out);
	regex_java_free(re);
}

/* \Q<s>\E matches @s itself. */
static void
check_quoted(const char *s, size_t len, bool caseless)
{
	struct buf pat = BUF_INIT;
	struct regex_java *re;

	if (!utf8_valid(s, len) || memchr(s, '\0', len) || strstr(s, "\\E")) {
		return;
	}
	buf_add_fmt(&pat, "\\Q%s\\E", s);
	re = compile(buf_cstr(&pat), caseless);
	expect(re != NULL && regex_java_matches(re, s, len) == 1);
	regex_java_free(re);
	buf_fini(&pat);
}

/* Java's '.' without DOTALL: any one character but \n \r U+0085 U+2028 U+2029. */
static void
check_dot(const char *s, size_t len)
{
	static struct regex_java *dot;
	uint32_t cp = 0;
	size_t n;
	bool term;

	if (!utf8_valid(s, len) || len == 0) {
		return;
	}
	n = utf8_decode((const unsigned char *)s, len, &cp);
	if (n != len) {
		return;
	}
	if (!dot) {
		dot = compile(".", false);
		expect(dot != NULL);
	}
	term = cp == '\n' || cp == '\r' || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
	expect(regex_java_matches(dot, s, len) == !term);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	size_t plen, slen, rlen;
	char *pattern, *subject, *repl;
	bool caseless;

	if (size < 1) {
		return 0;
	}
	caseless = data[0] & 1;
	p++;
	pattern = part(&p, end, &plen);
	subject = part(&p, end, &slen);
	repl = part(&p, end, &rlen);
	check_pattern(pattern, caseless, subject, slen, repl, rlen);
	check_quoted(subject, slen, caseless);
	check_dot(subject, slen);
	free(repl);
	free(subject);
	free(pattern);
	return 0;
}
