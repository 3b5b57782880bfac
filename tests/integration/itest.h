/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the integration suites: the stack's coordinates, SQL and Kafka one-liners. */
#ifndef OUTBOXD_ITEST_H
#define OUTBOXD_ITEST_H

#include <libpq-fe.h>
#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * itest_env() - value of an environment variable the stack exports. Missing means the suite
 * was started outside scripts/test: the test fails (never skips) and says how to start the stack.
 */
const char *itest_env(const char *name);

/* itest_pg() - a connection to the stack's PostgreSQL (caller PQfinish()es); fails the test. */
PGconn *itest_pg(void);

/* itest_sql() - run one statement, fail the test unless it succeeds; returns its result. */
PGresult *itest_sql(PGconn *c, const char *sql);

/* itest_sqlf() - itest_sql() of a printf-formatted statement; its result is discarded. */
void itest_sqlf(PGconn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* itest_unique() - a name unique to this run: "<prefix>_<time>_<pid>_<counter>"; caller frees. */
char *itest_unique(const char *prefix);

/*
 * itest_kafka_conf() - a librdkafka configuration with bootstrap.servers set to the stack's
 * broker; caller owns it.
 */
rd_kafka_conf_t *itest_kafka_conf(void);

/* One consumed record, with owned copies of key and value (NULL stays NULL). */
struct itest_record {
	int32_t partition;
	int64_t offset;
	char *key;
	size_t key_len;
	char *value;
	size_t value_len;
	rd_kafka_headers_t *headers; /* owned copy or NULL */
};

/*
 * itest_consume_all() - read every record of @topic from the beginning of each partition until
 * @expected records arrived or @timeout_ms passed. Returns the count; *@ret_records is an array
 * the caller frees with itest_records_free().
 */
size_t itest_consume_all(const char *topic, size_t expected, int timeout_ms,
			 struct itest_record **ret_records);

void itest_records_free(struct itest_record *r, size_t n);

/* itest_topic_count() - records in @topic (sum of high watermarks); 0 if it does not exist. */
long itest_topic_count(const char *topic);
/* itest_topic_count_settled() - itest_topic_count() once every partition has a leader again
 * (after a broker outage), waiting at most @timeout_s for that. */
long itest_topic_count_settled(const char *topic, int timeout_s);

/*
 * itest_topic_config() - with @create, create @topic with one partition and the topic setting
 * @key=@value; else set @key=@value on the existing @topic (AlterConfigs: its other settings go
 * back to the broker's defaults). Fails the test unless the broker agrees within 30 s.
 */
void itest_topic_config(const char *topic, bool create, const char *key, const char *value);

/* itest_free_port() - a TCP port below the ephemeral range, free on 127.0.0.1 and :: a moment ago. */
int itest_free_port(void);

/*
 * itest_http_get() - GET http://127.0.0.1:@port@path; returns the status code (-1 if nothing
 * answers) and the body in *@ret_body (caller frees; may be NULL).
 */
int itest_http_get(int port, const char *path, char **ret_body);

/*
 * itest_http_wait() - GET @path every 100 ms until it answers @want or @timeout_s passed (the
 * relay changes what it serves from its own thread, some time after the log line that
 * announces the change). Returns the last status code; *@ret_body (caller frees; may be NULL)
 * is the body of the answer that matched, NULL otherwise.
 */
int itest_http_wait(int port, const char *path, int want, int timeout_s, char **ret_body);

/*
 * itest_stack_up() - starts a part of the test stack that suites start on demand (@part: "strict",
 * "cluster"; `scripts/stack --dir $OUTBOXD_TEST_STACK_DIR PART up`) and sets the variables it
 * prints in this process's environment. For main(), before the tests: false, with the reason on
 * stderr, when it could not.
 */
bool itest_stack_up(const char *part);

/* itest_kafka_pid() - the stack's broker process. */
int itest_kafka_pid(void);

/* itest_metric() - the value of the unlabelled series @name in a /metrics @body, or -1. */
double itest_metric(const char *body, const char *name);

/* itest_wait_metric() - GET /metrics until @name equals @want; true if it did within @timeout_s. */
bool itest_wait_metric(int port, const char *name, double want, int timeout_s);

#endif
