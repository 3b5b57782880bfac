/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replay - the relay-side cost of outboxd without PostgreSQL or a real broker.
 *
 *   replay [--loops N] [--limit FRAMES] [--no-produce] [--mock-brokers N] [--set K=V]...
 *          CAPTURE FILE...
 *
 * CAPTURE is a file written by bench/capture ([u32 BE length][XLogData CopyData message]...).
 * FILE... are the configuration files outboxd run would get (worker + connector properties);
 * the router and the producer settings are built from them as outboxd does.
 *
 * Each message goes through the same steps as in src/relay.c: pgoutput_frame_decode,
 * pgoutput_decode, acktrack (Begin/Commit), relcache + router_selects (Relation), router_route
 * (EventRouter + converters) and producer_send into librdkafka, here pointed at librdkafka's
 * in-process mock cluster (test.mock.num.brokers); delivery reports go to acktrack, and the
 * confirmable LSN is computed once per batch of READ_BATCH messages, as the relay's turn does.
 * What the relay does and this does not: the socket reads (pgstream), status updates, the
 * catalog query per Relation message (NOT NULL / DEFAULT facts: here none, which changes no
 * byte with schemas.enable=false and no NULL column).
 *
 * --mock-brokers 0 produces to the configuration's bootstrap.servers instead.
 * --set adds a librdkafka setting (after the configuration's), for experiments.
 *
 * Prints one line of key=value results: events, wall seconds, CPU seconds of the whole process
 * and of the relay thread, events/s. A warm-up pass over the first 2,000 frames is not measured.
 * Under callgrind, the costs are zeroed before the measured pass and dumped after it
 * (CALLGRIND_ZERO_STATS / CALLGRIND_DUMP_STATS_AT: file <out>.1-<thread>).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <valgrind/callgrind.h>

#include "outboxd/run/acktrack.h"
#include "outboxd/config/config.h"
#include "outboxd/util/kv.h"
#include "outboxd/util/log.h"
#include "outboxd/run/metrics.h"
#include "outboxd/pg/pgoutput.h"
#include "outboxd/run/producer.h"
#include "outboxd/pg/relcache.h"
#include "outboxd/connect/router.h"

extern char **environ;

#define READ_BATCH 2000

struct rinfo {
	bool selected;
};

struct replay {
	struct producer *prod;
	struct acktrack *at;
	struct relcache *rc;
	struct router *router;
	struct metrics *metrics;
	struct pgoutput_decoder dec;
	struct router_record rec;
	struct producer_header *hdrs;
	size_t hdrs_cap;
	uint64_t cur_seq;
	int wake[2];
	bool produce;
	uint64_t produced, delivered, failed, queue_full_waits;
};

static double
clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void
die(const char *what, const char *err)
{
	fprintf(stderr, "replay: %s: %s\n", what, err);
	exit(1);
}

static void
on_delivery(void *opaque, void *msg_opaque, bool ok, const char *reason)
{
	struct replay *r = opaque;

	(void)reason;
	if (acktrack_row_delivered(r->at, (uint64_t)(uintptr_t)msg_opaque, ok) < 0) {
		return;
	}
	if (ok) {
		r->delivered++;
		metrics_count(r->metrics, METRICS_RECORDS_ACKNOWLEDGED, 1);
	} else {
		r->failed++;
	}
}

static void
serve(struct replay *r)
{
	char b[256];

	while (read(r->wake[0], b, sizeof(b)) > 0) {
	}
	producer_poll(r->prod);
}

static void
produce(struct replay *r)
{
	struct producer_record pr = {
		.topic = buf_cstr(&r->rec.topic),
		.key = r->rec.key_null ? NULL : buf_cstr(&r->rec.key),
		.key_len = r->rec.key.len,
		.value = r->rec.value_null ? NULL : buf_cstr(&r->rec.value),
		.value_len = r->rec.value.len,
		.nheaders = r->rec.nheaders,
		.partition = r->rec.partition,
		.timestamp_ms = r->rec.timestamp_ms < 0 ? 0 : r->rec.timestamp_ms,
	};
	char err[512];
	int rc;

	if (r->hdrs_cap < r->rec.nheaders) {
		r->hdrs_cap = r->rec.nheaders;
		r->hdrs = realloc(r->hdrs, r->hdrs_cap * sizeof(*r->hdrs));
	}
	for (size_t i = 0; i < r->rec.nheaders; i++) {
		r->hdrs[i] = (struct producer_header){
			.name = buf_cstr(&r->rec.headers[i].name),
			.value = r->rec.headers[i].null ? NULL : buf_cstr(&r->rec.headers[i].value),
			.len = r->rec.headers[i].value.len,
		};
	}
	pr.headers = r->hdrs;
	if (!r->produce) {
		/* decode + route + convert only: count the row as produced and delivered */
		(void)acktrack_row_produced(r->at, r->cur_seq, now_us());
		(void)acktrack_row_delivered(r->at, r->cur_seq, true);
		r->produced++;
		r->delivered++;
		return;
	}
	/* Queue full: wait for delivery reports as the relay does (reading paused). */
	while ((rc = producer_send(r->prod, &pr, (void *)(uintptr_t)r->cur_seq, err,
				   sizeof(err))) == -EAGAIN) {
		struct pollfd p = { .fd = r->wake[0], .events = POLLIN };

		r->queue_full_waits++;
		poll(&p, 1, 100);
		serve(r);
	}
	if (rc < 0) {
		die("producer_send", err);
	}
	(void)acktrack_row_produced(r->at, r->cur_seq, now_us());
	r->produced++;
	metrics_count(r->metrics, METRICS_RECORDS_PUBLISHED, 1);
}

static void
on_message(struct replay *r, const struct pgoutput_msg *m)
{
	char err[1024];

	switch (m->type) {
	case PGOUTPUT_MSG_BEGIN:
		r->cur_seq = acktrack_begin(r->at, m->u.begin.final_lsn);
		break;
	case PGOUTPUT_MSG_COMMIT:
		if (acktrack_commit(r->at, m->u.commit.commit_lsn, m->u.commit.end_lsn) < 0) {
			die("capture", "Commit outside a transaction");
		}
		r->cur_seq = 0;
		metrics_count(r->metrics, METRICS_TRANSACTIONS, 1);
		break;
	case PGOUTPUT_MSG_RELATION: {
		const struct relcache_rel *rel = relcache_apply(r->rc, m, free);
		struct rinfo *ri = calloc(1, sizeof(*ri));

		ri->selected = router_selects(r->router, rel->nspname, rel->relname);
		((struct relcache_rel *)rel)->user = ri;
		break;
	}
	case PGOUTPUT_MSG_INSERT: {
		struct relcache_rel *rel = relcache_get(r->rc, m->u.insert.relid);
		struct rinfo *ri = rel ? rel->user : NULL;
		enum router_verdict v = ROUTER_DROP;

		if (!ri || !ri->selected) {
			metrics_skipped(r->metrics, METRICS_SKIP_OTHER_TABLE);
			break;
		}
		if (router_route(r->router, rel, NULL, NULL, 'I', &m->u.insert.newtup, &r->rec, &v,
				 err, sizeof(err)) < 0) {
			die("router_route", err);
		}
		if (v == ROUTER_PUBLISH) {
			produce(r);
		} else {
			die("router_route", "a row of the capture is not publishable");
		}
		break;
	}
	default:
		break;
	}
}

/* The capture, read whole: an array of (pointer, length). */
struct capture {
	uint8_t *data;
	size_t size;
	const uint8_t **msg;
	uint32_t *len;
	size_t n;
};

static void
load_capture(const char *path, struct capture *c)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	size_t off = 0, cap = 0;

	if (!f || fstat(fileno(f), &st) < 0) {
		die(path, strerror(errno));
	}
	c->size = (size_t)st.st_size;
	c->data = malloc(c->size ? c->size : 1);
	if (fread(c->data, 1, c->size, f) != c->size) {
		die(path, "short read");
	}
	fclose(f);
	while (off + 4 <= c->size) {
		uint32_t l = (uint32_t)c->data[off] << 24 | (uint32_t)c->data[off + 1] << 16 |
			     (uint32_t)c->data[off + 2] << 8 | c->data[off + 3];

		if (off + 4 + l > c->size) {
			die(path, "truncated capture");
		}
		if (c->n == cap) {
			cap = cap ? cap * 2 : 4096;
			c->msg = realloc(c->msg, cap * sizeof(*c->msg));
			c->len = realloc(c->len, cap * sizeof(*c->len));
		}
		c->msg[c->n] = c->data + off + 4;
		c->len[c->n] = l;
		c->n++;
		off += 4 + l;
	}
}

