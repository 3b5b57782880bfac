/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pipeline/sinks.h"

#include "outboxd/kafka/kafkasink.h"

struct sinks_choice
sinks_choose(const struct config *cfg)
{
	/* the configuration names no other broker yet: every file outboxd reads is Kafka's */
	return (struct sinks_choice){ .kind = &kafkasink_kind, .settings = &cfg->librdkafka };
}

bool
sinks_check(const struct config *cfg, int timeout_ms, sink_line line, void *arg)
{
	struct sinks_choice c = sinks_choose(cfg);

	return c.kind->check(c.settings, timeout_ms, line, arg);
}
