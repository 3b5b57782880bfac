/* SPDX-License-Identifier: Apache-2.0 */
/*
 * benchtool - the small measuring helpers of bench/run.
 *
 *   benchtool load CONNINFO TABLE RATE SECONDS FIRST [ROWS_PER_TX]
 *	Transactions of ROWS_PER_TX rows (default 1) at a steady RATE of rows per second for
 *	SECONDS (absolute deadlines, so a late commit is caught up, not dropped): INSERT ... SELECT
 *	* FROM bench_rows(i, ROWS_PER_TX) with i = FIRST, FIRST+ROWS_PER_TX, ...; prints the
 *	achieved rate and the lateness. More rows per transaction reach rates that one connection's
 *	commits cannot (about 10,000 one-row commits per second here).
 *
 *   benchtool wait CONNINFO SLOT LSN BOOTSTRAP TOPIC COUNT TIMEOUT_S
 *	Polls, on one connection each, the slot's confirmed_flush_lsn (every 20 ms) until it
 *	reaches LSN, and the sum of the topic's high watermarks (every 50 ms) until it reaches
 *	COUNT. SLOT or TOPIC "-" skips that side. Prints "slot <unix time>" and "kafka <unix
 *	time>" as each is reached; exit 0 when both are, 1 on timeout. TOPIC "PREFIX*" sums every
 *	topic whose name starts with PREFIX; COUNT "C1,C2,...,C" also prints "kafka_K <unix
 *	time>" when the sum reaches CK (the end of a first part of the backlog).
 *
 *   benchtool topics BOOTSTRAP PREFIX COUNT
 *	Creates topics PREFIX0 to PREFIX<COUNT-1>, one partition each, LogAppendTime.
 *
 *   benchtool produce BOOTSTRAP TOPIC COUNT KEY_BYTES VALUE_BYTES HEADERS [NAME=VALUE...]
 *	librdkafka alone, the floor under any relay built on it: COUNT records produced the way
 *	outboxd's producer does it (rd_kafka_produceva with a topic handle, copies of the key and
 *	the value, HEADERS headers of a 36-byte value, an opaque; rd_kafka_poll(0) after each, one
 *	delivery-report callback per record; a full queue waits in rd_kafka_poll(1 ms)), with the
 *	librdkafka settings NAME=VALUE. Values are JSON-escaped order documents of VALUE_BYTES,
 *	1,000 distinct ones, made before the clock starts. One record is produced and acknowledged
 *	before the clock starts, so that the figures are the steady state's without librdkafka's
 *	start-up, which is printed apart (startup_s: rd_kafka_new to that acknowledgement).
 *	Prints the process's CPU per event and the producing thread's share of it, after every
 *	record is acknowledged.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <librdkafka/rdkafka.h>

static double
wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static PGconn *
connect_pg(const char *conninfo)
{
	PGconn *c = PQconnectdb(conninfo);

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "benchtool: %s", PQerrorMessage(c));
		exit(1);
	}
	return c;
}

static int
cmd_load(int argc, char **argv)
{
	PGconn *c;
	PGresult *r;
	char sql[512], num[32];
	const char *params[1] = { num };
	double rate, secs;
	long long first, n, total;
	struct timespec t0, dl;
	double max_late = 0, sum_late = 0;
	double w0, w1;
	long long per = argc == 8 ? atoll(argv[7]) : 1;

	if ((argc != 7 && argc != 8) || per < 1) {
		fprintf(stderr,
			"usage: benchtool load CONNINFO TABLE RATE SECONDS FIRST [ROWS_PER_TX]\n");
		return 2;
	}
	c = connect_pg(argv[2]);
	rate = atof(argv[4]);
	secs = atof(argv[5]);
	first = atoll(argv[6]);
	total = (long long)(rate * secs) / per * per;
	snprintf(sql, sizeof(sql), "INSERT INTO %s SELECT * FROM bench_rows($1::bigint, %lld)",
		 argv[3], per);
	r = PQprepare(c, "ins", sql, 1, NULL);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		fprintf(stderr, "benchtool: %s", PQerrorMessage(c));
		return 1;
	}
	PQclear(r);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	w0 = wall();
	for (n = 0; n < total; n += per) {
		struct timespec now;
		double late;
		int64_t ns = (int64_t)((double)n * 1e9 / rate);

		dl.tv_sec = t0.tv_sec + (time_t)(ns / 1000000000);
		dl.tv_nsec = t0.tv_nsec + (long)(ns % 1000000000);
		if (dl.tv_nsec >= 1000000000) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &dl, NULL) == EINTR) {
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		late = (double)(now.tv_sec - dl.tv_sec) + (double)(now.tv_nsec - dl.tv_nsec) / 1e9;
		if (late > max_late) {
			max_late = late;
		}
		sum_late += late;
		snprintf(num, sizeof(num), "%lld", first + n);
		r = PQexecPrepared(c, "ins", 1, params, NULL, NULL, 0);
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			fprintf(stderr, "benchtool: %s", PQerrorMessage(c));
			return 1;
		}
		PQclear(r);
	}
	w1 = wall();
	printf("rows=%lld seconds=%.3f rate=%.1f mean_late_ms=%.3f max_late_ms=%.3f start=%.6f\n",
	       total, w1 - w0, (double)total / (w1 - w0),
	       sum_late / (double)(total ? total / per : 1) * 1e3, max_late * 1e3, w0);
	PQfinish(c);
	return 0;
}

/*
 * The partitions counted by wait: those of TOPIC, or of every topic whose name starts with PREFIX
 * when TOPIC is "PREFIX*" (the topic-count curve spreads its records over up to 10,000 topics).
 */