static void
build(struct replay *r, const char *const *files, int nfiles, int mock_brokers,
      const struct kv *extra)
{
	struct config *cfg = NULL;
	struct kv settings = KV_INIT;
	char err[1024], nb[16];

	if (config_load(files, nfiles, environ, &cfg, err, sizeof(err)) < 0) {
		die("configuration", err);
	}
	struct router_config rc = config_router(cfg, "00000000-0000-4000-8000-000000000000");
	if (router_new(&rc, &r->router, err, sizeof(err)) < 0) {
		die("router", err);
	}
	for (size_t i = 0; i < cfg->producer.n; i++) {
		kv_set(&settings, cfg->producer.v[i].key, cfg->producer.v[i].value, NULL);
	}
	/* the mock cluster instead of cfg->bootstrap_servers */
	if (mock_brokers > 0) {
		snprintf(nb, sizeof(nb), "%d", mock_brokers);
		kv_set(&settings, "test.mock.num.brokers", nb, NULL);
	} else {
		kv_set(&settings, "bootstrap.servers", cfg->bootstrap_servers, NULL);
	}
	for (size_t i = 0; i < extra->n; i++) {
		kv_set(&settings, extra->v[i].key, extra->v[i].value, NULL);
	}
	if (pipe2(r->wake, O_NONBLOCK | O_CLOEXEC) < 0) {
		die("pipe", strerror(errno));
	}
	if (producer_new(&settings, r->wake[1], on_delivery, r, &r->prod, err, sizeof(err)) < 0) {
		die("producer", err);
	}
	kv_fini(&settings);
	/* the router keeps borrowed pointers into cfg: keep it for the process' life */
}

