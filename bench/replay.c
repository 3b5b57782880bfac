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
 * Each frame goes through the relay's own path: pgstream_frame_decode, then the stream source
 * (src/relay/stream.c: pgoutput_decode, relcache + router_selects, acktrack) and the publish path
 * (src/pipeline/publish.c: router_route with the converters, producer_send into librdkafka), here
 * pointed at librdkafka's in-process mock cluster (test.mock.num.brokers); delivery reports go
 * back through the stream to acktrack, and the confirmable LSN is computed once per batch of
 * READ_BATCH frames, as the relay's turn does. What the relay does and this does not: the socket
 * reads (pgstream), status updates, the catalog query per Relation message (NOT NULL / DEFAULT
 * facts: here none, which changes no byte with schemas.enable=false and no NULL column).
 * --no-produce runs only the decoder and the router (with the converters) over the rows.
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

#include "outboxd/config/config.h"
#include "outboxd/kafka/kafkasink.h"
#include "outboxd/obs/metrics.h"
#include "outboxd/pg/pgoutput.h"
#include "outboxd/pg/pgstream_frame.h"
#include "outboxd/pg/relcache.h"
#include "outboxd/pipeline/publish.h"
#include "outboxd/relay/acktrack.h"
#include "outboxd/relay/stream.h"
#include "outboxd/util/kv.h"
#include "outboxd/util/log.h"
#include "outboxd/util/now.h"

extern char **environ;

#define READ_BATCH 2000

