/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/config/rdconf.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "outboxd/connect/configdef.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"
#include "rdconf_int.h"

enum action {
	PASS,	/* same name in librdkafka */
	RENAME, /* librdkafka name in .rd */
	IGNORE, /* no effect in librdkafka; .note says why */
	REJECT, /* matters, but librdkafka cannot do it; .note gives the fix */
	SPECIAL /* handled in code below */
};

struct rule {
	const char *java; /* a name, or a prefix ending in '.' */
	enum action action;
	const char *rd_or_note;
};

#define JAVA_ONLY "applies to the Java client only"

/* librdkafka's range for queue.buffering.max.kbytes (an int): about 2 TiB */
#define RD_QUEUE_KBYTES_MAX 2147483647

/* Java names without a row pass through unchanged (most are shared with librdkafka). */
static const struct rule rules[] = {
	{ "buffer.memory", SPECIAL, NULL },
	{ "client.dns.lookup", IGNORE, JAVA_ONLY },
	{ "compression.gzip.level", RENAME, "compression.level" },
	{ "compression.lz4.level", RENAME, "compression.level" },
	{ "compression.zstd.level", RENAME, "compression.level" },
	{ "config.providers", IGNORE,
	  "producer-level config providers are not supported; use the worker's" },
	{ "delivery.timeout.ms", RENAME, "message.timeout.ms" },
	{ "enable.metrics.push", IGNORE, JAVA_ONLY },
	{ "interceptor.classes", IGNORE, "Java classes" },
	{ "key.serializer", IGNORE, "outboxd serializes with the configured converters" },
	{ "max.block.ms", IGNORE, "outboxd never blocks on a full queue; it pauses reading" },
	{ "max.request.size", RENAME, "message.max.bytes" },
	{ "metadata.max.idle.ms", IGNORE, JAVA_ONLY },
	{ "metadata.recovery.", IGNORE, JAVA_ONLY },
	{ "metric.reporters", IGNORE, "Java classes; outboxd serves /metrics" },
	{ "metrics.", IGNORE, "Java metrics; outboxd serves /metrics" },
	{ "partitioner.adaptive.partitioning.enable", IGNORE, JAVA_ONLY },
	{ "partitioner.availability.timeout.ms", IGNORE, JAVA_ONLY },
	{ "partitioner.class", SPECIAL, NULL },
	{ "partitioner.ignore.keys", SPECIAL, NULL },
	{ "receive.buffer.bytes", SPECIAL, "socket.receive.buffer.bytes" },
	{ "sasl.client.callback.handler.class", REJECT,
	  "a Java class; librdkafka supports PLAIN, SCRAM and GSSAPI through sasl.jaas.config" },
	{ "sasl.jaas.config", SPECIAL, NULL },
	{ "sasl.kerberos.ticket.renew.", IGNORE, JAVA_ONLY },
	{ "sasl.login.callback.handler.class", SPECIAL, NULL },
	{ "sasl.login.", IGNORE, JAVA_ONLY },
	{ "sasl.mechanism", SPECIAL, NULL },
	{ "sasl.oauthbearer.", SPECIAL, NULL },
	{ "security.providers", IGNORE, JAVA_ONLY },
	{ "send.buffer.bytes", SPECIAL, "socket.send.buffer.bytes" },
	{ "socket.connection.setup.timeout.max.ms", IGNORE, JAVA_ONLY },
	{ "ssl.cipher.suites", IGNORE, "Java cipher names; librdkafka uses OpenSSL's defaults" },
	{ "ssl.enabled.protocols", IGNORE, JAVA_ONLY },
	{ "ssl.endpoint.identification.algorithm", SPECIAL, NULL },
	{ "ssl.engine.factory.class", REJECT,
	  "a Java class; give PEM files to ssl.*.location instead" },
	{ "ssl.keymanager.algorithm", IGNORE, JAVA_ONLY },
	{ "ssl.keystore.certificate.chain", RENAME, "ssl.certificate.pem" },
	{ "ssl.keystore.key", RENAME, "ssl.key.pem" },
	{ "ssl.keystore.location", SPECIAL, NULL },
	{ "ssl.keystore.password", SPECIAL, NULL },
	{ "ssl.keystore.type", IGNORE, "read with ssl.keystore.location" },
	{ "ssl.protocol", IGNORE, JAVA_ONLY },
	{ "ssl.provider", IGNORE, JAVA_ONLY },
	{ "ssl.secure.random.implementation", IGNORE, JAVA_ONLY },
	{ "ssl.trustmanager.algorithm", IGNORE, JAVA_ONLY },
	{ "ssl.truststore.certificates", RENAME, "ssl.ca.pem" },
	{ "ssl.truststore.location", SPECIAL, NULL },
	{ "ssl.truststore.password", IGNORE,
	  "librdkafka reads PEM CA files, which have no password" },
	{ "ssl.truststore.type", IGNORE, "read with ssl.truststore.location" },
	{ "transaction.timeout.ms", IGNORE, "outboxd does not use transactions" },
	{ "transaction.two.phase.commit.enable", IGNORE, "outboxd does not use transactions" },
	{ "transactional.id", REJECT,
	  "outboxd does not use Kafka transactions (it is idempotent, at least once); remove it" },
	{ "value.serializer", IGNORE, "outboxd serializes with the configured converters" },
};

