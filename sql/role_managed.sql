-- role_managed.sql: the role outboxd logs in as, on a managed PostgreSQL service.
--
-- Who:  the service's administrative user (rds_superuser on Amazon RDS and Aurora, cloudsqlsuperuser
--       on Google Cloud SQL, azure_pg_admin on Azure Database for PostgreSQL).
-- When: once, instead of role.sql, after outbox.sql, in the application's database.
--       Harmless to run again.
-- Why:  managed services have no superuser and do not let a role be given REPLICATION directly:
--       replication is granted through a role the service provides, or an attribute only its
--       administrative user may set:
--         Amazon RDS / Aurora   GRANT rds_replication TO outboxd   (rds.logical_replication = 1
--                               in the parameter group, then a reboot)
--         Google Cloud SQL      ALTER ROLE outboxd WITH REPLICATION, run by a cloudsqlsuperuser
--                               (cloudsql.logical_decoding = on)
--         Azure Flexible Server ALTER ROLE outboxd WITH REPLICATION, run by azure_pg_admin
--                               (wal_level = logical)
--       Choose with -v service=rds|cloudsql|azure (default rds). Everything else is as in
--       role.sql.
--
--   psql -d APPDB -v service=rds -v outboxd_password=... -f sql/role_managed.sql
--
-- Names are psql variables (defaults in parentheses): role (outboxd), schema (public), table
-- (outbox); -v cleanup=on also grants DELETE (outboxd.cleanup.retention).
\set ON_ERROR_STOP on

\if :{?outboxd_password}
\else
DO $$ BEGIN RAISE EXCEPTION 'role_managed.sql needs the password: psql -v outboxd_password=... -f sql/role_managed.sql'; END $$;
\endif
\if :{?service}
\else
\set service rds
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

SELECT :'service' = 'rds' AS is_rds, :'service' IN ('cloudsql', 'azure') AS is_attr,
	:'service' IN ('rds', 'cloudsql', 'azure') AS is_known
\gset
\if :is_known
\else
DO $$ BEGIN RAISE EXCEPTION 'role_managed.sql: service must be rds, cloudsql or azure'; END $$;
\endif

SELECT format('CREATE ROLE %I', :'role')
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'role') \gexec

ALTER ROLE :"role" WITH LOGIN NOCREATEDB NOCREATEROLE PASSWORD :'outboxd_password';

\if :is_rds
-- rds_replication exists on every RDS and Aurora PostgreSQL instance.
GRANT rds_replication TO :"role";
\else
ALTER ROLE :"role" WITH REPLICATION;
\endif

GRANT CONNECT ON DATABASE :"DBNAME" TO :"role";
GRANT USAGE ON SCHEMA :"schema" TO :"role";
GRANT SELECT ON :"schema".:"table" TO :"role";
\if :{?cleanup}
GRANT DELETE ON :"schema".:"table" TO :"role";
\endif
