/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/router.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "outboxd/errbuf.h"
#include "outboxd/convert.h"
#include "outboxd/mem.h"
#include "outboxd/pgvalue.h"
#include "outboxd/regex_java.h"

#define EVENT_ROUTER "io.debezium.transforms.outbox.EventRouter"

/* Scratch slots for the converted columns of a row; placements follow. */
enum {
	SLOT_KEY,
	SLOT_ID,
	SLOT_PAYLOAD,
	SLOT_ROUTE,
	SLOT_TS,
	SLOT_VERSION,
	SLOT_PLACEMENTS,
};

enum placement_where {
	PLACE_HEADER,
	PLACE_ENVELOPE,
	PLACE_PARTITION,
};

struct placement {
	char *column;		/* owned */
	char *alias;		/* owned */
	enum placement_where where;
};

enum invalid_op {
	INVALID_OP_WARN,
	INVALID_OP_ERROR,
	INVALID_OP_FATAL,
};

/* Envelope schema names, cached by payload schema as Debezium does (quirk §2.10). */
struct envname {
	char *key;		/* owned: payload schema description or version number */
	char *name;		/* owned */
};

struct router {
	char *topic_prefix, *run_id;
	struct regex_java **include;	/* owned; NULL = every table */
	size_t ninclude;
	char *col_id, *col_key, *col_payload, *col_route, *col_ts, *col_version;
	struct regex_java *route_re;
	bool tombstone_on_empty;
	enum invalid_op invalid_op;
	bool missing_error;
	struct placement *pl;
	size_t npl;
	bool envelope;
	struct convert *key_conv, *value_conv, *header_conv;
	bool extended_headers;
	enum pgvalue_binary binary;
	enum jsonw_double_format dfmt;
	struct envname *envnames;
	size_t nenvnames;
	/* scratch, reused per row: key, id, payload, then one per placement */
	struct pgvalue *vals;
	struct cvalue *envfields;
	struct buf route, tmp;
};

/* A trimmed copy of @s (Debezium trims option values). */
static char *
trimdup(const char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t') {
		s++;
	}
	n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) {
		n--;
	}
	return xstrndup(s, n);
}

/* Pick @v (trimmed, case-insensitive) from @words; -1 if absent. */
static int
pick(const char *v, const char *const *words)
{
	char *t = trimdup(v);
	int i;

	for (i = 0; words[i]; i++) {
		if (strcasecmp(t, words[i]) == 0) {
			break;
		}
	}
	free(t);
	return words[i] ? i : -1;
}

static const char *const smt_known[] = {
	"type", "table.field.event.id", "table.field.event.key", "table.field.event.type",
	"table.field.event.payload", "table.field.event.timestamp",
	"table.fields.additional.placement", "table.field.additional.missing",
	"table.fields.additional.error.on.missing", "table.field.event.schema.version",
	"route.by.field", "route.topic.regex", "route.topic.replacement",
	"route.tombstone.on.empty.payload", "table.op.invalid.behavior",
	"debezium.op.invalid.behavior", "table.expand.json.payload",
	"table.json.payload.null.behavior", "tracing.span.context.field", "tracing.operation.name",
	"tracing.with.context.field.only", "field.name.adjustment.mode",
	"table.field.event.payload.id", NULL,
};

static const char *
opt(const struct router_config *cfg, const char *key, const char *dflt)
{
	const char *v = cfg->smt ? kv_get(cfg->smt, key) : NULL;

	return v ? v : dflt;
}

static int
opt_bool(const struct router_config *cfg, const char *key, bool dflt, bool *ret, char *errbuf,
	 size_t errlen)
{
	static const char *const words[] = { "false", "true", NULL };
	const char *v = opt(cfg, key, NULL);
	int i;

	if (!v) {
		*ret = dflt;
		return 0;
	}
	i = pick(v, words);
	if (i < 0) {
		errbuf_set(errbuf, errlen, "EventRouter option %s='%s' is not a boolean; use true or "
		       "false", key, v);
		return -EINVAL;
	}
	*ret = i == 1;
	return 0;
}

