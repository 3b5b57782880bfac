/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/connect/regex_java.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/utf8.h"

/* Java's '.' without DOTALL: anything but the five line terminators. */
#define JAVA_DOT "[^\\n\\r\\x{85}\\x{2028}\\x{2029}]"

/* One piece of a parsed replacement: literal bytes, or a group reference. */
struct repl_tok {
	int group; /* -1: literal */
	char *lit; /* owned, for literals */
	size_t len;
};

struct regex_java {
	pcre2_code *code;
	pcre2_match_data *md;
	struct repl_tok *toks;
	size_t ntoks;
};

/* Translate the escape at p[0] == '\\'; returns the bytes consumed or 0 on a rejected form. */
static size_t
translate_escape(const char *p, struct buf *out, const char **why)
{
	uint32_t v = 0;

	switch (p[1]) {
	case '\0': *why = "the pattern ends with a lone '\\'"; return 0;
	case 'u':
		if (utf8_hex4(p + 2, strnlen(p + 2, 4), &v) < 0) {
			*why = "\\u must be followed by four hex digits";
			return 0;
		}
		buf_add_fmt(out, "\\x{%X}", (unsigned)v);
		return 6;
	case '0': {
		size_t n = 2;

		/* Java octal: \0n, \0nn, \0mnn with m <= 3 */
		while (n < 5 && p[n] >= '0' && p[n] <= '7' && (n < 4 || p[2] <= '3')) {
			v = v * 8 + (unsigned)(p[n] - '0');
			n++;
		}
		if (n == 2) {
			*why = "\\0 must be followed by an octal digit in Java";
			return 0;
		}
		buf_add_fmt(out, "\\x{%X}", v);
		return n;
	}
	case 'p':
	case 'P':
		*why = "\\p{...} and \\P{...} classes (Java names differ from PCRE2's) are not "
		       "supported; write the characters out, e.g. [a-z]";
		return 0;
	case 'N': *why = "\\N{name} is not supported; write the character or \\uHHHH"; return 0;
	default:
		if (isalpha((unsigned char)p[1]) &&
		    !strchr("dDsSwWbBAzZGntrfaecxkhHvVRXQE", p[1])) {
			*why = "an unknown escape sequence";
			return 0;
		}
		buf_add(out, p, 2);
		return 2;
	}
}

/* Copy a character class, rejecting what java.util.regex reads differently. */
static size_t
translate_class(const char *p, struct buf *out, const char **why)
{
	size_t i = 1, n;

	buf_add_char(out, '[');
	if (p[i] == '^') {
		buf_add_char(out, '^');
		i++;
	}
	if (p[i] == ']') {
		*why = "a class starting with ']' is read differently by Java; escape it as \\]";
		return 0;
	}
	for (;;) {
		switch (p[i]) {
		case '\0': *why = "an unclosed character class"; return 0;
		case ']': buf_add_char(out, ']'); return i + 1;
		case '[':
			*why = "nested character classes (Java union [a[b]]) are not supported";
			return 0;
		case '&':
			if (p[i + 1] == '&') {
				*why = "character class intersection '&&' is Java-only (PCRE2 reads it "
				       "as literal '&'); rewrite the class without it";
				return 0;
			}
			buf_add_char(out, '&');
			i++;
			break;
		case '\\':
			if (p[i + 1] == 'Q') {
				*why = "\\Q inside a character class is not supported";
				return 0;
			}
			n = translate_escape(p + i, out, why);
			if (!n) {
				return 0;
			}
			i += n;
			break;
		default:
			buf_add_char(out, p[i]);
			i++;
			break;
		}
	}
}

