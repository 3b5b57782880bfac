/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The partitions' advisory locks (ordered mode, poll.h): which partitions of each table this
 * session owns. A lock's key is (hashtext('outboxd.poll <schema>.<table>'), count << 16 |
 * partition), the count being outboxd.poll.partitions (1-1024): under another count "partition
 * 3" is another set of rows, so the count is in the key, and locks of two counts never exclude
 * each other. What keeps an aggregate to one owner instead: a session takes no partition of a
 * table while any session holds one of its partitions with another count, or with a key
 * without a count (an outboxd from before the count was in the key), as pg_locks shows them.
 * So the new processes of a rolling update that changes the count wait until the old ones end.
 * That look and the taking run under the table's gate lock (key2 GATE_KEY), held for those two
 * statements only: of two processes with different counts that start at once, the second
 * through the gate sees the first's locks.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "poll_int.h"

#define MOD "poll"

/* The gate's key2: as a partition's it would be count 65535, partition 65535, beyond range. */
#define GATE_KEY "-1"

/*
 * The partitions of the table named $1 (its lock key) held with a count other than $2: per
 * count (0: a key without one), how many. The database filter matters: advisory locks are the
 * database's, and another database may have a table of the same name. classid and objid are
 * oids (unsigned): the int4 key1 is compared as the unsigned number pg_locks shows.
 */
static const char others_sql[] =
	"SELECT l.objid::bigint >> 16, count(*) FROM pg_locks l WHERE l.locktype = 'advisory' "
	"AND l.granted AND l.objsubid = 2 AND l.database = (SELECT oid FROM pg_database WHERE "
	"datname = current_database()) AND l.classid::bigint = (hashtext($1)::bigint & "
	"4294967295) AND l.objid::bigint >> 16 <> $2::bigint AND l.objid::bigint >> 16 <= 1024 "
	"AND (l.objid::bigint & 65535) < 1024 GROUP BY 1 ORDER BY 1";

enum outcome
poll_locks_others(struct poller *s, const struct poll_table *t, int *ret_held, struct buf *who)
{
	struct buf key = BUF_INIT;
	char count[16];
	const char *params[2] = { NULL, count };
	PGresult *r = NULL;
	enum outcome o;

	*ret_held = 0;
	buf_add_fmt(&key, "outboxd.poll %s", buf_cstr(&t->name));
	params[0] = buf_cstr(&key);
	snprintf(count, sizeof(count), "%lld", (long long)s->cfg->poll_partitions);
	o = poll_exec(s, others_sql, 2, params, "reading the partitions' locks", &r);
	buf_fini(&key);
	if (o != OUTCOME_OK) {
		return o;
	}
	for (int i = 0; i < PQntuples(r); i++) {
		long long c = strtoll(PQgetvalue(r, i, 0), NULL, 10);

		*ret_held += atoi(PQgetvalue(r, i, 1));
		buf_add_str(who, i ? " and " : "");
		if (c) {
			buf_add_fmt(who, "sessions with outboxd.poll.partitions=%lld", c);
		} else {
			buf_add_str(who, "sessions of an earlier outboxd (lock keys without the "
					 "partition count)");
		}
	}
	PQclear(r);
	return OUTCOME_OK;
}

/* Takes the locks of @t's partitions this session does not own and no session holds. */
static enum outcome
take_free(struct poller *s, struct poll_table *t, const char *key)
{
	struct buf want = BUF_INIT;
	char count[16];
	const char *params[3] = { key, NULL, count };
	PGresult *r = NULL;
	int before = t->nowned;
	enum outcome o;

	buf_add_char(&want, '{');
	for (int p = 0; p < s->cfg->poll_partitions; p++) {
		if (!t->owned[p]) {
			buf_add_fmt(&want, "%s%d", want.len > 1 ? "," : "", p);
		}
	}
	buf_add_char(&want, '}');
	params[1] = buf_cstr(&want);
	snprintf(count, sizeof(count), "%lld", (long long)s->cfg->poll_partitions);
	/* one statement: the gate is held for as short a time as can be */
	o = poll_exec(s,
		      "SELECT p FROM unnest($2::int[]) AS p WHERE "
		      "pg_try_advisory_lock(hashtext($1), ($3::int << 16) | p)",
		      3, params, "taking the partitions' advisory locks", &r);
	buf_fini(&want);
	for (int i = 0; o == OUTCOME_OK && i < PQntuples(r); i++) {
		int p = atoi(PQgetvalue(r, i, 0));

		t->owned[p] = true;
		t->nowned++;
		s->nowned++;
	}
	PQclear(r);
	if (o == OUTCOME_OK && t->nowned != before) {
		poll_metrics_partitions(s->pm, s->nowned);
		log_info(MOD, "this process owns %d of %lld partitions of %s", t->nowned,
			 (long long)s->cfg->poll_partitions, buf_cstr(&t->name));
	}
	return o;
}

