/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/relay/stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgoutput.h"
#include "outboxd/pg/pgsql.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/failpoint.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/now.h"

#define MOD "relay"

/* What the stream keeps per relation beside relcache's copy of the Relation message. */
struct relinfo {
	bool selected; /* table.include.list selects it: its rows are outbox rows */
	int ncols;
	bool *notnull;	 /* per column: declared NOT NULL (pg_attribute), or NULL */
	char **defaults; /* per column: its DEFAULT (pg_attrdef) or NULL; or NULL */
};

struct stream {
	const struct stream_params *p;
	struct acktrack *at;
	struct relcache *rc;
	struct pgoutput_decoder dec;
	uint64_t cur_seq;    /* the open transaction's acktrack sequence, or 0 */
	lsn_t cur_final_lsn; /* its commit LSN (from Begin), for messages naming a row */
	uint32_t cur_xid;
	int64_t commit_time_us;	 /* Unix time of the last Begin's commit, for message records */
	int64_t started_unix_us; /* when this stream started (Unix time) */
	lsn_t last_commit_lsn; /* the last Commit's end (or non-transactional message), 0 = none */
	lsn_t nontx_end;       /* a non-transactional message waits to be produced: its LSN */
	bool reply_wanted;     /* a keepalive asked for a status update at once */
	bool delivery_failed;
	char failure[1024]; /* the broker's reason for the first failed delivery */
	uint64_t published, delivered;
};

static void
relinfo_free(void *user)
{
	struct relinfo *ri = user;

	if (ri) {
		free(ri->notnull);
		pgsql_defaults_free(ri->defaults, ri->ncols);
		free(ri);
	}
}

struct stream *
stream_new(const struct stream_params *p, lsn_t confirmed, int64_t started_unix_us)
{
	struct stream *st = znew(*st);

	st->p = p;
	st->at = acktrack_new(confirmed);
	st->rc = relcache_new();
	pgoutput_decoder_init(&st->dec, 1);
	st->started_unix_us = started_unix_us;
	return st;
}

void
stream_free(struct stream *st)
{
	if (!st) {
		return;
	}
	acktrack_free(st->at);
	relcache_free(st->rc, relinfo_free);
	pgoutput_decoder_fini(&st->dec);
	free(st);
}

static void
on_produced(void *opaque, uint64_t token)
{
	struct stream *st = opaque;

	if (!token) {
		return; /* a heartbeat: no transaction of the stream */
	}
	st->published++;
	(void)acktrack_row_produced(st->at, token, now_monotonic_us());
	if (st->nontx_end) {
		/* a non-transactional message is its own transaction, ending at its LSN */
		(void)acktrack_commit(st->at, st->nontx_end, st->nontx_end);
		st->nontx_end = 0;
	}
	if (st->cur_seq) {
		failpoint_hit(FAILPOINT_MID_TRANSACTION);
	}
}

static void
on_delivery(void *opaque, uint64_t token, bool ok, const char *reason)
{
	struct stream *st = opaque;
	int64_t committed = acktrack_commit_time(st->at, token);

	if (acktrack_row_delivered(st->at, token, ok) < 0) {
		return;
	}
	if (ok) {
		if (committed) {
			metrics_observe_ack(st->p->metrics, now_unix_us() - committed);
		}
		st->delivered++;
		failpoint_hit(FAILPOINT_AFTER_DELIVERY);
	} else if (!st->delivery_failed) {
		st->delivery_failed = true;
		snprintf(st->failure, sizeof(st->failure), "delivery failed: %s",
			 reason ? reason : "unknown");
	}
}

struct publish_source
stream_source(struct stream *st)
{
	return (struct publish_source){ .on_produced = on_produced,
					.on_delivery = on_delivery,
					.opaque = st };
}

/* A Relation message: cache it and decide once whether its rows are outbox rows. */
static enum outcome
on_relation(struct stream *st, const struct pgoutput_msg *m, char *why, size_t whylen)
{
	const struct relcache_rel *rel = relcache_apply(st->rc, m, relinfo_free);
	struct relinfo *ri = znew(*ri);
	enum outcome o;

	ri->selected = router_selects(st->p->router, rel->nspname, rel->relname);
	((struct relcache_rel *)rel)->user = ri;
	if (!ri->selected) {
		return OUTCOME_OK;
	}
	ri->ncols = rel->ncols;
	if (st->p->facts && (o = st->p->facts(st->p->facts_opaque, rel, &ri->notnull, &ri->defaults,
					      why, whylen)) != OUTCOME_OK) {
		return o;
	}
	log_info(MOD, "outbox table %s.%s (relid %u, %d columns)", rel->nspname, rel->relname,
		 rel->relid, rel->ncols);
	return OUTCOME_OK;
}

