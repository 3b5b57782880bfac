/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/kafka/authgrace.h"

#include <stdio.h>
#include <stdlib.h>

void
authgrace_init(struct authgrace *g, const struct kv *settings)
{
	const char *v = kv_get(settings, AUTHGRACE_KEY);

	*g = (struct authgrace){ .grace_us = (v ? atoll(v) : AUTHGRACE_DEFAULT_MS) * 1000 };
}

bool
authgrace_refused(struct authgrace *g, int64_t now_us, const char *text)
{
	snprintf(g->refusal, sizeof(g->refusal), "%s", text);
	if (!g->first_us || now_us - g->last_us > g->grace_us + AUTHGRACE_REPORT_US) {
		g->first_us = now_us;
	}
	g->last_us = now_us;
	return now_us - g->first_us >= g->grace_us;
}

void
authgrace_ok(struct authgrace *g)
{
	g->first_us = 0;
	g->last_us = 0;
	g->refusal[0] = '\0';
}

int64_t
authgrace_since_us(const struct authgrace *g, int64_t now_us)
{
	return g->first_us ? now_us - g->first_us : 0;
}

size_t
authgrace_describe(const struct authgrace *g, int64_t now_us, char *out, size_t len)
{
	if (!g->refusal[0]) {
		return 0;
	}
	return (size_t)snprintf(out, len,
				"%s (refused for %lld s; exit 2 once refused past " AUTHGRACE_KEY
				"=%lld)",
				g->refusal, (long long)(authgrace_since_us(g, now_us) / 1000000),
				(long long)(g->grace_us / 1000));
}
