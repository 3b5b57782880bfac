/* SPDX-License-Identifier: Apache-2.0 */
#include "router_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "outboxd/connect/configdef.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"

#define EVENT_ROUTER "io.debezium.transforms.outbox.EventRouter"

/*
 * EventRouter and connector options -> struct router, validated as EventRouter.configure()
 * and the connector validate them at start (reference §1).
 */

static const char *const smt_known[] = {
	"type",
	"table.field.event.id",
	"table.field.event.key",
	"table.field.event.type",
	"table.field.event.payload",
	"table.field.event.timestamp",
	"table.fields.additional.placement",
	"table.field.additional.missing",
	"table.fields.additional.error.on.missing",
	"table.field.event.schema.version",
	"route.by.field",
	"route.topic.regex",
	"route.topic.replacement",
	"route.tombstone.on.empty.payload",
	"table.op.invalid.behavior",
	"debezium.op.invalid.behavior",
	"table.expand.json.payload",
	"table.json.payload.null.behavior",
	"tracing.span.context.field",
	"tracing.operation.name",
	"tracing.with.context.field.only",
	"field.name.adjustment.mode",
	"table.field.event.payload.id",
	NULL,
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
	const char *v = opt(cfg, key, NULL);

	if (!v) {
		*ret = dflt;
		return 0;
	}
	if (configdef_bool(v, ret) < 0) {
		errbuf_set(errbuf, errlen,
			   "EventRouter option %s='%s' is not a boolean; use true or "
			   "false",
			   key, v);
		return -EINVAL;
	}
	return 0;
}

/* An enumerated option (EnumeratedValue.parse); @words are '|'-separated, *ret their index. */
static int
opt_enum(const struct router_config *cfg, const char *key, const char *words, int *ret,
	 char *errbuf, size_t errlen)
{
	const char *v = opt(cfg, key, NULL);
	int i;

	if (!v) {
		return 0;
	}
	i = configdef_enum(v, words, NULL);
	if (i < 0) {
		struct buf b = BUF_INIT;

		for (const char *w = words; *w; w++) {
			if (*w == '|') {
				buf_add_str(&b, ", ");
			} else {
				buf_add_char(&b, *w);
			}
		}
		errbuf_set(errbuf, errlen, "EventRouter option %s='%s' is invalid; use one of: %s",
			   key, v, buf_cstr(&b));
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
	t = configdef_trimdup(v);
	if (!*t) {
		errbuf_set(errbuf, errlen,
			   "EventRouter option %s is empty; name a column of the outbox "
			   "table or remove the option",
			   key);
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
			errbuf_set(
				errbuf, errlen,
				"%s: transform option '%s' (SMT predicates) is not "
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
			errbuf_set(errbuf, errlen,
				   "%s: unknown EventRouter option '%s'; check the "
				   "spelling against Debezium 3.6.1's outbox EventRouter options",
				   e->origin ? e->origin : "config", e->key);
			return -EINVAL;
		}
	}
	if (cfg->smt && kv_get(cfg->smt, "type") &&
	    !configdef_eq(kv_get(cfg->smt, "type"), EVENT_ROUTER)) {
		errbuf_set(errbuf, errlen,
			   "transform type '%s' is not supported; outboxd implements " EVENT_ROUTER
			   " only",
			   kv_get(cfg->smt, "type"));
		return -EINVAL;
	}
	return 0;
}

static int
parse_placement_entry(struct router *r, char *entry, char *errbuf, size_t errlen)
{
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
		errbuf_set(errbuf, errlen,
			   "table.fields.additional.placement entry '%s' must be "
			   "column:placement[:alias]",
			   entry);
		return -EINVAL;
	}
	w = configdef_enum(parts[1], "header|envelope|partition", NULL);
	if (w < 0) {
		errbuf_set(
			errbuf, errlen,
			"table.fields.additional.placement: unknown placement '%s' "
			"(Debezium would fail on every record); use header, envelope or partition",
			parts[1]);
		return -EINVAL;
	}
	r->pl = xrealloc(r->pl, (r->npl + 1) * sizeof(*r->pl));
	p = &r->pl[r->npl++];
	p->column = configdef_trimdup(parts[0]);
	p->alias = configdef_trimdup(n == 3 ? parts[2] : parts[0]);
	p->where = (enum placement_where)w;
	if (!*p->column || !*p->alias) {
		errbuf_set(errbuf, errlen,
			   "table.fields.additional.placement entry has an empty column "
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
		t = configdef_trimdup(s);
		rc = *t ? parse_placement_entry(r, t, errbuf, errlen) : -EINVAL;
		if (!*t) {
			errbuf_set(errbuf, errlen,
				   "table.fields.additional.placement has an empty entry "
				   "in '%s'; remove the extra comma or the option",
				   v);
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
				errbuf_set(errbuf, errlen,
					   "table.fields.additional.placement: envelope "
					   "alias '%s' is used twice; give each its own alias",
					   r->pl[i].alias);
				return -EINVAL;
			}
		}
		if (strcmp(r->pl[i].alias, "payload") == 0) {
			errbuf_set(
				errbuf, errlen,
				"table.fields.additional.placement: envelope alias "
				"'payload' clashes with the payload field; choose another alias");
			return -EINVAL;
		}
	}
	return rc;
}

