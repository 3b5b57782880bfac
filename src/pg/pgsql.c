/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pg/pgsql.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgconn.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"

/*
 * Runs a parameterised query into @ret. On failure writes the error line (with the fix of a
 * precondition) and returns its class's code: -EIO transient, -EPERM precondition, -EBUSY.
 */
static int
query(PGconn *c, const char *sql, int n, const char *const *params, PGresult **ret, char *errbuf,
      size_t errlen)
{
	PGresult *r = PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
	int rc;

	if (PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK) {
		*ret = r;
		return 0;
	}
	rc = pgconn_failure_code(pgconn_result_failure(r, errbuf, errlen));
	PQclear(r);
	return rc;
}

/* A failed call's code: @special for the SQLSTATE @code, else by class (query()). */
static int
failed(const PGresult *r, const char *code, int special, char *errbuf, size_t errlen)
{
	const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	enum pgconn_failure f = pgconn_result_failure(r, errbuf, errlen);

	return state && code && strcmp(state, code) == 0 ? special : pgconn_failure_code(f);
}

int
pgsql_standby(PGconn *c, bool *ret_standby, bool *ret_feedback, char *errbuf, size_t errlen)
{
	PGresult *r = NULL;
	int rc = query(c, "SELECT pg_is_in_recovery(), current_setting('hot_standby_feedback')", 0,
		       NULL, &r, errbuf, errlen);

	if (rc < 0) {
		return rc;
	}
	*ret_standby = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	*ret_feedback = strcmp(PQgetvalue(r, 0, 1), "on") == 0;
	PQclear(r);
	return 0;
}

int
pgsql_feedback_interval_ms(PGconn *c, int64_t *ret_ms, char *errbuf, size_t errlen)
{
	PGresult *r = NULL;
	/* pg_settings keeps it in seconds */
	int rc = query(c,
		       "SELECT setting::bigint * 1000 FROM pg_settings WHERE name = "
		       "'wal_receiver_status_interval'",
		       0, NULL, &r, errbuf, errlen);

	if (rc < 0) {
		return rc;
	}
	*ret_ms = PQntuples(r) == 1 ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : 0;
	PQclear(r);
	return 0;
}

int
pgsql_positive_interval(PGconn *c, const char *value, PGresult **ret_failed)
{
	const char *params[1] = { value };
	PGresult *r = PQexecParams(c, "SELECT $1::interval > interval '0'", 1, NULL, params, NULL,
				   NULL, 0);
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	int yes;

	if (PQresultStatus(r) != PGRES_TUPLES_OK && !(state && strncmp(state, "22", 2) == 0)) {
		*ret_failed = r;
		return -1;
	}
	yes = PQresultStatus(r) == PGRES_TUPLES_OK && strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	PQclear(r);
	return yes;
}

/*
 * Why PostgreSQL invalidated a slot, in words that lead to the fix. @reason is 17+'s
 * invalidation_reason; 16 only adds "conflicting", 15 and older only say wal_status = lost.
 */
static const char *
invalidation_words(const char *reason, bool conflicting)
{
	static const struct {
		const char *reason, *words;
	} known[] = {
		{ "wal_removed", "wal_removed: the WAL it needed was removed, see "
				 "max_slot_wal_keep_size" },
		{ "rows_removed", "rows_removed: VACUUM removed catalog rows it still needed; on a "
				  "standby, hot_standby_feedback=on with a physical slot to the "
				  "primary prevents it" },
		{ "wal_level_insufficient", "wal_level_insufficient: the primary's wal_level is "
					    "below logical" },
		{ "idle_timeout", "idle_timeout: it was inactive for longer than "
				  "idle_replication_slot_timeout" },
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strcmp(reason, known[i].reason) == 0) {
			return known[i].words;
		}
	}
	if (reason[0]) {
		return reason;
	}
	/* 16 sets conflicting for every invalidation of a logical slot, whatever the cause */
	return conflicting ? "wal_status lost; PostgreSQL 16 does not say why: the WAL it needed "
			     "was removed (see max_slot_wal_keep_size) or, on a standby, a "
			     "conflict with recovery removed rows it needed (see "
			     "hot_standby_feedback)" :
			     "wal_status lost: the WAL it needed was removed, see "
			     "max_slot_wal_keep_size";
}

