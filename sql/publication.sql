-- publication.sql: the publication that tells pgoutput which changes to send.
--
-- Who:  the owner of public.outbox or a superuser (adding a table to a publication needs
--       ownership of the table; the outboxd role needs neither).
-- When: once, after outbox.sql and BEFORE slot.sql, in the application's database.
--       Harmless to run again: an existing publication is checked, never changed.
-- Why:  outboxd streams with pgoutput, which sends only the tables of the named publications.
--
-- It must exist BEFORE the replication slot is created. pgoutput looks publications up with the
-- catalog as it was at each decoded transaction (a historic snapshot), not as it is now. A
-- publication created after the slot's starting point is invisible to the transactions that
-- committed before the publication's own creation: PostgreSQL 15 to 17 fail with
-- 'publication "dbz_publication" does not exist' and PostgreSQL 18 skips those changes with a
-- WARNING (events lost). Creating the publication first avoids both.
--
-- The name dbz_publication is Debezium's default (publication.name), so a migrating user's
-- connector configuration works unchanged. A publication Debezium created itself
-- (publication.autocreate.mode=all_tables gives FOR ALL TABLES with every operation) also works:
-- outboxd ignores rows of other tables and, like Debezium's EventRouter, publishes nothing for
-- UPDATE, DELETE or TRUNCATE. publish = 'insert' keeps those changes off the wire altogether, so
-- the table needs no REPLICA IDENTITY and cleanup DELETEs cost the relay nothing.
\set ON_ERROR_STOP on

DO $$
DECLARE
	pub pg_publication%ROWTYPE;
BEGIN
	SELECT * INTO pub FROM pg_publication WHERE pubname = 'dbz_publication';
	IF NOT FOUND THEN
		CREATE PUBLICATION dbz_publication FOR TABLE public.outbox WITH (publish = 'insert');
		RAISE NOTICE 'created publication dbz_publication for table public.outbox (insert only)';
	ELSIF NOT pub.pubinsert OR NOT EXISTS (
		SELECT FROM pg_publication_tables
		WHERE pubname = 'dbz_publication' AND schemaname = 'public' AND tablename = 'outbox') THEN
		RAISE EXCEPTION 'publication dbz_publication exists but does not publish inserts into public.outbox'
			USING HINT = 'ALTER PUBLICATION dbz_publication ADD TABLE public.outbox, '
				'and/or ALTER PUBLICATION dbz_publication SET (publish = ''insert'') '
				'(check first that nothing else reads this publication)';
	ELSE
		RAISE NOTICE 'publication dbz_publication already exists and publishes inserts into public.outbox';
	END IF;
END
$$;