static const struct rule *
find_rule(const char *key)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		size_t n = strlen(rules[i].java);

		if (rules[i].java[n - 1] == '.' ? strncmp(key, rules[i].java, n) == 0 :
						  strcmp(key, rules[i].java) == 0) {
			return &rules[i];
		}
	}
	return NULL;
}

/* Skip blanks; JAAS text may be spread over lines. */
static const char *
skip_space(const char *p)
{
	while (*p && isspace((unsigned char)*p)) {
		p++;
	}
	return p;
}

/* A JAAS option value: a "quoted" string (with \" and \\ escapes) or a bare token. */
static const char *
jaas_value(const char *p, struct buf *out)
{
	if (*p != '"') {
		while (*p && !isspace((unsigned char)*p) && *p != ';') {
			buf_add_char(out, *p++);
		}
		return out->len ? p : NULL;
	}
	for (p++; *p && *p != '"'; p++) {
		if (*p == '\\' && p[1]) {
			p++;
		}
		buf_add_char(out, *p);
	}
	return *p == '"' ? p + 1 : NULL;
}

int
rdconf_jaas_parse(const char *jaas, char **ret_module, struct kv *opts)
{
	struct buf name = BUF_INIT, value = BUF_INIT;
	const char *p = skip_space(jaas);
	const char *cls = p;
	int r = -EINVAL;

	while (*p && !isspace((unsigned char)*p)) {
		p++;
	}
	*ret_module = xstrndup(cls, (size_t)(p - cls));
	p = skip_space(p);
	/* the control flag: required, requisite, sufficient or optional */
	while (*p && isalpha((unsigned char)*p)) {
		p++;
	}
	for (;;) {
		p = skip_space(p);
		if (*p == ';' || !*p) {
			break;
		}
		buf_reset(&name);
		buf_reset(&value);
		while (*p && *p != '=' && !isspace((unsigned char)*p)) {
			buf_add_char(&name, *p++);
		}
		p = skip_space(p);
		if (*p != '=') {
			goto out;
		}
		p = jaas_value(skip_space(p + 1), &value);
		if (!p) {
			goto out;
		}
		kv_set(opts, buf_cstr(&name), buf_cstr(&value), NULL);
	}
	r = 0;
out:
	buf_fini(&name);
	buf_fini(&value);
	return r;
}

#define PLAIN_LOGIN_MODULE "org.apache.kafka.common.security.plain.PlainLoginModule"
#define SCRAM_LOGIN_MODULE "org.apache.kafka.common.security.scram.ScramLoginModule"

/* What rdconf_jaas_credentials() returns for @module, its options @opts parsed with @parsed. */
static int
user_and_password(const char *module, int parsed, const struct kv *opts)
{
	if (strcmp(module, PLAIN_LOGIN_MODULE) != 0 && strcmp(module, SCRAM_LOGIN_MODULE) != 0) {
		return -ENOTSUP;
	}
	return parsed == 0 && kv_get(opts, "username") && kv_get(opts, "password") ? 0 : -EINVAL;
}

int
rdconf_jaas_credentials(const char *jaas, char **ret_user, char **ret_password)
{
	struct kv opts = KV_INIT;
	char *module = NULL;
	int r = rdconf_jaas_parse(jaas, &module, &opts);

	r = user_and_password(module, r, &opts);
	if (r == 0) {
		*ret_user = xstrdup(kv_get(&opts, "username"));
		*ret_password = xstrdup(kv_get(&opts, "password"));
	}
	free(module);
	kv_fini(&opts);
	return r;
}

