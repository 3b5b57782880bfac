/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/util/secret.h"

#include <string.h>

/* Parts of a setting's name that make its value secret, in lower case. */
static const char *const secret_parts[] = {
	"password", /* database.password, sasl.password, ssl.key.password, ... */
	"secret",   /* sasl.oauthbearer.client.secret, ... */
	"passphrase",
	"jaas",		      /* sasl.jaas.config: username="..." password="..." */
	"key.pem",	      /* ssl.key.pem (librdkafka), the private key itself */
	"ssl.keystore.key",   /* the Java client's PEM private key */
	"oauthbearer.config", /* sasl.oauthbearer.config may carry clientSecret=... */
	"sasl.username",      /* config_describe() always hid it: half of a credential */
};

bool
secret_key(const char *key)
{
	for (size_t i = 0; key && i < sizeof(secret_parts) / sizeof(secret_parts[0]); i++) {
		if (strcasestr(key, secret_parts[i])) {
			return true;
		}
	}
	return false;
}
