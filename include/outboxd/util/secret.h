/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_SECRET_H
#define OUTBOXD_SECRET_H

/*
 * The one rule for what is never printed: configuration errors, `outboxd check`, producer
 * errors and log lines show such a key's name, never its value. One predicate, so that a key
 * hidden in one place is hidden in all of them.
 */

#include <stdbool.h>

/**
 * secret_key() - true if the value of the setting @key must never be printed.
 * @key: borrowed; any spelling of the name (Connect, Debezium Server, librdkafka, libpq),
 *	compared case-insensitively.
 *
 * True when the name contains password, secret, passphrase or jaas (sasl.jaas.config holds a
 * password), the private-key settings key.pem and ssl.keystore.key, oauthbearer.config (it may
 * hold a client secret), or is a SASL user name (sasl.username, which is half a credential).
 * Hiding a value that was not secret costs nothing; printing one that was cannot be undone.
 */
bool secret_key(const char *key);

#endif