/* The columns of pgsql_check_slot()'s query, in order. */
enum slot_col {
	SC_TYPE,
	SC_PLUGIN,
	SC_DATABASE,
	SC_CURRENT_DB,
	SC_WAL_STATUS,
	SC_CONFIRMED,
	SC_ACTIVE,
	SC_ACTIVE_PID,
	SC_TWO_PHASE,
	SC_INVALIDATION,
	SC_CONFLICTING,
	SC_FAILOVER,
};

/* What is wrong with the slot in row 0 of @r (pgsql_check_slot()'s query): 0 if nothing. */
static int
slot_problem(const PGresult *r, const char *slot, char *errbuf, size_t errlen)
{
	const char *v[SC_FAILOVER + 1];
	bool conflicting;

	for (int i = 0; i <= SC_FAILOVER; i++) {
		v[i] = PQgetvalue(r, 0, i);
	}
	conflicting = strcmp(v[SC_CONFLICTING], "true") == 0;
	if (strcmp(v[SC_TYPE], "logical") != 0) {
		errbuf_set(errbuf, errlen,
			   "replication slot \"%s\" is a %s slot; outboxd needs a logical "
			   "pgoutput slot: create one with sql/slot.sql",
			   slot, v[SC_TYPE]);
		return -EINVAL;
	}
	if (strcmp(v[SC_PLUGIN], "pgoutput") != 0) {
		errbuf_set(
			errbuf, errlen,
			"replication slot \"%s\" uses the plugin \"%s\"; outboxd needs "
			"pgoutput: create a pgoutput slot with sql/slot.sql (plugin.name=pgoutput)",
			slot, v[SC_PLUGIN]);
		return -EINVAL;
	}
	if (strcmp(v[SC_DATABASE], v[SC_CURRENT_DB]) != 0) {
		errbuf_set(errbuf, errlen,
			   "replication slot \"%s\" belongs to database \"%s\"; point "
			   "database.dbname at it or create a slot in this database",
			   slot, v[SC_DATABASE]);
		return -EINVAL;
	}
	if (strcmp(v[SC_WAL_STATUS], "lost") == 0 || v[SC_INVALIDATION][0] || conflicting) {
		errbuf_set(errbuf, errlen,
			   "replication slot \"%s\" is invalidated (%s); drop and recreate it, "
			   "then re-publish outbox rows committed since the last delivered one",
			   slot, invalidation_words(v[SC_INVALIDATION], conflicting));
		return -ESTALE;
	}
	if (strcmp(v[SC_TWO_PHASE], "true") == 0) {
		/*
		 * A two_phase slot decodes a prepared transaction at PREPARE, whatever options the
		 * client sends: its rows would be published before the transaction commits, and a
		 * ROLLBACK PREPARED would leave events without a committed change.
		 */
		errbuf_set(
			errbuf, errlen,
			"replication slot \"%s\" was created with two_phase = true: PostgreSQL "
			"would send a prepared transaction's rows before it commits, and outboxd "
			"publishes committed changes only; drop it and create it again without "
			"two_phase (sql/slot.sql or \"outboxd slot create FILE...\")",
			slot);
		return -EINVAL;
	}
	return 0;
}