static int
translate_jaas(const char *value, const char *origin, const char *display, struct kv *out,
	       char *errbuf, size_t errlen)
{
	struct kv opts = KV_INIT;
	char *module = NULL;
	int parsed = rdconf_jaas_parse(value, &module, &opts);
	int r = user_and_password(module, parsed, &opts);
	bool oauth = strcmp(module, RDCONF_OAUTH_LOGIN_MODULE) == 0;

	if (r == 0) {
		kv_set(out, "sasl.username", kv_get(&opts, "username"), origin);
		kv_set(out, "sasl.password", kv_get(&opts, "password"), origin);
	} else if (oauth && parsed == 0) {
		r = rdconf_oauth_jaas(&opts, origin, display, out, errbuf, errlen);
	} else if (r == -ENOTSUP && !oauth) {
		errbuf_set(errbuf, errlen,
			   "%s: %s: only PlainLoginModule, ScramLoginModule and "
			   "OAuthBearerLoginModule are supported; use SASL/PLAIN, SCRAM or "
			   "OAUTHBEARER with an OIDC token endpoint",
			   origin, display);
		r = -EINVAL;
	} else {
		errbuf_set(
			errbuf, errlen,
			"%s: %s: cannot read %s from the login module options; check the quoting",
			origin, display,
			oauth ? "clientId=\"...\" clientSecret=\"...\"" :
				"username=\"...\" password=\"...\"");
		r = -EINVAL;
	}
	free(module);
	kv_fini(&opts);
	return r;
}

/* A Java store type: the explicit *.type setting, else Java's default JKS. */
static const char *
store_type(const struct kv *all, const char *type_key)
{
	const char *t = all ? kv_get(all, type_key) : NULL;

	return t && *t ? t : "JKS";
}

static int
translate_store(const char *key, const char *value, const struct kv *all, const char *origin,
		const char *display, struct kv *out, char *errbuf, size_t errlen)
{
	bool trust = strcmp(key, "ssl.truststore.location") == 0;
	const char *type = store_type(all, trust ? "ssl.truststore.type" : "ssl.keystore.type");

	if (strcasecmp(type, "PEM") == 0) {
		if (trust) {
			kv_set(out, "ssl.ca.location", value, origin);
		} else {
			/* a PEM key store holds the key and its certificate chain */
			kv_set(out, "ssl.certificate.location", value, origin);
			kv_set(out, "ssl.key.location", value, origin);
		}
		return 0;
	}
	if (!trust && strcasecmp(type, "PKCS12") == 0) {
		kv_set(out, "ssl.keystore.location", value, origin);
		return 0;
	}
	if (trust) {
		errbuf_set(
			errbuf, errlen,
			"%s: %s: a %s trust store cannot be read by librdkafka; export the CA "
			"certificates to a PEM file and set ssl.ca.location (or ssl.truststore.type=PEM)",
			origin, display, type);
	} else {
		errbuf_set(
			errbuf, errlen,
			"%s: %s: a %s key store cannot be read by librdkafka; convert it to PKCS12 "
			"(ssl.keystore.type=PKCS12) or to PEM files for ssl.certificate.location and "
			"ssl.key.location",
			origin, display, type);
	}
	return -EINVAL;
}

/* Java's buffer.memory (bytes) as librdkafka's queue.buffering.max.kbytes (KiB, an int). */
static int
buffer_memory(const char *value, const char *origin, const char *display, struct kv *out,
	      char *errbuf, size_t errlen)
{
	int64_t bytes;

	if (configdef_long(value, 1, INT64_MAX, &bytes) < 0) {
		errbuf_set(errbuf, errlen, "%s: %s: \"%s\" is not a positive number of bytes",
			   origin, display, value);
		return -EINVAL;
	}
	/* rounded up without bytes + 1023, which overflows near INT64_MAX */
	int64_t kbytes = bytes / 1024 + (bytes % 1024 != 0);

	if (kbytes > RD_QUEUE_KBYTES_MAX) {
		errbuf_set(errbuf, errlen,
			   "%s: %s: %s bytes is more than librdkafka's queue can be "
			   "(queue.buffering.max.kbytes at most %d KiB, %lld bytes); set "
			   "at most that, or leave it out",
			   origin, display, value, RD_QUEUE_KBYTES_MAX,
			   (long long)RD_QUEUE_KBYTES_MAX * 1024);
		return -EINVAL;
	}
	struct buf kb = BUF_INIT;

	buf_add_fmt(&kb, "%lld", (long long)kbytes);
	kv_set(out, "queue.buffering.max.kbytes", buf_cstr(&kb), origin);
	buf_fini(&kb);
	return 0;
}

