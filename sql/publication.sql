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
--
-- Names are psql variables (defaults in parentheses): publication (dbz_publication), schema
-- (public), table (outbox):
--   psql -d APPDB -v publication=orders_pub -v schema=orders -v table=outbox_events \
--        -f sql/publication.sql
\set ON_ERROR_STOP on
\if :{?publication}
\else
\set publication dbz_publication
\endif
\if :{?schema}
\else
\set schema public
\endif
\if :{?table}
\else
\set table outbox
\endif

-- psql does not substitute variables inside DO blocks: they reach it as settings.
SELECT set_config('outboxd.publication', :'publication', false),
	set_config('outboxd.schema', :'schema', false), set_config('outboxd.table', :'table', false)
\gset ignored_

DO $$
DECLARE
	v_pub text := current_setting('outboxd.publication');
	v_tbl text := format('%I.%I', current_setting('outboxd.schema'), current_setting('outboxd.table'));
	pub pg_publication%ROWTYPE;
BEGIN
	SELECT * INTO pub FROM pg_publication p WHERE p.pubname = v_pub;
	IF NOT FOUND THEN
		EXECUTE format('CREATE PUBLICATION %I FOR TABLE %s WITH (publish = ''insert'')', v_pub, v_tbl);
		RAISE NOTICE 'created publication % for table % (insert only)', v_pub, v_tbl;
	ELSIF NOT pub.pubinsert OR NOT EXISTS (
		SELECT FROM pg_publication_tables t
		WHERE t.pubname = pub.pubname AND t.schemaname = current_setting('outboxd.schema')
			AND t.tablename = current_setting('outboxd.table')) THEN
		RAISE EXCEPTION 'publication % exists but does not publish inserts into %', v_pub, v_tbl
			USING HINT = format('ALTER PUBLICATION %I ADD TABLE %s, and/or ALTER PUBLICATION %I '
				'SET (publish = ''insert'') (check first that nothing else reads this '
				'publication)', v_pub, v_tbl, v_pub);
	ELSE
		RAISE NOTICE 'publication % already exists and publishes inserts into %', v_pub, v_tbl;
	END IF;
END
$$;
