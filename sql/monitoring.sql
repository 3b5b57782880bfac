-- monitoring.sql: how far behind outboxd is and how much WAL its slot pins.
--
-- Who:  operations staff and monitoring agents (any role: these views are readable by all).
-- When: whenever; for alerts, every minute or so. Read-only.
--       psql -d APPDB -f sql/monitoring.sql              (slot debezium)
--       psql -d APPDB -v slot=myslot -f sql/monitoring.sql
-- Why:  the slot keeps WAL on the primary until outboxd confirms it. A stopped or stuck relay
--       fills the primary's disk (max_slot_wal_keep_size = -1, the default) or gets its slot
--       invalidated and loses events (a bounded max_slot_wal_keep_size). Alert on
--       retained_wal_bytes growing, on active = false for longer than a restart takes, on
--       wal_status other than reserved, and on safe_wal_bytes (when bounded) approaching zero.
--       outboxd's own /metrics reports the same from its side.
--       On a standby (PostgreSQL 16+ decodes there too) pg_current_wal_lsn() fails: the WAL
--       position is then the last one received, as outboxd's outboxd_slot_* metrics measure it.
\set ON_ERROR_STOP on
\if :{?slot}
\else
\set slot debezium
\endif

-- The current WAL position: the primary's, or on a standby the last received.
SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn()
	ELSE pg_current_wal_lsn() END AS wal_now
\gset

-- Slot state: who is connected, where it resumes, whether its WAL is still there.
SELECT slot_name, plugin, slot_type, database, active, active_pid, restart_lsn,
	confirmed_flush_lsn, wal_status, safe_wal_size
FROM pg_replication_slots
WHERE slot_name = :'slot';

-- Lag in bytes: not yet confirmed (events possibly not yet in Kafka; replayed after a restart)
-- and retained WAL (what the slot keeps on disk; decoding restarts from restart_lsn).
SELECT slot_name,
	pg_wal_lsn_diff(NULLIF(:'wal_now', '')::pg_lsn, confirmed_flush_lsn) AS unconfirmed_bytes,
	pg_size_pretty(pg_wal_lsn_diff(NULLIF(:'wal_now', '')::pg_lsn, confirmed_flush_lsn)) AS unconfirmed,
	pg_wal_lsn_diff(NULLIF(:'wal_now', '')::pg_lsn, restart_lsn) AS retained_wal_bytes,
	pg_size_pretty(pg_wal_lsn_diff(NULLIF(:'wal_now', '')::pg_lsn, restart_lsn)) AS retained_wal,
	safe_wal_size AS safe_wal_bytes
FROM pg_replication_slots
WHERE slot_name = :'slot';

-- The walsender serving the slot (no row: outboxd is not connected). outboxd reports its
-- confirmed position as flush_lsn; write_lsn is what it has received.
SELECT r.pid, r.application_name, r.client_addr, r.state, r.backend_start, r.sent_lsn,
	r.write_lsn, r.flush_lsn, pg_wal_lsn_diff(r.sent_lsn, r.flush_lsn) AS unacked_bytes,
	r.write_lag, r.flush_lag, r.reply_time
FROM pg_stat_replication r
JOIN pg_replication_slots s ON s.active_pid = r.pid
WHERE s.slot_name = :'slot';

-- Decoding statistics since the last reset: transactions and bytes decoded, and how much had to
-- be spilled to disk because a transaction exceeded logical_decoding_work_mem.
SELECT slot_name, total_txns, pg_size_pretty(total_bytes) AS total, spill_txns, spill_count,
	pg_size_pretty(spill_bytes) AS spilled, stream_txns, stats_reset
FROM pg_stat_replication_slots
WHERE slot_name = :'slot';

-- WAL kept by every slot of the cluster: another forgotten slot fills the same disk.
SELECT slot_name, database, active, wal_status,
	pg_size_pretty(pg_wal_lsn_diff(NULLIF(:'wal_now', '')::pg_lsn, restart_lsn)) AS retained_wal
FROM pg_replication_slots
ORDER BY pg_wal_lsn_diff(NULLIF(:'wal_now', '')::pg_lsn, restart_lsn) DESC NULLS LAST;
