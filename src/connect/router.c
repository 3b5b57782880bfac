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
 * §2.1). Options are parsed in router_opts.c, JSON payloads expanded in router_expand.c.
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
	router_memo_fini(&r->memo);
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

bool
router_message_selected(const struct router *r, const char *prefix, size_t len)
{
	return (!r->minc.n || router_opts_list_matches(&r->minc, prefix, len)) &&
	       !router_opts_list_matches(&r->mexc, prefix, len);
}

struct producer_record
router_record_view(const struct router_record *r, struct producer_header **hdrs, size_t *hdrs_cap)
{
	struct producer_record pr = {
		.topic = buf_cstr(&r->topic),
		.key = r->key_null ? NULL : buf_cstr(&r->key),
		.key_len = r->key.len,
		.value = r->value_null ? NULL : buf_cstr(&r->value),
		.value_len = r->value.len,
		.nheaders = r->nheaders,
		.partition = r->partition,
		.timestamp_ms = r->timestamp_ms < 0 ? 0 : r->timestamp_ms,
	};

	if (*hdrs_cap < r->nheaders) {
		*hdrs_cap = r->nheaders;
		*hdrs = xrealloc(*hdrs, *hdrs_cap * sizeof(**hdrs));
	}
	for (size_t i = 0; i < r->nheaders; i++) {
		(*hdrs)[i] = (struct producer_header){
			.name = buf_cstr(&r->headers[i].name),
			.value = r->headers[i].null ? NULL : buf_cstr(&r->headers[i].value),
			.len = r->headers[i].value.len,
		};
	}
	pr.headers = *hdrs;
	return pr;
}

void
router_record_init(struct router_record *rec)
{
	*rec = (struct router_record){ .partition = -1, .timestamp_ms = -1 };
}

void
router_record_reset(struct router_record *rec)
{
	buf_reset(&rec->topic);
	buf_reset(&rec->key);
	buf_reset(&rec->value);
	rec->key_null = rec->value_null = false;
	rec->nheaders = 0;
	rec->partition = -1;
	rec->timestamp_ms = -1;
}

void
router_record_fini(struct router_record *rec)
{
	buf_fini(&rec->topic);
	buf_fini(&rec->key);
	buf_fini(&rec->value);
	for (size_t i = 0; i < rec->headers_cap; i++) {
		buf_fini(&rec->headers[i].name);
		buf_fini(&rec->headers[i].value);
	}
	free(rec->headers);
	*rec = (struct router_record){ .partition = -1, .timestamp_ms = -1 };
}

static struct router_header *
add_header(struct router_record *rec, const char *name)
{
	struct router_header *h;

	if (rec->nheaders == rec->headers_cap) {
		size_t cap = rec->headers_cap ? rec->headers_cap * 2 : 8;

		rec->headers = xrealloc(rec->headers, cap * sizeof(*rec->headers));
		memset(rec->headers + rec->headers_cap, 0,
		       (cap - rec->headers_cap) * sizeof(*rec->headers));
		rec->headers_cap = cap;
	}
	h = &rec->headers[rec->nheaders++];
	buf_reset(&h->name);
	buf_add_str(&h->name, name);
	h->null = false;
	return h;
}

/*
 * Append header @name = @v through the header converter. Debezium Server drops a header
 * whose Connect value is null (KafkaChangeConsumer); Kafka Connect sends it with a null value.
 */
static int
header_value(struct router *r, struct router_record *rec, const char *name,
	     const struct cvalue *v, char *errbuf, size_t errlen)
{
	struct router_header *h;

	if (r->server && v->is_null) {
		return 0;
	}
	h = add_header(rec, name);
	return convert_write(r->header_conv, v, &h->value, &h->null, errbuf, errlen);
}

static int
context_headers(struct router *r, struct router_record *rec, char *errbuf, size_t errlen)
{
	const char *names[] = { "__debezium.context.connectorLogicalName",
				"__debezium.context.taskId", "__debezium.context.connectorName",
				"__debezium.context.runId" };
	const char *vals[] = { r->topic_prefix, "0", "postgresql", r->run_id };

	for (int i = 0; i < 4; i++) {
		struct cvalue v = { .type = CVALUE_STRING, .u.s = slice_from_str(vals[i]) };

		if (header_value(r, rec, names[i], &v, errbuf, errlen) < 0) {
			return -EINVAL;
		}
	}
	return 0;
}

