/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Kafka side of config_load(): the Connect worker file, converters (Connect classes or
 * Debezium Server formats), the one EventRouter transform, and the producer settings handed to
 * rdconf for translation. Private to config (config_int.h).
 */
#include "config_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/config/rdconf.h"
#include "outboxd/config/vocab.h"
#include "outboxd/connect/configdef.h"
#include "outboxd/connect/convert.h"
#include "outboxd/connect/topiccreation.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/mem.h"

/* Add a Java producer setting; later calls win (worker security < producer.* < overrides). */
static int
add_java(struct ctx *c, const char *key, const char *value, const char *origin, const char *shown)
{
	if (!vocab_is(key, VOCAB_PRODUCER)) {
		return config_ctx_unknown(c, shown, origin);
	}
	kv_set(&c->java, key, value, origin);
	kv_set(&c->java_disp, key, shown, origin);
	return 0;
}

static bool
is_converter_key(const char *key)
{
	for (int i = CONVERT_KEY; i <= CONVERT_HEADER; i++) {
		const char *role = convert_role_name((enum convert_role)i);
		size_t n = strlen(role);

		if (strncmp(key, role, n) == 0 && config_ctx_starts_with(key + n, ".converter") &&
		    (key[n + 10] == '\0' || key[n + 10] == '.')) {
			return true;
		}
	}
	return false;
}

int
config_kafka_connector_key(struct ctx *c, const struct kv_entry *e)
{
	const char *k = e->key;
	char *shown;
	int r = 1;

	if (is_converter_key(k) || strcmp(k, "errors.tolerance") == 0 ||
	    config_ctx_starts_with(k, "transforms") || config_ctx_starts_with(k, "predicates")) {
		return 1; /* read when every key is known (config_kafka_finish, finish_errors) */
	}
	shown = config_ctx_display(c, k);
	if (config_ctx_starts_with(k, "topic.creation.")) {
		/* Connect's KIP-158, read when every key is known (finish_topic_creation);
		 * Debezium Server's Kafka sink creates no topics */
		if (c->src->flavour == CFGSRC_SERVER) {
			config_ctx_ignore(c, shown,
					  "Debezium Server's Kafka sink creates no topics; create "
					  "them beforehand or let the broker auto-create them",
					  e->origin);
		}
	} else if (config_ctx_starts_with(k, "producer.override.")) {
		r = add_java(c, k + 18, e->value, e->origin, shown);
		r = r ? r : 1;
	} else if (config_ctx_starts_with(k, "consumer.override.") ||
		   config_ctx_starts_with(k, "admin.override.")) {
		config_ctx_ignore(c, shown, "outboxd runs no consumer or admin client", e->origin);
	} else {
		r = 0;
	}
	free(shown);
	return r;
}

static bool
is_security_key(const char *key)
{
	return strcmp(key, "security.protocol") == 0 || config_ctx_starts_with(key, "sasl.") ||
	       config_ctx_starts_with(key, "ssl.");
}

static int
require_worker(struct ctx *c, const char *key)
{
	if (kv_find(&c->src->worker, key)) {
		return 0;
	}
	config_ctx_seterr(
		c, "%s: missing required key \"%s\" (Kafka Connect's worker requires it too)",
		c->src->worker_path, key);
	return -EINVAL;
}