int
pgsql_check_slot(PGconn *c, const char *slot, struct pgsql_slot *ret, char *errbuf, size_t errlen)
{
	const char *p[] = { slot };
	PGresult *r = NULL;
	/*
	 * Columns that newer majors added (two_phase 14, conflicting 16, invalidation_reason and
	 * failover 17) are read through to_jsonb, so one query serves 14 to 18: a missing one is
	 * NULL, not an error.
	 */
	int rc = query(c,
		       "SELECT slot_type, coalesce(plugin, ''), coalesce(database, ''), "
		       "current_database(), coalesce(wal_status, ''), "
		       "coalesce(confirmed_flush_lsn::text, '0/0'), active, "
		       "coalesce(active_pid, 0), coalesce(j->>'two_phase', 'false'), "
		       "coalesce(j->>'invalidation_reason', ''), "
		       "coalesce(j->>'conflicting', 'false'), coalesce(j->>'failover', 'false') "
		       "FROM pg_replication_slots s, LATERAL (SELECT to_jsonb(s) AS j) x "
		       "WHERE slot_name = $1",
		       1, p, &r, errbuf, errlen);
	lsn_t lsn = 0;

	if (rc < 0) {
		return rc;
	}
	if (PQntuples(r) == 0) {
		errbuf_set(
			errbuf, errlen,
			"replication slot \"%s\" does not exist; operations staff create it with "
			"sql/slot.sql or \"outboxd slot create FILE...\", or start outboxd with "
			"outboxd.slot.create=true",
			slot);
		rc = -ENOENT;
	} else if ((rc = slot_problem(r, slot, errbuf, errlen)) < 0) {
		/* named in @errbuf */
	} else if (lsn_parse(PQgetvalue(r, 0, SC_CONFIRMED), &lsn) < 0) {
		errbuf_set(errbuf, errlen,
			   "replication slot \"%s\": unreadable confirmed_flush_lsn \"%s\"", slot,
			   PQgetvalue(r, 0, SC_CONFIRMED));
		rc = -EPROTO;
	} else {
		ret->confirmed_flush = lsn;
		ret->active = strcmp(PQgetvalue(r, 0, SC_ACTIVE), "t") == 0;
		ret->active_pid = atoi(PQgetvalue(r, 0, SC_ACTIVE_PID));
		ret->failover = strcmp(PQgetvalue(r, 0, SC_FAILOVER), "true") == 0;
	}
	PQclear(r);
	return rc;
}

int
pgsql_publication_tables(PGconn *c, const char *pub, struct pgsql_pubtable **ret_tables, int *ret_n,
			 char *errbuf, size_t errlen)
{
	const char *p[] = { pub };
	PGresult *r = NULL;
	struct pgsql_pubtable *t;
	int n, rc = query(c, "SELECT pubinsert FROM pg_publication WHERE pubname = $1", 1, p, &r,
			  errbuf, errlen);

	if (rc < 0) {
		return rc;
	}
	if (PQntuples(r) == 0 || strcmp(PQgetvalue(r, 0, 0), "t") != 0) {
		n = PQntuples(r);
		PQclear(r);
		if (n == 0) {
			errbuf_set(errbuf, errlen,
				   "publication \"%s\" does not exist; create it with "
				   "sql/publication.sql (before the slot)",
				   pub);
		} else {
			errbuf_set(errbuf, errlen,
				   "publication \"%s\" does not publish inserts; ALTER "
				   "PUBLICATION %s SET (publish = 'insert')",
				   pub, pub);
		}
		return n == 0 ? -ENOENT : -EINVAL;
	}
	PQclear(r);
	rc = query(c,
		   "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1 "
		   "ORDER BY 1, 2",
		   1, p, &r, errbuf, errlen);
	if (rc < 0) {
		return rc;
	}
	n = PQntuples(r);
	t = xcalloc((size_t)n + 1, sizeof(*t));
	for (int i = 0; i < n; i++) {
		t[i].schema = xstrdup(PQgetvalue(r, i, 0));
		t[i].table = xstrdup(PQgetvalue(r, i, 1));
	}
	PQclear(r);
	*ret_tables = t;
	*ret_n = n;
	return 0;
}

void
pgsql_pubtables_free(struct pgsql_pubtable *t, int n)
{
	if (!t) {
		return;
	}
	for (int i = 0; i < n; i++) {
		free(t[i].schema);
		free(t[i].table);
	}
	free(t);
}