static int
opt_enum(const struct router_config *cfg, const char *key, const char *const *words, int *ret,
	 char *errbuf, size_t errlen)
{
	const char *v = opt(cfg, key, NULL);
	int i;

	if (!v) {
		return 0;
	}
	i = pick(v, words);
	if (i < 0) {
		struct buf b = BUF_INIT;

		for (int k = 0; words[k]; k++) {
			buf_add_fmt(&b, "%s%s", k ? ", " : "", words[k]);
		}
		errbuf_set(errbuf, errlen, "EventRouter option %s='%s' is invalid; use one of: %s", key,
		       v, buf_cstr(&b));
		buf_fini(&b);
		return -EINVAL;
	}
	*ret = i;
	return 0;
}

/* A column-name option: trimmed, non-empty. */
static int
opt_column(const struct router_config *cfg, const char *key, const char *dflt, char **ret,
	   char *errbuf, size_t errlen)
{
	const char *v = opt(cfg, key, dflt);
	char *t;

	if (!v) {
		*ret = NULL;
		return 0;
	}
	t = trimdup(v);
	if (!*t) {
		errbuf_set(errbuf, errlen, "EventRouter option %s is empty; name a column of the outbox "
		       "table or remove the option", key);
		free(t);
		return -EINVAL;
	}
	*ret = t;
	return 0;
}

static int
check_keys(const struct router_config *cfg, char *errbuf, size_t errlen)
{
	for (size_t i = 0; cfg->smt && i < cfg->smt->n; i++) {
		const struct kv_entry *e = &cfg->smt->v[i];
		size_t k;

		if (strcmp(e->key, "predicate") == 0 || strcmp(e->key, "negate") == 0) {
			errbuf_set(errbuf, errlen, "%s: transform option '%s' (SMT predicates) is not "
			       "supported yet; use table.include.list to choose the outbox table",
			       e->origin ? e->origin : "config", e->key);
			return -EINVAL;
		}
		for (k = 0; smt_known[k]; k++) {
			if (strcmp(e->key, smt_known[k]) == 0) {
				break;
			}
		}
		if (!smt_known[k]) {
			errbuf_set(errbuf, errlen, "%s: unknown EventRouter option '%s'; check the "
			       "spelling against Debezium 3.6.1's outbox EventRouter options",
			       e->origin ? e->origin : "config", e->key);
			return -EINVAL;
		}
	}
	if (cfg->smt && kv_get(cfg->smt, "type") &&
	    pick(kv_get(cfg->smt, "type"), (const char *const[]){ EVENT_ROUTER, NULL }) < 0) {
		errbuf_set(errbuf, errlen, "transform type '%s' is not supported; outboxd implements "
		       EVENT_ROUTER " only", kv_get(cfg->smt, "type"));
		return -EINVAL;
	}
	return 0;
}

static int
parse_placement_entry(struct router *r, char *entry, char *errbuf, size_t errlen)
{
	static const char *const words[] = { "header", "envelope", "partition", NULL };
	char *parts[4] = { 0 };
	int n = 0, w;
	struct placement *p;

	for (char *s = entry, *c;; s = c + 1) {
		c = strchr(s, ':');
		if (n == 3) {
			n = 4;
			break;
		}
		parts[n++] = s;
		if (!c) {
			break;
		}
		*c = '\0';
	}
	if (n < 2 || n > 3) {
		errbuf_set(errbuf, errlen, "table.fields.additional.placement entry '%s' must be "
		       "column:placement[:alias]", entry);
		return -EINVAL;
	}
	w = pick(parts[1], words);
	if (w < 0) {
		errbuf_set(errbuf, errlen, "table.fields.additional.placement: unknown placement '%s' "
		       "(Debezium would fail on every record); use header, envelope or partition",
		       parts[1]);
		return -EINVAL;
	}
	r->pl = xrealloc(r->pl, (r->npl + 1) * sizeof(*r->pl));
	p = &r->pl[r->npl++];
	p->column = trimdup(parts[0]);
	p->alias = trimdup(n == 3 ? parts[2] : parts[0]);
	p->where = (enum placement_where)w;
	if (!*p->column || !*p->alias) {
		errbuf_set(errbuf, errlen, "table.fields.additional.placement entry has an empty column "
		       "or alias");
		return -EINVAL;
	}
	return 0;
}

