/* SPDX-License-Identifier: Apache-2.0 */
#include "itest.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/mem.h"

const char *
itest_env(const char *name)
{
	const char *v = getenv(name);

	ck_assert_msg(v && *v,
		      "%s is not set: integration suites need the test stack; run scripts/test, or "
		      "eval \"$(scripts/stack up)\" before meson test",
		      name);
	return v;
}

PGconn *
itest_pg(void)
{
	PGconn *c = PQconnectdb(itest_env("OUTBOXD_TEST_PG_CONNINFO"));

	ck_assert_msg(PQstatus(c) == CONNECTION_OK, "cannot connect to the stack's PostgreSQL: %s",
		      PQerrorMessage(c));
	return c;
}

PGresult *
itest_sql(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);
	ExecStatusType st = PQresultStatus(r);

	ck_assert_msg(st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK, "SQL failed: %s\n%s", sql,
		      PQresultErrorMessage(r));
	return r;
}

void
itest_sqlf(PGconn *c, const char *fmt, ...)
{
	struct buf q = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_add_vfmt(&q, fmt, ap);
	va_end(ap);
	PQclear(itest_sql(c, buf_cstr(&q)));
	buf_fini(&q);
}

char *
itest_unique(const char *prefix)
{
	static unsigned counter;
	struct buf name = BUF_INIT;

	buf_add_fmt(&name, "%s_%ld_%d_%u", prefix, (long)time(NULL), (int)getpid(), counter++);
	return buf_steal(&name);
}

rd_kafka_conf_t *
itest_kafka_conf(void)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char err[256];

	ck_assert_int_eq(rd_kafka_conf_set(conf, "bootstrap.servers",
					   itest_env("OUTBOXD_TEST_KAFKA_BOOTSTRAP"), err,
					   sizeof(err)),
			 RD_KAFKA_CONF_OK);
	return conf;
}

/* Partition count of @topic from metadata (the topic must exist). */
static int
partition_count(rd_kafka_t *rk, const char *topic)
{
	rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
	const struct rd_kafka_metadata *md = NULL;
	int n = -1;

	for (int tries = 0; tries < 50 && n <= 0; tries++) {
		if (rd_kafka_metadata(rk, 0, t, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
			if (md->topic_cnt == 1 && md->topics[0].err == 0) {
				n = md->topics[0].partition_cnt;
			}
			rd_kafka_metadata_destroy(md);
		}
		if (n <= 0) {
			usleep(100 * 1000);
		}
	}
	rd_kafka_topic_destroy(t);
	ck_assert_msg(n > 0, "topic %s has no metadata", topic);
	return n;
}

static void
record_copy(struct itest_record *dst, const rd_kafka_message_t *m)
{
	rd_kafka_headers_t *h = NULL;

	dst->partition = m->partition;
	dst->offset = m->offset;
	dst->key = m->key ? xstrndup(m->key, m->key_len) : NULL;
	dst->key_len = m->key_len;
	dst->value = m->payload ? xstrndup(m->payload, m->len) : NULL;
	dst->value_len = m->len;
	dst->headers = rd_kafka_message_headers(m, &h) == 0 ? rd_kafka_headers_copy(h) : NULL;
}

size_t
itest_consume_all(const char *topic, size_t expected, int timeout_ms,
		  struct itest_record **ret_records)
{
	rd_kafka_conf_t *conf = itest_kafka_conf();
	char err[512];
	rd_kafka_t *rk;
	rd_kafka_topic_partition_list_t *parts;
	struct itest_record *recs = NULL;
	size_t n = 0, cap = 0;
	int np;
	struct timespec start, now;
	char *group = itest_unique("itest");

	rd_kafka_conf_set(conf, "group.id", group, err, sizeof(err));
	free(group);
	rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof(err));
	rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
	ck_assert_msg(rk != NULL, "consumer: %s", err);
	np = partition_count(rk, topic);
	parts = rd_kafka_topic_partition_list_new(np);
	for (int p = 0; p < np; p++) {
		rd_kafka_topic_partition_list_add(parts, topic, p)->offset =
			RD_KAFKA_OFFSET_BEGINNING;
	}
	ck_assert_int_eq(rd_kafka_assign(rk, parts), RD_KAFKA_RESP_ERR_NO_ERROR);
	rd_kafka_topic_partition_list_destroy(parts);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		rd_kafka_message_t *m;
		long elapsed;

		clock_gettime(CLOCK_MONOTONIC, &now);
		elapsed = (now.tv_sec - start.tv_sec) * 1000 +
			  (now.tv_nsec - start.tv_nsec) / 1000000;
		if (n >= expected || elapsed > timeout_ms) {
			break;
		}
		m = rd_kafka_consumer_poll(rk, 200);
		if (!m) {
			continue;
		}
		if (!m->err) {
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				recs = xrealloc(recs, cap * sizeof(*recs));
			}
			record_copy(&recs[n++], m);
		}
		rd_kafka_message_destroy(m);
	}
	rd_kafka_consumer_close(rk);
	rd_kafka_destroy(rk);
	*ret_records = recs;
	return n;
}

