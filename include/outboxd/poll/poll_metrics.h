/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_POLL_POLL_METRICS_H
#define OUTBOXD_POLL_POLL_METRICS_H

/*
 * The polling publisher's families on /metrics, a section of the metrics registry ("poll"):
 * outboxd_poll_unpublished_rows, outboxd_poll_oldest_unpublished_age_seconds (absent while
 * unknown), outboxd_poll_partitions_owned, outboxd_poll_partitions_other_count,
 * outboxd_poll_last_poll_age_seconds, outboxd_poll_rows_marked_total,
 * outboxd_poll_rows_cleaned_total and outboxd_poll_upkeep_failures_total{job="count"|"cleanup"}.
 * Absent for `outboxd run`: only poll_metrics_init() registers them. The poller's thread keeps
 * the figures and hands a
 * copy to the metrics at each change; the HTTP thread renders the copy.
 */

#include <stdint.h>

#include "outboxd/obs/metrics.h"

/* The side jobs whose failures are counted (their label). */
enum poll_upkeep_job { POLL_UPKEEP_COUNT, POLL_UPKEEP_CLEANUP, POLL_UPKEEP_NJOBS };

/* The figures the section copies. */
struct poll_metrics_figures {
	int64_t unpublished;   /* at the last count (outboxd.poll.stats.interval.ms) */
	int64_t oldest_age_ms; /* -1: unknown (no table has a creation time column) */
	int owned;	       /* partitions this session holds */
	int other_count;       /* partitions held with another outboxd.poll.partitions */
	uint64_t marked, cleaned;
	uint64_t upkeep_failures[POLL_UPKEEP_NJOBS];
	int64_t done_us; /* the last successful cycle, on the metrics clock (metrics_now_us) */
};

struct poll_metrics {
	struct metrics *m; /* borrowed */
	int id;		   /* the section's */
	struct poll_metrics_figures v;
};

/**
 * poll_metrics_init() - register the section with @m (borrowed; must outlive @pm) and render
 * it from now on: no rows counted yet, the age unknown, the last cycle now. Kept across the
 * poller's sessions, so the totals count from the process' start.
 */
void poll_metrics_init(struct poll_metrics *pm, struct metrics *m);

/**
 * poll_metrics_stats() - the latest count of unpublished rows of the polled tables and the age
 * of the oldest, in milliseconds (-1: no table has a creation time column).
 */
void poll_metrics_stats(struct poll_metrics *pm, int64_t unpublished, int64_t oldest_age_ms);

/* poll_metrics_partitions() - the partitions this process' session owns now. */
void poll_metrics_partitions(struct poll_metrics *pm, int owned);

/*
 * poll_metrics_other_count() - the partitions of the polled tables that sessions with another
 * outboxd.poll.partitions hold, as this process last looked (it takes none while any).
 */
void poll_metrics_other_count(struct poll_metrics *pm, int held);

/* poll_metrics_done() - a poll cycle succeeded (stamps its time) and marked @marked rows. */
void poll_metrics_done(struct poll_metrics *pm, uint64_t marked);

/* poll_metrics_cleaned() - the cleanup deleted (or archived) @n published rows. */
void poll_metrics_cleaned(struct poll_metrics *pm, uint64_t n);

/* poll_metrics_upkeep_failed() - a statement of the side job @job failed (publishing went on). */
void poll_metrics_upkeep_failed(struct poll_metrics *pm, enum poll_upkeep_job job);

#endif
