/* SPDX-License-Identifier: Apache-2.0 */
/*
 * delayproxy - a broker some milliseconds away, on one machine, without netem (bench/run's
 * remote phase).
 *
 *   delayproxy NETNS PORT TARGET_PORT DELAY_US [NETNS PORT TARGET_PORT DELAY_US]...
 *	Listens on 127.0.0.1:PORT inside the network namespace NETNS (a name under /run/netns,
 *	or a path) and forwards each connection to 127.0.0.1:TARGET_PORT in the namespace it was
 *	started in, holding every chunk of bytes DELAY_US microseconds in each direction before it
 *	writes it on: a round trip through the proxy takes 2 x DELAY_US more. Bytes keep flowing
 *	while earlier ones wait (a pipe of that delay, not a stop-and-wait), up to 64 MiB held per
 *	direction. Prints "ready" once every listener is up; on SIGTERM or SIGINT prints the bytes
 *	forwarded each way and exits 0.
 *
 * A relay started in NETNS (nsenter --net) sees the broker at the address the broker
 * advertises (127.0.0.1:PORT), so every connection librdkafka makes after the bootstrap goes
 * through the proxy too. The kernel here has no sch_netem; the proxy does in user space what
 * `tc qdisc ... netem delay` would do on a veth toward the broker, except that the TCP
 * handshake itself is not delayed (once per connection).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_LISTENERS 8
#define READ_BYTES    (256 * 1024)
#define HOLD_MAX      (64u << 20) /* bytes held per direction before reading stops */

struct chunk {
	struct chunk *next;
	int64_t due_ns;
	size_t len, off;
	char data[];
};

/* one direction of a connection: bytes read from @from, held, written to @to */
struct flow {
	int from, to;
	struct chunk *head, *tail;
	size_t held;
	bool eof;     /* @from said end of stream */
	bool shut;    /* ... and everything was written, @to shut for writing */
	bool blocked; /* the last write to @to would have blocked */
	unsigned long long bytes;
};

struct conn {
	struct conn *next;
	int client, server;
	int64_t delay_ns;
	struct flow up, down; /* up: client to server, down: server to client */
	uint32_t watched[2];  /* the epoll events asked for, client and server socket */
	bool dead;
};

struct listener {
	int fd, target_port;
	int64_t delay_ns;
};

/* what an epoll event points at: a listener, a connection's socket, or (neither) the timer */
struct tag {
	struct listener *l;
	struct conn *c;
	bool server;
};

