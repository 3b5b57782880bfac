/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/connect/router.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"
#include "router_int.h"

/*
 * One outbox row -> one record, in the order of EventRouterDelegate.apply() (reference
 * §2.1): the required columns, the topic, the timestamp, the headers, then the value
 * (router_envelope.c) and the key. Options are parsed in router_opts.c.
 */

int
router_new(const struct router_config *cfg, struct router **ret, char *errbuf, size_t errlen)
{
	struct router *r = znew(*r);

	r->topic_prefix = xstrdup(cfg->topic_prefix ? cfg->topic_prefix : "");
	r->run_id = xstrdup(cfg->run_id ? cfg->run_id : "");
	r->extended_headers = cfg->extended_headers;
	if (router_opts_setup(r, cfg, errbuf, errlen) < 0) {
		router_free(r);
		return -EINVAL;
	}
	r->vals = xcalloc(SLOT_PLACEMENTS + r->npl, sizeof(*r->vals));
	r->defs = xcalloc(SLOT_PLACEMENTS + r->npl, sizeof(*r->defs));
	r->deftxt = xcalloc(SLOT_PLACEMENTS + r->npl, sizeof(*r->deftxt));
	r->envfields = xcalloc(1 + r->npl, sizeof(*r->envfields));
	r->exp = router_expand_new();
	*ret = r;
	return 0;
}

void
router_free(struct router *r)
{
	if (!r) {
		return;
	}
	for (size_t i = 0; r->vals && i < SLOT_PLACEMENTS + r->npl; i++) {
		pgvalue_fini(&r->vals[i]);
		pgvalue_fini(&r->defs[i]);
		buf_fini(&r->deftxt[i]);
	}
	for (size_t i = 0; i < r->nenvnames; i++) {
		free(r->envnames[i].key);
		free(r->envnames[i].name);
		free(r->envnames[i].payload_key);
		router_expand_schema_free(r->envnames[i].payload);
	}
	router_opts_fini(r);
	router_expand_free(r->exp);
	free(r->envnames);
	free(r->vals);
	free(r->defs);
	free(r->deftxt);
	free(r->envfields);
	buf_fini(&r->route);
	buf_fini(&r->tmp);
	for (int i = 0; i < ROUTER_CONTEXT_HEADERS; i++) {
		buf_fini(&r->ctx[i]);
	}
	router_memo_fini(&r->memo);
	for (size_t i = 0; i < r->ntypes; i++) {
		free(r->types[i].labels);
	}
	free(r->types);
	free(r->topic_prefix);
	free(r->run_id);
	free(r);
}

bool
router_selects(const struct router *r, const char *nspname, const char *relname)
{
	struct buf full = BUF_INIT;
	size_t nlen = strlen(nspname);
	bool hit;

	buf_add_fmt(&full, "%s.%s", nspname, relname);
	hit = (!r->sinc.n || router_opts_list_matches(&r->sinc, nspname, nlen)) &&
	      !router_opts_list_matches(&r->sexc, nspname, nlen) &&
	      (!r->tinc.n || router_opts_list_matches(&r->tinc, full.data, full.len)) &&
	      !router_opts_list_matches(&r->texc, full.data, full.len);
	buf_fini(&full);
	return hit;
}

const char *
router_reads(const struct router *r, const char *column)
{
	const struct {
		const char *col, *option;
	} read[] = {
		{ r->col_key, "table.field.event.key" },
		{ r->col_id, "table.field.event.id" },
		{ r->col_payload, "table.field.event.payload" },
		{ r->col_route, "route.by.field" },
		{ r->col_ts, "table.field.event.timestamp" },
		{ r->col_version, "table.field.event.schema.version" },
	};

	for (size_t k = 0; k < sizeof(read) / sizeof(read[0]); k++) {
		if (read[k].col && strcmp(read[k].col, column) == 0) {
			return read[k].option;
		}
	}
	for (size_t i = 0; i < r->npl; i++) {
		if (strcmp(r->pl[i].column, column) == 0) {
			return "table.fields.additional.placement";
		}
	}
	return NULL;
}