/* Group openings "(?..." that mean the same in both; inline flags limited to i. */
static size_t
translate_group(const char *p, struct buf *out, const char **why)
{
	size_t i;

	if (p[1] != '?') {
		buf_add_char(out, '(');
		return 1;
	}
	if (!p[2]) {
		/* before strchr(), which finds the terminating NUL in any string */
		*why = "the pattern ends inside a group opening \"(?\"";
		return 0;
	}
	if (strchr(":=!>", p[2]) || (p[2] == '<' && (p[3] == '=' || p[3] == '!'))) {
		buf_add(out, p, 3);
		return 3;
	}
	if (p[2] == '<') {
		if (!isalpha((unsigned char)p[3])) {
			*why = "a group name must start with a letter";
			return 0;
		}
		for (i = 3; isalnum((unsigned char)p[i]); i++) {
		}
		if (p[i] != '>') {
			*why = "a group name may contain only ASCII letters and digits";
			return 0;
		}
		buf_add(out, p, i + 1);
		return i + 1;
	}
	for (i = 2; p[i] == 'i' || p[i] == '-'; i++) {
	}
	if (i > 2 && (p[i] == ')' || p[i] == ':')) {
		buf_add(out, p, i + 1);
		return i + 1;
	}
	*why = "inline flags other than (?i) and other (?...) forms are not supported";
	return 0;
}

static int
translate(const char *pat, struct buf *out, char *errbuf, size_t errlen)
{
	const char *why = NULL;
	size_t i = 0, n;

	while (pat[i]) {
		switch (pat[i]) {
		case '.':
			buf_add_str(out, JAVA_DOT);
			n = 1;
			break;
		case '[': n = translate_class(pat + i, out, &why); break;
		case '(': n = translate_group(pat + i, out, &why); break;
		case '\\':
			if (pat[i + 1] == 'Q') {
				const char *e = strstr(pat + i + 2, "\\E");

				n = e ? (size_t)(e - (pat + i)) + 2 : strlen(pat + i);
				buf_add(out, pat + i, n);
				if (!e) {
					buf_add_str(out, "\\E");
				}
				break;
			}
			n = translate_escape(pat + i, out, &why);
			break;
		default:
			buf_add_char(out, pat[i]);
			n = 1;
			break;
		}
		if (!n) {
			errbuf_set(errbuf, errlen, "regular expression '%s' at offset %zu: %s", pat,
				   i, why);
			return -EINVAL;
		}
		i += n;
	}
	return 0;
}

int
regex_java_compile(const char *pattern, bool caseless, struct regex_java **ret, char *errbuf,
		   size_t errlen)
{
	struct buf t = BUF_INIT;
	struct regex_java *re;
	int err;
	PCRE2_SIZE off;
	pcre2_code *code;

	if (translate(pattern, &t, errbuf, errlen) < 0) {
		buf_fini(&t);
		return -EINVAL;
	}
	code = pcre2_compile((PCRE2_SPTR)buf_cstr(&t), t.len,
			     PCRE2_UTF | (caseless ? PCRE2_CASELESS : 0), &err, &off, NULL);
	buf_fini(&t);
	if (!code) {
		PCRE2_UCHAR msg[256];

		pcre2_get_error_message(err, msg, sizeof(msg));
		errbuf_set(errbuf, errlen, "regular expression '%s' is invalid: %s", pattern,
			   (const char *)msg);
		return -EINVAL;
	}
	re = znew(*re);
	re->code = code;
	re->md = pcre2_match_data_create_from_pattern(code, NULL);
	if (!re->md) {
		abort(); /* OOM, as xmalloc */
	}
	*ret = re;
	return 0;
}

void
regex_java_free(struct regex_java *re)
{
	if (!re) {
		return;
	}
	for (size_t i = 0; i < re->ntoks; i++) {
		free(re->toks[i].lit);
	}
	free(re->toks);
	pcre2_match_data_free(re->md);
	pcre2_code_free(re->code);
	free(re);
}

int
regex_java_matches(const struct regex_java *re, const char *s, size_t len)
{
	int rc = pcre2_match(re->code, (PCRE2_SPTR)s, len, 0, PCRE2_ANCHORED | PCRE2_ENDANCHORED,
			     re->md, NULL);

	if (rc == PCRE2_ERROR_NOMATCH) {
		return 0;
	}
	return rc < 0 ? -EINVAL : 1;
}

static void
add_tok(struct regex_java *re, int group, const char *lit, size_t len)
{
	struct repl_tok *t;

	re->toks = xrealloc(re->toks, (re->ntoks + 1) * sizeof(*re->toks));
	t = &re->toks[re->ntoks++];
	t->group = group;
	t->lit = lit ? xstrndup(lit, len) : NULL;
	t->len = len;
}

