/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `outboxd check --poll`: what `outboxd poll` needs of the database, found before it runs. The
 * steps a session takes at start (poll_session_prepare: connection, table, columns, cleanup
 * settings), then what a session finds only later or never: the privileges its statements
 * need, the partial index that keeps the poll's query cheap and the trigger that wakes it, and
 * in ordered mode the sessions that hold partitions with another outboxd.poll.partitions.
 */
#include <stdio.h>
#include <string.h>

#include "outboxd/util/mem.h"
#include "poll_int.h"

/* One yes/no question to the server about the table @t, "t" or "f". */
static bool
ask(struct poller *s, const struct poll_table *t, const char *q, const char *p2, bool *ret)
{
	char oid[16];
	const char *params[2] = { oid, p2 };
	PGresult *r = NULL;

	snprintf(oid, sizeof(oid), "%u", t->oid);
	if (poll_exec(s, q, p2 ? 2 : 1, params, "asking the server", &r) != OUTCOME_OK) {
		return false;
	}
	*ret = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	PQclear(r);
	return true;
}

/* SELECT, and UPDATE or DELETE as the settings need them; INSERT on the archive. */
static bool
privileges(struct poller *s, const struct poll_table *t, poll_check_diag diag, void *arg)
{
	const struct config *cfg = s->cfg;
	bool del = strcmp(cfg->poll_after, "delete") == 0;
	const char *need[3] = { "SELECT", NULL, NULL };
	struct buf have = BUF_INIT, miss = BUF_INIT;
	bool ok = true, yes = false;

	/* UPDATE: the mark, and FOR UPDATE in unordered mode; DELETE: after=delete, cleanup */
	need[1] = !del || s->unordered ? "UPDATE" : NULL;
	need[2] = del || cfg->poll_retention ? "DELETE" : NULL;
	for (int i = 0; i < 3; i++) {
		if (!need[i]) {
			continue;
		}
		if (!ask(s, t, "SELECT has_table_privilege($1::oid, $2)", need[i], &yes)) {
			diag(arg, 2, "privileges", s->why);
			ok = false;
			break;
		}
		buf_add_fmt(yes ? &have : &miss, "%s%s", (yes ? have.len : miss.len) ? ", " : "",
			    need[i]);
	}
	if (ok && miss.len) {
		struct buf d = BUF_INIT;

		buf_add_fmt(&d,
			    "the role lacks %s on %s: GRANT %s ON %s TO <the role> (no REPLICATION "
			    "is needed)",
			    buf_cstr(&miss), buf_cstr(&t->name), buf_cstr(&miss),
			    buf_cstr(&t->name));
		diag(arg, 2, "privileges", buf_cstr(&d));
		buf_fini(&d);
		ok = false;
	} else if (ok) {
		struct buf d = BUF_INIT;

		buf_add_fmt(&d, "%s on %s (no REPLICATION needed)", buf_cstr(&have),
			    buf_cstr(&t->name));
		diag(arg, 0, "privileges", buf_cstr(&d));
		buf_fini(&d);
	}
	buf_fini(&have);
	buf_fini(&miss);
	return ok;
}

/* A partial index on the ordering column of the unpublished rows: a warning without one. */
static void
index_and_trigger(struct poller *s, const struct poll_table *t, poll_check_diag diag, void *arg)
{
	const struct config *cfg = s->cfg;
	struct buf d = BUF_INIT;
	bool yes = false;

	if (ask(s, t,
		"SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = "
		"i.indrelid AND a.attnum = i.indkey[0] WHERE i.indrelid = $1::oid AND a.attname = $2 "
		"AND i.indpred IS NOT NULL AND pg_get_expr(i.indpred, i.indrelid) LIKE '%IS NULL%')",
		cfg->poll_order_column, &yes)) {
		buf_add_fmt(&d,
			    yes ? "a partial index on %s of the unpublished rows of %s" :
				  "no partial index on %s of the unpublished rows of %s: the poll "
				  "reads the whole table; CREATE INDEX ON %s (%s) WHERE %s IS NULL",
			    cfg->poll_order_column, buf_cstr(&t->name), buf_cstr(&t->name),
			    cfg->poll_order_column, cfg->poll_published_column);
		diag(arg, yes ? 0 : 1, "index", buf_cstr(&d));
	}
	buf_reset(&d);
	if (ask(s, t,
		"SELECT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = $1::oid AND NOT "
		"t.tgisinternal AND t.tgenabled <> 'D' AND pg_get_functiondef(t.tgfoid) LIKE '%' || "
		"$2 || '%')",
		cfg->poll_notify_channel, &yes)) {
		buf_add_fmt(
			&d,
			yes ? "a trigger on %s that names channel %s (NOTIFY wakes the poll)" :
			      "no trigger on %s names channel %s: rows wait up to "
			      "outboxd.poll.interval.ms; add the trigger of sql/outbox_poll.sql",
			buf_cstr(&t->name), cfg->poll_notify_channel);
		diag(arg, yes ? 0 : 1, "notify", buf_cstr(&d));
	}
	buf_fini(&d);
}

