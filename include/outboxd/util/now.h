/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_UTIL_NOW_H
#define OUTBOXD_UTIL_NOW_H

/*
 * The clocks, in one place: monotonic time for deadlines and ages, wall-clock time for record
 * timestamps and the replication protocol (whose epoch is 2000-01-01 UTC).
 */

#include <stdint.h>

/* Unix epoch to PostgreSQL epoch (2000-01-01), in microseconds. */
#define NOW_PG_EPOCH_US INT64_C(946684800000000)

/* now_mono_us() - CLOCK_MONOTONIC in microseconds. */
int64_t now_mono_us(void);

/* now_unix_us() - CLOCK_REALTIME in microseconds since 1970-01-01 UTC. */
int64_t now_unix_us(void);

/* now_unix_ms() - CLOCK_REALTIME in milliseconds since 1970-01-01 UTC. */
int64_t now_unix_ms(void);

/* now_pg_us() - CLOCK_REALTIME in microseconds since 2000-01-01 UTC (the protocol's clock). */
int64_t now_pg_us(void);

#endif
