/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_LOG_H
#define OUTBOXD_LOG_H

#include <stdbool.h>

/*
 * One line per event on stderr: "<UTC time> <level> <module>: <message>". Containers collect
 * stderr, so there is no syslog and no log file. The level is the one permitted global
 * (STYLE.md rule 8). Messages never contain secrets: callers pass names, never conninfo
 * strings, passwords or SASL settings.
 */
enum log_level {
	LOG_ERROR = 0,
	LOG_WARN = 1,
	LOG_INFO = 2,
	LOG_DEBUG = 3,
};

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
