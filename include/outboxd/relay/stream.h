/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RELAY_STREAM_H
#define OUTBOXD_RELAY_STREAM_H

/*
 * The replication stream as a source of outbox rows: the walsender's frames -> pgoutput
 * messages -> relations, transactions, rows and logical decoding messages -> the publish path;
 * their delivery reports -> acktrack, whose confirm rule (acktrack.h) decides what the status
 * updates may confirm. Keepalives reach acktrack too. No socket of its own: the relay reads the
 * frames and sends the status updates; this says what they carry.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/connect/router.h"
#include "outboxd/obs/metrics.h"
#include "outboxd/pg/pgstream_frame.h"
#include "outboxd/pg/relcache.h"
#include "outboxd/pipeline/outcome.h"
#include "outboxd/pipeline/publish.h"
#include "outboxd/relay/acktrack.h"

struct stream;

/*
 * The catalog facts pgoutput does not carry (NOT NULL, DEFAULT; Debezium's schemas show them),
 * looked up once per Relation message of an outbox table. @ret_notnull and @ret_defaults as
 * pgsql_column_facts() returns them (rel->ncols entries each; both may stay NULL: no facts).
 * Return: OUTCOME_OK, or another outcome with the reason in @why.
 */
typedef enum outcome (*stream_facts_fn)(void *opaque, const struct relcache_rel *rel,
					bool **ret_notnull, char ***ret_defaults, char *why,
					size_t whylen);

struct stream_params {
	struct router *router;	 /* borrowed: table selection and routing */
	struct metrics *metrics; /* borrowed: transactions, skipped rows */
	const char *dbname;	 /* database.dbname, for the source block of logical messages */
	stream_facts_fn facts;	 /* NULL: every column nullable, no defaults */
	void *facts_opaque;
};

/**
 * stream_new() - a stream that resumes at the slot's @confirmed LSN.
 * @p: borrowed; must outlive the stream.
 * @started_unix_us: when streaming started (Unix time): Debezium's offset context time for a
 *	logical message that comes before any commit.
 */
struct stream *stream_new(const struct stream_params *p, lsn_t confirmed, int64_t started_unix_us);

/* stream_free() - NULL allowed. */
void stream_free(struct stream *st);

/* stream_source() - the callbacks publish_new() takes for this stream (opaque = @st). */
struct publish_source stream_source(struct stream *st);

/**
 * stream_on_frame() - one frame from the walsender; rows go to @pub.
 * Return: OUTCOME_OK, or the outcome with the reason in @why (malformed data, a protocol
 * violation, a halting row).
 */
enum outcome stream_on_frame(struct stream *st, struct publish *pub, const struct pgstream_frame *f,
			     char *why, size_t whylen);

/* stream_reply_wanted() - a keepalive asked for a status update at once; clears the request. */
bool stream_reply_wanted(struct stream *st);

/**
 * stream_failed() - a delivery report of a row failed (nothing from its transaction on may be
 * confirmed: the pipeline must restart). The broker's reason in @why.
 */
bool stream_failed(const struct stream *st, char *why, size_t whylen);

/* stream_acktrack() - the confirm rule's state, for the status update and the gauges. */
struct acktrack *stream_acktrack(struct stream *st);

/* stream_counts() - rows and messages produced and acknowledged since stream_new(). */
void stream_counts(const struct stream *st, uint64_t *ret_published, uint64_t *ret_delivered);

/* stream_commit_time() - the commit time of the last transaction begun (Unix us), 0 if none. */
int64_t stream_commit_time(const struct stream *st);

#endif
