/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kafka transactions on the producer (exactly-once, issue 37; producer_int.h). Each call takes
 * a slice of time and returns -EINPROGRESS when the slice ended first: librdkafka (2.0.0 and
 * later) resumes a timed-out init, commit or abort when the same call is made again and keeps
 * its result for that call, so the relay's one thread drives a commit a slice per turn instead
 * of blocking on the coordinator. Every other outcome comes back as the class that decides
 * what the relay does (producer_txn_class()).
 */
#include <errno.h>
#include <stdio.h>

#include "producer_int.h"

int
producer_txn_class(int code, bool retriable, bool abortable, bool fatal)
{
	if (fatal) {
		switch (code) {
		case RD_KAFKA_RESP_ERR__FENCED:
		case RD_KAFKA_RESP_ERR_PRODUCER_FENCED:
		case RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH: return -EPERM;
		case RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
		case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
		case RD_KAFKA_RESP_ERR_INVALID_TRANSACTION_TIMEOUT:
		case RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION:
		case RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE: return -EACCES;
		default: return -EIO;
		}
	}
	if (abortable) {
		return -ECANCELED;
	}
	if (code == RD_KAFKA_RESP_ERR__TIMED_OUT && retriable) {
		return -EINPROGRESS;
	}
	return retriable ? -EAGAIN : -EINVAL;
}

/* @e's class, its text in @errbuf (but for a slice that ended), and @e freed. */
static int
result(struct producer *p, rd_kafka_error_t *e, const char *call, char *errbuf, size_t errlen)
{
	rd_kafka_resp_err_t code;
	bool fatal;
	int rc;

	if (!e) {
		return 0;
	}
	code = rd_kafka_error_code(e);
	fatal = rd_kafka_error_is_fatal(e);
	if (fatal) {
		/* a call made after the fatal error names the error that made it fatal */
		char why[256];
		rd_kafka_resp_err_t first = rd_kafka_fatal_error(p->rk, why, sizeof(why));

		code = first != RD_KAFKA_RESP_ERR_NO_ERROR ? first : code;
	}
	rc = producer_txn_class(code, rd_kafka_error_is_retriable(e),
				rd_kafka_error_txn_requires_abort(e), fatal);
	if (rc != -EINPROGRESS && errbuf) {
		snprintf(errbuf, errlen, "%s: %s", call, rd_kafka_error_string(e));
	}
	rd_kafka_error_destroy(e);
	return rc;
}

int
producer_txn_init(struct producer *p, int slice_ms, char *errbuf, size_t errlen)
{
	return result(p, rd_kafka_init_transactions(p->rk, slice_ms), "init_transactions", errbuf,
		      errlen);
}

int
producer_txn_begin(struct producer *p, char *errbuf, size_t errlen)
{
	return result(p, rd_kafka_begin_transaction(p->rk), "begin_transaction", errbuf, errlen);
}

int
producer_txn_commit(struct producer *p, int slice_ms, char *errbuf, size_t errlen)
{
	return result(p, rd_kafka_commit_transaction(p->rk, slice_ms), "commit_transaction", errbuf,
		      errlen);
}

int
producer_txn_abort(struct producer *p, int slice_ms, char *errbuf, size_t errlen)
{
	return result(p, rd_kafka_abort_transaction(p->rk, slice_ms), "abort_transaction", errbuf,
		      errlen);
}
