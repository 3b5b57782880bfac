/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The polling publisher's side work on its own connection, between cycles: the count and age
 * of the unpublished rows (/metrics), and the cleanup of published rows older than
 * outboxd.poll.retention, deleted or moved to outboxd.poll.archive.table. The cleanup goes in
 * batches of outboxd.poll.cleanup.batch.size, each statement its own short transaction, so it
 * never holds many row locks or a long snapshot; the rows of a batch are claimed with SKIP
 * LOCKED, so two pollers cleaning at once never wait on each other. Neither job's failure stops
 * the publishing (poll_int.h): an archive that refuses the rows must not throttle it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgsql.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/log.h"
#include "outboxd/util/now.h"
#include "poll_int.h"

#define MOD "poll"

/* The archive table as written (schema.table, or table in the outbox's schema), quoted. */
static void
archive_name(struct poller *s, const char *schema, struct buf *q)
{
	const char *name = s->cfg->poll_archive_table, *dot = strchr(name, '.');
	char *sch = dot ? strndup(name, (size_t)(dot - name)) : strdup(schema);

	poll_add_ident(s, q, sch);
	buf_add_char(q, '.');
	poll_add_ident(s, q, dot ? dot + 1 : name);
	free(sch);
}

/*
 * outboxd.poll.retention is an interval PostgreSQL reads, and longer than nothing. Not through
 * poll_exec(): a value the server cannot read (class 22, a data exception) is transient in the
 * shared classification, but here the data is the user's setting, so it is exit 2 naming it;
 * any other failure is judged as every statement's is.
 */
static enum outcome
check_retention(struct poller *s)
{
	PGresult *r = NULL;
	int yes = pgsql_positive_interval(s->sql, s->cfg->poll_retention, &r);

	if (yes < 0) {
		return poll_failed(s, r, "checking outboxd.poll.retention");
	}
	if (!yes) {
		errbuf_set(s->why, sizeof(s->why),
			   "outboxd.poll.retention=%s is not a positive PostgreSQL interval: write "
			   "it as PostgreSQL reads an interval, e.g. \"7 days\" or \"12 hours\"",
			   s->cfg->poll_retention);
		return OUTCOME_PRECONDITION;
	}
	return OUTCOME_OK;
}

/* The archive table exists (its columns are checked by the first move, which names them). */
static enum outcome
check_archive(struct poller *s, const struct poll_table *t, const struct buf *arch)
{
	const char *params[1] = { buf_cstr(arch) };
	PGresult *r = NULL;
	enum outcome o = poll_exec(s, "SELECT to_regclass($1) IS NOT NULL", 1, params,
				   "looking up outboxd.poll.archive.table", &r);

	if (o == OUTCOME_OK && strcmp(PQgetvalue(r, 0, 0), "t") != 0) {
		errbuf_set(s->why, sizeof(s->why),
			   "outboxd.poll.archive.table=%s: no such table; create it with the "
			   "outbox's columns (CREATE TABLE %s (LIKE %s), as sql/outbox_poll.sql "
			   "shows) or remove the setting to delete published rows instead",
			   s->cfg->poll_archive_table, buf_cstr(arch), buf_cstr(&t->quoted));
		o = OUTCOME_PRECONDITION;
	}
	PQclear(r);
	return o;
}

