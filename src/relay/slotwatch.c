/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/relay/slotwatch.h"

#include "outboxd/pg/pgconn.h"
#include "outboxd/pg/slotstat.h"
#include "outboxd/util/log.h"
#include "outboxd/util/now.h"

#define MOD "relay"

/* A failed read is logged at most this often. */
#define WARN_EVERY_US (INT64_C(60) * 1000000)

/* The section's render (struct metrics_section): the row's age counts from its read. */
static void
render(const void *data, int64_t now_us, int64_t set_us, struct buf *out)
{
	slotstat_render(data, now_us - set_us, out);
}

const struct metrics_section slotwatch_section = {
	.name = "slot",
	.size = sizeof(struct slotstat),
	.render = render,
};

void
slotwatch_init(struct slotwatch *w, const char *slot, struct metrics *metrics)
{
	*w = (struct slotwatch){ .slot = slot,
				 .metrics = metrics,
				 .section = metrics_section_add(metrics, &slotwatch_section) };
}

static void
warn(struct slotwatch *w, const char *what)
{
	int64_t now = now_monotonic_us();

	if (now < w->next_warn_us) {
		return;
	}
	w->next_warn_us = now + WARN_EVERY_US;
	log_warn(MOD,
		 "reading slot \"%s\" from pg_replication_slots failed: %s; the outboxd_slot_* "
		 "metrics keep their last values (outboxd_slot_stats_age_seconds grows)",
		 w->slot, what);
}

/* The read's result (sqlq_result_fn): it never restarts or halts the relay. */
static enum outcome
on_result(void *arg, const PGresult *r, char *why, size_t whylen)
{
	struct slotwatch *w = arg;
	const char *cols[SLOTSTAT_NCOLS];
	struct slotstat st = { 0 };
	char err[512];

	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		pgconn_result_line(r, err, sizeof(err));
		warn(w, err);
		return OUTCOME_OK;
	}
	if (PQntuples(r) == 0) {
		metrics_section_set(w->metrics, w->section, &st); /* exists = false */
		return OUTCOME_OK;
	}
	if (PQnfields(r) != SLOTSTAT_NCOLS) {
		warn(w, "the query returned an unexpected number of columns");
		return OUTCOME_OK;
	}
	for (int i = 0; i < SLOTSTAT_NCOLS; i++) {
		cols[i] = PQgetisnull(r, 0, i) ? NULL : PQgetvalue(r, 0, i);
	}
	if (slotstat_parse(cols, &st, err, sizeof(err)) < 0) {
		warn(w, err);
		return OUTCOME_OK;
	}
	metrics_section_set(w->metrics, w->section, &st);
	return OUTCOME_OK;
}

bool
slotwatch_read(struct slotwatch *w, struct sqlq *q)
{
	const char *params[1] = { w->slot };

	return sqlq_submit(q, SQLQ_SLOT, slotstat_query(), params, 1, on_result, w);
}
