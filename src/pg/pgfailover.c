/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pg/pgfailover.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgsql.h"
#include "outboxd/util/buf.h"

#define WHAT "failover"

/* One finding: the line, and whether it failed the check. */
static bool
say(pgfailover_diag diag, void *arg, int level, const char *detail)
{
	diag(arg, level, WHAT, detail);
	return level < 2;
}

/* The physical slots of this server, for the fix of an empty setting ("none" without any). */
static void
physical_slots(PGconn *c, struct buf *out)
{
	PGresult *r = PQexec(c, "SELECT coalesce(string_agg(slot_name, ', ' ORDER BY slot_name), "
				"'') FROM pg_replication_slots WHERE slot_type = 'physical'");

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQgetvalue(r, 0, 0)[0]) {
		buf_add_fmt(out, "physical slots here: %s", PQgetvalue(r, 0, 0));
	} else {
		buf_add_str(out, "this server has no physical slot yet: give each standby one "
				 "(primary_slot_name)");
	}
	PQclear(r);
}

/*
 * Each slot synchronized_standby_slots names: it must exist and be physical; a standby that is
 * not connected holds outboxd back (the walsender waits for it), which is a warning, not a risk.
 */
static bool
standby_slots(PGconn *c, const char *setting, pgfailover_diag diag, void *arg)
{
	const char *p[] = { setting };
	/* the setting is a list of slot names, each possibly double-quoted */
	PGresult *r =
		PQexecParams(c,
			     "SELECT btrim(n, ' \"'), coalesce(r.slot_type, ''), "
			     "coalesce(r.active, false) "
			     "FROM unnest(string_to_array($1, ',')) AS n "
			     "LEFT JOIN pg_replication_slots r ON r.slot_name = btrim(n, ' \"')",
			     1, NULL, p, NULL, NULL, 0);
	struct buf line = BUF_INIT;
	bool ok = true;
	int inactive = 0;

	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		buf_add_fmt(&line, "could not read the slots of synchronized_standby_slots: %s",
			    PQresultErrorMessage(r));
		ok = say(diag, arg, 2, buf_cstr(&line));
		PQclear(r);
		buf_fini(&line);
		return ok;
	}
	for (int i = 0; i < PQntuples(r); i++) {
		const char *name = PQgetvalue(r, i, 0), *type = PQgetvalue(r, i, 1);

		buf_reset(&line);
		if (!type[0]) {
			buf_add_fmt(
				&line,
				"synchronized_standby_slots names \"%s\", which does not exist: "
				"PostgreSQL holds every change back from outboxd until it does; "
				"create the standby's physical slot or correct the setting",
				name);
			ok = say(diag, arg, 2, buf_cstr(&line)) && ok;
		} else if (strcmp(type, "physical") != 0) {
			buf_add_fmt(
				&line,
				"synchronized_standby_slots names \"%s\", a %s slot: it must name "
				"the physical slots of the standbys that may be promoted",
				name, type);
			ok = say(diag, arg, 2, buf_cstr(&line)) && ok;
		} else if (strcmp(PQgetvalue(r, i, 2), "t") != 0) {
			buf_add_fmt(
				&line,
				"the standby of physical slot \"%s\" is not connected: PostgreSQL "
				"sends outboxd nothing new until it is back (or the slot leaves "
				"synchronized_standby_slots)",
				name);
			say(diag, arg, 1, buf_cstr(&line));
			inactive++;
		}
	}
	if (ok) {
		buf_reset(&line);
		buf_add_fmt(
			&line,
			"synchronized_standby_slots = '%s': outboxd receives a transaction only "
			"after %s standby%s it%s",
			setting, PQntuples(r) == 1 ? "the" : "those",
			PQntuples(r) == 1 ? " has" : "s have",
			inactive ? " (see the warning)" : "");
		say(diag, arg, 0, buf_cstr(&line));
	}
	PQclear(r);
	buf_fini(&line);
	return ok;
}

bool
pgfailover_check(PGconn *c, const char *slot, bool want, bool is_failover, pgfailover_diag diag,
		 void *arg)
{
	struct buf line = BUF_INIT;
	char err[512];
	PGresult *r;
	bool ok = true;

	if (!want && !is_failover) {
		return true;
	}
	if (pgsql_failover_unsupported(c, want, err, sizeof(err))) {
		return say(diag, arg, 2, err);
	}
	if (!is_failover) {
		buf_add_fmt(&line,
			    "slot.failover=true, but replication slot \"%s\" is not a failover "
			    "slot: make it one without losing its position, on a replication "
			    "connection: ALTER_REPLICATION_SLOT %s (FAILOVER true)",
			    slot, slot);
		ok = say(diag, arg, 2, buf_cstr(&line));
		buf_fini(&line);
		return ok;
	}
	r = PQexec(c, "SELECT pg_is_in_recovery(), "
		      "coalesce(current_setting('synchronized_standby_slots', true), '')");
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		buf_add_fmt(&line, "could not read synchronized_standby_slots: %s",
			    PQresultErrorMessage(r));
		ok = say(diag, arg, 2, buf_cstr(&line));
	} else if (strcmp(PQgetvalue(r, 0, 0), "t") == 0) {
		/* a standby's copy of the slot serves only after promotion */
		buf_add_fmt(&line,
			    "this server is a standby: its synchronised copy of \"%s\" can be "
			    "streamed only once it is promoted; point outboxd at the primary",
			    slot);
		ok = say(diag, arg, 2, buf_cstr(&line));
	} else if (!PQgetvalue(r, 0, 1)[0]) {
		buf_add_str(
			&line,
			"synchronized_standby_slots is empty: the primary may send outboxd a "
			"transaction before a standby has it, and after a failover to that standby "
			"the event would have no committed change; set it to the physical slots of "
			"the standbys that may be promoted (");
		physical_slots(c, &line);
		buf_add_str(&line, ")");
		ok = say(diag, arg, 2, buf_cstr(&line));
	} else {
		ok = standby_slots(c, PQgetvalue(r, 0, 1), diag, arg);
	}
	PQclear(r);
	buf_fini(&line);
	return ok;
}