static int
parse_placements(struct router *r, const char *v, char *errbuf, size_t errlen)
{
	char *copy = xstrdup(v), *s = copy, *c;
	int rc = 0;

	for (;; s = c + 1) {
		char *t;

		c = strchr(s, ',');
		if (c) {
			*c = '\0';
		}
		t = trimdup(s);
		rc = *t ? parse_placement_entry(r, t, errbuf, errlen) : -EINVAL;
		if (!*t) {
			errbuf_set(errbuf, errlen, "table.fields.additional.placement has an empty entry "
			       "in '%s'; remove the extra comma or the option", v);
		}
		free(t);
		if (rc < 0 || !c) {
			break;
		}
	}
	free(copy);
	for (size_t i = 0; rc == 0 && i < r->npl; i++) {
		if (r->pl[i].where != PLACE_ENVELOPE) {
			continue;
		}
		r->envelope = true;
		for (size_t k = 0; k < i; k++) {
			if (r->pl[k].where == PLACE_ENVELOPE &&
			    strcmp(r->pl[k].alias, r->pl[i].alias) == 0) {
				errbuf_set(errbuf, errlen, "table.fields.additional.placement: envelope "
				       "alias '%s' is used twice; give each its own alias",
				       r->pl[i].alias);
				return -EINVAL;
			}
		}
		if (strcmp(r->pl[i].alias, "payload") == 0) {
			errbuf_set(errbuf, errlen, "table.fields.additional.placement: envelope alias "
			       "'payload' clashes with the payload field; choose another alias");
			return -EINVAL;
		}
	}
	return rc;
}

/* table.include.list: comma-separated, "\," is a literal comma. */
static int
parse_include(struct router *r, const char *list, char *errbuf, size_t errlen)
{
	struct buf cur = BUF_INIT;
	int rc = 0;

	for (const char *p = list;; p++) {
		if (*p == '\\' && p[1] == ',') {
			buf_add_char(&cur, ',');
			p++;
			continue;
		}
		if (*p && *p != ',') {
			buf_add_char(&cur, *p);
			continue;
		}
		{
			char *t = trimdup(buf_cstr(&cur));

			if (*t) {
				r->include = xrealloc(r->include,
						      (r->ninclude + 1) * sizeof(*r->include));
				rc = regex_java_compile(t, true, &r->include[r->ninclude], errbuf,
							errlen);
				if (rc == 0) {
					r->ninclude++;
				}
			}
			free(t);
		}
		buf_reset(&cur);
		if (rc < 0 || !*p) {
			break;
		}
	}
	buf_fini(&cur);
	if (rc < 0) {
		size_t n = strlen(errbuf ? errbuf : "");

		if (errbuf && n + 1 < errlen) {
			snprintf(errbuf + n, errlen - n, " (in table.include.list)");
		}
	}
	return rc;
}

static int
setup_route(struct router *r, const struct router_config *cfg, char *errbuf, size_t errlen)
{
	const char *re = opt(cfg, "route.topic.regex", "(?<routedByValue>.*)");
	const char *repl = opt(cfg, "route.topic.replacement", "outbox.event.${routedByValue}");

	if (regex_java_compile(re, false, &r->route_re, errbuf, errlen) < 0 ||
	    regex_java_set_replacement(r->route_re, repl, errbuf, errlen) < 0) {
		size_t n = errbuf ? strlen(errbuf) : 0;

		if (errbuf && n + 1 < errlen) {
			snprintf(errbuf + n, errlen - n, " (EventRouter route.topic.regex / "
				 "route.topic.replacement)");
		}
		return -EINVAL;
	}
	return 0;
}