/*
 * Says why @t waits (@held partitions held by @who), once per situation: again only when it
 * changes, and once when it ends.
 */
static void
say_waiting(struct poller *s, struct poll_table *t, int held, const struct buf *who)
{
	struct buf m = BUF_INIT;

	t->held = held;
	if (held) {
		buf_add_fmt(&m,
			    "%d partitions of %s are held by %s (this process has %lld): waiting "
			    "until they end, a rolling update finishes when the old processes stop",
			    held, buf_cstr(&t->name), buf_cstr(who),
			    (long long)s->cfg->poll_partitions);
	}
	if (held && (!t->waiting || strcmp(t->waiting, buf_cstr(&m)) != 0)) {
		log_warn(MOD, "%s", buf_cstr(&m));
		free(t->waiting);
		t->waiting = buf_steal(&m);
	} else if (!held && t->waiting) {
		log_info(MOD,
			 "no session holds partitions of %s with another outboxd.poll.partitions "
			 "any more: taking them",
			 buf_cstr(&t->name));
		free(t->waiting);
		t->waiting = NULL;
	}
	buf_fini(&m);
}

/*
 * @t's partitions no session holds, under the table's gate: none while sessions with another
 * count hold some. The gate taken by another process just now: the next turn tries again.
 */
static enum outcome
take_table(struct poller *s, struct poll_table *t)
{
	struct buf key = BUF_INIT, who = BUF_INIT;
	const char *params[1];
	PGresult *r = NULL;
	int held = 0;
	enum outcome o;

	buf_add_fmt(&key, "outboxd.poll %s", buf_cstr(&t->name));
	params[0] = buf_cstr(&key);
	o = poll_exec(s, "SELECT pg_try_advisory_lock(hashtext($1), " GATE_KEY ")", 1, params,
		      "taking the partitions' gate lock", &r);
	if (o != OUTCOME_OK || strcmp(PQgetvalue(r, 0, 0), "t") != 0) {
		PQclear(r);
		buf_fini(&key);
		return o;
	}
	PQclear(r);
	o = poll_locks_others(s, t, &held, &who);
	if (o == OUTCOME_OK) {
		say_waiting(s, t, held, &who);
	}
	if (o == OUTCOME_OK && !held) {
		o = take_free(s, t, params[0]);
	}
	/* a failure above ends the session, and the gate with it */
	if (o == OUTCOME_OK) {
		o = poll_exec(s, "SELECT pg_advisory_unlock(hashtext($1), " GATE_KEY ")", 1, params,
			      "releasing the partitions' gate lock", NULL);
	}
	buf_fini(&who);
	buf_fini(&key);
	return o;
}

enum outcome
poll_locks_take(void *arg, int64_t now, enum periodic_left *ret_left)
{
	struct poller *s = arg;
	enum outcome o = OUTCOME_OK;
	int held = 0;

	*ret_left = PERIODIC_DONE;
	if (s->nowned == s->cfg->poll_partitions * s->ntables) {
		return OUTCOME_OK; /* every one is ours until the session ends */
	}
	for (int i = 0; i < s->ntables && o == OUTCOME_OK; i++) {
		if (s->tables[i].nowned < s->cfg->poll_partitions) {
			o = take_table(s, &s->tables[i]);
		}
		held += s->tables[i].held;
	}
	if (o == OUTCOME_OK) {
		poll_metrics_other_count(s->pm, held);
	}
	return o;
}
