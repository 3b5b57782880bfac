/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pg/pgfailover.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgconn.h"
#include "outboxd/pg/pgsql.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/mem.h"

#define WHAT "failover"

/* One finding: the line, and whether it failed the check. */
static bool
say(pgfailover_diag diag, void *arg, int level, const char *detail)
{
	diag(arg, level, WHAT, detail);
	return level < 2;
}

/*
 * The physical slots of this server, for the fix of an empty setting. Return: whether it has
 * any (a query that fails counts as some: the finding stays a failure).
 */
static bool
physical_slots(PGconn *c, struct buf *out)
{
	PGresult *r = PQexec(c, "SELECT coalesce(string_agg(slot_name, ', ' ORDER BY slot_name), "
				"'') FROM pg_replication_slots WHERE slot_type = 'physical'");
	bool some = PQresultStatus(r) != PGRES_TUPLES_OK || PQgetvalue(r, 0, 0)[0];

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQgetvalue(r, 0, 0)[0]) {
		buf_add_fmt(out, "physical slots here: %s", PQgetvalue(r, 0, 0));
	} else {
		buf_add_str(out, "this server has no physical slot yet: give each standby one "
				 "(primary_slot_name)");
	}
	PQclear(r);
	return some;
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
		struct buf slots = BUF_INIT;

		if (physical_slots(c, &slots)) {
			buf_add_fmt(&line,
				    "synchronized_standby_slots is empty: the primary may send "
				    "outboxd a transaction before a standby has it, and after a "
				    "failover to that standby the event would have no committed "
				    "change; set it to the physical slots of the standbys that may "
				    "be promoted (%s)",
				    buf_cstr(&slots));
			ok = say(diag, arg, 2, buf_cstr(&line));
		} else {
			/* no standby can hold a synchronised copy: nothing to fail over to yet */
			buf_add_str(&line,
				    "synchronized_standby_slots is empty and this server has no "
				    "physical slot, so no standby can take over with a copy of the "
				    "slot yet (a new primary after a failover is such a server); "
				    "when you add a standby (primary_slot_name), name its slot in "
				    "synchronized_standby_slots");
			say(diag, arg, 1, buf_cstr(&line));
		}
		buf_fini(&slots);
	} else {
		ok = standby_slots(c, PQgetvalue(r, 0, 1), diag, arg);
	}
	PQclear(r);
	buf_fini(&line);
	return ok;
}

char *
pgfailover_standby_slots(PGconn *c)
{
	PGresult *r = PQexec(c, "SELECT coalesce(current_setting('synchronized_standby_slots', "
				"true), '')");
	char *v = xstrdup(PQresultStatus(r) == PGRES_TUPLES_OK ? PQgetvalue(r, 0, 0) : "");

	PQclear(r);
	return v;
}

/* Whether the comma-separated list @list names @name (entries may be double-quoted). */
static bool
names(const char *list, const char *name)
{
	char *copy = xstrdup(list), *save = NULL;
	bool found = false;

	for (char *p = strtok_r(copy, ",", &save); p && !found; p = strtok_r(NULL, ",", &save)) {
		size_t n;

		while (*p == ' ' || *p == '"') {
			p++;
		}
		n = strlen(p);
		while (n && (p[n - 1] == ' ' || p[n - 1] == '"')) {
			p[--n] = '\0';
		}
		found = strcmp(p, name) == 0;
	}
	free(copy);
	return found;
}

