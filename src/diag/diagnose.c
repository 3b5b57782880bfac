/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/diag/diagnose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgconn.h"
#include "outboxd/pg/pgfailover.h"
#include "outboxd/pg/pgsql.h"
#include "outboxd/pg/pgstream.h"
#include "outboxd/pipeline/sinks.h"
#include "outboxd/pipeline/typecheck.h"
#include "outboxd/relay/cleanup.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/lsn.h"
#include "outboxd/util/mem.h"

/* One diagnosis line: "ok" or "FAIL", what was checked, and the finding. */
static void
diag(bool ok, const char *what, const char *detail)
{
	diagnose_line(NULL, ok ? 0 : 2, what, detail);
}

void
diagnose_line(void *arg, int level, const char *what, const char *detail)
{
	(void)arg;
	printf("%-4s %-13s %s\n", level == 0 ? "ok" : level == 1 ? "warn" : "FAIL", what, detail);
}

/* A connection's security line (pgconn_security()): warn when it warned. */
static void
security_diag(const char *what, int warnings, struct buf *line)
{
	diagnose_line(NULL, warnings ? 1 : 0, what, buf_cstr(line));
	buf_fini(line);
}

bool
diagnose_broker(const struct config *cfg)
{
	return sinks_check(cfg, 10000, diagnose_line, NULL);
}

/* outboxd.cleanup.*: the checks `run` makes at start (retention, column, DELETE, owner). */
static bool
check_cleanup(const struct config *cfg, PGconn *c, const struct cleanup_table *tables, int n)
{
	const struct cleanup_params p = { .retention = cfg->cleanup_retention,
					  .created = cfg->cleanup_created_column,
					  .interval_ms = cfg->cleanup_interval_ms,
					  .batch = cfg->cleanup_batch_size,
					  .slot = cfg->slot_name,
					  .partitions = cfg->cleanup_partitions };
	struct cleanup cl;
	char err[1024], detail[1200];
	bool ok = cleanup_open(&cl, &p, c, tables, n, err, sizeof(err)) == OUTCOME_OK;

	cleanup_close(&cl);
	snprintf(detail, sizeof(detail),
		 "outboxd.cleanup.retention=%s: the role may DELETE, column \"%s\" present%s",
		 cfg->cleanup_retention, cfg->cleanup_created_column,
		 strcmp(cfg->cleanup_partitions, "off") ? ", partitions may be removed" : "");
	diag(ok, "cleanup", ok ? detail : err);
	return ok;
}

/*
 * PostgreSQL 18's idle_replication_slot_timeout invalidates a slot nobody streamed from for that
 * long: an outboxd that is down longer loses its slot. A warning, since it is a choice.
 */
static void
check_idle_timeout(PGconn *c)
{
	PGresult *r = PQexec(c, "SELECT coalesce(current_setting('idle_replication_slot_timeout', "
				"true), '0')");
	char detail[512];

	if (PQresultStatus(r) == PGRES_TUPLES_OK && strcmp(PQgetvalue(r, 0, 0), "0") != 0) {
		snprintf(
			detail, sizeof(detail),
			"idle_replication_slot_timeout = %s: if outboxd is stopped for longer, "
			"PostgreSQL invalidates the slot (idle_timeout) and outboxd cannot resume; "
			"set it above the longest outage you plan for, or 0",
			PQgetvalue(r, 0, 0));
		diagnose_line(NULL, 1, "slot", detail);
	}
	PQclear(r);
}

/*
 * The status-update interval `run` will use: status.update.interval.ms, capped at a quarter of
 * the server's wal_sender_timeout (pgstream_status_interval_ms()).
 */
static bool
check_status_interval(const struct config *cfg, PGconn *c)
{
	int64_t wst_ms = 0, every;
	char err[512], detail[512];

	if (pgsql_wal_sender_timeout(c, &wst_ms, err, sizeof(err)) < 0) {
		diag(false, "status", err);
		return false;
	}
	every = pgstream_status_interval_ms(cfg->status_update_interval_ms, wst_ms);
	if (wst_ms == 0) {
		snprintf(detail, sizeof(detail),
			 "wal_sender_timeout is 0 (off); status updates every %lld ms "
			 "(status.update.interval.ms)",
			 (long long)every);
	} else {
		snprintf(detail, sizeof(detail),
			 "wal_sender_timeout %lld ms, status.update.interval.ms %lld ms: status "
			 "updates every %lld ms%s",
			 (long long)wst_ms, (long long)cfg->status_update_interval_ms,
			 (long long)every,
			 every < cfg->status_update_interval_ms ?
				 " (a quarter of the server's timeout, so that it hears from "
				 "outboxd while reading is paused)" :
				 "");
	}
	diag(true, "status", detail);
	return true;
}

