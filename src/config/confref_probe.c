/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One key through the real loader: a minimal Kafka Connect configuration (a worker and a
 * connector with the EventRouter) with the key added where a user writes it, loaded from memory, and the
 * outcome read back: an error is a refusal, a new entry in the ignored list is "accepted without
 * effect", anything else is honoured. A key is tried with a few values, since an honoured key
 * refuses a value of the wrong kind: the first that loads decides.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "confref_int.h"
#include "outboxd/config/cfgsrc.h"
#include "outboxd/config/config.h"
#include "outboxd/util/mem.h"

static const char *const worker_base[][2] = {
	{ "bootstrap.servers", "kafka:9092" },
	{ "key.converter", "org.apache.kafka.connect.json.JsonConverter" },
	{ "value.converter", "org.apache.kafka.connect.json.JsonConverter" },
	{ "key.converter.schemas.enable", "false" },
	{ "value.converter.schemas.enable", "false" },
};

static const char *const connector_base[][2] = {
	{ "name", "outbox-connector" },
	{ "connector.class", "io.debezium.connector.postgresql.PostgresConnector" },
	{ "database.hostname", "db" },
	{ "database.user", "relay" },
	{ "database.dbname", "app" },
	{ "topic.prefix", "app" },
	{ "table.include.list", "public.outbox" },
	{ "transforms", "outbox" },
	{ "transforms.outbox.type", "io.debezium.transforms.outbox.EventRouter" },
	/* so that the topic.creation.* keys are read as when a user sets them */
	{ "topic.creation.default.partitions", "-1" },
	{ "topic.creation.default.replication.factor", "-1" },
};

/*
 * Values that load for keys whose honoured values are of a kind the generic tries miss, and the
 * key a value needs beside it (written in the same place), if any. Only the value changes:
 * what the loader does with the key is still what the page says.
 */
static const char *const samples[][4] = {
	{ "sasl.jaas.config",
	  "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p\";" },
	{ "sasl.mechanism", "PLAIN" },
	{ "security.protocol", "SASL_SSL" },
	{ "ssl.endpoint.identification.algorithm", "https" },
	{ "ssl.keystore.location", "/client.pem", "ssl.keystore.type", "PEM" },
	{ "ssl.truststore.location", "/ca.crt", "ssl.truststore.type", "PEM" },
	{ "snapshot.mode", "no_data" },
	{ "plugin.name", "pgoutput" },
	{ "errors.tolerance", "none" },
	{ "table.op.invalid.behavior", "warn" },
	{ "route.topic.replacement", "outbox.${routedByValue}" },
	{ "converter.type", "value" },
	{ "decimal.format", "NUMERIC" },
	{ "replace.null.with.default", "true" },
	{ "partitioner.class", "org.apache.kafka.clients.producer.internals.DefaultPartitioner" },
	{ "connector.class", "io.debezium.connector.postgresql.PostgresConnector" },
	{ "key.converter", "org.apache.kafka.connect.json.JsonConverter" },
	{ "value.converter", "org.apache.kafka.connect.json.JsonConverter" },
	{ "header.converter", "org.apache.kafka.connect.storage.SimpleHeaderConverter" },
	{ "transforms", "outbox" },
	{ "debezium.sink.type", "kafka" },
	{ "debezium.format.key", "json" },
	{ "debezium.format.value", "json" },
	{ "debezium.format.header", "json" },
};

/* A Debezium Server application.properties: the sink's keys, and the source's (prefix removed). */
static const char *const server_base[][2] = {
	{ "debezium.sink.type", "kafka" },
	{ "debezium.sink.kafka.producer.bootstrap.servers", "kafka:9092" },
};

static const char *const source_base[][2] = {
	{ "connector.class", "io.debezium.connector.postgresql.PostgresConnector" },
	{ "database.hostname", "db" },
	{ "database.user", "relay" },
	{ "database.dbname", "app" },
	{ "topic.prefix", "app" },
	{ "table.include.list", "public.outbox" },
	{ "transforms", "outbox" },
	{ "transforms.outbox.type", "io.debezium.transforms.outbox.EventRouter" },
};

static const char *const generic[] = { "1", "true", "x", "none", "-1" };

static void
put(struct kv *kv, const char *const (*rows)[2], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		kv_set(kv, rows[i][0], rows[i][1], "probe");
	}
}

static void
written(const char *key, enum confref_place place, struct buf *out)
{
	static const char *const prefix[] = {
		[CONFREF_WORKER] = "",
		[CONFREF_PRODUCER] = "producer.",
		[CONFREF_CONNECTOR] = "",
		[CONFREF_SMT] = "transforms.outbox.",
		[CONFREF_CONVERTER] = "value.converter.",
		[CONFREF_HEADER] = "header.converter.",
		[CONFREF_SERVER] = "",
		[CONFREF_SOURCE] = "",
	};

	buf_add_fmt(out, "%s%s", prefix[place], key);
}

/*
 * Load the base with @wkey (NULL: none) set to @try[0] and, if @try[1], @try[1] set to @try[3]
 * under @wkey's prefix (@try[2] is the bare key, to find that prefix). Return: the config, or
 * NULL with @err.
 */