/*
 * Ordered mode: sessions holding partitions of @t with another outboxd.poll.partitions (a
 * rolling update that changes it, under way): a warning, since `outboxd poll` with this
 * configuration takes no partition of @t until they end.
 */
static bool
partition_locks(struct poller *s, const struct poll_table *t, poll_check_diag diag, void *arg)
{
	struct buf who = BUF_INIT, d = BUF_INIT;
	int held = 0;

	if (poll_locks_others(s, t, &held, &who) != OUTCOME_OK) {
		diag(arg, 2, "partitions", s->why);
		buf_fini(&who);
		return false;
	}
	if (held) {
		buf_add_fmt(&d,
			    "%d partitions of %s are held by %s (this configuration has %lld): "
			    "outboxd poll takes none of them until those sessions end",
			    held, buf_cstr(&t->name), buf_cstr(&who),
			    (long long)s->cfg->poll_partitions);
	} else {
		buf_add_fmt(&d, "no session holds partitions of %s with another count than %lld",
			    buf_cstr(&t->name), (long long)s->cfg->poll_partitions);
	}
	diag(arg, held ? 1 : 0, "partitions", buf_cstr(&d));
	buf_fini(&who);
	buf_fini(&d);
	return true;
}

/* The columns the mark reaches a row by (poll_key.c; none is exit 2 before this). */
static void
mark_key(const struct poll_table *t, poll_check_diag diag, void *arg)
{
	struct buf d = BUF_INIT;

	buf_add_fmt(&d, "%s%s: rows marked by (", buf_cstr(&t->name),
		    t->partitioned ? " (partitioned: every partition through it)" : "");
	for (int k = 0; k < t->nkey; k++) {
		buf_add_fmt(&d, "%s%s", k ? ", " : "", t->rel->cols[t->key[k]].name);
	}
	buf_add_str(&d, "), unique and NOT NULL");
	diag(arg, 0, "id", buf_cstr(&d));
	buf_fini(&d);
}

bool
poll_check(const struct poll_params *p, poll_check_diag diag, void *arg)
{
	struct poller s = { .p = p,
			    .cfg = p->cfg,
			    .unordered = strcmp(p->cfg->poll_mode, "unordered") == 0 };
	bool ok = poll_session_prepare(&s) == OUTCOME_OK;

	if (!ok) {
		diag(arg, 2, s.stage, s.why);
	} else {
		struct buf d = BUF_INIT;

		diag(arg, 0, "postgresql", "connected");
		buf_add_fmt(&d, "%s (selected by table.include.list)", buf_cstr(&s.names));
		diag(arg, 0, "table", buf_cstr(&d));
		buf_reset(&d);
		buf_add_fmt(&d, "%s (order), %s (published), the EventRouter's id and key",
			    s.cfg->poll_order_column, s.cfg->poll_published_column);
		diag(arg, 0, "columns", buf_cstr(&d));
		buf_reset(&d);
		if (s.cfg->poll_retention) {
			buf_add_fmt(&d, "published rows older than %s %s", s.cfg->poll_retention,
				    s.cfg->poll_archive_table ? "move to the archive" :
								"are deleted");
		} else {
			buf_add_str(&d, "off (outboxd.poll.retention not set)");
		}
		diag(arg, 0, "cleanup", buf_cstr(&d));
		buf_fini(&d);
		for (int i = 0; i < s.ntables; i++) {
			mark_key(&s.tables[i], diag, arg);
			ok &= privileges(&s, &s.tables[i], diag, arg);
			index_and_trigger(&s, &s.tables[i], diag, arg);
			ok &= s.unordered || partition_locks(&s, &s.tables[i], diag, arg);
		}
	}
	poll_session_close(&s, PUBLISH_END_FINAL);
	return ok;
}