/* A table/schema/prefix list: Debezium's comma-separated Java regexes (configdef_regex_list). */
static int
parse_list(struct relist *l, const char *list, const char *option, char *errbuf, size_t errlen)
{
	struct configdef_list items;
	int rc = 0;

	l->set = true;
	if (configdef_regex_list(list, &items) < 0) {
		errbuf_set(errbuf, errlen,
			   "%s '%s' ends with a lone '\\' (Debezium: unterminated "
			   "escape sequence); write \\\\ for a backslash or \\, for a comma",
			   option, list);
		return -EINVAL;
	}
	for (size_t i = 0; rc == 0 && i < items.n; i++) {
		l->re = xrealloc(l->re, (l->n + 1) * sizeof(*l->re));
		rc = regex_java_compile(items.v[i], true, &l->re[l->n], errbuf, errlen);
		if (rc == 0) {
			l->n++;
		}
	}
	configdef_list_fini(&items);
	if (rc < 0) {
		size_t n = strlen(errbuf ? errbuf : "");

		if (errbuf && n + 1 < errlen) {
			snprintf(errbuf + n, errlen - n, " (in %s)", option);
		}
	}
	return rc;
}

static void
free_list(struct relist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		regex_java_free(l->re[i]);
	}
	free(l->re);
	*l = (struct relist){ 0 };
}

bool
router_opts_list_matches(const struct relist *l, const char *s, size_t len)
{
	for (size_t i = 0; i < l->n; i++) {
		if (regex_java_matches(l->re[i], s, len) == 1) {
			return true;
		}
	}
	return false;
}

static int
setup_lists(struct router *r, const struct router_config *cfg, char *errbuf, size_t errlen)
{
	const struct {
		const char *v, *option;
		struct relist *l;
	} lists[] = {
		{ cfg->table_include_list, "table.include.list", &r->tinc },
		{ cfg->table_exclude_list, "table.exclude.list", &r->texc },
		{ cfg->schema_include_list, "schema.include.list", &r->sinc },
		{ cfg->schema_exclude_list, "schema.exclude.list", &r->sexc },
		{ cfg->message_prefix_include_list, "message.prefix.include.list", &r->minc },
		{ cfg->message_prefix_exclude_list, "message.prefix.exclude.list", &r->mexc },
	};

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		/* Debezium treats an empty list as an absent one */
		if (lists[i].v && *lists[i].v &&
		    parse_list(lists[i].l, lists[i].v, lists[i].option, errbuf, errlen) < 0) {
			return -EINVAL;
		}
	}
	return 0;
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
			snprintf(errbuf + n, errlen - n,
				 " (EventRouter route.topic.regex / "
				 "route.topic.replacement)");
		}
		return -EINVAL;
	}
	return 0;
}

static int
setup_modes(struct router *r, const struct router_config *cfg, char *errbuf, size_t errlen)
{
	int b = 0;

	if (cfg->binary_handling_mode) {
		b = configdef_enum(cfg->binary_handling_mode, "bytes|base64|base64-url-safe|hex",
				   NULL);
		if (b < 0) {
			errbuf_set(errbuf, errlen,
				   "binary.handling.mode='%s' is invalid; use bytes, "
				   "base64, base64-url-safe or hex",
				   cfg->binary_handling_mode);
			return -EINVAL;
		}
	}
	r->modes.binary = (enum pgvalue_binary)b;
	if (cfg->time_precision_mode) {
		b = configdef_enum(cfg->time_precision_mode,
				   "adaptive|adaptive_time_microseconds|connect|isostring|"
				   "microseconds|nanoseconds",
				   NULL);
		if (b < 0) {
			errbuf_set(errbuf, errlen,
				   "time.precision.mode='%s' is invalid; use adaptive (the "
				   "default), adaptive_time_microseconds, connect, isostring, "
				   "microseconds or nanoseconds",
				   cfg->time_precision_mode);
			return -EINVAL;
		}
		r->modes.time = (enum pgvalue_time)b;
	}
	if (cfg->interval_handling_mode) {
		b = configdef_enum(cfg->interval_handling_mode, "numeric|string", NULL);
		if (b < 0) {
			errbuf_set(errbuf, errlen,
				   "interval.handling.mode='%s' is invalid; use numeric or string",
				   cfg->interval_handling_mode);
			return -EINVAL;
		}
		r->modes.interval = (enum pgvalue_interval)b;
	}
	if (cfg->decimal_handling_mode) {
		b = configdef_enum(cfg->decimal_handling_mode, "precise|double|string", NULL);
		if (b < 0) {
			errbuf_set(errbuf, errlen,
				   "decimal.handling.mode='%s' is invalid; use precise, double or "
				   "string",
				   cfg->decimal_handling_mode);
			return -EINVAL;
		}
		r->modes.decimal = (enum pgvalue_decimal)b;
	}
	if (cfg->hstore_handling_mode) {
		b = configdef_enum(cfg->hstore_handling_mode, "json|map", NULL);
		if (b < 0) {
			errbuf_set(
				errbuf, errlen,
				"hstore.handling.mode='%s' is invalid; use json (the default) or "
				"map",
				cfg->hstore_handling_mode);
			return -EINVAL;
		}
		r->modes.hstore_map = b == 1;
	}
	r->modes.money_digits = cfg->money_fraction_digits;
	return jsonw_double_format_parse(cfg->double_format, &r->dfmt, errbuf, errlen);
}

