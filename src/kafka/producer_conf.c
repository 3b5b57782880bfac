/* SPDX-License-Identifier: Apache-2.0 */
/* The producer's librdkafka configuration (producer_int.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/log.h"
#include "outboxd/util/secret.h"
#include "producer_int.h"

#define MOD "producer"

/*
 * Settings forced for the delivery guarantee (DESIGN.md "Producer settings"), each with what a
 * user override gives up. message.max.bytes is the Java client's max.request.size default.
 * The queue bounds keep memory bounded: the relay stops reading PostgreSQL while they are hit.
 * The byte bound is not here: see queue_bound().
 */
static const struct forced {
	const char *key;
	const char *value;
	const char *gives_up;
} forced[] = {
	{ "enable.idempotence", "true",
	  "retries may duplicate or reorder records of an aggregate" },
	{ "acks", "all", "an acknowledged record may be lost when a broker fails" },
	{ "enable.gapless.guarantee", "true",
	  "a failed batch may leave a gap while later records land" },
	{ "message.timeout.ms", "0", "records that time out leave a gap; later ones still land" },
	/*
	 * One request at a time per broker: a failed batch is retried before anything after it
	 * goes out. With more, a new producer's first batch to a partition that fails with
	 * NOT_LEADER_OR_FOLLOWER (a topic the broker just created, a leader moving) can be passed
	 * by a later batch the broker takes, and librdkafka then reports the failed one delivered
	 * (producer_report_proven(); the failover proof lost rows so on librdkafka 2.14.2).
	 */
	{ "max.in.flight.requests.per.connection", "1",
	  "a new producer's failed first batch to a partition can be passed by a later one; "
	  "outboxd then publishes again from the last confirmed position (duplicates, and that "
	  "aggregate's records out of order once)" },
	{ "partitioner", "murmur2_random", "partitions no longer match Debezium's (Java murmur2)" },
	{ "message.max.bytes", "1048576", NULL },
	/* outboxd.kafka.queue.records sets it from a configuration; this is for other callers */
	{ "queue.buffering.max.messages", "1000", NULL },
	{ "log.queue", "true", NULL },
	/*
	 * The Java client's default (so Kafka Connect's producer's): librdkafka's 10 s let a
	 * broker's restart cost up to 10 s more before the first record went again, as its backoff
	 * had grown while the broker was down (tests/fault/run broker_crash_one_session: 4.2 s with
	 * librdkafka's, 0.0 s with this). Left out when the user's reconnect.backoff.ms exceeds it.
	 */
	{ "reconnect.backoff.max.ms", "1000", NULL },
};

static int
conf_set(rd_kafka_conf_t *conf, const char *key, const char *value, char *errbuf, size_t errlen)
{
	char err[512];

	if (rd_kafka_conf_set(conf, key, value, err, sizeof(err)) == RD_KAFKA_CONF_OK) {
		return 0;
	}
	if (errbuf) {
		/* e.g. OIDC in a librdkafka built without libcurl (Debian 12's 2.0.2, the minimum) */
		snprintf(errbuf, errlen, "producer setting %s%s%s: %s%s", key,
			 secret_key(key) ? "" : "=", secret_key(key) ? "" : value, err,
			 strstr(err, "not supported in this build") ?
				 "; run outboxd built with a librdkafka that has it (the container "
				 "image's " OUTBOXD_RDKAFKA_PINNED " has OIDC)" :
				 "");
	}
	return -EINVAL;
}

/* A forced value the user's other settings rule out: librdkafka refuses a reconnect backoff
 * whose maximum is below its start. */
static bool
forced_yields(const struct forced *f, const struct kv *settings)
{
	const char *start = kv_get(settings, "reconnect.backoff.ms");

	return strcmp(f->key, "reconnect.backoff.max.ms") == 0 && start &&
	       strtoll(start, NULL, 10) > strtoll(f->value, NULL, 10);
}

static int
apply_settings(rd_kafka_conf_t *conf, const struct kv *settings, char *errbuf, size_t errlen)
{
	for (size_t i = 0; i < sizeof(forced) / sizeof(forced[0]); i++) {
		const char *user = kv_get(settings, forced[i].key);

		if (user && forced[i].gives_up && strcmp(user, forced[i].value) != 0) {
			log_warn(MOD, "%s=%s overrides outboxd's %s: %s", forced[i].key, user,
				 forced[i].value, forced[i].gives_up);
		}
		if (!user && !forced_yields(&forced[i], settings) &&
		    conf_set(conf, forced[i].key, forced[i].value, errbuf, errlen) < 0) {
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < settings->n; i++) {
		/* outboxd's own (AUTHGRACE_KEY), read by producer_new() */
		if (strncmp(settings->v[i].key, "outboxd.", 8) == 0) {
			continue;
		}
		if (conf_set(conf, settings->v[i].key, settings->v[i].value, errbuf, errlen) < 0) {
			return -EINVAL;
		}
	}
	return 0;
}

int64_t
producer_conf_int(rd_kafka_conf_t *conf, const char *key)
{
	char v[64];
	size_t n = sizeof(v);

	if (rd_kafka_conf_get(conf, key, v, &n) != RD_KAFKA_CONF_OK) {
		return -1;
	}
	return strtoll(v, NULL, 10);
}

/*
 * The producer queue's byte bound: by default room for one record of message.max.bytes, the
 * smallest bound that never refuses a record for good (librdkafka counts the values' bytes
 * against it). Why that small: it is most of outboxd's memory during a catch-up; at 4 MB peak RSS
 * was 28 MB, at 1 MB 19 MB, with the same throughput (bench/results/2026-12-02-analysis.md): a
 * few thousand ~400-byte records still cover the broker's round trip and the linger. A user
 * bound (producer.buffer.memory) below message.max.bytes is raised to it, with a warning.
 */
static int
queue_bound(rd_kafka_conf_t *conf, const struct kv *settings, char *errbuf, size_t errlen)
{
	int64_t need_kb = (producer_conf_int(conf, "message.max.bytes") + 1023) / 1024;
	const char *user = kv_get(settings, "queue.buffering.max.kbytes");
	char v[32];

	if (user && producer_conf_int(conf, "queue.buffering.max.kbytes") >= need_kb) {
		return 0;
	}
	if (user) {
		log_warn(MOD,
			 "queue.buffering.max.kbytes=%s (producer.buffer.memory) is below "
			 "message.max.bytes: raised to %lld so that every record fits",
			 user, (long long)need_kb);
	}
	snprintf(v, sizeof(v), "%lld", (long long)need_kb);
	return conf_set(conf, "queue.buffering.max.kbytes", v, errbuf, errlen);
}

int
producer_conf_apply(rd_kafka_conf_t *conf, const struct kv *settings, char *errbuf, size_t errlen)
{
	if (apply_settings(conf, settings, errbuf, errlen) < 0) {
		return -EINVAL;
	}
	return queue_bound(conf, settings, errbuf, errlen) < 0 ? -EINVAL : 0;
}