/* One pass over the first @n frames of the capture, from a fresh decoder, relcache and acktrack. */
static void
replay_pass(struct replay *r, const struct capture *cap, size_t n)
{
	char err[512];

	r->at = acktrack_new(0);
	r->rc = relcache_new();
	pgoutput_decoder_init(&r->dec, 1);
	for (size_t k = 0; k < n; k++) {
		struct pgoutput_frame f;
		struct pgoutput_msg m;

		if (pgoutput_frame_decode(cap->msg[k], cap->len[k], &f, err, sizeof(err)) < 0) {
			die("frame", err);
		}
		if (f.kind != PGOUTPUT_FRAME_XLOGDATA) {
			continue;
		}
		if (pgoutput_decode(&r->dec, f.data, f.data_len, &m, err, sizeof(err)) < 0) {
			die("decode", err);
		}
		on_message(r, &m);
		/* the relay serves delivery reports and computes the confirmable LSN per turn */
		if (k % READ_BATCH == READ_BATCH - 1) {
			if (r->produce) {
				serve(r);
			}
			(void)acktrack_confirmed(r->at);
		}
	}
	if (r->produce) {
		while (acktrack_in_flight(r->at) > 0) {
			struct pollfd p = { .fd = r->wake[0], .events = POLLIN };

			poll(&p, 1, 100);
			serve(r);
		}
	}
	(void)acktrack_confirmed(r->at);
	pgoutput_decoder_fini(&r->dec);
	relcache_free(r->rc, free);
	acktrack_free(r->at);
}

int
main(int argc, char **argv)
{
	struct replay r = { .produce = true };
	struct capture cap = { 0 };
	int loops = 1, mock_brokers = 1, i = 1;
	size_t limit = 0;
	struct kv extra = KV_INIT;
	double w0, w1, c0, c1, t0, t1;
	struct rusage ru;
	char err[512];

	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--loops") == 0 && i + 1 < argc) {
			loops = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--no-produce") == 0) {
			r.produce = false;
		} else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc && strchr(argv[i + 1], '=')) {
			char *kvs = argv[++i], *eq = strchr(kvs, '=');

			*eq = 0;
			kv_set(&extra, kvs, eq + 1, NULL);
		} else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc) {
			limit = strtoull(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--mock-brokers") == 0 && i + 1 < argc) {
			mock_brokers = atoi(argv[++i]);
		} else {
			break;
		}
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: replay [--loops N] [--limit FRAMES] [--no-produce] [--mock-brokers N] "
				"CAPTURE FILE...\n");
		return 2;
	}
	log_set_level(getenv("REPLAY_DEBUG") ? LOG_DEBUG : LOG_WARN);
	load_capture(argv[i], &cap);
	if (limit && limit < cap.n) {
		cap.n = limit;
	}
	build(&r, (const char *const *)argv + i + 1, argc - i - 1, mock_brokers, &extra);
	r.metrics = metrics_new();
	router_record_init(&r.rec);

	/* Warm-up: the first transaction (topic metadata, mock cluster start), not measured. */
	if (r.produce && getenv("REPLAY_CHECK_BROKERS")) {
		producer_check_brokers(r.prod, 10000, err, sizeof(err));
	}

	/*
	 * Warm-up, not measured: the first frames once (broker connection, producer id, the topic's
	 * metadata: librdkafka looks up a topic it has not seen on a 1 s timer, upstream issue
	 * 3202), then the whole capture measured.
	 */
	replay_pass(&r, &cap, cap.n < 2000 ? cap.n : 2000);
	r.produced = r.delivered = 0;
	w0 = clock_s(CLOCK_MONOTONIC);
	c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	CALLGRIND_ZERO_STATS;
	for (int l = 0; l < loops; l++) {
		replay_pass(&r, &cap, cap.n);
	}
	CALLGRIND_DUMP_STATS_AT("replay");
	w1 = clock_s(CLOCK_MONOTONIC);
	c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	t1 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	getrusage(RUSAGE_SELF, &ru);
	if (r.failed) {
		fprintf(stderr, "replay: %llu delivery failures\n", (unsigned long long)r.failed);
		return 1;
	}
	printf("events=%llu produce=%d wall_s=%.4f cpu_s=%.4f relay_thread_cpu_s=%.4f "
	       "events_per_s_wall=%.0f events_per_cpu_s=%.0f events_per_relay_thread_cpu_s=%.0f "
	       "queue_full_waits=%llu maxrss_kb=%ld\n",
	       (unsigned long long)r.delivered, r.produce, w1 - w0, c1 - c0, t1 - t0,
	       (double)r.delivered / (w1 - w0), (double)r.delivered / (c1 - c0),
	       (double)r.delivered / (t1 - t0), (unsigned long long)r.queue_full_waits,
	       ru.ru_maxrss);
	router_record_fini(&r.rec);
	producer_free(r.prod);
	metrics_free(r.metrics);
	router_free(r.router);
	return 0;
}
