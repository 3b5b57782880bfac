/* SPDX-License-Identifier: Apache-2.0 */
/* One record handed to librdkafka (producer_int.h). */
#include <errno.h>
#include <stdio.h>

#include "producer_int.h"

/* Builds librdkafka headers; they belong to librdkafka once producev() succeeds. */
static rd_kafka_headers_t *
headers_new(const struct sink_record *rec)
{
	rd_kafka_headers_t *h = rd_kafka_headers_new(rec->nheaders ? rec->nheaders : 1);

	for (size_t i = 0; i < rec->nheaders; i++) {
		rd_kafka_header_add(h, rec->headers[i].name, -1, rec->headers[i].value,
				    rec->headers[i].value ? (ssize_t)rec->headers[i].len : 0);
	}
	return h;
}

int
producer_produce(struct producer *p, rd_kafka_topic_t *rkt, const struct sink_record *rec,
		 void *msg_opaque, char *errbuf, size_t errlen)
{
	rd_kafka_headers_t *h = headers_new(rec);
	/* F_COPY: the router reuses its buffers; librdkafka copies into the message's own block. */
	rd_kafka_vu_t vu[] = {
		rkt ? (rd_kafka_vu_t){ .vtype = RD_KAFKA_VTYPE_RKT, .u.rkt = rkt } :
		      (rd_kafka_vu_t){ .vtype = RD_KAFKA_VTYPE_TOPIC, .u.cstr = rec->topic },
		{ .vtype = RD_KAFKA_VTYPE_PARTITION,
		  .u.i32 = rec->partition < 0 ? RD_KAFKA_PARTITION_UA : rec->partition },
		{ .vtype = RD_KAFKA_VTYPE_KEY,
		  .u.mem = { (void *)rec->key, rec->key ? rec->key_len : 0 } },
		{ .vtype = RD_KAFKA_VTYPE_VALUE,
		  .u.mem = { (void *)rec->value, rec->value ? rec->value_len : 0 } },
		{ .vtype = RD_KAFKA_VTYPE_TIMESTAMP, .u.i64 = rec->timestamp_ms },
		{ .vtype = RD_KAFKA_VTYPE_HEADERS, .u.headers = h },
		{ .vtype = RD_KAFKA_VTYPE_MSGFLAGS, .u.i = RD_KAFKA_MSG_F_COPY },
		{ .vtype = RD_KAFKA_VTYPE_OPAQUE, .u.ptr = msg_opaque },
	};
	rd_kafka_error_t *error = rd_kafka_produceva(p->rk, vu, sizeof(vu) / sizeof(vu[0]));
	rd_kafka_resp_err_t err;

	if (!error) {
		return 0;
	}
	/* after a fatal error, the code is the original cause; the flag says it was fatal */
	err = rd_kafka_error_is_fatal(error) ? RD_KAFKA_RESP_ERR__FATAL :
					       rd_kafka_error_code(error);
	rd_kafka_headers_destroy(h); /* still the caller's when the record was not queued */
	if (errbuf) {
		snprintf(errbuf, errlen, "%s", rd_kafka_error_string(error));
	}
	rd_kafka_error_destroy(error);
	switch (err) {
	case RD_KAFKA_RESP_ERR__QUEUE_FULL: return -EAGAIN;
	case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE: return -EMSGSIZE;
	case RD_KAFKA_RESP_ERR__FATAL: return -ESHUTDOWN;
	default: return -EINVAL;
	}
}