/* "${name}" at r[0] == '{': the group number, or -1 with the reason. */
static int
named_ref(const struct regex_java *re, const char *r, size_t *used, const char **why)
{
	size_t i = 1;
	char name[128];
	int num;

	while (isalnum((unsigned char)r[i])) {
		i++;
	}
	if (i == 1) {
		*why = "named capturing group has 0 length name";
		return -1;
	}
	if (r[i] != '}') {
		*why = "named capturing group is missing trailing '}'";
		return -1;
	}
	if (isdigit((unsigned char)r[1]) || i - 1 >= sizeof(name)) {
		*why = "a group name must start with a letter";
		return -1;
	}
	memcpy(name, r + 1, i - 1);
	name[i - 1] = '\0';
	num = pcre2_substring_number_from_name(re->code, (PCRE2_SPTR)name);
	if (num < 0) {
		*why = "no group with that name in route.topic.regex";
		return -1;
	}
	*used = i + 1;
	return num;
}

int
regex_java_set_replacement(struct regex_java *re, const char *repl, char *errbuf, size_t errlen)
{
	uint32_t ngroups = 0;
	const char *why = NULL;
	size_t i = 0, used = 0;
	struct buf acc = BUF_INIT;
	int g = -1;

	pcre2_pattern_info(re->code, PCRE2_INFO_CAPTURECOUNT, &ngroups);
	while (repl[i] && !why) {
		if (repl[i] == '\\') {
			if (!repl[i + 1]) {
				why = "character to be escaped is missing (trailing '\\')";
				break;
			}
			buf_add_char(&acc, repl[i + 1]);
			i += 2;
			continue;
		}
		if (repl[i] != '$') {
			buf_add_char(&acc, repl[i++]);
			continue;
		}
		if (!repl[i + 1]) {
			why = "illegal group reference: group index is missing after '$'";
			break;
		}
		if (repl[i + 1] == '{') {
			g = named_ref(re, repl + i + 1, &used, &why);
			i += 1 + used;
		} else if (isdigit((unsigned char)repl[i + 1])) {
			/* Java takes further digits only while the number stays a valid group */
			g = repl[i + 1] - '0';
			i += 2;
			while (isdigit((unsigned char)repl[i]) &&
			       (uint32_t)(g * 10 + (repl[i] - '0')) <= ngroups) {
				g = g * 10 + (repl[i++] - '0');
			}
			if ((uint32_t)g > ngroups) {
				why = "no group with that number in route.topic.regex";
			}
		} else {
			why = "illegal group reference: '$' must be followed by a digit or {name} "
			      "(write \\$ for a literal '$')";
			g = -1;
		}
		if (why) {
			break;
		}
		if (acc.len) {
			add_tok(re, -1, acc.data, acc.len);
			buf_reset(&acc);
		}
		add_tok(re, g, NULL, 0);
	}
	if (why) {
		errbuf_set(errbuf, errlen, "replacement '%s' at offset %zu: %s", repl, i, why);
		buf_fini(&acc);
		return -EINVAL;
	}
	if (acc.len) {
		add_tok(re, -1, acc.data, acc.len);
	}
	buf_fini(&acc);
	return 0;
}

int
regex_java_replace_first(const struct regex_java *re, const char *s, size_t len, struct buf *out)
{
	PCRE2_SIZE *ov;
	int rc = pcre2_match(re->code, (PCRE2_SPTR)s, len, 0, 0, re->md, NULL);

	if (rc == PCRE2_ERROR_NOMATCH) {
		buf_add(out, s, len);
		return 0;
	}
	if (rc < 0) {
		return -EINVAL;
	}
	ov = pcre2_get_ovector_pointer(re->md);
	buf_add(out, s, ov[0]);
	for (size_t i = 0; i < re->ntoks; i++) {
		const struct repl_tok *t = &re->toks[i];

		if (t->group < 0) {
			buf_add(out, t->lit, t->len);
		} else if (t->group < rc && ov[2 * t->group] != PCRE2_UNSET) {
			buf_add(out, s + ov[2 * t->group], ov[2 * t->group + 1] - ov[2 * t->group]);
		}
	}
	buf_add(out, s + ov[1], len - ov[1]);
	return 0;
}
