/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The tables of the keys config.c honours (the PostgreSQL connector's and outboxd's own), with
 * their types, defaults and ranges, and the fields the loader assembles from several keys. Data
 * only: config.c reads, applies, describes and frees them.
 */
#include <stddef.h>

#include "config_int.h"

/*
 * Upper bounds of the time settings: long enough for any real use, short enough that every
 * product of them (microseconds, a poll(2) timeout in int milliseconds) stays in range.
 */
#define HOUR_MS INT64_C(3600000)
#define DAY_MS	INT64_C(86400000)

const struct cf_key config_connector_keys[] = {
	CF_PGKEY("database.hostname", "host", NULL),
	CF_PGKEY("database.port", "port", "5432"),
	CF_PGKEY("database.user", "user", NULL),
	CF_PGKEY("database.password", "password", NULL),
	CF_PGKEY("database.dbname", "dbname", NULL),
	CF_PGKEY("database.sslmode", "sslmode", "prefer"),
	CF_PGKEY("database.sslcert", "sslcert", NULL),
	CF_PGKEY("database.sslkey", "sslkey", NULL),
	CF_PGKEY("database.sslrootcert", "sslrootcert", NULL),
	CF_PGKEY("database.sslpassword", "sslpassword", NULL),
	CF_PGKEY("database.connectTimeout", "connect_timeout", "10"), /* PgJDBC's default */
	CF_PGKEY("database.tcpKeepAlive", "keepalives", "true"),
	CF_ABS("slot.name", CF_STR, slot_name, "debezium", NULL, 0, 0),
	CF_ABS("publication.name", CF_STR, publication_name, "dbz_publication", NULL, 0, 0),
	CF_ABS("topic.prefix", CF_STR, topic_prefix, NULL, NULL, 0, 0),
	CF_ABS("table.include.list", CF_STR, table_include_list, NULL, NULL, 0, 0),
	CF_ABS("table.exclude.list", CF_STR, table_exclude_list, NULL, NULL, 0, 0),
	CF_ABS("schema.include.list", CF_STR, schema_include_list, NULL, NULL, 0, 0),
	CF_ABS("schema.exclude.list", CF_STR, schema_exclude_list, NULL, NULL, 0, 0),
	CF_ABS("message.prefix.include.list", CF_STR, message_prefix_include_list, NULL, NULL, 0,
	       0),
	CF_ABS("message.prefix.exclude.list", CF_STR, message_prefix_exclude_list, NULL, NULL, 0,
	       0),
	CF_ABS("status.update.interval.ms", CF_INT, status_update_interval_ms, "10000", NULL, 1,
	       DAY_MS),
	CF_ABS("slot.max.retries", CF_INT, slot_max_retries, "6", NULL, 0, 1000000),
	CF_ABS("slot.failover", CF_BOOL, slot_failover, "false", NULL, 0, 0),
	CF_ABS("slot.retry.delay.ms", CF_INT, slot_retry_delay_ms, "10000", NULL, 0, HOUR_MS),
	CF_ABS("heartbeat.interval.ms", CF_INT, heartbeat_interval_ms, "0", NULL, 0, DAY_MS),
	CF_ABS("heartbeat.action.query", CF_STR, heartbeat_action_query, NULL, NULL, 0, 0),
	CF_ABS("topic.heartbeat.prefix", CF_STR, topic_heartbeat_prefix, "__debezium-heartbeat",
	       NULL, 0, 0),
	CF_ABS("topic.delimiter", CF_STR, topic_delimiter, ".", NULL, 0, 0),
	CF_ABS("database.initial.statements", CF_STR, database_initial_statements, NULL, NULL, 0,
	       0),
	CF_ABS("database.query.timeout.ms", CF_INT, database_query_timeout_ms, "600000", NULL, 0,
	       DAY_MS),
	CF_ABS("extended.headers.enabled", CF_BOOL, extended_headers, "true", NULL, 0, 0),
	CF_ABS("time.precision.mode", CF_ENUM, time_precision_mode, "adaptive",
	       "adaptive|adaptive_time_microseconds|connect|isostring|microseconds|nanoseconds", 0,
	       0),
	CF_ABS("decimal.handling.mode", CF_ENUM, decimal_handling_mode, "precise",
	       "precise|double|string", 0, 0),
	CF_ABS("binary.handling.mode", CF_ENUM, binary_handling_mode, "bytes",
	       "bytes|base64|base64-url-safe|hex", 0, 0),
	CF_ABS("hstore.handling.mode", CF_ENUM, hstore_handling_mode, "json", "json|map", 0, 0),
	CF_ABS("interval.handling.mode", CF_ENUM, interval_handling_mode, "numeric",
	       "numeric|string", 0, 0),
	CF_ABS("schema.name.adjustment.mode", CF_ENUM, schema_name_adjustment_mode, "none",
	       "none|avro|avro_unicode", 0, 0),
	CF_ABS("money.fraction.digits", CF_INT, money_fraction_digits, "2", NULL, 0, 100),
	CF_ABS("include.unknown.datatypes", CF_BOOL, include_unknown_datatypes, "false", NULL, 0,
	       0),
};

