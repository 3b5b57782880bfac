/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/relay/cleanup_sql.h"

#include <stdlib.h>
#include <string.h>

/*
 * The row ended before the snapshot @snap was taken: its xmin, as an xid8, is below the
 * snapshot's xmin, the oldest transaction still running then. pg_visible_in_snapshot() would
 * not do: a row inserted under a SAVEPOINT carries the subtransaction's xid, which a snapshot's
 * list of running transactions never holds (it lists top-level ones), so a row of a transaction
 * still running at the snapshot passed as committed and could go before its commit was
 * confirmed. Below xmin every transaction, with its subtransactions, has ended. A row committed
 * before the snapshot while an older transaction still ran waits for a later cycle's mark.
 *
 * The 32-bit xmin takes the epoch of the snapshot's xmax, or the one before when it is not below
 * xmax's low half (it was assigned before xmax, so it wrapped). A row older than 2^32 xids
 * (frozen long ago) may come out in the future, which keeps it: never a row deleted that should
 * stay. @snap is the snapshot as SQL ("$1::pg_snapshot" or an expression with the cast).
 */
static void
visible(const char *snap, struct buf *out)
{
	buf_add_fmt(out,
		    "((((pg_snapshot_xmax(%s)::text::bigint >> 32) - "
		    "(xmin::text::bigint >= (pg_snapshot_xmax(%s)::text::bigint & 4294967295))"
		    "::int) << 32) | xmin::text::bigint)::text::xid8 < pg_snapshot_xmin(%s)",
		    snap, snap, snap);
}

/* @s quoted as a literal into @out; false when libpq could not. */
static bool
literal(PGconn *sql, const char *s, struct buf *out)
{
	char *q = PQescapeLiteral(sql, s, strlen(s));

	if (!q) {
		return false;
	}
	buf_add_str(out, q);
	PQfreemem(q);
	return true;
}

char *
cleanup_sql_mark(PGconn *sql, const struct cleanup_table *tables, int ntables, const char *created,
		 const char *retention)
{
	struct buf q = BUF_INIT;
	bool ok = true;

	buf_add_str(&q, "SELECT pg_current_snapshot()::text, pg_current_wal_insert_lsn()::text, "
			"t.relid::regclass::text, coalesce((SELECT pt.partstrat = 'r' AND "
			"pt.partnatts = 1 AND a.attname = ");
	ok = ok && literal(sql, created, &q);
	/* the upper bound of FOR VALUES FROM (...) TO ('...'); MAXVALUE never expires */
	buf_add_str(&q, " AND (substring(pg_get_expr(lc.relpartbound, lc.oid) FROM "
			"'TO \\(''([^'']*)''\\)'))::timestamptz <= now() - ");
	ok = ok && literal(sql, retention, &q);
	buf_add_str(&q, "::interval FROM pg_partitioned_table pt JOIN pg_attribute a ON "
			"a.attrelid = pt.partrelid AND a.attnum = pt.partattrs[0] JOIN pg_class lc "
			"ON lc.oid = t.relid WHERE pt.partrelid = t.parentrelid), false), "
			"t.parentrelid::regclass::text FROM (VALUES ");
	for (int i = 0; i < ntables && ok; i++) {
		buf_add_str(&q, i ? ", (" : "(");
		ok = literal(sql, tables[i].schema, &q);
		buf_add_str(&q, ", ");
		ok = ok && literal(sql, tables[i].table, &q);
		buf_add_str(&q, ")");
	}
	/* pg_partition_tree() has no row for a table that is not partitioned */
	buf_add_str(&q,
		    ") AS r(s, n) CROSS JOIN LATERAL (SELECT format('%I.%I', r.s, r.n)::regclass "
		    "AS root) x CROSS JOIN LATERAL (SELECT p.relid, p.parentrelid FROM "
		    "pg_partition_tree(x.root) p WHERE p.isleaf UNION SELECT c.oid::regclass, "
		    "NULL::regclass FROM pg_class c WHERE c.oid = x.root AND c.relkind = 'r') t "
		    "ORDER BY 3");
	if (!ok) {
		buf_fini(&q);
		return NULL;
	}
	return buf_steal(&q);
}

