/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/connect/configdef.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "outboxd/util/mem.h"

/* String.trim() and Strings.trim(): every char <= U+0020 is trimmed. */
static bool
java_trimmed(char c)
{
	return (unsigned char)c <= 0x20;
}

/* java.util.regex's \s without UNICODE_CHARACTER_CLASS: [ \t\n\x0B\f\r]. */
static bool
java_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

struct slice
configdef_trim(const char *s)
{
	size_t n;

	while (*s && java_trimmed(*s)) {
		s++;
	}
	n = strlen(s);
	while (n && java_trimmed(s[n - 1])) {
		n--;
	}
	return (struct slice){ s, n };
}

char *
configdef_trimdup(const char *s)
{
	struct slice t = configdef_trim(s);

	return xstrndup(t.p, t.len);
}

bool
configdef_eq(const char *value, const char *word)
{
	struct slice t = configdef_trim(value);

	return t.len == strlen(word) && strncasecmp(t.p, word, t.len) == 0;
}

int
configdef_bool(const char *value, bool *ret)
{
	if (configdef_eq(value, "true")) {
		*ret = true;
		return 0;
	}
	if (configdef_eq(value, "false")) {
		*ret = false;
		return 0;
	}
	return -EINVAL;
}

int
configdef_enum(const char *value, const char *choices, char **ret_word)
{
	struct slice t = configdef_trim(value);
	int i = 0;

	for (const char *w = choices;; i++) {
		const char *bar = strchr(w, '|');
		size_t n = bar ? (size_t)(bar - w) : strlen(w);

		if (n && n == t.len && strncasecmp(t.p, w, n) == 0) {
			if (ret_word) {
				*ret_word = xstrndup(w, n);
			}
			return i;
		}
		if (!bar) {
			return -EINVAL;
		}
		w = bar + 1;
	}
}

int
configdef_long(const char *value, int64_t min, int64_t max, int64_t *ret)
{
	struct slice t = configdef_trim(value);
	char *s = xstrndup(t.p, t.len), *end;
	long long v;
	int r = 0;

	/*
	 * After the trim nothing strtoll() would skip is left, so base 10 reads exactly what
	 * Long.parseLong reads: an optional '+' or '-', then digits, all of the text.
	 */
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		r = -EINVAL;
	} else {
		*ret = v;
	}
	free(s);
	return r;
}

int
configdef_long_list(const char *value, int64_t min, int64_t max)
{
	char *copy = xstrdup(value), *save = NULL;
	int r = 0;

	for (char *p = strtok_r(copy, ",", &save); p && !r; p = strtok_r(NULL, ",", &save)) {
		int64_t v;

		r = configdef_long(p, min, max, &v) < 0 ? -EINVAL : 0;
	}
	free(copy);
	return r;
}

int
configdef_int(const char *value, int32_t min, int32_t max, int32_t *ret)
{
	int64_t v;

	if (configdef_long(value, min, max, &v) < 0) {
		return -EINVAL;
	}
	*ret = (int32_t)v;
	return 0;
}

static void
list_add(struct configdef_list *l, const char *s, size_t n)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = xstrndup(s, n);
}

void
configdef_list(const char *value, struct configdef_list *ret)
{
	struct slice t = configdef_trim(value);
	const char *p = t.p, *end = t.p + t.len;

	*ret = (struct configdef_list)CONFIGDEF_LIST_INIT;
	if (!t.len) {
		return; /* Collections.emptyList() */
	}
	for (;;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *e = comma ? comma : end;

		/* the separator is \s*,\s*: whitespace next to a comma goes with it */
		while (comma && e > p && java_space(e[-1])) {
			e--;
		}
		list_add(ret, p, (size_t)(e - p));
		if (!comma) {
			break;
		}
		for (p = comma + 1; p < end && java_space(*p); p++) {
		}
	}
}

/* One RegExSplitter token [s, s + n): trimmed, then "\," -> "," (String.replace). */
static void
regex_item(struct configdef_list *l, const char *s, size_t n)
{
	char *tok = xstrndup(s, n), *o;
	struct slice t = configdef_trim(tok);
	const char *p = t.p;

	o = tok;
	while (p < t.p + t.len) {
		if (p[0] == '\\' && p + 1 < t.p + t.len && p[1] == ',') {
			p++;
		}
		*o++ = *p++;
	}
	*o = '\0';
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = tok;
}

int
configdef_regex_list(const char *value, struct configdef_list *ret)
{
	const char *start = value, *p = value;

	*ret = (struct configdef_list)CONFIGDEF_LIST_INIT;
	for (;; p++) {
		if (*p == '\\') {
			if (!p[1]) {
				configdef_list_fini(ret);
				return -EINVAL;
			}
			p++;
			continue;
		}
		if (*p != ',' && *p) {
			continue;
		}
		if (p > start) {
			regex_item(ret, start, (size_t)(p - start)); /* empty tokens are skipped */
		}
		if (!*p) {
			return 0;
		}
		start = p + 1;
	}
}

void
configdef_list_fini(struct configdef_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i]);
	}
	free(l->v);
	*l = (struct configdef_list)CONFIGDEF_LIST_INIT;
}
