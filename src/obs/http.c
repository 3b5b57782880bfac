/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/obs/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "outboxd/obs/http_clients.h"
#include "outboxd/obs/procstat.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/log.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/now.h"

#define MOD "http"

const struct http_limits http_limits_default = { 64, 8, 5000 };

struct http {
	struct MHD_Daemon *daemon;
	struct metrics *m; /* borrowed */
	int port;
	int64_t request_us;
	unsigned per_client, connections; /* http_limits' */
	/* the deadline's reaper: a thread of its own, since libmicrohttpd has no per-request timer */
	pthread_t reaper;
	bool reaper_started;
	pthread_mutex_t lock; /* guards what follows */
	pthread_cond_t wake;
	bool stopping;
	struct http_conn *conns; /* every open connection, newest first */
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
	/* one request per connection: the deadline from the accept is then the request's */
	(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
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

/*
 * Whether a client may connect (libmicrohttpd's accept policy): the per-client limit and the fair
 * share of a full endpoint (http_clients.h), counted here rather than by libmicrohttpd so that
 * making room for a newcomer is possible at all. Called on libmicrohttpd's one thread, just before
 * it reports the same connection's start (on_connection()) and before any other accept: so what
 * is counted here is what on_connection() then adds. A thread pool (several accepting threads)
 * would break that.
 */
static enum MHD_Result
on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	struct http *h = cls;
	struct http_conn *victim = NULL;
	struct http_client who;
	char shown[INET6_ADDRSTRLEN];
	unsigned held;
	bool ok;

	http_client_from(addr, addrlen, &who);
	pthread_mutex_lock(&h->lock);
	ok = http_clients_admit(h->conns, &who, h->per_client, h->connections, &victim);
	held = http_clients_held(h->conns, &who);
	if (victim) {
		/* as the reaper does: libmicrohttpd sees the end of the stream and closes it */
		(void)shutdown(victim->fd, SHUT_RDWR);
		victim->cut = true;
	}
	pthread_mutex_unlock(&h->lock);
	if (!ok || victim) {
		http_client_format(&who, shown, sizeof(shown));
		if (!ok) {
			log_debug(MOD,
				  "a connection from %s refused: it holds %u of %u per client%s",
				  shown, held, h->per_client,
				  held < h->per_client ? ", and every place is taken" : "");
		} else {
			log_debug(
				MOD,
				"every place is taken: the oldest connection of the client holding "
				"the most was closed for one from %s",
				shown);
		}
	}
	return ok ? MHD_YES : MHD_NO;
}

/* A connection opens (its deadline starts) or closes (before libmicrohttpd closes its socket). */
static void
on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
	      enum MHD_ConnectionNotificationCode toe)
{
	struct http *h = cls;
	struct http_conn *c = *socket_context;
	const union MHD_ConnectionInfo *info;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		/*
		 * One answer at a time: libmicrohttpd 1.0 writes every answer to the same union, so
		 * each is copied out before the next question.
		 */
		info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!info) {
			return;
		}
		c = znew(*c);
		c->fd = info->connect_fd;
		info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		/* the length libmicrohttpd does not give back is the family's, as it accepted it */
		if (info && info->client_addr) {
			http_client_from(info->client_addr,
					 info->client_addr->sa_family == AF_INET6 ?
						 sizeof(struct sockaddr_in6) :
						 sizeof(struct sockaddr_in),
					 &c->who);
		}
		c->due_us = now_monotonic_us() + h->request_us;
		pthread_mutex_lock(&h->lock);
		c->next = h->conns;
		if (h->conns) {
			h->conns->prev = c;
		}
		h->conns = c;
		/* the reaper may sleep until a later deadline, or for want of any */
		pthread_cond_signal(&h->wake);
		pthread_mutex_unlock(&h->lock);
		*socket_context = c;
		return;
	}
	if (toe != MHD_CONNECTION_NOTIFY_CLOSED || !c) {
		return;
	}
	pthread_mutex_lock(&h->lock);
	if (c->prev) {
		c->prev->next = c->next;
	} else {
		h->conns = c->next;
	}
	if (c->next) {
		c->next->prev = c->prev;
	}
	pthread_mutex_unlock(&h->lock);
	free(c);
	*socket_context = NULL;
}

