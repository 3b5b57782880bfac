/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_REGEX_JAVA_H
#define OUTBOXD_REGEX_JAVA_H

/*
 * java.util.regex semantics on PCRE2, for the patterns Debezium users write
 * (table.include.list, route.topic.regex) and for Matcher.replaceFirst() replacement strings.
 * The Java pattern is translated: '.' excludes \n \r U+0085 U+2028 U+2029 (not \v \f), \uHHHH
 * becomes \x{HHHH}. Constructs that PCRE2 reads differently and are not translated are
 * rejected at compile time (class intersection &&, nested classes, \p{..} Java classes,
 * inline flags other than i, ...). Pure: no I/O.
 */

#include <stdbool.h>
#include <stddef.h>

#include "outboxd/util/buf.h"

struct regex_java;

/**
 * regex_java_compile() - compile a Java regex.
 * @pattern: borrowed, NUL-terminated UTF-8.
 * @caseless: Pattern.CASE_INSENSITIVE.
 * @ret: written only on success; caller frees with regex_java_free().
 *
 * Return: 0, or -EINVAL with the reason in @errbuf.
 */
int regex_java_compile(const char *pattern, bool caseless, struct regex_java **ret, char *errbuf,
		       size_t errlen);

/* regex_java_free() - NULL allowed. */
void regex_java_free(struct regex_java *re);

/**
 * regex_java_matches() - Matcher.matches(): does the whole of @s (valid UTF-8) match?
 * Return: 1 yes, 0 no, -EINVAL on a match error (invalid UTF-8, resource limit).
 */
int regex_java_matches(const struct regex_java *re, const char *s, size_t len);

/**
 * regex_java_set_replacement() - parse a Matcher.replaceFirst() replacement once: $n, ${name},
 * \x (literal x). Errors Java would raise on the first replacement (group index missing, no
 * such group, trailing '\') are reported here instead.
 * @repl: borrowed; copied.
 *
 * Return: 0, or -EINVAL with the reason in @errbuf.
 */
int regex_java_set_replacement(struct regex_java *re, const char *repl, char *errbuf,
			       size_t errlen);

/**
 * regex_java_replace_first() - Matcher.replaceFirst(): find the first match from the start
 * (not necessarily the whole input) and replace it with the parsed replacement; a group that
 * did not participate expands to nothing. No match: @s unchanged. Appends to @out.
 *
 * Return: 0, or -EINVAL on a match error.
 */
int regex_java_replace_first(const struct regex_java *re, const char *s, size_t len,
			     struct buf *out);

#endif
