/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outboxd.http.bind, checked with the rest of the configuration: a value the endpoint could not
 * listen on is refused by `outboxd check` and at start, even with outboxd.http.port=0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>

#include "config_int.h"

int
config_http_finish(struct ctx *c)
{
	const char *bind = c->cfg->http_bind;
	const struct kv_entry *e;
	struct in6_addr a;

	if (!bind || inet_pton(AF_INET, bind, &a) == 1 || inet_pton(AF_INET6, bind, &a) == 1) {
		return 0;
	}
	e = kv_find(&c->src->outboxd, "outboxd.http.bind");
	/* a host name would need a resolver at start, and its answer might change under us */
	config_ctx_seterr(c,
			  "%s: outboxd.http.bind=\"%s\" is not a numeric IPv4 or IPv6 address; set "
			  "it to 0.0.0.0 (every IPv4 address), :: (every address, IPv4 and IPv6), "
			  "or one address of this host such as 127.0.0.1 or ::1",
			  e ? e->origin : "outboxd.http.bind", bind);
	return -EINVAL;
}
