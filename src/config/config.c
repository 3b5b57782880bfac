/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/config/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "outboxd/config/cfgsrc.h"
#include "outboxd/config/rdconf.h"
#include "outboxd/config/vocab.h"
#include "outboxd/connect/configdef.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/secret.h"

/* @key matches a table key that may end in '*'. */
static bool
key_matches(const char *pattern, const char *key)
{
	size_t n = strlen(pattern);

	return pattern[n - 1] == '*' ? strncmp(key, pattern, n - 1) == 0 :
				       strcmp(key, pattern) == 0;
}

/* ---- typed keys ---- */

static int
set_pg(struct ctx *c, const struct cf_key *k, const char *value, const char *origin,
       const char *shown)
{
	char *t = NULL;
	int r = 0;

	if (strcmp(k->extra, "keepalives") == 0) {
		bool b = false;

		r = configdef_bool(value, &b);
		t = xstrdup(b ? "1" : "0");
	} else if (strcmp(k->extra, "port") == 0) {
		r = configdef_long_list(value, 0, 65535); /* one per host of a list */
		t = configdef_trimdup(value);
	} else if (strcmp(k->extra, "connect_timeout") == 0) {
		int64_t v;

		r = configdef_long(value, 0, 65535, &v);
		t = configdef_trimdup(value);
	} else if (strcmp(k->extra, "target_session_attrs") == 0) {
		r = configdef_enum(value, "any|read-write|read-only|primary|standby|prefer-standby",
				   &t);
		r = r < 0 ? r : 0;
	} else if (strcmp(k->extra, "sslmode") == 0) {
		r = configdef_enum(value, "disable|allow|prefer|require|verify-ca|verify-full", &t);
		r = r < 0 ? r : 0;
	} else {
		t = xstrdup(value); /* strings are not trimmed (ConfigDef STRING/PASSWORD) */
	}
	if (r) {
		config_ctx_seterr(c, "%s: %s: invalid value \"%s\"", origin, shown,
				  config_ctx_shown_value(k->name, value));
	} else if (*t) {
		kv_set(&c->cfg->pg_conn, k->extra, t, origin);
	}
	free(t);
	return r;
}

static int
set_key(struct ctx *c, const struct cf_key *k, const char *value, const char *origin,
	const char *shown)
{
	void *field = (char *)c->cfg + k->off;
	char *t;
	int r = 0;

	switch (k->type) {
	case CF_PG: return set_pg(c, k, value, origin, shown);
	case CF_STR:
		free(*(char **)field);
		*(char **)field = *value ? xstrdup(value) : (k->def ? xstrdup(k->def) : NULL);
		return 0;
	case CF_BOOL:
		r = configdef_bool(value, (bool *)field);
		if (r) {
			config_ctx_seterr(c, "%s: %s: \"%s\" is not true or false", origin, shown,
					  config_ctx_shown_value(k->name, value));
		}
		return r;
	case CF_INT:
		r = configdef_long(value, k->min, k->max, (int64_t *)field);
		if (r) {
			config_ctx_seterr(c,
					  "%s: %s: \"%s\" is not an integer from %lld to %lld; set "
					  "one in that range",
					  origin, shown, config_ctx_shown_value(k->name, value),
					  (long long)k->min, (long long)k->max);
		}
		return r;
	case CF_ENUM:
		if (configdef_enum(value, k->extra, &t) < 0) {
			config_ctx_seterr(c, "%s: %s: \"%s\" is not one of %s", origin, shown,
					  value, k->extra);
			return -EINVAL;
		}
		free(*(char **)field);
		*(char **)field = t;
		return 0;
	}
	return -EINVAL;
}

static int
apply_defaults(struct ctx *c, const struct cf_key *keys, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (keys[i].def) {
			int r = set_key(c, &keys[i], keys[i].def, NULL, keys[i].name);

			if (r) {
				return r;
			}
		}
	}
	return 0;
}

static const struct cf_key *
find_key(const struct cf_key *keys, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(keys[i].name, name) == 0) {
			return &keys[i];
		}
	}
	return NULL;
}

/* ---- connector keys ---- */

static const struct refusal *
find_refusal(const struct refusal *list, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++) {
		if (key_matches(list[i].key, key)) {
			return &list[i];
		}
	}
	return NULL;
}

