/* SPDX-License-Identifier: Apache-2.0 */
#include "testdir.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/buf.h"

static char dir[64];
#define MKDTEMP_SUFFIX "XXXXXX"

static char *paths[32];
static int npaths;

void
testdir_setup(void)
{
	/* mkdtemp(3) replaces the six trailing Xs of its template with a unique name */
	snprintf(dir, sizeof(dir), "%s", "/tmp/outboxd-check." MKDTEMP_SUFFIX);
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

void
testdir_teardown(void)
{
	struct buf cmd = BUF_INIT;

	buf_add_fmt(&cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(buf_cstr(&cmd)), 0);
	buf_fini(&cmd);
	while (npaths > 0) {
		free(paths[--npaths]);
	}
}

const char *
testdir_path(void)
{
	return dir;
}

const char *
testdir_put(const char *name, const char *text)
{
	struct buf path = BUF_INIT;
	FILE *f;

	ck_assert_int_lt(npaths, (int)(sizeof(paths) / sizeof(paths[0])));
	buf_add_fmt(&path, "%s/%s", dir, name);
	f = fopen(buf_cstr(&path), "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	paths[npaths] = buf_steal(&path);
	return paths[npaths++];
}