enum outcome
poll_upkeep_prepare(struct poller *s, struct poll_table *t, const char *schema)
{
	const struct config *cfg = s->cfg;
	const char *created = cfg->poll_created_column;
	struct buf arch = BUF_INIT, cols = BUF_INIT;
	enum outcome o = OUTCOME_OK;

	buf_add_str(&t->stats, "SELECT count(*), ");
	if (poll_column(t, created) >= 0) {
		buf_add_str(&t->stats,
			    "COALESCE((EXTRACT(EPOCH FROM GREATEST(clock_timestamp() - min(");
		poll_add_ident(s, &t->stats, created);
		buf_add_str(&t->stats, "), interval '0')) * 1000)::bigint, 0)");
	} else {
		log_info(MOD,
			 "%s has no column \"%s\" (outboxd.poll.created.column): "
			 "outboxd_poll_oldest_unpublished_age_seconds is not reported",
			 buf_cstr(&t->name), created);
		buf_add_str(&t->stats, "-1");
	}
	buf_add_fmt(&t->stats, " FROM %s%s WHERE ", t->only, buf_cstr(&t->quoted));
	poll_add_ident(s, &t->stats, cfg->poll_published_column);
	buf_add_str(&t->stats, " IS NULL");
	if (!cfg->poll_retention) {
		return OUTCOME_OK;
	}
	if ((o = check_retention(s)) != OUTCOME_OK) {
		return o;
	}
	/*
	 * ctid: the batch's rows by their physical address, the cheapest way back to them. On a
	 * partitioned root a ctid names a row in each partition that has it, so the outer
	 * statement asks the retention again: a row of another partition at the same address is
	 * deleted only if it is due too, and an unpublished one never.
	 */
	buf_add_fmt(&t->clean,
		    "DELETE FROM %s%s WHERE ctid = ANY(ARRAY(SELECT ctid FROM %s%s WHERE ", t->only,
		    buf_cstr(&t->quoted), t->only, buf_cstr(&t->quoted));
	poll_add_ident(s, &t->clean, cfg->poll_published_column);
	buf_add_str(&t->clean,
		    " < now() - $1::interval LIMIT $2::int FOR UPDATE SKIP LOCKED)) AND ");
	poll_add_ident(s, &t->clean, cfg->poll_published_column);
	buf_add_str(&t->clean, " < now() - $1::interval");
	if (cfg->poll_archive_table) {
		struct buf del = BUF_INIT;

		archive_name(s, schema, &arch);
		if ((o = check_archive(s, t, &arch)) == OUTCOME_OK) {
			for (int c = 0; c < t->rel->ncols; c++) {
				buf_add_str(&cols, c ? ", " : "");
				poll_add_ident(s, &cols, t->rel->cols[c].name);
			}
			/* one statement: the move is atomic, a row is in one table or the other */
			buf_add_fmt(&del,
				    "WITH moved AS (%s RETURNING %s) INSERT INTO %s (%s) "
				    "OVERRIDING SYSTEM VALUE SELECT %s FROM moved",
				    buf_cstr(&t->clean), buf_cstr(&cols), buf_cstr(&arch),
				    buf_cstr(&cols), buf_cstr(&cols));
			buf_reset(&t->clean);
			buf_add_str(&t->clean, buf_cstr(&del));
		}
		buf_fini(&del);
	}
	buf_fini(&arch);
	buf_fini(&cols);
	return o;
}

/*
 * The statement of the side job @job failed on @table (its outcome @o, its error in s->why,
 * then @fix): OUTCOME_OK, the failure told and counted, publishing goes on while the job backs
 * off; or @o when the connection is gone or was left in a transaction, which ends the session.
 */
static enum outcome
upkeep_failed(struct poller *s, enum poll_job job, enum outcome o, const char *table,
	      const char *fix)
{
	bool clean = job == JOB_CLEAN;

	if (PQstatus(s->sql) != CONNECTION_OK || PQtransactionStatus(s->sql) != PQTRANS_IDLE) {
		return o;
	}
	poll_metrics_upkeep_failed(s->pm, clean ? POLL_UPKEEP_CLEANUP : POLL_UPKEEP_COUNT);
	log_warn(MOD,
		 "%s of %s failed: %s; %s; publishing goes on, the %s is tried again in %lld ms "
		 "(its wait doubling while it fails)",
		 clean ? "cleanup" : "count of the unpublished rows", table, s->why, fix,
		 clean ? "cleanup" : "count", (long long)(periodic_retry_us(&s->jobs, job) / 1000));
	s->why[0] = '\0';
	return OUTCOME_OK;
}