static int
worker_key(struct ctx *c, const struct kv_entry *e)
{
	const char *k = e->key;
	unsigned groups;

	if (strcmp(k, "bootstrap.servers") == 0) {
		free(c->cfg->bootstrap_servers);
		c->cfg->bootstrap_servers = xstrdup(e->value);
		return 0;
	}
	if (is_converter_key(k) || is_security_key(k) || strcmp(k, "config.providers") == 0 ||
	    (config_ctx_starts_with(k, "config.providers.") && !strstr(k, ".param."))) {
		return 0; /* honoured: converters in finish, security below, providers by cfgsrc */
	}
	if (config_ctx_starts_with(k, "producer.")) {
		return add_java(c, k + 9, e->value, e->origin, k);
	}
	for (size_t i = 0; i < config_nworker_refusals; i++) {
		const struct refusal *f = &config_worker_refusals[i];

		if (strcmp(k, f->key) == 0 && configdef_eq(e->value, f->value)) {
			config_ctx_seterr(c, "%s: %s: %s", e->origin, k, f->why);
			return -EINVAL;
		}
	}
	if (strcmp(k, "exactly.once.source.support") == 0) {
		config_ctx_ignore(c, k, CONFIG_AT_LEAST_ONCE, e->origin); /* disabled, preparing */
		return 0;
	}
	if (strcmp(k, "topic.creation.enable") == 0) {
		if (configdef_bool(e->value, &c->cfg->topic_creation_enable) < 0) {
			config_ctx_seterr(c, "%s: %s: \"%s\" is not a boolean; use true or false",
					  e->origin, k, e->value);
			return -EINVAL;
		}
		return 0;
	}
	if (config_ctx_starts_with(k, "consumer.") || config_ctx_starts_with(k, "admin.") ||
	    config_ctx_starts_with(k, "config.providers.") ||
	    config_ctx_starts_with(k, "listeners.https.") ||
	    config_ctx_starts_with(k, "admin.listeners.https.") ||
	    config_ctx_starts_with(k, "metrics.context.")) {
		config_ctx_ignore(c, k, "Kafka Connect worker setting without effect in outboxd",
				  e->origin);
		return 0;
	}
	groups = vocab_groups(k);
	if (groups & VOCAB_WORKER) {
		config_ctx_ignore(c, k, "Kafka Connect worker setting without effect in outboxd",
				  e->origin);
		return 0;
	}
	return config_ctx_unknown(c, k, e->origin);
}

int
config_kafka_worker(struct ctx *c)
{
	const struct kv *w = &c->src->worker;
	int r;

	if ((r = require_worker(c, "bootstrap.servers")) ||
	    (r = require_worker(c, "key.converter")) ||
	    (r = require_worker(c, "value.converter"))) {
		return r;
	}
	/* Worker-level security settings first, so producer.* ones win. */
	for (size_t i = 0; i < w->n; i++) {
		if (is_security_key(w->v[i].key) && vocab_is(w->v[i].key, VOCAB_PRODUCER)) {
			kv_set(&c->java, w->v[i].key, w->v[i].value, w->v[i].origin);
			kv_set(&c->java_disp, w->v[i].key, w->v[i].key, w->v[i].origin);
		} else if (is_security_key(w->v[i].key) && vocab_is(w->v[i].key, VOCAB_WORKER)) {
			/* the REST listener's own (ssl.client.auth): Connect reads it, no client does */
			config_ctx_ignore(c, w->v[i].key,
					  "Kafka Connect worker setting without effect in outboxd",
					  w->v[i].origin);
		} else if (is_security_key(w->v[i].key)) {
			return config_ctx_unknown(c, w->v[i].key, w->v[i].origin);
		}
	}
	for (size_t i = 0; i < w->n; i++) {
		r = worker_key(c, &w->v[i]);
		if (r) {
			return r;
		}
	}
	return 0;
}

static int
server_key(struct ctx *c, const struct kv_entry *e)
{
	const char *k = e->key;

	if (strcmp(k, "debezium.sink.type") == 0) {
		if (strcmp(e->value, "kafka") != 0) {
			config_ctx_seterr(
				c,
				"%s: %s: sink \"%s\" is not supported; outboxd writes to Kafka "
				"(debezium.sink.type=kafka)",
				e->origin, k, e->value);
			return -EINVAL;
		}
		return 0;
	}
	if (config_ctx_starts_with(k, "debezium.sink.kafka.producer.")) {
		return add_java(c, k + 29, e->value, e->origin, k);
	}
	if (strcmp(k, "debezium.sink.kafka.wait.message.delivery.timeout.ms") == 0) {
		config_ctx_ignore(
			c, k, "outboxd confirms from delivery reports and never waits per record",
			e->origin);
		return 0;
	}
	if (config_ctx_starts_with(k, "debezium.sink.kafka.")) {
		return config_ctx_unknown(c, k, e->origin);
	}
	if (config_ctx_starts_with(k, "debezium.sink.")) {
		config_ctx_ignore(c, k, "setting of another sink type", e->origin);
		return 0;
	}
	if (config_ctx_starts_with(k, "debezium.format.")) {
		return 0; /* read in finish_converters */
	}
	if (strcmp(k, "debezium.api.enabled") == 0 || config_ctx_starts_with(k, "quarkus.") ||
	    config_ctx_starts_with(k, "mp.") || config_ctx_starts_with(k, "smallrye.")) {
		config_ctx_ignore(
			c, k, "Debezium Server (Quarkus) runtime setting without effect in outboxd",
			e->origin);
		return 0;
	}
	return config_ctx_unknown(c, k, e->origin);
}

