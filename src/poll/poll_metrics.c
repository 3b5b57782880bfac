/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/poll/poll_metrics.h"

#include <inttypes.h>

#include "outboxd/util/prom.h"

/* The label of each poll_upkeep_job. */
static const char *const upkeep_names[POLL_UPKEEP_NJOBS] = { "count", "cleanup" };

/* The section's render (struct metrics_section): on the HTTP thread, from the copy. */
static void
render(const void *data, int64_t now_us, int64_t set_us, struct buf *out)
{
	const struct poll_metrics_figures *v = data;

	prom_int(out, "outboxd_poll_unpublished_rows", "gauge",
		 "Rows of the outbox table not yet published, at the last count "
		 "(outboxd.poll.stats.interval.ms).",
		 v->unpublished);
	if (v->oldest_age_ms >= 0) {
		prom_family(
			out, "outboxd_poll_oldest_unpublished_age_seconds", "gauge",
			"Age of the oldest unpublished row (outboxd.poll.created.column), 0 when "
			"none waits.");
		prom_seconds_ms(out, "outboxd_poll_oldest_unpublished_age_seconds",
				v->oldest_age_ms * 1000);
	}
	prom_int(out, "outboxd_poll_partitions_owned", "gauge",
		 "Partitions this process owns (ordered mode; 0 in unordered mode).", v->owned);
	prom_int(out, "outboxd_poll_partitions_other_count", "gauge",
		 "Partitions of the polled tables held by sessions with another "
		 "outboxd.poll.partitions (or an earlier outboxd): while above 0 this process "
		 "takes none and waits for them to end.",
		 v->other_count);
	prom_family(out, "outboxd_poll_last_poll_age_seconds", "gauge",
		    "Seconds since the last poll cycle that succeeded.");
	prom_seconds_ms(out, "outboxd_poll_last_poll_age_seconds",
			now_us > v->done_us ? now_us - v->done_us : 0);
	prom_family(out, "outboxd_poll_rows_marked_total", "counter",
		    "Rows marked published (or deleted, outboxd.poll.after=delete) after their "
		    "delivery report.");
	buf_add_fmt(out, "outboxd_poll_rows_marked_total %" PRIu64 "\n", v->marked);
	prom_family(out, "outboxd_poll_rows_cleaned_total", "counter",
		    "Published rows the cleanup deleted or moved to the archive "
		    "(outboxd.poll.retention).");
	buf_add_fmt(out, "outboxd_poll_rows_cleaned_total %" PRIu64 "\n", v->cleaned);
	prom_family(out, "outboxd_poll_upkeep_failures_total", "counter",
		    "Statements of the side jobs (the count, the cleanup) that failed; publishing "
		    "went on and the job was tried again with backoff.");
	for (int i = 0; i < POLL_UPKEEP_NJOBS; i++) {
		buf_add_fmt(out, "outboxd_poll_upkeep_failures_total{job=\"%s\"} %" PRIu64 "\n",
			    upkeep_names[i], v->upkeep_failures[i]);
	}
}

static const struct metrics_section section = {
	.name = "poll",
	.size = sizeof(struct poll_metrics_figures),
	.render = render,
};

void
poll_metrics_init(struct poll_metrics *pm, struct metrics *m)
{
	*pm = (struct poll_metrics){ .m = m, .id = metrics_section_add(m, &section) };
	pm->v.oldest_age_ms = -1;
	pm->v.done_us = metrics_now_us(m);
	metrics_section_set(m, pm->id, &pm->v);
}

void
poll_metrics_stats(struct poll_metrics *pm, int64_t unpublished, int64_t oldest_age_ms)
{
	pm->v.unpublished = unpublished;
	pm->v.oldest_age_ms = oldest_age_ms;
	metrics_section_set(pm->m, pm->id, &pm->v);
}

void
poll_metrics_partitions(struct poll_metrics *pm, int owned)
{
	pm->v.owned = owned;
	metrics_section_set(pm->m, pm->id, &pm->v);
}

void
poll_metrics_other_count(struct poll_metrics *pm, int held)
{
	if (pm->v.other_count != held) {
		pm->v.other_count = held;
		metrics_section_set(pm->m, pm->id, &pm->v);
	}
}

void
poll_metrics_done(struct poll_metrics *pm, uint64_t marked)
{
	pm->v.marked += marked;
	pm->v.done_us = metrics_now_us(pm->m);
	metrics_section_set(pm->m, pm->id, &pm->v);
}

void
poll_metrics_cleaned(struct poll_metrics *pm, uint64_t n)
{
	pm->v.cleaned += n;
	metrics_section_set(pm->m, pm->id, &pm->v);
}

void
poll_metrics_upkeep_failed(struct poll_metrics *pm, enum poll_upkeep_job job)
{
	pm->v.upkeep_failures[job]++;
	metrics_section_set(pm->m, pm->id, &pm->v);
}