static int
check_special_values(struct ctx *c, const char *key, const char *value, const char *origin,
		     const char *shown)
{
	char *t = NULL;
	int r = 0;

	if (strcmp(key, "connector.class") == 0) {
		if (configdef_enum(value,
				   "io.debezium.connector.postgresql.PostgresConnector|"
				   "PostgresConnector|Postgres",
				   NULL) < 0) {
			config_ctx_seterr(c,
					  "%s: %s: \"%s\" is not supported; outboxd replaces "
					  "io.debezium.connector.postgresql.PostgresConnector",
					  origin, shown, value);
			r = -EINVAL;
		}
	} else if (strcmp(key, "plugin.name") == 0) {
		if (!configdef_eq(value, "pgoutput")) {
			config_ctx_seterr(
				c,
				"%s: %s: \"%s\" is not supported; outboxd decodes pgoutput only: set "
				"plugin.name=pgoutput (a slot created for another plugin must be recreated)",
				origin, shown, value);
			r = -EINVAL;
		}
		c->cfg->plugin_name_set = true;
	} else if (strcmp(key, "snapshot.mode") == 0) {
		if (configdef_eq(value, "never")) {
			config_ctx_seterr(
				c,
				"%s: %s: \"never\" was removed in Debezium 3 (3.6.1 rejects it); "
				"use no_data",
				origin, shown);
			r = -EINVAL;
		} else if (configdef_enum(value, "initial|no_data", &t) < 0) {
			config_ctx_seterr(
				c,
				"%s: %s: \"%s\" is not supported by outboxd; use initial or no_data",
				origin, shown, value);
			r = -EINVAL;
		} else {
			free(c->cfg->snapshot_mode);
			c->cfg->snapshot_mode = t;
		}
	}
	return r;
}

/* A value-dependent refusal of @key, or 0. */
static int
refuse(struct ctx *c, const char *key, const char *value, const char *origin, const char *shown)
{
	const struct refusal *f = find_refusal(config_refusals, config_nrefusals, key);

	if (!f) {
		return 0;
	}
	if (f->value ? !configdef_eq(value, f->value) : configdef_trim(value).len == 0) {
		return 0;
	}
	config_ctx_seterr(c, "%s: %s: %s", origin, shown, f->why);
	return -EINVAL;
}

/* Why a known key has no effect, by the component that defines it. */
static const char *
ignored_reason(const char *key, unsigned groups)
{
	const struct refusal *n = find_refusal(config_notes, config_nnotes, key);
	const char *legacy = vocab_note(key, groups);

	if (n) {
		return n->why;
	}
	if (legacy) {
		return legacy;
	}
	if (groups & VOCAB_CONNECTOR) {
		return "Debezium PostgreSQL connector setting without effect on an outbox relay";
	}
	if (groups & VOCAB_JDBC) {
		return "PostgreSQL JDBC driver property; outboxd connects with libpq";
	}
	if (groups & VOCAB_ENGINE) {
		return "Debezium engine setting without effect in outboxd";
	}
	return "Kafka Connect connector setting without effect in outboxd";
}

static int
connector_key(struct ctx *c, const struct kv_entry *e)
{
	const struct cf_key *k;
	char *shown = config_ctx_display(c, e->key);
	unsigned groups;
	int r;

	kv_set(&c->cfg->connector, e->key, e->value, e->origin);
	r = refuse(c, e->key, e->value, e->origin, shown);
	if (r == 0) {
		r = check_special_values(c, e->key, e->value, e->origin, shown);
	}
	if (r || strcmp(e->key, "connector.class") == 0 || strcmp(e->key, "plugin.name") == 0 ||
	    strcmp(e->key, "snapshot.mode") == 0) {
		goto out;
	}
	if (strcmp(e->key, "name") == 0) {
		free(c->cfg->name);
		c->cfg->name = xstrdup(e->value);
		goto out;
	}
	r = config_kafka_connector_key(c, e);
	if (r != 0) {
		r = r > 0 ? 0 : r;
		goto out;
	}
	k = find_key(config_connector_keys, config_nconnector_keys, e->key);
	if (k) {
		r = set_key(c, k, e->value, e->origin, shown);
		goto out;
	}
	groups = vocab_groups(e->key);
	if ((groups &
	     (VOCAB_CONNECTOR | VOCAB_CONNECT | VOCAB_JDBC | VOCAB_ENGINE | VOCAB_LEGACY)) ||
	    find_refusal(config_notes, config_nnotes, e->key)) {
		config_ctx_ignore(c, shown, ignored_reason(e->key, groups), e->origin);
	} else if (config_ctx_starts_with(e->key, "driver.")) {
		config_ctx_ignore(c, shown,
				  "PostgreSQL JDBC driver property; outboxd connects with libpq",
				  e->origin);
	} else {
		r = config_ctx_unknown(c, shown, e->origin);
	}
out:
	free(shown);
	return r;
}