int
config_kafka_server(struct ctx *c)
{
	const struct kv *s = &c->src->server;

	if (!kv_find(s, "debezium.sink.type")) {
		config_ctx_seterr(
			c, "%s: missing required key \"debezium.sink.type\" (set it to kafka)",
			c->src->connector_path);
		return -EINVAL;
	}
	for (size_t i = 0; i < s->n; i++) {
		int r = server_key(c, &s->v[i]);

		if (r) {
			return r;
		}
	}
	return 0;
}

/* ---- converters ---- */

static int
check_converter_class(struct ctx *c, enum convert_role role, const char *cls, const char *origin,
		      const char *shown)
{
	struct buf ok = BUF_INIT;

	if (convert_class_supports(cls, role)) {
		return 0;
	}
	convert_class_list(role, false, "and", &ok);
	config_ctx_seterr(c,
			  "%s: %s: converter \"%s\" is not supported%s; outboxd writes the bytes "
			  "of %s",
			  origin, shown, cls,
			  role == CONVERT_HEADER ? " as a header converter" : "", buf_cstr(&ok));
	buf_fini(&ok);
	return -EINVAL;
}

static int
add_converter_opt(struct ctx *c, struct kv *opts, const char *opt, const struct kv_entry *e,
		  const char *shown)
{
	if (vocab_is(shown, VOCAB_WORKER | VOCAB_CONNECT)) {
		config_ctx_ignore(c, shown, "plugin versions do not apply to outboxd", e->origin);
		return 0;
	}
	if (!vocab_is(opt, VOCAB_CONVERTER | VOCAB_HEADER) &&
	    !config_ctx_starts_with(opt, "delegate.converter.type.")) {
		return config_ctx_unknown(c, shown, e->origin);
	}
	kv_set(opts, opt, e->value, e->origin);
	return 0;
}

/* Connect: the class from the connector if it sets one, else the worker; options from the same. */
static int
connect_converter(struct ctx *c, enum convert_role which, char **ret_cls, struct kv *opts)
{
	struct buf key = BUF_INIT;
	const struct kv *from = &c->cfg->connector;
	const struct kv_entry *e;
	int r = 0;

	buf_add_fmt(&key, "%s.converter", convert_role_name(which));
	e = kv_find(from, buf_cstr(&key));
	if (!e) {
		from = &c->src->worker;
		e = kv_find(from, buf_cstr(&key));
	}
	*ret_cls = e ? configdef_trimdup(e->value) : xstrdup(CONVERT_CLASS_SIMPLE_HEADER);
	if (e) {
		r = check_converter_class(c, which, *ret_cls, e->origin, buf_cstr(&key));
	}
	buf_add_char(&key, '.');
	for (size_t i = 0; r == 0 && i < from->n; i++) {
		if (config_ctx_starts_with(from->v[i].key, buf_cstr(&key))) {
			char *shown = config_ctx_display(c, from->v[i].key);

			if (from == &c->src->worker) {
				free(shown);
				shown = xstrdup(from->v[i].key);
			}
			r = add_converter_opt(c, opts, from->v[i].key + key.len, &from->v[i],
					      shown);
			free(shown);
		}
	}
	buf_fini(&key);
	return r;
}