/* The standby-side needs of one host in recovery, @at naming it ("host:port"). */
static bool
standby_side(PGconn *c, const char *at, const char *slot, const char *standby_slots,
	     pgfailover_diag diag, void *arg)
{
	const char *p[] = { slot };
	PGresult *r = PQexecParams(
		c,
		"SELECT coalesce(current_setting('sync_replication_slots', true), 'off'), "
		"current_setting('hot_standby_feedback'), current_setting('primary_slot_name'), "
		"(SELECT coalesce(j->>'synced', 'false') || ' ' || "
		"coalesce(j->>'invalidation_reason', '') FROM pg_replication_slots s, "
		"LATERAL (SELECT to_jsonb(s) AS j) x WHERE slot_name = $1)",
		1, NULL, p, NULL, NULL, 0);
	struct buf line = BUF_INIT;
	bool ok = true;

	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		buf_add_fmt(&line, "standby %s: could not read its settings: %s", at,
			    PQresultErrorMessage(r));
		ok = say(diag, arg, 2, buf_cstr(&line));
	} else {
		const char *sync = PQgetvalue(r, 0, 0), *feedback = PQgetvalue(r, 0, 1),
			   *pslot = PQgetvalue(r, 0, 2), *state = PQgetvalue(r, 0, 3);

		if (strcmp(sync, "on") != 0) {
			buf_add_fmt(
				&line,
				"standby %s: sync_replication_slots is off, so it has no copy of "
				"the slot to resume from after a promotion; set it on",
				at);
		} else if (strcmp(feedback, "on") != 0) {
			buf_add_fmt(&line,
				    "standby %s: hot_standby_feedback is off; slot synchronisation "
				    "needs it on (else the primary may remove rows the copy needs)",
				    at);
		} else if (!pslot[0]) {
			buf_add_fmt(&line,
				    "standby %s: primary_slot_name is empty; slot synchronisation "
				    "needs a physical slot on the primary, named in "
				    "synchronized_standby_slots",
				    at);
		} else if (!names(standby_slots, pslot)) {
			buf_add_fmt(
				&line,
				"standby %s streams through physical slot \"%s\", which the "
				"primary's synchronized_standby_slots does not name: outboxd may "
				"publish a transaction this standby lacks",
				at, pslot);
		} else if (PQgetisnull(r, 0, 3) || strncmp(state, "true ", 5) != 0) {
			buf_add_fmt(&line,
				    "standby %s: no synchronised copy of slot \"%s\" yet (check "
				    "its log; primary_conninfo needs a dbname)",
				    at, slot);
		} else if (state[5]) {
			buf_add_fmt(&line,
				    "standby %s: its copy of slot \"%s\" is invalidated (%s)", at,
				    slot, state + 5);
		} else {
			buf_add_fmt(
				&line,
				"standby %s: sync_replication_slots and hot_standby_feedback on, "
				"streams through \"%s\", holds a synced copy of \"%s\"",
				at, pslot, slot);
			say(diag, arg, 0, buf_cstr(&line));
			PQclear(r);
			buf_fini(&line);
			return true;
		}
		ok = say(diag, arg, 2, buf_cstr(&line));
	}
	PQclear(r);
	buf_fini(&line);
	return ok;
}

/* The @i-th entry of the comma-separated @list, or the last one (libpq's rule for ports). */
static char *
nth(const char *list, int i)
{
	const char *s = list, *e;

	for (int k = 0; k < i && strchr(s, ','); k++) {
		s = strchr(s, ',') + 1;
	}
	e = strchr(s, ',');
	return e ? xstrndup(s, (size_t)(e - s)) : xstrdup(s);
}

bool
pgfailover_check_hosts(const struct kv *params, const char *slot, const char *standby_slots,
		       pgfailover_diag diag, void *arg)
{
	const char *hosts = kv_get(params, "host"), *ports = kv_get(params, "port");
	struct buf silent = BUF_INIT; /* the hosts that did not answer */
	int n = 1, standbys = 0;
	bool ok = true;

	if (!hosts || !strchr(hosts, ',')) {
		return true;
	}
	for (const char *h = hosts; (h = strchr(h, ',')); h++) {
		n++;
	}
	for (int i = 0; i < n; i++) {
		struct kv one = KV_INIT;
		char *host = nth(hosts, i), *port = ports ? nth(ports, i) : NULL, err[512], at[300];
		enum pgconn_failure f;
		PGconn *c = NULL;

		for (size_t k = 0; k < params->n; k++) {
			kv_set(&one, params->v[k].key, params->v[k].value, params->v[k].origin);
		}
		kv_set(&one, "host", host, "database.hostname");
		if (port) {
			kv_set(&one, "port", port, "database.port");
		}
		kv_del(&one, "target_session_attrs");
		snprintf(at, sizeof(at), "%s:%s", host, port ? port : "5432");
		if (pgconn_open(&one, false, &c, &f, err, sizeof(err)) < 0) {
			char line[900];

			snprintf(line, sizeof(line), "host %s does not answer (%s)", at, err);
			say(diag, arg, 1, line);
			buf_add_fmt(&silent, "%s%s", silent.len ? ", " : "", at);
		} else {
			PGresult *r = PQexec(c, "SELECT pg_is_in_recovery()");

			if (PQresultStatus(r) == PGRES_TUPLES_OK &&
			    strcmp(PQgetvalue(r, 0, 0), "t") == 0) {
				ok = standby_side(c, at, slot, standby_slots, diag, arg) && ok;
				standbys++;
			}
			PQclear(r);
		}
		PQfinish(c);
		kv_fini(&one);
		free(host);
		free(port);
	}
	if (standbys == 0 && silent.len) {
		/* the standbys that did not answer are unchecked, not safe */
		char line[1200];

		snprintf(
			line, sizeof(line),
			"no standby among database.hostname could be checked: %.900s did not "
			"answer, so nothing shows that a promoted standby would hold a synchronised "
			"copy of \"%s\"; run the check again when it answers",
			buf_cstr(&silent), slot);
		ok = say(diag, arg, 2, line);
	}
	buf_fini(&silent);
	return ok;
}
