/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/run/rdstats.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <string.h>

#include "outboxd/util/errbuf.h"

static int64_t
get_int(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

static const char *
get_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
		       json_object_get_string(v) :
		       "";
}

static enum rdstats_bstate
bstate(const char *state)
{
	if (strcmp(state, "UP") == 0 || strcmp(state, "UPDATE") == 0) {
		return RDSTATS_UP;
	}
	if (strcmp(state, "INIT") == 0 || strcmp(state, "DOWN") == 0 || !state[0]) {
		return RDSTATS_DOWN;
	}
	return RDSTATS_CONNECTING;
}

/*
 * One broker's figures into @st, its state into @known (a broker the cluster's metadata names:
 * node id >= 0) or @bootstrap (a bootstrap name not yet identified with one, node id -1).
 * "internal" is librdkafka's own queue, not a broker. The counters count every connection.
 */
static void
broker(struct json_object *b, struct rdstats *st, int64_t *known, int64_t *bootstrap)
{
	struct json_object *rtt, *id;
	enum rdstats_bstate state = bstate(get_str(b, "state"));

	if (strcmp(get_str(b, "source"), "internal") == 0) {
		return;
	}
	st->retries += get_int(b, "txretries");
	st->timeouts += get_int(b, "req_timeouts");
	st->disconnects += get_int(b, "disconnects");
	if (!json_object_object_get_ex(b, "nodeid", &id) || json_object_get_int64(id) < 0) {
		bootstrap[state]++;
		return;
	}
	known[state]++;
	if (json_object_object_get_ex(b, "rtt", &rtt) && get_int(rtt, "cnt") > 0) {
		int64_t avg = get_int(rtt, "avg"), p99 = get_int(rtt, "p99");

		st->rtt_avg_us = avg > st->rtt_avg_us ? avg : st->rtt_avg_us;
		st->rtt_p99_us = p99 > st->rtt_p99_us ? p99 : st->rtt_p99_us;
	}
}

int
rdstats_parse(const char *json, size_t len, struct rdstats *st, char *errbuf, size_t errlen)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root, *brokers;

	*st = (struct rdstats){ 0 };
	root = json_tokener_parse_ex(tok, json, (int)len);
	if (!root || json_tokener_get_error(tok) != json_tokener_success ||
	    !json_object_is_type(root, json_type_object)) {
		errbuf_set(errbuf, errlen, "librdkafka's statistics are not a JSON object");
		json_object_put(root);
		json_tokener_free(tok);
		return -EINVAL;
	}
	json_tokener_free(tok);
	st->queue_records = get_int(root, "msg_cnt");
	st->queue_capacity_records = get_int(root, "msg_max");
	st->queue_bytes = get_int(root, "msg_size");
	st->queue_capacity_bytes = get_int(root, "msg_size_max");
	if (json_object_object_get_ex(root, "brokers", &brokers) &&
	    json_object_is_type(brokers, json_type_object)) {
		int64_t known[RDSTATS_BSTATES] = { 0 }, bootstrap[RDSTATS_BSTATES] = { 0 }, n = 0;

		json_object_object_foreach(brokers, name, b)
		{
			(void)name;
			if (json_object_is_type(b, json_type_object)) {
				broker(b, st, known, bootstrap);
			}
		}
		/* The bootstrap names count only while no broker is known (never reached). */
		for (int i = 0; i < RDSTATS_BSTATES; i++) {
			n += known[i];
		}
		memcpy(st->brokers, n ? known : bootstrap, sizeof(st->brokers));
	}
	json_object_put(root);
	return 0;
}

static void
family(struct buf *out, const char *name, const char *type, const char *help)
{
	buf_add_fmt(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void
one(struct buf *out, const char *name, const char *type, const char *help, int64_t v)
{
	family(out, name, type, help);
	buf_add_fmt(out, "%s %" PRId64 "\n", name, v);
}

static void
seconds(struct buf *out, const char *name, const char *help, int64_t us)
{
	family(out, name, "gauge", help);
	buf_add_fmt(out, "%s %" PRId64 ".%06d\n", name, us / 1000000, (int)(us % 1000000));
}

void
rdstats_render(const struct rdstats *st, int64_t age_us, struct buf *out)
{
	static const char *const names[RDSTATS_BSTATES] = {
		[RDSTATS_UP] = "up", [RDSTATS_CONNECTING] = "connecting", [RDSTATS_DOWN] = "down"
	};

	seconds(out, "outboxd_kafka_stats_age_seconds",
		"Seconds since librdkafka last emitted its statistics (outboxd.kafka.stats.ms).",
		age_us > 0 ? age_us : 0);
	one(out, "outboxd_producer_queue_capacity_records", "gauge",
	    "Records the producer queue holds at most (queue.buffering.max.messages); beside "
	    "outboxd_producer_queue_records.",
	    st->queue_capacity_records);
	one(out, "outboxd_producer_queue_bytes", "gauge",
	    "Bytes of the records in the producer queue.", st->queue_bytes);
	one(out, "outboxd_producer_queue_capacity_bytes", "gauge",
	    "Bytes the producer queue holds at most (queue.buffering.max.kbytes).",
	    st->queue_capacity_bytes);
	family(out, "outboxd_kafka_brokers", "gauge",
	       "The cluster's brokers by librdkafka's connection state.");
	for (int i = 0; i < RDSTATS_BSTATES; i++) {
		buf_add_fmt(out, "outboxd_kafka_brokers{state=\"%s\"} %" PRId64 "\n", names[i],
			    st->brokers[i]);
	}
	one(out, "outboxd_kafka_request_retries_total", "counter",
	    "Requests librdkafka sent again, over every broker (this producer's; it restarts "
	    "at 0 with each pipeline restart).",
	    st->retries);
	one(out, "outboxd_kafka_request_timeouts_total", "counter",
	    "Requests that timed out, over every broker.", st->timeouts);
	one(out, "outboxd_kafka_disconnects_total", "counter",
	    "Broker connections that were lost, over every broker.", st->disconnects);
	seconds(out, "outboxd_kafka_rtt_avg_seconds",
		"Average request round-trip time of the slowest broker over the last interval.",
		st->rtt_avg_us);
	seconds(out, "outboxd_kafka_rtt_p99_seconds",
		"99th percentile request round-trip time of the slowest broker over the last "
		"interval.",
		st->rtt_p99_us);
}