void
cleanup_sql_delete(const char *leaf, const char *created, struct buf *out)
{
	/*
	 * The slot itself, not only the relay, must have confirmed the horizon: the statement
	 * deletes nothing before the walsender took the status update (it answers false then).
	 * ctid: the batch's rows by their physical address, the cheapest way back to them.
	 */
	buf_add_fmt(
		out,
		"WITH ok AS (SELECT coalesce((SELECT confirmed_flush_lsn >= $5::pg_lsn FROM "
		"pg_replication_slots WHERE slot_name = $4), false) AS ok), d AS (DELETE FROM "
		"ONLY %s WHERE (SELECT ok FROM ok) AND ctid = ANY(ARRAY(SELECT ctid FROM ONLY %s "
		"WHERE %s < now() - $2::interval AND ",
		leaf, leaf, created);
	visible("$1::pg_snapshot", out);
	buf_add_str(out, " LIMIT $3::int)) RETURNING 1) SELECT (SELECT ok FROM ok), (SELECT "
			 "count(*) FROM d)");
}

/* "SET LOCAL outboxd.cleanup_<name> = <@value quoted as a literal>; " */
static bool
set_local(PGconn *sql, const char *name, const char *value, struct buf *out)
{
	buf_add_fmt(out, "SET LOCAL outboxd.cleanup_%s = ", name);
	if (!literal(sql, value, out)) {
		return false;
	}
	buf_add_str(out, "; ");
	return true;
}

/*
 * The DO block takes nothing from outside as text: a name or value pasted into its body would be
 * inside its dollar quotes, where a partition named "p$outboxd$x" ends the body and the rest of
 * its name runs as SQL. The names and values go as literals in SET LOCAL statements of their
 * own, read back in the block as settings of the implicit transaction that the statements of one
 * query share, and the dynamic statements quote names with format()'s %s of a regclass, which is
 * the server's identifier quoting.
 */
static const char partition_block[] =
	"DO $outboxd$ DECLARE leaf regclass := current_setting('outboxd.cleanup_leaf')::regclass; "
	"parent regclass := current_setting('outboxd.cleanup_parent')::regclass; young boolean; "
	"BEGIN IF coalesce((SELECT confirmed_flush_lsn >= "
	"current_setting('outboxd.cleanup_horizon')::pg_lsn FROM pg_replication_slots WHERE "
	"slot_name = current_setting('outboxd.cleanup_slot')), false) THEN EXECUTE format('LOCK "
	"TABLE %s IN ACCESS EXCLUSIVE MODE', parent); EXECUTE format('SELECT EXISTS (SELECT FROM "
	"ONLY %s WHERE NOT ";

char *
cleanup_sql_partition(PGconn *sql, const char *leaf, const char *parent, const char *snapshot,
		      const char *slot, const char *horizon, bool drop)
{
	struct buf q = BUF_INIT;
	bool ok;

	ok = set_local(sql, "leaf", leaf, &q) && set_local(sql, "parent", parent, &q) &&
	     set_local(sql, "snapshot", snapshot, &q) && set_local(sql, "slot", slot, &q) &&
	     set_local(sql, "horizon", horizon, &q);
	/*
	 * The parent's lock keeps inserts out while the rows are judged (an insert into the
	 * partition locks the parent first); a row that had not ended before the mark's snapshot
	 * keeps the partition.
	 */
	buf_add_str(&q, "SET LOCAL lock_timeout = '5s'; ");
	buf_add_str(&q, partition_block);
	visible("current_setting(''outboxd.cleanup_snapshot'')::pg_snapshot", &q);
	buf_add_str(&q, ")', leaf) INTO young; IF NOT young THEN ");
	if (drop) {
		buf_add_str(&q, "EXECUTE format('DROP TABLE %s', leaf);");
	} else {
		buf_add_str(&q,
			    "EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', parent, leaf);");
	}
	buf_add_str(&q, " END IF; END IF; END $outboxd$; SELECT coalesce((SELECT NOT "
			"c.relispartition FROM pg_class c WHERE c.oid = to_regclass(");
	ok = ok && literal(sql, leaf, &q);
	buf_add_str(&q, ")), true)");
	if (!ok) {
		buf_fini(&q);
		return NULL;
	}
	return buf_steal(&q);
}