static rd_kafka_topic_partition_list_t *
wait_partitions(rd_kafka_t *rk, const char *topic)
{
	const rd_kafka_metadata_t *md;
	size_t n = strlen(topic);
	bool prefix = n > 0 && topic[n - 1] == '*';
	rd_kafka_topic_t *t = prefix ? NULL : rd_kafka_topic_new(rk, topic, NULL);
	rd_kafka_topic_partition_list_t *l = NULL;

	if (rd_kafka_metadata(rk, prefix, t, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
		l = rd_kafka_topic_partition_list_new(prefix ? md->topic_cnt : 4);
		for (int i = 0; i < md->topic_cnt; i++) {
			const rd_kafka_metadata_topic_t *mt = &md->topics[i];

			if (mt->err || (prefix ? strncmp(mt->topic, topic, n - 1) != 0 :
						 strcmp(mt->topic, topic) != 0)) {
				continue;
			}
			for (int k = 0; k < mt->partition_cnt; k++) {
				if (mt->partitions[k].leader < 0) {
					continue; /* not served yet: listed again later */
				}
				rd_kafka_topic_partition_list_add(l, mt->topic,
								  mt->partitions[k].id);
			}
		}
		rd_kafka_metadata_destroy(md);
	}
	if (t) {
		rd_kafka_topic_destroy(t);
	}
	return l;
}

/*
 * The sum of the high watermarks of @l: one ListOffsets request (timestamp -1: the latest
 * offset) for every partition, where a query per partition would take seconds for 10,000.
 */
static int
partitions_total(rd_kafka_t *rk, const rd_kafka_topic_partition_list_t *l, int64_t *ret)
{
	rd_kafka_topic_partition_list_t *q = rd_kafka_topic_partition_list_copy(l);
	int64_t sum = 0;
	int rc = -1;

	for (int i = 0; i < q->cnt; i++) {
		q->elems[i].offset = RD_KAFKA_OFFSET_END;
	}
	if (q->cnt > 0 && rd_kafka_offsets_for_times(rk, q, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
		rc = 0;
		for (int i = 0; i < q->cnt; i++) {
			if (q->elems[i].err || q->elems[i].offset < 0) {
				rc = -1;
				break;
			}
			sum += q->elems[i].offset;
		}
	}
	rd_kafka_topic_partition_list_destroy(q);
	*ret = sum;
	return rc;
}

static int
cmd_wait(int argc, char **argv)
{
	const char *slot, *topic;
	unsigned hi, lo;
	uint64_t lsn = 0;
	long long counts[8];
	int ncounts = 0, reached = 0;
	double deadline, next_kafka = 0, next_list = 0;
	rd_kafka_topic_partition_list_t *parts = NULL;
	bool slot_done, kafka_done;
	PGconn *c = NULL;
	rd_kafka_t *rk = NULL;
	char sql[256], err[512];

	if (argc != 9) {
		fprintf(stderr,
			"usage: benchtool wait CONNINFO SLOT LSN BOOTSTRAP TOPIC COUNT TIMEOUT_S\n");
		return 2;
	}
	slot = argv[3];
	topic = argv[6];
	for (char *c7 = argv[7]; *c7 && ncounts < 8; c7 = *c7 == ',' ? c7 + 1 : c7) {
		counts[ncounts++] = strtoll(c7, &c7, 10);
	}
	deadline = wall() + atof(argv[8]);
	slot_done = strcmp(slot, "-") == 0;
	kafka_done = strcmp(topic, "-") == 0;
	if (!slot_done) {
		if (sscanf(argv[4], "%X/%X", &hi, &lo) != 2) {
			fprintf(stderr, "benchtool: bad LSN %s\n", argv[4]);
			return 2;
		}
		lsn = ((uint64_t)hi << 32) | lo;
		c = connect_pg(argv[2]);
		snprintf(sql, sizeof(sql),
			 "SELECT confirmed_flush_lsn - '0/0'::pg_lsn FROM pg_replication_slots "
			 "WHERE slot_name = '%s'",
			 slot);
	}
	if (!kafka_done) {
		rd_kafka_conf_t *conf = rd_kafka_conf_new();

		rd_kafka_conf_set(conf, "bootstrap.servers", argv[5], err, sizeof(err));
		rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
		if (!rk) {
			fprintf(stderr, "benchtool: %s\n", err);
			return 1;
		}
	}
	while (!slot_done || !kafka_done) {
		double now = wall();

		if (now > deadline) {
			fprintf(stderr, "benchtool: timeout (slot %s, kafka %s)\n",
				slot_done ? "done" : "waiting", kafka_done ? "done" : "waiting");
			return 1;
		}
		if (!slot_done) {
			PGresult *r = PQexec(c, sql);

			if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
			    !PQgetisnull(r, 0, 0) &&
			    strtoull(PQgetvalue(r, 0, 0), NULL, 10) >= lsn) {
				slot_done = true;
				printf("slot %.6f\n", wall());
				fflush(stdout);
			}
			PQclear(r);
		}
		if (!kafka_done && now >= next_kafka) {
			int64_t total;

			next_kafka = now + 0.05;
			/* a prefix's topics are listed again every second: one may be new */
			if (!parts || ((parts->cnt == 0 || topic[strlen(topic) - 1] == '*') &&
				       now >= next_list)) {
				if (parts) {
					rd_kafka_topic_partition_list_destroy(parts);
				}
				parts = wait_partitions(rk, topic);
				next_list = now + 1;
			}
			while (!kafka_done && parts && partitions_total(rk, parts, &total) == 0 &&
			       total >= counts[reached]) {
				if (++reached == ncounts) {
					kafka_done = true;
					printf("kafka %.6f\n", wall());
				} else {
					printf("kafka_%d %.6f\n", reached, wall());
				}
				fflush(stdout);
			}
		}
		usleep(20000);
	}
	if (c) {
		PQfinish(c);
	}
	if (parts) {
		rd_kafka_topic_partition_list_destroy(parts);
	}
	if (rk) {
		rd_kafka_destroy(rk);
	}
	return 0;
}

/* CPU seconds of the calling thread (@thread) or of the whole process. */
static double
cpu_s(bool thread)
{
	struct timespec ts;

	if (thread) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	}
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static long long produce_acked, produce_failed;

static void
on_report(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	(void)rk;
	(void)opaque;
	if (m->err) {
		produce_failed++;
	} else {
		produce_acked++;
	}
}

/* A JSON-escaped order document of about @n bytes, varied by @seed (as a relay writes one). */
static char *
order_value(size_t n, unsigned seed)
{
	char *v = malloc(n + 128);
	size_t len;

	len = (size_t)sprintf(v, "\"{\\\"orderId\\\": %u, \\\"items\\\": [", seed);
	for (unsigned k = 0; len < n; k++) {
		len += (size_t)sprintf(v + len,
				       "{\\\"qty\\\": %u, \\\"sku\\\": \\\"SKU-%u\\\", "
				       "\\\"price\\\": 9.99}, ",
				       1 + (seed + k) % 5, (seed * 7 + k) % 997);
	}
	sprintf(v + len, "]}\"");
	return v;
}

static int
cmd_produce(int argc, char **argv)
{
	enum { NVALUES = 1000 };
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_t *rk;
	rd_kafka_topic_t *rkt;
	long long count, nheaders;
	size_t key_bytes, value_bytes;
	char err[512], key[256], hval[37] = "0b6f3e2a-5c1d-4e8f-9a7b-1c2d3e4f5a6b";
	char *values[NVALUES];
	double ts, t0, c0, th0, t1, c1, th1;

	if (argc < 8) {
		fprintf(stderr, "usage: benchtool produce BOOTSTRAP TOPIC COUNT KEY_BYTES "
				"VALUE_BYTES HEADERS [NAME=VALUE...]\n");
		return 2;
	}
	count = atoll(argv[4]);
	key_bytes = (size_t)atoll(argv[5]);
	value_bytes = (size_t)atoll(argv[6]);
	nheaders = atoll(argv[7]);
	if (key_bytes >= sizeof(key) || key_bytes < 3) {
		fprintf(stderr, "benchtool: KEY_BYTES must be 3 to %zu\n", sizeof(key) - 1);
		return 2;
	}
	rd_kafka_conf_set(conf, "bootstrap.servers", argv[2], err, sizeof(err));
	for (int i = 8; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq) {
			fprintf(stderr, "benchtool: %s is not NAME=VALUE\n", argv[i]);
			return 2;
		}
		*eq = '\0';
		if (rd_kafka_conf_set(conf, argv[i], eq + 1, err, sizeof(err)) !=
		    RD_KAFKA_CONF_OK) {
			fprintf(stderr, "benchtool: %s\n", err);
			return 2;
		}
	}
	rd_kafka_conf_set_dr_msg_cb(conf, on_report);
	ts = wall();
	rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
	if (!rk) {
		fprintf(stderr, "benchtool: %s\n", err);
		return 1;
	}
	rkt = rd_kafka_topic_new(rk, argv[3], NULL);
	for (int i = 0; i < NVALUES; i++) {
		values[i] = order_value(value_bytes, (unsigned)i);
	}
	/* the start-up, apart: 2.14.2 holds the first records about 0.5 s for its producer id
	 * (the bootstrap connection is gone by then), 2.0.2 up to 1 s for a topic (#3202) */
	if (rd_kafka_producev(rk, RD_KAFKA_V_RKT(rkt),
			      RD_KAFKA_V_VALUE(values[0], strlen(values[0])),
			      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END) != 0 ||
	    rd_kafka_flush(rk, 120000) != 0 || produce_acked != 1) {
		fprintf(stderr, "benchtool: the first record was not acknowledged\n");
		return 1;
	}
	produce_acked = 0;
	t0 = wall();
	c0 = cpu_s(false);
	th0 = cpu_s(true);
	for (long long i = 0; i < count;) {
		rd_kafka_headers_t *h = rd_kafka_headers_new((size_t)nheaders);
		const char *v = values[i % NVALUES];
		rd_kafka_error_t *e;

		snprintf(key, sizeof(key), "\"order-%0*lld\"", (int)key_bytes - 8, i % 100000);
		for (long long k = 0; k < nheaders; k++) {
			rd_kafka_header_add(h,
					    k + 1 < nheaders ? "__debezium.context.header" : "id",
					    -1, hval, 36);
		}
		e = rd_kafka_produceva(
			rk,
			(rd_kafka_vu_t[]){
				{ .vtype = RD_KAFKA_VTYPE_RKT, .u.rkt = rkt },
				{ .vtype = RD_KAFKA_VTYPE_PARTITION,
				  .u.i32 = RD_KAFKA_PARTITION_UA },
				{ .vtype = RD_KAFKA_VTYPE_KEY, .u.mem = { key, strlen(key) } },
				{ .vtype = RD_KAFKA_VTYPE_VALUE,
				  .u.mem = { (void *)v, strlen(v) } },
				{ .vtype = RD_KAFKA_VTYPE_HEADERS, .u.headers = h },
				{ .vtype = RD_KAFKA_VTYPE_MSGFLAGS, .u.i = RD_KAFKA_MSG_F_COPY },
				{ .vtype = RD_KAFKA_VTYPE_OPAQUE,
				  .u.ptr = (void *)(intptr_t)(i + 1) },
			},
			7);
		if (e) {
			rd_kafka_headers_destroy(h);
			if (rd_kafka_error_code(e) != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
				fprintf(stderr, "benchtool: %s\n", rd_kafka_error_string(e));
				return 1;
			}
			rd_kafka_error_destroy(e);
			rd_kafka_poll(rk, 1);
			continue;
		}
		rd_kafka_poll(rk, 0);
		i++;
	}
	rd_kafka_flush(rk, 120000);
	t1 = wall();
	c1 = cpu_s(false);
	th1 = cpu_s(true);
	printf("events=%lld acked=%lld failed=%lld wall_s=%.3f cpu_s=%.3f producing_thread_cpu_s=%.3f "
	       "us_per_event=%.3f producing_thread_us_per_event=%.3f value_bytes=%zu startup_s=%.3f\n",
	       count, produce_acked, produce_failed, t1 - t0, c1 - c0, th1 - th0,
	       (c1 - c0) / (double)count * 1e6, (th1 - th0) / (double)count * 1e6,
	       strlen(values[0]), t0 - ts);
	rd_kafka_topic_destroy(rkt);
	rd_kafka_destroy(rk);
	for (int i = 0; i < NVALUES; i++) {
		free(values[i]);
	}
	return produce_acked == count ? 0 : 1;
}