/* An Insert, Update or Delete on a relation. */
static enum outcome
on_row(struct stream *st, struct publish *pub, char op, uint32_t relid,
       const struct pgoutput_tuple *tup, char *why, size_t whylen)
{
	struct relcache_rel *rel = relcache_get(st->rc, relid);
	struct relinfo *ri;
	struct publish_row row;

	if (!rel) {
		errbuf_set(why, whylen,
			   "protocol: a row for relation %u came before its Relation "
			   "message",
			   relid);
		return OUTCOME_RESTART;
	}
	ri = rel->user;
	if (!ri || !ri->selected) {
		metrics_skipped(st->p->metrics, METRICS_SKIP_OTHER_TABLE);
		return OUTCOME_OK;
	}
	if (op == 'D') {
		/* Deletes publish nothing (Debezium drops them). */
		metrics_skipped(st->p->metrics, METRICS_SKIP_DELETE);
		return OUTCOME_OK;
	}
	row = (struct publish_row){ .rel = rel,
				    .notnull = ri->notnull,
				    .defaults = (const char *const *)ri->defaults,
				    .op = op,
				    .tup = tup,
				    .lsn = st->cur_final_lsn };
	return publish_row(pub, &row, st->cur_seq, why, whylen);
}

/* Truncates publish nothing (Debezium drops them); counted when they hit an outbox table. */
static void
on_truncate(struct stream *st, const struct pgoutput_msg *m)
{
	for (int i = 0; i < m->u.truncate.nrels; i++) {
		struct relcache_rel *rel = relcache_get(st->rc, m->u.truncate.relids[i]);
		struct relinfo *ri = rel ? rel->user : NULL;

		if (ri && ri->selected) {
			metrics_skipped(st->p->metrics, METRICS_SKIP_TRUNCATE);
		}
	}
}

/*
 * A logical decoding message (pg_logical_emit_message): Debezium publishes every one whose
 * prefix message.prefix.include/exclude.list select to <topic.prefix>.message, past the
 * EventRouter. A transactional one belongs to its transaction; a non-transactional one is
 * confirmed on its own, at its LSN, once delivered.
 */
static enum outcome
on_logical_message(struct stream *st, struct publish *pub, const struct pgoutput_msg *m, char *why,
		   size_t whylen)
{
	bool tx = m->u.message.flags & 1;
	struct router_message_info info = {
		.dbname = st->p->dbname,
		.commit_time_us = st->commit_time_us,
		.has_xid = tx,
		.xid = st->cur_xid,
		.has_last_commit = st->last_commit_lsn != 0,
		.last_commit_lsn = st->last_commit_lsn,
		.now_ms = now_unix_ms(),
	};
	uint64_t seq = st->cur_seq;
	char err[512], at[LSN_STRLEN];

	if (!router_message_selected(st->p->router, m->u.message.prefix.p,
				     m->u.message.prefix.len)) {
		return OUTCOME_OK;
	}
	if (!tx) {
		/* Debezium counts a non-transactional message as its own commit before recording it */
		st->last_commit_lsn = m->u.message.lsn;
		info.has_last_commit = true;
		info.last_commit_lsn = m->u.message.lsn;
	}
	if (!info.commit_time_us) {
		/* no commit seen yet: Debezium's offset context carries the time it started */
		info.commit_time_us = st->started_unix_us;
	}
	if (router_message(st->p->router, m, &info, publish_scratch(pub), err, sizeof(err)) < 0) {
		lsn_format(m->u.message.lsn, at);
		errbuf_set(why, whylen, "logical decoding message (prefix %.*s) at %s: %s",
			   (int)m->u.message.prefix.len, m->u.message.prefix.p, at, err);
		return OUTCOME_HALT;
	}
	if (!seq) {
		seq = acktrack_begin(st->at, m->u.message.lsn);
		st->nontx_end = m->u.message.lsn;
	}
	return tx ? publish_scratch_send(pub, seq, NULL, st->cur_final_lsn, why, whylen) :
		    publish_scratch_send(pub, seq, "(a logical decoding message) at",
					 m->u.message.lsn, why, whylen);
}