int
pgsql_check_role(PGconn *c, char *errbuf, size_t errlen)
{
	PGresult *r = NULL;
	int rc = query(c,
		       "SELECT rolreplication OR rolsuper, current_user FROM pg_roles "
		       "WHERE rolname = current_user",
		       0, NULL, &r, errbuf, errlen);

	if (rc < 0) {
		return rc;
	}
	if (PQntuples(r) != 1 || strcmp(PQgetvalue(r, 0, 0), "t") != 0) {
		errbuf_set(errbuf, errlen,
			   "role \"%s\" may not stream changes; ALTER ROLE %s REPLICATION "
			   "(see sql/role.sql)",
			   PQntuples(r) ? PQgetvalue(r, 0, 1) : "?",
			   PQntuples(r) ? PQgetvalue(r, 0, 1) : "?");
		rc = -EACCES;
	}
	PQclear(r);
	return rc;
}

int
pgsql_column_facts(PGconn *c, const char *schema, const char *table, const char *const *names,
		   int n, bool **ret_notnull, char ***ret_defaults, char *errbuf, size_t errlen)
{
	const char *p[] = { schema, table };
	PGresult *r = NULL;
	int rc = query(c,
		       "SELECT a.attname, a.attnotnull, pg_get_expr(d.adbin, d.adrelid) "
		       "FROM pg_attribute a JOIN pg_class t ON t.oid = a.attrelid "
		       "JOIN pg_namespace s ON s.oid = t.relnamespace "
		       "LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
		       "WHERE s.nspname = $1 AND t.relname = $2 AND a.attnum > 0 "
		       "AND NOT a.attisdropped",
		       2, p, &r, errbuf, errlen);
	bool *notnull;
	char **defaults;

	if (rc < 0) {
		return rc;
	}
	notnull = xcalloc((size_t)n + 1, sizeof(*notnull));
	defaults = xcalloc((size_t)n + 1, sizeof(*defaults));
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < PQntuples(r); j++) {
			if (strcmp(PQgetvalue(r, j, 0), names[i]) != 0) {
				continue;
			}
			notnull[i] = strcmp(PQgetvalue(r, j, 1), "t") == 0;
			defaults[i] = PQgetisnull(r, j, 2) ? NULL : xstrdup(PQgetvalue(r, j, 2));
		}
	}
	PQclear(r);
	*ret_notnull = notnull;
	*ret_defaults = defaults;
	return 0;
}

void
pgsql_defaults_free(char **defaults, int n)
{
	if (!defaults) {
		return;
	}
	for (int i = 0; i < n; i++) {
		free(defaults[i]);
	}
	free(defaults);
}

bool
pgsql_failover_unsupported(PGconn *c, bool failover, char *errbuf, size_t errlen)
{
	if (!failover || PQserverVersion(c) >= 170000) {
		return false;
	}
	errbuf_set(errbuf, errlen,
		   "slot.failover=true needs PostgreSQL 17 or later (this server is %d): older "
		   "majors have no failover slots; set slot.failover=false and see "
		   "docs/postgresql.md (\"Failover\") for what to do on 14 to 16",
		   PQserverVersion(c) / 10000);
	return true;
}

int
pgsql_slot_create(PGconn *c, const char *slot, bool failover, lsn_t *ret_lsn, char *errbuf,
		  size_t errlen)
{
	const char *p[] = { slot };
	PGresult *r;
	int rc = 0;

	if (pgsql_failover_unsupported(c, failover, errbuf, errlen)) {
		return -EPERM;
	}
	/* (name, plugin, temporary, twophase, failover): the fifth argument exists from 17 on */
	r = PQexecParams(c,
			 failover ? "SELECT lsn FROM pg_create_logical_replication_slot($1, "
				    "'pgoutput', false, false, true)" :
				    "SELECT lsn FROM pg_create_logical_replication_slot($1, "
				    "'pgoutput')",
			 1, NULL, p, NULL, NULL, 0);

	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		rc = failed(r, "42710", -EEXIST, errbuf, errlen); /* duplicate_object */
	} else if (ret_lsn && lsn_parse(PQgetvalue(r, 0, 0), ret_lsn) < 0) {
		rc = -EPROTO;
	}
	PQclear(r);
	return rc;
}