/* Server: debezium.format.<key|value|header> names a format; debezium.format.* are options. */
static int
server_converter(struct ctx *c, enum convert_role which, char **ret_cls, struct kv *opts)
{
	const struct kv *s = &c->src->server;
	struct buf key = BUF_INIT;
	const struct kv_entry *e;
	const char *fmt;
	int r = 0;

	buf_add_fmt(&key, "debezium.format.%s", convert_role_name(which));
	e = kv_find(s, buf_cstr(&key));
	fmt = e ? e->value : "json";
	if (strcmp(fmt, "json") == 0 || strcmp(fmt, "jsonbytearray") == 0) {
		*ret_cls = xstrdup(CONVERT_CLASS_JSON);
	} else if (which != CONVERT_HEADER && strcmp(fmt, "simplestring") == 0) {
		*ret_cls = xstrdup(CONVERT_CLASS_STRING);
	} else if (which != CONVERT_HEADER && strcmp(fmt, "binary") == 0) {
		*ret_cls = xstrdup(CONVERT_CLASS_BINARY);
	} else {
		config_ctx_seterr(c,
				  "%s: %s: format \"%s\" is not supported; outboxd writes json, "
				  "jsonbytearray%s",
				  e->origin, e->key, fmt,
				  which == CONVERT_HEADER ? "" : ", simplestring and binary");
		buf_fini(&key);
		return -EINVAL;
	}
	/* options for all three first, then this converter's own */
	for (int pass = 0; pass < 2 && r == 0; pass++) {
		for (size_t i = 0; r == 0 && i < s->n; i++) {
			const char *k = s->v[i].key;
			const char *opt = k + 16;
			bool own = config_ctx_starts_with(k, buf_cstr(&key)) && k[key.len] == '.';
			bool general = config_ctx_starts_with(k, "debezium.format.") &&
				       !config_ctx_starts_with(opt, "key") &&
				       !config_ctx_starts_with(opt, "value") &&
				       !config_ctx_starts_with(opt, "header");

			if (pass == 0 && general) {
				r = add_converter_opt(c, opts, opt, &s->v[i], k);
			} else if (pass == 1 && own) {
				r = add_converter_opt(c, opts, k + key.len + 1, &s->v[i], k);
			}
		}
	}
	buf_fini(&key);
	return r;
}

/*
 * Kafka's converters parse their options with a ConfigDef that ignores keys it does not define,
 * so a leftover option of another converter (schemas.enable beside a StringConverter) is
 * harmless there: here it is listed as ignored (convert_class_has_option()).
 */
static void
drop_foreign_options(struct ctx *c, const char *role, const char *cls, struct kv *opts)
{
	struct buf shown = BUF_INIT, why = BUF_INIT;

	for (size_t i = 0; i < opts->n;) {
		const struct kv_entry *e = &opts->v[i];

		if (!cls || convert_class_has_option(cls, e->key)) {
			i++;
			continue;
		}
		buf_reset(&shown);
		buf_reset(&why);
		buf_add_fmt(&shown, "%s.converter.%s", role, e->key);
		buf_add_fmt(&why, "not an option of %s, which ignores it", cls);
		config_ctx_ignore(c, buf_cstr(&shown), buf_cstr(&why), e->origin);
		kv_del(opts, opts->v[i].key);
	}
	buf_fini(&shown);
	buf_fini(&why);
}

static int
finish_converters(struct ctx *c)
{
	struct config *cfg = c->cfg;
	char **cls[] = { &cfg->key_converter, &cfg->value_converter, &cfg->header_converter };
	struct kv *opts[] = { &cfg->key_converter_opts, &cfg->value_converter_opts,
			      &cfg->header_converter_opts };
	for (int i = CONVERT_KEY; i <= CONVERT_HEADER; i++) {
		enum convert_role role = (enum convert_role)i;
		int r = c->src->flavour == CFGSRC_SERVER ?
				server_converter(c, role, cls[i], opts[i]) :
				connect_converter(c, role, cls[i], opts[i]);

		if (r) {
			return r;
		}
		drop_foreign_options(c, convert_role_name(role), *cls[i], opts[i]);
	}
	return 0;
}

/* ---- the EventRouter transform ---- */

static int
transform_list(struct ctx *c, const struct kv_entry *e, char **ret_alias)
{
	struct configdef_list list;
	const char *alias = NULL;
	char *shown = config_ctx_display(c, "transforms");
	int n = 0, r = 0;

	configdef_list(e ? e->value : "", &list);
	for (size_t i = 0; i < list.n; i++) {
		if (*list.v[i]) { /* outboxd skips empty aliases ("outbox,") */
			n++;
			alias = list.v[i];
		}
	}
	if (n != 1) {
		config_ctx_seterr(c,
				  "%s: %s: %s; outboxd implements exactly one %s and nothing else "
				  "(e.g. transforms=outbox, transforms.outbox.type=%s)",
				  e ? e->origin : c->src->connector_path, shown,
				  n == 0 ? "no transform is configured" :
					   "more than one transform is listed",
				  EVENT_ROUTER, EVENT_ROUTER);
		r = -EINVAL;
	} else {
		*ret_alias = xstrdup(alias);
	}
	configdef_list_fini(&list);
	free(shown);
	return r;
}