static volatile sig_atomic_t stop;
static struct conn *conns;
static unsigned long long total_up, total_down;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
die(const char *what)
{
	fprintf(stderr, "delayproxy: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void
nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static int
listen_in(const char *netns, int port)
{
	char path[512];
	int self, ns, fd, one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	snprintf(path, sizeof(path), strchr(netns, '/') ? "%s" : "/run/netns/%s", netns);
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ns = open(path, O_RDONLY | O_CLOEXEC);
	if (self < 0 || ns < 0) {
		die(path);
	}
	if (setns(ns, CLONE_NEWNET) != 0) {
		die("setns");
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		die("socket");
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 64) != 0) {
		die("bind/listen in the namespace");
	}
	if (setns(self, CLONE_NEWNET) != 0) {
		die("setns back");
	}
	close(ns);
	close(self);
	return fd;
}

static void
watch(int ep, int op, int fd, uint32_t events, struct tag *t)
{
	struct epoll_event ev = { .events = events, .data.ptr = t };

	if (epoll_ctl(ep, op, fd, &ev) != 0 && op != EPOLL_CTL_DEL) {
		die("epoll_ctl");
	}
}

/* the events one socket waits for: reading while its inbound flow is open and not too full,
 * writing while its outbound flow has a due chunk that did not fit */
static uint32_t
interest(const struct flow *in, const struct flow *out)
{
	uint32_t ev = 0;

	if (!in->eof && in->held < HOLD_MAX) {
		ev |= EPOLLIN;
	}
	if (out->blocked) {
		ev |= EPOLLOUT;
	}
	return ev;
}

static void
rewatch(int ep, struct conn *c, struct tag *tags)
{
	uint32_t ev[2] = { interest(&c->up, &c->down), interest(&c->down, &c->up) };
	int fd[2] = { c->client, c->server };

	for (int i = 0; i < 2; i++) {
		if (ev[i] != c->watched[i]) {
			watch(ep, EPOLL_CTL_MOD, fd[i], ev[i], &tags[i]);
			c->watched[i] = ev[i];
		}
	}
}

static void
drop(struct conn *c)
{
	struct flow *f[2] = { &c->up, &c->down };

	if (c->dead) {
		return;
	}
	c->dead = true;
	close(c->client);
	close(c->server);
	for (int i = 0; i < 2; i++) {
		while (f[i]->head) {
			struct chunk *k = f[i]->head;

			f[i]->head = k->next;
			free(k);
		}
	}
	total_up += c->up.bytes;
	total_down += c->down.bytes;
}

/* reads what @f's source has into a held chunk; false on an error */
static bool
flow_read(struct flow *f, int64_t delay_ns)
{
	static char buf[READ_BYTES];
	ssize_t n = read(f->from, buf, sizeof(buf));
	struct chunk *k;

	if (n < 0) {
		return errno == EAGAIN || errno == EINTR;
	}
	if (n == 0) {
		f->eof = true;
		return true;
	}
	k = malloc(sizeof(*k) + (size_t)n);
	if (!k) {
		die("malloc");
	}
	memcpy(k->data, buf, (size_t)n);
	k->len = (size_t)n;
	k->off = 0;
	k->next = NULL;
	k->due_ns = now_ns() + delay_ns;
	if (f->tail) {
		f->tail->next = k;
	} else {
		f->head = k;
	}
	f->tail = k;
	f->held += (size_t)n;
	return true;
}

/* writes @f's due chunks; false on an error. @next_ns: lowered to the next chunk's due time */
static bool
flow_write(struct flow *f, int64_t now, int64_t *next_ns)
{
	f->blocked = false;
	while (f->head && f->head->due_ns <= now) {
		struct chunk *k = f->head;
		ssize_t n = send(f->to, k->data + k->off, k->len - k->off, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				f->blocked = true;
				return true;
			}
			return false;
		}
		k->off += (size_t)n;
		f->held -= (size_t)n;
		f->bytes += (unsigned long long)n;
		if (k->off < k->len) {
			f->blocked = true;
			return true;
		}
		f->head = k->next;
		if (!f->head) {
			f->tail = NULL;
		}
		free(k);
	}
	if (f->head && f->head->due_ns < *next_ns) {
		*next_ns = f->head->due_ns;
	}
	if (!f->head && f->eof && !f->shut) {
		shutdown(f->to, SHUT_WR);
		f->shut = true;
	}
	return true;
}

static void
accept_one(int ep, struct listener *l)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)l->target_port) };
	int cl = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC), sv;
	struct conn *c;
	struct tag *tags;

	if (cl < 0) {
		return;
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sv < 0 || connect(sv, (struct sockaddr *)&a, sizeof(a)) != 0) {
		fprintf(stderr, "delayproxy: connect to 127.0.0.1:%d: %s\n", l->target_port,
			strerror(errno));
		close(cl);
		if (sv >= 0) {
			close(sv);
		}
		return;
	}
	nodelay(cl);
	nodelay(sv);
	/* the connection and its two epoll tags in one block: freed together */
	c = calloc(1, sizeof(*c) + 2 * sizeof(struct tag));
	if (!c) {
		die("calloc");
	}
	tags = (struct tag *)(c + 1);
	c->client = cl;
	c->server = sv;
	c->delay_ns = l->delay_ns;
	c->up = (struct flow){ .from = cl, .to = sv };
	c->down = (struct flow){ .from = sv, .to = cl };
	tags[0] = (struct tag){ .c = c, .server = false };
	tags[1] = (struct tag){ .c = c, .server = true };
	c->watched[0] = c->watched[1] = EPOLLIN;
	c->next = conns;
	conns = c;
	watch(ep, EPOLL_CTL_ADD, cl, EPOLLIN, &tags[0]);
	watch(ep, EPOLL_CTL_ADD, sv, EPOLLIN, &tags[1]);
}

