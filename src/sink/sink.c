/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/sink/sink.h"

#include <errno.h>
#include <stddef.h>

int
sink_send(struct sink *s, const struct sink_record *rec, uint64_t token, char *errbuf,
	  size_t errlen)
{
	return s->ops->send(s, rec, token, errbuf, errlen);
}

void
sink_serve(struct sink *s)
{
	s->ops->serve(s);
}

int
sink_flush(struct sink *s, int64_t timeout_ms)
{
	return s->ops->flush(s, timeout_ms);
}

int
sink_wake_fd(const struct sink *s)
{
	return s->ops->wake_fd(s);
}

bool
sink_fatal(struct sink *s, char *errbuf, size_t errlen)
{
	return s->ops->fatal(s, errbuf, errlen);
}

bool
sink_precondition(struct sink *s, char *errbuf, size_t errlen)
{
	return s->ops->precondition(s, errbuf, errlen);
}

int
sink_queue_len(const struct sink *s)
{
	return s->ops->queue_len(s);
}

struct sink_failure
sink_report_failure(const struct sink *s)
{
	return s->ops->report_failure(s);
}

size_t
sink_broker_state(const struct sink *s, int64_t now_us, char *out, size_t len)
{
	return s->ops->broker_state(s, now_us, out, len);
}

int64_t
sink_max_record_bytes(const struct sink *s)
{
	return s->ops->max_record_bytes(s);
}

int
sink_discard(struct sink *s, int64_t inflight_ms, char *fatal, size_t fatallen)
{
	if (fatal && fatallen) {
		fatal[0] = '\0';
	}
	return s ? s->ops->discard(s, inflight_ms, fatal, fatallen) : 0;
}

bool
sink_transactional(const struct sink *s)
{
	return s->ops->txn_begin && s->ops->txn_commit && s->ops->txn_abort;
}

int
sink_txn_begin(struct sink *s, char *errbuf, size_t errlen)
{
	return sink_transactional(s) ? s->ops->txn_begin(s, errbuf, errlen) : -ENOTSUP;
}

int
sink_txn_commit(struct sink *s, const void *position, size_t len, char *errbuf, size_t errlen)
{
	return sink_transactional(s) ? s->ops->txn_commit(s, position, len, errbuf, errlen) :
				       -ENOTSUP;
}

int
sink_txn_abort(struct sink *s, char *errbuf, size_t errlen)
{
	return sink_transactional(s) ? s->ops->txn_abort(s, errbuf, errlen) : -ENOTSUP;
}
