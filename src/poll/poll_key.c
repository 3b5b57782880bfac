/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The polling publisher's mark key: what identifies the row a batch read, so that its mark
 * (or delete) reaches that row and no other. A mark by an id that is NULL matches nothing, and
 * the row is published again every cycle; a mark by an id two rows share marks one never read.
 * So the key is the columns of a unique index with the id among them, all NOT NULL: the id
 * alone, or on a partitioned table (whose unique indexes hold the partition key) the id and
 * the partition key columns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"
#include "poll_int.h"

/*
 * Of the unique indexes of the table $1 that are valid, not partial and of plain columns, the
 * one with the fewest key columns that holds the column $2 and only NOT NULL columns: its
 * columns in order, with their types.
 */
static const char KEY_QUERY[] =
	"WITH k AS (SELECT i.indexrelid AS ix, a.attname, a.attnotnull, "
	"format_type(a.atttypid, NULL) AS ty, c.n FROM pg_index i CROSS JOIN LATERAL "
	"unnest(i.indkey::int2[]) WITH ORDINALITY AS c(attnum, n) JOIN pg_attribute a ON "
	"a.attrelid = i.indrelid AND a.attnum = c.attnum WHERE i.indrelid = $1::oid AND "
	"i.indisunique AND i.indisvalid AND i.indpred IS NULL AND i.indexprs IS NULL AND "
	"c.n <= i.indnkeyatts), best AS (SELECT ix FROM k GROUP BY ix HAVING bool_and(attnotnull) "
	"AND bool_or(attname = $2) ORDER BY count(*), ix LIMIT 1) "
	"SELECT attname, ty FROM k JOIN best USING (ix) ORDER BY n";

/* No mark key: what is wrong with the id column of @t, and the fix. */
static enum outcome
no_key(struct poller *s, const struct poll_table *t, const char *id)
{
	bool nullable = !t->notnull[poll_column(t, id)];
	const char *tn = buf_cstr(&t->name);
	struct buf fix = BUF_INIT;

	if (nullable) {
		buf_add_fmt(&fix, "ALTER TABLE %s ALTER COLUMN %s SET NOT NULL, then ", tn, id);
	}
	buf_add_fmt(&fix, "ALTER TABLE %s ADD PRIMARY KEY (%s%s)", tn, id,
		    t->partitioned ? ", <the partition key's columns>" : "");
	errbuf_set(s->why, sizeof(s->why),
		   "table %s: the id column \"%s\" (table.field.event.id) %sis in no unique index "
		   "of NOT NULL columns; outboxd poll marks each published row by it, and a mark "
		   "by a NULL id matches no row (the row is published again every cycle) while a "
		   "shared id marks a row never read: %s",
		   tn, id, nullable ? "is nullable and " : "", buf_cstr(&fix));
	buf_fini(&fix);
	return OUTCOME_PRECONDITION;
}

/* t->match over the key's columns: one column as = ANY, several through a 2-D text array. */
static void
build_match(struct poller *s, struct poll_table *t, const PGresult *r)
{
	struct buf *m = &t->match;

	if (t->nkey == 1) {
		poll_add_ident(s, m, PQgetvalue(r, 0, 0));
		buf_add_fmt(m, " = ANY($1::%s[])", PQgetvalue(r, 0, 1));
		return;
	}
	buf_add_char(m, '(');
	for (int k = 0; k < t->nkey; k++) {
		buf_add_str(m, k ? ", " : "");
		poll_add_ident(s, m, PQgetvalue(r, k, 0));
	}
	buf_add_str(m, ") IN (SELECT ");
	for (int k = 0; k < t->nkey; k++) {
		buf_add_fmt(m, "%sa.k[i][%d]::%s", k ? ", " : "", k + 1, PQgetvalue(r, k, 1));
	}
	buf_add_str(m, " FROM (SELECT $1::text[] AS k) a, generate_subscripts(a.k, 1) AS i)");
}

