/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Runs a libFuzzer entry point over every regular file in the directories named on the
 * command line, so a fuzz corpus replays as an ordinary test (dav1d's tests/libfuzzer/main.c
 * plays the same role). Exit status: 0, or 1 if a directory or file cannot be read.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The whole file at @path in a malloc'd buffer of exactly its size. */
static int
read_file(const char *path, uint8_t **ret, size_t *ret_len)
{
	FILE *fp = fopen(path, "rb");
	struct stat st;
	uint8_t *b;

	if (!fp) {
		return -errno;
	}
	if (fstat(fileno(fp), &st) < 0) {
		fclose(fp);
		return -EIO;
	}
	b = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!b || fread(b, 1, (size_t)st.st_size, fp) != (size_t)st.st_size) {
		free(b);
		fclose(fp);
		return -EIO;
	}
	fclose(fp);
	*ret = b;
	*ret_len = (size_t)st.st_size;
	return 0;
}

static int
run_file(const char *path)
{
	uint8_t *b = NULL;
	size_t len = 0;
	int r = read_file(path, &b, &len);

	if (r < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(-r));
		return r;
	}
	LLVMFuzzerTestOneInput(b, len);
	free(b);
	return 0;
}

/* Replay every regular file of @dir; returns the number of files, or -1. */
static int
run_dir(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	char path[4096];
	struct stat st;
	int n = 0;

	if (!dp) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(dp))) {
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path) ||
		    stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
			continue;
		}
		if (run_file(path) < 0) {
			closedir(dp);
			return -1;
		}
		n++;
	}
	closedir(dp);
	return n;
}

int
main(int argc, char **argv)
{
	int total = 0;

	for (int i = 1; i < argc; i++) {
		int n = run_dir(argv[i]);

		if (n < 0) {
			return EXIT_FAILURE;
		}
		total += n;
	}
	printf("replayed %d inputs\n", total);
	return total > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