static int
outboxd_key(struct ctx *c, const struct kv_entry *e)
{
	const struct cf_key *k = find_key(config_outboxd_keys, config_noutboxd_keys, e->key);

	if (k) {
		return set_key(c, k, e->value, e->origin, e->key);
	}
	if (config_ctx_starts_with(e->origin, "environment ")) {
		/* other tools may use OUTBOXD_* variables too (test scripts, images) */
		config_ctx_ignore(c, e->origin + 12, "not an outboxd setting", e->origin);
		return 0;
	}
	config_ctx_seterr(c, "%s: unknown key \"%s\" (not an outboxd setting); check the spelling",
			  e->origin, e->key);
	return -EINVAL;
}

/* ---- after all keys ---- */

static int
require(struct ctx *c, const char *key, bool present)
{
	char *shown;

	if (present) {
		return 0;
	}
	shown = config_ctx_display(c, key);
	config_ctx_seterr(c, "%s: missing required key \"%s\"", c->src->connector_path, shown);
	free(shown);
	return -EINVAL;
}

static int
finish_connector(struct ctx *c)
{
	struct config *cfg = c->cfg;
	const struct kv_entry *e;
	int r;

	if ((r = require(c, "connector.class", kv_find(&cfg->connector, "connector.class"))) ||
	    (r = require(c, "database.hostname", kv_find(&cfg->pg_conn, "host"))) ||
	    (r = require(c, "database.user", kv_find(&cfg->pg_conn, "user"))) ||
	    (r = require(c, "database.dbname", kv_find(&cfg->pg_conn, "dbname")))) {
		return r;
	}
	if (!cfg->topic_prefix) {
		char *shown = config_ctx_display(c, "topic.prefix");

		config_ctx_seterr(
			c, "%s: missing required key \"%s\"%s", c->src->connector_path, shown,
			kv_find(&cfg->connector, "database.server.name") ?
				" (database.server.name is its Debezium 1.x name, which 3.6.1 no longer reads)" :
				"");
		free(shown);
		return -EINVAL;
	}
	if (cfg->table_include_list && cfg->table_exclude_list) {
		e = kv_find(&cfg->connector, "table.exclude.list");
		config_ctx_seterr(
			c,
			"%s: table.exclude.list: cannot be set together with table.include.list "
			"(Debezium refuses both); keep one",
			e->origin);
		return -EINVAL;
	}
	if (cfg->schema_include_list && cfg->schema_exclude_list) {
		e = kv_find(&cfg->connector, "schema.exclude.list");
		config_ctx_seterr(
			c,
			"%s: schema.exclude.list: cannot be set together with schema.include.list "
			"(Debezium refuses both); keep one",
			e->origin);
		return -EINVAL;
	}
	kv_set(&cfg->pg_conn, "application_name", "outboxd", NULL);
	return 0;
}

static int
finish_errors(struct ctx *c)
{
	struct config *cfg = c->cfg;
	const struct kv_entry *e = kv_find(&cfg->connector, "errors.tolerance");
	char *t;

	cfg->errors_tolerance = xstrdup("none");
	if (!e) {
		return 0;
	}
	if (configdef_enum(e->value, "none|all", &t) < 0) {
		config_ctx_seterr(c, "%s: errors.tolerance: \"%s\" is not one of none|all",
				  e->origin, e->value);
		return -EINVAL;
	}
	if (strcmp(t, "all") == 0 && !cfg->dlq_topic) {
		config_ctx_seterr(
			c,
			"%s: errors.tolerance: \"all\" makes Kafka Connect skip a failing source "
			"record silently, losing the outbox event; set "
			"outboxd.errors.deadletterqueue.topic.name to send such rows to a dead-letter "
			"topic, or remove errors.tolerance (outboxd then halts on such a row, "
			"naming it)",
			e->origin);
		free(t);
		return -EINVAL;
	}
	free(cfg->errors_tolerance);
	cfg->errors_tolerance = t;
	return 0;
}

