/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_OBS_PROCSTAT_H
#define OUTBOXD_OBS_PROCSTAT_H

/*
 * The usual process_* metrics of a Prometheus client (CPU seconds, resident and virtual
 * memory, open and maximum file descriptors, start time), read from /proc/self at each scrape
 * (procstat_read, the I/O) and rendered as Prometheus text (procstat_render, pure).
 */

#include <stdbool.h>
#include <stdint.h>

#include "outboxd/util/buf.h"

struct procstat {
	double cpu_seconds; /* utime + stime */
	double start_time;  /* Unix seconds */
	uint64_t resident_bytes;
	uint64_t virtual_bytes;
	int64_t open_fds;
	int64_t max_fds; /* the soft limit; -1 unlimited */
};

/* procstat_read() - this process' figures. Return: false if /proc could not be read. */
bool procstat_read(struct procstat *ps);

/* procstat_parse() - @ps from the text of /proc/self/stat and the machine's facts. */
bool procstat_parse(const char *stat, double boot_time, long ticks_per_s, long page_size,
		    struct procstat *ps);

/* procstat_render() - append the process_* families of @ps to @out. */
void procstat_render(const struct procstat *ps, struct buf *out);

#endif
