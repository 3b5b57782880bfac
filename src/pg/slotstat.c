/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pg/slotstat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/errbuf.h"
#include "outboxd/util/prom.h"

/* The names of the columns, for the error that names one. */
static const char *const col_names[SLOTSTAT_NCOLS] = {
	[SLOTSTAT_RETAINED] = "retained WAL",
	[SLOTSTAT_UNCONFIRMED] = "unconfirmed WAL",
	[SLOTSTAT_WAL_STATUS] = "wal_status",
	[SLOTSTAT_SAFE_WAL] = "safe_wal_size",
	[SLOTSTAT_ACTIVE] = "active",
	[SLOTSTAT_ACTIVE_PID] = "active_pid",
	[SLOTSTAT_INVALIDATION] = "invalidation_reason",
	[SLOTSTAT_INACTIVE_MS] = "inactive_since",
	[SLOTSTAT_FAILOVER] = "failover",
	[SLOTSTAT_SYNCED] = "synced",
};

/* wal_status's values (PostgreSQL 13+), each rendered as a 0/1 series. */
static const char *const wal_statuses[] = { "reserved", "extended", "unreserved", "lost" };

const char *
slotstat_query(void)
{
	/*
	 * pg_lsn - pg_lsn is numeric; a bigint prints without a fraction. to_jsonb(s) carries
	 * the columns a server has and no others, so PostgreSQL 14-16 answer NULL for 17's.
	 */
	return "SELECT (w.lsn - s.restart_lsn)::bigint, (w.lsn - s.confirmed_flush_lsn)::bigint, "
	       "s.wal_status, s.safe_wal_size, s.active, s.active_pid, "
	       "j.j->>'invalidation_reason', "
	       "(extract(epoch FROM (j.j->>'inactive_since')::timestamptz) * 1000)::bigint, "
	       "j.j->>'failover', j.j->>'synced' "
	       "FROM pg_replication_slots s "
	       "CROSS JOIN LATERAL to_jsonb(s) AS j(j) "
	       "CROSS JOIN (SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn() "
	       "ELSE pg_current_wal_lsn() END AS lsn) w "
	       "WHERE s.slot_name = $1";
}

static int
bad(enum slotstat_col c, const char *v, char *errbuf, size_t errlen)
{
	errbuf_set(errbuf, errlen,
		   "pg_replication_slots: %s is \"%.64s\", not what PostgreSQL sends", col_names[c],
		   v);
	return -EINVAL;
}

/* A bigint column; false when NULL. */
static int
int_col(const char *const cols[], enum slotstat_col c, bool *known, int64_t *v, char *errbuf,
	size_t errlen)
{
	char *end;

	*known = cols[c] != NULL;
	*v = 0;
	if (!cols[c]) {
		return 0;
	}
	errno = 0;
	*v = strtoll(cols[c], &end, 10);
	if (errno || end == cols[c] || *end) {
		return bad(c, cols[c], errbuf, errlen);
	}
	return 0;
}

/* A boolean as the server prints one ("t"/"f") or as jsonb does ("true"/"false"). */
static int
flag_col(const char *const cols[], enum slotstat_col c, enum slotstat_flag *f, char *errbuf,
	 size_t errlen)
{
	const char *v = cols[c];

	if (!v) {
		*f = SLOTSTAT_UNKNOWN;
	} else if (strcmp(v, "t") == 0 || strcmp(v, "true") == 0) {
		*f = SLOTSTAT_YES;
	} else if (strcmp(v, "f") == 0 || strcmp(v, "false") == 0) {
		*f = SLOTSTAT_NO;
	} else {
		return bad(c, v, errbuf, errlen);
	}
	return 0;
}

