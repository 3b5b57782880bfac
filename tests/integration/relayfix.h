/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A private outbox world per test on the shared stack: its own schema with an outbox table and
 * a busy business table, its own publication (outbox-only with publish = 'insert', or
 * Debezium-style FOR ALL TABLES with every operation), its own pgoutput slot plus a side
 * test_decoding slot that tells the true end LSN of every commit, its own configuration files,
 * and an outboxd child process.
 */
#ifndef OUTBOXD_RELAYFIX_H
#define OUTBOXD_RELAYFIX_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <sys/types.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/lsn.h"

struct relayfix {
	char *name; /* unique lower-case identifier, also the schema name */
	char *slot, *pub, *side_slot;
	char *dir; /* config files and outboxd.log */
	bool all_tables;
	PGconn *pg;
	pid_t pid;	/* running outboxd, or 0 */
	pid_t busy_pid; /* background writer on the business table, or 0 */
	lsn_t last_end; /* newest outbox commit end seen on the side slot */
};

/* relayfix_init() - create schema, tables, publication, slots, folder. Fails the test on error. */
void relayfix_init(struct relayfix *f, bool all_tables);

/*
 * relayfix_config() - write worker.properties and connector.properties (Kafka Connect
 * standalone files as a Debezium user has them) pointing at this fixture; @connector_extra
 * lines are appended to the connector file (NULL for none).
 */
void relayfix_config(struct relayfix *f, const char *worker_extra, const char *connector_extra);

/* relayfix_check() - run `outboxd check` on the fixture's files; @out gets its output.
 * Return: its exit status. */
int relayfix_check(struct relayfix *f, char *out, size_t size);

/* relayfix_start() - start `outboxd run worker.properties connector.properties`. */
void relayfix_start(struct relayfix *f);

/* relayfix_start_command() - start `outboxd @command worker.properties connector.properties`. */
void relayfix_start_command(struct relayfix *f, const char *command);

/*
 * relayfix_spawn() - start one more `outboxd @command` on the fixture's files, beside the one
 * relayfix_start*() runs: its stderr goes to @log in the fixture's directory, @http_port (0:
 * none) is its outboxd.http.port (OUTBOXD_HTTP_PORT). The caller waits for it (waitpid).
 */
pid_t relayfix_spawn(const struct relayfix *f, const char *command, const char *log, int http_port);

/* relayfix_log_named() - the log file @log of the fixture's directory so far (caller frees). */
char *relayfix_log_named(const struct relayfix *f, const char *log);

/* relayfix_wait_log_named() - wait up to @timeout_s until @log contains @needle. */
bool relayfix_wait_log_named(const struct relayfix *f, const char *log, const char *needle,
			     int timeout_s);

/* relayfix_stop() - send @sig and wait; returns the exit status, or 128+signal if killed. */
int relayfix_stop(struct relayfix *f, int sig);

/* relayfix_wait_exit() - wait up to @timeout_s for outboxd to exit by itself; exit status or -1. */
int relayfix_wait_exit(struct relayfix *f, int timeout_s);

/* relayfix_log() - the outboxd log so far (caller frees). */
char *relayfix_log(const struct relayfix *f);

/*
 * relayfix_log_tail() - the last 3,000 bytes of the outboxd log, for a failure's message (Check
 * refuses messages over 4 KB and then reports only the test's exit status). Caller frees.
 */
char *relayfix_log_tail(const struct relayfix *f);

/* relayfix_wait_log() - wait up to @timeout_s until the log contains @needle. */
bool relayfix_wait_log(const struct relayfix *f, const char *needle, int timeout_s);

/* relayfix_confirmed() - the pgoutput slot's confirmed_flush_lsn. */
lsn_t relayfix_confirmed(struct relayfix *f);

/* relayfix_last_commit_end() - end LSN of the newest commit touching the outbox (side slot). */
lsn_t relayfix_last_commit_end(struct relayfix *f);

/* relayfix_topic() - "outbox.event.<name>_<suffix>" (caller frees); the aggregatetype is
 * "<name>_<suffix>". */
char *relayfix_aggtype(const struct relayfix *f, const char *suffix);

/* relayfix_busy() - start (true) or stop (false) a writer that inserts, updates and deletes rows
 * of the business table continuously. */
void relayfix_busy(struct relayfix *f, bool on);

/* relayfix_peak_rss_kb() - VmHWM of the running outboxd in kB. */
long relayfix_peak_rss_kb(const struct relayfix *f);

/* relayfix_fini() - stop outboxd and the writer, drop slots, publication and schema. */
void relayfix_fini(struct relayfix *f);

/* relayfix_java_partitions() - partitions the Java producer picks for @n keys (NULL = null key
 * is not allowed; use an empty key of length 0) among @nparts; caller frees. */
int *relayfix_java_partitions(const char *const *keys, const size_t *lens, size_t n, int nparts);

#endif
