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
	CF_PGKEY(
		"database.hostname", "host", NULL,
		"the PostgreSQL server: a host name or address, or a comma-separated list tried in turn (with `outboxd.database.target.session.attrs=read-write` it finds the primary after a failover)"),
	CF_PGKEY("database.port", "port", "5432",
		 "the server's port (one per host of a list, or one for all)"),
	CF_PGKEY(
		"database.user", "user", NULL,
		"the role outboxd logs in as: `LOGIN REPLICATION` for `run` (see [Setting up PostgreSQL](postgresql.md#setting-up-postgresql))"),
	CF_PGKEY(
		"database.password", "password", NULL,
		"its password; never logged (`${file:...}` or `${env:...}` keep it out of the file)"),
	CF_PGKEY("database.dbname", "dbname", NULL, "the database that holds the outbox table"),
	CF_PGKEY(
		"database.sslmode", "sslmode", "prefer",
		"libpq's `sslmode`: `disable`, `allow`, `prefer`, `require`, `verify-ca`, `verify-full`"),
	CF_PGKEY("database.sslcert", "sslcert", NULL,
		 "the client certificate (PEM) for certificate authentication"),
	CF_PGKEY("database.sslkey", "sslkey", NULL, "its private key (PEM)"),
	CF_PGKEY(
		"database.sslrootcert", "sslrootcert", NULL,
		"the CA (PEM) that signed the server's certificate, for `verify-ca` and `verify-full`"),
	CF_PGKEY("database.sslpassword", "sslpassword", NULL,
		 "the passphrase of an encrypted `database.sslkey`; never logged"),
	/* PgJDBC's default */
	CF_PGKEY("database.connectTimeout", "connect_timeout", "10",
		 "seconds a connection attempt may take (libpq's `connect_timeout`)"),
	CF_PGKEY("database.tcpKeepAlive", "keepalives", "true",
		 "TCP keepalives on the connections to PostgreSQL"),
	CF_ABS("slot.name", CF_STR, slot_name, "debezium", NULL, 0, 0,
	       "the logical replication slot `run` streams from (pgoutput)"),
	CF_ABS("publication.name", CF_STR, publication_name, "dbz_publication", NULL, 0, 0,
	       "the publication the slot decodes with; outboxd never creates it (sql/publication.sql)"),
	CF_ABS("topic.prefix", CF_STR, topic_prefix, NULL, NULL, 0, 0,
	       "the logical server name: the `__debezium.context.connectorLogicalName` header, the heartbeat topic's suffix, the prefix of logical-message topics; required"),
	CF_ABS("table.include.list", CF_STR, table_include_list, NULL, NULL, 0, 0,
	       "regular expressions (Java's) over `schema.table`: the tables whose inserts are published"),
	CF_ABS("table.exclude.list", CF_STR, table_exclude_list, NULL, NULL, 0, 0,
	       "regular expressions over `schema.table`: tables left out"),
	CF_ABS("schema.include.list", CF_STR, schema_include_list, NULL, NULL, 0, 0,
	       "regular expressions over schema names: the schemas whose tables are published"),
	CF_ABS("schema.exclude.list", CF_STR, schema_exclude_list, NULL, NULL, 0, 0,
	       "regular expressions over schema names: schemas left out"),
	CF_ABS("message.prefix.include.list", CF_STR, message_prefix_include_list, NULL, NULL, 0, 0,
	       "the prefixes of logical decoding messages (`pg_logical_emit_message`) published to `<topic.prefix>.message`"),
	CF_ABS("message.prefix.exclude.list", CF_STR, message_prefix_exclude_list, NULL, NULL, 0, 0,
	       "the prefixes of logical decoding messages left out"),
	CF_ABS("status.update.interval.ms", CF_INT, status_update_interval_ms, "10000", NULL, 1,
	       DAY_MS,
	       "how often `run` sends a status update to the walsender (never less often than a quarter of the server's `wal_sender_timeout`; see [failures](failures.md#delivery-guarantee-and-failure-handling))"),
	CF_ABS("slot.max.retries", CF_INT, slot_max_retries, "6", NULL, 0, 1000000,
	       "how often a slot found active for another process is tried again before exit 2"),
	CF_ABS("slot.failover", CF_BOOL, slot_failover, "false", NULL, 0, 0,
	       "the slots outboxd creates are failover slots, and `outboxd check` prints its failover lines (PostgreSQL 17+; see [Failover](postgresql.md#failover))"),
	CF_ABS("slot.retry.delay.ms", CF_INT, slot_retry_delay_ms, "10000", NULL, 0, HOUR_MS,
	       "the wait between those tries"),
	CF_ABS("heartbeat.interval.ms", CF_INT, heartbeat_interval_ms, "0", NULL, 0, DAY_MS,
	       "Debezium's heartbeat records this often; 0: none"),
	CF_ABS("heartbeat.action.query", CF_STR, heartbeat_action_query, NULL, NULL, 0, 0,
	       "a statement run at each heartbeat on the ordinary connection (its errors are logged; a missing table halts, as in Debezium)"),
	CF_ABS("topic.heartbeat.prefix", CF_STR, topic_heartbeat_prefix, "__debezium-heartbeat",
	       NULL, 0, 0, "the heartbeat topic is `<prefix><topic.delimiter><topic.prefix>`"),
	CF_ABS("topic.delimiter", CF_STR, topic_delimiter, ".", NULL, 0, 0,
	       "the delimiter of the heartbeat and logical-message topic names"),
	CF_ABS("database.initial.statements", CF_STR, database_initial_statements, NULL, NULL, 0, 0,
	       "statements run on each ordinary connection outboxd opens, separated by `;` (`;;` for a literal `;`)"),
	CF_ABS("database.query.timeout.ms", CF_INT, database_query_timeout_ms, "600000", NULL, 0,
	       DAY_MS, "the `statement_timeout` of outboxd's own queries; 0: none"),
	CF_ABS("extended.headers.enabled", CF_BOOL, extended_headers, "true", NULL, 0, 0,
	       "the `__debezium.context.*` headers on every record"),
	CF_ABS("time.precision.mode", CF_ENUM, time_precision_mode, "adaptive",
	       "adaptive|adaptive_time_microseconds|connect|isostring|microseconds|nanoseconds", 0,
	       0,
	       "how `date`, `time` and `timestamp` columns are written into an expanded payload or additional fields, as Debezium does"),
	CF_ABS("decimal.handling.mode", CF_ENUM, decimal_handling_mode, "precise",
	       "precise|double|string", 0, 0,
	       "how `numeric` columns are written: a Decimal's bytes, a double, or the text"),
	CF_ABS("binary.handling.mode", CF_ENUM, binary_handling_mode, "bytes",
	       "bytes|base64|base64-url-safe|hex", 0, 0, "how `bytea` columns are written"),
	CF_ABS("hstore.handling.mode", CF_ENUM, hstore_handling_mode, "json", "json|map", 0, 0,
	       "how `hstore` columns are written: a JSON string or a map"),
	CF_ABS("interval.handling.mode", CF_ENUM, interval_handling_mode, "numeric",
	       "numeric|string", 0, 0,
	       "how `interval` columns are written: microseconds or the ISO 8601 text"),
	CF_ABS("schema.name.adjustment.mode", CF_ENUM, schema_name_adjustment_mode, "none",
	       "none|avro|avro_unicode", 0, 0,
	       "how schema names are adjusted (Avro's rules) in the records' schemas"),
	CF_ABS("money.fraction.digits", CF_INT, money_fraction_digits, "2", NULL, 0, 100,
	       "the scale of `money` columns written as a Decimal"),
	CF_ABS("include.unknown.datatypes", CF_BOOL, include_unknown_datatypes, "false", NULL, 0, 0,
	       "columns of types Debezium has no converter for are written as their bytes instead of halting"),
};