struct replay {
	struct router *router;
	struct metrics *metrics;
	struct kv settings;
	struct publish_params pp;
	struct stream_params sp;
	struct publish *pub;
	struct stream *st;	   /* the stream of the pass running now */
	struct publish_source src; /* its callbacks */
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

static void
die(const char *what, const char *err)
{
	fprintf(stderr, "replay: %s: %s\n", what, err);
	exit(1);
}

/* The publish path outlives the passes; each pass has a stream of its own: forward to it. */
static void
on_produced(void *opaque, uint64_t token)
{
	struct replay *r = opaque;

	r->produced++;
	r->src.on_produced(r->src.opaque, token);
}

static void
on_delivery(void *opaque, uint64_t token, bool ok, const char *reason)
{
	struct replay *r = opaque;

	if (ok) {
		r->delivered++;
	} else {
		r->failed++;
	}
	r->src.on_delivery(r->src.opaque, token, ok, reason);
}

static void
serve(struct replay *r)
{
	char why[512];

	if (publish_serve(r->pub, why, sizeof(why)) != OUTCOME_OK) {
		die("producer", why);
	}
}

/* Queue full: wait for delivery reports as the relay does (reading paused). */
static void
drain_waiting(struct replay *r)
{
	char why[512];

	while (publish_waiting(r->pub)) {
		struct pollfd p = { .fd = publish_wake_fd(r->pub), .events = POLLIN };

		r->queue_full_waits++;
		poll(&p, 1, 100);
		serve(r);
		if (publish_retry(r->pub, why, sizeof(why)) != OUTCOME_OK) {
			die("producer", why);
		}
	}
}

/* --no-produce: decode and route only, every row counted as produced and delivered. */
static void
route_only(struct replay *r, struct relcache *rc, struct record *rec, const struct pgoutput_msg *m)
{
	struct relcache_rel *rel;
	enum router_verdict v = ROUTER_DROP;
	char err[1024];

	if (m->type == PGOUTPUT_MSG_RELATION) {
		rel = (struct relcache_rel *)relcache_apply(rc, m, NULL);
		rel->user = router_selects(r->router, rel->nspname, rel->relname) ? rel : NULL;
		return;
	}
	if (m->type != PGOUTPUT_MSG_INSERT || !(rel = relcache_get(rc, m->u.insert.relid)) ||
	    !rel->user) {
		return;
	}
	if (router_route(
		    r->router,
		    &(const struct router_row){ .rel = rel, .tup = &m->u.insert.newtup, .op = 'I' },
		    rec, &v, err, sizeof(err)) < 0 ||
	    v != ROUTER_PUBLISH) {
		die("router_route", "a row of the capture is not publishable");
	}
	r->produced++;
	r->delivered++;
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
	char err[1024], nb[16];

	if (config_load(files, nfiles, environ, &cfg, err, sizeof(err)) < 0) {
		die("configuration", err);
	}
	struct router_config rc = config_router(cfg, "00000000-0000-4000-8000-000000000000");
	if (router_new(&rc, &r->router, err, sizeof(err)) < 0) {
		die("router", err);
	}
	for (size_t i = 0; i < cfg->librdkafka.n; i++) {
		/* the mock cluster instead of bootstrap.servers */
		if (mock_brokers <= 0 ||
		    strcmp(cfg->librdkafka.v[i].key, "bootstrap.servers") != 0) {
			kv_set(&r->settings, cfg->librdkafka.v[i].key, cfg->librdkafka.v[i].value,
			       NULL);
		}
	}
	if (mock_brokers > 0) {
		snprintf(nb, sizeof(nb), "%d", mock_brokers);
		kv_set(&r->settings, "test.mock.num.brokers", nb, NULL);
	}
	for (size_t i = 0; i < extra->n; i++) {
		kv_set(&r->settings, extra->v[i].key, extra->v[i].value, NULL);
	}
	r->metrics = metrics_new();
	r->pp = (struct publish_params){ .sink = { .kind = &kafkasink_kind,
						   .settings = &r->settings },
					 .router = r->router,
					 .metrics = r->metrics };
	r->sp = (struct stream_params){ .router = r->router,
					.metrics = r->metrics,
					.dbname = kv_get(&cfg->pg_conn, "dbname") };
	if (r->produce && publish_new(&r->pp,
				      &(struct publish_source){ .on_produced = on_produced,
								.on_delivery = on_delivery,
								.opaque = r },
				      &r->pub, err, sizeof(err)) < 0) {
		die("producer", err);
	}
	/* the router keeps borrowed pointers into cfg: keep it for the process' life */
}

/* One pass over the first @n frames of the capture, from a fresh stream (decoder, relcache,
 * acktrack). */
static void
replay_pass(struct replay *r, const struct capture *cap, size_t n)
{
	struct relcache *rc = relcache_new();
	struct pgoutput_decoder dec;
	struct record rec;
	char err[512];

	r->st = stream_new(&r->sp, 0, now_unix_us());
	r->src = stream_source(r->st);
	pgoutput_decoder_init(&dec, 1);
	record_init(&rec);
	for (size_t k = 0; k < n; k++) {
		struct pgstream_frame f;
		struct pgoutput_msg m;

		if (pgstream_frame_decode(cap->msg[k], cap->len[k], &f, err, sizeof(err)) < 0) {
			die("frame", err);
		}
		if (!r->produce) {
			if (f.kind == PGSTREAM_FRAME_XLOGDATA &&
			    pgoutput_decode(&dec, f.data, f.data_len, &m, err, sizeof(err)) < 0) {
				die("decode", err);
			}
			if (f.kind == PGSTREAM_FRAME_XLOGDATA) {
				route_only(r, rc, &rec, &m);
			}
			continue;
		}
		if (stream_on_frame(r->st, r->pub, &f, err, sizeof(err)) != OUTCOME_OK) {
			die("stream", err);
		}
		drain_waiting(r);
		/* the relay serves delivery reports and computes the confirmable LSN per turn */
		if (k % READ_BATCH == READ_BATCH - 1) {
			serve(r);
			(void)acktrack_confirmed(stream_acktrack(r->st));
		}
	}
	while (r->produce && acktrack_in_flight(stream_acktrack(r->st)) > 0) {
		struct pollfd p = { .fd = publish_wake_fd(r->pub), .events = POLLIN };

		poll(&p, 1, 100);
		serve(r);
	}
	(void)acktrack_confirmed(stream_acktrack(r->st));
	stream_free(r->st);
	r->st = NULL;
	record_fini(&rec);
	pgoutput_decoder_fini(&dec);
	relcache_free(rc, NULL);
}
/*
 * The peak RSS of this process: VmHWM, since ru_maxrss keeps the high-water mark of the process
 * that forked and exec'd it (bench/run's Python). @fallback when /proc cannot tell.
 */
static long
vm_hwm_kb(long fallback)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = fallback;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) {
			break;
		}
	}
	if (f) {
		fclose(f);
	}
	return kb;
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

	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--loops") == 0 && i + 1 < argc) {
			loops = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--no-produce") == 0) {
			r.produce = false;
		} else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc &&
			   strchr(argv[i + 1], '=')) {
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
		fprintf(stderr,
			"usage: replay [--loops N] [--limit FRAMES] [--no-produce] [--mock-brokers N] "
			"CAPTURE FILE...\n");
		return 2;
	}
	log_set_level(getenv("REPLAY_DEBUG") ? LOG_DEBUG : LOG_WARN);
	load_capture(argv[i], &cap);
	if (limit && limit < cap.n) {
		cap.n = limit;
	}
	build(&r, (const char *const *)argv + i + 1, argc - i - 1, mock_brokers, &extra);

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
	ru.ru_maxrss = vm_hwm_kb(ru.ru_maxrss);
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
	publish_free(r.pub, PUBLISH_END_FINAL);
	kv_fini(&r.settings);
	metrics_free(r.metrics);
	router_free(r.router);
	return 0;
}
