/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The state of one config_load() and what config.c (connector and outboxd keys) and
 * config_kafka.c (the Kafka side) both do with it: errors with file:line, keys as the user
 * wrote them, keys accepted without effect, unknown keys. Below both, so they never call each
 * other back (config.c calls config_kafka.c, both call this).
 */
#include "config_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/secret.h"

void
config_ctx_seterr(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->errbuf || !c->errlen) {
		return;
	}
	va_start(ap, fmt);
	vsnprintf(c->errbuf, c->errlen, fmt, ap);
	va_end(ap);
}

bool
config_ctx_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The key as the user wrote it (Server keys carry their debezium.* prefix). */
char *
config_ctx_display(const struct ctx *c, const char *key)
{
	struct buf b = BUF_INIT;

	if (c->src->flavour == CFGSRC_SERVER) {
		buf_add_str(&b, config_ctx_starts_with(key, "transforms") ||
						config_ctx_starts_with(key, "predicates") ?
					"debezium." :
					"debezium.source.");
	}
	buf_add_str(&b, key);
	return buf_steal(&b);
}

void
config_ctx_ignore(struct ctx *c, const char *shown, const char *why, const char *origin)
{
	kv_set(&c->cfg->ignored, shown, why, origin);
}

void
config_ctx_ignore_all(struct ctx *c, const struct kv *ignored)
{
	for (size_t i = 0; i < ignored->n; i++) {
		config_ctx_ignore(c, ignored->v[i].key, ignored->v[i].value, ignored->v[i].origin);
	}
}

int
config_ctx_unknown(struct ctx *c, const char *shown, const char *origin)
{
	config_ctx_seterr(c, "%s: unknown key \"%s\" " UNKNOWN_WHY, origin, shown);
	return -EINVAL;
}

/* The value for a message: never a secret. */
const char *
config_ctx_shown_value(const char *key, const char *value)
{
	return secret_key(key) ? "(secret, not shown)" : value;
}
