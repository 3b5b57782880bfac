/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PGSQL_H
#define OUTBOXD_PGSQL_H

/*
 * The ordinary SQL connection's queries: the preconditions checked before streaming (slot,
 * publication, privileges), slot administration for operations staff, and column facts that
 * pgoutput does not carry (NOT NULL). Each failed precondition comes back with one line that
 * names the problem and the fix.
 *
 * A query the server fails returns by the class of its SQLSTATE (pgconn_classify()): -EIO is
 * transient (the connection was lost, the server shuts down or starts up, too many clients:
 * retry), -EPERM a precondition (a privilege, a missing object: exit 2, the fix in @errbuf),
 * -EBUSY an object in use. Every other negative code below is a precondition found in the
 * answer.
 */

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "outboxd/pg/relcache.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/lsn.h"

/**
 * pgsql_standby() - whether the server is a standby (in recovery), and whether its
 * hot_standby_feedback is on (@ret_feedback; meaningful on a standby only).
 * Return: 0 with @ret_standby set, or a failed query's code.
 */
int pgsql_standby(PGconn *c, bool *ret_standby, bool *ret_feedback, char *errbuf, size_t errlen);

/**
 * pgsql_feedback_interval_ms() - a standby's wal_receiver_status_interval: how often at most its
 * feedback (hot_standby_feedback's xmin and catalog_xmin) reaches the primary; 0 = only when the
 * primary asks.
 * Return: 0 with @ret_ms set, or a failed query's code.
 */
int pgsql_feedback_interval_ms(PGconn *c, int64_t *ret_ms, char *errbuf, size_t errlen);

/* What the slot check found. */
struct pgsql_slot {
	lsn_t confirmed_flush;
	bool active;
	int active_pid;
	bool failover; /* created with failover (17+): synchronised to standbys */
};

/**
 * pgsql_check_slot() - the slot exists, is logical, uses pgoutput, belongs to this database, is
 * not invalidated (its reason named on 16+) and was not created with two_phase.
 * @ret: written on success.
 * Return: 0; -ENOENT missing; -EINVAL wrong type, plugin, database or two_phase; -ESTALE invalidated;
 * -EPROTO an unreadable LSN; or a failed query's code (above). @errbuf names the problem and the
 * fix.
 */
int pgsql_check_slot(PGconn *c, const char *slot, struct pgsql_slot *ret, char *errbuf,
		     size_t errlen);

/* One table of a publication. */
struct pgsql_pubtable {
	char *schema; /* owned */
	char *table;  /* owned */
};

/**
 * pgsql_publication_tables() - the tables a publication holds; fails when it is missing or
 * does not publish inserts.
 * @ret_tables: array the caller frees with pgsql_pubtables_free().
 * Return: 0; -ENOENT missing publication; -EINVAL inserts not published; or a failed query's
 * code.
 */
int pgsql_publication_tables(PGconn *c, const char *pub, struct pgsql_pubtable **ret_tables,
			     int *ret_n, char *errbuf, size_t errlen);

void pgsql_pubtables_free(struct pgsql_pubtable *t, int n);

/**
 * pgsql_positive_interval() - @value (a setting's text) is an interval PostgreSQL reads, and
 * longer than nothing. A value the server cannot read (SQLSTATE class 22) is a "no": the data is
 * the user's setting, whatever the shared classification says of class 22.
 * Return: 1 yes, 0 no; -1 when the query failed otherwise, its result in *@ret_failed for the
 * caller to judge and PQclear().
 */
int pgsql_positive_interval(PGconn *c, const char *value, PGresult **ret_failed);

/**
 * pgsql_check_role() - the connected role may stream (REPLICATION or superuser).
 * Return: 0; -EACCES without the privilege; or a failed query's code.
 */
int pgsql_check_role(PGconn *c, char *errbuf, size_t errlen);

/**
 * pgsql_wal_sender_timeout() - the server's wal_sender_timeout in ms (0 = off), which sets how
 * long a busy walsender may leave client messages unread.
 * Return: 0, or -EIO (transient), -EPERM (a precondition).
 */
int pgsql_wal_sender_timeout(PGconn *c, int64_t *ret_ms, char *errbuf, size_t errlen);

/**
 * pgsql_column_facts() - what pgoutput does not say about @schema.@table's columns @names:
 * whether each is NOT NULL, and its DEFAULT as pg_get_expr() prints it (NULL for none).
 * @ret_notnull: @n flags, caller frees. @ret_defaults: @n strings or NULLs, caller frees with
 * pgsql_defaults_free(). A name not found counts as nullable without a default.
 * Return: 0, or a failed query's code (text in @errbuf).
 */
int pgsql_column_facts(PGconn *c, const char *schema, const char *table, const char *const *names,
		       int n, bool **ret_notnull, char ***ret_defaults, char *errbuf,
		       size_t errlen);

/* pgsql_defaults_free() - free what pgsql_column_facts() returned in ret_defaults. */
void pgsql_defaults_free(char **defaults, int n);

/**
 * pgsql_slot_create() - create a logical pgoutput slot (operations' command); with @failover a
 * failover slot, which standbys synchronise (PostgreSQL 17+).
 * Return: 0; -EEXIST if it exists; -EPERM @failover before 17; -EPROTO an unreadable LSN; or a
 * failed query's code.
 */
int pgsql_slot_create(PGconn *c, const char *slot, bool failover, lsn_t *ret_lsn, char *errbuf,
		      size_t errlen);

