/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_DIAG_DIAGNOSE_H
#define OUTBOXD_DIAG_DIAGNOSE_H

/*
 * Folder diag/: `outboxd check`: a line per finding. It may call: every folder above it but
 * snapshot/ and poll/ (it reads and changes nothing).
 */

/*
 * `outboxd check`: what `run` needs of PostgreSQL and of Kafka, each finding one line on stdout
 * ("ok", "warn" or "FAIL", what was checked, the finding). It reads and connects, and changes
 * nothing.
 */

#include <stdbool.h>

#include "outboxd/config/config.h"
#include "outboxd/connect/router.h"

/**
 * diagnose_line() - print one line: @level 0 ok, 1 warn (does not fail the check), 2 FAIL.
 * The shape of pgfailover_diag and poll_check_diag, so their lines print alike; @arg unused;
 * @what and @detail borrowed for the call.
 */
void diagnose_line(void *arg, int level, const char *what, const char *detail);

/**
 * diagnose_postgres() - (@cfg and @router borrowed) the connection and its TLS, the role's privileges, the status-update
 * interval against the server's wal_sender_timeout, the slot (and failover), the publication's
 * tables that @router selects, the cleanup's needs.
 * Return: true when nothing failed.
 */
bool diagnose_postgres(const struct config *cfg, struct router *router);

/*
 * diagnose_broker() - the sink's own lines (sinks_check()) with @cfg's (borrowed) settings: for
 * Kafka, the brokers answer (metadata) and how the connections are secured.
 */
bool diagnose_broker(const struct config *cfg);

#endif
