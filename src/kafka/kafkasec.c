/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/kafka/kafkasec.h"

#include <librdkafka/rdkafka.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#define SCRAM_FIX_VERSION 0x020601ff /* 2.6.1: confluentinc/librdkafka#4895 */

bool
kafkasec_scram_broken(int version)
{
	return version < SCRAM_FIX_VERSION;
}

static bool
is_scram(const char *mechanism)
{
	return mechanism && strncasecmp(mechanism, "SCRAM-", 6) == 0;
}

/*
 * The token endpoint's refusals that are the client's fault: RFC 6749 section 5.2's error
 * codes, which librdkafka passes on from the response body. Anything else (unreachable, 5xx)
 * is the identity provider's outage: retried.
 */
static bool
oauth_client_refused(const char *reason)
{
	static const char *const codes[] = { "invalid_client",	"unauthorized_client",
					     "invalid_grant",	"invalid_scope",
					     "invalid_request", "unsupported_grant_type" };

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		if (strstr(reason, codes[i])) {
			return true;
		}
	}
	return false;
}

static const char *
oauth_fix(const char *reason)
{
	if (strstr(reason, "OAUTHBEARER token")) {
		/* librdkafka could not get a token from sasl.oauthbearer.token.endpoint.url */
		return oauth_client_refused(reason) ?
			       "the token endpoint refused the client: check clientId, "
			       "clientSecret and scope in sasl.jaas.config, and "
			       "sasl.oauthbearer.token.endpoint.url" :
			       NULL;
	}
	return "the broker refused the token: its issuer, audience or signing key is not what "
	       "the broker's listener expects (its sasl.oauthbearer.expected.* and JWKS); check "
	       "sasl.oauthbearer.token.endpoint.url and the scope";
}

const char *
kafkasec_fix(int err, const char *reason, const char *mechanism, int version)
{
	if (!reason) {
		reason = "";
	}
	if (err == RD_KAFKA_RESP_ERR__AUTHENTICATION && mechanism &&
	    strcasecmp(mechanism, "OAUTHBEARER") == 0) {
		return oauth_fix(reason);
	}
	if (err == RD_KAFKA_RESP_ERR__AUTHENTICATION) {
		if (is_scram(mechanism) && kafkasec_scram_broken(version)) {
			return "check the user and password of sasl.jaas.config (or sasl.username and "
			       "sasl.password); if they are right, the broker is Apache Kafka 4.0 or "
			       "later, which refuses the SCRAM login of librdkafka before 2.6.1 "
			       "(librdkafka#4895): run outboxd built with librdkafka 2.6.1 or later "
			       "(the container image has " OUTBOXD_RDKAFKA_PINNED ")";
		}
		return "check the user and password of sasl.jaas.config (or sasl.username and "
		       "sasl.password) and sasl.mechanism: the broker refused them";
	}
	/* librdkafka's text for a server certificate OpenSSL did not verify */
	if (err == RD_KAFKA_RESP_ERR__SSL && strstr(reason, "certificate verify failed")) {
		return "the broker's certificate did not verify: ssl.truststore.location (librdkafka: "
		       "ssl.ca.location) must hold the CA that signed it, and the bootstrap and "
		       "advertised host names must be in it (or set "
		       "ssl.endpoint.identification.algorithm= to skip the name check)";
	}
	/* the broker's TLS alert: it wanted a client certificate it trusts (mTLS) */
	if ((err == RD_KAFKA_RESP_ERR__TRANSPORT || err == RD_KAFKA_RESP_ERR__SSL) &&
	    (strstr(reason, "alert bad certificate") ||
	     strstr(reason, "alert certificate required") || strstr(reason, "alert unknown ca"))) {
		return "the broker refused outboxd's client certificate (or its absence): set "
		       "ssl.keystore.location (PEM or PKCS12) or ssl.certificate.location and "
		       "ssl.key.location to a certificate signed by a CA the broker trusts";
	}
	return NULL;
}

static const char *
get_or(const struct kv *rd, const char *key, const char *dflt)
{
	const char *v = kv_get(rd, key);

	return v && *v ? v : dflt;
}

static bool
has(const struct kv *rd, const char *key)
{
	const char *v = kv_get(rd, key);

	return v && *v;
}

static int
warn(struct buf *out, const char *what)
{
	buf_add_fmt(out, "; warning: %s", what);
	return 1;
}

int
kafkasec_describe(const struct kv *rd, int version, struct buf *out)
{
	const char *proto = get_or(rd, "security.protocol", "plaintext");
	const char *mech = get_or(rd, "sasl.mechanisms", get_or(rd, "sasl.mechanism", "GSSAPI"));
	bool tls = strcasecmp(proto, "ssl") == 0 || strcasecmp(proto, "sasl_ssl") == 0;
	bool sasl = strncasecmp(proto, "sasl_", 5) == 0;
	bool verify =
		strcasecmp(get_or(rd, "enable.ssl.certificate.verification", "true"), "false") != 0;
	/* librdkafka 2.0 and later check the host name unless this is set to none */
	bool names = strcasecmp(get_or(rd, "ssl.endpoint.identification.algorithm", "https"),
				"none") != 0;
	int warnings = 0;

	buf_add_fmt(out, "security.protocol %s", proto);
	if (tls) {
		buf_add_str(out, verify ? "; TLS, the broker's certificate verified against " :
					  "; TLS, the broker's certificate NOT verified");
		if (verify) {
			buf_add_str(out, has(rd, "ssl.ca.location") ? "ssl.ca.location" :
					 has(rd, "ssl.ca.pem")	    ? "ssl.ca.pem" :
								      "the system's CA store");
			buf_add_str(out,
				    names ? ", host name verified" : ", host name NOT verified");
		}
		if (has(rd, "ssl.certificate.location") || has(rd, "ssl.certificate.pem") ||
		    has(rd, "ssl.keystore.location")) {
			buf_add_fmt(out, "; client certificate %s",
				    has(rd, "ssl.key.password") ||
						    has(rd, "ssl.keystore.password") ?
					    "(key encrypted)" :
					    "(key not encrypted)");
		}
	}
	if (sasl) {
		buf_add_fmt(out, "; SASL %s", mech);
		if (strcasecmp(get_or(rd, "sasl.oauthbearer.method", "default"), "oidc") == 0) {
			buf_add_str(out, ", tokens from an OIDC token endpoint");
		}
	}
	if (!tls) {
		buf_add_str(out, "; no TLS");
	}
	if (sasl && !tls && strcasecmp(mech, "GSSAPI") != 0) {
		warnings += warn(out, strcasecmp(mech, "PLAIN") == 0 ?
					      "the SASL password travels in clear text: use "
					      "security.protocol=SASL_SSL" :
					      "SASL without TLS: the records and the login travel "
					      "unencrypted; use security.protocol=SASL_SSL");
	}
	if (tls && !verify) {
		warnings += warn(out, "enable.ssl.certificate.verification=false accepts any "
				      "broker: remove it and set ssl.ca.location");
	} else if (tls && !names) {
		warnings += warn(out, "ssl.endpoint.identification.algorithm is none: any "
				      "certificate the CA signed is accepted for this broker");
	}
	if (sasl && is_scram(mech) && kafkasec_scram_broken(version)) {
		warnings += warn(out, "this librdkafka cannot log in with SCRAM to Apache Kafka "
				      "4.0 or later (librdkafka#4895, fixed in 2.6.1)");
	}
	return warnings;
}
