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
-- The name is a psql variable (default in parentheses): slot (debezium):
--   psql -d APPDB -v slot=orders_outbox -f sql/slot.sql
\set ON_ERROR_STOP on
\if :{?slot}
\else
\set slot debezium
\endif

SELECT NOT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = :'slot') AS create_slot,
	set_config('outboxd.slot', :'slot', false) AS ignored
\gset

\if :create_slot
SELECT slot_name, lsn AS consistent_point
FROM pg_create_logical_replication_slot(:'slot', 'pgoutput');
\else
DO $$
DECLARE
	v_slot text := current_setting('outboxd.slot');
	s record;
BEGIN
	SELECT * INTO s FROM pg_replication_slots WHERE slot_name = v_slot;
	IF s.slot_type <> 'logical' OR s.plugin <> 'pgoutput' THEN
		RAISE EXCEPTION 'slot % exists but is % with plugin %, not logical with pgoutput',
			v_slot, s.slot_type, coalesce(s.plugin, '(none)');
	ELSIF s.database <> current_database() THEN
		RAISE EXCEPTION 'slot % exists but belongs to database %, not %',
			v_slot, s.database, current_database();
	ELSIF s.wal_status = 'lost' THEN
		RAISE EXCEPTION 'slot % exists but is invalidated (wal_status lost)', v_slot
			USING HINT = 'its events since confirmed_flush_lsn are gone; see README before dropping it';
	END IF;
	RAISE NOTICE 'slot % already exists (confirmed_flush_lsn %)', v_slot, s.confirmed_flush_lsn;
END
$$;
\endif