/* one pass over every connection: due chunks written, finished and failed ones dropped;
 * returns the earliest due time still held (INT64_MAX: none) */
static int64_t
pass(int ep)
{
	int64_t now = now_ns(), next = INT64_MAX;
	struct conn **pp = &conns;

	while (*pp) {
		struct conn *c = *pp;

		if (!c->dead &&
		    (!flow_write(&c->up, now, &next) || !flow_write(&c->down, now, &next))) {
			drop(c);
		}
		if (!c->dead && c->up.shut && c->down.shut) {
			drop(c);
		}
		if (c->dead) {
			*pp = c->next;
			free(c);
			continue;
		}
		rewatch(ep, c, (struct tag *)(c + 1));
		pp = &c->next;
	}
	return next;
}

int
main(int argc, char **argv)
{
	struct listener ls[MAX_LISTENERS];
	struct tag ltags[MAX_LISTENERS], ttag = { 0 };
	int nl = 0, ep, tfd;
	struct sigaction sa = { .sa_handler = on_signal };

	if (argc < 5 || (argc - 1) % 4 != 0 || (argc - 1) / 4 > MAX_LISTENERS) {
		fprintf(stderr, "usage: delayproxy NETNS PORT TARGET_PORT DELAY_US [...]\n");
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	ep = epoll_create1(EPOLL_CLOEXEC);
	/* the next held chunk's due time, to the nanosecond (epoll_wait counts milliseconds) */
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (ep < 0 || tfd < 0) {
		die("epoll_create1/timerfd_create");
	}
	watch(ep, EPOLL_CTL_ADD, tfd, EPOLLIN, &ttag);
	for (int i = 1; i + 3 < argc; i += 4, nl++) {
		ls[nl].fd = listen_in(argv[i], atoi(argv[i + 1]));
		ls[nl].target_port = atoi(argv[i + 2]);
		ls[nl].delay_ns = atoll(argv[i + 3]) * 1000;
		ltags[nl] = (struct tag){ .l = &ls[nl] };
		watch(ep, EPOLL_CTL_ADD, ls[nl].fd, EPOLLIN, &ltags[nl]);
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		struct epoll_event evs[64];
		int64_t next = pass(ep);
		/* disarmed (all zero) when nothing is held; a due time already past fires at once */
		struct itimerspec due = { .it_value = { next == INT64_MAX ? 0 : next / 1000000000,
							next == INT64_MAX ? 0 :
									    next % 1000000000 } };
		int n;

		if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &due, NULL) != 0) {
			die("timerfd_settime");
		}
		n = epoll_wait(ep, evs, 64, 1000);
		for (int i = 0; i < n; i++) {
			struct tag *t = evs[i].data.ptr;
			struct conn *c = t->c;
			struct flow *in;
			uint64_t fired;

			if (t->l) {
				accept_one(ep, t->l);
				continue;
			}
			if (!c) {
				(void)!read(tfd, &fired, sizeof(fired));
				continue;
			}
			if (c->dead) {
				continue;
			}
			in = t->server ? &c->down : &c->up;
			if ((evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !in->eof &&
			    in->held < HOLD_MAX && !flow_read(in, c->delay_ns)) {
				drop(c);
			}
		}
	}
	for (struct conn *c = conns; c; c = c->next) {
		drop(c);
	}
	printf("up_bytes=%llu down_bytes=%llu\n", total_up, total_down);
	return 0;
}
