/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/kafka/offsets_reader.h"

#include <errno.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <string.h>

#include "outboxd/util/now.h"

/* The producer's settings a consumer takes too: where the brokers are and how to reach them. */
static bool
client_setting(const char *key)
{
	static const char *const prefixes[] = {
		"bootstrap.servers", "security.protocol", "sasl.",	"ssl.",	       "client.id",
		"socket.",	     "broker.",		  "reconnect.", "api.version", "enable.ssl."
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		if (strncmp(key, prefixes[i], strlen(prefixes[i])) == 0) {
			return true;
		}
	}
	return false;
}

static rd_kafka_t *
consumer_new(const struct kv *settings, char *errbuf, size_t errlen)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	static const char *const own[][2] = {
		{ "isolation.level", "read_committed" },
		{ "enable.auto.commit", "false" },
		{ "enable.partition.eof", "true" },
		{ "group.id", "outboxd-offsets-reader" }, /* required by the API; never joined */
		{ "log_level", "3" },
	};
	rd_kafka_t *rk;

	for (size_t i = 0; i < settings->n; i++) {
		if (client_setting(settings->v[i].key) &&
		    rd_kafka_conf_set(conf, settings->v[i].key, settings->v[i].value, errbuf,
				      errlen) != RD_KAFKA_CONF_OK) {
			rd_kafka_conf_destroy(conf);
			return NULL;
		}
	}
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		rd_kafka_conf_set(conf, own[i][0], own[i][1], NULL, 0);
	}
	rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errbuf, errlen);
	if (!rk) {
		rd_kafka_conf_destroy(conf);
	}
	return rk;
}

static int
refusal(rd_kafka_resp_err_t err)
{
	switch (err) {
	case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
	case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
	case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
	case RD_KAFKA_RESP_ERR__AUTHENTICATION: return -EACCES;
	case RD_KAFKA_RESP_ERR__TIMED_OUT:
	case RD_KAFKA_RESP_ERR__TRANSPORT: return -ETIMEDOUT;
	default: return -EIO;
	}
}

/* The topic's partition count; 0 when the topic does not exist. */
static int
partitions(rd_kafka_t *rk, const char *topic, int timeout_ms, int *ret, char *errbuf, size_t errlen)
{
	rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
	const struct rd_kafka_metadata *md = NULL;
	rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, timeout_ms);
	int rc = 0;

	if (err) {
		snprintf(errbuf, errlen, "metadata of %s: %s", topic, rd_kafka_err2str(err));
		rc = refusal(err);
	} else if (md->topic_cnt != 1 ||
		   md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
		*ret = 0;
	} else if (md->topics[0].err) {
		snprintf(errbuf, errlen, "topic %s: %s", topic,
			 rd_kafka_err2str(md->topics[0].err));
		rc = refusal(md->topics[0].err);
	} else {
		*ret = md->topics[0].partition_cnt;
	}
	if (md) {
		rd_kafka_metadata_destroy(md);
	}
	rd_kafka_topic_destroy(rkt);
	return rc;
}

/* One message: keep @key's newest value; 1 at the partition's end, 0 go on, <0 an error. */
static int
take(rd_kafka_message_t *m, const void *key, size_t keylen, struct buf *value, bool *found,
     char *errbuf, size_t errlen)
{
	if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
		return 1;
	}
	if (m->err) {
		snprintf(errbuf, errlen, "reading %s: %s", rd_kafka_topic_name(m->rkt),
			 rd_kafka_message_errstr(m));
		return refusal(m->err);
	}
	if (m->key_len == keylen && memcmp(m->key, key, keylen) == 0) {
		buf_reset(value);
		*found = m->payload != NULL;
		if (m->payload) {
			buf_add(value, m->payload, m->len);
		}
	}
	return 0;
}

/* Read partition @part of @topic to its high watermark; the caller's bound is @until_us. */
static int
read_partition(rd_kafka_t *rk, const char *topic, int part, int64_t until_us, const void *key,
	       size_t keylen, struct buf *value, bool *found, char *errbuf, size_t errlen)
{
	rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new(1);
	int rc = -ETIMEDOUT;

	rd_kafka_topic_partition_list_add(tp, topic, part)->offset = RD_KAFKA_OFFSET_BEGINNING;
	rd_kafka_assign(rk, tp);
	snprintf(errbuf, errlen,
		 "%s [%d] was not read to its end in time (brokers away, or a transaction of "
		 "another producer open in it)",
		 topic, part);
	while (now_monotonic_us() < until_us) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
		int64_t lo, hi, at;
		int r;

		if (!m) {
			continue;
		}
		r = take(m, key, keylen, value, found, errbuf, errlen);
		at = m->offset; /* at the end: the offset the end is at */
		rd_kafka_message_destroy(m);
		if (r < 0) {
			rc = r;
			break;
		}
		/* the end of what read_committed may read: done once that is the whole log */
		if (r == 1 &&
		    rd_kafka_get_watermark_offsets(rk, topic, part, &lo, &hi) ==
			    RD_KAFKA_RESP_ERR_NO_ERROR &&
		    hi >= 0 && at >= hi) {
			rc = 0;
			break;
		}
	}
	rd_kafka_assign(rk, NULL);
	rd_kafka_topic_partition_list_destroy(tp);
	return rc;
}

int
offsets_reader_last(const struct kv *settings, const char *topic, const void *key, size_t keylen,
		    int timeout_ms, struct buf *value, bool *found, char *errbuf, size_t errlen)
{
	int64_t until = now_monotonic_us() + (int64_t)timeout_ms * 1000;
	rd_kafka_t *rk;
	int n = 0, rc;

	*found = false;
	rk = consumer_new(settings, errbuf, errlen);
	if (!rk) {
		return -EIO;
	}
	rc = partitions(rk, topic, timeout_ms, &n, errbuf, errlen);
	if (rc == 0 && n > 0) {
		/* the Java client's default partitioner, which Connect's offsets producer uses */
		int part = rd_kafka_msg_partitioner_murmur2(NULL, key, keylen, n, NULL, NULL);

		rc = read_partition(rk, topic, part, until, key, keylen, value, found, errbuf,
				    errlen);
	}
	rd_kafka_destroy(rk);
	return rc;
}