static int
special(const struct rule *rule, const char *key, const char *value, const struct kv *all,
	const char *origin, const char *display, struct kv *out, struct kv *ignored, char *errbuf,
	size_t errlen)
{
	bool ignore_keys;

	if (strcmp(key, "sasl.jaas.config") == 0) {
		return translate_jaas(value, origin, display, out, errbuf, errlen);
	}
	if (strcmp(key, "ssl.truststore.location") == 0 ||
	    strcmp(key, "ssl.keystore.location") == 0) {
		return translate_store(key, value, all, origin, display, out, errbuf, errlen);
	}
	if (strcmp(key, "ssl.keystore.password") == 0) {
		if (strcasecmp(store_type(all, "ssl.keystore.type"), "PKCS12") == 0) {
			kv_set(out, "ssl.keystore.password", value, origin);
		} else {
			kv_set(ignored, display,
			       "only a PKCS12 key store has a password in librdkafka", origin);
		}
		return 0;
	}
	if (strcmp(key, "sasl.mechanism") == 0) {
		kv_set(out, "sasl.mechanisms", value, origin);
		return 0;
	}
	if (rdconf_oauth_key(key)) {
		return rdconf_oauth_setting(key, value, origin, display, out, ignored, errbuf,
					    errlen);
	}
	if (strcmp(key, "ssl.endpoint.identification.algorithm") == 0) {
		kv_set(out, key, *value ? value : "none", origin);
		return 0;
	}
	if (strcmp(key, "buffer.memory") == 0) {
		return buffer_memory(value, origin, display, out, errbuf, errlen);
	}
	if (strcmp(key, "receive.buffer.bytes") == 0 || strcmp(key, "send.buffer.bytes") == 0) {
		/* Java's -1 (the OS default) is librdkafka's 0 */
		kv_set(out, rule->rd_or_note, strcmp(value, "-1") == 0 ? "0" : value, origin);
		return 0;
	}
	if (strcmp(key, "partitioner.class") == 0) {
		if (!*value || strstr(value, "DefaultPartitioner") ||
		    strstr(value, "BuiltInPartitioner")) {
			kv_set(ignored, display,
			       "outboxd partitions like the Java default (murmur2)", origin);
			return 0;
		}
		errbuf_set(
			errbuf, errlen,
			"%s: %s: custom Java partitioners are not supported; outboxd "
			"partitions like the Java default partitioner (murmur2 of the key); remove it",
			origin, display);
		return -EINVAL;
	}
	/* partitioner.ignore.keys (a value that is no boolean is left to the "ignored" note) */
	if (configdef_bool(value, &ignore_keys) == 0 && ignore_keys) {
		errbuf_set(errbuf, errlen,
			   "%s: %s: true is not supported; outboxd partitions by key like "
			   "the Java default; remove it",
			   origin, display);
		return -EINVAL;
	}
	kv_set(ignored, display, "false is the default", origin);
	return 0;
}

int
rdconf_translate(const char *key, const char *value, const struct kv *all, const char *origin,
		 const char *display, struct kv *out, struct kv *ignored, char *errbuf,
		 size_t errlen)
{
	const struct rule *rule = find_rule(key);

	if (!rule) {
		kv_set(out, key, value, origin);
		return 0;
	}
	switch (rule->action) {
	case PASS: kv_set(out, key, value, origin); return 0;
	case RENAME: kv_set(out, rule->rd_or_note, value, origin); return 0;
	case IGNORE: kv_set(ignored, display, rule->rd_or_note, origin); return 0;
	case REJECT:
		errbuf_set(errbuf, errlen, "%s: %s: %s", origin, display, rule->rd_or_note);
		return -EINVAL;
	case SPECIAL: break;
	}
	return special(rule, key, value, all, origin, display, out, ignored, errbuf, errlen);
}