static int
setup_modes(struct router *r, const struct router_config *cfg, char *errbuf, size_t errlen)
{
	static const char *const binary[] = { "bytes", "base64", "base64-url-safe", "hex", NULL };
	int b = 0;

	if (cfg->binary_handling_mode) {
		b = pick(cfg->binary_handling_mode, binary);
		if (b < 0) {
			errbuf_set(errbuf, errlen, "binary.handling.mode='%s' is invalid; use bytes, "
			       "base64, base64-url-safe or hex", cfg->binary_handling_mode);
			return -EINVAL;
		}
	}
	r->binary = (enum pgvalue_binary)b;
	if (cfg->time_precision_mode &&
	    pick(cfg->time_precision_mode,
		 (const char *const[]){ "adaptive", "adaptive_time_microseconds", NULL }) < 0) {
		errbuf_set(errbuf, errlen, "time.precision.mode='%s' is not supported yet; use "
		       "adaptive (the default) or adaptive_time_microseconds",
		       cfg->time_precision_mode);
		return -EINVAL;
	}
	if (cfg->decimal_handling_mode &&
	    pick(cfg->decimal_handling_mode, (const char *const[]){ "precise", NULL }) < 0) {
		errbuf_set(errbuf, errlen, "decimal.handling.mode='%s' is not supported yet; use "
		       "precise (the default)", cfg->decimal_handling_mode);
		return -EINVAL;
	}
	return jsonw_double_format_parse(cfg->double_format, &r->dfmt, errbuf, errlen);
}

static int
setup_converters(struct router *r, const struct router_config *cfg, char *errbuf, size_t errlen)
{
	const char *json = "org.apache.kafka.connect.json.JsonConverter";

	if (convert_new(cfg->key_converter ? cfg->key_converter : json, cfg->key_converter_opts,
			CONVERT_KEY, &r->key_conv, errbuf, errlen) < 0 ||
	    convert_new(cfg->value_converter ? cfg->value_converter : json,
			cfg->value_converter_opts, CONVERT_VALUE, &r->value_conv, errbuf,
			errlen) < 0 ||
	    convert_new(cfg->header_converter ? cfg->header_converter :
						"org.apache.kafka.connect.storage.SimpleHeaderConverter",
			cfg->header_converter_opts, CONVERT_HEADER, &r->header_conv, errbuf,
			errlen) < 0) {
		return -EINVAL;
	}
	convert_set_double_format(r->key_conv, r->dfmt);
	convert_set_double_format(r->value_conv, r->dfmt);
	convert_set_double_format(r->header_conv, r->dfmt);
	return 0;
}

