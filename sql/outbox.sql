-- outbox.sql: the outbox table.
--
-- Who:  the application's schema owner (the role that runs the application's migrations),
--       or a database administrator.
-- When: once, before publication.sql, role.sql and slot.sql; in the database the application
--       writes to (psql -d APPDB -f sql/outbox.sql). Harmless to run again.
-- Why:  the application inserts one row here in the same transaction as its business change;
--       outboxd turns each inserted row into one Kafka record (Debezium's outbox EventRouter).
--
-- The columns are Debezium's defaults (table.field.event.id, .key, .type, .payload and
-- route.by.field = aggregatetype), so a migrating Debezium user needs no configuration change.
-- A table that already exists is left exactly as it is.
--
-- Names are psql variables (defaults in parentheses): schema (public), table (outbox):
--   psql -d APPDB -v schema=orders -v table=outbox_events -f sql/outbox.sql
-- With -v cleanup=on it also creates the index on created_at that outboxd.cleanup.* and a
-- scheduled DELETE read (docs/operating.md, "Cleanup of delivered rows").
--
-- Only INSERTs are published (see publication.sql), so rows may be deleted at any time after
-- their transaction committed, for example in the same transaction (insert, then delete) or by a
-- periodic job (which cannot know what outboxd delivered: docs/operating.md says what it gives up):
--   DELETE FROM public.outbox WHERE created_at < now() - interval '1 day';
-- outboxd.cleanup.retention deletes only rows whose events are confirmed.
\set ON_ERROR_STOP on
\if :{?schema}
\else
\set schema public
\endif
\if :{?table}
\else
\set table outbox
\endif

CREATE TABLE IF NOT EXISTS :"schema".:"table" (
	id            uuid         PRIMARY KEY,
	aggregatetype varchar(255) NOT NULL,   -- routes the record: topic outbox.event.<aggregatetype>
	aggregateid   varchar(255) NOT NULL,   -- the record's key
	type          varchar(255) NOT NULL,   -- the record's "id"/"type" headers, as configured
	payload       jsonb,                   -- the record's value (NULL: a null value)
	created_at    timestamptz  NOT NULL DEFAULT now()
);

COMMENT ON TABLE :"schema".:"table" IS
	'Transactional outbox: each INSERT becomes one Kafka record (outboxd / Debezium EventRouter)';

\if :{?cleanup}
\set created_idx :table '_created_at_idx'
CREATE INDEX IF NOT EXISTS :"created_idx" ON :"schema".:"table" (created_at);
\endif
