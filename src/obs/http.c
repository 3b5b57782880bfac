/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/obs/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "outboxd/obs/procstat.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"

#define MOD "http"

/* A scrape is small and local: a slow client must not hold a connection slot for long. */
#define CONNECTION_LIMIT     16
#define CONNECTION_TIMEOUT_S 10

struct http {
	struct MHD_Daemon *daemon;
	struct metrics *m; /* borrowed */
	int port;
};

static int fail(char *errbuf, size_t errlen, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Writes the reason to @errbuf (NULL allowed) and returns @err. */
static int
fail(char *errbuf, size_t errlen, int err, const char *fmt, ...)
{
	va_list ap;

	if (errbuf && errlen) {
		va_start(ap, fmt);
		vsnprintf(errbuf, errlen, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* libmicrohttpd's own messages (client errors, resource limits) go to debug. */
static void
on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct buf line = BUF_INIT;

	if (!log_enabled(LOG_DEBUG)) {
		return;
	}
	buf_add_vfmt(&line, fmt, ap);
	while (line.len && line.data[line.len - 1] == '\n') {
		line.data[--line.len] = '\0';
	}
	log_debug(MOD, "libmicrohttpd: %s", buf_cstr(&line));
	buf_fini(&line);
}

/* Queues @body (stolen) with @status and @content_type; the response owns the bytes. */
static enum MHD_Result
reply(struct MHD_Connection *conn, unsigned status, const char *content_type, struct buf *body)
{
	size_t len = body->len;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, buf_steal(body), MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		return MHD_NO;
	}
	/* Adding a header fails only for bad characters or OOM; the reply still goes out. */
	(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED) {
		(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	}
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
	   const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct http *h = cls;
	struct buf body = BUF_INIT;
	int status;

	/* Answered on the first call, before any request body: nothing here reads one. */
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		buf_add_str(&body, "method not allowed\n");
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", &body);
	}
	if (strcmp(url, "/metrics") == 0) {
		struct procstat ps;

		metrics_render(h->m, &body);
		if (procstat_read(&ps)) {
			procstat_render(&ps, &body);
		}
		return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4", &body);
	}
	/* /health/ready is /health: streaming and not stalled; /health/live: not wedged */
	if (strcmp(url, "/health") == 0 || strcmp(url, "/health/ready") == 0) {
		status = metrics_health(h->m, &body);
		return reply(conn, (unsigned)status, "application/json", &body);
	}
	if (strcmp(url, "/health/live") == 0) {
		status = metrics_liveness(h->m, &body);
		return reply(conn, (unsigned)status, "application/json", &body);
	}
	buf_add_str(&body, "not found\n");
	return reply(conn, MHD_HTTP_NOT_FOUND, "text/plain", &body);
}

/* Fills @ss from @bind_addr (NULL = 0.0.0.0) and @port. Return: its length, or 0 if invalid. */
static socklen_t
make_addr(const char *bind_addr, int port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (!bind_addr) {
		in4->sin_family = AF_INET;
		in4->sin_addr.s_addr = htonl(INADDR_ANY);
		in4->sin_port = htons((uint16_t)port);
		return sizeof(*in4);
	}
	if (inet_pton(AF_INET, bind_addr, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		return sizeof(*in4);
	}
	if (inet_pton(AF_INET6, bind_addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		return sizeof(*in6);
	}
	return 0;
}

/* The port a bound socket got (port 0 lets the kernel choose). Return: it, or -errno. */
static int
bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		return -errno;
	}
	if (ss.ss_family == AF_INET6) {
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/*
 * The listening socket is made here rather than by libmicrohttpd so a taken port comes back as
 * EADDRINUSE (MHD_start_daemon only returns NULL) and port 0 can be read back.
 * Return: the socket, or -errno with the reason in @errbuf.
 */
static int
listen_on(const char *bind_addr, int port, char *errbuf, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len = make_addr(bind_addr, port, &ss);
	const char *shown = bind_addr ? bind_addr : "0.0.0.0";
	int one = 1;
	int fd, err;

	if (!len) {
		return fail(errbuf, errlen, -EINVAL,
			    "HTTP bind address \"%s\" is not a numeric IPv4 or IPv6 address",
			    bind_addr);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return fail(errbuf, errlen, -errno, "HTTP socket: %s", strerror(errno));
	}
	/* A restarted outboxd rebinds at once; Linux still refuses a port someone listens on. */
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
		err = errno;
		close(fd);
		if (err == EADDRINUSE) {
			return fail(errbuf, errlen, -EADDRINUSE,
				    "HTTP port %d on %s is already in use; set outboxd.http.port "
				    "to a free port (0 disables the HTTP endpoint)",
				    port, shown);
		}
		return fail(errbuf, errlen, -err, "HTTP bind to %s port %d: %s", shown, port,
			    strerror(err));
	}
	if (listen(fd, 16) < 0) {
		err = errno;
		close(fd);
		return fail(errbuf, errlen, -err, "HTTP listen on %s port %d: %s", shown, port,
			    strerror(err));
	}
	return fd;
}

int
http_start(const char *bind_addr, int port, struct metrics *m, struct http **ret, char *errbuf,
	   size_t errlen)
{
	struct http *h;
	int fd, bound;

	if (port < 0 || port > 65535 || !m) {
		return fail(errbuf, errlen, -EINVAL,
			    "HTTP port %d is out of range; set outboxd.http.port to 1-65535, or 0 "
			    "to disable the HTTP endpoint",
			    port);
	}
	fd = listen_on(bind_addr, port, errbuf, errlen);
	if (fd < 0) {
		return fd;
	}
	bound = bound_port(fd);
	if (bound < 0) {
		close(fd);
		return fail(errbuf, errlen, bound, "HTTP getsockname: %s", strerror(-bound));
	}
	h = znew(*h);
	h->m = m;
	h->port = bound;
	/* MHD_stop_daemon() closes the listening socket it was given. */
	h->daemon = MHD_start_daemon(
		MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, h,
		MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTION_LIMIT,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_END);
	if (!h->daemon) {
		/*
		 * Not closed here: 0.9.75 closes the socket on some of its failure paths and not
		 * on others, and a double close could hit a descriptor another thread just got.
		 */
		free(h);
		return fail(errbuf, errlen, -EIO, "HTTP server on port %d did not start", bound);
	}
	log_debug(MOD, "serving /metrics and /health on %s port %d",
		  bind_addr ? bind_addr : "0.0.0.0", bound);
	*ret = h;
	return 0;
}

int
http_port(const struct http *h)
{
	return h->port;
}

void
http_stop(struct http *h)
{
	if (!h) {
		return;
	}
	MHD_stop_daemon(h->daemon);
	free(h);
}
