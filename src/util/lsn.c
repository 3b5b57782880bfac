/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/util/lsn.h"

#include <errno.h>
#include <stdio.h>

/* Parses 1 to 8 hex digits from *s, advancing it. */
static int
hex32(const char **s, uint32_t *ret)
{
	uint32_t v = 0;
	int n = 0;

	for (;; (*s)++, n++) {
		char c = **s;
		int d;

		if (c >= '0' && c <= '9') {
			d = c - '0';
		} else if (c >= 'a' && c <= 'f') {
			d = c - 'a' + 10;
		} else if (c >= 'A' && c <= 'F') {
			d = c - 'A' + 10;
		} else {
			break;
		}
		if (n == 8) {
			return -EINVAL;
		}
		v = v << 4 | (uint32_t)d;
	}
	if (n == 0) {
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

int
lsn_parse(const char *s, lsn_t *ret_lsn)
{
	uint32_t hi, lo;

	if (!s || hex32(&s, &hi) < 0 || *s++ != '/' || hex32(&s, &lo) < 0 || *s != '\0') {
		return -EINVAL;
	}
	*ret_lsn = (lsn_t)hi << 32 | lo;
	return 0;
}

char *
lsn_format(lsn_t lsn, char out[LSN_STRLEN])
{
	snprintf(out, LSN_STRLEN, "%X/%X", (unsigned)(lsn >> 32), (unsigned)(lsn & 0xffffffffu));
	return out;
}