/* The values several modules need in one assembled form. */
static int
derive(struct config *cfg)
{
	struct buf topic = BUF_INIT;

	config_kafka_settings(cfg);
	buf_add_fmt(&topic, "%s%s%s", cfg->topic_heartbeat_prefix, cfg->topic_delimiter,
		    cfg->topic_prefix);
	cfg->heartbeat_topic = buf_steal(&topic);
	return 0;
}

static int
load(struct ctx *c)
{
	const struct cfgsrc *src = c->src;
	int r;

	c->cfg->flavour = src->flavour == CFGSRC_SERVER ? CONFIG_SERVER : CONFIG_CONNECT;
	c->cfg->plugin_name = xstrdup("pgoutput");
	c->cfg->snapshot_mode = xstrdup("initial");
	c->cfg->topic_creation_enable = true; /* the worker's default */
	c->cfg->name = xstrdup(src->flavour == CFGSRC_SERVER ? "kafka" : "");
	r = apply_defaults(c, config_connector_keys, config_nconnector_keys);
	if (r == 0) {
		r = apply_defaults(c, config_outboxd_keys, config_noutboxd_keys);
	}
	if (r == 0 && src->flavour == CFGSRC_SERVER) {
		/* Debezium Server 3.6 runs on Java 21+, whose Double.toString is the shortest form */
		free(c->cfg->java_double_format);
		c->cfg->java_double_format = xstrdup("shortest");
	}
	r = r ? r :
		(src->flavour == CFGSRC_SERVER ? config_kafka_server(c) : config_kafka_worker(c));
	config_ctx_ignore_all(c, &src->ignored);
	for (size_t i = 0; r == 0 && i < src->connector.n; i++) {
		r = connector_key(c, &src->connector.v[i]);
	}
	for (size_t i = 0; r == 0 && i < src->outboxd.n; i++) {
		r = outboxd_key(c, &src->outboxd.v[i]);
	}
	r = r ? r : finish_connector(c);
	r = r ? r : finish_errors(c);
	r = r ? r : config_kafka_finish(c);
	r = r ? r : config_http_finish(c);
	r = r ? r : derive(c->cfg);
	return r;
}

int
config_load_src(const struct cfgsrc *src, struct config **ret, char *errbuf, size_t errlen)
{
	struct ctx c = { 0 };
	int r;

	c.cfg = znew(*c.cfg);
	c.src = src;
	c.errbuf = errbuf;
	c.errlen = errlen;
	r = load(&c);
	kv_fini(&c.java);
	kv_fini(&c.java_disp);
	if (r) {
		config_free(c.cfg);
		return r;
	}
	*ret = c.cfg;
	return 0;
}

int
config_load(const char *const *paths, int npaths, char *const *envp, struct config **ret,
	    char *errbuf, size_t errlen)
{
	struct cfgsrc src = CFGSRC_INIT;
	int r;

	r = cfgsrc_load(paths, npaths, envp, &src, errbuf, errlen);
	if (r == 0) {
		r = config_load_src(&src, ret, errbuf, errlen);
	}
	cfgsrc_fini(&src);
	return r;
}

struct router_config
config_router(const struct config *cfg, const char *run_id)
{
	return (struct router_config){
		.topic_prefix = cfg->topic_prefix,
		.run_id = run_id,
		.table_include_list = cfg->table_include_list,
		.table_exclude_list = cfg->table_exclude_list,
		.schema_include_list = cfg->schema_include_list,
		.schema_exclude_list = cfg->schema_exclude_list,
		.message_prefix_include_list = cfg->message_prefix_include_list,
		.message_prefix_exclude_list = cfg->message_prefix_exclude_list,
		.server_flavour = cfg->flavour == CONFIG_SERVER,
		.smt = &cfg->transform,
		.key_converter = cfg->key_converter,
		.value_converter = cfg->value_converter,
		.header_converter = cfg->header_converter,
		.key_converter_opts = &cfg->key_converter_opts,
		.value_converter_opts = &cfg->value_converter_opts,
		.header_converter_opts = &cfg->header_converter_opts,
		.extended_headers = cfg->extended_headers,
		.double_format = cfg->java_double_format,
		.binary_handling_mode = cfg->binary_handling_mode,
		.time_precision_mode = cfg->time_precision_mode,
		.decimal_handling_mode = cfg->decimal_handling_mode,
		.interval_handling_mode = cfg->interval_handling_mode,
		.hstore_handling_mode = cfg->hstore_handling_mode,
		.money_fraction_digits = (int)cfg->money_fraction_digits,
	};
}

