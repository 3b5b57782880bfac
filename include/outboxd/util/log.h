/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_LOG_H
#define OUTBOXD_LOG_H

/*
 * Folder util/: small helpers that know nothing of the project: text buffers, error text,
 * logging, clocks, LSNs, hashing, secrets, UTF-8, failpoints. It may call: nothing of outboxd.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * One line per event on stderr: "<UTC time> <level> <module>: <message>", or with the JSON
 * format one object per line: {"time":...,"level":...,"module":...,"message":...} and the
 * fields that are known (the process' context, such as the slot, and a line's own, such as a
 * row id). Containers collect stderr, so there is no syslog and no log file. The level, the
 * format and the context are the permitted globals (STYLE.md rule 8), set before any thread
 * starts. Messages never contain secrets: callers pass names, never conninfo strings,
 * passwords or SASL settings.
 */
enum log_level {
	LOG_ERROR = 0,
	LOG_WARN = 1,
	LOG_INFO = 2,
	LOG_DEBUG = 3,
};

enum log_format {
	LOG_FORMAT_TEXT,
	LOG_FORMAT_JSON,
};

/* A named value a line carries in the JSON format (the text format has it in its message). */
struct log_field {
	const char *key;
	const char *value; /* NULL: the field is left out */
};

/* log_set_format() - the format of the lines from now on. */
void log_set_format(enum log_format format);

/* log_format_parse() - "text" or "json" (case-insensitive). Return: 0, or -EINVAL. */
int log_format_parse(const char *name, enum log_format *ret_format);

/*
 * log_set_context() - a field every line carries from now on in the JSON format (copied;
 * @value NULL removes it). At most 4 keys; before any thread starts.
 */
void log_set_context(const char *key, const char *value);

/* log_set_level() - lines above @level are dropped. */
void log_set_level(enum log_level level);

/* log_get_level() - the current level. */
enum log_level log_get_level(void);

/**
 * log_level_parse() - "error", "warn", "info" or "debug" (case-insensitive).
 * @name: borrowed.
 * Return: 0 and *@ret_level set, or -EINVAL.
 */
int log_level_parse(const char *name, enum log_level *ret_level);

/* log_enabled() - true if a line at @level would be written. */
bool log_enabled(enum log_level level);

/**
 * log_msg() - write one line.
 * @module: borrowed, short name of the emitting module ("pgstream").
 * @fmt: printf format of the message; a trailing newline is not needed.
 */
void log_msg(enum log_level level, const char *module, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * log_fields() - log_msg() with @n fields of its own (the row id, the position, the topic),
 * written after the context's in the JSON format.
 */
void log_fields(enum log_level level, const char *module, const struct log_field *fields, size_t n,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define log_error(mod, ...) log_msg(LOG_ERROR, mod, __VA_ARGS__)
#define log_warn(mod, ...)  log_msg(LOG_WARN, mod, __VA_ARGS__)
#define log_info(mod, ...)  log_msg(LOG_INFO, mod, __VA_ARGS__)
#define log_debug(mod, ...)                                                                        \
	do {                                                                                       \
		if (log_enabled(LOG_DEBUG)) {                                                      \
			log_msg(LOG_DEBUG, mod, __VA_ARGS__);                                      \
		}                                                                                  \
	} while (0)

#endif
