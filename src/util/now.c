/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/util/now.h"

#include <time.h>

static int64_t
clock_us(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t
now_monotonic_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

int64_t
now_unix_us(void)
{
	return clock_us(CLOCK_REALTIME);
}

int64_t
now_unix_ms(void)
{
	return now_unix_us() / 1000;
}

int64_t
now_pg_us(void)
{
	return now_unix_us() - NOW_PG_EPOCH_OFFSET_US;
}
