/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/obs/http_clients.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

void
http_client_from(const struct sockaddr *sa, socklen_t len, struct http_client *who)
{
	memset(who, 0, sizeof(*who));
	if (sa && sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
		who->family = AF_INET;
		memcpy(who->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa && sa->sa_family == AF_INET6 &&
		   len >= (socklen_t)sizeof(struct sockaddr_in6)) {
		const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		/* ::ffff:a.b.c.d is the IPv4 client a.b.c.d that reached a socket bound to "::" */
		if (IN6_IS_ADDR_V4MAPPED(a6)) {
			who->family = AF_INET;
			memcpy(who->addr, &a6->s6_addr[12], 4);
		} else {
			who->family = AF_INET6;
			memcpy(who->addr, a6->s6_addr, 16);
		}
	}
}

void
http_client_format(const struct http_client *who, char *out, size_t len)
{
	if (!len) {
		return;
	}
	if ((who->family != AF_INET && who->family != AF_INET6) ||
	    !inet_ntop(who->family, who->addr, out, (socklen_t)len)) {
		snprintf(out, len, "?");
	}
}

static bool
same(const struct http_client *a, const struct http_client *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

unsigned
http_clients_held(const struct http_conn *conns, const struct http_client *who)
{
	unsigned n = 0;

	for (const struct http_conn *c = conns; c; c = c->next) {
		n += !c->cut && same(&c->who, who);
	}
	return n;
}

/*
 * The connection to give up for a newcomer: the oldest of the client holding the most (of those
 * holding equally many, the one whose connection is oldest). Quadratic in the open connections,
 * which the connection limit keeps few, and asked only when the endpoint is full.
 */
static struct http_conn *
heaviest_oldest(struct http_conn *conns, unsigned *held)
{
	struct http_conn *victim = NULL;
	unsigned most = 0;

	for (struct http_conn *c = conns; c; c = c->next) {
		unsigned n;

		if (c->cut) {
			continue;
		}
		n = http_clients_held(conns, &c->who);
		if (n > most || (n == most && c->due_us < victim->due_us)) {
			most = n;
			victim = c;
		}
	}
	*held = most;
	return victim;
}

bool
http_clients_admit(struct http_conn *conns, const struct http_client *who, unsigned per_client,
		   unsigned connections, struct http_conn **evict)
{
	unsigned mine = 0, open = 0, most;
	struct http_conn *victim;

	*evict = NULL;
	for (const struct http_conn *c = conns; c; c = c->next) {
		if (!c->cut) {
			open++;
			mine += same(&c->who, who);
		}
	}
	if (mine >= per_client) {
		return false;
	}
	if (open < connections) {
		return true;
	}
	/*
	 * Full. A place is taken from a client holding more than @who, so a client holding none
	 * always gets one (the kubelet's probe while slow clients hold every place); from one
	 * holding as many, @who is refused: that would only trade places.
	 */
	victim = heaviest_oldest(conns, &most);
	if (!victim || most <= mine) {
		return false;
	}
	*evict = victim;
	return true;
}
