/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to relay.c and relay_events.c: the session one pipeline run keeps, and the few
 * functions the two files share. Not a public header (it lives in src/).
 */
#ifndef OUTBOXD_RELAY_INT_H
#define OUTBOXD_RELAY_INT_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "outboxd/run/acktrack.h"
#include "outboxd/pg/pgoutput.h"
#include "outboxd/pg/pgstream.h"
#include "outboxd/run/producer.h"
#include "outboxd/run/relay.h"
#include "outboxd/pg/relcache.h"
#include "outboxd/connect/router.h"

/* Unix epoch to PostgreSQL epoch (2000-01-01), in microseconds. */
#define PG_EPOCH_US INT64_C(946684800000000)

/* How one pipeline session ended. */
enum outcome {
	OUT_OK,		  /* go on */
	OUT_STOP,	  /* signal: flushed, confirmed, exit 0 */
	OUT_RESTART,	  /* transient: restart from the slot after a backoff */
	OUT_HALT,	  /* exit 1 */
	OUT_PRECONDITION, /* exit 2 */
};

/* What the relay keeps per relation beside relcache's copy of the Relation message. */
struct relinfo {
	bool selected;	  /* table.include.list selects it: its rows are outbox rows */
	int ncols;
	bool *notnull;	  /* per column: declared NOT NULL (pg_attribute) */
	char **defaults;  /* per column: its DEFAULT (pg_attrdef), or NULL */
};

struct session {
	const struct relay_params *p;
	PGconn *sql;
	struct pgstream *stream;
	struct producer *prod;
	struct acktrack *at;
	struct relcache *rc;
	struct pgoutput_decoder dec;
	struct router_record rec;
	struct router_record hb;	/* the heartbeat record, apart from a waiting row record */
	int64_t next_heartbeat_us;
	bool hb_query_busy;		/* heartbeat.action.query sent, results not read yet */
	struct producer_header *hdrs; /* the record's headers as the producer takes them */
	size_t hdrs_cap;
	bool pending;		/* rec is routed but waits for producer queue space */
	uint64_t pending_seq;
	uint64_t cur_seq;	/* the open transaction's acktrack sequence, or 0 */
	/* the row being routed (valid inside on_row only), for a dead-letter record */
	const struct relcache_rel *cur_rel;
	const struct relinfo *cur_ri;
	const struct pgoutput_tuple *cur_tup;
	lsn_t cur_final_lsn;	/* its commit LSN (from Begin), for messages naming a row */
	uint32_t cur_xid;
	int64_t commit_time_us;	/* Unix time of the last Begin's commit, for message records */
	int64_t started_unix_us; /* when this session started streaming (Unix time) */
	lsn_t last_commit_lsn;	/* the last Commit's end (or non-transactional message), 0 = none */
	lsn_t nontx_end;	/* a non-transactional message waits to be produced: its LSN */
	lsn_t last_flush_sent;
	int64_t next_status_us, last_rx_us, probe_deadline_us;
	bool status_now;
	bool delivery_failed;
	char why[2048];		/* the reason for a restart or halt */
	int wake[2];		/* librdkafka's wake-up pipe */
	int signal_fd;
	bool stopping;
	bool closing;		/* purging: the reports that follow say nothing new */
	int64_t last_ack_us;	/* last successful delivery report, or when waiting began */
	int64_t next_stall_warn_us; /* 0 = not stalled */
	uint64_t published, delivered;
};

/* relay_now_us() - the monotonic clock, microseconds. */
int64_t relay_now_us(void);

/*
 * relay_produce() - hand s->rec to the producer for transaction @seq; on a full queue keep it
 * (s->pending) so reading pauses; a record too large goes to the dead-letter topic or halts.
 */
enum outcome relay_produce(struct session *s, uint64_t seq);

/* relay_events_dead_letter() - send the row being routed to the dead-letter topic instead. */
enum outcome relay_events_dead_letter(struct session *s, const char *reason, bool keep_value);

/* relay_events_message() - a logical decoding message to <topic.prefix>.message. */
enum outcome relay_events_message(struct session *s, const struct pgoutput_msg *m);

/* relay_events_heartbeat() - heartbeat record and action query when due; query results. */
enum outcome relay_events_heartbeat(struct session *s, int64_t now);

/* relay_events_stall() - the stall watchdog (warning, metric, /health). */
void relay_events_stall(struct session *s, int64_t now);

/* relay_events_gauges() - publish the acktrack and producer gauges. */
void relay_events_gauges(struct session *s);

#endif
