/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pgfailover - what makes a failover slot safe, checked from the primary (PostgreSQL 17+).
 *
 * A failover slot is copied to standbys that run with sync_replication_slots=on, so outboxd can
 * resume on a promoted standby. That is only safe when the primary holds back every change from
 * outboxd until the standbys that may be promoted have it (synchronized_standby_slots): without
 * it outboxd can publish an event for a transaction a promoted standby never received, an
 * event without a committed change.
 */
#ifndef OUTBOXD_PG_PGFAILOVER_H
#define OUTBOXD_PG_PGFAILOVER_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "outboxd/util/kv.h"

/* A line of `outboxd check`: @level 0 ok, 1 a warning, 2 a failure. */
typedef void (*pgfailover_diag)(void *arg, int level, const char *what, const char *detail);

/**
 * pgfailover_check() - for a failover slot, or when slot.failover=true asks for one (@want):
 * the slot is one (@is_failover, from pgsql_check_slot()), the server can have one, and the
 * primary's synchronized_standby_slots names existing physical slots whose standbys are
 * connected. An empty setting fails where the server has physical slots (a standby may take
 * over without the changes outboxd published) and warns where it has none (no standby can hold a
 * copy yet: a new primary after a failover). Nothing is reported for a plain slot nobody asked
 * to be a failover slot. `outboxd check` prints the lines; `run` refuses to stream after a
 * failure unless outboxd.failover.unsafe=true.
 * Return: true when nothing failed.
 */
bool pgfailover_check(PGconn *c, const char *slot, bool want, bool is_failover,
		      pgfailover_diag diag, void *arg);

/**
 * pgfailover_check_hosts() - for a failover slot, each host of a database.hostname list on its
 * own (libpq's multi-host form, outboxd's way to follow a failover): a standby among them must
 * run sync_replication_slots=on and hot_standby_feedback=on, stream through a physical slot
 * (primary_slot_name) that @standby_slots (the primary's synchronized_standby_slots) names,
 * and hold a synced, valid copy of @slot. A host that does not answer is a warning (it may be
 * the failed primary), named with libpq's reason; when no host answered as a standby and some
 * did not answer, a failure names them: nothing was shown safe. Nothing is reported for a single
 * host.
 * @params: the connection's libpq keywords (host and port lists).
 * Return: true when nothing failed.
 */
bool pgfailover_check_hosts(const struct kv *params, const char *slot, const char *standby_slots,
			    pgfailover_diag diag, void *arg);

/**
 * pgfailover_standby_slots() - the primary's synchronized_standby_slots (17+), "" when unset
 * or unreadable. Return: a string the caller frees.
 */
char *pgfailover_standby_slots(PGconn *c);

#endif
