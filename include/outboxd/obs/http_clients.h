/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_OBS_HTTP_CLIENTS_H
#define OUTBOXD_OBS_HTTP_CLIENTS_H

/*
 * Who may open another connection to the HTTP endpoint: the open connections by client address,
 * the per-client limit and the fair share of a full endpoint. Pure: no I/O, no lock, no clock;
 * http.c holds the list under its lock, asks here at each accept and carries out the answer.
 *
 * A client is an address: an IPv4-mapped IPv6 address (how a socket bound to "::" sees an IPv4
 * client) is the IPv4 address, so one client is one address under either binding. When the
 * endpoint is full, a client holding fewer connections than the heaviest one takes the place of
 * that one's oldest connection: any number of slow clients from other addresses leave room for
 * a probe from one that holds none (the kubelet's).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* A client address, compared whole (memcmp). */
struct http_client {
	unsigned char family; /* AF_INET, AF_INET6, or 0: not an IP address (all one client) */
	unsigned char addr[16];
};

/* An open connection, a node of the list http.c keeps (newest first). */
struct http_conn {
	struct http_conn *prev, *next;
	struct http_client who;
	int fd;		/* libmicrohttpd's; shut down, never closed, by http.c */
	int64_t due_us; /* the monotonic time its response must be out by: the earliest is oldest */
	bool cut;	/* shut down already: it holds no place, though still open for a moment */
};

/* http_client_from() - @sa (@len bytes, as accept(2) gave it) as a client: zeroed, then filled. */
void http_client_from(const struct sockaddr *sa, socklen_t len, struct http_client *who);

/* http_client_format() - @who as text ("127.0.0.1", "::1", "?") into @out of @len bytes. */
void http_client_format(const struct http_client *who, char *out, size_t len);

/**
 * http_clients_admit() - may @who open another connection?
 * @conns: the open connections (a list through ->next); cut ones hold no place.
 * @per_client: at most this many from one client.
 * @connections: at most this many from every client together.
 * @evict: set to the connection to cut to make room (the oldest of the client holding the most,
 *         who must hold more than @who does), or NULL when none needs to go.
 *
 * Return: true to accept (after cutting *@evict, if set); false when @who holds @per_client
 * already, or the endpoint is full and no client holds more than @who.
 */
bool http_clients_admit(struct http_conn *conns, const struct http_client *who, unsigned per_client,
			unsigned connections, struct http_conn **evict);

/* http_clients_held() - how many connections @who holds (cut ones are not counted). */
unsigned http_clients_held(const struct http_conn *conns, const struct http_client *who);

#endif