void
itest_records_free(struct itest_record *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].key);
		free(r[i].value);
		if (r[i].headers) {
			rd_kafka_headers_destroy(r[i].headers);
		}
	}
	free(r);
}

/* Records in @topic (sum of high watermarks), 0 if it does not exist; -1 when a partition's
 * watermark cannot be read (its leader unknown yet), or the test fails on it if @strict. */
static long
topic_count(const char *topic, bool strict)
{
	rd_kafka_conf_t *conf = itest_kafka_conf();
	char err[512];
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
	rd_kafka_topic_t *t;
	const struct rd_kafka_metadata *md = NULL;
	long total = 0;

	ck_assert_msg(rk != NULL, "consumer: %s", err);
	t = rd_kafka_topic_new(rk, topic, NULL);
	if (rd_kafka_metadata(rk, 0, t, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
		if (md->topic_cnt == 1 && md->topics[0].err == 0) {
			for (int p = 0; p < md->topics[0].partition_cnt && total >= 0; p++) {
				int64_t lo = 0, hi = 0;
				rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(
					rk, topic, p, &lo, &hi, 10000);

				if (strict) {
					ck_assert_int_eq(e, RD_KAFKA_RESP_ERR_NO_ERROR);
				}
				total = e == RD_KAFKA_RESP_ERR_NO_ERROR ? total + (long)hi : -1;
			}
		}
		rd_kafka_metadata_destroy(md);
	}
	rd_kafka_topic_destroy(t);
	rd_kafka_destroy(rk);
	return total;
}

long
itest_topic_count(const char *topic)
{
	return topic_count(topic, true);
}

long
itest_topic_count_settled(const char *topic, int timeout_s)
{
	time_t end = time(NULL) + timeout_s;
	long n;

	while ((n = topic_count(topic, false)) < 0 && time(NULL) < end) {
		usleep(200 * 1000);
	}
	return n >= 0 ? n : topic_count(topic, true);
}

/* Runs one admin request on @rk and fails the test unless every resource came back without an
 * error (@what names the request). */
static void
admin_wait(rd_kafka_t *rk, rd_kafka_queue_t *q, rd_kafka_event_type_t type, const char *what)
{
	rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
	const rd_kafka_topic_result_t **tres;
	const rd_kafka_ConfigResource_t **cres;
	size_t n = 0;

	(void)rk;
	ck_assert_msg(ev != NULL, "%s: no answer from the broker", what);
	ck_assert_msg(rd_kafka_event_type(ev) == type && !rd_kafka_event_error(ev), "%s: %s", what,
		      rd_kafka_event_error_string(ev));
	if (type == RD_KAFKA_EVENT_CREATETOPICS_RESULT) {
		tres = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev),
							   &n);
		for (size_t i = 0; i < n; i++) {
			ck_assert_msg(!rd_kafka_topic_result_error(tres[i]), "%s: %s", what,
				      rd_kafka_topic_result_error_string(tres[i]));
		}
	} else {
		cres = rd_kafka_AlterConfigs_result_resources(
			rd_kafka_event_AlterConfigs_result(ev), &n);
		for (size_t i = 0; i < n; i++) {
			ck_assert_msg(!rd_kafka_ConfigResource_error(cres[i]), "%s: %s", what,
				      rd_kafka_ConfigResource_error_string(cres[i]));
		}
	}
	rd_kafka_event_destroy(ev);
}

