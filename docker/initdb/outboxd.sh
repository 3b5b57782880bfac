#!/bin/sh
# Run by the postgres image on the first start of an empty data directory
# (/docker-entrypoint-initdb.d), against its temporary local server. It applies ../sql in the
# order that matters: the table, the publication BEFORE the slot, the role, the slot.
set -eu

password=$(sed -n 's/^password[[:space:]]*[=:][[:space:]]*//p' /run/secrets/outboxd-pg)
for f in outbox publication role slot; do
	echo "outboxd: applying /sql/$f.sql"
	psql -v ON_ERROR_STOP=1 --no-psqlrc --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
		-v outboxd_password="$password" -f "/sql/$f.sql"
done
