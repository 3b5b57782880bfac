/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_CFGSRC_H
#define OUTBOXD_CFGSRC_H

/*
 * The configuration sources a Debezium user already has, read into flat key lists before any key
 * is classified (that is config's job):
 *  - Kafka Connect: a worker .properties plus a connector .properties, connector JSON
 *    ({"name": ..., "config": {...}} as sent to the REST API) or Strimzi KafkaConnector YAML
 *    (strimzi.h), told apart by content; the worker's config providers (${file:path:key},
 *    ${env:VAR}, ${dir:path:file}) are resolved.
 *  - Debezium Server: one application.properties; environment variables override its keys the
 *    way MicroProfile Config maps them (DEBEZIUM_SOURCE_DATABASE_HOSTNAME), and ${VAR} /
 *    ${VAR:default} expressions are expanded.
 * outboxd.* keys may appear in any file, and OUTBOXD_X_Y in the environment sets outboxd.x.y.
 * Every entry keeps its origin ("file:line" or "environment NAME") for error messages.
 */

#include <stddef.h>

#include "outboxd/util/kv.h"

enum cfgsrc_flavour {
	CFGSRC_CONNECT = 1, /* Kafka Connect worker + connector */
	CFGSRC_SERVER = 2,  /* Debezium Server application.properties */
};

struct cfgsrc {
	enum cfgsrc_flavour flavour;
	char *worker_path;    /* Connect: the worker file; NULL for Server */
	char *connector_path; /* the connector file (Server: application.properties) */
	struct kv worker;     /* Connect worker keys as written */
	/*
	 * Connector keys in Connect's names: the connector file, or for Server debezium.source.*
	 * with the prefix removed and debezium.transforms / debezium.predicates(.*) as
	 * transforms / predicates(.*).
	 */
	struct kv connector;
	struct kv
		server; /* Server: every other key as written (debezium.format.*, debezium.sink.*, quarkus.*) */
	struct kv outboxd; /* outboxd.* keys from any file or OUTBOXD_* */
	struct kv ignored; /* fields of the file's format without effect (key -> why) */
};

#define CFGSRC_INIT ((struct cfgsrc){ 0, NULL, NULL, KV_INIT, KV_INIT, KV_INIT, KV_INIT, KV_INIT })

/**
 * cfgsrc_load() - read the files and the environment.
 * @paths: borrowed; @npaths file names.
 * @envp: borrowed; "NAME=value" strings, NULL-terminated (environ); may be NULL.
 * @ret: must be CFGSRC_INIT; filled on success.
 *
 * Return: 0, or -EINVAL / -errno with "file:line: reason" in @errbuf (never a secret value).
 */
int cfgsrc_load(const char *const *paths, int npaths, char *const *envp, struct cfgsrc *ret,
		char *errbuf, size_t errlen);

/**
 * cfgsrc_env_name() - the environment variable MicroProfile Config reads for @key:
 * upper case, every character other than a letter or digit replaced by '_'.
 * Return: caller-frees.
 */
char *cfgsrc_env_name(const char *key);

/* cfgsrc_fini() - free the lists; @src is left as CFGSRC_INIT. */
void cfgsrc_fini(struct cfgsrc *src);

#endif