static enum outcome
on_begin(struct stream *st, const struct pgoutput_msg *m, char *why, size_t whylen)
{
	st->cur_seq = acktrack_begin(st->at, m->u.begin.final_lsn);
	st->cur_final_lsn = m->u.begin.final_lsn;
	st->cur_xid = m->xid;
	st->commit_time_us = m->u.begin.commit_time + NOW_PG_EPOCH_OFFSET_US;
	if (!st->cur_seq) {
		errbuf_set(why, whylen, "protocol: Begin inside a transaction");
		return OUTCOME_RESTART;
	}
	(void)acktrack_set_commit_time(st->at, st->cur_seq, st->commit_time_us);
	failpoint_hit(FAILPOINT_AFTER_BEGIN);
	return OUTCOME_OK;
}

static enum outcome
on_commit(struct stream *st, const struct pgoutput_msg *m, char *why, size_t whylen)
{
	if (acktrack_commit(st->at, m->u.commit.commit_lsn, m->u.commit.end_lsn) < 0) {
		errbuf_set(why, whylen, "protocol: Commit outside a transaction");
		return OUTCOME_RESTART;
	}
	st->cur_seq = 0;
	st->last_commit_lsn = m->u.commit.end_lsn;
	metrics_count(st->p->metrics, METRICS_TRANSACTIONS, 1);
	return OUTCOME_OK;
}

static enum outcome
on_message(struct stream *st, struct publish *pub, const struct pgoutput_msg *m, char *why,
	   size_t whylen)
{
	switch (m->type) {
	case PGOUTPUT_MSG_BEGIN: return on_begin(st, m, why, whylen);
	case PGOUTPUT_MSG_COMMIT: return on_commit(st, m, why, whylen);
	case PGOUTPUT_MSG_RELATION: return on_relation(st, m, why, whylen);
	case PGOUTPUT_MSG_INSERT:
		return on_row(st, pub, 'I', m->u.insert.relid, &m->u.insert.newtup, why, whylen);
	case PGOUTPUT_MSG_UPDATE:
		return on_row(st, pub, 'U', m->u.update.relid, &m->u.update.newtup, why, whylen);
	case PGOUTPUT_MSG_DELETE: return on_row(st, pub, 'D', m->u.del.relid, NULL, why, whylen);
	case PGOUTPUT_MSG_TRUNCATE: on_truncate(st, m); return OUTCOME_OK;
	case PGOUTPUT_MSG_MESSAGE: return on_logical_message(st, pub, m, why, whylen);
	case PGOUTPUT_MSG_TYPE:
	case PGOUTPUT_MSG_ORIGIN:
		/* Y and O carry nothing the router uses. */
		return OUTCOME_OK;
	default:
		errbuf_set(why, whylen,
			   "unexpected pgoutput message '%c' (streaming, two-phase "
			   "and logical messages are off); check that no other client shares the "
			   "slot",
			   (char)m->type);
		return OUTCOME_HALT;
	}
}

enum outcome
stream_on_frame(struct stream *st, struct publish *pub, const struct pgstream_frame *f, char *why,
		size_t whylen)
{
	struct pgoutput_msg m;
	char err[512];

	if (f->kind == PGSTREAM_FRAME_KEEPALIVE) {
		/* acktrack applies walEnd only between transactions with nothing in flight. */
		if (!st->cur_seq) {
			acktrack_keepalive(st->at, f->wal_end);
		}
		st->reply_wanted |= f->reply_requested;
		return OUTCOME_OK;
	}
	if (pgoutput_decode(&st->dec, f->data, f->data_len, &m, err, sizeof(err)) < 0) {
		errbuf_set(why, whylen, "malformed replication data: %s", err);
		return OUTCOME_HALT;
	}
	return on_message(st, pub, &m, why, whylen);
}

bool
stream_reply_wanted(struct stream *st)
{
	bool r = st->reply_wanted;

	st->reply_wanted = false;
	return r;
}

bool
stream_failed(const struct stream *st, char *why, size_t whylen)
{
	if (st->delivery_failed) {
		errbuf_set(why, whylen, "%s", st->failure);
	}
	return st->delivery_failed;
}

struct acktrack *
stream_acktrack(struct stream *st)
{
	return st->at;
}

int64_t
stream_commit_time(const struct stream *st)
{
	return st->commit_time_us;
}

void
stream_counts(const struct stream *st, uint64_t *ret_published, uint64_t *ret_delivered)
{
	*ret_published = st->published;
	*ret_delivered = st->delivered;
}
