/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PROPERTIES_H
#define OUTBOXD_PROPERTIES_H

/*
 * A reader for java.util.Properties text, the format of Kafka Connect's .properties files and
 * Debezium Server's application.properties: "=", ":" or whitespace separators, "\" line
 * continuation, \uHHHH and \t \n \r \f escapes, "#" and "!" comment lines. Later duplicates win.
 * Bytes other than escapes are kept as they are (files are expected to be UTF-8; \uHHHH is
 * written as UTF-8).
 */

#include <stddef.h>

#include "outboxd/util/kv.h"

/**
 * properties_parse() - parse @len bytes of @text.
 * @name: borrowed; the file name used in each entry's origin ("name:line", the line where the
 *        key starts).
 * @ret: must be empty (KV_INIT); on success receives the entries in file order.
 *
 * Return: 0, or -EINVAL (malformed \uxxxx, or \u0000 which a C string cannot hold) with the
 * reason in @errbuf.
 */
int properties_parse(const char *text, size_t len, const char *name, struct kv *ret, char *errbuf,
		     size_t errlen);

/**
 * properties_load() - read the file at @path and parse it.
 * @path: borrowed; also the name in origins.
 *
 * Return: 0, -errno when the file cannot be read, or properties_parse()'s error.
 */
int properties_load(const char *path, struct kv *ret, char *errbuf, size_t errlen);

/**
 * properties_read_file() - the whole file at @path, NUL-terminated.
 * @ret_text: caller-frees; @ret_len excludes the NUL.
 *
 * Return: 0 or -errno (with "path: strerror" in @errbuf).
 */
int properties_read_file(const char *path, char **ret_text, size_t *ret_len, char *errbuf,
			 size_t errlen);

#endif
