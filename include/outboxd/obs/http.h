/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_OBS_HTTP_H
#define OUTBOXD_OBS_HTTP_H

/*
 * /metrics (Prometheus text 0.0.4) and /health (JSON, 200 or 503) served by libmicrohttpd from
 * its own thread. Each request renders from the metrics module, which locks internally, so the
 * relay's thread never waits on a client. GET and HEAD only (405 otherwise), 404 for any other
 * path. Logs at debug level only; start-up failures come back as text.
 */

#include <stddef.h>

#include "outboxd/obs/metrics.h"

struct http;

/**
 * http_start() - listen and start serving.
 * @bind_addr: borrowed; a numeric IPv4 or IPv6 address ("127.0.0.1", "::1"); NULL = every
 *             IPv4 address (0.0.0.0).
 * @port: 1-65535 (outboxd.http.port), or 0 for a free port chosen by the kernel (tests; read it
 *        back with http_port()).
 * @m: borrowed; must outlive the server (http_stop() before metrics_free()).
 * @ret: written only on success; stop with http_stop().
 *
 * Return: 0; -EADDRINUSE when the port is taken, with a message naming the port and
 * outboxd.http.port; -EINVAL for a bad address or port; another -errno from socket(2), bind(2)
 * or listen(2), or -EIO when libmicrohttpd does not start. The reason is in @errbuf (NULL allowed).
 */
int http_start(const char *bind_addr, int port, struct metrics *m, struct http **ret, char *errbuf,
	       size_t errlen);

/* http_port() - the port actually bound (useful after port 0). */
int http_port(const struct http *h);

/* http_stop() - stop the thread, close every connection and the socket, free @h. NULL allowed. */
void http_stop(struct http *h);

#endif
