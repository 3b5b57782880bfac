/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/util/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <time.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/now.h"

static enum log_level current_level = LOG_INFO;

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
log_msg(enum log_level level, const char *module, const char *fmt, ...)
{
	struct buf line = BUF_INIT;
	int64_t us;
	time_t sec;
	struct tm tm;
	char stamp[32];
	va_list ap;

	if (!log_enabled(level)) {
		return;
	}
	us = now_unix_us();
	sec = (time_t)(us / 1000000);
	gmtime_r(&sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	buf_add_fmt(&line, "%s.%03ldZ %-5s %s: ", stamp, (long)(us / 1000 % 1000),
		    level_names[level], module);
	va_start(ap, fmt);
	buf_add_vfmt(&line, fmt, ap);
	va_end(ap);
	buf_add_char(&line, '\n');
	/* One write per line, so lines of concurrent threads (libmicrohttpd) never interleave. */
	fwrite(line.data, 1, line.len, stderr);
	buf_fini(&line);
}