static int
transform_option(struct ctx *c, const char *alias, const struct kv_entry *e)
{
	const char *opt = e->key + 11 + strlen(alias) + 1; /* "transforms." alias "." */
	char *shown = config_ctx_display(c, e->key);
	unsigned groups = vocab_groups(opt);
	int r = 0;

	if (strcmp(opt, "type") == 0) {
		if (strcmp(e->value, EVENT_ROUTER) != 0) {
			config_ctx_seterr(
				c,
				"%s: %s: transform \"%s\" is not supported; outboxd implements %s only",
				e->origin, shown, e->value, EVENT_ROUTER);
			r = -EINVAL;
		}
	} else if (strcmp(opt, "predicate") == 0 || strcmp(opt, "negate") == 0) {
		config_ctx_seterr(
			c,
			"%s: %s: predicates are not supported; outboxd routes every row of the "
			"outbox tables (select them with table.include.list); remove it",
			e->origin, shown);
		r = -EINVAL;
	} else if (groups & VOCAB_LEGACY) {
		config_ctx_ignore(c, shown, vocab_note(opt, groups), e->origin);
	} else if (groups & VOCAB_SMT) {
		kv_set(&c->cfg->transform, opt, e->value, e->origin);
	} else {
		r = config_ctx_unknown(c, shown, e->origin);
	}
	free(shown);
	return r;
}

/* A ConfigDef LIST value with a non-empty item ("predicates=,," has none). */
static bool
has_items(const char *value)
{
	struct configdef_list list;
	bool any = false;

	configdef_list(value, &list);
	for (size_t i = 0; i < list.n; i++) {
		any = any || *list.v[i];
	}
	configdef_list_fini(&list);
	return any;
}

static int
finish_transform(struct ctx *c)
{
	const struct kv *conn = &c->cfg->connector;
	const struct kv_entry *preds = kv_find(conn, "predicates");
	struct buf prefix = BUF_INIT;
	char *alias = NULL, *shown;
	int r;

	if (preds && has_items(preds->value)) {
		shown = config_ctx_display(c, "predicates");
		config_ctx_seterr(
			c,
			"%s: %s: predicates are not supported; outboxd routes every row of the "
			"outbox tables (select them with table.include.list); remove it",
			preds->origin, shown);
		free(shown);
		return -EINVAL;
	}
	r = transform_list(c, kv_find(conn, "transforms"), &alias);
	if (r) {
		return r;
	}
	c->cfg->transform_alias = alias;
	buf_add_fmt(&prefix, "transforms.%s.", alias);
	for (size_t i = 0; r == 0 && i < conn->n; i++) {
		const struct kv_entry *e = &conn->v[i];

		if (config_ctx_starts_with(e->key, buf_cstr(&prefix))) {
			r = transform_option(c, alias, e);
		} else if (config_ctx_starts_with(e->key, "transforms.") ||
			   config_ctx_starts_with(e->key, "predicates.")) {
			shown = config_ctx_display(c, e->key);
			config_ctx_ignore(
				c, shown,
				"its transform or predicate is not listed, so it is unused",
				e->origin);
			free(shown);
		}
	}
	if (r == 0) {
		buf_add_str(&prefix, "type");
		if (!kv_find(conn, buf_cstr(&prefix))) {
			shown = config_ctx_display(c, buf_cstr(&prefix));
			config_ctx_seterr(c, "%s: missing required key \"%s\" (set it to %s)",
					  c->src->connector_path, shown, EVENT_ROUTER);
			free(shown);
			r = -EINVAL;
		}
	}
	buf_fini(&prefix);
	return r;
}

/* ---- producer ---- */

static int
finish_producer(struct ctx *c)
{
	struct config *cfg = c->cfg;

	for (size_t i = 0; i < c->java.n; i++) {
		const struct kv_entry *e = &c->java.v[i];
		const char *shown = kv_get(&c->java_disp, e->key);
		int r;

		if (strcmp(e->key, "bootstrap.servers") == 0) {
			free(cfg->bootstrap_servers);
			cfg->bootstrap_servers = xstrdup(e->value);
			continue;
		}
		r = rdconf_translate(e->key, e->value, &c->java, e->origin, shown, &cfg->producer,
				     &cfg->ignored, c->errbuf, c->errlen);
		if (r) {
			return r;
		}
	}
	if (!cfg->bootstrap_servers) {
		config_ctx_seterr(
			c,
			"%s: missing required key \"debezium.sink.kafka.producer.bootstrap.servers\"",
			c->src->connector_path);
		return -EINVAL;
	}
	return 0;
}

