/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/kafka/rdstats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/errbuf.h"
#include "outboxd/util/prom.h"

/*
 * Why by hand, not json-c: librdkafka's statistics name every topic and partition ("topics",
 * and "toppars" under each broker), about 1.5 KB of JSON per partition: megabytes with
 * thousands of topics, every outboxd.kafka.stats.ms, on the relay thread. json-c builds the
 * whole document's tree before anything can be read (many times the text), and outboxd reads
 * a few numbers of the top level and of each broker. (With json-c, outboxd peaked at 42 MB with
 * 1,000 topics against 16 MB with one; json-c's share of that was not measured apart from
 * librdkafka's own.) So this walker finds members by their key, knowing only strings and nesting,
 * and reads the few scalars it needs; everything else is skipped unbuilt.
 */

struct span {
	const char *p, *end;
};

static const char *
skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
		p++;
	}
	return p;
}

/* The end of the string whose opening quote is at @p, past its closing quote; NULL if cut. */
static const char *
string_end(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\') {
			if (++p == end) {
				break; /* cut after the backslash */
			}
			continue; /* the escaped character */
		}
		if (*p == '"') {
			return p + 1;
		}
	}
	return NULL;
}

/* Whether @c ends a scalar: what may follow a value, or what may not be inside one. */
static bool
scalar_stop(char c)
{
	return strchr(",}]{[\":", c) || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * The end of the value at @p (an object, array, string or scalar); NULL if it is cut short or
 * empty. Scalars are taken as written (librdkafka writes numbers and quoted strings).
 */
static const char *
value_end(const char *p, const char *end)
{
	int depth = 0;

	if (p >= end) {
		return NULL;
	}
	if (*p != '{' && *p != '[' && *p != '"') {
		const char *s = p;

		while (p < end && !scalar_stop(*p)) {
			p++;
		}
		return p == s ? NULL : p;
	}
	do {
		if (p >= end) {
			return NULL;
		}
		if (*p == '"') {
			p = string_end(p, end);
			if (!p) {
				return NULL;
			}
			continue;
		}
		if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			depth--;
		}
		p++;
	} while (depth > 0);
	return p;
}

typedef int (*member_fn)(const char *key, size_t klen, struct span value, void *arg);

/*
 * Calls @fn(key, key length, value, arg) for each member of the object @o, in order, and sets
 * *@after past its closing brace. Keys are compared as written (librdkafka's keys and the state
 * names read here have no escapes).
 * Return: 0, or -EINVAL when @o is not a whole object or @fn failed.
 */
static int
members(struct span o, member_fn fn, void *arg, const char **after)
{
	const char *p = skip_ws(o.p, o.end);

	if (p >= o.end || *p != '{') {
		return -EINVAL;
	}
	p = skip_ws(p + 1, o.end);
	if (p < o.end && *p == '}') {
		*after = p + 1;
		return 0;
	}
	while (p < o.end && *p == '"') {
		const char *k = p + 1, *ke = string_end(p, o.end), *v, *ve;

		if (!ke) {
			return -EINVAL;
		}
		p = skip_ws(ke, o.end);
		if (p >= o.end || *p != ':') {
			return -EINVAL;
		}
		v = skip_ws(p + 1, o.end);
		ve = value_end(v, o.end);
		if (!ve || fn(k, (size_t)(ke - 1 - k), (struct span){ v, ve }, arg) < 0) {
			return -EINVAL;
		}
		p = skip_ws(ve, o.end);
		if (p < o.end && *p == '}') {
			*after = p + 1;
			return 0;
		}
		if (p >= o.end || *p != ',') {
			return -EINVAL;
		}
		p = skip_ws(p + 1, o.end);
	}
	return -EINVAL;
}

/* members() of @v when it is an object; 0 for any other value, which is skipped (as before). */
static int
object_members(struct span v, member_fn fn, void *arg)
{
	const char *after;

	return *v.p == '{' ? members(v, fn, arg, &after) : 0;
}

