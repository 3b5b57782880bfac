/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PIPELINE_SINKS_H
#define OUTBOXD_PIPELINE_SINKS_H

/*
 * The broker clients outboxd has, and which one a configuration uses: the one place a new broker
 * is added (its sink_kind, and the configuration that names it). Every source and `outboxd
 * check` open their sink through here, so none of them names a broker.
 */

#include <stdbool.h>

#include "outboxd/config/config.h"
#include "outboxd/sink/sink.h"

/* A broker client and its settings; both borrowed from static storage and the configuration. */
struct sinks_choice {
	const struct sink_kind *kind;
	const struct kv *settings;
};

/* sinks_choose() - the broker @cfg (borrowed) publishes to. */
struct sinks_choice sinks_choose(const struct config *cfg);

/*
 * sinks_check() - `outboxd check`'s lines for @cfg's broker, through @line.
 * Return: false when a line said FAIL.
 */
bool sinks_check(const struct config *cfg, int timeout_ms, sink_line line, void *arg);

#endif
