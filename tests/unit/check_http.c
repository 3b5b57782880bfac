/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "outboxd/obs/http.h"
#include "outboxd/obs/metrics.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/now.h"

/* One HTTP exchange, as a client sees it. */
struct reply {
	struct buf raw;	    /* everything the server sent */
	char *head;	    /* owned: status line and headers, each ending in CRLF */
	const char *status; /* the status line: @head up to its first CR */
	const char *body;   /* after the blank line, in @raw */
};

/* Connects to 127.0.0.1:@port. Return: the socket, or -errno. */
static int
connect_local(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { .tv_sec = 10 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

/* Sends @request as is and reads until the server closes. */
static void
exchange(int port, const char *request, struct reply *r)
{
	int fd = connect_local(port);
	size_t off = 0, len = strlen(request);
	char chunk[4096];
	char *sep;
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	while (off < len) {
		n = send(fd, request + off, len - off, MSG_NOSIGNAL);
		ck_assert_int_gt(n, 0);
		off += (size_t)n;
	}
	r->raw = BUF_INIT;
	while ((n = recv(fd, chunk, sizeof(chunk), 0)) > 0) {
		buf_add(&r->raw, chunk, (size_t)n);
	}
	ck_assert_msg(n == 0, "recv: %s", strerror(errno));
	close(fd);

	sep = strstr(buf_cstr(&r->raw), "\r\n\r\n");
	ck_assert_msg(sep != NULL, "no header end in: %s", buf_cstr(&r->raw));
	r->head = strndup(r->raw.data, (size_t)(sep - r->raw.data) + 2);
	r->body = sep + 4;
	r->status = r->head;
}

static void
reply_fini(struct reply *r)
{
	buf_fini(&r->raw);
	free(r->head);
}

/* The status line of @r (up to CRLF), compared whole. */
static void
assert_status(const struct reply *r, const char *line)
{
	size_t n = strcspn(r->status, "\r");

	ck_assert_msg(n == strlen(line) && strncmp(r->status, line, n) == 0,
		      "status line %.*s, want %s", (int)n, r->status, line);
}

/* A header line "Name: value" (case-insensitive name) is present in @r. */
static void
assert_header(const struct reply *r, const char *name, const char *value)
{
	size_t nl = strlen(name);

	for (const char *p = strstr(r->head, "\r\n"); p; p = strstr(p + 2, "\r\n")) {
		const char *h = p + 2;

		if (strncasecmp(h, name, nl) == 0 && h[nl] == ':') {
			h += nl + 1;
			h += strspn(h, " ");
			if (strncmp(h, value, strlen(value)) == 0 && h[strlen(value)] == '\r') {
				return;
			}
		}
	}
	ck_abort_msg("no header %s: %s in\n%s", name, value, r->head);
}

static struct metrics *m;
static struct http *h;
static int port;

static void
setup(void)
{
	char err[256] = "";

	m = metrics_new();
	ck_assert_int_eq(http_start("127.0.0.1", 0, NULL, m, &h, err, sizeof(err)), 0);
	port = http_port(h);
	ck_assert_int_gt(port, 0);
}

static void
teardown(void)
{
	http_stop(h);
	h = NULL;
	metrics_free(m);
	m = NULL;
}

START_TEST(test_metrics_path_serves_prometheus_text)
{
	struct reply r;

	metrics_count(m, METRICS_RECORDS_PUBLISHED, 12);
	metrics_set_state(m, METRICS_STATE_STREAMING, NULL);
	exchange(port, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", &r);
	assert_status(&r, "HTTP/1.1 200 OK");
	assert_header(&r, "Content-Type", "text/plain; version=0.0.4");
	ck_assert_ptr_nonnull(strstr(r.body, "# TYPE outboxd_records_published_total counter\n"
					     "outboxd_records_published_total 12\n"));
	ck_assert_ptr_nonnull(strstr(r.body, "\noutboxd_state{state=\"streaming\"} 1\n"));
	reply_fini(&r);
}
END_TEST

START_TEST(test_health_is_200_only_while_streaming_with_the_state_as_json)
{
	struct reply r;

	exchange(port, "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", &r);
	assert_status(&r, "HTTP/1.1 503 Service Unavailable");
	assert_header(&r, "Content-Type", "application/json");
	ck_assert_str_eq(r.body, "{\"status\":\"starting\",\"stalled\":false,\"reason\":null}");
	reply_fini(&r);

	/* libmicrohttpd answers an HTTP/1.0 request with an HTTP/1.1 status line. */
	metrics_set_state(m, METRICS_STATE_STREAMING, NULL);
	exchange(port, "GET /health HTTP/1.0\r\n\r\n", &r);
	assert_status(&r, "HTTP/1.1 200 OK");
	ck_assert_str_eq(r.body, "{\"status\":\"streaming\",\"stalled\":false,\"reason\":null}");
	reply_fini(&r);

	/* the reason is a code: the row's id and the SQL text are for the log alone */
	metrics_halted(m, METRICS_HALT_POISON_ROW, "poison row \"7\"\nDETAIL:  Key (id)=(7)");
	exchange(port, "GET /health HTTP/1.0\r\n\r\n", &r);
	assert_status(&r, "HTTP/1.1 503 Service Unavailable");
	ck_assert_str_eq(r.body, "{\"status\":\"halted\",\"stalled\":false,"
				 "\"reason\":\"poison_row\"}");
	reply_fini(&r);

	/* readiness is /health; liveness is not about the state: halted is alive */
	exchange(port, "GET /health/ready HTTP/1.0\r\n\r\n", &r);
	assert_status(&r, "HTTP/1.1 503 Service Unavailable");
	ck_assert_str_eq(r.body, "{\"status\":\"halted\",\"stalled\":false,"
				 "\"reason\":\"poison_row\"}");
	reply_fini(&r);
	metrics_loop_turned(m);
	exchange(port, "GET /health/live HTTP/1.0\r\n\r\n", &r);
	assert_status(&r, "HTTP/1.1 200 OK");
	assert_header(&r, "Content-Type", "application/json");
	ck_assert_msg(strncmp(r.body, "{\"status\":\"live\",", 17) == 0, "%s", r.body);
	reply_fini(&r);
}
END_TEST

START_TEST(test_other_paths_are_404_even_with_a_trailing_slash)
{
	struct reply r;

	exchange(port, "GET /nope HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", &r);
	assert_status(&r, "HTTP/1.1 404 Not Found");
	ck_assert_str_eq(r.body, "not found\n");
	reply_fini(&r);

	exchange(port, "GET /metrics/ HTTP/1.0\r\n\r\n", &r);
	assert_status(&r, "HTTP/1.1 404 Not Found");
	reply_fini(&r);
}
END_TEST

START_TEST(test_methods_other_than_get_and_head_are_405_with_allow)
{
	struct reply r;

	exchange(port,
		 "POST /metrics HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n"
		 "Connection: close\r\n\r\nhello",
		 &r);
	assert_status(&r, "HTTP/1.1 405 Method Not Allowed");
	assert_header(&r, "Allow", "GET, HEAD");
	ck_assert_str_eq(r.body, "method not allowed\n");
	reply_fini(&r);

	exchange(port, "DELETE /health HTTP/1.0\r\n\r\n", &r);
	assert_status(&r, "HTTP/1.1 405 Method Not Allowed");
	reply_fini(&r);
}
END_TEST

START_TEST(test_head_answers_the_headers_without_a_body)
{
	struct reply r;

	metrics_set_state(m, METRICS_STATE_STREAMING, NULL);
	exchange(port, "HEAD /health HTTP/1.0\r\n\r\n", &r);
	assert_status(&r, "HTTP/1.1 200 OK");
	assert_header(&r, "Content-Type", "application/json");
	ck_assert_str_eq(r.body, "");
	reply_fini(&r);
}
END_TEST

START_TEST(test_port_in_use_is_eaddrinuse_naming_the_setting)
{
	struct http *other = (struct http *)0x1;
	char err[256] = "";
	char want[32];

	ck_assert_int_eq(http_start("127.0.0.1", port, NULL, m, &other, err, sizeof(err)),
			 -EADDRINUSE);
	ck_assert_ptr_eq(other, (struct http *)0x1); /* untouched on failure */
	snprintf(want, sizeof(want), "port %d", port);
	ck_assert_msg(strstr(err, want) != NULL, "%s", err);
	ck_assert_msg(strstr(err, "outboxd.http.port") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "0 disables") != NULL, "%s", err);

	/* All addresses overlap the loopback one. */
	ck_assert_int_eq(http_start(NULL, port, NULL, m, &other, err, sizeof(err)), -EADDRINUSE);
	ck_assert_int_eq(http_start(NULL, port, NULL, m, &other, NULL, 0), -EADDRINUSE);
}
END_TEST

START_TEST(test_host_name_or_out_of_range_port_is_einval)
{
	struct http *other = NULL;
	char err[256] = "";

	ck_assert_int_eq(http_start("localhost", 0, NULL, m, &other, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "localhost"));
	ck_assert_msg(strstr(err, "outboxd.http.bind") != NULL, "%s", err);
	ck_assert_int_eq(http_start("127.0.0.1", 65536, NULL, m, &other, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "outboxd.http.port"));
	ck_assert_int_eq(http_start("127.0.0.1", -1, NULL, m, &other, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(other);
}
END_TEST

START_TEST(test_stop_closes_socket)
{
	struct metrics *m2 = metrics_new();
	struct http *h2 = NULL;
	char err[256] = "";
	int p2, fd;

	ck_assert_int_eq(http_start("127.0.0.1", 0, NULL, m2, &h2, err, sizeof(err)), 0);
	p2 = http_port(h2);
	http_stop(h2);
	fd = connect_local(p2);
	ck_assert_int_eq(fd, -ECONNREFUSED);
	/* The port is free again at once. */
	ck_assert_int_eq(http_start("127.0.0.1", p2, NULL, m2, &h2, err, sizeof(err)), 0);
	ck_assert_int_eq(http_port(h2), p2);
	http_stop(h2);
	http_stop(NULL);
	metrics_free(m2);
}
END_TEST

START_TEST(test_ipv6_loopback_is_served_where_the_host_has_ipv6)
{
	struct http *h6 = NULL;
	char err[256] = "";
	int rc = http_start("::1", 0, NULL, m, &h6, err, sizeof(err));

	/* Containers without IPv6 refuse the address; anything else must work. */
	if (rc == -EADDRNOTAVAIL || rc == -EAFNOSUPPORT) {
		return;
	}
	ck_assert_msg(rc == 0, "%d %s", rc, err);
	ck_assert_int_gt(http_port(h6), 0);
	http_stop(h6);
}
END_TEST

/*
 * Connects from @from (a loopback address: 127.0.0.2 is another client than 127.0.0.1; "::1"
 * connects to ::1) to the loopback address of its family, port @to_port, with sends and receives
 * bounded by @wait_ms. Return: the socket, or -errno (-EADDRNOTAVAIL: a host without IPv6).
 */
static int
connect_from(const char *from, int to_port, int wait_ms)
{
	struct sockaddr_in6 src6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in6 dst6 = { .sin6_family = AF_INET6,
				     .sin6_port = htons((uint16_t)to_port),
				     .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons((uint16_t)to_port) };
	struct timeval tv = { .tv_sec = wait_ms / 1000, .tv_usec = (wait_ms % 1000) * 1000 };
	bool v6 = strchr(from, ':') != NULL;
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
	int err;

	if (fd < 0 && v6) {
		return -EADDRNOTAVAIL;
	}
	ck_assert_int_ge(fd, 0);
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(v6 ? inet_pton(AF_INET6, from, &src6.sin6_addr) :
			      inet_pton(AF_INET, from, &src.sin_addr),
			 1);
	if (v6 ? bind(fd, (struct sockaddr *)&src6, sizeof(src6)) :
		 bind(fd, (struct sockaddr *)&src, sizeof(src))) {
		err = errno;
		close(fd);
		ck_assert_msg(v6, "bind to %s: %s", from, strerror(err));
		return -EADDRNOTAVAIL;
	}
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)), 0);
	if (v6 ? connect(fd, (struct sockaddr *)&dst6, sizeof(dst6)) :
		 connect(fd, (struct sockaddr *)&dst, sizeof(dst))) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

/*
 * GET /health/live from @from, everything within @wait_ms (each receive bounded by it, the
 * whole by twice that at most). Return: the status line's code, or 0 when the server closed or
 * the time ran out before one came.
 */
static int
probe(const char *from, int to_port, int wait_ms)
{
	static const char req[] =
		"GET /health/live HTTP/1.1\r\nHost: p\r\nConnection: close\r\n\r\n";
	int fd = connect_from(from, to_port, wait_ms);
	int64_t until = now_monotonic_us() + (int64_t)wait_ms * 1000;
	char got[512];
	size_t len = 0;
	int code = 0;
	ssize_t n;

	if (fd < 0) {
		return 0;
	}
	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1) {
		close(fd);
		return 0;
	}
	while (len < sizeof(got) - 1 && now_monotonic_us() < until &&
	       (n = recv(fd, got + len, sizeof(got) - 1 - len, 0)) > 0) {
		len += (size_t)n;
		got[len] = '\0';
		if (sscanf(got, "HTTP/1.1 %d ", &code) == 1) {
			break;
		}
	}
	close(fd);
	return code;
}

/*
 * A slow client from @from: a well-formed request up to a header's value, the rest to be
 * trickled. (The whole start at once: libmicrohttpd 1.0 closes a request line that starts with
 * a space, so a client that trickled its request line from a space was no slow client there.)
 * Return: the socket (perhaps closed by the server already: trickle() says), or -errno.
 */
static int
slow_from(const char *from, int to_port)
{
	static const char start[] = "GET /metrics HTTP/1.1\r\nHost: s\r\nX-Slow: ";
	int fd = connect_from(from, to_port, 200);

	if (fd >= 0) {
		(void)send(fd, start, sizeof(start) - 1, MSG_NOSIGNAL);
	}
	return fd;
}

/* The server has not closed @fd (poll says nothing to read: no end of stream, no reset). */
static bool
held_open(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return fd >= 0 && poll(&p, 1, 0) == 0;
}

/* Sends one more byte of a slow client's endless header value; false once the server has cut it. */
static bool
trickle(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char b;

	if (send(fd, "a", 1, MSG_NOSIGNAL) != 1) {
		return false;
	}
	/* readable means the server's end: nothing here ever completes a request */
	if (poll(&p, 1, 0) == 1) {
		return recv(fd, &b, 1, MSG_DONTWAIT) > 0;
	}
	return true;
}

/* How many of @fds the server still holds open, all of them or those from @n at @first. */
static int
count_held(const int *fds, int first, int n)
{
	int held = 0;

	for (int i = first; i < first + n; i++) {
		held += held_open(fds[i]);
	}
	return held;
}

/* Trickles a byte on each of @fds the server still holds. */
static void
trickle_all(const int *fds, int n)
{
	for (int i = 0; i < n; i++) {
		(void)(fds[i] >= 0 && trickle(fds[i]));
	}
}

static void
close_all(const int *fds, int n)
{
	for (int i = 0; i < n; i++) {
		if (fds[i] >= 0) {
			close(fds[i]);
		}
	}
}

/*
 * A probe from @from is refused at once: closed without a status line, well before the 2 s
 * it is given (a connection held open would time out instead).
 */
static void
assert_refused(const char *from, int to_port)
{
	int64_t t0 = now_monotonic_us();
	int code = probe(from, to_port, 2000);
	int64_t ms = (now_monotonic_us() - t0) / 1000;

	ck_assert_msg(code == 0 && ms < 1000, "a probe from %s got %d after %lld ms, not refused",
		      from, code, (long long)ms);
}

/*
 * Twenty-four clients trickling bytes from one address hold eight connections, never more: the
 * others are refused at once, so is a probe from that address while they hold their eight, and a
 * probe from another address answers within 1 s. (Sixteen such connections used to take every
 * connection the endpoint had, and the kubelet's probes failed.)
 */
START_TEST(test_slow_clients_on_one_address_never_delay_a_probe_from_another)
{
	enum { SLOW = 24 };
	int fds[SLOW];
	int code;

	for (int i = 0; i < SLOW; i++) {
		fds[i] = slow_from("127.0.0.1", port);
	}
	for (int round = 0; round < 3; round++) {
		code = probe("127.0.0.2", port, 1000);
		ck_assert_msg(code == 200, "round %d: the probe from 127.0.0.2 got %d within 1 s",
			      round, code);
		trickle_all(fds, SLOW);
	}
	/* the kernel queues accepts in order: all 24 were taken or refused before the probe */
	ck_assert_int_eq(count_held(fds, 0, SLOW), 8);
	assert_refused("127.0.0.1", port);
	close_all(fds, SLOW);
}
END_TEST

/*
 * Eighty slow clients, eight from each of ten addresses, are more than the 64 connections the
 * endpoint holds: a probe from an eleventh address still answers within 1 s (it takes the place
 * of the oldest connection of an address holding the most), and no address holds more than 8.
 * (The first 64 used to take every place until the deadline cut them.)
 */
START_TEST(test_more_slow_clients_than_places_never_delay_a_probe_from_a_fresh_address)
{
	enum { ADDRS = 10, EACH = 8 };
	int fds[ADDRS * EACH];
	char from[16];
	int code, held = 0;

	for (int a = 0; a < ADDRS; a++) {
		snprintf(from, sizeof(from), "127.0.0.%d", 10 + a);
		for (int i = 0; i < EACH; i++) {
			fds[a * EACH + i] = slow_from(from, port);
		}
		/* its share, full or not; the refusal also paces the connections to the server */
		assert_refused(from, port);
	}
	for (int round = 0; round < 3; round++) {
		code = probe("127.0.0.2", port, 1000);
		ck_assert_msg(code == 200, "round %d: the probe from 127.0.0.2 got %d within 1 s",
			      round, code);
		trickle_all(fds, ADDRS * EACH);
	}
	for (int a = 0; a < ADDRS; a++) {
		int n = count_held(fds, a * EACH, EACH);

		ck_assert_int_le(n, 8);
		held += n;
	}
	ck_assert_int_le(held, 64);
	ck_assert_int_ge(held, 56); /* the places probes took, not more, were made */
	close_all(fds, ADDRS * EACH);
}
END_TEST

/*
 * Every way a connection ends gives its place back: the client's close before any request, an
 * answered request, the deadline's cut, and the cut that makes room for another client. After
 * two hundred of them one address still gets its eight, and a ninth is refused.
 */
START_TEST(test_every_way_a_connection_ends_gives_its_place_back)
{
	const struct http_limits lim = { 8, 8, 400 };
	struct http *h2 = NULL;
	char err[256] = "";
	int fds[12], p2, fd, left;
	int64_t t0;

	ck_assert_int_eq(http_start("127.0.0.1", 0, &lim, m, &h2, err, sizeof(err)), 0);
	p2 = http_port(h2);
	/* three closes to an answered request: the answer paces them to the server's thread */
	for (int i = 0; i < 50; i++) {
		for (int j = 0; j < 3; j++) {
			fd = connect_from("127.0.0.1", p2, 1000);
			ck_assert_int_ge(fd, 0);
			close(fd);
		}
		ck_assert_int_eq(probe("127.0.0.1", p2, 1000), 200);
	}
	/* eight slow from .1, then four from .3 take places from them: the endpoint holds eight */
	for (int i = 0; i < 12; i++) {
		fds[i] = slow_from(i < 8 ? "127.0.0.1" : "127.0.0.3", p2);
	}
	ck_assert_int_eq(probe("127.0.0.4", p2, 1000), 200);
	ck_assert_int_eq(count_held(fds, 0, 8), 3);
	ck_assert_int_eq(count_held(fds, 8, 4), 4);
	/* the rest reach the 400 ms deadline; bounded by 2 s */
	t0 = now_monotonic_us();
	do {
		usleep(50 * 1000);
		trickle_all(fds, 12);
		left = count_held(fds, 0, 12);
	} while (left > 0 && now_monotonic_us() - t0 < 2000000);
	ck_assert_int_eq(left, 0);
	close_all(fds, 12);

	for (int i = 0; i < 8; i++) {
		fds[i] = slow_from("127.0.0.1", p2);
	}
	assert_refused("127.0.0.1", p2);
	ck_assert_int_eq(count_held(fds, 0, 8), 8);
	close_all(fds, 8);
	http_stop(h2);
}
END_TEST

/*
 * A request must be answered within its deadline from the accept: a client that keeps a
 * connection busy with a byte every 50 ms is cut once the deadline passes. (It used to keep it
 * as long as it kept trickling: only silence for 10 s ended a connection.)
 */
START_TEST(test_a_request_trickled_past_its_deadline_is_cut)
{
	const struct http_limits lim = { 64, 8, 500 };
	struct http *h2 = NULL;
	char err[256] = "";
	int64_t t0, took = -1;
	int fd;

	ck_assert_int_eq(http_start("127.0.0.1", 0, &lim, m, &h2, err, sizeof(err)), 0);
	fd = slow_from("127.0.0.1", http_port(h2));
	ck_assert_int_ge(fd, 0);
	t0 = now_monotonic_us();
	/* bounded: 3 s of trickling, six times the deadline (Check's own limit is 4 s) */
	while (now_monotonic_us() - t0 < 3000000) {
		if (!trickle(fd)) {
			took = now_monotonic_us() - t0;
			break;
		}
		usleep(50 * 1000);
	}
	close(fd);
	ck_assert_msg(took >= 0, "a trickling client still held its connection after 3 s");
	ck_assert_msg(took >= 400000, "cut after %lld ms, before the 500 ms deadline",
		      (long long)(took / 1000));
	/* the server goes on: a prompt request on a new connection is answered */
	ck_assert_int_eq(probe("127.0.0.1", http_port(h2), 1000), 200);
	http_stop(h2);
}
END_TEST

/*
 * "::" is every address of both families: an IPv4 client reaches it (IPV6_V6ONLY off); on a host
 * without IPv6 every address is an IPv4 one, and it listens on 0.0.0.0.
 */
START_TEST(test_bind_any_ipv6_also_serves_ipv4)
{
	struct http *h6 = NULL;
	char err[256] = "";
	int rc = http_start("::", 0, NULL, m, &h6, err, sizeof(err));

	ck_assert_msg(rc == 0, "%d %s", rc, err);
	ck_assert_int_eq(probe("127.0.0.1", http_port(h6), 1000), 200);
	http_stop(h6);
}
END_TEST

/*
 * On "::" an IPv4 client arrives as an IPv4-mapped IPv6 address and is still one client: eight
 * slow connections from 127.0.0.1 are its share, a ninth is refused, and probes from 127.0.0.2
 * and (where the host has IPv6) ::1 answer within 1 s.
 */
START_TEST(test_on_every_address_the_per_client_limit_holds_for_each_family)
{
	struct http *h6 = NULL;
	char err[256] = "";
	int fds[8], p6, code;

	ck_assert_int_eq(http_start("::", 0, NULL, m, &h6, err, sizeof(err)), 0);
	p6 = http_port(h6);
	for (int i = 0; i < 8; i++) {
		fds[i] = slow_from("127.0.0.1", p6);
	}
	assert_refused("127.0.0.1", p6);
	ck_assert_int_eq(count_held(fds, 0, 8), 8);
	ck_assert_int_eq(probe("127.0.0.2", p6, 1000), 200);
	code = probe("::1", p6, 1000);
	ck_assert_msg(code == 200 || connect_from("::1", p6, 1000) == -EADDRNOTAVAIL,
		      "the probe from ::1 got %d within 1 s", code);
	close_all(fds, 8);
	http_stop(h6);
}
END_TEST

static Suite *
http_suite(void)
{
	Suite *s = suite_create("http");
	TCase *serve = tcase_create("serve");
	TCase *start = tcase_create("start");

	tcase_add_checked_fixture(serve, setup, teardown);
	tcase_add_test(serve, test_metrics_path_serves_prometheus_text);
	tcase_add_test(serve, test_health_is_200_only_while_streaming_with_the_state_as_json);
	tcase_add_test(serve, test_other_paths_are_404_even_with_a_trailing_slash);
	tcase_add_test(serve, test_methods_other_than_get_and_head_are_405_with_allow);
	tcase_add_test(serve, test_head_answers_the_headers_without_a_body);
	tcase_add_test(serve, test_slow_clients_on_one_address_never_delay_a_probe_from_another);
	tcase_add_test(serve,
		       test_more_slow_clients_than_places_never_delay_a_probe_from_a_fresh_address);
	tcase_add_test(serve, test_every_way_a_connection_ends_gives_its_place_back);
	tcase_add_test(serve, test_a_request_trickled_past_its_deadline_is_cut);
	tcase_add_checked_fixture(start, setup, teardown);
	tcase_add_test(start, test_port_in_use_is_eaddrinuse_naming_the_setting);
	tcase_add_test(start, test_host_name_or_out_of_range_port_is_einval);
	tcase_add_test(start, test_stop_closes_socket);
	tcase_add_test(start, test_ipv6_loopback_is_served_where_the_host_has_ipv6);
	tcase_add_test(start, test_bind_any_ipv6_also_serves_ipv4);
	tcase_add_test(start, test_on_every_address_the_per_client_limit_holds_for_each_family);
	suite_add_tcase(s, serve);
	suite_add_tcase(s, start);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(http_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