const struct kv *
config_ignored(const struct config *cfg)
{
	return &cfg->ignored;
}

/* Frees the fields the rows of @keys own (strings; libpq keywords live in pg_conn). */
static void
free_keys(struct config *cfg, const struct cf_key *keys, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (keys[i].type == CF_STR || keys[i].type == CF_ENUM) {
			zfree(*(char **)((char *)cfg + keys[i].off));
		}
	}
}

void
config_free(struct config *cfg)
{
	if (!cfg) {
		return;
	}
	free_keys(cfg, config_connector_keys, config_nconnector_keys);
	free_keys(cfg, config_outboxd_keys, config_noutboxd_keys);
	for (size_t i = 0; i < config_nassembled; i++) {
		void *field = (char *)cfg + config_assembled[i].off;

		if (config_assembled[i].kv) {
			kv_fini(field);
		} else {
			zfree(*(char **)field);
		}
	}
	free(cfg);
}

static void
describe_kv(struct buf *out, const char *title, const struct kv *kv)
{
	for (size_t i = 0; i < kv->n; i++) {
		buf_add_fmt(out, "%s%s = %s\n", title, kv->v[i].key,
			    secret_key(kv->v[i].key) ? "(set)" : kv->v[i].value);
	}
}

static void
describe_keys(struct buf *out, const struct config *cfg, const struct cf_key *keys, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const void *field = (const char *)cfg + keys[i].off;

		switch (keys[i].type) {
		case CF_PG: break;
		case CF_STR:
		case CF_ENUM:
			if (*(char *const *)field) {
				buf_add_fmt(out, "%s = %s\n", keys[i].name, *(char *const *)field);
			}
			break;
		case CF_INT:
			buf_add_fmt(out, "%s = %lld\n", keys[i].name,
				    (long long)*(const int64_t *)field);
			break;
		case CF_BOOL:
			buf_add_fmt(out, "%s = %s\n", keys[i].name,
				    *(const bool *)field ? "true" : "false");
			break;
		}
	}
}

void
config_describe(const struct config *cfg, struct buf *out)
{
	buf_add_fmt(out, "flavour = %s\n",
		    cfg->flavour == CONFIG_SERVER ? "Debezium Server" : "Kafka Connect");
	buf_add_fmt(out, "name = %s\n", cfg->name);
	describe_kv(out, "libpq ", &cfg->pg_conn);
	buf_add_fmt(out, "plugin.name = %s%s\n", cfg->plugin_name,
		    cfg->plugin_name_set ? "" : " (not set)");
	buf_add_fmt(out, "snapshot.mode = %s\n", cfg->snapshot_mode);
	describe_keys(out, cfg, config_connector_keys, config_nconnector_keys);
	buf_add_fmt(out, "bootstrap.servers = %s\n", cfg->bootstrap_servers);
	buf_add_fmt(out, "key.converter = %s\n", cfg->key_converter);
	describe_kv(out, "key.converter.", &cfg->key_converter_opts);
	buf_add_fmt(out, "value.converter = %s\n", cfg->value_converter);
	describe_kv(out, "value.converter.", &cfg->value_converter_opts);
	buf_add_fmt(out, "header.converter = %s\n", cfg->header_converter);
	describe_kv(out, "header.converter.", &cfg->header_converter_opts);
	buf_add_fmt(out, "transforms = %s (%s)\n", cfg->transform_alias, EVENT_ROUTER);
	{
		struct buf title = BUF_INIT;

		buf_add_fmt(&title, "transforms.%s.", cfg->transform_alias);
		describe_kv(out, buf_cstr(&title), &cfg->transform);
		buf_fini(&title);
	}
	describe_kv(out, "librdkafka ", &cfg->producer);
	buf_add_fmt(out, "errors.tolerance = %s\n", cfg->errors_tolerance);
	describe_keys(out, cfg, config_outboxd_keys, config_noutboxd_keys);
	for (size_t i = 0; i < cfg->ignored.n; i++) {
		buf_add_fmt(out, "ignored %s (%s): %s\n", cfg->ignored.v[i].key,
			    cfg->ignored.v[i].origin ? cfg->ignored.v[i].origin : "",
			    cfg->ignored.v[i].value);
	}
}