static struct config *
load(const char *wkey, enum confref_place place, const char *const *try, char *err, size_t errlen)
{
	struct cfgsrc src = CFGSRC_INIT;
	struct config *cfg = NULL;
	bool server = place == CONFREF_SERVER || place == CONFREF_SOURCE;
	bool in_connector =
		place == CONFREF_CONNECTOR || place == CONFREF_SMT || place == CONFREF_SOURCE;

	if (server) {
		src.flavour = CFGSRC_SERVER;
		src.connector_path = xstrdup("application.properties");
		put(&src.server, server_base, sizeof(server_base) / sizeof(server_base[0]));
		put(&src.connector, source_base, sizeof(source_base) / sizeof(source_base[0]));
	} else {
		src.flavour = CFGSRC_CONNECT;
		src.worker_path = xstrdup("worker.properties");
		src.connector_path = xstrdup("connector.properties");
		put(&src.worker, worker_base, sizeof(worker_base) / sizeof(worker_base[0]));
		put(&src.connector, connector_base,
		    sizeof(connector_base) / sizeof(connector_base[0]));
	}
	if (wkey) {
		struct kv *kv = in_connector ? &src.connector : server ? &src.server : &src.worker;
		struct buf with = BUF_INIT;

		kv_set(kv, wkey, try[0], "probe");
		if (try[1]) {
			/* the companion, under the same prefix as the key */
			buf_add(&with, wkey, strlen(wkey) - strlen(try[2]));
			buf_add_str(&with, try[1]);
			kv_set(kv, buf_cstr(&with), try[3] ? try[3] : "", "probe");
		}
		buf_fini(&with);
	}
	if (config_load_src(&src, &cfg, err, errlen) != 0) {
		cfg = NULL;
	}
	cfgsrc_fini(&src);
	return cfg;
}

/* The loader's message without its "probe: " origin and the key it names. */
static char *
reason(const char *err, const char *wkey)
{
	const char *p = err;
	size_t n = strlen(wkey);

	if (strncmp(p, "probe: ", 7) == 0) {
		p += 7;
	}
	if (strncmp(p, "debezium.source.", 16) == 0 && strncmp(p + 16, wkey, n) == 0 &&
	    strncmp(p + 16 + n, ": ", 2) == 0) {
		p += 16; /* a Server file names the source's keys with their prefix */
	}
	if (strncmp(p, wkey, n) == 0 && strncmp(p + n, ": ", 2) == 0) {
		p += n + 2;
	} else if (strcspn(p, " :") == strcspn(p, ":") && strchr(p, ':') &&
		   strncmp(strchr(p, ':'), ": ", 2) == 0 && memchr(p, '.', strcspn(p, ":"))) {
		p = strchr(p, ':') + 2; /* the key under the name the loader shows it by */
	}
	return xstrdup(p);
}

/* The librdkafka settings @cfg has that @base lacks or sets otherwise, as "a, b". */
static char *
rdkafka_diff(const struct config *base, const struct config *cfg)
{
	struct buf out = BUF_INIT;

	for (size_t i = 0; i < cfg->librdkafka.n; i++) {
		const char *was = kv_get(&base->librdkafka, cfg->librdkafka.v[i].key);

		/* (outboxd.* entries ride along for the producer; they are none of librdkafka's) */
		if (strncmp(cfg->librdkafka.v[i].key, "outboxd.", 8) != 0 &&
		    (!was || strcmp(was, cfg->librdkafka.v[i].value) != 0)) {
			buf_add_fmt(&out, "%s%s", out.len ? ", " : "", cfg->librdkafka.v[i].key);
		}
	}
	return out.len ? buf_steal(&out) : (buf_fini(&out), NULL);
}

static void
classify(const struct config *base, const struct config *cfg, struct confref_probe *out)
{
	for (size_t i = 0; i < cfg->ignored.n; i++) {
		if (!kv_find(&base->ignored, cfg->ignored.v[i].key)) {
			out->cls = CONFREF_IGNORED;
			out->note = xstrdup(cfg->ignored.v[i].value);
			return;
		}
	}
	out->cls = CONFREF_HONOURED;
	out->rdkafka = rdkafka_diff(base, cfg);
}

int
confref_probe(const char *key, enum confref_place place, struct confref_probe *out)
{
	char err[1024], first[1024] = "";
	struct buf wkey = BUF_INIT;
	struct config *base, *cfg = NULL;
	const char *tries[sizeof(samples) / sizeof(samples[0]) +
			  sizeof(generic) / sizeof(generic[0])][4];
	size_t ntries = 0;

	*out = (struct confref_probe){ 0 };
	base = load(NULL, place, NULL, err, sizeof(err));
	if (!base) {
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		if (strcmp(samples[i][0], key) == 0) {
			tries[ntries][0] = samples[i][1];
			tries[ntries][1] = samples[i][2];
			tries[ntries][2] = key;
			tries[ntries++][3] = samples[i][3];
		}
	}
	for (size_t i = 0; i < sizeof(generic) / sizeof(generic[0]); i++) {
		tries[ntries][0] = generic[i];
		tries[ntries++][1] = NULL;
	}
	written(key, place, &wkey);
	for (size_t i = 0; !cfg && i < ntries; i++) {
		cfg = load(buf_cstr(&wkey), place, tries[i], err, sizeof(err));
		if (!cfg && !first[0]) {
			snprintf(first, sizeof(first), "%s", err);
		}
	}
	if (cfg) {
		classify(base, cfg, out);
	} else {
		out->cls = CONFREF_REFUSED;
		out->note = reason(first, buf_cstr(&wkey));
	}
	config_free(cfg);
	config_free(base);
	buf_fini(&wkey);
	return 0;
}

void
confref_probe_fini(struct confref_probe *p)
{
	free(p->note);
	free(p->rdkafka);
	*p = (struct confref_probe){ 0 };
}