bool
router_message_selected(const struct router *r, const char *prefix, size_t len)
{
	return (!r->minc.n || router_opts_list_matches(&r->minc, prefix, len)) &&
	       !router_opts_list_matches(&r->mexc, prefix, len);
}

/*
 * Debezium's context headers. Converting them was a fifth of the relay thread's header work per
 * record (callgrind), for the same bytes every time; a conversion that fails is not remembered
 * and fails again at the next record.
 */
static int
context_headers(struct router *r, const struct router_view *vw)
{
	static const char *const names[ROUTER_CONTEXT_HEADERS] = {
		"__debezium.context.connectorLogicalName", "__debezium.context.taskId",
		"__debezium.context.connectorName", "__debezium.context.runId"
	};
	const char *vals[ROUTER_CONTEXT_HEADERS] = { r->topic_prefix, "0", "postgresql",
						     r->run_id };

	for (int i = 0; !r->ctx_ready && i < ROUTER_CONTEXT_HEADERS; i++) {
		struct cvalue v = { .type = CVALUE_STRING, .u.s = slice_from_str(vals[i]) };

		buf_reset(&r->ctx[i]);
		if (convert_write(r->header_conv, &v, &r->ctx[i], &r->ctx_null[i], vw->errbuf,
				  vw->errlen) < 0) {
			return -EINVAL;
		}
	}
	r->ctx_ready = true;
	for (int i = 0; i < ROUTER_CONTEXT_HEADERS; i++) {
		struct record_header *h = record_add_header(vw->out, names[i]);

		buf_add(&h->value, r->ctx[i].data, r->ctx[i].len);
		h->null = r->ctx_null[i];
	}
	return 0;
}

/* The required columns: key, id, payload, route (Debezium's task fails without them). */
static int
required_columns(struct router *r, const struct router_view *vw)
{
	const struct relcache_rel *rel = vw->row.rel;
	const struct {
		const char *col, *option;
		int slot;
	} req[] = {
		{ r->col_key, "table.field.event.key", SLOT_KEY },
		{ r->col_id, "table.field.event.id", SLOT_ID },
		{ r->col_payload, "table.field.event.payload", SLOT_PAYLOAD },
		{ r->col_route, "route.by.field", SLOT_ROUTE },
	};

	for (size_t k = 0; k < sizeof(req) / sizeof(req[0]); k++) {
		int rc = router_column(r, vw, req[k].col, req[k].slot);

		if (rc > 0) {
			errbuf_set(vw->errbuf, vw->errlen,
				   "table %s.%s has no column '%s' (%s); Debezium's task "
				   "fails on this row; add the column or set %s",
				   rel->nspname, rel->relname, req[k].col, req[k].option,
				   req[k].option);
			return -EINVAL;
		}
		if (rc < 0) {
			return -EINVAL;
		}
	}
	return 0;
}

/* Kafka's rule for topic names. */
static bool
legal_topic(const char *t, size_t len)
{
	if (len == 0 || len > 249 || (len == 1 && t[0] == '.') ||
	    (len == 2 && t[0] == '.' && t[1] == '.')) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		char c = t[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-')) {
			return false;
		}
	}
	return true;
}