const struct
	cf_key
		config_outboxd_keys
			[] = {
				CF_ABS("outboxd.slot.create", CF_BOOL, slot_create, "false", NULL,
				       0, 0,
				       "`run` may create a missing slot (and, with `snapshot.mode=initial`, publish the rows already in the outbox from its exported snapshot)"),
				/* libpq's; with a database.hostname list, read-write finds the primary after a failover */
				CF_PGKEY(
					"outboxd.database.target.session.attrs",
					"target_session_attrs", NULL,
					"libpq's `target_session_attrs`: with a `database.hostname` list, `read-write` connects to the primary"),
				CF_ABS("outboxd.http.port", CF_INT, http_port, "8080", NULL, 0,
				       65535,
				       "`/metrics`, `/health`, `/health/live` and `/health/ready`; 0 turns them off"),
				CF_ABS("outboxd.http.bind", CF_STR, http_bind, "0.0.0.0", NULL, 0,
				       0,
				       "a numeric address that port listens on: `0.0.0.0` every IPv4 address, `::` every address of both families, or one address of the host (`127.0.0.1`, `::1`, `10.0.0.5`); a host name is exit 2; on a host without IPv6, `::` listens on `0.0.0.0` with a warning"),
				CF_ABS("outboxd.shutdown.flush.ms", CF_INT, shutdown_flush_ms,
				       "10000", NULL, 0, HOUR_MS,
				       "bound on the producer flush at SIGTERM"),
				CF_ABS("outboxd.restart.backoff.max.ms", CF_INT,
				       restart_backoff_max_ms, "30000", NULL, 1, HOUR_MS,
				       "cap of the backoff between pipeline restarts (`run`, `poll`, the initial snapshot, creating a slot): 0.5 s, doubling, never over the cap; 0.5 s again after a session that ran a minute"),
				CF_ABS("outboxd.halt.stay", CF_BOOL, halt_stay, "false", NULL, 0, 0,
				       "after a halt, stay up (alive, not ready, the reason's code on `/health`, `outboxd_halts_total{reason}` on `/metrics`) until SIGTERM, then exit with the halt's code, instead of exiting at once"),
				CF_ABS("outboxd.failover.unsafe", CF_BOOL, failover_unsafe, "false",
				       NULL, 0, 0,
				       "stream from a failover slot whose primary lacks what makes a failover safe (`synchronized_standby_slots`; see [Failover](postgresql.md#failover)), with a warning, instead of exit 2"),
				CF_ABS("outboxd.halt.after.failures", CF_INT, halt_after_failures,
				       "5", NULL, 1, 1000,
				       "a transaction (`poll`: a row) whose delivery the broker refuses this many restarts in a row: its row goes to the dead-letter topic if one is set (once; the same row failing as often again halts), else a halt (exit 1) naming the row; a restart for another reason starts the count over"),
				CF_ABS("outboxd.stall.warn.ms", CF_INT, stall_warn_ms, "60000",
				       NULL, 1000, DAY_MS,
				       "records wait this long without a delivery report: one warning naming the broker state, `outboxd_stalled` 1, `/health` 503"),
				CF_ABS("outboxd.send.at.once.ms", CF_INT, send_at_once_ms, "100",
				       NULL, 0, HOUR_MS,
				       "`run` sends produced records at once (a short flush, at most every 2 ms) while it has read all the server sent and the last transaction committed this recently; 0 turns it off and `linger.ms` always batches"),
				CF_ABS("outboxd.read.pause.ms", CF_INT, read_pause_ms, "2", NULL, 0,
				       1000,
				       "`run`, while behind the server, waits this long after it has read everything the server sent before it reads again, so that the stream arrives in bursts; 0 reads each message as it arrives"),
				CF_ABS("outboxd.health.live.ms", CF_INT, health_live_ms, "120000",
				       NULL, 1000, DAY_MS,
				       "`/health/live` answers 503 when the main loop has not turned for this long"),
				CF_ABS("outboxd.slot.poll.ms", CF_INT, slot_poll_ms, "10000", NULL,
				       0, DAY_MS,
				       "`run` reads its slot's row of `pg_replication_slots` this often for the `outboxd_slot_*` metrics; 0 turns the reads off"),
				CF_ABS("outboxd.cleanup.retention", CF_STR, cleanup_retention, NULL, NULL, 0, 0, "a PostgreSQL interval (`7 days`): `run` deletes outbox rows whose events are confirmed and that are older than this (see [Cleanup](operating.md#cleanup-of-delivered-rows)); unset: no cleanup"),
				CF_ABS("outboxd.cleanup.created.column", CF_STR,
				       cleanup_created_column, "created_at", NULL, 0, 0,
				       "the insert time the retention is measured from"),
				CF_ABS("outboxd.cleanup.interval.ms", CF_INT, cleanup_interval_ms,
				       "60000", NULL, 100, DAY_MS, "between cleanup cycles"),
				CF_ABS("outboxd.cleanup.partitions", CF_ENUM, cleanup_partitions,
				       "off", "off|detach|drop", 0, 0,
				       "a range partition on the created column whose upper bound is older than the retention is dropped or detached whole once all its rows are confirmed"),
				CF_ABS("outboxd.cleanup.batch.size", CF_INT, cleanup_batch_size,
				       "1000", NULL, 1, 100000, "rows per DELETE statement"),
				CF_ABS("outboxd.log.format", CF_ENUM, log_format, "text",
				       "text|json", 0, 0,
				       "the log's format; `OUTBOXD_LOG_FORMAT` sets it from the first line"),
				CF_ABS("outboxd.kafka.queue.records", CF_INT, kafka_queue_records,
				       "1000", NULL, 1, 10000000,
				       "librdkafka's `queue.buffering.max.messages`: the records produced and not yet acknowledged; more memory, more throughput to a distant broker"),
				CF_ABS("outboxd.kafka.stats.ms", CF_INT, kafka_stats_ms, "10000",
				       NULL, 0, DAY_MS,
				       "librdkafka's `statistics.interval.ms`, for the `outboxd_kafka_*` metrics (a `statistics.interval.ms` given as a producer setting wins); 0 turns them off"),
				CF_ABS("outboxd.kafka.auth.grace.ms", CF_INT, kafka_auth_grace_ms,
				       "60000", NULL, 0, HOUR_MS,
				       "how long a broker's refusal of outboxd's login or certificates is retried before exit 2 (a broker restarted without its SCRAM credentials, a JWKS or certificate rotation); 0: exit 2 at the first refusal"),
				CF_ABS("outboxd.errors.deadletterqueue.topic.name", CF_STR,
				       dlq_topic, NULL, NULL, 0, 0,
				       "poison rows go to this topic instead of halting"),
				CF_ABS("outboxd.java.double.format", CF_ENUM, java_double_format,
				       "jdk17", "jdk17|shortest", 0, 0,
				       "how doubles and floats are printed: `jdk17` (Java 17's `Double.toString`, as Debezium 3.6.1 on Java 17 writes) or `shortest` (Java 19+; the default with a Debezium Server file, which needs Java 21)"),
				CF_ABS("outboxd.poll.mode", CF_ENUM, poll_mode, "ordered",
				       "ordered|unordered", 0, 0,
				       "`ordered`: partitions owned through advisory locks, per-aggregate order; `unordered`: batches claimed with `FOR UPDATE SKIP LOCKED`, no order"),
				CF_ABS("outboxd.poll.partitions", CF_INT, poll_partitions, "16",
				       NULL, 1, 1024,
				       "rows go to partition `(COALESCE(hashtext(aggregateid::text), 0) & 2147483647) % N` (a NULL key: partition 0); each partition has one owner session; may change in a rolling update"),
				CF_ABS("outboxd.poll.interval.ms", CF_INT, poll_interval_ms, "1000",
				       NULL, 10, HOUR_MS,
				       "the fallback poll when no NOTIFY arrives; also how often partitions held by another session are tried again"),
				CF_ABS("outboxd.poll.batch.size", CF_INT, poll_batch_size, "500",
				       NULL, 1, 100000,
				       "rows per owned partition per query (`unordered`: rows per claim)"),
				CF_ABS("outboxd.poll.batch.max.bytes", CF_INT, poll_batch_max_bytes,
				       "16777216", NULL, 65536, INT64_C(1073741824),
				       "what one batch holds at most (about: the read stops once it is reached, and holds one row at least); a batch cut short is followed by the next at once"),
				CF_ABS("outboxd.poll.claim.timeout.ms", CF_INT,
				       poll_claim_timeout_ms, "10000", NULL, 100, HOUR_MS,
				       "`unordered` only: the longest a claim keeps its rows locked (and its transaction open) while its records wait for their reports"),
				CF_ABS("outboxd.poll.order.column", CF_STR, poll_order_column,
				       "seq", NULL, 0, 0, "the ordering column"),
				CF_ABS("outboxd.poll.published.column", CF_STR,
				       poll_published_column, "published_at", NULL, 0, 0,
				       "set to `statement_timestamp()` once the row is acknowledged"),
				CF_ABS("outboxd.poll.after", CF_ENUM, poll_after, "mark",
				       "mark|delete", 0, 0,
				       "after the acknowledgement: set the published column, or delete the row"),
				CF_ABS("outboxd.poll.notify.channel", CF_STR, poll_notify_channel,
				       "outboxd_outbox", NULL, 0, 0,
				       "the channel outboxd LISTENs on (the trigger's)"),
				CF_ABS("outboxd.poll.created.column", CF_STR, poll_created_column,
				       "created_at", NULL, 0, 0,
				       "the row's creation time, for `outboxd_poll_oldest_unpublished_age_seconds` (a table without it: the gauge is absent)"),
				CF_ABS("outboxd.poll.stats.interval.ms", CF_INT,
				       poll_stats_interval_ms, "5000", NULL, 100, HOUR_MS,
				       "how often the unpublished rows are counted for `/metrics`"),
				CF_ABS("outboxd.poll.retention", CF_STR, poll_retention, NULL, NULL,
				       0, 0,
				       "a PostgreSQL interval (`7 days`): published rows older than this (by the published column) are deleted, or moved to the archive table; unset: no cleanup"),
				CF_ABS("outboxd.poll.archive.table", CF_STR, poll_archive_table,
				       NULL, NULL, 0, 0,
				       "`[schema.]table`: cleanup moves rows there (same columns) instead of deleting them; needs `outboxd.poll.retention`"),
				CF_ABS("outboxd.poll.cleanup.interval.ms", CF_INT,
				       poll_cleanup_interval_ms, "60000", NULL, 100, DAY_MS,
				       "how often the cleanup runs"),
				CF_ABS("outboxd.poll.cleanup.batch.size", CF_INT,
				       poll_cleanup_batch_size, "1000", NULL, 1, 100000,
				       "rows per cleanup statement; each statement is its own short transaction"),
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
