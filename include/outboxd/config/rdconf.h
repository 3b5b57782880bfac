/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RDCONF_H
#define OUTBOXD_RDCONF_H

/*
 * Translation of Java producer settings (Kafka Connect's producer.* / producer.override.*,
 * Debezium Server's debezium.sink.kafka.producer.*) into librdkafka property names. A setting is
 * translated where librdkafka has an equivalent, rejected with the fix where it has none but the
 * setting matters (JKS trust stores, a Java class), ignored where it does not apply to librdkafka
 * (serializers, max.block.ms, Java class hooks), and passed through otherwise.
 */

#include <stddef.h>

#include "outboxd/util/kv.h"

/**
 * rdconf_translate() - translate one Java producer setting.
 * @key: borrowed; the Java name without prefix ("max.request.size").
 * @value: borrowed; may be secret (never copied into @errbuf).
 * @all: borrowed; every Java setting of the producer, for settings that depend on another
 *       (ssl.truststore.type decides ssl.truststore.location).
 * @origin: borrowed; "file:line", copied into the entries written.
 * @out: librdkafka settings; the translated entries are set here (origin kept).
 * @ignored: receives @key (as @display) with the reason when it has no effect.
 * @display: borrowed; the key as the user wrote it, for messages.
 *
 * Return: 0, or -EINVAL with "@origin: @display: reason; fix" in @errbuf.
 */
int rdconf_translate(const char *key, const char *value, const struct kv *all, const char *origin,
		     const char *display, struct kv *out, struct kv *ignored, char *errbuf,
		     size_t errlen);

/**
 * rdconf_jaas_parse() - the login module and options of a sasl.jaas.config value
 * ("Module required a=\"1\" b=2;").
 * @ret_module: caller-frees, always written. @opts: receives the options (values may be secret).
 *
 * Return: 0, or -EINVAL if an option is malformed (what was read stays in @opts).
 */
int rdconf_jaas_parse(const char *jaas, char **ret_module, struct kv *opts);

/**
 * rdconf_jaas_credentials() - username and password of a PlainLoginModule or ScramLoginModule
 * sasl.jaas.config value.
 * @ret_user, @ret_password: caller-frees; written only on success.
 *
 * Return: 0, -ENOTSUP for another login module, -EINVAL if malformed or incomplete.
 */
int rdconf_jaas_credentials(const char *jaas, char **ret_user, char **ret_password);

#endif