static bool
key_is(const char *k, size_t klen, const char *name)
{
	return strlen(name) == klen && memcmp(k, name, klen) == 0;
}

/* An integer value; 0 for anything else (a missing figure counts as none, as before). */
static int64_t
int_of(struct span v)
{
	char tmp[32];
	size_t n = (size_t)(v.end - v.p);

	if (n == 0 || n >= sizeof(tmp) || (*v.p != '-' && (*v.p < '0' || *v.p > '9'))) {
		return 0;
	}
	memcpy(tmp, v.p, n);
	tmp[n] = '\0';
	return strtoll(tmp, NULL, 10);
}

/* Whether the value is the string @s. */
static bool
str_is(struct span v, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(v.end - v.p) == n + 2 && v.p[0] == '"' && memcmp(v.p + 1, s, n) == 0;
}

static enum rdstats_bstate
bstate(struct span v)
{
	if (str_is(v, "UP") || str_is(v, "UPDATE")) {
		return RDSTATS_UP;
	}
	if (str_is(v, "INIT") || str_is(v, "DOWN") || str_is(v, "") || v.p == v.end) {
		return RDSTATS_DOWN;
	}
	return RDSTATS_CONNECTING;
}

/* One broker object's members of interest. */
struct broker_fields {
	struct span state;
	bool internal, has_nodeid;
	int64_t nodeid, txretries, req_timeouts, disconnects;
	int64_t rtt_cnt, rtt_avg, rtt_p99;
};

static int
rtt_member(const char *k, size_t klen, struct span v, void *arg)
{
	struct broker_fields *b = arg;

	if (key_is(k, klen, "cnt")) {
		b->rtt_cnt = int_of(v);
	} else if (key_is(k, klen, "avg")) {
		b->rtt_avg = int_of(v);
	} else if (key_is(k, klen, "p99")) {
		b->rtt_p99 = int_of(v);
	}
	return 0;
}

static int
broker_member(const char *k, size_t klen, struct span v, void *arg)
{
	struct broker_fields *b = arg;

	if (key_is(k, klen, "state")) {
		b->state = v;
	} else if (key_is(k, klen, "source")) {
		b->internal = str_is(v, "internal");
	} else if (key_is(k, klen, "nodeid")) {
		b->has_nodeid = true;
		b->nodeid = int_of(v);
	} else if (key_is(k, klen, "txretries")) {
		b->txretries = int_of(v);
	} else if (key_is(k, klen, "req_timeouts")) {
		b->req_timeouts = int_of(v);
	} else if (key_is(k, klen, "disconnects")) {
		b->disconnects = int_of(v);
	} else if (key_is(k, klen, "rtt")) {
		return object_members(v, rtt_member, b);
	}
	return 0;
}

struct parse {
	struct rdstats *st;
	int64_t known[RDSTATS_BSTATES], bootstrap[RDSTATS_BSTATES];
	bool has_brokers;
};

/*
 * One broker's figures into the state (a broker the cluster's metadata names: node id >= 0) or
 * the bootstrap names (one not yet identified with a broker, node id -1). "internal" is
 * librdkafka's own queue, not a broker. The counters count every connection.
 */
static int
broker(const char *k, size_t klen, struct span v, void *arg)
{
	struct parse *ps = arg;
	struct broker_fields b = { .state = { v.p, v.p } };
	enum rdstats_bstate state;
	const char *after;

	(void)k;
	(void)klen;
	if (*v.p != '{') {
		return 0; /* not a broker's object: skipped */
	}
	if (members(v, broker_member, &b, &after) < 0) {
		return -EINVAL;
	}
	if (b.internal) {
		return 0;
	}
	state = bstate(b.state);
	ps->st->retries += b.txretries;
	ps->st->timeouts += b.req_timeouts;
	ps->st->disconnects += b.disconnects;
	if (!b.has_nodeid || b.nodeid < 0) {
		ps->bootstrap[state]++;
		return 0;
	}
	ps->known[state]++;
	if (b.rtt_cnt > 0) {
		ps->st->rtt_avg_us =
			b.rtt_avg > ps->st->rtt_avg_us ? b.rtt_avg : ps->st->rtt_avg_us;
		ps->st->rtt_p99_us =
			b.rtt_p99 > ps->st->rtt_p99_us ? b.rtt_p99 : ps->st->rtt_p99_us;
	}
	return 0;
}

