/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/run/stall.h"

#include <stdio.h>

#include "outboxd/util/log.h"

#define MOD "relay"

void
stall_check(struct stall *st, const struct stall_view *v, struct metrics *m)
{
	int64_t quiet = v->now_us - v->last_ack_us;
	char text[512];

	if (v->waiting && quiet > v->warn_ms * 1000) {
		if (v->now_us < st->next_warn_us) {
			return;
		}
		snprintf(text, sizeof(text),
			 "no delivery report for %lld s while %llu records wait "
			 "(producer queue %d, the oldest waiting %lld s); nothing is confirmed "
			 "meanwhile; check the brokers",
			 (long long)(quiet / 1000000), (unsigned long long)v->waiting, v->queue_len,
			 (long long)((v->now_us - v->oldest_since_us) / 1000000));
		log_warn(MOD, "%s", text);
		metrics_set_stalled(m, true, text);
		st->next_warn_us = v->now_us + v->warn_ms * 1000;
	} else if (st->next_warn_us && (!v->waiting || quiet <= v->warn_ms * 1000)) {
		log_info(MOD, "deliveries resumed");
		metrics_set_stalled(m, false, NULL);
		st->next_warn_us = 0;
	}
}