enum outcome
poll_key_prepare(struct poller *s, struct poll_table *t, const char *id)
{
	const struct config *cfg = s->cfg;
	char oid[16];
	const char *params[2] = { oid, id };
	PGresult *r = NULL;
	enum outcome o;

	snprintf(oid, sizeof(oid), "%u", t->oid);
	if ((o = poll_exec(s, KEY_QUERY, 2, params, "finding the mark key", &r)) != OUTCOME_OK) {
		return o;
	}
	if (!PQntuples(r)) {
		PQclear(r);
		return no_key(s, t, id);
	}
	t->nkey = PQntuples(r);
	t->key = xcalloc((size_t)t->nkey, sizeof(*t->key));
	for (int k = 0; k < t->nkey; k++) {
		t->key[k] = poll_column(t, PQgetvalue(r, k, 0));
	}
	build_match(s, t, r);
	PQclear(r);
	if (strcmp(cfg->poll_after, "delete") == 0) {
		buf_add_fmt(&t->mark, "DELETE FROM %s%s WHERE ", t->only, buf_cstr(&t->quoted));
	} else {
		buf_add_fmt(&t->mark, "UPDATE %s%s SET ", t->only, buf_cstr(&t->quoted));
		poll_add_ident(s, &t->mark, cfg->poll_published_column);
		buf_add_str(&t->mark, " = statement_timestamp() WHERE ");
	}
	buf_add_str(&t->mark, buf_cstr(&t->match));
	/* after the mark: a row it should have reached that is still there, unpublished */
	buf_add_str(&t->left, "SELECT ");
	poll_add_ident(s, &t->left, id);
	buf_add_fmt(&t->left, "::text FROM %s%s WHERE %s AND ", t->only, buf_cstr(&t->quoted),
		    buf_cstr(&t->match));
	poll_add_ident(s, &t->left, cfg->poll_published_column);
	buf_add_str(&t->left, " IS NULL LIMIT 1");
	return OUTCOME_OK;
}

/*
 * A row published but not marked: the poison-row policy judges it (poll_run), for a row left
 * unpublished would be read and published again every cycle.
 */
enum outcome
poll_key_unmarkable(struct poller *s, int ti, const char *id)
{
	s->unmarkable = true;
	free(s->fail_id);
	s->fail_id = xstrdup(id);
	errbuf_set(s->why, sizeof(s->why),
		   "row id=%s of %s was published but its mark matched no row (a NULL mark key, "
		   "or a trigger, rule or row-level security policy that skips its %s), so it "
		   "would be published again every cycle",
		   id, buf_cstr(&s->tables[ti].name),
		   strcmp(s->cfg->poll_after, "delete") == 0 ? "DELETE" : "UPDATE");
	return OUTCOME_RESTART;
}

/* After a mark that reached fewer rows than it named (@arr): a row it left unpublished. */
enum outcome
poll_key_missed(struct poller *s, int ti, const char *const *arr)
{
	PGresult *r = NULL;
	enum outcome o = poll_exec(s, buf_cstr(&s->tables[ti].left), 1, arr,
				   "looking for the rows the mark missed", &r);

	/* none: the missing rows were deleted meanwhile, which leaves nothing to publish again */
	if (o == OUTCOME_OK && PQntuples(r)) {
		o = poll_key_unmarkable(s, ti, PQgetvalue(r, 0, 0));
	}
	PQclear(r);
	return o;
}

/* Appends @v to an array literal as a quoted element. */
static void
add_element(struct buf *a, const char *v)
{
	buf_add_char(a, '"');
	for (; *v; v++) {
		if (*v == '"' || *v == '\\') {
			buf_add_char(a, '\\');
		}
		buf_add_char(a, *v);
	}
	buf_add_char(a, '"');
}

char *
poll_key_of(const struct poll_table *t, const PGresult *r, int row)
{
	struct buf a = BUF_INIT;

	buf_add_str(&a, t->nkey > 1 ? "{" : "");
	for (int k = 0; k < t->nkey; k++) {
		if (PQgetisnull(r, row, t->key[k])) {
			buf_fini(&a);
			return NULL;
		}
		buf_add_str(&a, k ? "," : "");
		add_element(&a, PQgetvalue(r, row, t->key[k]));
	}
	buf_add_str(&a, t->nkey > 1 ? "}" : "");
	return buf_steal(&a);
}