void
itest_topic_config(const char *topic, bool create, const char *key, const char *value)
{
	char err[512];
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, itest_kafka_conf(), err, sizeof(err));
	rd_kafka_queue_t *q;

	ck_assert_msg(rk != NULL, "admin client: %s", err);
	q = rd_kafka_queue_new(rk);
	if (create) {
		rd_kafka_NewTopic_t *t = rd_kafka_NewTopic_new(topic, 1, 1, err, sizeof(err));

		ck_assert_msg(t != NULL, "%s", err);
		ck_assert_int_eq(rd_kafka_NewTopic_set_config(t, key, value), 0);
		rd_kafka_CreateTopics(rk, &t, 1, NULL, q);
		admin_wait(rk, q, RD_KAFKA_EVENT_CREATETOPICS_RESULT, "CreateTopics");
		rd_kafka_NewTopic_destroy(t);
	} else {
		rd_kafka_ConfigResource_t *c =
			rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic);

		ck_assert_int_eq(rd_kafka_ConfigResource_set_config(c, key, value), 0);
		rd_kafka_AlterConfigs(rk, &c, 1, NULL, q);
		admin_wait(rk, q, RD_KAFKA_EVENT_ALTERCONFIGS_RESULT, "AlterConfigs");
		rd_kafka_ConfigResource_destroy(c);
	}
	rd_kafka_queue_destroy(q);
	rd_kafka_destroy(rk);
}

/* Sets NAME to VALUE from one `export NAME=VALUE` line, VALUE maybe in single quotes. */
static void
export_line(char *line)
{
	char *eq, *v, *end;

	if (strncmp(line, "export ", 7) != 0 || !(eq = strchr(line + 7, '='))) {
		return;
	}
	*eq = '\0';
	v = eq + 1;
	end = v + strcspn(v, "\n");
	*end = '\0';
	if (*v == '\'' && end > v + 1 && end[-1] == '\'') {
		*--end = '\0';
		v++;
	}
	setenv(line + 7, v, 1);
}

bool
itest_stack_up(const char *part)
{
	const char *src = getenv("OUTBOXD_TEST_SOURCE_DIR"),
		   *dir = getenv("OUTBOXD_TEST_STACK_DIR");
	struct buf cmd = BUF_INIT;
	char line[4096];
	FILE *in;
	int rc;

	if (!src || !dir) {
		fprintf(stderr,
			"OUTBOXD_TEST_SOURCE_DIR or OUTBOXD_TEST_STACK_DIR is not set: run "
			"scripts/test, or eval \"$(scripts/stack up)\" before meson test\n");
		return false;
	}
	buf_add_fmt(&cmd, "'%s/scripts/stack' --dir '%s' %s up", src, dir, part);
	in = popen(buf_cstr(&cmd), "r");
	if (!in) {
		perror("popen");
		buf_fini(&cmd);
		return false;
	}
	while (fgets(line, sizeof(line), in)) {
		export_line(line);
	}
	rc = pclose(in);
	if (rc != 0) {
		fprintf(stderr, "%s failed (status %d)\n", buf_cstr(&cmd), rc);
	}
	buf_fini(&cmd);
	return rc == 0;
}

int
itest_kafka_pid(void)
{
	struct buf path = BUF_INIT;
	FILE *in;
	int pid = 0;

	buf_add_fmt(&path, "%s/kafka/pid", itest_env("OUTBOXD_TEST_STACK_DIR"));
	in = fopen(buf_cstr(&path), "r");
	ck_assert_msg(in != NULL, "no broker pid file at %s", buf_cstr(&path));
	ck_assert_int_eq(fscanf(in, "%d", &pid), 1);
	fclose(in);
	buf_fini(&path);
	return pid;
}