static int
find_col(const struct relcache_rel *rel, const char *name)
{
	for (int i = 0; name && i < rel->ncols; i++) {
		if (strcmp(rel->cols[i].name, name) == 0) {
			return i;
		}
	}
	return -1;
}

/*
 * The literal of a constant DEFAULT expression as pg_get_expr() prints it: 'text'::type
 * ('' unescaped), a number, (-1), true/false (as 't'/'f'). 0 with @out filled, -1 when
 * the expression is not a constant Debezium would read (functions, NULL::type).
 */
static int
default_literal(const char *e, struct buf *out)
{
	size_t n = strlen(e);

	if (e[0] == '\'') {
		const char *p = e + 1;

		for (; *p; p++) {
			if (*p == '\'' && p[1] == '\'') {
				buf_add_char(out, '\'');
				p++;
			} else if (*p == '\'') {
				break;
			} else {
				buf_add_char(out, *p);
			}
		}
		return *p == '\'' && (p[1] == '\0' || (p[1] == ':' && p[2] == ':')) ? 0 : -1;
	}
	if (strcmp(e, "true") == 0 || strcmp(e, "false") == 0) {
		buf_add_char(out, e[0]);
		return 0;
	}
	if (n > 2 && e[0] == '(' && e[n - 1] == ')') {
		e++;
		n -= 2;
	}
	if (n == 0 || strspn(e, "-+0123456789.eE") < n) {
		return -1;
	}
	buf_add(out, e, n);
	return 0;
}

/*
 * The column's DEFAULT into defs[@slot] and @pv's schema; a non-constant one is ignored. A
 * NULL value then reads as the default, as Struct.get() reads it for the EventRouter (so
 * JsonConverter's replace.null.with.default has nothing left to replace in these records).
 */
static void
column_default(struct router *r, const struct relcache_rel *rel, int i, bool notnull, int slot,
	       struct pgvalue *pv)
{
	struct pgoutput_col pc = { .kind = 't' };

	if (!r->defaults || !r->defaults[i]) {
		return;
	}
	buf_reset(&r->deftxt[slot]);
	if (default_literal(r->defaults[i], &r->deftxt[slot]) < 0) {
		return;
	}
	pc.value = (struct slice){ buf_cstr(&r->deftxt[slot]), r->deftxt[slot].len };
	if (pgvalue_convert(&rel->cols[i], &pc, notnull, r->binary, &r->defs[slot], NULL, 0) < 0) {
		return;
	}
	r->defs[slot].v.field = NULL;
	pv->v.def = &r->defs[slot].v;
	if (pv->v.is_null) {
		/* EventRouter reads columns with Struct.get(), which returns the default for null */
		pv->v.is_null = false;
		pv->v.u = r->defs[slot].v.u;
	}
}

/* Convert column @name into slot @slot; 1 if absent, 0 done, -EINVAL poison. */
static int
column(struct router *r, const struct relcache_rel *rel, const bool *notnull,
       const struct pgoutput_tuple *tup, const char *name, int slot, char *errbuf, size_t errlen)
{
	int i = find_col(rel, name);
	bool nn;

	if (i < 0) {
		return 1;
	}
	nn = notnull && notnull[i];
	if (pgvalue_convert(&rel->cols[i], &tup->cols[i], nn, r->binary, &r->vals[slot], errbuf,
			    errlen) < 0) {
		return -EINVAL;
	}
	column_default(r, rel, i, nn, slot, &r->vals[slot]);
	return 0;
}

