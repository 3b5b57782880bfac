-- slot.sql: the logical replication slot outboxd streams from.
--
-- Who:  operations staff (a superuser, or any role with REPLICATION such as outboxd).
-- When: once, AFTER publication.sql, before outboxd's first start, in the application's
--       database (a logical slot belongs to one database). Harmless to run again: an existing
--       slot is checked, never recreated.
--       A user migrating from Debezium already has this slot: keep it (do not drop and
--       recreate it), so outboxd resumes exactly where Debezium stopped.
-- Why:  the slot is outboxd's only cursor: the server keeps WAL from the slot's restart_lsn and
--       resumes streaming at its confirmed_flush_lsn. outboxd never creates a slot on its own
--       (unless told to with `outboxd slot create` or outboxd.slot.create=true), and a missing
--       slot stops it with exit 2, so that a lost slot cannot go unnoticed.
--
-- The name debezium is Debezium's default (slot.name). Creating the slot waits until every
-- transaction that was running when it started has finished: a long or idle-in-transaction
-- session (or a forgotten prepared transaction) makes it hang. Anything committed before the
-- slot exists is never streamed.
--
-- An unconsumed slot keeps WAL forever (unless max_slot_wal_keep_size is set, which then
-- invalidates the slot instead): watch it with monitoring.sql, and drop the slot when
-- decommissioning outboxd:  SELECT pg_drop_replication_slot('debezium');
--
-- failover=on (PostgreSQL 17+, Debezium's slot.failover=true) makes a failover slot: standbys
-- with sync_replication_slots=on keep a copy, so outboxd resumes on a promoted standby. It is
-- only safe with synchronized_standby_slots set on the primary (see docs/postgresql.md,
-- "Failover"): `outboxd check` says what is missing.
--
-- The names are psql variables (defaults in parentheses): slot (debezium), failover (off):
--   psql -d APPDB -v slot=orders_outbox -v failover=on -f sql/slot.sql
\set ON_ERROR_STOP on
\if :{?slot}
\else
\set slot debezium
\endif
\if :{?failover}
\else
\set failover off
\endif

SELECT NOT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = :'slot') AS create_slot,
	:'failover'::boolean AS want_failover,
	current_setting('server_version_num')::int >= 170000 AS has_failover,
	set_config('outboxd.slot', :'slot', false) AS ignored,
	set_config('outboxd.failover', :'failover'::boolean::text, false) AS ignored2
\gset

\if :want_failover
\if :has_failover
\else
DO $$ BEGIN
	RAISE EXCEPTION 'failover=on needs PostgreSQL 17 or later (this server is %)',
		current_setting('server_version')
		USING HINT = 'older majors have no failover slots: see docs/postgresql.md ("Failover") for 14 to 16';
END $$;
\endif
\endif

\if :create_slot
\if :want_failover
-- (name, plugin, temporary, twophase, failover)
SELECT slot_name, lsn AS consistent_point
FROM pg_create_logical_replication_slot(:'slot', 'pgoutput', false, false, true);
\else
SELECT slot_name, lsn AS consistent_point
FROM pg_create_logical_replication_slot(:'slot', 'pgoutput');
\endif
\else
DO $$
DECLARE
	v_slot text := current_setting('outboxd.slot');
	v_failover boolean := current_setting('outboxd.failover')::boolean;
	s record;
	j jsonb;
BEGIN
	SELECT * INTO s FROM pg_replication_slots WHERE slot_name = v_slot;
	-- two_phase (14+) and failover (17+) through jsonb, so that one script serves every major
	SELECT to_jsonb(r) INTO j FROM pg_replication_slots r WHERE slot_name = v_slot;
	IF s.slot_type <> 'logical' OR s.plugin <> 'pgoutput' THEN
		RAISE EXCEPTION 'slot % exists but is % with plugin %, not logical with pgoutput',
			v_slot, s.slot_type, coalesce(s.plugin, '(none)');
	ELSIF s.database <> current_database() THEN
		RAISE EXCEPTION 'slot % exists but belongs to database %, not %',
			v_slot, s.database, current_database();
	ELSIF s.wal_status = 'lost' OR j->>'invalidation_reason' IS NOT NULL THEN
		RAISE EXCEPTION 'slot % exists but is invalidated (wal_status lost%)', v_slot,
			coalesce(', ' || (j->>'invalidation_reason'), '')
			USING HINT = 'its events since confirmed_flush_lsn are gone; see docs/postgresql.md before dropping it';
	ELSIF coalesce((j->>'two_phase')::boolean, false) THEN
		RAISE EXCEPTION 'slot % exists but was created with two_phase = true', v_slot
			USING HINT = 'outboxd refuses it (prepared transactions would be sent before they commit): drop it and run this script again';
	ELSIF v_failover AND NOT coalesce((j->>'failover')::boolean, false) THEN
		RAISE EXCEPTION 'slot % exists but is not a failover slot', v_slot
			USING HINT = 'make it one on a replication connection, without losing its position: psql "dbname=APPDB replication=database" -c "ALTER_REPLICATION_SLOT ' || v_slot || ' (FAILOVER true)"';
	END IF;
	RAISE NOTICE 'slot % already exists (confirmed_flush_lsn %)', v_slot, s.confirmed_flush_lsn;
END
$$;
\endif
