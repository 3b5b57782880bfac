/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_CONNECT_TOPICCREATION_H
#define OUTBOXD_CONNECT_TOPICCREATION_H

/*
 * Kafka Connect's topic creation for source connectors (KIP-158), as its TopicCreation,
 * TopicCreationGroup and SourceConnectorConfig decide it: which topics a connector creates and
 * with which settings. Pure: no I/O; the Kafka client creates (kafka/producer_create.c).
 *
 * Connect's rules, kept here: creation is on when the worker's topic.creation.enable is (the
 * default) and the connector has any topic.creation.* key; topic.creation.default.partitions
 * and .replication.factor are then required, -1 (the broker's default) or at least 1; the named
 * groups of topic.creation.groups (a list: comma-separated, blanks around commas ignored) each
 * have include and exclude lists of Java regexes, joined by '|' and matched against the whole
 * topic name, exclude winning; the first named group that matches a topic in the list's order
 * wins, the default group (include .*, its include and exclude keys ignored) takes the rest; a
 * named group's partitions and replication factor default to the default group's, its other
 * topic.creation.<group>.<key> keys are topic settings passed as they are, not inherited.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/kv.h"

struct topiccreation;

/* One group's topic: what CreateTopics is given. Borrowed from the struct topiccreation. */
struct topiccreation_group {
	const char *name;	   /* "default" or the group's alias */
	int32_t partitions;	   /* -1: the broker's num.partitions */
	int16_t replication;	   /* -1: the broker's default.replication.factor */
	const struct kv *settings; /* topic settings: cleanup.policy, retention.ms, ... */
};

/**
 * topiccreation_parse() - the topic creation @keys describe: the connector's keys whose names
 * start with @prefix ("topic.creation." in a connector file) with the prefix taken off, the
 * others ignored. @enabled: the worker's topic.creation.enable.
 * @ret: NULL when nothing is to be created (creation off, or no key under @prefix), else the
 *	 rules; free with topiccreation_free().
 * Return: 0, or -EINVAL with Connect's reason, naming the key, in @errbuf.
 */
int topiccreation_parse(const struct kv *keys, const char *prefix, bool enabled,
			struct topiccreation **ret, char *errbuf, size_t errlen);

/* topiccreation_free() - NULL allowed. */
void topiccreation_free(struct topiccreation *tc);

/**
 * topiccreation_match() - the group whose settings a new topic @topic gets: the first named group
 * that matches it, else the default group. Never NULL.
 */
const struct topiccreation_group *topiccreation_match(const struct topiccreation *tc,
						      const char *topic);

/* topiccreation_ngroups() - the named groups and the default, the default last. */
size_t topiccreation_ngroups(const struct topiccreation *tc);

/* topiccreation_group() - group @i (0 .. ngroups - 1), the default last. */
const struct topiccreation_group *topiccreation_group(const struct topiccreation *tc, size_t i);

/*
 * topiccreation_describe() - @g in one line for logs and `outboxd check`:
 * "partitions 3, replication factor -1 (the broker's default), cleanup.policy=compact".
 */
void topiccreation_describe(const struct topiccreation_group *g, struct buf *out);

#endif
