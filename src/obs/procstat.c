/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/obs/procstat.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "outboxd/util/prom.h"

/*
 * /proc/self/stat: after the command name in parentheses (which may hold spaces and ')'),
 * field 3 is the state; utime and stime are fields 14 and 15, starttime 22, vsize 23 and rss
 * 24 (proc(5)).
 */
bool
procstat_parse(const char *stat, double boot_time, long ticks_per_s, long page_size,
	       struct procstat *ps)
{
	const char *p = strrchr(stat, ')');
	unsigned long long v[24] = { 0 };
	int field = 3;

	if (!p || ticks_per_s <= 0) {
		return false;
	}
	p++;
	while (*p && field <= 24) {
		char *end;

		while (*p == ' ') {
			p++;
		}
		if (field == 3) { /* the state, a letter */
			p += strcspn(p, " ");
		} else {
			v[field - 1] = strtoull(p, &end, 10);
			if (end == p) {
				return false;
			}
			p = end;
		}
		field++;
	}
	if (field <= 24) {
		return false;
	}
	ps->cpu_seconds = (double)(v[13] + v[14]) / (double)ticks_per_s;
	ps->start_time = boot_time + (double)v[21] / (double)ticks_per_s;
	ps->virtual_bytes = v[22];
	ps->resident_bytes = v[23] * (uint64_t)page_size;
	return true;
}

/* btime of /proc/stat: the boot time in Unix seconds. */
static double
boot_time(void)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[256];
	double t = 0;

	if (!f) {
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "btime ", 6) == 0) {
			t = strtod(line + 6, NULL);
			break;
		}
	}
	fclose(f);
	return t;
}

static int64_t
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int64_t n = 0;
	struct dirent *e;

	if (!d) {
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		n += e->d_name[0] != '.';
	}
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

bool
procstat_read(struct procstat *ps)
{
	char stat[1024];
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n;
	struct rlimit rl;

	if (!f) {
		return false;
	}
	n = fread(stat, 1, sizeof(stat) - 1, f);
	fclose(f);
	stat[n] = '\0';
	if (!procstat_parse(stat, boot_time(), sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE), ps)) {
		return false;
	}
	ps->open_fds = open_fds();
	ps->max_fds = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ?
			      (int64_t)rl.rlim_cur :
			      -1;
	return true;
}

void
procstat_render(const struct procstat *ps, struct buf *out)
{
	prom_family(out, "process_cpu_seconds_total", "counter",
		    "User and system CPU time, in seconds.");
	buf_add_fmt(out, "process_cpu_seconds_total %.2f\n", ps->cpu_seconds);
	prom_family(out, "process_resident_memory_bytes", "gauge", "Resident memory, in bytes.");
	buf_add_fmt(out, "process_resident_memory_bytes %" PRIu64 "\n", ps->resident_bytes);
	prom_family(out, "process_virtual_memory_bytes", "gauge", "Virtual memory, in bytes.");
	buf_add_fmt(out, "process_virtual_memory_bytes %" PRIu64 "\n", ps->virtual_bytes);
	prom_family(out, "process_start_time_seconds", "gauge",
		    "Start time of the process since the Unix epoch, in seconds.");
	buf_add_fmt(out, "process_start_time_seconds %.2f\n", ps->start_time);
	if (ps->open_fds >= 0) {
		prom_family(out, "process_open_fds", "gauge", "Open file descriptors.");
		buf_add_fmt(out, "process_open_fds %" PRId64 "\n", ps->open_fds);
	}
	if (ps->max_fds >= 0) {
		prom_family(out, "process_max_fds", "gauge", "The limit of open file descriptors.");
		buf_add_fmt(out, "process_max_fds %" PRId64 "\n", ps->max_fds);
	}
}