static int
route_topic(struct router *r, const struct router_view *vw)
{
	const struct cvalue *v = &r->vals[SLOT_ROUTE].v;
	struct record *out = vw->out;
	int m;

	if (v->type != CVALUE_STRING) {
		errbuf_set(vw->errbuf, vw->errlen,
			   "route.by.field column '%s' is not a string column; "
			   "Debezium fails with DataException; use a text/varchar column",
			   r->col_route);
		return -EINVAL;
	}
	if (v->is_null) {
		errbuf_set(vw->errbuf, vw->errlen,
			   "route.by.field column '%s' is NULL; Debezium's RegexRouter "
			   "fails (NullPointerException); make the column NOT NULL",
			   r->col_route);
		return -EINVAL;
	}
	if (router_memo_lookup(&r->memo, v->u.s.p, v->u.s.len, &out->topic)) {
		return 0;
	}
	m = regex_java_matches(r->route_re, v->u.s.p, v->u.s.len);
	if (m < 0 || (m == 1 && regex_java_replace_first(r->route_re, v->u.s.p, v->u.s.len,
							 &out->topic) < 0)) {
		errbuf_set(vw->errbuf, vw->errlen, "route.topic.regex failed on '%.*s'",
			   (int)v->u.s.len, v->u.s.p);
		return -EINVAL;
	}
	if (m == 0) {
		buf_add(&out->topic, v->u.s.p, v->u.s.len);
	}
	if (!legal_topic(out->topic.data, out->topic.len)) {
		errbuf_set(
			vw->errbuf, vw->errlen,
			"topic '%s' (from %s='%.*s') is not a legal Kafka topic name "
			"([a-zA-Z0-9._-], 1 to 249 characters); the broker would refuse it; fix the "
			"row's %s or route.topic.replacement",
			buf_cstr(&out->topic), r->col_route, (int)v->u.s.len, v->u.s.p,
			r->col_route);
		return -EINVAL;
	}
	router_memo_store(&r->memo, v->u.s.p, v->u.s.len, out->topic.data, out->topic.len);
	return 0;
}

/*
 * table.field.event.timestamp as getEventTimestampMs(): the column must be INT64 (else
 * DataException, even when NULL); NULL falls back to processing time; then its logical name
 * must be Timestamp (ms), MicroTimestamp (/1000) or NanoTimestamp (/1000000). PostgreSQL
 * timestamp(0..3) is Timestamp, timestamp(4..6) MicroTimestamp (time.precision.mode decides:
 * pgvalue.h); timestamptz (a string), isostring's text and connect's Timestamp (a Date) fail.
 */
static int
event_timestamp(struct router *r, const struct router_view *vw)
{
	const struct cvalue *v = &r->vals[SLOT_TS].v;
	const struct relcache_rel *rel = vw->row.rel;
	struct record *out = vw->out;
	char *errbuf = vw->errbuf;
	size_t errlen = vw->errlen;
	int rc;

	if (!r->col_ts) {
		return 0;
	}
	rc = router_column(r, vw, r->col_ts, SLOT_TS);
	if (rc > 0) {
		errbuf_set(
			errbuf, errlen,
			"table.field.event.timestamp column '%s' is missing from "
			"%s.%s (Debezium: Unable to find timestamp field); add it or fix the option",
			r->col_ts, rel->nspname, rel->relname);
		return -EINVAL;
	}
	if (rc < 0) {
		return -EINVAL;
	}
	if (v->type != CVALUE_INT64) {
		errbuf_set(
			errbuf, errlen,
			"table.field.event.timestamp column '%s' is not of type "
			"INT64 (Debezium fails with DataException); use a timestamp (without time "
			"zone) column",
			r->col_ts);
		return -EINVAL;
	}
	if (v->is_null) {
		return 0;
	}
	if (v->name && strcmp(v->name, "io.debezium.time.Timestamp") == 0) {
		out->timestamp_ms = v->u.i;
	} else if (v->name && strcmp(v->name, "io.debezium.time.MicroTimestamp") == 0) {
		out->timestamp_ms = v->u.i / 1000;
	} else if (v->name && strcmp(v->name, "io.debezium.time.NanoTimestamp") == 0) {
		out->timestamp_ms = v->u.i / 1000000;
	} else {
		/* Debezium: a ConnectException, or for Connect's Timestamp (a java.util.Date,
		 * time.precision.mode=connect) a ClassCastException to Long */
		errbuf_set(errbuf, errlen,
			   "table.field.event.timestamp column '%s' has the "
			   "unsupported type %s (Debezium's task fails on it); use a timestamp "
			   "(without time zone) column, and a time.precision.mode other than "
			   "connect",
			   r->col_ts, v->name ? v->name : "int64");
		return -EINVAL;
	}
	if (out->timestamp_ms < 0) {
		errbuf_set(errbuf, errlen,
			   "table.field.event.timestamp column '%s' is before 1970 "
			   "(%lld ms); Kafka refuses negative record timestamps",
			   r->col_ts, (long long)out->timestamp_ms);
		return -EINVAL;
	}
	return 0;
}

