/* SPDX-License-Identifier: Apache-2.0 */
#include "fuzz_tmp.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[96];

static void
remove_dir(void)
{
	if (dir[0]) {
		rmdir(dir);
	}
}

const char *
fuzz_tmp_dir(const char *name)
{
	const char *bases[] = { "/dev/shm", "/tmp" };

	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]) && !dir[0]; i++) {
		char tmpl[sizeof(dir)];

		snprintf(tmpl, sizeof(tmpl), "%s/outboxd-fuzz-%s-XXXXXX", bases[i], name);
		if (mkdtemp(tmpl)) {
			snprintf(dir, sizeof(dir), "%s", tmpl);
			atexit(remove_dir);
		}
	}
	return dir[0] ? dir : NULL;
}

int
fuzz_tmp_write(const char *path, const uint8_t *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f) {
		return -1;
	}
	if (len && fwrite(data, 1, len, f) != len) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}
