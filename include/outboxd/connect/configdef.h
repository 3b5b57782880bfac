/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_CONFIGDEF_H
#define OUTBOXD_CONFIGDEF_H

/*
 * How Kafka 4.3.0's ConfigDef (ConfigDef.parseType, CaseInsensitiveValidString) and Debezium
 * 3.6.1's own readers (Configuration.getBoolean, EnumeratedValue.parse, Strings.RegExSplitter)
 * turn a configuration value's text into a value. One owner for these Java facts, so that the
 * converter options, the EventRouter options, the connector keys and outboxd's own keys read
 * " True\n" or "a, b" the same way Kafka Connect does. Checked in apache/kafka's ConfigDef.java
 * and debezium's Configuration.java, EventRouterConfigDefinition.java and Strings.java.
 *
 * Every value is trimmed as String.trim() trims: every char <= U+0020 at both ends (the
 * control characters and the space), nothing else; in UTF-8 those are the bytes 0x01..0x20.
 *
 * Known difference: "in any case" is ASCII case here. Java's equalsIgnoreCase and
 * toUpperCase(Locale.ROOT) also fold a few non-ASCII letters onto ASCII ones (U+0131 dotless
 * i, U+017F long s, U+212A Kelvin sign, ligatures such as U+FB01), so Java takes "false"
 * spelt with a long s for false; outboxd refuses such a value.
 *
 * Pure: no I/O.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/util/slice.h"

/* configdef_trim() - String.trim() of @s (borrowed): a slice into @s. */
struct slice configdef_trim(const char *s);

/* configdef_trimdup() - String.trim() of @s (borrowed) as a new string; caller frees. */
char *configdef_trimdup(const char *s);

/**
 * configdef_bool() - ConfigDef BOOLEAN (and Debezium's getBoolean, which agrees): the
 * trimmed value is "true" or "false" in any case.
 * @ret: written only on success.
 *
 * Return: 0, or -EINVAL for anything else (Java: ConfigException).
 */
int configdef_bool(const char *value, bool *ret);

/**
 * configdef_eq() - the trimmed @value equals @word in any case: one value of a
 * CaseInsensitiveValidString, or of a Debezium EnumeratedValue (trim, equalsIgnoreCase).
 */
bool configdef_eq(const char *value, const char *word);

/**
 * configdef_enum() - which of @choices the trimmed @value is, in any case (Debezium's
 * EnumeratedValue.parse, Kafka's CaseInsensitiveValidString).
 * @choices: borrowed; the accepted words separated by '|', e.g. "warn|error|fatal".
 * @ret_word: NULL, or on success a copy of the word as @choices spells it; caller frees.
 *
 * Return: the word's index in @choices (0 for the first), or -EINVAL if it is none of them.
 */
int configdef_enum(const char *value, const char *choices, char **ret_word);

/**
 * configdef_int() - ConfigDef INT: Integer.parseInt of the trimmed value (an optional sign,
 * then decimal digits, within 32 bits), then the range check a ConfigDef.Range would make.
 * @ret: written only on success.
 *
 * Return: 0, or -EINVAL for no number, a number beyond 32 bits, or one outside [@min, @max].
 */
int configdef_int(const char *value, int32_t min, int32_t max, int32_t *ret);

/* configdef_long() - ConfigDef LONG: configdef_int() with Long.parseLong's 64 bits. */
int configdef_long(const char *value, int64_t min, int64_t max, int64_t *ret);

/**
 * configdef_long_list() - a comma-separated list whose every entry is a configdef_long() in
 * [@min, @max] (libpq's multi-host database.port, one port per host). Return: 0 or -EINVAL.
 */
int configdef_long_list(const char *value, int64_t min, int64_t max);

/* The items of a list value, in order; each owned by the list. */
struct configdef_list {
	char **v;
	size_t n;
};

#define CONFIGDEF_LIST_INIT                                                                        \
	{                                                                                          \
		NULL, 0                                                                            \
	}

/**
 * configdef_list() - ConfigDef LIST, used by Kafka Connect's own keys (transforms,
 * config.providers, ...): the trimmed value split on commas with any Java whitespace
 * (\s: space, \t, \n, \v, \f, \r) around each comma dropped. A blank value is the empty list;
 * empty items are kept ("a,,b" has three, "a," two), as String.split(regex, -1) keeps them.
 * No escapes: a comma always separates.
 * @ret: filled from empty; release with configdef_list_fini().
 */
void configdef_list(const char *value, struct configdef_list *ret);

/**
 * configdef_regex_list() - Debezium's list of regular expressions (Strings.setOfRegex and
 * listOfRegex with RegExSplitter: table.include.list, schema.exclude.list,
 * message.prefix.include.list, ...). A backslash protects the character after it from
 * splitting, so "\," is a literal comma; an unprotected comma separates. Empty items are
 * dropped, the others trimmed, and then each "\," becomes ",": every other backslash stays,
 * for the regex (the text a\\,b, two backslashes, is the two items a\\ and b; a\,b is the
 * one item a,b).
 * A blank item (" ") stays as an empty pattern, as Debezium compiles it.
 * @ret: filled from empty on success; release with configdef_list_fini().
 *
 * Return: 0, or -EINVAL when the value ends in an unpaired backslash (Debezium:
 * "Unterminated escape sequence at the end of the string"); then @ret is left empty.
 */
int configdef_regex_list(const char *value, struct configdef_list *ret);

/* configdef_list_fini() - free the items; @l is left empty and reusable. */
void configdef_list_fini(struct configdef_list *l);

#endif