/*
 * topics: @n topics PREFIX0 .. PREFIX<n-1> of one partition each, LogAppendTime, in CreateTopics
 * requests of 500 (TopicCommand is a JVM per topic: an hour for 10,000). Existing ones are kept.
 */
static int
cmd_topics(int argc, char **argv)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_t *rk;
	rd_kafka_queue_t *q;
	int n, failed = 0;
	char err[512];

	if (argc != 5) {
		fprintf(stderr, "usage: benchtool topics BOOTSTRAP PREFIX COUNT\n");
		return 2;
	}
	n = atoi(argv[4]);
	rd_kafka_conf_set(conf, "bootstrap.servers", argv[2], err, sizeof(err));
	rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
	if (!rk) {
		fprintf(stderr, "benchtool: %s\n", err);
		return 1;
	}
	q = rd_kafka_queue_new(rk);
	for (int first = 0; first < n; first += 500) {
		int cnt = n - first < 500 ? n - first : 500;
		rd_kafka_NewTopic_t *nt[500];
		rd_kafka_event_t *ev;
		const rd_kafka_topic_result_t **res;
		size_t nres;

		for (int i = 0; i < cnt; i++) {
			char name[256];

			snprintf(name, sizeof(name), "%s%d", argv[3], first + i);
			nt[i] = rd_kafka_NewTopic_new(name, 1, 1, err, sizeof(err));
			rd_kafka_NewTopic_set_config(nt[i], "message.timestamp.type",
						     "LogAppendTime");
		}
		rd_kafka_CreateTopics(rk, nt, (size_t)cnt, NULL, q);
		ev = rd_kafka_queue_poll(q, 120000);
		res = ev ? rd_kafka_CreateTopics_result_topics(
				   rd_kafka_event_CreateTopics_result(ev), &nres) :
			   NULL;
		if (!res) {
			fprintf(stderr, "benchtool: CreateTopics: %s\n",
				ev ? rd_kafka_event_error_string(ev) : "no answer in 120 s");
			failed = cnt;
		}
		for (size_t i = 0; res && i < nres; i++) {
			rd_kafka_resp_err_t e = rd_kafka_topic_result_error(res[i]);

			if (e && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
				fprintf(stderr, "benchtool: topic %s: %s\n",
					rd_kafka_topic_result_name(res[i]), rd_kafka_err2str(e));
				failed++;
			}
		}
		if (ev) {
			rd_kafka_event_destroy(ev);
		}
		for (int i = 0; i < cnt; i++) {
			rd_kafka_NewTopic_destroy(nt[i]);
		}
		if (failed) {
			break;
		}
	}
	/* made: every topic listed with its leader, so that a waiter started next counts them all */
	for (int tries = 0; !failed; tries++) {
		rd_kafka_topic_partition_list_t *l;
		char pat[256];

		snprintf(pat, sizeof(pat), "%s*", argv[3]);
		l = wait_partitions(rk, pat);
		if (l && l->cnt >= n) {
			rd_kafka_topic_partition_list_destroy(l);
			break;
		}
		if (l) {
			rd_kafka_topic_partition_list_destroy(l);
		}
		if (tries == 600) {
			fprintf(stderr,
				"benchtool: the %d topics %s* are not all listed after 60 s\n", n,
				argv[3]);
			failed = 1;
		}
		usleep(100000);
	}
	rd_kafka_queue_destroy(q);
	rd_kafka_destroy(rk);
	return failed ? 1 : 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "produce") == 0) {
		return cmd_produce(argc, argv);
	}
	if (argc >= 2 && strcmp(argv[1], "load") == 0) {
		return cmd_load(argc, argv);
	}
	if (argc >= 2 && strcmp(argv[1], "topics") == 0) {
		return cmd_topics(argc, argv);
	}
	if (argc >= 2 && strcmp(argv[1], "wait") == 0) {
		return cmd_wait(argc, argv);
	}
	fprintf(stderr, "usage: benchtool load|wait|produce|topics ...\n");
	return 2;
}
