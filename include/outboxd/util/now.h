/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_NOW_H
#define OUTBOXD_NOW_H

/*
 * The clocks, in the project's units (STYLE.md 3.3: time is int64_t microseconds, *_us).
 * Deadlines and ages use the monotonic clock, which never jumps; wall-clock time is only for
 * what leaves the process: log stamps, Kafka record timestamps, PostgreSQL status updates.
 */

#include <stdint.h>

/* Seconds from 1970-01-01 to 2000-01-01 (PostgreSQL's epoch), in microseconds. */
#define NOW_PG_EPOCH_OFFSET_US INT64_C(946684800000000)

/* now_monotonic_us() - CLOCK_MONOTONIC in microseconds: for deadlines and durations only. */
int64_t now_monotonic_us(void);

/* now_unix_us() - wall-clock time: microseconds since 1970-01-01 UTC. */
int64_t now_unix_us(void);

/* now_unix_ms() - wall-clock milliseconds since 1970-01-01 UTC (Java's currentTimeMillis). */
int64_t now_unix_ms(void);

/*
 * now_pg_us() - wall-clock time in microseconds since 2000-01-01 UTC, PostgreSQL's TimestampTz
 * as the replication protocol carries it (the standby status update's send time).
 */
int64_t now_pg_us(void);

#endif
