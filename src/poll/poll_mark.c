/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The polling publisher's marks (poll_int.h): a cycle's acknowledged rows set published (or
 * deleted) by their mark key, in the order rule of ordered mode; and, in unordered mode, the
 * end of a claim that outlived outboxd.poll.claim.timeout.ms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/now.h"
#include "poll_int.h"

#define MOD "poll"

/*
 * Marks (or deletes) the acknowledged rows of this cycle of @ti not marked yet, in one
 * statement: per partition, the rows before its first unacknowledged one, so a partition never
 * has a published row after an unpublished one of its batch.
 */
static enum outcome
mark_table(struct poller *s, int ti, bool *blocked)
{
	struct buf arr = BUF_INIT;
	const char *params[1];
	PGresult *r = NULL;
	enum outcome o = OUTCOME_OK;
	uint64_t n = 0;

	memset(blocked, 0, (size_t)s->cfg->poll_partitions * sizeof(bool));
	buf_add_char(&arr, '{');
	for (size_t i = 0; i < s->nrows; i++) {
		struct poll_pending *pe = &s->rows[i];

		if (pe->table != ti || pe->marked) {
			continue;
		}
		/* unordered: no order to keep, every acknowledged row is marked */
		blocked[pe->part] |= !pe->acked && !s->unordered;
		if (pe->acked && !blocked[pe->part] && !pe->key) {
			o = poll_key_unmarkable(s, ti, pe->id);
			break;
		}
		if (pe->acked && !blocked[pe->part]) {
			buf_add_fmt(&arr, "%s%s", n ? "," : "", pe->key);
			pe->marking = true;
			n++;
		}
	}
	buf_add_char(&arr, '}');
	params[0] = buf_cstr(&arr);
	if (n && o == OUTCOME_OK) {
		o = poll_exec(s, buf_cstr(&s->tables[ti].mark), 1, params,
			      "marking the published rows", &r);
		/* the count: a row the mark did not reach stays unpublished, read again */
		if (o == OUTCOME_OK && strtoull(PQcmdTuples(r), NULL, 10) < n) {
			o = poll_key_missed(s, ti, params);
		}
		PQclear(r);
	}
	for (size_t i = 0; i < s->nrows; i++) {
		s->rows[i].marked |= s->rows[i].marking && o == OUTCOME_OK;
		s->rows[i].marking = false;
	}
	if (o == OUTCOME_OK) {
		s->marked += n;
		poll_metrics_done(s->pm, n);
	}
	buf_fini(&arr);
	return o;
}

enum outcome
poll_mark_acked(struct poller *s)
{
	bool *blocked = xcalloc((size_t)s->cfg->poll_partitions, sizeof(bool));
	enum outcome o = OUTCOME_OK;

	for (int ti = 0; ti < s->ntables && o == OUTCOME_OK; ti++) {
		o = mark_table(s, ti, blocked);
	}
	free(blocked);
	return o;
}

void
poll_mark_forget(struct poller *s)
{
	for (size_t i = 0; i < s->nrows; i++) {
		free(s->rows[i].id);
		free(s->rows[i].key);
	}
	s->nrows = 0;
	s->produced = s->reported = 0;
}

enum outcome
poll_claim_check(struct poller *s)
{
	uint64_t waiting;
	enum outcome o;

	if (!s->claim_until || now_monotonic_us() < s->claim_until) {
		return OUTCOME_OK;
	}
	/*
	 * The claim's transaction holds an xid, and with it the xmin horizon of the whole
	 * database: while it is open VACUUM removes nothing anywhere. A broker that does not
	 * answer must not hold it for the length of its outage, so the claim ends here: what is
	 * acknowledged is marked, the rest unlocked (and the rows of the batch not produced yet
	 * left for a later claim). Another poller may claim and publish the unlocked rows before
	 * their reports arrive here: duplicates, never loss; their marks follow the reports.
	 */
	s->claim_until = 0;
	s->claim_released = true;
	waiting = s->produced - s->reported;
	if ((o = poll_mark_acked(s)) != OUTCOME_OK) {
		return o;
	}
	o = poll_exec(s, "COMMIT", 0, NULL, "ending the claim", NULL);
	if (o == OUTCOME_OK && waiting) {
		log_warn(
			MOD,
			"a claim outlived outboxd.poll.claim.timeout.ms=%lld with %llu records "
			"unacknowledged: its rows are unlocked (another poller may publish them too: "
			"duplicates, never loss) and marked when their reports arrive",
			(long long)s->cfg->poll_claim_timeout_ms, (unsigned long long)waiting);
	}
	return o;
}