int
pgsql_slot_drop(PGconn *c, const char *slot, char *errbuf, size_t errlen)
{
	const char *p[] = { slot };
	PGresult *r =
		PQexecParams(c, "SELECT pg_drop_replication_slot($1)", 1, NULL, p, NULL, NULL, 0);
	int rc = 0;

	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		/* 42704 undefined_object; 55006 object_in_use is -EBUSY by its class */
		rc = failed(r, "42704", -ENOENT, errbuf, errlen);
	}
	PQclear(r);
	return rc;
}

int
pgsql_slot_exists(PGconn *c, const char *slot, char *errbuf, size_t errlen)
{
	const char *p[] = { slot };
	PGresult *r = NULL;
	int n, rc = query(c, "SELECT 1 FROM pg_replication_slots WHERE slot_name = $1", 1, p, &r,
			  errbuf, errlen);

	if (rc < 0) {
		return rc;
	}
	n = PQntuples(r);
	PQclear(r);
	return n > 0;
}

int
pgsql_marker_create(PGconn *c, const char *name, char *errbuf, size_t errlen)
{
	const char *p[] = { name };
	PGresult *r = PQexecParams(c, "SELECT pg_create_physical_replication_slot($1, false)", 1,
				   NULL, p, NULL, NULL, 0);
	int rc = 0;

	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		rc = failed(r, "42710", -EEXIST, errbuf, errlen); /* duplicate_object */
	}
	PQclear(r);
	return rc;
}

int
pgsql_relation_facts(PGconn *c, const char *schema, const char *table, struct pgsql_relation *ret,
		     char *errbuf, size_t errlen)
{
	const char *p[] = { schema, table };
	PGresult *r = NULL;
	/*
	 * pg_get_serial_sequence() finds the sequence a column owns: an identity column's, or a
	 * serial's (OWNED BY). A partition's columns own none (their DEFAULT names the root's
	 * sequence), so the ordering column is looked up on the partition root.
	 */
	int rc = query(
		c,
		"SELECT c.oid, c.relkind, c.relispartition, "
		"CASE WHEN c.relispartition THEN pg_partition_root(c.oid)::oid ELSE 0 END, "
		"q.attname, q.seqcache "
		"FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
		"LEFT JOIN LATERAL (SELECT a.attname, s.seqcache FROM pg_attribute a "
		"JOIN pg_sequence s ON s.seqrelid = pg_get_serial_sequence("
		"a.attrelid::regclass::text, a.attname)::regclass "
		"WHERE a.attrelid = coalesce(pg_partition_root(c.oid)::oid, c.oid) AND a.attnum > 0 "
		"AND NOT a.attisdropped AND a.atttypid IN (20, 21, 23) "
		"ORDER BY a.attnum LIMIT 1) q ON true "
		"WHERE n.nspname = $1 AND c.relname = $2",
		2, p, &r, errbuf, errlen);

	if (rc < 0) {
		return rc;
	}
	if (PQntuples(r) != 1) {
		errbuf_set(errbuf, errlen, "table %s.%s does not exist", schema, table);
		PQclear(r);
		return -ENOENT;
	}
	*ret = (struct pgsql_relation){
		.oid = (uint32_t)strtoul(PQgetvalue(r, 0, 0), NULL, 10),
		.relkind = PQgetvalue(r, 0, 1)[0],
		.partition = strcmp(PQgetvalue(r, 0, 2), "t") == 0,
		.root_oid = (uint32_t)strtoul(PQgetvalue(r, 0, 3), NULL, 10),
		.order_column = PQgetisnull(r, 0, 4) ? NULL : xstrdup(PQgetvalue(r, 0, 4)),
		.order_cache = PQgetisnull(r, 0, 5) ? 1 : strtoll(PQgetvalue(r, 0, 5), NULL, 10),
	};
	PQclear(r);
	return 0;
}

int
pgsql_table_columns(PGconn *c, const char *schema, const char *table,
		    struct pgsql_column **ret_cols, int *ret_n, char *errbuf, size_t errlen)
{
	const char *p[] = { schema, table };
	PGresult *r = NULL;
	struct pgsql_column *cols;
	int n, rc = query(c,
			  "SELECT a.attname, a.atttypid, a.atttypmod, a.attnotnull, "
			  "pg_get_expr(d.adbin, d.adrelid) "
			  "FROM pg_attribute a JOIN pg_class t ON t.oid = a.attrelid "
			  "JOIN pg_namespace s ON s.oid = t.relnamespace "
			  "LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
			  "WHERE s.nspname = $1 AND t.relname = $2 AND a.attnum > 0 "
			  "AND NOT a.attisdropped AND a.attgenerated = '' ORDER BY a.attnum",
			  2, p, &r, errbuf, errlen);