/* Every table's unpublished rows: their sum and the oldest's age over all tables. */
enum outcome
poll_upkeep_count(void *arg, int64_t now_us, enum periodic_left *ret_left)
{
	struct poller *s = arg;
	enum outcome o = OUTCOME_OK;
	int64_t rows = 0, oldest = -1;

	*ret_left = PERIODIC_DONE;
	for (int i = 0; i < s->ntables && *ret_left == PERIODIC_DONE; i++) {
		PGresult *r = NULL;

		o = poll_exec(s, buf_cstr(&s->tables[i].stats), 0, NULL,
			      "counting the unpublished rows", &r);
		if (o == OUTCOME_OK) {
			int64_t age = strtoll(PQgetvalue(r, 0, 1), NULL, 10);

			rows += strtoll(PQgetvalue(r, 0, 0), NULL, 10);
			oldest = age > oldest ? age : oldest;
		} else {
			/* a partial sum would be wrong: the gauges keep the last whole count */
			*ret_left = PERIODIC_FAILED;
			o = upkeep_failed(s, JOB_COUNT, o, buf_cstr(&s->tables[i].name),
					  "outboxd_poll_unpublished_rows keeps its last count; see "
					  "that outboxd's role may read the table");
		}
		PQclear(r);
	}
	if (*ret_left == PERIODIC_DONE) {
		poll_metrics_stats(s->pm, rows, oldest);
	}
	return o;
}

/*
 * One batch of the cleanup of the table it is at: a short batch moves it to the next table, and
 * so does a failed one (told, and the cleanup backs off at its end).
 */
static enum outcome
clean_batch(struct poller *s)
{
	const struct poll_table *t = &s->tables[s->clean_at];
	const char *arch = s->cfg->poll_archive_table;
	char batch[24], fix[1024];
	const char *params[2] = { s->cfg->poll_retention, batch };
	PGresult *r = NULL;
	enum outcome o;
	long long n;

	snprintf(batch, sizeof(batch), "%lld", (long long)s->cfg->poll_cleanup_batch_size);
	o = poll_exec(s, buf_cstr(&t->clean), 2, params,
		      arch ? "moving published rows to the archive" : "deleting published rows",
		      &r);
	n = o == OUTCOME_OK ? strtoll(PQcmdTuples(r), NULL, 10) : 0;
	PQclear(r);
	s->clean_total += n;
	poll_metrics_cleaned(s->pm, (uint64_t)n);
	if (o == OUTCOME_OK && n < s->cfg->poll_cleanup_batch_size) {
		s->clean_at++; /* nothing older left in this table */
	}
	if (o == OUTCOME_OK) {
		return o;
	}
	if (arch) {
		snprintf(fix, sizeof(fix),
			 "the rows stay in %s until outboxd.poll.archive.table=%s takes them: give "
			 "it the outbox's columns (as CREATE TABLE %s (LIKE %s) does) and no "
			 "constraint or trigger that refuses them, and GRANT INSERT on it to "
			 "outboxd's role",
			 buf_cstr(&t->name), arch, arch, buf_cstr(&t->name));
	} else {
		snprintf(fix, sizeof(fix),
			 "the rows stay in %s; see that outboxd's role may DELETE from it and "
			 "that no trigger or foreign key refuses the DELETE",
			 buf_cstr(&t->name));
	}
	s->clean_failed = true;
	s->clean_at++; /* the next table's turn; this one's at the next cleanup */
	return upkeep_failed(s, JOB_CLEAN, o, buf_cstr(&t->name), fix);
}

/* The cleanup's next batch; at its end the total. */
enum outcome
poll_upkeep_clean(void *arg, int64_t now_us, enum periodic_left *ret_left)
{
	struct poller *s = arg;
	enum outcome o;

	*ret_left = PERIODIC_DONE;
	if (s->clean_at < 0) {
		s->clean_at = 0;
		s->clean_total = 0;
		s->clean_failed = false;
	}
	o = s->clean_at < s->ntables ? clean_batch(s) : OUTCOME_OK;
	if (o == OUTCOME_OK && s->clean_at < s->ntables) {
		*ret_left = PERIODIC_MORE;
		return o;
	}
	if (s->clean_total) {
		log_info(MOD, "cleanup: %lld published rows older than %s %s", s->clean_total,
			 s->cfg->poll_retention,
			 s->cfg->poll_archive_table ? "moved to the archive" : "deleted");
	}
	*ret_left = s->clean_failed ? PERIODIC_FAILED : PERIODIC_DONE;
	s->clean_at = -1; /* the next cleanup starts from the first table */
	return o;
}