/*
 * The columns of @table the router converts, each of a type outboxd converts (typecheck.h), as
 * `run` checks them before streaming.
 */
static bool
check_types(PGconn *c, struct router *router, const struct cleanup_table *table)
{
	char err[2048], detail[1200];
	bool ok = typecheck_table(c, router, table->schema, table->table, err, sizeof(err)) == 0;

	snprintf(detail, sizeof(detail),
		 "%s.%s: the columns the EventRouter converts have types outboxd converts",
		 table->schema, table->table);
	diag(ok, "columns", ok ? detail : err);
	return ok;
}

bool
diagnose_postgres(const struct config *cfg, struct router *router)
{
	enum pgconn_failure f;
	struct pgsql_slot slot;
	struct pgsql_pubtable *tables = NULL;
	PGconn *c = NULL;
	struct buf sec = BUF_INIT;
	char err[1024], detail[1200], at[LSN_STRLEN];
	int n = 0, selected = 0;
	bool ok = true;

	if (pgconn_open(&cfg->pg_conn, false, &c, &f, err, sizeof(err)) < 0) {
		diag(false, "postgresql", err);
		return false;
	}
	diag(true, "postgresql", "connected");
	security_diag("postgres tls", pgconn_security(c, &cfg->pg_conn, &sec), &sec);
	ok &= pgsql_check_role(c, err, sizeof(err)) == 0;
	diag(ok, "privileges", ok ? "the role may stream changes (REPLICATION)" : err);
	ok = check_status_interval(cfg, c) && ok;
	check_idle_timeout(c);
	if (pgsql_check_slot(c, cfg->slot_name, &slot, err, sizeof(err)) == 0) {
		snprintf(detail, sizeof(detail),
			 "\"%s\": logical, pgoutput, confirmed_flush_lsn %s%s", cfg->slot_name,
			 lsn_format(slot.confirmed_flush, at),
			 slot.active ? ", active (another client streams from it now)" : "");
		diag(true, "slot", detail);
		ok = pgfailover_check(c, cfg->slot_name, cfg->slot_failover, slot.failover,
				      diagnose_line, NULL) &&
		     ok;
		if (cfg->slot_failover || slot.failover) {
			char *standby_slots = pgfailover_standby_slots(c);

			ok = pgfailover_check_hosts(&cfg->pg_conn, cfg->slot_name, standby_slots,
						    diagnose_line, NULL) &&
			     ok;
			free(standby_slots);
		}
	} else {
		diag(false, "slot", err);
		ok = false;
	}
	if (pgsql_publication_tables(c, cfg->publication_name, &tables, &n, err, sizeof(err)) ==
	    0) {
		struct cleanup_table *clean = xcalloc((size_t)n + 1, sizeof(*clean));

		for (int i = 0; i < n; i++) {
			if (router_selects(router, tables[i].schema, tables[i].table)) {
				snprintf(detail, sizeof(detail),
					 "\"%s\" publishes %s.%s (selected)", cfg->publication_name,
					 tables[i].schema, tables[i].table);
				diag(true, "publication", detail);
				clean[selected++] =
					(struct cleanup_table){ tables[i].schema, tables[i].table };
			}
		}
		for (int i = 0; i < selected; i++) {
			ok = check_types(c, router, &clean[i]) && ok;
		}
		if (selected && cfg->cleanup_retention) {
			ok = check_cleanup(cfg, c, clean, selected) && ok;
		}
		free(clean);
		if (!selected) {
			snprintf(detail, sizeof(detail),
				 "\"%s\" holds no table that "
				 "table.include.list selects",
				 cfg->publication_name);
			diag(false, "publication", detail);
			ok = false;
		}
		pgsql_pubtables_free(tables, n);
	} else {
		diag(false, "publication", err);
		ok = false;
	}
	PQfinish(c);
	return ok;
}
