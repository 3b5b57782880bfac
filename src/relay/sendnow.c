/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/relay/sendnow.h"

/* Live: the last transaction read committed within the window (by the server's clock). */
static bool
live(const struct sendnow_view *v)
{
	return v->committed_us && v->wall_us - v->committed_us <= v->window_us;
}

enum sendnow_act
sendnow_decide(struct sendnow *sn, const struct sendnow_view *v, int64_t *at)
{
	if (v->window_us <= 0 || v->produced == sn->sent || v->waiting) {
		return SENDNOW_IDLE;
	}
	if (!v->due) {
		if (!v->drained || !live(v)) {
			return SENDNOW_KEEP;
		}
		if (v->now_us < sn->sent_at + SENDNOW_EVERY_US) {
			*at = sn->sent_at + SENDNOW_EVERY_US;
			return SENDNOW_LATER;
		}
	}
	sn->sent = v->produced;
	sn->sent_at = v->now_us;
	return SENDNOW_SEND;
}

int64_t
sendnow_read_at(const struct sendnow_view *v, int64_t pause_us)
{
	/* no commit read yet: a start-up or a resumed replay, where the first record's latency counts */
	if (pause_us <= 0 || !v->drained || !v->received || !v->committed_us || live(v)) {
		return 0;
	}
	return v->now_us + pause_us;
}