/* Whether @port binds on 127.0.0.1 and on :: (dual stack), the addresses outboxd binds. */
static bool
port_bindable(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons((uint16_t)port),
				   .sin6_addr = IN6ADDR_ANY_INIT };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	bool ok;

	ck_assert_int_ge(fd, 0);
	ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	if (!ok)
		return false;
	fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (fd < 0)
		return true; /* no IPv6 here: 127.0.0.1 is all there is */
	ok = bind(fd, (struct sockaddr *)&a6, sizeof(a6)) == 0;
	close(fd);
	return ok;
}

/*
 * A random port below the ephemeral range, never port 0's answer: the kernel hands ephemeral
 * ports to every outgoing connection on the machine too, so one could be taken between this
 * check and the server's bind (tests/freeport.py, the same rule for the Python tests).
 */
int
itest_free_port(void)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	int low = 32768, lo, hi;
	unsigned int seed = (unsigned int)getpid() ^ (unsigned int)time(NULL);
	struct timespec ts;

	if (f) {
		if (fscanf(f, "%d", &low) != 1)
			low = 32768;
		fclose(f);
	}
	hi = (low > 65536 ? 65536 : low) - 1;
	lo = hi > 12000 ? 10000 : 1024;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	seed ^= (unsigned int)ts.tv_nsec;
	for (int i = 0; i < 200; i++) {
		int p = lo + (int)(rand_r(&seed) % (unsigned int)(hi - lo + 1));

		if (port_bindable(p))
			return p;
	}
	ck_abort_msg("no free TCP port in %d-%d after 200 tries", lo, hi);
	return -1;
}

int
itest_http_get(int port, const char *path, char **ret_body)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	/* The server answers from another process: wait for it, but not forever. */
	struct timeval tv = { .tv_sec = 10 };
	struct buf req = BUF_INIT, resp = BUF_INIT;
	char chunk[4096];
	const char *body;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0), code = -1;

	if (ret_body) {
		*ret_body = NULL;
	}
	if (fd >= 0) {
		ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	}
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		if (fd >= 0) {
			close(fd);
		}
		return -1;
	}
	buf_add_fmt(&req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
	if (write(fd, req.data, req.len) == (ssize_t)req.len) {
		while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
			buf_add(&resp, chunk, (size_t)n);
		}
	}
	close(fd);
	if (sscanf(buf_cstr(&resp), "HTTP/%*s %d", &code) != 1) {
		code = -1;
	}
	body = strstr(buf_cstr(&resp), "\r\n\r\n");
	if (ret_body && body) {
		*ret_body = xstrdup(body + 4);
	}
	buf_fini(&req);
	buf_fini(&resp);
	return code;
}

int
itest_http_wait(int port, const char *path, int want, int timeout_s, char **ret_body)
{
	int code = -1;

	if (ret_body) {
		*ret_body = NULL;
	}
	for (int i = 0; i < timeout_s * 10; i++) {
		char *body = NULL;

		code = itest_http_get(port, path, &body);
		if (code == want) {
			if (ret_body) {
				*ret_body = body;
			} else {
				free(body);
			}
			return code;
		}
		free(body);
		usleep(100 * 1000);
	}
	return code;
}

double
itest_metric(const char *body, const char *name)
{
	const char *p = body;
	size_t len = strlen(name);

	while ((p = strstr(p, name)) != NULL) {
		if ((p == body || p[-1] == '\n') && p[len] == ' ') {
			return strtod(p + len + 1, NULL);
		}
		p += len;
	}
	return -1;
}

bool
itest_wait_metric(int port, const char *name, double want, int timeout_s)
{
	for (int i = 0; i < timeout_s * 10; i++) {
		char *body = NULL;
		bool ok = itest_http_get(port, "/metrics", &body) == 200 &&
			  itest_metric(body, name) == want;

		free(body);
		if (ok) {
			return true;
		}
		usleep(100 * 1000);
	}
	return false;
}
