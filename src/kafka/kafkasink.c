/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/kafka/kafkasink.h"

#include <errno.h>
#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outboxd/kafka/kafkasec.h"
#include "outboxd/kafka/producer.h"
#include "outboxd/kafka/rdstats.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"

struct kafkasink {
	struct sink base; /* first: a struct sink * is a struct kafkasink * */
	struct producer *prod;
	int wake[2]; /* librdkafka writes a byte to [1] when events wait */
	sink_on_delivery on_delivery;
	sink_on_stats on_stats;
	void *opaque;
};

static struct kafkasink *
ks(struct sink *s)
{
	return (struct kafkasink *)s;
}

static const struct kafkasink *
cks(const struct sink *s)
{
	return (const struct kafkasink *)s;
}

static void
on_report(void *opaque, void *msg_opaque, bool ok, const char *reason)
{
	struct kafkasink *k = opaque;

	k->on_delivery(k->opaque, (uint64_t)(uintptr_t)msg_opaque, ok, reason);
}

/* librdkafka's statistics JSON, parsed; a document that does not parse is ignored. */
static void
on_stats(void *arg, const char *json, size_t len)
{
	struct kafkasink *k = arg;
	struct rdstats st;

	if (rdstats_parse(json, len, &st, NULL, 0) == 0) {
		k->on_stats(k->opaque, &st);
	}
}

static int
ks_send(struct sink *s, const struct sink_record *rec, uint64_t token, char *errbuf, size_t errlen)
{
	return producer_send(ks(s)->prod, rec, (void *)(uintptr_t)token, errbuf, errlen);
}

static void
ks_serve(struct sink *s)
{
	char b[256];

	while (read(ks(s)->wake[0], b, sizeof(b)) > 0) {
	}
	producer_poll(ks(s)->prod);
}

static int
ks_flush(struct sink *s, int64_t timeout_ms)
{
	return producer_flush(ks(s)->prod, timeout_ms > INT_MAX ? INT_MAX : (int)timeout_ms);
}

static int
ks_wake_fd(const struct sink *s)
{
	return cks(s)->wake[0];
}

static bool
ks_fatal(struct sink *s, char *errbuf, size_t errlen)
{
	return producer_fatal(ks(s)->prod, errbuf, errlen);
}

static bool
ks_precondition(struct sink *s, char *errbuf, size_t errlen)
{
	return producer_precondition(ks(s)->prod, errbuf, errlen);
}

static int
ks_queue_len(const struct sink *s)
{
	return producer_queue_len(cks(s)->prod);
}

static struct sink_failure
ks_report_failure(const struct sink *s)
{
	return producer_report_failure(cks(s)->prod);
}

static size_t
ks_broker_state(const struct sink *s, int64_t now_us, char *out, size_t len)
{
	return producer_broker_state(cks(s)->prod, now_us, out, len);
}

static int64_t
ks_max_record_bytes(const struct sink *s)
{
	return producer_max_message_bytes(cks(s)->prod);
}

static void
close_wake(struct kafkasink *k)
{
	for (int i = 0; i < 2; i++) {
		if (k->wake[i] >= 0) {
			close(k->wake[i]);
		}
	}
}

static int
ks_discard(struct sink *s, int64_t inflight_ms, char *fatal, size_t fatallen)
{
	struct kafkasink *k = ks(s);
	int purged = producer_discard(k->prod, inflight_ms, fatal, fatallen);

	close_wake(k);
	free(k);
	return purged;
}

static const struct sink_ops kafkasink_ops = {
	.send = ks_send,
	.serve = ks_serve,
	.flush = ks_flush,
	.wake_fd = ks_wake_fd,
	.fatal = ks_fatal,
	.precondition = ks_precondition,
	.queue_len = ks_queue_len,
	.report_failure = ks_report_failure,
	.broker_state = ks_broker_state,
	.max_record_bytes = ks_max_record_bytes,
	.discard = ks_discard,
};

static int
ks_open(const struct sink_params *p, struct sink **ret, char *errbuf, size_t errlen)
{
	struct kafkasink *k = znew(*k);

	k->base = (struct sink){ .ops = &kafkasink_ops, .kind = &kafkasink_kind };
	k->on_delivery = p->on_delivery;
	k->on_stats = p->on_stats;
	k->opaque = p->opaque;
	k->wake[0] = k->wake[1] = -1;
	if (pipe2(k->wake, O_NONBLOCK | O_CLOEXEC) < 0) {
		errbuf_set(errbuf, errlen, "pipe: %s", strerror(errno));
		free(k);
		return -EINVAL;
	}
	if (producer_new(p->settings, k->wake[1], on_report, k, &k->prod, errbuf, errlen) < 0) {
		close_wake(k);
		free(k);
		return -EINVAL;
	}
	if (k->on_stats) {
		producer_set_stats(k->prod, on_stats, k);
	}
	*ret = &k->base;
	return 0;
}

static bool
ks_check(const struct kv *settings, int timeout_ms, sink_line line, void *arg)
{
	struct producer *p = NULL;
	struct buf sec = BUF_INIT;
	char err[1024];
	bool ok;
	int warnings;

	ok = producer_new(settings, -1, NULL, NULL, &p, err, sizeof(err)) == 0 &&
	     producer_check_brokers(p, timeout_ms, err, sizeof(err)) == 0;
	line(arg, ok ? 0 : 2, "kafka", err);
	warnings = kafkasec_describe(settings, rd_kafka_version(), &sec);
	line(arg, warnings ? 1 : 0, "kafka tls", buf_cstr(&sec));
	if (ok) {
		int level;

		buf_reset(&sec);
		level = producer_check_topic_creation(p, timeout_ms, &sec);
		line(arg, level, "topic creation", buf_cstr(&sec));
		ok = level < 2;
	}
	buf_fini(&sec);
	producer_free(p);
	return ok;
}

/* aged from their emission */
static void
render_stats(const void *stats, int64_t now_us, int64_t set_us, struct buf *out)
{
	rdstats_render(stats, now_us - set_us, out);
}

static const struct sink_stats_kind kafkasink_stats = {
	.name = "kafka",
	.size = sizeof(struct rdstats),
	.render = render_stats,
};

const struct sink_kind kafkasink_kind = {
	.name = "kafka",
	.client = "producer",
	.library = "librdkafka",
	.size_setting = "message.max.bytes",
	.size_fix = "raise producer.max.request.size and the topic's max.message.bytes",
	.open = ks_open,
	.check = ks_check,
	.stats = &kafkasink_stats,
};