static int
setup_options(struct router *r, const struct router_config *cfg, char *errbuf, size_t errlen)
{
	static const char *const invalid[] = { "warn", "error", "fatal", NULL };
	static const char *const missing[] = { "error", "ignore", NULL };
	int inv = INVALID_OP_WARN, miss = 0, dummy = 0;
	bool b, legacy;
	const char *v;
	char *unused = NULL;

	if (opt_column(cfg, "table.field.event.id", "id", &r->col_id, errbuf, errlen) < 0 ||
	    opt_column(cfg, "table.field.event.key", "aggregateid", &r->col_key, errbuf,
		       errlen) < 0 ||
	    opt_column(cfg, "table.field.event.payload", "payload", &r->col_payload, errbuf,
		       errlen) < 0 ||
	    opt_column(cfg, "route.by.field", "aggregatetype", &r->col_route, errbuf, errlen) < 0 ||
	    opt_column(cfg, "table.field.event.timestamp", NULL, &r->col_ts, errbuf, errlen) < 0 ||
	    opt_column(cfg, "table.field.event.schema.version", NULL, &r->col_version, errbuf,
		       errlen) < 0 ||
	    opt_column(cfg, "table.field.event.type", "type", &unused, errbuf, errlen) < 0) {
		return -EINVAL;
	}
	free(unused); /* validated; unused since Debezium 1.2 (DBZ-2014) */
	if (opt_bool(cfg, "route.tombstone.on.empty.payload", false, &r->tombstone_on_empty,
		     errbuf, errlen) < 0 ||
	    opt_bool(cfg, "tracing.with.context.field.only", false, &b, errbuf, errlen) < 0 ||
	    opt_enum(cfg, "debezium.op.invalid.behavior", invalid, &inv, errbuf, errlen) < 0 ||
	    opt_enum(cfg, "table.op.invalid.behavior", invalid, &inv, errbuf, errlen) < 0 ||
	    opt_enum(cfg, "table.json.payload.null.behavior",
		     (const char *const[]){ "ignore", "optional_bytes", NULL }, &dummy, errbuf,
		     errlen) < 0 ||
	    opt_enum(cfg, "field.name.adjustment.mode",
		     (const char *const[]){ "none", "avro", "avro_unicode", NULL }, &dummy, errbuf,
		     errlen) < 0 ||
	    opt_bool(cfg, "table.fields.additional.error.on.missing", true, &legacy, errbuf,
		     errlen) < 0 ||
	    opt_enum(cfg, "table.field.additional.missing", missing, &miss, errbuf, errlen) < 0 ||
	    opt_bool(cfg, "table.expand.json.payload", false, &b, errbuf, errlen) < 0) {
		return -EINVAL;
	}
	if (b) {
		errbuf_set(errbuf, errlen, "EventRouter option table.expand.json.payload=true is not "
		       "supported yet; remove it (or set false) and consume the payload as a JSON "
		       "string");
		return -EINVAL;
	}
	r->invalid_op = (enum invalid_op)inv;
	r->missing_error = opt(cfg, "table.field.additional.missing", NULL) ? miss == 0 : legacy;
	v = opt(cfg, "table.fields.additional.placement", NULL);
	if (v && parse_placements(r, v, errbuf, errlen) < 0) {
		return -EINVAL;
	}
	return 0;
}

int
router_new(const struct router_config *cfg, struct router **ret, char *errbuf, size_t errlen)
{
	struct router *r = znew(*r);

	r->topic_prefix = xstrdup(cfg->topic_prefix ? cfg->topic_prefix : "");
	r->run_id = xstrdup(cfg->run_id ? cfg->run_id : "");
	r->extended_headers = cfg->extended_headers;
	if (check_keys(cfg, errbuf, errlen) < 0 || setup_options(r, cfg, errbuf, errlen) < 0 ||
	    setup_route(r, cfg, errbuf, errlen) < 0 || setup_modes(r, cfg, errbuf, errlen) < 0 ||
	    setup_converters(r, cfg, errbuf, errlen) < 0 ||
	    (cfg->table_include_list && parse_include(r, cfg->table_include_list, errbuf,
						      errlen) < 0)) {
		router_free(r);
		return -EINVAL;
	}
	r->vals = xcalloc(SLOT_PLACEMENTS + r->npl, sizeof(*r->vals));
	r->envfields = xcalloc(1 + r->npl, sizeof(*r->envfields));
	*ret = r;
	return 0;
}

