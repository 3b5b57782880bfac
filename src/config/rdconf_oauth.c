/* SPDX-License-Identifier: Apache-2.0 */
#include "rdconf_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/errbuf.h"

/*
 * One extension for librdkafka's sasl.oauthbearer.extensions ("k=v,k2=v2"), with Kafka's rules
 * for it (OAuthBearerClientInitialResponse: a key of letters other than "auth", a value of
 * printable ASCII, space, tab, CR or LF). librdkafka splits the list at commas, honouring a
 * backslash escape (rd_string_split), and each item at its first '=': a comma or a backslash in
 * a value is escaped, an '=' needs nothing.
 */
static int
add_extension(struct buf *ext, const char *key, const char *value, const char *origin,
	      const char *display, char *errbuf, size_t errlen)
{
	bool key_ok = *key && strcmp(key, "auth") != 0;

	for (const char *c = key; *c; c++) {
		key_ok = key_ok && ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z'));
	}
	if (!key_ok) {
		errbuf_set(errbuf, errlen,
			   "%s: %s: extension_%s: an OAUTHBEARER extension's name is letters only "
			   "(A-Z, a-z) and not \"auth\" (RFC 7628, as Kafka checks it); rename it",
			   origin, display, key);
		return -EINVAL;
	}
	for (const char *c = value; *c; c++) {
		if ((*c < 0x21 || *c > 0x7e) && !strchr(" \t\r\n", *c)) {
			errbuf_set(
				errbuf, errlen,
				"%s: %s: extension_%s: an OAUTHBEARER extension's value is "
				"printable ASCII, space, tab or line breaks (RFC 7628); byte 0x%02x "
				"at %zu is not",
				origin, display, key, (unsigned char)*c, (size_t)(c - value));
			return -EINVAL;
		}
	}
	if (!*value) {
		errbuf_set(errbuf, errlen,
			   "%s: %s: extension_%s: an OAUTHBEARER extension's value may not be "
			   "empty (RFC 7628); give it a value or remove it",
			   origin, display, key);
		return -EINVAL;
	}
	buf_add_fmt(ext, "%s%s=", ext->len ? "," : "", key);
	for (const char *c = value; *c; c++) {
		if (*c == ',' || *c == '\\') {
			buf_add_str(ext, "\\");
		}
		buf_add_char(ext, *c);
	}
	return 0;
}

int
rdconf_oauth_jaas(const struct kv *opts, const char *origin, const char *display, struct kv *out,
		  char *errbuf, size_t errlen)
{
	struct buf ext = BUF_INIT;

	for (size_t i = 0; i < opts->n; i++) {
		const char *k = opts->v[i].key, *v = opts->v[i].value;

		if (strcmp(k, "clientId") == 0) {
			kv_set(out, "sasl.oauthbearer.client.id", v, origin);
		} else if (strcmp(k, "clientSecret") == 0) {
			kv_set(out, "sasl.oauthbearer.client.secret", v, origin);
		} else if (strcmp(k, "scope") == 0) {
			kv_set(out, "sasl.oauthbearer.scope", v, origin);
		} else if (strncmp(k, "extension_", 10) == 0) {
			if (add_extension(&ext, k + 10, v, origin, display, errbuf, errlen) < 0) {
				buf_fini(&ext);
				return -EINVAL;
			}
		} else if (strncmp(k, "unsecuredLogin", 14) == 0) {
			buf_fini(&ext);
			errbuf_set(
				errbuf, errlen,
				"%s: %s: unsecured (unsigned) OAUTHBEARER tokens are for tests; "
				"use an OIDC token endpoint (sasl.oauthbearer.token.endpoint.url "
				"with clientId and clientSecret)",
				origin, display);
			return -EINVAL;
		}
		/* other options are the Java callback handler's own (e.g. its ssl settings) */
	}
	if (ext.len) {
		kv_set(out, "sasl.oauthbearer.extensions", buf_cstr(&ext), origin);
	}
	buf_fini(&ext);
	return 0;
}

/* Java's name -> librdkafka's, for the OIDC client credentials grant. */
static const struct {
	const char *java, *rd;
} renamed[] = {
	{ "sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.token.endpoint.url" },
	{ "sasl.oauthbearer.client.credentials.client.id", "sasl.oauthbearer.client.id" },
	{ "sasl.oauthbearer.client.credentials.client.secret", "sasl.oauthbearer.client.secret" },
	{ "sasl.oauthbearer.scope", "sasl.oauthbearer.scope" },
};

/* Settings of the token's validation, which the broker does, not a producer. */
static const char *const validation[] = {
	"sasl.oauthbearer.jwks.endpoint.",
	"sasl.oauthbearer.expected.",
	"sasl.oauthbearer.clock.skew.seconds",
	"sasl.oauthbearer.jwt.validator.class",
};

bool
rdconf_oauth_key(const char *key)
{
	return strncmp(key, "sasl.oauthbearer.", 17) == 0 ||
	       strcmp(key, "sasl.login.callback.handler.class") == 0;
}

static int
refuse(char *errbuf, size_t errlen, const char *origin, const char *display, const char *why)
{
	errbuf_set(errbuf, errlen, "%s: %s: %s", origin, display, why);
	return -EINVAL;
}

int
rdconf_oauth_setting(const char *key, const char *value, const char *origin, const char *display,
		     struct kv *out, struct kv *ignored, char *errbuf, size_t errlen)
{
	for (size_t i = 0; i < sizeof(renamed) / sizeof(renamed[0]); i++) {
		if (strcmp(key, renamed[i].java) == 0) {
			kv_set(out, renamed[i].rd, value, origin);
			if (strcmp(key, "sasl.oauthbearer.token.endpoint.url") == 0) {
				kv_set(out, "sasl.oauthbearer.method", "oidc", origin);
			}
			return 0;
		}
	}
	for (size_t i = 0; i < sizeof(validation) / sizeof(validation[0]); i++) {
		size_t n = strlen(validation[i]);

		if (strncmp(key, validation[i], n) == 0 &&
		    (validation[i][n - 1] == '.' || key[n] == '\0')) {
			kv_set(ignored, display, "the broker validates the tokens, not a producer",
			       origin);
			return 0;
		}
	}
	if (strcmp(key, "sasl.login.callback.handler.class") == 0) {
		/* the Java client's OIDC client (3.1-3.9 had it in the .secured package) */
		if (strstr(value, "OAuthBearerLoginCallbackHandler")) {
			kv_set(ignored, display,
			       "librdkafka's sasl.oauthbearer.method=oidc gets the tokens", origin);
			return 0;
		}
		return refuse(errbuf, errlen, origin, display,
			      "a Java class; librdkafka gets OAUTHBEARER tokens from an OIDC token "
			      "endpoint (sasl.oauthbearer.token.endpoint.url); remove it");
	}
	if ((strcmp(key, "sasl.oauthbearer.sub.claim.name") == 0 && strcmp(value, "sub") == 0) ||
	    (strcmp(key, "sasl.oauthbearer.scope.claim.name") == 0 &&
	     strcmp(value, "scope") == 0) ||
	    (strcmp(key, "sasl.oauthbearer.header.urlencode") == 0 &&
	     strcmp(value, "false") == 0)) {
		kv_set(ignored, display, "the default, which librdkafka has too", origin);
		return 0;
	}
	return refuse(errbuf, errlen, origin, display,
		      "outboxd supports OAUTHBEARER with an OIDC token endpoint and the client "
		      "credentials grant only (sasl.oauthbearer.token.endpoint.url, clientId and "
		      "clientSecret in sasl.jaas.config); remove it");
}
