-- outbox_poll.sql: the outbox table for the polling publisher (`outboxd poll`).
--
-- Who:  the application's schema owner, or a database administrator.
-- When: once, instead of outbox.sql, where logical replication is not available (no
--       REPLICATION privilege, wal_level not logical, no slot allowed); psql -d APPDB -f
--       sql/outbox_poll.sql. Harmless to run again.
-- Why:  the application inserts one row here in the same transaction as its business change;
--       outboxd poll publishes each row (the records `outboxd run` would publish) and then sets
--       published_at (or deletes the row, outboxd.poll.after=delete).
--
-- Beyond the columns of outbox.sql:
--   seq           the ordering column (outboxd.poll.order.column): the default id is a random
--                 UUID, which orders nothing. An identity column with CACHE 1 numbers rows in
--                 the order their INSERTs ran.
--   published_at  NULL until the broker acknowledged the row (outboxd.poll.published.column).
-- The partial index holds only the unpublished rows, in seq order: the poll's query reads it
-- from the oldest, and it stays small however large the table grows.
-- The statement-level trigger NOTIFYs outboxd_outbox (outboxd.poll.notify.channel) once per
-- INSERT statement, at commit, so outboxd wakes at once; outboxd.poll.interval.ms is the
-- fallback (a NOTIFY sent while outboxd is disconnected is lost).
\set ON_ERROR_STOP on

CREATE TABLE IF NOT EXISTS public.outbox (
	id            uuid         PRIMARY KEY,
	aggregatetype varchar(255) NOT NULL,   -- routes the record: topic outbox.event.<aggregatetype>
	aggregateid   varchar(255) NOT NULL,   -- the record's key; rows hashed by it into partitions
	type          varchar(255) NOT NULL,
	payload       jsonb,                   -- the record's value (NULL: a null value)
	created_at    timestamptz  NOT NULL DEFAULT now(),
	seq           bigint       GENERATED ALWAYS AS IDENTITY (CACHE 1),
	published_at  timestamptz  NULL
);

CREATE INDEX IF NOT EXISTS outbox_unpublished ON public.outbox (seq) WHERE published_at IS NULL;

CREATE OR REPLACE FUNCTION public.outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('outboxd_outbox', '');
	RETURN NULL;
END;
$$;

DROP TRIGGER IF EXISTS outbox_notify ON public.outbox;
CREATE TRIGGER outbox_notify AFTER INSERT ON public.outbox
	FOR EACH STATEMENT EXECUTE FUNCTION public.outbox_notify();

-- The archive for the cleanup (outboxd.poll.retention with outboxd.poll.archive.table=
-- public.outbox_archive): the outbox's columns, no identity, no trigger. Unused otherwise.
CREATE TABLE IF NOT EXISTS public.outbox_archive (LIKE public.outbox);

COMMENT ON TABLE public.outbox IS
	'Transactional outbox for outboxd poll: each row is published once, then published_at is set';