/*
 * Shuts down every connection past its deadline. The socket stays libmicrohttpd's: it sees
 * the end of the stream, closes the connection and tells on_connection(), which takes it off
 * the list under the same lock, so no descriptor here is ever one that was closed and reused.
 * Return: the earliest deadline still to come, or @now_us + the request time; *@cut counts
 * the connections shut down.
 */
static int64_t
reap(struct http *h, int64_t now_us, unsigned *cut)
{
	int64_t next = now_us + h->request_us;

	for (struct http_conn *c = h->conns; c; c = c->next) {
		if (c->cut) {
			continue;
		}
		if (c->due_us <= now_us) {
			(void)shutdown(c->fd, SHUT_RDWR);
			c->cut = true;
			(*cut)++;
		} else if (c->due_us < next) {
			next = c->due_us;
		}
	}
	return next;
}

static void *
reaper_main(void *arg)
{
	struct http *h = arg;

	pthread_mutex_lock(&h->lock);
	while (!h->stopping) {
		unsigned cut = 0;
		int64_t next = reap(h, now_monotonic_us(), &cut);
		struct timespec ts = { .tv_sec = (time_t)(next / 1000000),
				       .tv_nsec = (long)(next % 1000000) * 1000 };

		if (cut) {
			/* the log's output may block: never while accepts wait for the lock */
			pthread_mutex_unlock(&h->lock);
			log_debug(MOD,
				  "%u request(s) not complete within %lld ms; connection(s) closed",
				  cut, (long long)(h->request_us / 1000));
			pthread_mutex_lock(&h->lock);
			/* reaped again before sleeping: a stop or a start while unlocked is seen */
			continue;
		}
		/* the condition variable's clock is CLOCK_MONOTONIC, now_monotonic_us()'s */
		(void)pthread_cond_timedwait(&h->wake, &h->lock, &ts);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

/* The reaper's lock, its condition variable on the monotonic clock, and its thread. */
static int
reaper_start(struct http *h)
{
	pthread_condattr_t ca;
	int err;

	pthread_mutex_init(&h->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->wake, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&h->reaper, NULL, reaper_main, h);
	h->reaper_started = err == 0;
	return -err;
}

static void
reaper_stop(struct http *h)
{
	if (h->reaper_started) {
		pthread_mutex_lock(&h->lock);
		h->stopping = true;
		pthread_cond_signal(&h->wake);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->reaper, NULL);
	}
	/* libmicrohttpd reports every close before MHD_stop_daemon() returns; none is left */
	while (h->conns) {
		struct http_conn *c = h->conns;

		h->conns = c->next;
		free(c);
	}
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->lock);
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

/* A socket for @ss's family; "::" also takes IPv4 (the host's bindv6only may say otherwise). */
static int
make_socket(const struct sockaddr_storage *ss, const char *shown, char *errbuf, size_t errlen)
{
	static const struct in6_addr any6 = IN6ADDR_ANY_INIT;
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1, zero = 0;

	if (fd < 0) {
		return fail(errbuf, errlen, -errno, "HTTP socket for outboxd.http.bind=%s: %s%s",
			    shown, strerror(errno),
			    ss->ss_family == AF_INET6 ?
				    "; this host has no IPv6: set outboxd.http.bind=0.0.0.0" :
				    "");
	}
	/* A restarted outboxd rebinds at once; Linux still refuses a port someone listens on. */
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss->ss_family == AF_INET6 &&
	    memcmp(&((const struct sockaddr_in6 *)ss)->sin6_addr, &any6, sizeof(any6)) == 0 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0) {
		int err = errno;

		close(fd);
		return fail(errbuf, errlen, -err,
			    "HTTP outboxd.http.bind=:: cannot take IPv4 too (IPV6_V6ONLY: %s); set "
			    "outboxd.http.bind=0.0.0.0 for IPv4 alone",
			    strerror(err));
	}
	return fd;
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
	int fd, err;

	if (!len) {
		return fail(
			errbuf, errlen, -EINVAL,
			"outboxd.http.bind=\"%s\" is not a numeric IPv4 or IPv6 address; set it "
			"to 0.0.0.0 (every IPv4 address), :: (every address, IPv4 and IPv6), or "
			"one address of this host such as 127.0.0.1 or ::1",
			bind_addr);
	}
	fd = make_socket(&ss, shown, errbuf, errlen);
	if (fd == -EAFNOSUPPORT && bind_addr && strcmp(bind_addr, "::") == 0) {
		/*
		 * A kernel without IPv6 (ipv6.disable=1, as on some IPv4-only nodes): every address
		 * of this host is every IPv4 address, so "::" (the manifests' value) still starts.
		 */
		log_warn(MOD, "outboxd.http.bind=:: on a host without IPv6: listening on 0.0.0.0");
		shown = "0.0.0.0";
		len = make_addr(NULL, port, &ss);
		fd = make_socket(&ss, shown, errbuf, errlen);
	}
	if (fd < 0) {
		return fd;
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
		err = errno;
		close(fd);
		if (err == EADDRINUSE) {
			return fail(errbuf, errlen, -EADDRINUSE,
				    "HTTP port %d on %s is already in use; set outboxd.http.port "
				    "to a free port (0 disables the HTTP endpoint)",
				    port, shown);
		}
		return fail(errbuf, errlen, -err,
			    "HTTP bind to %s port %d: %s; set outboxd.http.bind to an address of "
			    "this host (0.0.0.0 or :: for every one)",
			    shown, port, strerror(err));
	}
	/*
	 * The kernel's own cap (net.core.somaxconn): a burst of connections that fills the accept
	 * queue drops a probe's SYN, which is sent again only after 1 s.
	 */
	if (listen(fd, SOMAXCONN) < 0) {
		err = errno;
		close(fd);
		return fail(errbuf, errlen, -err, "HTTP listen on %s port %d: %s", shown, port,
			    strerror(err));
	}
	return fd;
}

