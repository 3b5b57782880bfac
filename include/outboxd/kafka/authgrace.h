/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_KAFKA_AUTHGRACE_H
#define OUTBOXD_KAFKA_AUTHGRACE_H

/*
 * The grace a broker's refusal of outboxd's login or certificate gets before it counts as the
 * configuration's fault (exit 2). A broker that just restarted and has not loaded its SCRAM
 * credentials yet, a JWKS or certificate rotation: the same refusal, transient. The rule: the
 * refusals persisted when one is reported at least the grace after the first one, with no
 * successful connection reported in between; a success ends the episode.
 *
 * librdkafka reports an identical broker error at most every 30 s (rd_kafka_broker_set_error's
 * suppression in rdkafka_broker.c; measured with 2.0.2: 3 reports in 40 s for a refusal at
 * every reconnect), so a persisting refusal is known at most 30 s after the grace. A refusal
 * reported longer than that plus the grace after the previous one starts a new episode: the
 * connection in between may have succeeded with nothing to say so (an idle producer).
 *
 * Pure: times in, a verdict out (monotonic microseconds).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/util/kv.h"

/* the setting, passed to the producer among librdkafka's (config.c's row checks it) */
#define AUTHGRACE_KEY	     "outboxd.kafka.auth.grace.ms"
#define AUTHGRACE_DEFAULT_MS 60000

/* librdkafka's interval between two reports of an identical broker error, and a margin */
#define AUTHGRACE_REPORT_US (35 * 1000000LL)

struct authgrace {
	int64_t grace_us;  /* the setting (outboxd.kafka.auth.grace.ms); 0 = none */
	int64_t first_us;  /* the episode's first refusal; 0 = no episode */
	int64_t last_us;   /* its latest */
	char refusal[768]; /* its latest refusal and fix (kafkasec_fix()); "" = no episode */
};

/* authgrace_init() - no episode; the grace from @settings (borrowed), else the default. */
void authgrace_init(struct authgrace *g, const struct kv *settings);

/**
 * authgrace_refused() - a refusal reported at @now_us; @text (borrowed, copied) says what it is
 * and what to do.
 * Return: true when the refusals persisted past the grace (see the rule above).
 */
bool authgrace_refused(struct authgrace *g, int64_t now_us, const char *text);

/* authgrace_ok() - a connection succeeded (a record delivered, metadata answered). */
void authgrace_ok(struct authgrace *g);

/* authgrace_since_us() - how long the episode has lasted at @now_us; 0 when there is none. */
int64_t authgrace_since_us(const struct authgrace *g, int64_t now_us);

/*
 * authgrace_describe() - the episode for the stall warning: the refusal, how long it has lasted
 * and when it ends the process. Return: snprintf's length; 0 (nothing written) without one.
 */
size_t authgrace_describe(const struct authgrace *g, int64_t now_us, char *out, size_t len);

#endif