const struct cf_key config_outboxd_keys[] = {
	CF_ABS("outboxd.slot.create", CF_BOOL, slot_create, "false", NULL, 0, 0),
	/* libpq's; with a database.hostname list, read-write finds the primary after a failover */
	CF_PGKEY("outboxd.database.target.session.attrs", "target_session_attrs", NULL),
	CF_ABS("outboxd.http.port", CF_INT, http_port, "8080", NULL, 0, 65535),
	CF_ABS("outboxd.http.bind", CF_STR, http_bind, "0.0.0.0", NULL, 0, 0),
	CF_ABS("outboxd.shutdown.flush.ms", CF_INT, shutdown_flush_ms, "10000", NULL, 0, HOUR_MS),
	CF_ABS("outboxd.restart.backoff.max.ms", CF_INT, restart_backoff_max_ms, "30000", NULL, 1,
	       HOUR_MS),
	CF_ABS("outboxd.halt.stay", CF_BOOL, halt_stay, "false", NULL, 0, 0),
	CF_ABS("outboxd.failover.unsafe", CF_BOOL, failover_unsafe, "false", NULL, 0, 0),
	CF_ABS("outboxd.halt.after.failures", CF_INT, halt_after_failures, "5", NULL, 1, 1000),
	CF_ABS("outboxd.stall.warn.ms", CF_INT, stall_warn_ms, "60000", NULL, 1000, DAY_MS),
	CF_ABS("outboxd.send.at.once.ms", CF_INT, send_at_once_ms, "100", NULL, 0, HOUR_MS),
	CF_ABS("outboxd.read.pause.ms", CF_INT, read_pause_ms, "2", NULL, 0, 1000),
	CF_ABS("outboxd.health.live.ms", CF_INT, health_live_ms, "120000", NULL, 1000, DAY_MS),
	CF_ABS("outboxd.slot.poll.ms", CF_INT, slot_poll_ms, "10000", NULL, 0, DAY_MS),
	CF_ABS("outboxd.cleanup.retention", CF_STR, cleanup_retention, NULL, NULL, 0, 0),
	CF_ABS("outboxd.cleanup.created.column", CF_STR, cleanup_created_column, "created_at", NULL,
	       0, 0),
	CF_ABS("outboxd.cleanup.interval.ms", CF_INT, cleanup_interval_ms, "60000", NULL, 100,
	       DAY_MS),
	CF_ABS("outboxd.cleanup.partitions", CF_ENUM, cleanup_partitions, "off", "off|detach|drop",
	       0, 0),
	CF_ABS("outboxd.cleanup.batch.size", CF_INT, cleanup_batch_size, "1000", NULL, 1, 100000),
	CF_ABS("outboxd.log.format", CF_ENUM, log_format, "text", "text|json", 0, 0),
	CF_ABS("outboxd.kafka.queue.records", CF_INT, kafka_queue_records, "1000", NULL, 1,
	       10000000),
	CF_ABS("outboxd.kafka.stats.ms", CF_INT, kafka_stats_ms, "10000", NULL, 0, DAY_MS),
	CF_ABS("outboxd.kafka.auth.grace.ms", CF_INT, kafka_auth_grace_ms, "60000", NULL, 0,
	       HOUR_MS),
	CF_ABS("outboxd.errors.deadletterqueue.topic.name", CF_STR, dlq_topic, NULL, NULL, 0, 0),
	CF_ABS("outboxd.java.double.format", CF_ENUM, java_double_format, "jdk17", "jdk17|shortest",
	       0, 0),
	CF_ABS("outboxd.poll.mode", CF_ENUM, poll_mode, "ordered", "ordered|unordered", 0, 0),
	CF_ABS("outboxd.poll.partitions", CF_INT, poll_partitions, "16", NULL, 1, 1024),
	CF_ABS("outboxd.poll.interval.ms", CF_INT, poll_interval_ms, "1000", NULL, 10, HOUR_MS),
	CF_ABS("outboxd.poll.batch.size", CF_INT, poll_batch_size, "500", NULL, 1, 100000),
	CF_ABS("outboxd.poll.batch.max.bytes", CF_INT, poll_batch_max_bytes, "16777216", NULL,
	       65536, INT64_C(1073741824)),
	CF_ABS("outboxd.poll.claim.timeout.ms", CF_INT, poll_claim_timeout_ms, "10000", NULL, 100,
	       HOUR_MS),
	CF_ABS("outboxd.poll.order.column", CF_STR, poll_order_column, "seq", NULL, 0, 0),
	CF_ABS("outboxd.poll.published.column", CF_STR, poll_published_column, "published_at", NULL,
	       0, 0),
	CF_ABS("outboxd.poll.after", CF_ENUM, poll_after, "mark", "mark|delete", 0, 0),
	CF_ABS("outboxd.poll.notify.channel", CF_STR, poll_notify_channel, "outboxd_outbox", NULL,
	       0, 0),
	CF_ABS("outboxd.poll.created.column", CF_STR, poll_created_column, "created_at", NULL, 0,
	       0),
	CF_ABS("outboxd.poll.stats.interval.ms", CF_INT, poll_stats_interval_ms, "5000", NULL, 100,
	       HOUR_MS),
	CF_ABS("outboxd.poll.retention", CF_STR, poll_retention, NULL, NULL, 0, 0),
	CF_ABS("outboxd.poll.archive.table", CF_STR, poll_archive_table, NULL, NULL, 0, 0),
	CF_ABS("outboxd.poll.cleanup.interval.ms", CF_INT, poll_cleanup_interval_ms, "60000", NULL,
	       100, DAY_MS),
	CF_ABS("outboxd.poll.cleanup.batch.size", CF_INT, poll_cleanup_batch_size, "1000", NULL, 1,
	       100000),
};