	if (rc < 0) {
		return rc;
	}
	n = PQntuples(r);
	cols = xcalloc((size_t)n + 1, sizeof(*cols));
	for (int i = 0; i < n; i++) {
		cols[i].name = xstrdup(PQgetvalue(r, i, 0));
		cols[i].type_oid = (uint32_t)strtoul(PQgetvalue(r, i, 1), NULL, 10);
		cols[i].typmod = (int32_t)strtol(PQgetvalue(r, i, 2), NULL, 10);
		cols[i].notnull = strcmp(PQgetvalue(r, i, 3), "t") == 0;
		cols[i].def = PQgetisnull(r, i, 4) ? NULL : xstrdup(PQgetvalue(r, i, 4));
	}
	PQclear(r);
	*ret_cols = cols;
	*ret_n = n;
	return 0;
}

int
pgsql_type_facts(PGconn *c, uint32_t type_oid, int32_t typmod, struct pgsql_type_facts *out,
		 char *errbuf, size_t errlen)
{
	char oid[16], mod[16];
	const char *p[] = { oid, mod };
	PGresult *r = NULL;
	int rc;

	snprintf(oid, sizeof(oid), "%u", type_oid);
	snprintf(mod, sizeof(mod), "%d", (int)typmod);
	/* a domain's base is followed down to a type that is not a domain, as getBaseType() does */
	rc = query(c,
		   "WITH RECURSIVE d(oid, typtype, typcategory, typbasetype, typtypmod, depth) AS ("
		   "SELECT oid, typtype, typcategory, typbasetype, typtypmod, 0 "
		   "FROM pg_catalog.pg_type WHERE oid = $1::oid UNION ALL "
		   "SELECT t.oid, t.typtype, t.typcategory, t.typbasetype, t.typtypmod, "
		   "d.depth + 1 FROM pg_catalog.pg_type t JOIN d ON t.oid = d.typbasetype "
		   "WHERE d.typtype = 'd' AND d.depth < 64) "
		   "SELECT pg_catalog.format_type($1::oid, $2::integer), d.oid, d.typtype, "
		   "d.typcategory, pg_catalog.format_type(d.oid, NULL), d.depth > 0, "
		   "(SELECT typname FROM pg_catalog.pg_type WHERE oid = d.oid), "
		   "COALESCE((SELECT e.typtypmod FROM d e WHERE e.typtype = 'd' "
		   "AND e.typtypmod <> -1 ORDER BY e.depth LIMIT 1), -1), "
		   "(SELECT CASE WHEN typcategory = 'A' THEN typelem ELSE 0 END "
		   "FROM pg_catalog.pg_type WHERE oid = d.oid) "
		   "FROM d ORDER BY d.depth DESC LIMIT 1",
		   2, p, &r, errbuf, errlen);
	if (rc < 0) {
		return rc;
	}
	*out = (struct pgsql_type_facts){ .base_oid = type_oid };
	if (PQntuples(r) == 1) {
		snprintf(out->name, sizeof(out->name), "%s", PQgetvalue(r, 0, 0));
		out->base_oid = (uint32_t)strtoul(PQgetvalue(r, 0, 1), NULL, 10);
		out->typtype = PQgetvalue(r, 0, 2)[0];
		out->category = PQgetvalue(r, 0, 3)[0];
		snprintf(out->base_name, sizeof(out->base_name), "%s", PQgetvalue(r, 0, 4));
		out->domain = strcmp(PQgetvalue(r, 0, 5), "t") == 0;
		snprintf(out->typname, sizeof(out->typname), "%s", PQgetvalue(r, 0, 6));
		out->base_typmod = (int32_t)strtol(PQgetvalue(r, 0, 7), NULL, 10);
		out->elem_oid = (uint32_t)strtoul(PQgetvalue(r, 0, 8), NULL, 10);
	} else {
		/* dropped meanwhile: named by its number, judged by the built-in lists alone */
		snprintf(out->name, sizeof(out->name), "OID %u", type_oid);
		snprintf(out->base_name, sizeof(out->base_name), "OID %u", type_oid);
	}
	PQclear(r);
	return 0;
}

