/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RDCONF_INT_H
#define OUTBOXD_RDCONF_INT_H

/*
 * Private to rdconf.c: the SASL/OAUTHBEARER settings (rdconf_oauth.c). The Java client gets
 * its tokens from an OIDC token endpoint with the client credentials grant
 * (OAuthBearerLoginCallbackHandler, sasl.oauthbearer.token.endpoint.url, the client id and
 * secret in OAuthBearerLoginModule's options); librdkafka does the same with
 * sasl.oauthbearer.method=oidc.
 */

#include <stdbool.h>
#include <stddef.h>

#include "outboxd/util/kv.h"

#define RDCONF_OAUTH_LOGIN_MODULE                                                                  \
	"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"

/*
 * rdconf_oauth_jaas() - OAuthBearerLoginModule's options @opts (clientId, clientSecret, scope,
 * extension_NAME) as librdkafka's sasl.oauthbearer.* settings in @out.
 * Return: 0, or -EINVAL with "@origin: @display: reason; fix" (never a value) in @errbuf.
 */
int rdconf_oauth_jaas(const struct kv *opts, const char *origin, const char *display,
		      struct kv *out, char *errbuf, size_t errlen);

/* rdconf_oauth_key() - true for the settings rdconf_oauth_setting() translates. */
bool rdconf_oauth_key(const char *key);

/*
 * rdconf_oauth_setting() - one Java sasl.oauthbearer.* setting, or
 * sasl.login.callback.handler.class: translated, ignored (token validation is the broker's) or
 * refused with the fix.
 * Return: 0, or -EINVAL with the reason in @errbuf.
 */
int rdconf_oauth_setting(const char *key, const char *value, const char *origin,
			 const char *display, struct kv *out, struct kv *ignored, char *errbuf,
			 size_t errlen);

#endif