void
router_free(struct router *r)
{
	if (!r) {
		return;
	}
	for (size_t i = 0; i < r->ninclude; i++) {
		regex_java_free(r->include[i]);
	}
	free(r->include);
	for (size_t i = 0; i < r->npl; i++) {
		free(r->pl[i].column);
		free(r->pl[i].alias);
	}
	for (size_t i = 0; r->vals && i < SLOT_PLACEMENTS + r->npl; i++) {
		pgvalue_fini(&r->vals[i]);
	}
	for (size_t i = 0; i < r->nenvnames; i++) {
		free(r->envnames[i].key);
		free(r->envnames[i].name);
	}
	free(r->envnames);
	free(r->vals);
	free(r->envfields);
	free(r->pl);
	regex_java_free(r->route_re);
	convert_free(r->key_conv);
	convert_free(r->value_conv);
	convert_free(r->header_conv);
	buf_fini(&r->route);
	buf_fini(&r->tmp);
	free(r->col_id);
	free(r->col_key);
	free(r->col_payload);
	free(r->col_route);
	free(r->col_ts);
	free(r->col_version);
	free(r->topic_prefix);
	free(r->run_id);
	free(r);
}

bool
router_selects(const struct router *r, const char *nspname, const char *relname)
{
	struct buf full = BUF_INIT;
	bool hit = r->ninclude == 0;

	buf_add_fmt(&full, "%s.%s", nspname, relname);
	for (size_t i = 0; !hit && i < r->ninclude; i++) {
		hit = regex_java_matches(r->include[i], full.data, full.len) == 1;
	}
	buf_fini(&full);
	return hit;
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

static int
header_value(struct router *r, struct router_record *rec, const char *name,
	     const struct cvalue *v, char *errbuf, size_t errlen)
{
	struct router_header *h = add_header(rec, name);

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

/* Convert column @name into slot @slot; 1 if absent, 0 done, -EINVAL poison. */
static int
column(struct router *r, const struct relcache_rel *rel, const bool *notnull,
       const struct pgoutput_tuple *tup, const char *name, int slot, char *errbuf, size_t errlen)
{
	int i = find_col(rel, name);

	if (i < 0) {
		return 1;
	}
	return pgvalue_convert(&rel->cols[i], &tup->cols[i], notnull && notnull[i], r->binary,
			       &r->vals[slot], errbuf, errlen);
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
	return 0;
}

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
		errbuf_set(errbuf, errlen, "table.field.event.timestamp column '%s' is missing",
		       r->col_ts);
		return -EINVAL;
	}
	if (rc < 0) {
		return -EINVAL;
	}
	if (v->type != CVALUE_INT64 || !v->name) {
		errbuf_set(errbuf, errlen, "table.field.event.timestamp column '%s' must be a timestamp "
		       "(without time zone) column; Debezium fails on other types", r->col_ts);
		return -EINVAL;
	}
	if (!v->is_null) {
		out->timestamp_ms = strcmp(v->name, "io.debezium.time.Timestamp") == 0 ?
					    v->u.i : v->u.i / 1000;
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
		} else if (!pv->v.is_null) {
			out->partition = (int32_t)pv->v.u.i;
		}
	}
	return 0;
}

/* Envelope schema name: the first route value seen for this payload schema wins (§2.10). */
static const char *
envelope_name(struct router *r, const struct relcache_rel *rel, const struct cvalue *payload,
	      bool versioned, int32_t version)
{
	const struct cvalue *rv = &r->vals[SLOT_ROUTE].v;
	struct envname *e;

	buf_reset(&r->tmp);
	if (versioned) {
		buf_add_fmt(&r->tmp, "v%d", (int)version);
	} else {
		buf_add_fmt(&r->tmp, "s%d/%d/%s/%d/%s", (int)payload->type, payload->optional,
			    payload->name ? payload->name : "", (int)payload->version,
			    payload->doc ? payload->doc : "");
	}
	for (size_t i = 0; i < r->nenvnames; i++) {
		if (strcmp(r->envnames[i].key, r->tmp.data) == 0) {
			return r->envnames[i].name;
		}
	}
	r->envnames = xrealloc(r->envnames, (r->nenvnames + 1) * sizeof(*r->envnames));
	e = &r->envnames[r->nenvnames++];
	e->key = xstrdup(r->tmp.data);
	buf_reset(&r->tmp);
	buf_add_fmt(&r->tmp, "%s.%s.%s.%.*s.Value", r->topic_prefix, rel->nspname, rel->relname,
		    (int)rv->u.s.len, rv->u.s.p);
	e->name = buf_steal(&r->tmp);
	return e->name;
}

