/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_KAFKA_KAFKASEC_H
#define OUTBOXD_KAFKA_KAFKASEC_H

/*
 * How the producer's connections to Kafka are secured: the broker failures that are the
 * configuration's fault (a refused SASL login, a certificate that does not verify, a client
 * certificate the broker refuses), with their fix, and the plain-words description `outboxd
 * check` prints. Pure: librdkafka's settings, error code and reason in, text out; never a
 * secret (sasl.username is one too: see secret_key()).
 */

#include <stdbool.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/kv.h"

/**
 * kafkasec_fix() - what to do about a broker connection failure that no retry fixes.
 * @err: the rd_kafka_resp_err_t of librdkafka's error callback.
 * @reason: its text (which names the broker, and the mechanism for a SASL failure).
 * @mechanism: sasl.mechanisms of the settings, NULL when none.
 * @version: rd_kafka_version().
 *
 * A SASL authentication failure (for OAUTHBEARER: the broker refused the token, or the token
 * endpoint refused the client with an RFC 6749 error code; an unreachable or failing token
 * endpoint is an outage); an SSL error whose reason says the broker's certificate did not
 * verify; a connection the broker cut with a TLS alert about our certificate (mTLS with no
 * or an untrusted client certificate). librdkafka retries all of these for ever; outboxd stops
 * with exit 2 instead, as for a wrong PostgreSQL password, once they persist past their grace
 * (authgrace.h). An unclean TLS close and the other transport errors are not here: they are
 * outages (librdkafka#4294).
 *
 * Return: a static fix, or NULL when the failure is transient.
 */
const char *kafkasec_fix(int err, const char *reason, const char *mechanism, int version);

/**
 * kafkasec_scram_broken() - true if librdkafka @version cannot log in with SCRAM to Apache
 * Kafka 4.0 or later: before 2.6.1 it sent the client nonce twice in its final message, which
 * Kafka 4 refuses as invalid credentials (librdkafka#4895).
 */
bool kafkasec_scram_broken(int version);

/**
 * kafkasec_describe() - appends to @out how the connections are secured, after librdkafka's
 * settings @rd: the protocol, TLS with or without the broker's certificate and host name
 * verified, a client certificate, the SASL mechanism.
 *
 * Return: the number of warnings appended (each after "; warning: "): a password sent
 * without TLS, verification turned off, SCRAM with a librdkafka that Kafka 4 refuses.
 */
int kafkasec_describe(const struct kv *rd, int version, struct buf *out);

#endif
