/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/util/errbuf.h"

#include <stdarg.h>
#include <stdio.h>

void
errbuf_set(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errbuf || !errlen) {
		return;
	}
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
}
