/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_FUZZ_TMP_H
#define OUTBOXD_FUZZ_TMP_H

/*
 * Files for fuzz targets whose code under test reads paths (fuzz_config, fuzz_cfgsrc): one
 * folder a process, in memory where it can be, for files written and unlinked per input.
 */

#include <stddef.h>
#include <stdint.h>

/**
 * fuzz_tmp_dir() - the process's folder, made on the first call (in /dev/shm where there is
 * one, else /tmp) and removed at exit, once the caller has unlinked its files.
 * @name: borrowed; a word for the folder's name (the target's).
 *
 * Return: the folder's path (static), or NULL if none can be made.
 */
const char *fuzz_tmp_dir(const char *name);

/* fuzz_tmp_write() - write @len bytes at @data as the whole file @path; 0 or -1. */
int fuzz_tmp_write(const char *path, const uint8_t *data, size_t len);

#endif
