/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_OBS_HTTP_H
#define OUTBOXD_OBS_HTTP_H

/*
 * /metrics (Prometheus text 0.0.4) and /health (JSON, 200 or 503) served by libmicrohttpd from
 * its own thread. Each request renders from the metrics module, which locks internally, so the
 * relay's thread never waits on a client. GET and HEAD only (405 otherwise), 404 for any other
 * path. Logs at debug level only; start-up failures come back as text.
 *
 * Slow or idle clients cannot starve the probes: each client address holds a few connections
 * at most, a full endpoint makes room for an address holding fewer than the heaviest one
 * (http_clients.h), and every connection serves one request (Connection: close) that must be
 * answered within a deadline from its accept, however slowly its bytes trickle in; past it the
 * socket is shut down. So addresses trickling bytes leave room for every other (the kubelet's,
 * the scraper's).
 */

#include <stddef.h>
#include <stdint.h>

#include "outboxd/obs/metrics.h"

struct http;

/* How much the clients may hold. */
struct http_limits {
	unsigned connections; /* at once, every client together (the shut-down ones not counted) */
	unsigned per_client;  /* at once, from one client address */
	int64_t request_ms;   /* from a connection's accept to its response's last byte */
};

/*
 * The served limits: 64 connections, 8 per client address (the kubelet's probes, at most three
 * at once, come from one address), 5 s per request (a probe's answer takes milliseconds).
 */
extern const struct http_limits http_limits_default;

/**
 * http_start() - listen and start serving.
 * @bind_addr: borrowed; a numeric IPv4 or IPv6 address (outboxd.http.bind: "127.0.0.1", "::1");
 *             "::" is every address of both families (IPV6_V6ONLY off); NULL = every IPv4
 *             address (0.0.0.0).
 * @port: 1-65535 (outboxd.http.port), or 0 for a free port chosen by the kernel (tests; read it
 *        back with http_port()).
 * @lim: borrowed; NULL = http_limits_default.
 * @m: borrowed; must outlive the server (http_stop() before metrics_free()).
 * @ret: written only on success; stop with http_stop().
 *
 * Return: 0; -EADDRINUSE when the port is taken, with a message naming the port and
 * outboxd.http.port; -EINVAL for a bad address (the message names outboxd.http.bind and the
 * fix) or port; another -errno from socket(2), bind(2) or listen(2), or -EIO when
 * libmicrohttpd does not start. The reason is in @errbuf (NULL allowed).
 */
int http_start(const char *bind_addr, int port, const struct http_limits *lim, struct metrics *m,
	       struct http **ret, char *errbuf, size_t errlen);

/* http_port() - the port actually bound (useful after port 0). */
int http_port(const struct http *h);

/* http_stop() - stop the thread, close every connection and the socket, free @h. NULL allowed. */
void http_stop(struct http *h);

#endif
