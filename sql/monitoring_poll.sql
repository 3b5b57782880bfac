-- monitoring_poll.sql: how far behind `outboxd poll` is, per partition, and who owns what.
--
-- Who:  operations staff and monitoring agents (a role that may SELECT the outbox).
-- When: whenever; for alerts, every minute or so. Read-only.
--       psql -d APPDB -f sql/monitoring_poll.sql
--       psql -d APPDB -v table=public.outbox -v partitions=16 -f sql/monitoring_poll.sql
--       (table: as outboxd names it, schema.table; partitions: outboxd.poll.partitions)
-- Why:  the pattern's two numbers are the age and the count of the oldest unpublished events.
--       Alert when the oldest unpublished row is older than a few poll intervals, or when the
--       count grows while no session holds a partition's lock (no poller runs). outboxd's own
--       /metrics reports the table-wide count and age (outboxd_poll_unpublished_rows,
--       outboxd_poll_oldest_unpublished_age_seconds); this query splits them by partition.
-- The outbox columns are those of sql/outbox_poll.sql (aggregateid, created_at, published_at);
-- edit them here if outboxd.poll.* or table.field.event.key name others.
\set ON_ERROR_STOP on
\if :{?table}
\else
\set table public.outbox
\endif
\if :{?partitions}
\else
\set partitions 16
\endif

-- Table-wide: what waits, and how old the oldest is.
SELECT count(*) AS unpublished,
	COALESCE(clock_timestamp() - min(created_at), interval '0') AS oldest_unpublished_age
FROM ONLY :table
WHERE published_at IS NULL;

-- Per partition (ordered mode): the same numbers, and the session that owns the partition
-- through its advisory lock (pg_try_advisory_lock(hashtext('outboxd.poll <table>'),
-- partitions << 16 | p)). A partition with rows and no owner is served by nobody until a
-- poller takes it.
WITH parts AS (
	SELECT p FROM generate_series(0, :partitions - 1) AS p
), waiting AS (
	SELECT (COALESCE(hashtext(aggregateid::text), 0) & 2147483647) % :partitions AS p,  -- NULL key: 0
		count(*) AS unpublished, min(created_at) AS oldest
	FROM ONLY :table
	WHERE published_at IS NULL
	GROUP BY 1
), owners AS (
	SELECT (l.objid::bigint & 65535)::int AS p, l.pid, a.client_addr, a.application_name
	FROM pg_locks l
	LEFT JOIN pg_stat_activity a ON a.pid = l.pid
	WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND l.classid::bigint = (hashtext('outboxd.poll ' || :'table')::bigint & 4294967295)
		AND l.objid::bigint >> 16 = :partitions
)
SELECT parts.p AS partition, COALESCE(w.unpublished, 0) AS unpublished,
	COALESCE(clock_timestamp() - w.oldest, interval '0') AS oldest_unpublished_age,
	o.pid AS owner_pid, o.client_addr AS owner_addr, o.application_name AS owner_application
FROM parts
LEFT JOIN waiting w USING (p)
LEFT JOIN owners o USING (p)
ORDER BY parts.p;

-- Sessions that hold partitions of the table with another outboxd.poll.partitions (0: an
-- outboxd whose lock keys had no count): a rolling update that changes the setting is under
-- way, and pollers with :partitions take no partition of the table until these sessions end.
-- No row: none.
SELECT l.objid::bigint >> 16 AS their_partitions_setting, count(*) AS partitions_held, l.pid,
	a.client_addr, a.application_name
FROM pg_locks l
LEFT JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
	AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND l.classid::bigint = (hashtext('outboxd.poll ' || :'table')::bigint & 4294967295)
	AND l.objid::bigint >> 16 <> :partitions AND l.objid::bigint >> 16 <= 1024
	AND (l.objid::bigint & 65535) < 1024
GROUP BY 1, 3, 4, 5
ORDER BY 1, 3;
