/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outboxd-confref: writes the configuration reference (confref.h) as Markdown or as the
 * outboxd.conf(5) man page, or checks that a file holds exactly what the code generates.
 *
 *   outboxd-confref md|man FILE     write FILE
 *   outboxd-confref check FILE      exit 1, naming the first differing line, when FILE differs
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/config/confref.h"
#include "outboxd/util/buf.h"

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct buf b = BUF_INIT;
	char chunk[65536];
	size_t n;

	if (!f) {
		return NULL;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		buf_add(&b, chunk, n);
	}
	fclose(f);
	*len = b.len;
	return buf_steal(&b);
}

static int
check(const char *path, const struct buf *want)
{
	size_t len = 0, line = 1, i;
	char *have = slurp(path, &len);
	const char *w = buf_cstr(want);

	if (!have) {
		perror(path);
		return 1;
	}
	for (i = 0; i < len && i < want->len && have[i] == w[i]; i++) {
		line += have[i] == '\n';
	}
	free(have);
	if (i == len && len == want->len) {
		printf("%s: as generated\n", path);
		return 0;
	}
	fprintf(stderr,
		"%s:%zu: differs from what the code generates (the key tables changed); "
		"rewrite it with: ninja -C build confref\n",
		path, line);
	return 1;
}

int
main(int argc, char **argv)
{
	struct buf out = BUF_INIT;
	FILE *f;
	int r = 0;

	if (argc != 3 || (strcmp(argv[1], "md") && strcmp(argv[1], "man") && strcmp(argv[1], "check"))) {
		fprintf(stderr, "usage: outboxd-confref md|man|check FILE\n");
		return 2;
	}
	confref_render(strcmp(argv[1], "man") == 0 ? CONFREF_MAN : CONFREF_MARKDOWN, &out);
	if (strcmp(argv[1], "check") == 0) {
		r = check(argv[2], &out);
	} else if (!(f = fopen(argv[2], "w")) || fwrite(buf_cstr(&out), 1, out.len, f) != out.len ||
		   fclose(f) != 0) {
		perror(argv[2]);
		r = 1;
	}
	buf_fini(&out);
	return r;
}
