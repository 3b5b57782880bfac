-- role.sql: the least-privilege role outboxd logs in as.
--
-- Who:  a database administrator (creating a role with REPLICATION needs a superuser, or on
--       PostgreSQL 16+ a role with CREATEROLE and REPLICATION).
-- When: once, after outbox.sql, in the application's database; again to change the password.
--       Harmless to run again: an existing role gets the attributes and password below.
-- Why:  outboxd needs LOGIN + REPLICATION to stream from the slot, and a few grants for
--       `outboxd check` and the initial snapshot. It needs no superuser, no ownership and no
--       CREATE privilege: the publication (publication.sql) and the slot (slot.sql) are created
--       by operations staff, not by outboxd.
--
--   psql -d APPDB -v outboxd_password="$(cat /run/secrets/outboxd-pg-password)" -f sql/role.sql
--
-- The password reaches the server inside the statement text: connect over TLS, and make sure
-- log_statement is none (ddl, mod and all would write the password to the server log). Or set
-- it afterwards with psql's \password outboxd, which sends only a SCRAM verifier.
--
-- What REPLICATION allows beyond outboxd's needs: creating and dropping any replication slot,
-- and, given a pg_hba.conf line with the `replication` keyword, streaming physical WAL (a copy of
-- the whole cluster). So give this role no such line. A logical replication connection
-- (replication=database) is matched by the ordinary database column, NOT by the `replication`
-- keyword, which matches physical replication only. The one line outboxd needs, e.g.:
--
--   # TYPE   DATABASE  USER     ADDRESS        METHOD
--   hostssl  appdb     outboxd  10.0.0.5/32    scram-sha-256
--
-- (appdb = the database name; Debezium's docs show `host replication <user> ...` lines, which do
-- not match logical connections and would allow physical ones.)
--
-- Row-level security: policies of public.outbox run as this role during decoding (it has no
-- BYPASSRLS). If table owners are not fully trusted, add options='-c row_security=off' to the
-- connection so replication stops with an error instead of running a policy.
--
-- Names are psql variables (defaults in parentheses): role (outboxd), schema (public), table
-- (outbox); -v cleanup=on also grants DELETE, which outboxd.cleanup.retention needs:
--   psql -d APPDB -v role=orders_relay -v schema=orders -v table=outbox_events -v cleanup=on \
--        -v outboxd_password=... -f sql/role.sql
-- On a managed service (Amazon RDS / Aurora, Google Cloud SQL, Azure) use role_managed.sql:
-- there no role may be given REPLICATION directly.
\set ON_ERROR_STOP on

\if :{?outboxd_password}
\else
DO $$ BEGIN RAISE EXCEPTION 'role.sql needs the password: psql -v outboxd_password=... -f sql/role.sql'; END $$;
\endif
\if :{?role}
\else
\set role outboxd
\endif
\if :{?schema}
\else
\set schema public
\endif
\if :{?table}
\else
\set table outbox
\endif

-- psql does not substitute variables inside DO blocks, hence \gexec for the conditional CREATE.
SELECT format('CREATE ROLE %I', :'role')
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'role') \gexec

ALTER ROLE :"role" WITH LOGIN REPLICATION NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS
	PASSWORD :'outboxd_password';

-- `outboxd check` and the ordinary SQL connection (slot/publication checks, heartbeat): connect.
GRANT CONNECT ON DATABASE :"DBNAME" TO :"role";
-- The initial snapshot (snapshot.mode=initial with outboxd.slot.create=true) reads the table;
-- streaming itself needs no privilege on it.
GRANT USAGE ON SCHEMA :"schema" TO :"role";
GRANT SELECT ON :"schema".:"table" TO :"role";
-- outboxd.cleanup.retention deletes the delivered rows.
\if :{?cleanup}
GRANT DELETE ON :"schema".:"table" TO :"role";
\endif
-- Nothing else: pg_replication_slots, pg_publication and pg_stat_replication_slots are readable
-- by every role. A heartbeat.action.query that writes needs its own grant on its table.