static int
top_member(const char *k, size_t klen, struct span v, void *arg)
{
	struct parse *ps = arg;

	if (key_is(k, klen, "msg_cnt")) {
		ps->st->queue_records = int_of(v);
	} else if (key_is(k, klen, "msg_max")) {
		ps->st->queue_capacity_records = int_of(v);
	} else if (key_is(k, klen, "msg_size")) {
		ps->st->queue_bytes = int_of(v);
	} else if (key_is(k, klen, "msg_size_max")) {
		ps->st->queue_capacity_bytes = int_of(v);
	} else if (key_is(k, klen, "brokers") && *v.p == '{') {
		ps->has_brokers = true;
		return object_members(v, broker, ps);
	}
	return 0;
}

int
rdstats_parse(const char *json, size_t len, struct rdstats *st, char *errbuf, size_t errlen)
{
	struct parse ps = { .st = st };
	struct span doc = { json, json + len };
	const char *after;

	*st = (struct rdstats){ 0 };
	if (members(doc, top_member, &ps, &after) < 0 || skip_ws(after, doc.end) != doc.end) {
		*st = (struct rdstats){ 0 };
		errbuf_set(errbuf, errlen, "librdkafka's statistics are not a JSON object");
		return -EINVAL;
	}
	if (ps.has_brokers) {
		int64_t n = 0;

		/* The bootstrap names count only while no broker is known (never reached). */
		for (int i = 0; i < RDSTATS_BSTATES; i++) {
			n += ps.known[i];
		}
		memcpy(st->brokers, n ? ps.known : ps.bootstrap, sizeof(st->brokers));
	}
	return 0;
}

/* A gauge of seconds with microseconds: librdkafka measures round trips in them. */
static void
seconds(struct buf *out, const char *name, const char *help, int64_t us)
{
	prom_family(out, name, "gauge", help);
	prom_seconds_us(out, name, us);
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
	prom_int(out, "outboxd_producer_queue_capacity_records", "gauge",
		 "Records the producer queue holds at most (queue.buffering.max.messages); beside "
		 "outboxd_producer_queue_records.",
		 st->queue_capacity_records);
	prom_int(out, "outboxd_producer_queue_bytes", "gauge",
		 "Bytes of the records in the producer queue.", st->queue_bytes);
	prom_int(out, "outboxd_producer_queue_capacity_bytes", "gauge",
		 "Bytes the producer queue holds at most (queue.buffering.max.kbytes).",
		 st->queue_capacity_bytes);
	prom_family(out, "outboxd_kafka_brokers", "gauge",
		    "The cluster's brokers by librdkafka's connection state.");
	for (int i = 0; i < RDSTATS_BSTATES; i++) {
		buf_add_fmt(out, "outboxd_kafka_brokers{state=\"%s\"} %" PRId64 "\n", names[i],
			    st->brokers[i]);
	}
	prom_int(out, "outboxd_kafka_request_retries_total", "counter",
		 "Requests librdkafka sent again, over every broker (this producer's; it restarts "
		 "at 0 with each pipeline restart).",
		 st->retries);
	prom_int(out, "outboxd_kafka_request_timeouts_total", "counter",
		 "Requests that timed out, over every broker.", st->timeouts);
	prom_int(out, "outboxd_kafka_disconnects_total", "counter",
		 "Broker connections that were lost, over every broker.", st->disconnects);
	seconds(out, "outboxd_kafka_rtt_avg_seconds",
		"Average request round-trip time of the slowest broker over the last interval.",
		st->rtt_avg_us);
	seconds(out, "outboxd_kafka_rtt_p99_seconds",
		"99th percentile request round-trip time of the slowest broker over the last "
		"interval.",
		st->rtt_p99_us);
}
