/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pipeline/stall.h"

#include <stdio.h>

#include "outboxd/util/log.h"

#define MOD "relay"

bool
stall_check(struct stall *st, const struct stall_view *v, struct metrics *m)
{
	int64_t quiet;
	char text[1024];

	if (v->progress || !v->waiting) {
		/*
		 * Nothing waiting without progress does not end a stall by itself: between two
		 * sessions, or before a new session has produced its replay, nothing is in flight
		 * although the same records are still unconfirmed.
		 */
		if (v->progress) {
			if (st->stalled) {
				log_info(MOD, "deliveries resumed after %lld s",
					 (long long)((v->now_us - st->since_us) / 1000000));
				metrics_set_stalled(m, false, NULL);
				st->stalled = false;
			}
			st->since_us = v->waiting ? v->now_us : 0;
		}
		return st->stalled;
	}
	if (!st->since_us) {
		st->since_us = v->now_us;
	}
	quiet = v->now_us - st->since_us;
	if (!st->stalled && quiet > v->warn_ms * 1000) {
		snprintf(
			text, sizeof(text),
			"no delivery report for %lld s while %llu records wait (producer queue %d); "
			"nothing is confirmed meanwhile; the brokers: %.600s",
			(long long)(quiet / 1000000), (unsigned long long)v->waiting, v->queue_len,
			v->broker ? v->broker :
				    "librdkafka reported no error (connected, but no answer: a "
				    "frozen or overloaded broker?)");
		log_warn(MOD, "%s", text);
		metrics_set_stalled(m, true, text);
		st->stalled = true;
	}
	return st->stalled;
}