/**
 * pgsql_failover_unsupported() - whether @failover cannot be had on this server (before 17);
 * when so, @errbuf names the fix.
 */
bool pgsql_failover_unsupported(PGconn *c, bool failover, char *errbuf, size_t errlen);

/* pgsql_slot_drop() - drop a slot. Return: 0, -ENOENT, -EBUSY (active) or a failed query's code. */
int pgsql_slot_drop(PGconn *c, const char *slot, char *errbuf, size_t errlen);

/**
 * pgsql_slot_exists() - 1 if a replication slot named @slot exists, 0 if not, or a failed
 * query's code.
 */
int pgsql_slot_exists(PGconn *c, const char *slot, char *errbuf, size_t errlen);

/**
 * pgsql_marker_create() - create a physical slot that reserves no WAL, used as a durable
 * "initial snapshot in progress" marker. Return: 0, -EEXIST or a failed query's code.
 */
int pgsql_marker_create(PGconn *c, const char *name, char *errbuf, size_t errlen);

/* What the initial snapshot needs to know of a table a publication names. */
struct pgsql_relation {
	uint32_t oid;
	char relkind;	   /* 'r' a table, 'p' a partitioned table (publish_via_partition_root) */
	bool partition;	   /* a partition of a partitioned table */
	uint32_t root_oid; /* partitions: the top of their partition tree; else 0 */
	/*
	 * The first integer column a sequence fills (an identity column, or serial: DEFAULT
	 * nextval() of a sequence the column owns), of the table or, for a partition, of its
	 * partition root; NULL for none. Owned.
	 */
	char *order_column;
	int64_t order_cache; /* that sequence's CACHE (1 unless someone raised it) */
};

/**
 * pgsql_relation_facts() - @schema.@table's kind, partition root and ordering column.
 * @ret: written on success; free its order_column.
 * Return: 0, -ENOENT if no such table, or pgconn_failure_code() of a failed query.
 */
int pgsql_relation_facts(PGconn *c, const char *schema, const char *table,
			 struct pgsql_relation *ret, char *errbuf, size_t errlen);

/* One column as pgoutput would describe it (attnum order, no dropped or generated columns). */
struct pgsql_column {
	char *name; /* owned */
	uint32_t type_oid;
	int32_t typmod;
	bool notnull;
	char *def; /* owned; the DEFAULT as pg_get_expr() prints it, or NULL */
};

/**
 * pgsql_table_columns() - the columns of @schema.@table.
 * @ret_cols: array the caller frees with pgsql_columns_free().
 * Return: 0, or a failed query's code.
 */
int pgsql_table_columns(PGconn *c, const char *schema, const char *table,
			struct pgsql_column **ret_cols, int *ret_n, char *errbuf, size_t errlen);

void pgsql_columns_free(struct pgsql_column *cols, int n);

/* What the catalog says of a column's type, for typecheck.h. */
struct pgsql_type_facts {
	char name[128];	     /* format_type() with the typmod: "interval", "integer[]", "mood" */
	uint32_t base_oid;   /* the type itself, or a domain's base (followed through domains) */
	char typtype;	     /* the base's pg_type.typtype: 'b' base, 'e' enum, 'r' range, ... */
	char category;	     /* the base's pg_type.typcategory: 'S' string, 'A' array, ... */
	char base_name[128]; /* format_type() of the base */
	bool domain;	     /* the type is a domain over base_oid */
	char typname[64];    /* the base's pg_type.typname, unqualified: "hstore" */
	int32_t base_typmod; /* a domain's typmod of its base (numeric(10,2)'s), else -1 */
	uint32_t elem_oid;   /* an array base's element type (pg_type.typelem), else 0 */
};

/**
 * pgsql_type_facts() - the catalog's facts of type @type_oid with @typmod into @out.
 * A type no longer in the catalog is named "OID n" with zero typtype and category.
 * Return: 0, or a failed query's code.
 */
int pgsql_type_facts(PGconn *c, uint32_t type_oid, int32_t typmod, struct pgsql_type_facts *out,
		     char *errbuf, size_t errlen);

/**
 * pgsql_enum_labels() - append the labels of enum type @type_oid to @out, comma-joined in their
 * sort order (nothing for a type with none). Return: 0, or a failed query's code.
 */
int pgsql_enum_labels(PGconn *c, uint32_t type_oid, struct buf *out, char *errbuf, size_t errlen);

/* A table as a source of rows that are not streamed (the initial snapshot, the poller) sees it. */
struct pgsql_described {
	const struct relcache_rel *rel; /* borrowed from the relcache it was added to */
	bool *notnull;			/* per column, router_route()'s NOT NULL facts; owned */
	char **defaults;		/* per column, the DEFAULT or NULL; owned */
};

/**
 * pgsql_describe() - @schema.@table as pgoutput's Relation message would describe it
 * (replica identity default), added to @rc under @oid, with its NOT NULL facts and DEFAULTs.
 * @ret: written on success; free with pgsql_described_free().
 * Return: 0, or a failed query's code (text in @errbuf).
 */
int pgsql_describe(PGconn *c, const char *schema, const char *table, uint32_t oid,
		   struct relcache *rc, struct pgsql_described *ret, char *errbuf, size_t errlen);

/* pgsql_described_free() - free what pgsql_describe() made (not the relation). */
void pgsql_described_free(struct pgsql_described *d);

#endif
