/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_VERSION_H
#define OUTBOXD_VERSION_H

#include <stdio.h>

/* version_string() - outboxd's own version ("0.1.0"). Static storage. */
const char *version_string(void);

/**
 * version_print() - write outboxd's version and the versions of the libraries it runs on
 * (libpq, librdkafka, json-c, PCRE2, libmicrohttpd), one per line.
 * @out: borrowed.
 */
void version_print(FILE *out);

#endif
