/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/util/log.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/now.h"

static enum log_level current_level = LOG_INFO;
static enum log_format current_format = LOG_FORMAT_TEXT;

#define LOG_CONTEXT_MAX 4
static struct {
	char *key, *value;
} context[LOG_CONTEXT_MAX];

static const char *const level_names[] = { "error", "warn", "info", "debug" };

void
log_set_level(enum log_level level)
{
	current_level = level;
}

enum log_level
log_get_level(void)
{
	return current_level;
}

bool
log_enabled(enum log_level level)
{
	return level <= current_level;
}

int
log_level_parse(const char *name, enum log_level *ret_level)
{
	for (unsigned i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcasecmp(name, level_names[i]) == 0) {
			*ret_level = (enum log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

void
log_set_format(enum log_format format)
{
	current_format = format;
}

int
log_format_parse(const char *name, enum log_format *ret_format)
{
	if (strcasecmp(name, "text") == 0 || strcasecmp(name, "json") == 0) {
		*ret_format = strcasecmp(name, "json") == 0 ? LOG_FORMAT_JSON : LOG_FORMAT_TEXT;
		return 0;
	}
	return -EINVAL;
}

void
log_set_context(const char *key, const char *value)
{
	int free_at = -1;

	for (int i = 0; i < LOG_CONTEXT_MAX; i++) {
		if (context[i].key && strcmp(context[i].key, key) == 0) {
			free(context[i].value);
			context[i].value = value ? strdup(value) : NULL;
			return;
		}
		if (!context[i].key && free_at < 0) {
			free_at = i;
		}
	}
	if (value && free_at >= 0) {
		context[free_at].key = strdup(key);
		context[free_at].value = strdup(value);
	}
}

/* "2026-12-03T08:30:47.305Z" for @us (Unix microseconds). */
static void
stamp(int64_t us, char out[32])
{
	time_t sec = (time_t)(us / 1000000);
	struct tm tm;
	size_t n;

	gmtime_r(&sec, &tm);
	n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03ldZ", (long)(us / 1000 % 1000));
}

static void
add(struct json_object *o, const char *key, const char *value)
{
	if (value) {
		json_object_object_add(o, key, json_object_new_string(value));
	}
}

/*
 * The JSON line: json-c writes the object (it escapes what JSON needs and keeps the keys in
 * the order added).
 */
static void
json_line(struct buf *line, const char *when, enum log_level level, const char *module,
	  const char *message, const struct log_field *fields, size_t n)
{
	struct json_object *o = json_object_new_object();

	add(o, "time", when);
	add(o, "level", level_names[level]);
	add(o, "module", module);
	add(o, "message", message);
	for (int i = 0; i < LOG_CONTEXT_MAX; i++) {
		if (context[i].key) {
			add(o, context[i].key, context[i].value);
		}
	}
	for (size_t i = 0; i < n; i++) {
		add(o, fields[i].key, fields[i].value);
	}
	buf_add_str(line, json_object_to_json_string_ext(
				  o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void
vlog(enum log_level level, const char *module, const struct log_field *fields, size_t n,
     const char *fmt, va_list ap)
{
	struct buf line = BUF_INIT, msg = BUF_INIT;
	char when[32];

	if (!log_enabled(level)) {
		return;
	}
	stamp(now_unix_us(), when);
	buf_add_vfmt(&msg, fmt, ap);
	if (current_format == LOG_FORMAT_JSON) {
		json_line(&line, when, level, module, buf_cstr(&msg), fields, n);
	} else {
		buf_add_fmt(&line, "%s %-5s %s: %s", when, level_names[level], module,
			    buf_cstr(&msg));
	}
	buf_add_char(&line, '\n');
	/* One write per line, so lines of concurrent threads (libmicrohttpd) never interleave. */
	fwrite(line.data, 1, line.len, stderr);
	buf_fini(&line);
	buf_fini(&msg);
}

void
log_msg(enum log_level level, const char *module, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, module, NULL, 0, fmt, ap);
	va_end(ap);
}

void
log_fields(enum log_level level, const char *module, const struct log_field *fields, size_t n,
	   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, module, fields, n, fmt, ap);
	va_end(ap);
}