/*
 * The fields no single row sets: the loader assembles them from several keys, or from the
 * converter, transform and producer keys config_kafka.c reads. Freed from this table, as the
 * rows' own fields are freed from theirs, so no field is ever missed by a hand list.
 */
const struct cf_assembled config_assembled[] = {
#define CF_OWN_STR(field)                                                                          \
	{                                                                                          \
		offsetof(struct config, field), false                                              \
	}
#define CF_OWN_KV(field)                                                                           \
	{                                                                                          \
		offsetof(struct config, field), true                                               \
	}
	CF_OWN_STR(name),
	CF_OWN_STR(plugin_name),
	CF_OWN_STR(snapshot_mode),
	CF_OWN_STR(bootstrap_servers),
	CF_OWN_STR(key_converter),
	CF_OWN_STR(value_converter),
	CF_OWN_STR(header_converter),
	CF_OWN_STR(transform_alias),
	CF_OWN_STR(errors_tolerance),
	CF_OWN_STR(heartbeat_topic),
	CF_OWN_KV(pg_conn),
	CF_OWN_KV(connector),
	CF_OWN_KV(key_converter_opts),
	CF_OWN_KV(value_converter_opts),
	CF_OWN_KV(header_converter_opts),
	CF_OWN_KV(transform),
	CF_OWN_KV(producer),
	CF_OWN_KV(ignored),
	CF_OWN_KV(librdkafka),
#undef CF_OWN_STR
#undef CF_OWN_KV
};

const size_t config_nconnector_keys =
	sizeof(config_connector_keys) / sizeof(config_connector_keys[0]);
const size_t config_noutboxd_keys = sizeof(config_outboxd_keys) / sizeof(config_outboxd_keys[0]);
const size_t config_nassembled = sizeof(config_assembled) / sizeof(config_assembled[0]);