static int
route_row(struct router *r, const struct router_view *vw)
{
	struct record *out = vw->out;
	size_t nenv = 0;

	if (required_columns(r, vw) < 0 || route_topic(r, vw) < 0 || event_timestamp(r, vw) < 0 ||
	    (r->extended_headers && context_headers(r, vw) < 0) ||
	    router_header_value(r, vw, "id", &r->vals[SLOT_ID].v) < 0) {
		return -EINVAL;
	}
	router_envelope_payload(r);
	if (router_envelope_placements(r, vw, &nenv) < 0 ||
	    router_envelope_value(r, vw, nenv) < 0 ||
	    convert_write(r->key_conv, &r->vals[SLOT_KEY].v, &out->key, &out->key_null, vw->errbuf,
			  vw->errlen) < 0) {
		return -EINVAL;
	}
	if (r->server) {
		out->timestamp_ms = -1; /* the sink's ProducerRecord has no timestamp */
	}
	return 0;
}

int
router_route(struct router *r, const struct router_row *row, struct record *out,
	     enum router_verdict *ret_verdict, char *errbuf, size_t errlen)
{
	static const enum router_verdict upd[] = { ROUTER_DROP_WARN, ROUTER_DROP_ERROR,
						   ROUTER_HALT };
	const struct relcache_rel *rel = row->rel;
	const struct pgoutput_tuple *tup = row->tup;
	const struct router_view vw = {
		.row = *row, .out = out, .errbuf = errbuf, .errlen = errlen
	};

	record_reset(out);
	switch (row->op) {
	case 'D':
	case 'T': *ret_verdict = ROUTER_DROP; return 0;
	case 'U':
		errbuf_set(errbuf, errlen,
			   "UPDATE of outbox table %s.%s %s (table.op.invalid.behavior="
			   "%s); outbox rows are insert-only: fix the application, or set "
			   "table.op.invalid.behavior=warn to skip such rows",
			   rel->nspname, rel->relname,
			   r->invalid_op == INVALID_OP_FATAL ? "stops the relay" :
							       "publishes nothing",
			   r->invalid_op == INVALID_OP_WARN  ? "warn" :
			   r->invalid_op == INVALID_OP_ERROR ? "error" :
							       "fatal");
		*ret_verdict = upd[r->invalid_op];
		return 0;
	case 'I':
	case 'r': break;
	default:
		errbuf_set(errbuf, errlen, "router_route: unknown operation '%c'", row->op);
		return -EINVAL;
	}
	if (!tup || tup->ncols != rel->ncols) {
		errbuf_set(errbuf, errlen,
			   "router_route: tuple has %d columns, relation %s.%s has %d",
			   tup ? tup->ncols : -1, rel->nspname, rel->relname, rel->ncols);
		return -EINVAL;
	}
	if (route_row(r, &vw) < 0) {
		record_reset(out);
		*ret_verdict = ROUTER_POISON;
		return 0;
	}
	*ret_verdict = ROUTER_PUBLISH;
	return 0;
}

void
router_row_id(const struct router *r, const struct relcache_rel *rel,
	      const struct pgoutput_tuple *tup, struct buf *out)
{
	int i = tup ? router_find_col(rel, r->col_id) : -1;

	if (i < 0 || i >= tup->ncols) {
		buf_add_fmt(out, "(no %s column)", r->col_id);
	} else if (tup->cols[i].kind != 't' && tup->cols[i].kind != 'b') {
		buf_add_str(out, "NULL");
	} else {
		buf_add(out, tup->cols[i].value.p, tup->cols[i].value.len);
	}
}
