/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/util/mem.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void
oom(size_t size)
{
	/* stderr directly: the logger itself may need memory. */
	fprintf(stderr, "outboxd: out of memory allocating %zu bytes\n", size);
	abort();
}

void *
xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p) {
		oom(size);
	}
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p;

	if (size && nmemb > SIZE_MAX / size) {
		oom(SIZE_MAX);
	}
	p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p) {
		oom(nmemb * size);
	}
	return p;
}

void *
xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);

	if (!p) {
		oom(size);
	}
	return p;
}

char *
xstrdup(const char *s)
{
	return s ? xstrndup(s, strlen(s)) : NULL;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}
