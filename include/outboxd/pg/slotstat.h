/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PG_SLOTSTAT_H
#define OUTBOXD_PG_SLOTSTAT_H

/*
 * The replication slot's health as PostgreSQL reports it in pg_replication_slots: the query
 * (slotstat_query), its row parsed (slotstat_parse) and rendered as the outboxd_slot_* metrics
 * (slotstat_render). Pure: the relay's statement queue runs the query (slotwatch).
 *
 * The retained WAL is measured from the server's current WAL position, or on a standby from
 * the last position it received (pg_current_wal_lsn() fails there). The columns PostgreSQL 17
 * added (invalidation_reason, inactive_since, failover, synced) are read through to_jsonb, so
 * one text serves every version; they are absent from the metrics where the server lacks them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/util/buf.h"

/* The query's columns, in order. */
enum slotstat_col {
	SLOTSTAT_RETAINED,     /* WAL bytes from restart_lsn to the current position */
	SLOTSTAT_UNCONFIRMED,  /* WAL bytes from confirmed_flush_lsn to the current position */
	SLOTSTAT_WAL_STATUS,   /* reserved, extended, unreserved, lost */
	SLOTSTAT_SAFE_WAL,     /* safe_wal_size; NULL without max_slot_wal_keep_size */
	SLOTSTAT_ACTIVE,       /* t or f */
	SLOTSTAT_ACTIVE_PID,   /* NULL when inactive */
	SLOTSTAT_INVALIDATION, /* 17+: NULL while valid */
	SLOTSTAT_INACTIVE_MS,  /* 17+: inactive_since as Unix milliseconds; NULL while active */
	SLOTSTAT_FAILOVER,     /* 17+: true or false */
	SLOTSTAT_SYNCED,       /* 17+: true or false (a standby's synchronised copy) */
	SLOTSTAT_NCOLS,
};

/* A tri-state for what older servers do not report. */
enum slotstat_flag { SLOTSTAT_UNKNOWN = -1, SLOTSTAT_NO = 0, SLOTSTAT_YES = 1 };

struct slotstat {
	bool exists;	     /* the slot's row was found; nothing below is set otherwise */
	bool retained_known; /* NULL when restart_lsn is (an invalidated slot) */
	int64_t retained_bytes;
	bool unconfirmed_known;
	int64_t unconfirmed_bytes;
	char wal_status[16]; /* "" when NULL */
	bool safe_known;
	int64_t safe_wal_bytes; /* may be negative: past the limit */
	bool active;
	int64_t active_pid;    /* 0 when none */
	char invalidation[32]; /* "" when valid or not reported */
	bool inactive_known;
	int64_t inactive_since_ms;
	enum slotstat_flag failover, synced;
};

/* slotstat_query() - the text; its one parameter ($1) is the slot's name. Static storage. */
const char *slotstat_query(void);

/**
 * slotstat_parse() - @st from one row of slotstat_query() (@cols[i] NULL for SQL NULL).
 * Return: 0, or -EINVAL naming the column that is not what PostgreSQL sends, in @errbuf.
 */
int slotstat_parse(const char *const cols[SLOTSTAT_NCOLS], struct slotstat *st, char *errbuf,
		   size_t errlen);

/**
 * slotstat_render() - append the outboxd_slot_* families of @st to @out, and
 * outboxd_slot_stats_age_seconds, @age_us since the row was read.
 */
void slotstat_render(const struct slotstat *st, int64_t age_us, struct buf *out);

#endif
