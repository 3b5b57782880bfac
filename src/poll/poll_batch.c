/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A poll batch read in chunks through a cursor (poll_int.h), so that it holds about
 * outboxd.poll.batch.max.bytes however large the rows are: one result of batch.size × the
 * owned partitions' rows of 100 KB each would be hundreds of megabytes, more than a container's
 * memory limit, and a process killed for it restarts on the same rows forever.
 */
#include <stdio.h>
#include <stdlib.h>

#include "outboxd/util/mem.h"
#include "poll_int.h"

/* a chunk's most rows: beyond this the round trips saved no longer matter */
#define CHUNK_MAX_ROWS 1000

/* What a row costs in a result beyond its values: libpq's per-value bookkeeping. */
static int64_t
row_bytes(const PGresult *r, int row)
{
	int64_t n = 0;

	for (int c = 0; c < PQnfields(r); c++) {
		n += PQgetlength(r, row, c) + 16;
	}
	return n;
}

/*
 * The next FETCH's rows: as many as the budget left holds at the largest row this session has
 * read (one at first: a session knows nothing of its rows' sizes yet), at most @left_rows.
 */
static int64_t
chunk_rows(const struct poller *s, const struct poll_batch *b, int64_t left_rows)
{
	int64_t left = s->cfg->poll_batch_max_bytes - b->bytes, n;

	n = s->largest_row ? left / s->largest_row : 1;
	n = n < 1 ? 1 : n;
	n = n > CHUNK_MAX_ROWS ? CHUNK_MAX_ROWS : n;
	return n < left_rows ? n : left_rows;
}

static void
add_result(struct poller *s, struct poll_batch *b, PGresult *r)
{
	for (int i = 0; i < PQntuples(r); i++) {
		int64_t n = row_bytes(r, i);

		b->bytes += n;
		s->largest_row = n > s->largest_row ? n : s->largest_row;
	}
	b->rows += PQntuples(r);
	if (b->nres == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 8;
		b->res = xrealloc(b->res, (size_t)b->cap * sizeof(*b->res));
	}
	b->res[b->nres++] = r;
}

/*
 * The cursor's first round trip, one simple-query string (which takes no parameters, hence the
 * integers written into the text): ordered mode's BEGIN, the DECLARE and the first FETCH.
 */
static enum outcome
open_and_fetch(struct poller *s, int ti, const char *owned, int64_t max, int64_t n, PGresult **ret)
{
	const struct poll_table *t = &s->tables[ti];
	struct buf q = BUF_INIT;
	PGresult *r;

	buf_add_fmt(&q, "%sDECLARE outboxd_batch NO SCROLL CURSOR FOR %s",
		    s->unordered ? "" : "BEGIN; ", buf_cstr(&t->select));
	if (owned) {
		buf_add_fmt(&q, "'%s'%s%lld", owned, buf_cstr(&t->tail), (long long)max);
	}
	buf_add_fmt(&q, "; FETCH FORWARD %lld FROM outboxd_batch", (long long)n);
	r = PQexec(s->sql, buf_cstr(&q));
	buf_fini(&q);
	if (!r || PQresultStatus(r) != PGRES_TUPLES_OK) {
		return poll_failed(s, r, "reading unpublished rows");
	}
	*ret = r;
	return OUTCOME_OK;
}

enum outcome
poll_batch_read(struct poller *s, int ti, const char *owned, int64_t max, struct poll_batch *b)
{
	bool exhausted = false;
	enum outcome o = OUTCOME_OK;

	*b = (struct poll_batch){ 0 };
	/*
	 * Ordered mode: the cursor's own short transaction, committed before anything is
	 * published, so no snapshot is held while the broker is waited for. Unordered: the
	 * claim's transaction, begun by the cycle.
	 */
	while (o == OUTCOME_OK && !exhausted && b->rows < max &&
	       b->bytes < s->cfg->poll_batch_max_bytes) {
		char q[64];
		int64_t n = chunk_rows(s, b, max - b->rows);
		PGresult *r = NULL;

		snprintf(q, sizeof(q), "FETCH FORWARD %lld FROM outboxd_batch", (long long)n);
		o = b->nres ? poll_exec(s, q, 0, NULL, "reading unpublished rows", &r) :
			      open_and_fetch(s, ti, owned, max, n, &r);
		if (o == OUTCOME_OK) {
			exhausted = PQntuples(r) < n;
			add_result(s, b, r);
		}
	}
	if (o == OUTCOME_OK) {
		o = poll_exec(s, s->unordered ? "CLOSE outboxd_batch" : "COMMIT", 0, NULL,
			      "ending the batch's read", NULL);
	}
	b->more = !exhausted;
	return o;
}

void
poll_batch_free(struct poll_batch *b)
{
	for (int i = 0; i < b->nres; i++) {
		PQclear(b->res[i]);
	}
	free(b->res);
	*b = (struct poll_batch){ 0 };
}
