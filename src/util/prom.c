/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/util/prom.h"

#include <inttypes.h>

void
prom_family(struct buf *out, const char *name, const char *type, const char *help)
{
	buf_add_fmt(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void
prom_label_value(struct buf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"') {
			buf_add_char(out, '\\');
			buf_add_char(out, *s);
		} else if (*s == '\n') {
			buf_add_str(out, "\\n");
		} else {
			buf_add_char(out, *s);
		}
	}
}

void
prom_int(struct buf *out, const char *name, const char *type, const char *help, int64_t v)
{
	prom_family(out, name, type, help);
	buf_add_fmt(out, "%s %" PRId64 "\n", name, v);
}

/*
 * "@name S.F" with @digits decimals of @us / @unit. The sign is written apart: C's division
 * truncates toward zero, so -1500 us would otherwise print as "0.-01".
 */
static void
seconds(struct buf *out, const char *name, int64_t us, int64_t unit, int digits)
{
	uint64_t mag = us < 0 ? 0 - (uint64_t)us : (uint64_t)us;

	buf_add_fmt(out, "%s %s%" PRIu64 ".%0*" PRIu64 "\n", name, us < 0 ? "-" : "", mag / 1000000,
		    digits, mag % 1000000 / (uint64_t)unit);
}

void
prom_seconds_ms(struct buf *out, const char *name, int64_t us)
{
	seconds(out, name, us, 1000, 3);
}

void
prom_seconds_us(struct buf *out, const char *name, int64_t us)
{
	seconds(out, name, us, 1, 6);
}