static int
setup_converters(struct router *r, const struct router_config *cfg, char *errbuf, size_t errlen)
{
	const char *json = CONVERT_CLASS_JSON;
	const char *header = cfg->header_converter;

	if (!header) {
		/* Debezium Server's debezium.format.header defaults to json */
		header = cfg->server_flavour ? json : CONVERT_CLASS_SIMPLE_HEADER;
	}
	if (convert_new(cfg->key_converter ? cfg->key_converter : json, cfg->key_converter_opts,
			CONVERT_KEY, &r->key_conv, errbuf, errlen) < 0 ||
	    convert_new(cfg->value_converter ? cfg->value_converter : json,
			cfg->value_converter_opts, CONVERT_VALUE, &r->value_conv, errbuf,
			errlen) < 0 ||
	    convert_new(header, cfg->header_converter_opts, CONVERT_HEADER, &r->header_conv, errbuf,
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
	static const char invalid[] = "warn|error|fatal";
	int inv = INVALID_OP_WARN, miss = 0, nullb = 0, adj = 0;
	bool b, legacy;
	const char *v;
	char *unused = NULL;

	if (opt_column(cfg, "table.field.event.id", "id", &r->col_id, errbuf, errlen) < 0 ||
	    opt_column(cfg, "table.field.event.key", "aggregateid", &r->col_key, errbuf, errlen) <
		    0 ||
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
	if (opt_bool(cfg, "route.tombstone.on.empty.payload", false, &r->tombstone_on_empty, errbuf,
		     errlen) < 0 ||
	    opt_bool(cfg, "tracing.with.context.field.only", false, &b, errbuf, errlen) < 0 ||
	    opt_enum(cfg, "debezium.op.invalid.behavior", invalid, &inv, errbuf, errlen) < 0 ||
	    opt_enum(cfg, "table.op.invalid.behavior", invalid, &inv, errbuf, errlen) < 0 ||
	    opt_enum(cfg, "table.json.payload.null.behavior", "ignore|optional_bytes", &nullb,
		     errbuf, errlen) < 0 ||
	    opt_enum(cfg, "field.name.adjustment.mode", "none|avro|avro_unicode", &adj, errbuf,
		     errlen) < 0 ||
	    opt_bool(cfg, "table.fields.additional.error.on.missing", true, &legacy, errbuf,
		     errlen) < 0 ||
	    opt_enum(cfg, "table.field.additional.missing", "error|ignore", &miss, errbuf, errlen) <
		    0 ||
	    opt_bool(cfg, "table.expand.json.payload", false, &r->expand, errbuf, errlen) < 0) {
		return -EINVAL;
	}
	/*
	 * tracing.*: inert, as in Debezium without OpenTelemetry on its classpath (the
	 * debezium/connect image's default): accepted, the boolean validated, no effect.
	 */
	r->null_bytes = nullb == 1;
	r->adjust = (enum name_adjust)adj;
	r->invalid_op = (enum invalid_op)inv;
	r->missing_error = opt(cfg, "table.field.additional.missing", NULL) ? miss == 0 : legacy;
	v = opt(cfg, "table.fields.additional.placement", NULL);
	if (v && parse_placements(r, v, errbuf, errlen) < 0) {
		return -EINVAL;
	}
	return 0;
}

int
router_opts_setup(struct router *r, const struct router_config *cfg, char *errbuf, size_t errlen)
{
	r->server = cfg->server_flavour;
	if (check_keys(cfg, errbuf, errlen) < 0 || setup_options(r, cfg, errbuf, errlen) < 0 ||
	    setup_route(r, cfg, errbuf, errlen) < 0 || setup_modes(r, cfg, errbuf, errlen) < 0 ||
	    setup_converters(r, cfg, errbuf, errlen) < 0 ||
	    setup_lists(r, cfg, errbuf, errlen) < 0) {
		return -EINVAL;
	}
	return 0;
}

void
router_opts_fini(struct router *r)
{
	free_list(&r->tinc);
	free_list(&r->texc);
	free_list(&r->sinc);
	free_list(&r->sexc);
	free_list(&r->minc);
	free_list(&r->mexc);
	for (size_t i = 0; i < r->npl; i++) {
		free(r->pl[i].column);
		free(r->pl[i].alias);
	}
	free(r->pl);
	r->pl = NULL;
	r->npl = 0;
	regex_java_free(r->route_re);
	convert_free(r->key_conv);
	convert_free(r->value_conv);
	convert_free(r->header_conv);
	free(r->col_id);
	free(r->col_key);
	free(r->col_payload);
	free(r->col_route);
	free(r->col_ts);
	free(r->col_version);
}
