/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_STRIMZI_H
#define OUTBOXD_STRIMZI_H

/*
 * Strimzi's KafkaConnector resource (a Kubernetes YAML document, kind KafkaConnector, apiVersion
 * kafka.strimzi.io/...) read as a connector file: spec.config's entries are the connector's keys,
 * metadata.name its name, spec.class its connector.class and spec.tasksMax its tasks.max, each
 * with its file:line. Values are read as Kubernetes reads the YAML (go-yaml, YAML 1.1) and
 * Strimzi hands them to Kafka Connect: quoted scalars as written; unquoted yes/no/on/off/y/n/
 * true/false (any case Kubernetes knows) as "true"/"false"; plain decimal integers as written.
 * An unquoted number of another form (1.0, 0x1f, 010, 1e3, 1_000, .inf), whose text Kubernetes
 * and Strimzi would change, a null, a list or a map is refused with its line and the fix
 * (quote it). Parsing is libyaml's (Debian's libyaml-0-2).
 */

#include <stdbool.h>
#include <stddef.h>

#include "outboxd/util/kv.h"

/**
 * strimzi_is_resource() - whether the file at @path with @text is to be read as a Kubernetes
 * resource: a name ending in .yaml or .yml, or a line "kind: KafkaConnector" (a ConfigMap key's
 * file may have any name).
 */
bool strimzi_is_resource(const char *path, const char *text);

/**
 * strimzi_parse() - read the KafkaConnector document of @len bytes of @text (one of several
 * documents separated by "---" may be it; the others are skipped).
 * @path: borrowed; the name in origins and messages.
 * @ret: must be KV_INIT; receives the connector keys in file order.
 * @ignored: must be KV_INIT; receives the spec fields outboxd accepts without effect
 *	     ("spec.autoRestart" -> why), with their origins.
 *
 * Return: 0, or -EINVAL with "path:line: reason" in @errbuf (a YAML error, no KafkaConnector
 * or two, spec.state paused or stopped, a field Strimzi does not define, a value it would change,
 * one of spec.config's keys Strimzi forbids: name, connector.class, tasks.max).
 */
int strimzi_parse(const char *path, const char *text, size_t len, struct kv *ret,
		  struct kv *ignored, char *errbuf, size_t errlen);

#endif