/* A short text column; "" when NULL. */
static int
text_col(const char *const cols[], enum slotstat_col c, char *out, size_t outlen, char *errbuf,
	 size_t errlen)
{
	const char *v = cols[c] ? cols[c] : "";

	if (strlen(v) >= outlen) {
		return bad(c, v, errbuf, errlen);
	}
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

int
slotstat_parse(const char *const cols[SLOTSTAT_NCOLS], struct slotstat *st, char *errbuf,
	       size_t errlen)
{
	enum slotstat_flag active;
	bool pid_known;

	*st = (struct slotstat){ .exists = true };
	if (int_col(cols, SLOTSTAT_RETAINED, &st->retained_known, &st->retained_bytes, errbuf,
		    errlen) < 0 ||
	    int_col(cols, SLOTSTAT_UNCONFIRMED, &st->unconfirmed_known, &st->unconfirmed_bytes,
		    errbuf, errlen) < 0 ||
	    text_col(cols, SLOTSTAT_WAL_STATUS, st->wal_status, sizeof(st->wal_status), errbuf,
		     errlen) < 0 ||
	    int_col(cols, SLOTSTAT_SAFE_WAL, &st->safe_known, &st->safe_wal_bytes, errbuf, errlen) <
		    0 ||
	    flag_col(cols, SLOTSTAT_ACTIVE, &active, errbuf, errlen) < 0 ||
	    int_col(cols, SLOTSTAT_ACTIVE_PID, &pid_known, &st->active_pid, errbuf, errlen) < 0 ||
	    text_col(cols, SLOTSTAT_INVALIDATION, st->invalidation, sizeof(st->invalidation),
		     errbuf, errlen) < 0 ||
	    int_col(cols, SLOTSTAT_INACTIVE_MS, &st->inactive_known, &st->inactive_since_ms, errbuf,
		    errlen) < 0 ||
	    flag_col(cols, SLOTSTAT_FAILOVER, &st->failover, errbuf, errlen) < 0 ||
	    flag_col(cols, SLOTSTAT_SYNCED, &st->synced, errbuf, errlen) < 0) {
		return -EINVAL;
	}
	if (active == SLOTSTAT_UNKNOWN) {
		return bad(SLOTSTAT_ACTIVE, "NULL", errbuf, errlen);
	}
	st->active = active == SLOTSTAT_YES;
	return 0;
}

static void
gauge(struct buf *out, const char *name, const char *help, int64_t v)
{
	prom_int(out, name, "gauge", help, v);
}

/* A label value from the server: only [a-z_] (PostgreSQL's reasons are such words). */
static void
word(struct buf *out, const char *s)
{
	for (; *s; s++) {
		buf_add_char(out, (*s >= 'a' && *s <= 'z') || *s == '_' ? *s : '_');
	}
}

static void
render_17(const struct slotstat *st, struct buf *out)
{
	if (st->invalidation[0]) {
		prom_family(
			out, "outboxd_slot_invalidation_reason", "gauge",
			"1 with the reason PostgreSQL (17+) invalidated the slot; absent while valid.");
		buf_add_str(out, "outboxd_slot_invalidation_reason{reason=\"");
		word(out, st->invalidation);
		buf_add_str(out, "\"} 1\n");
	}
	if (st->inactive_known) {
		prom_family(out, "outboxd_slot_inactive_since_timestamp_seconds", "gauge",
			    "When the slot became inactive (Unix seconds; PostgreSQL 17+); absent "
			    "while active.");
		prom_seconds_ms(out, "outboxd_slot_inactive_since_timestamp_seconds",
				st->inactive_since_ms * 1000);
	}
	if (st->failover != SLOTSTAT_UNKNOWN) {
		gauge(out, "outboxd_slot_failover",
		      "1 when the slot is synchronised to standbys (PostgreSQL 17+).",
		      st->failover == SLOTSTAT_YES);
	}
	if (st->synced != SLOTSTAT_UNKNOWN) {
		gauge(out, "outboxd_slot_synced",
		      "1 on a standby whose slot is a synchronised copy (PostgreSQL 17+).",
		      st->synced == SLOTSTAT_YES);
	}
}

void
slotstat_render(const struct slotstat *st, int64_t age_us, struct buf *out)
{
	age_us = age_us > 0 ? age_us : 0;
	prom_family(out, "outboxd_slot_stats_age_seconds", "gauge",
		    "Seconds since pg_replication_slots was last read (outboxd.slot.poll.ms).");
	prom_seconds_ms(out, "outboxd_slot_stats_age_seconds", age_us);
	gauge(out, "outboxd_slot_exists", "1 when the replication slot exists.", st->exists);
	if (!st->exists) {
		return;
	}
	if (st->retained_known) {
		gauge(out, "outboxd_slot_retained_wal_bytes",
		      "WAL the slot keeps from removal: the current WAL position minus restart_lsn.",
		      st->retained_bytes);
	}
	if (st->unconfirmed_known) {
		gauge(out, "outboxd_slot_unconfirmed_wal_bytes",
		      "WAL written since the slot's confirmed_flush_lsn.", st->unconfirmed_bytes);
	}
	prom_family(out, "outboxd_slot_wal_status", "gauge",
		    "1 for the slot's wal_status; all 0 when PostgreSQL reports none.");
	for (size_t i = 0; i < sizeof(wal_statuses) / sizeof(wal_statuses[0]); i++) {
		buf_add_fmt(out, "outboxd_slot_wal_status{status=\"%s\"} %d\n", wal_statuses[i],
			    strcmp(st->wal_status, wal_statuses[i]) == 0);
	}
	if (st->safe_known) {
		gauge(out, "outboxd_slot_safe_wal_size_bytes",
		      "WAL that can still be written before the slot is lost "
		      "(max_slot_wal_keep_size); absent when unlimited.",
		      st->safe_wal_bytes);
	}
	gauge(out, "outboxd_slot_active", "1 while a client streams from the slot.", st->active);
	gauge(out, "outboxd_slot_active_pid",
	      "The process id of the walsender streaming from the slot; 0 when none.",
	      st->active_pid);
	render_17(st, out);
}