static bool
java_blank(const struct cvalue *v)
{
	if (v->is_null) {
		return true;
	}
	if (v->type != CVALUE_STRING) {
		return false;
	}
	for (size_t i = 0; i < v->u.s.len; i++) {
		if ((unsigned char)v->u.s.p[i] > ' ') {
			return false;
		}
	}
	return true;
}

static int
build_value(struct router *r, const struct relcache_rel *rel, const bool *notnull,
	    const struct pgoutput_tuple *tup, size_t nenv, struct router_record *out,
	    char *errbuf, size_t errlen)
{
	struct cvalue env, *payload = &r->vals[SLOT_PAYLOAD].v;
	const struct cvalue *v = payload;
	int32_t version = 0;

	if (r->tombstone_on_empty && java_blank(payload)) {
		out->value_null = true;
		return 0;
	}
	if (r->envelope) {
		const struct cvalue *ver = &r->vals[SLOT_VERSION].v;

		if (r->col_version) {
			int rc = column(r, rel, notnull, tup, r->col_version, SLOT_VERSION, errbuf,
					errlen);

			if (rc != 0 || ver->type != CVALUE_INT32 || ver->is_null) {
				if (rc >= 0) {
					errbuf_set(errbuf, errlen, "table.field.event.schema.version "
					       "column '%s' must be a non-NULL int4 column",
					       r->col_version);
				}
				return -EINVAL;
			}
			version = (int32_t)ver->u.i;
		}
		memmove(r->envfields + 1, r->envfields, nenv * sizeof(*r->envfields));
		r->envfields[0] = *payload;
		r->envfields[0].field = "payload";
		env = (struct cvalue){ .type = CVALUE_STRUCT, .version = version,
				       .u.fields = { r->envfields, nenv + 1 } };
		env.name = envelope_name(r, rel, payload, r->col_version != NULL, version);
		v = &env;
	}
	return convert_write(r->value_conv, v, &out->value, &out->value_null, errbuf, errlen);
}

static int
route_row(struct router *r, const struct relcache_rel *rel, const bool *notnull,
	  const struct pgoutput_tuple *tup, struct router_record *out, char *errbuf,
	  size_t errlen)
{
	size_t nenv = 0;
	struct router_header *h;

	if (required_columns(r, rel, notnull, tup, errbuf, errlen) < 0 ||
	    route_topic(r, out, errbuf, errlen) < 0 ||
	    event_timestamp(r, rel, notnull, tup, out, errbuf, errlen) < 0 ||
	    (r->extended_headers && context_headers(r, out, errbuf, errlen) < 0)) {
		return -EINVAL;
	}
	h = add_header(out, "id");
	if (convert_write(r->header_conv, &r->vals[SLOT_ID].v, &h->value, &h->null, errbuf,
			  errlen) < 0 ||
	    placements(r, rel, notnull, tup, out, &nenv, errbuf, errlen) < 0 ||
	    build_value(r, rel, notnull, tup, nenv, out, errbuf, errlen) < 0 ||
	    convert_write(r->key_conv, &r->vals[SLOT_KEY].v, &out->key, &out->key_null, errbuf,
			  errlen) < 0) {
		return -EINVAL;
	}
	return 0;
}

int
router_route(struct router *r, const struct relcache_rel *rel, const bool *notnull, char op,
	     const struct pgoutput_tuple *tup, struct router_record *out,
	     enum router_verdict *ret_verdict, char *errbuf, size_t errlen)
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
