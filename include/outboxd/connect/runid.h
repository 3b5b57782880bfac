/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_CONNECT_RUNID_H
#define OUTBOXD_CONNECT_RUNID_H

/*
 * The __debezium.context.runId header's value: a fresh UUID per start. Debezium 3.6.1 writes a
 * time-ordered one, version 7 of RFC 9562 (the compat suite compares the version), so outboxd
 * does too. Pure: the caller brings the clock and the random bytes.
 */

#include <stdint.h>

/* 36 characters and the NUL. */
#define RUNID_LEN 37

/**
 * runid_format() - a version 7 UUID in its 8-4-4-4-12 lower-case text.
 * @unix_ms: wall-clock milliseconds since 1970-01-01 UTC; the low 48 bits lead the UUID.
 * @rnd: borrowed; 10 random bytes, of which 74 bits fill rand_a and rand_b.
 * @out: written: RUNID_LEN bytes, NUL-terminated.
 */
void runid_format(int64_t unix_ms, const uint8_t rnd[10], char out[RUNID_LEN]);

#endif