int
pgsql_enum_labels(PGconn *c, uint32_t type_oid, struct buf *out, char *errbuf, size_t errlen)
{
	char oid[16];
	const char *p[] = { oid };
	PGresult *r = NULL;
	int rc;

	snprintf(oid, sizeof(oid), "%u", type_oid);
	rc = query(c,
		   "SELECT pg_catalog.string_agg(enumlabel, ',' ORDER BY enumsortorder) "
		   "FROM pg_catalog.pg_enum WHERE enumtypid = $1::oid",
		   1, p, &r, errbuf, errlen);
	if (rc < 0) {
		return rc;
	}
	if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 0)) {
		buf_add_str(out, PQgetvalue(r, 0, 0));
	}
	PQclear(r);
	return 0;
}

void
pgsql_columns_free(struct pgsql_column *cols, int n)
{
	if (!cols) {
		return;
	}
	for (int i = 0; i < n; i++) {
		free(cols[i].name);
		free(cols[i].def);
	}
	free(cols);
}

int
pgsql_wal_sender_timeout(PGconn *c, int64_t *ret_ms, char *errbuf, size_t errlen)
{
	PGresult *r = NULL;
	/* pg_settings gives it in its unit (ms) as a plain integer; SHOW would say "1min" */
	int rc = query(c,
		       "SELECT setting::bigint FROM pg_settings "
		       "WHERE name = 'wal_sender_timeout' AND unit = 'ms'",
		       0, NULL, &r, errbuf, errlen);

	if (rc < 0) {
		return rc;
	}
	if (PQntuples(r) != 1) {
		PQclear(r);
		errbuf_set(errbuf, errlen,
			   "wal_sender_timeout is not in pg_settings in milliseconds");
		return -EIO;
	}
	*ret_ms = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return 0;
}

int
pgsql_describe(PGconn *c, const char *schema, const char *table, uint32_t oid, struct relcache *rc,
	       struct pgsql_described *ret, char *errbuf, size_t errlen)
{
	struct pgsql_column *cols = NULL;
	struct pgoutput_rel_col *rcols;
	struct pgoutput_msg msg = { .type = PGOUTPUT_MSG_RELATION };
	int n = 0, rc_q = pgsql_table_columns(c, schema, table, &cols, &n, errbuf, errlen);

	if (rc_q < 0) {
		return rc_q;
	}
	rcols = xcalloc((size_t)n + 1, sizeof(*rcols));
	ret->notnull = xcalloc((size_t)n + 1, sizeof(bool));
	ret->defaults = xcalloc((size_t)n + 1, sizeof(char *));
	for (int i = 0; i < n; i++) {
		ret->defaults[i] = cols[i].def ? xstrdup(cols[i].def) : NULL;
		rcols[i] = (struct pgoutput_rel_col){ .name = slice_from_str(cols[i].name),
						      .type_oid = cols[i].type_oid,
						      .typmod = cols[i].typmod };
		ret->notnull[i] = cols[i].notnull;
	}
	msg.u.relation.relid = oid;
	msg.u.relation.nspname = slice_from_str(schema);
	msg.u.relation.relname = slice_from_str(table);
	msg.u.relation.replident = 'd';
	msg.u.relation.ncols = n;
	msg.u.relation.cols = rcols;
	ret->rel = relcache_apply(rc, &msg, NULL);
	free(rcols);
	pgsql_columns_free(cols, n);
	return 0;
}

void
pgsql_described_free(struct pgsql_described *d)
{
	free(d->notnull);
	pgsql_defaults_free(d->defaults, d->rel ? d->rel->ncols : 0);
	*d = (struct pgsql_described){ 0 };
}