/* The required columns: key, id, payload, route (Debezium's task fails without them). */
static int
required_columns(struct router *r, const struct relcache_rel *rel, const bool *notnull,
		 const struct pgoutput_tuple *tup, char *errbuf, size_t errlen)
{
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
		int rc = column(r, rel, notnull, tup, req[k].col, req[k].slot, errbuf, errlen);

		if (rc > 0) {
			errbuf_set(errbuf, errlen, "table %s.%s has no column '%s' (%s); Debezium's task "
			       "fails on this row; add the column or set %s", rel->nspname,
			       rel->relname, req[k].col, req[k].option, req[k].option);
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
route_topic(struct router *r, struct router_record *out, char *errbuf, size_t errlen)
{
	const struct cvalue *v = &r->vals[SLOT_ROUTE].v;
	int m;

	if (v->type != CVALUE_STRING) {
		errbuf_set(errbuf, errlen, "route.by.field column '%s' is not a string column; "
		       "Debezium fails with DataException; use a text/varchar column", r->col_route);
		return -EINVAL;
	}
	if (v->is_null) {
		errbuf_set(errbuf, errlen, "route.by.field column '%s' is NULL; Debezium's RegexRouter "
		       "fails (NullPointerException); make the column NOT NULL", r->col_route);
		return -EINVAL;
	}
	if (router_memo_lookup(&r->memo, v->u.s.p, v->u.s.len, &out->topic)) {
		return 0;
	}
	m = regex_java_matches(r->route_re, v->u.s.p, v->u.s.len);
	if (m < 0 || (m == 1 && regex_java_replace_first(r->route_re, v->u.s.p, v->u.s.len,
							 &out->topic) < 0)) {
		errbuf_set(errbuf, errlen, "route.topic.regex failed on '%.*s'", (int)v->u.s.len,
		       v->u.s.p);
		return -EINVAL;
	}
	if (m == 0) {
		buf_add(&out->topic, v->u.s.p, v->u.s.len);
	}
	if (!legal_topic(out->topic.data, out->topic.len)) {
		errbuf_set(errbuf, errlen, "topic '%s' (from %s='%.*s') is not a legal Kafka topic name "
		       "([a-zA-Z0-9._-], 1 to 249 characters); the broker would refuse it; fix the "
		       "row's %s or route.topic.replacement", buf_cstr(&out->topic), r->col_route,
		       (int)v->u.s.len, v->u.s.p, r->col_route);
		return -EINVAL;
	}
	router_memo_store(&r->memo, v->u.s.p, v->u.s.len, out->topic.data, out->topic.len);
	return 0;
}

/*
 * table.field.event.timestamp as getEventTimestampMs(): the column must be INT64 (else
 * DataException, even when NULL); NULL falls back to processing time; then its logical name
 * must be Timestamp (ms), MicroTimestamp (/1000) or NanoTimestamp (/1000000). PostgreSQL
 * timestamp(0..3) is Timestamp, timestamp(4..6) MicroTimestamp; timestamptz (a string) fails.
 */
static int
event_timestamp(struct router *r, const struct relcache_rel *rel, const bool *notnull,
		const struct pgoutput_tuple *tup, struct router_record *out, char *errbuf,
		size_t errlen)
{
	const struct cvalue *v = &r->vals[SLOT_TS].v;
	int rc;

	if (!r->col_ts) {
		return 0;
	}
	rc = column(r, rel, notnull, tup, r->col_ts, SLOT_TS, errbuf, errlen);
	if (rc > 0) {
		errbuf_set(errbuf, errlen, "table.field.event.timestamp column '%s' is missing from "
		       "%s.%s (Debezium: Unable to find timestamp field); add it or fix the option",
		       r->col_ts, rel->nspname, rel->relname);
		return -EINVAL;
	}
	if (rc < 0) {
		return -EINVAL;
	}
	if (v->type != CVALUE_INT64) {
		errbuf_set(errbuf, errlen, "table.field.event.timestamp column '%s' is not of type "
		       "INT64 (Debezium fails with DataException); use a timestamp (without time "
		       "zone) column", r->col_ts);
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
		errbuf_set(errbuf, errlen, "table.field.event.timestamp column '%s' has the "
		       "unsupported type %s (Debezium fails with ConnectException); use a timestamp "
		       "(without time zone) column", r->col_ts, v->name ? v->name : "int64");
		return -EINVAL;
	}
	if (out->timestamp_ms < 0) {
		errbuf_set(errbuf, errlen, "table.field.event.timestamp column '%s' is before 1970 "
		       "(%lld ms); Kafka refuses negative record timestamps", r->col_ts,
		       (long long)out->timestamp_ms);
		return -EINVAL;
	}
	return 0;
}

/* Placements in list order: headers appended, envelope fields collected, partition set. */
static int
placements(struct router *r, const struct relcache_rel *rel, const bool *notnull,
	   const struct pgoutput_tuple *tup, struct router_record *out, size_t *nenv,
	   char *errbuf, size_t errlen)
{
	for (size_t i = 0; i < r->npl; i++) {
		const struct placement *p = &r->pl[i];
		struct pgvalue *pv = &r->vals[SLOT_PLACEMENTS + i];
		int rc = column(r, rel, notnull, tup, p->column, SLOT_PLACEMENTS + (int)i, errbuf,
				errlen);

		if (rc > 0 && !r->missing_error) {
			continue;
		}
		if (rc > 0) {
			errbuf_set(errbuf, errlen, "table.fields.additional.placement column '%s' is "
			       "missing from %s.%s; add it or set table.field.additional.missing="
			       "ignore", p->column, rel->nspname, rel->relname);
			return -EINVAL;
		}
		if (rc < 0) {
			return -EINVAL;
		}
		if (p->where == PLACE_HEADER) {
			if (header_value(r, out, p->alias, &pv->v, errbuf, errlen) < 0) {
				return -EINVAL;
			}
		} else if (p->where == PLACE_ENVELOPE) {
			r->envfields[*nenv] = pv->v;
			r->envfields[(*nenv)++].field = p->alias;
		} else if (pv->v.type != CVALUE_INT32) {
			errbuf_set(errbuf, errlen, "partition placement column '%s' must be an integer "
			       "(int4) column; Debezium fails with DataException", p->column);
			return -EINVAL;
		} else if (!pv->v.is_null && !r->server) {
			/* Debezium Server's sink leaves the partition to the producer */
			out->partition = (int32_t)pv->v.u.i;
		}
	}
	return 0;
}

static struct envname *
envname_add(struct router *r, const struct relcache_rel *rel, const char *key)
{
	const struct cvalue *rv = &r->vals[SLOT_ROUTE].v;
	struct envname *e;

	r->envnames = xrealloc(r->envnames, (r->nenvnames + 1) * sizeof(*r->envnames));
	e = &r->envnames[r->nenvnames++];
	*e = (struct envname){ .key = xstrdup(key) };
	buf_reset(&r->tmp);
	buf_add_fmt(&r->tmp, "%s.%s.%s.%.*s.Value", r->topic_prefix, rel->nspname, rel->relname,
		    (int)rv->u.s.len, rv->u.s.p);
	e->name = buf_steal(&r->tmp);
	return e;
}

/*
 * Can @v stand under the cached payload schema @s (Struct.put()'s validation)? A null
 * needs an optional schema, a struct an equal schema (@same), anything else the same type.
 */
static bool
fits_cached(const struct cvalue *v, const struct cvalue *s, bool same)
{
	if (v->is_null) {
		return s->optional;
	}
	if (v->type == CVALUE_STRUCT || v->type == CVALUE_ARRAY) {
		return same;
	}
	return v->type == s->type && (v->type != CVALUE_BYTES || !v->name == !s->name);
}

/*
 * The envelope schema name, and the payload field as the envelope holds it. Unversioned,
 * the cache is keyed by payload schema and the first route value names it; versioned, the
 * first record of a version fixes name and payload schema (quirks §2.10).
 */
static int
envelope_schema(struct router *r, const struct relcache_rel *rel, const struct cvalue *payload,
		int32_t version, const char **ret_name, struct cvalue *ret_payload, char *errbuf,
		size_t errlen)
{
	struct buf key = BUF_INIT, skey = BUF_INIT;
	struct envname *e = NULL;

	(void)convert_schema_json(payload, &skey); /* text came through UTF-8 checks */
	if (r->col_version) {
		buf_add_fmt(&key, "v%d", (int)version);
	} else {
		buf_add(&key, skey.data, skey.len);
	}
	for (size_t i = 0; i < r->nenvnames && !e; i++) {
		if (strcmp(r->envnames[i].key, buf_cstr(&key)) == 0) {
			e = &r->envnames[i];
		}
	}
	if (!e) {
		e = envname_add(r, rel, buf_cstr(&key));
		if (r->col_version) {
			e->payload_key = xstrdup(buf_cstr(&skey));
			e->payload = router_expand_schema_dup(payload);
		}
	}
	*ret_name = e->name;
	*ret_payload = *payload;
	if (e->payload && strcmp(e->payload_key, buf_cstr(&skey)) != 0) {
		if (!fits_cached(payload, e->payload, false)) {
			errbuf_set(errbuf, errlen, "the payload schema differs from the first one seen "
			       "for schema version %d, which Debezium caches (DataException: Invalid "
			       "Java object for schema); give each payload shape its own version",
			       (int)version);
			buf_fini(&key);
			buf_fini(&skey);
			return -EINVAL;
		}
		*ret_payload = *e->payload;
		ret_payload->is_null = payload->is_null;
		ret_payload->u = payload->u;
	}
	buf_fini(&key);
	buf_fini(&skey);
	return 0;
}

static bool
java_blank(const struct cvalue *v)
{
	if (v->is_null) {
		return true;
	}
	if (v->type != CVALUE_STRING && !v->java_string) {
		return false; /* Struct.toString(), ByteBuffer.toString(), numbers: never blank */
	}
	for (size_t i = 0; i < v->u.s.len; i++) {
		if ((unsigned char)v->u.s.p[i] > ' ') {
			return false;
		}
	}
	return true;
}

/* The payload after table.expand.json.payload (§2.6), in r->payload. */
static void
expand_payload(struct router *r)
{
	const struct cvalue *v = &r->vals[SLOT_PAYLOAD].v;

	if (r->expand) {
		(void)router_expand_payload(r->exp, r->col_payload, r->null_bytes, r->adjust, v,
					    &v);
	}
	r->payload = *v;
	r->payload.field = NULL;
}

static int
build_envelope(struct router *r, const struct relcache_rel *rel, const bool *notnull,
	       const struct pgoutput_tuple *tup, size_t nenv, struct cvalue *env, char *errbuf,
	       size_t errlen)
{
	const struct cvalue *ver = &r->vals[SLOT_VERSION].v;
	int32_t version = 0;

	if (r->payload.java_string) {
		errbuf_set(errbuf, errlen, "table.expand.json.payload: the payload could not be "
		       "converted to the schema inferred from it, and the envelope refuses the "
		       "string left behind (Debezium: DataException: Invalid Java object for schema "
		       "... for field: \"payload\"); fix the payload JSON");
		return -EINVAL;
	}
	if (r->col_version) {
		int rc = column(r, rel, notnull, tup, r->col_version, SLOT_VERSION, errbuf, errlen);

		if (rc != 0 || ver->type != CVALUE_INT32) {
			if (rc >= 0) {
				errbuf_set(errbuf, errlen, "table.field.event.schema.version column "
				       "'%s' must be an int4 column of %s.%s (Debezium fails with "
				       "DataException)", r->col_version, rel->nspname,
				       rel->relname);
			}
			return -EINVAL;
		}
		/* Struct.getInt32() of NULL unboxed: NullPointerException in Debezium */
		if (ver->is_null) {
			errbuf_set(errbuf, errlen, "table.field.event.schema.version column '%s' is "
			       "NULL (Debezium fails with NullPointerException); make it NOT NULL",
			       r->col_version);
			return -EINVAL;
		}
		version = (int32_t)ver->u.i;
	}
	memmove(r->envfields + 1, r->envfields, nenv * sizeof(*r->envfields));
	*env = (struct cvalue){ .type = CVALUE_STRUCT, .version = version,
				.u.fields = { r->envfields, nenv + 1 } };
	if (envelope_schema(r, rel, &r->payload, version, &env->name, &r->envfields[0], errbuf,
			    errlen) < 0) {
		return -EINVAL;
	}
	r->envfields[0].field = "payload";
	return 0;
}

static int
build_value(struct router *r, const struct relcache_rel *rel, const bool *notnull,
	    const struct pgoutput_tuple *tup, size_t nenv, struct router_record *out,
	    char *errbuf, size_t errlen)
{
	struct cvalue env;
	const struct cvalue *v = &r->payload;

	if (r->envelope) {
		if (build_envelope(r, rel, notnull, tup, nenv, &env, errbuf, errlen) < 0) {
			return -EINVAL;
		}
		v = &env;
	}
	/* the tombstone test comes after the envelope is built, as in Debezium */
	if (r->tombstone_on_empty && java_blank(&r->payload)) {
		out->value_null = true;
		return 0;
	}
	return convert_write(r->value_conv, v, &out->value, &out->value_null, errbuf, errlen);
}

static int
route_row(struct router *r, const struct relcache_rel *rel, const bool *notnull,
	  const struct pgoutput_tuple *tup, struct router_record *out, char *errbuf,
	  size_t errlen)
{
	size_t nenv = 0;

	if (required_columns(r, rel, notnull, tup, errbuf, errlen) < 0 ||
	    route_topic(r, out, errbuf, errlen) < 0 ||
	    event_timestamp(r, rel, notnull, tup, out, errbuf, errlen) < 0 ||
	    (r->extended_headers && context_headers(r, out, errbuf, errlen) < 0) ||
	    header_value(r, out, "id", &r->vals[SLOT_ID].v, errbuf, errlen) < 0) {
		return -EINVAL;
	}
	expand_payload(r);
	if (placements(r, rel, notnull, tup, out, &nenv, errbuf, errlen) < 0 ||
	    build_value(r, rel, notnull, tup, nenv, out, errbuf, errlen) < 0 ||
	    convert_write(r->key_conv, &r->vals[SLOT_KEY].v, &out->key, &out->key_null, errbuf,
			  errlen) < 0) {
		return -EINVAL;
	}
	if (r->server) {
		out->timestamp_ms = -1; /* the sink's ProducerRecord has no timestamp */
	}
	return 0;
}

int
router_route(struct router *r, const struct relcache_rel *rel, const bool *notnull,
		      const char *const *defaults, char op, const struct pgoutput_tuple *tup,
		      struct router_record *out, enum router_verdict *ret_verdict, char *errbuf,
		      size_t errlen)
{
	static const enum router_verdict upd[] = { ROUTER_DROP_WARN, ROUTER_DROP_ERROR,
						   ROUTER_HALT };

	router_record_reset(out);
	switch (op) {
	case 'D':
	case 'T':
		*ret_verdict = ROUTER_DROP;
		return 0;
	case 'U':
		errbuf_set(errbuf, errlen, "UPDATE of outbox table %s.%s %s (table.op.invalid.behavior="
		       "%s); outbox rows are insert-only: fix the application, or set "
		       "table.op.invalid.behavior=warn to skip such rows", rel->nspname,
		       rel->relname, r->invalid_op == INVALID_OP_FATAL ? "stops the relay" :
		       "publishes nothing", r->invalid_op == INVALID_OP_WARN ? "warn" :
		       r->invalid_op == INVALID_OP_ERROR ? "error" : "fatal");
		*ret_verdict = upd[r->invalid_op];
		return 0;
	case 'I':
	case 'r':
		break;
	default:
		errbuf_set(errbuf, errlen, "router_route: unknown operation '%c'", op);
		return -EINVAL;
	}
	if (!tup || tup->ncols != rel->ncols) {
		errbuf_set(errbuf, errlen, "router_route: tuple has %d columns, relation %s.%s has %d",
		       tup ? tup->ncols : -1, rel->nspname, rel->relname, rel->ncols);
		return -EINVAL;
	}
	r->defaults = defaults;
	if (route_row(r, rel, notnull, tup, out, errbuf, errlen) < 0) {
		router_record_reset(out);
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
	int i = tup ? find_col(rel, r->col_id) : -1;

	if (i < 0 || i >= tup->ncols) {
		buf_add_fmt(out, "(no %s column)", r->col_id);
	} else if (tup->cols[i].kind != 't' && tup->cols[i].kind != 'b') {
		buf_add_str(out, "NULL");
	} else {
		buf_add(out, tup->cols[i].value.p, tup->cols[i].value.len);
	}
}

/* The raw text of column @name, or NULL (absent or SQL NULL). */
static const struct slice *
raw_column(const struct relcache_rel *rel, const struct pgoutput_tuple *tup, const char *name)
{
	int i = tup ? find_col(rel, name) : -1;

	if (i < 0 || i >= tup->ncols || (tup->cols[i].kind != 't' && tup->cols[i].kind != 'b')) {
		return NULL;
	}
	return &tup->cols[i].value;
}

static void
add_text_header(struct router_record *out, const char *name, const char *p, size_t len)
{
	struct router_header *h = add_header(out, name);

	buf_reset(&h->value);
	buf_add(&h->value, p, len);
}

void
router_dead_letter(struct router *r, const struct relcache_rel *rel, const bool *notnull,
		   const char *const *defaults, const struct pgoutput_tuple *tup,
		   const struct router_dead_letter_info *info, struct router_record *out)
{
	const struct slice *key = raw_column(rel, tup, r->col_key);
	const struct slice *id = raw_column(rel, tup, r->col_id);
	const struct slice *payload = raw_column(rel, tup, r->col_payload);
	char err[256];

	router_record_reset(out);
	buf_add_str(&out->topic, info->topic);
	r->defaults = defaults;
	/* The key the record would have had; its raw text when even that cannot be converted. */
	if (!tup || column(r, rel, notnull, tup, r->col_key, SLOT_KEY, err, sizeof(err)) != 0 ||
	    convert_write(r->key_conv, &r->vals[SLOT_KEY].v, &out->key, &out->key_null, err,
			  sizeof(err)) < 0) {
		buf_reset(&out->key);
		out->key_null = key == NULL;
		if (key) {
			buf_add(&out->key, key->p, key->len);
		}
	}
	out->value_null = !payload || !info->keep_value;
	if (!out->value_null) {
		buf_add(&out->value, payload->p, payload->len);
	}
	if (id) {
		add_text_header(out, "id", id->p, id->len);
	}
	add_text_header(out, "__outboxd.error.reason", info->reason, strlen(info->reason));
	add_text_header(out, "__outboxd.error.commit.lsn", info->commit_lsn,
			strlen(info->commit_lsn));
	add_text_header(out, "__outboxd.error.table", rel->nspname, strlen(rel->nspname));
	buf_add_char(&out->headers[out->nheaders - 1].value, '.');
	buf_add_str(&out->headers[out->nheaders - 1].value, rel->relname);
}

int
router_heartbeat(struct router *r, const char *topic, int64_t now_ms, struct router_record *out,
		 char *errbuf, size_t errlen)
{
	struct cvalue server = { .type = CVALUE_STRING, .field = "serverName",
				 .u.s = slice_from_str(r->topic_prefix) };
	struct cvalue ts = { .type = CVALUE_INT64, .field = "ts_ms", .u.i = now_ms };
	const struct cvalue key = { .type = CVALUE_STRUCT,
				    .name = "io.debezium.connector.common.ServerNameKey",
				    .version = 1, .u.fields = { &server, 1 } };
	const struct cvalue value = { .type = CVALUE_STRUCT,
				      .name = "io.debezium.connector.common.Heartbeat",
				      .version = 1, .u.fields = { &ts, 1 } };

	router_record_reset(out);
	buf_add_str(&out->topic, topic);
	/* Debezium's heartbeat SourceRecord names partition 0 and carries no headers. */
	out->partition = r->server ? -1 : 0;
	if (convert_write(r->key_conv, &key, &out->key, &out->key_null, errbuf, errlen) < 0 ||
	    convert_write(r->value_conv, &value, &out->value, &out->value_null, errbuf, errlen) < 0) {
		return -EINVAL;
	}
	return 0;
}

/* Debezium's PostgreSQL source block schema (io.debezium.connector.postgresql.Source v1). */
static const struct cvalue_param snapshot_allowed[] = {
	{ "allowed", "true,first,first_in_data_collection,last_in_data_collection,last,false,"
		     "incremental" },
};
static const struct cvalue snapshot_default = { .type = CVALUE_STRING, .optional = true,
						.name = "io.debezium.data.Enum", .version = 1,
						.u.s = { "false", 5 } };

static struct cvalue
str_field(const char *field, bool optional, const char *v)
{
	return (struct cvalue){ .type = CVALUE_STRING, .optional = optional, .field = field,
				.is_null = v == NULL, .u.s = slice_from_str(v) };
}

static struct cvalue
i64_field(const char *field, bool optional, bool present, int64_t v)
{
	return (struct cvalue){ .type = CVALUE_INT64, .optional = optional, .field = field,
				.is_null = !present, .u.i = v };
}

/* The source block of a message: @src holds 16 fields; strings point into @seq and @info. */
static void
message_source(const struct router *r, const struct pgoutput_msg *m,
	       const struct router_message_info *info, const char *seq, struct cvalue *src)
{
	int64_t us = info->commit_time_us;
	/* null for a message: JsonConverter writes the schema default, Struct.toString skips it */
	struct cvalue snap = str_field("snapshot", true, NULL);

	snap.name = "io.debezium.data.Enum";
	snap.version = 1;
	snap.params = snapshot_allowed;
	snap.nparams = 1;
	snap.def = &snapshot_default;
	src[0] = str_field("version", false, "3.6.1.Final");
	src[1] = str_field("connector", false, "postgresql");
	src[2] = str_field("name", false, r->topic_prefix);
	src[3] = i64_field("ts_ms", false, true, us / 1000);
	src[4] = snap;
	src[5] = str_field("db", false, info->dbname);
	src[6] = str_field("sequence", true, seq);
	src[7] = i64_field("ts_us", true, true, us);
	src[8] = i64_field("ts_ns", true, true, us * 1000);
	src[9] = str_field("schema", false, "");
	src[10] = str_field("table", false, "");
	src[11] = i64_field("txId", true, info->has_xid, info->xid);
	src[12] = i64_field("lsn", true, true, (int64_t)m->u.message.lsn);
	src[13] = i64_field("xmin", true, false, 0);
	src[14] = str_field("origin", true, NULL);
	src[15] = i64_field("origin_lsn", true, false, 0);
}

int
router_message(struct router *r, const struct pgoutput_msg *m,
	       const struct router_message_info *info, struct router_record *out,
	       char *errbuf, size_t errlen)
{
	struct cvalue src[16], block[3], msg[2], top[5];
	struct cvalue kf = { .type = CVALUE_STRING, .optional = true, .field = "prefix",
			     .u.s = m->u.message.prefix };
	const struct cvalue key = { .type = CVALUE_STRUCT,
				    .name = "io.debezium.connector.postgresql.MessageKey",
				    .version = 1, .u.fields = { &kf, 1 } };
	struct cvalue value = { .type = CVALUE_STRUCT,
				.name = "io.debezium.connector.postgresql.MessageValue",
				.version = 1, .u.fields = { top, 5 } };
	struct buf seq = BUF_INIT;
	int rc = 0;

	/* sequence: ["<last commit LSN>","<this LSN>"] as decimal strings, JSON in a string */
	if (info->has_last_commit) {
		buf_add_fmt(&seq, "[\"%llu\",", (unsigned long long)info->last_commit_lsn);
	} else {
		buf_add_str(&seq, "[null,");
	}
	buf_add_fmt(&seq, "\"%llu\"]", (unsigned long long)m->u.message.lsn);
	message_source(r, m, info, buf_cstr(&seq), src);
	block[0] = str_field("id", false, "");
	block[1] = i64_field("total_order", false, true, 0);
	block[2] = i64_field("data_collection_order", false, true, 0);
	msg[0] = (struct cvalue){ .type = CVALUE_STRING, .optional = true, .field = "prefix",
				  .u.s = m->u.message.prefix };
	msg[1] = (struct cvalue){ .type = CVALUE_BYTES, .optional = true, .field = "content",
				  .u.s = m->u.message.content };
	top[0] = str_field("op", false, "m");
	top[1] = i64_field("ts_ms", true, true, info->now_ms);
	top[2] = (struct cvalue){ .type = CVALUE_STRUCT, .field = "source",
				  .name = "io.debezium.connector.postgresql.Source", .version = 1,
				  .u.fields = { src, 16 } };
	top[3] = (struct cvalue){ .type = CVALUE_STRUCT, .optional = true, .is_null = true,
				  .field = "transaction", .name = "event.block", .version = 1,
				  .u.fields = { block, 3 } };
	top[4] = (struct cvalue){ .type = CVALUE_STRUCT, .field = "message",
				  .name = "io.debezium.connector.postgresql.Message", .version = 1,
				  .u.fields = { msg, 2 } };
	router_record_reset(out);
	buf_add_fmt(&out->topic, "%s.message", r->topic_prefix);
	if (convert_write(r->key_conv, &key, &out->key, &out->key_null, errbuf, errlen) < 0 ||
	    convert_write(r->value_conv, &value, &out->value, &out->value_null, errbuf, errlen) < 0) {
		rc = -EINVAL;
	}
	buf_fini(&seq);
	return rc;
}