/*
 * KIP-158 (topiccreation.h), checked now so that `outboxd check` and the start refuse what
 * Connect refuses; the producer reads it again from its settings (config_kafka_settings()).
 */
static int
finish_topic_creation(struct ctx *c)
{
	struct topiccreation *tc = NULL;
	char err[512];

	if (c->src->flavour == CFGSRC_SERVER) {
		return 0;
	}
	if (!c->cfg->topic_creation_enable) {
		for (size_t i = 0; i < c->cfg->connector.n; i++) {
			const struct kv_entry *e = &c->cfg->connector.v[i];

			if (config_ctx_starts_with(e->key, "topic.creation.")) {
				config_ctx_ignore(c, e->key,
						  "the worker's topic.creation.enable=false turns "
						  "topic creation off",
						  e->origin);
			}
		}
		return 0;
	}
	if (topiccreation_parse(&c->cfg->connector, "topic.creation.",
				c->cfg->topic_creation_enable, &tc, err, sizeof(err)) < 0) {
		config_ctx_seterr(c, "%s: %s", c->src->connector_path, err);
		return -EINVAL;
	}
	topiccreation_free(tc);
	return 0;
}

int
config_kafka_finish(struct ctx *c)
{
	int r = finish_converters(c);

	r = r ? r : finish_transform(c);
	r = r ? r : finish_producer(c);
	r = r ? r : finish_topic_creation(c);
	return r;
}

void
config_kafka_settings(struct config *cfg)
{
	char n[24];

	for (size_t i = 0; i < cfg->producer.n; i++) {
		kv_set(&cfg->librdkafka, cfg->producer.v[i].key, cfg->producer.v[i].value,
		       cfg->producer.v[i].origin);
	}
	kv_set(&cfg->librdkafka, "bootstrap.servers", cfg->bootstrap_servers, NULL);
	/*
	 * The producer queue's record bound: the queue is most of the memory outboxd's own code
	 * holds in a catch-up (each record is a message, five header allocations and the copied
	 * bytes, about 1 KB), and the relay stops reading PostgreSQL while it is full. 1000
	 * records, against 5000 before, took peak RSS from 19.0 to 16.5 MB with the same catch-up
	 * rate on a local broker; 500 halved the rate of 100-row transactions
	 * (bench/results/2026-12-06-run2-analysis.md). The rate it allows is about the bound over
	 * the broker's acknowledgement time, hence a setting for a distant broker.
	 */
	snprintf(n, sizeof(n), "%lld", (long long)cfg->kafka_queue_records);
	kv_set(&cfg->librdkafka, "queue.buffering.max.messages", n, NULL);
	/* read by the producer (authgrace.h), never passed to librdkafka */
	snprintf(n, sizeof(n), "%lld", (long long)cfg->kafka_auth_grace_ms);
	kv_set(&cfg->librdkafka, "outboxd.kafka.auth.grace.ms", n, NULL);
	/* KIP-158 for the producer (kafka/producer_create.c), outboxd's keys: never librdkafka's */
	if (cfg->flavour == CONFIG_CONNECT && cfg->topic_creation_enable) {
		for (size_t i = 0; i < cfg->connector.n; i++) {
			const struct kv_entry *e = &cfg->connector.v[i];
			struct buf k = BUF_INIT;

			if (strncmp(e->key, "topic.creation.", 15) == 0) {
				buf_add_fmt(&k, "outboxd.%s", e->key);
				kv_set(&cfg->librdkafka, buf_cstr(&k), e->value, e->origin);
			}
			buf_fini(&k);
		}
	}
	/* the outboxd_kafka_* metrics; a statistics.interval.ms given as a producer key wins */
	if (cfg->kafka_stats_ms && !kv_get(&cfg->librdkafka, "statistics.interval.ms")) {
		snprintf(n, sizeof(n), "%lld", (long long)cfg->kafka_stats_ms);
		kv_set(&cfg->librdkafka, "statistics.interval.ms", n, NULL);
	}
}