/*
 * libmicrohttpd on @fd (which it then owns) with @lim, on one internal thread (on_accept()
 * relies on it). Return: the daemon, or NULL.
 *
 * The limits are on_accept()'s. libmicrohttpd's own cap is twice ours: it checks it before
 * asking on_accept(), and counts a connection cut to make room until its thread has closed it,
 * so at our figure it would refuse the very newcomer room was made for. Its per-IP limit is not
 * set: a second count of the same limit, which frees a place only at the close, would refuse
 * clients on_accept() admits, and a cut connection's place could not go to another client.
 * (Its per-IP limit held with 0.9.75 and 1.0.1 alike; a test once seemed to say otherwise
 * because 1.0 closes a request line that starts with a space, which a slow client of the test
 * happened to send.)
 */
static struct MHD_Daemon *
serve(struct http *h, int fd, const struct http_limits *lim)
{
	/* the logger first: libmicrohttpd 1.0 logs the options before it to stderr */
	return MHD_start_daemon(
		MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, on_accept, h, on_request, h,
		MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL, MHD_OPTION_LISTEN_SOCKET, fd,
		MHD_OPTION_CONNECTION_LIMIT, 2 * lim->connections, MHD_OPTION_NOTIFY_CONNECTION,
		on_connection, h,
		/* idle: the deadline's own bound, rounded up; the reaper ends a trickle */
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)((lim->request_ms + 999) / 1000),
		MHD_OPTION_END);
}

int
http_start(const char *bind_addr, int port, const struct http_limits *lim, struct metrics *m,
	   struct http **ret, char *errbuf, size_t errlen)
{
	struct http *h;
	int fd, bound, err;

	if (port < 0 || port > 65535 || !m) {
		return fail(errbuf, errlen, -EINVAL,
			    "HTTP port %d is out of range; set outboxd.http.port to 1-65535, or 0 "
			    "to disable the HTTP endpoint",
			    port);
	}
	lim = lim ? lim : &http_limits_default;
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
	h->request_us = lim->request_ms * 1000;
	h->per_client = lim->per_client;
	h->connections = lim->connections;
	err = reaper_start(h);
	/* MHD_stop_daemon() closes the listening socket it was given. */
	h->daemon = err ? NULL : serve(h, fd, lim);
	if (!h->daemon) {
		/*
		 * Not closed after MHD_start_daemon(): 0.9.75 closes the socket on some of its
		 * failure paths and not on others, and a double close could hit a descriptor
		 * another thread just got.
		 */
		if (err) {
			close(fd);
		}
		reaper_stop(h);
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
	reaper_stop(h);
	free(h);
}
