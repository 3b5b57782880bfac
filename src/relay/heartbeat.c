/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/relay/heartbeat.h"

#include <string.h>

#include "outboxd/pg/pgconn.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/log.h"
#include "outboxd/util/now.h"

#define MOD "relay"

/* A refused heartbeat is reported at most this often. */
#define HEARTBEAT_REPORT_US (INT64_C(60) * 1000000)

void
heartbeat_init(struct heartbeat *hb, const struct heartbeat_params *p)
{
	*hb = (struct heartbeat){ .p = p };
	record_init(&hb->rec);
}

void
heartbeat_fini(struct heartbeat *hb)
{
	record_fini(&hb->rec);
}

/* One result of the action query (sqlq_result_fn). */
static enum outcome
on_result(void *arg, const PGresult *r, char *why, size_t whylen)
{
	const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	char err[512];

	if (PQresultStatus(r) != PGRES_FATAL_ERROR) {
		return OUTCOME_OK;
	}
	pgconn_result_line(r, err, sizeof(err));
	/* As Debezium (DBZ-9247): a missing table fails, other errors are logged. */
	if (state && strcmp(state, "42P01") == 0) {
		errbuf_set(why, whylen,
			   "heartbeat.action.query failed: %s; create the table or fix "
			   "the query",
			   err);
		return OUTCOME_HALT;
	}
	log_warn(MOD, "heartbeat.action.query failed: %s; it runs again at the next heartbeat",
		 err);
	return OUTCOME_OK;
}

/*
 * A heartbeat topic the broker refuses is reported, at most once a minute, and changes nothing
 * else: heartbeats confirm nothing, so their failures never restart the pipeline.
 */
static void
report_failures(struct heartbeat *hb, struct publish *pub)
{
	char err[768];
	int64_t now = now_monotonic_us();

	hb->failures += publish_heartbeat_failures(pub, err, sizeof(err));
	if (!hb->failures || now < hb->next_report_us) {
		return;
	}
	log_warn(MOD,
		 "%llu heartbeat record(s) to %s refused: %s; heartbeats go on, and outboxd "
		 "confirms nothing by them",
		 (unsigned long long)hb->failures, hb->p->topic, err);
	metrics_count(hb->p->metrics, METRICS_HEARTBEAT_FAILURES, hb->failures);
	hb->failures = 0;
	hb->next_report_us = now + HEARTBEAT_REPORT_US;
}

enum outcome
heartbeat_beat(struct heartbeat *hb, struct publish *pub, struct sqlq *q, char *why, size_t whylen)
{
	char err[512];

	if (router_heartbeat(hb->p->router, hb->p->topic, now_unix_ms(), &hb->rec, err,
			     sizeof(err)) < 0) {
		errbuf_set(why, whylen, "heartbeat record: %s", err);
		return OUTCOME_HALT;
	}
	report_failures(hb, pub);
	/* It confirms nothing: a full queue, or the previous beat still in flight, skips a beat. */
	(void)publish_heartbeat(pub, &hb->rec, NULL, 0);
	if (hb->p->query) {
		/* false: the previous beat's query is still queued or running; this beat skips it */
		(void)sqlq_submit(q, SQLQ_HEARTBEAT, hb->p->query, NULL, 0, on_result, NULL);
	}
	return OUTCOME_OK;
}
