/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_CONFIG_H
#define OUTBOXD_CONFIG_H

/*
 * Folder config/: the files a Debezium user already has, read into one struct config: the three
 * formats, providers, the key vocabulary and its classification, librdkafka settings translated.
 * It may call: util, pg, connect.
 */

/*
 * The configuration files a Debezium user already has (DESIGN.md "Configuration") turned into
 * one immutable struct config. Every key is classified: honoured (a field below), accepted
 * without effect (listed in ->ignored, logged once at start-up), rejected (an error naming
 * file:line, the key, the reason and the fix) or unknown (an error: a typo). Error messages never
 * contain a secret value. Pure: reads the files, logs nothing.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/config/cfgsrc.h"
#include "outboxd/connect/router.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/kv.h"

enum config_flavour {
	CONFIG_CONNECT =
		1,	   /* Kafka Connect worker + connector (SimpleHeaderConverter headers...) */
	CONFIG_SERVER = 2, /* Debezium Server (JSON-converted headers, no partition/timestamp) */
};

struct config {
	enum config_flavour flavour;
	char *name; /* connector name (Connect "name"); "kafka" for Server (its engine name) */

	/* PostgreSQL */
	struct kv pg_conn;	/* libpq keywords for PQconnectdbParams: host, port, user, password,
				  dbname, sslmode, sslcert, sslkey, sslrootcert, sslpassword,
				  connect_timeout, keepalives, application_name=outboxd */
	char *slot_name;	/* slot.name, default "debezium" */
	char *publication_name; /* publication.name, default "dbz_publication" */
	char *plugin_name;	/* always "pgoutput" */
	bool plugin_name_set; /* false: absent, which Debezium reads as decoderbufs: check the slot */
	char *topic_prefix;   /* topic.prefix, required */
	char *table_include_list; /* NULL = every published table; Java regexes, comma list */
	char *table_exclude_list; /* NULL = none; never set together with the include list */
	char *schema_include_list;
	char *schema_exclude_list;
	char *message_prefix_include_list; /* logical decoding messages published by prefix */
	char *message_prefix_exclude_list;
	char *snapshot_mode;		   /* "initial" (default) or "no_data", lower case */
	int64_t status_update_interval_ms; /* 10000 */
	int64_t slot_max_retries;	   /* 6 */
	bool slot_failover;   /* false; true: slots outboxd creates are failover slots (17+) */
	bool failover_unsafe; /* outboxd.failover.unsafe: stream from a failover slot pgfailover
				 finds unsafe (false: exit 2) */
	int64_t slot_retry_delay_ms;	   /* 10000 */
	int64_t heartbeat_interval_ms;	   /* 0 = off */
	char *heartbeat_action_query;	   /* NULL = none */
	char *topic_heartbeat_prefix;	   /* "__debezium-heartbeat" */
	char *topic_delimiter;		   /* "." */
	char *database_initial_statements; /* NULL = none; ';'-separated, ";;" = literal ';' */
	int64_t database_query_timeout_ms; /* 600000 */
	bool extended_headers;		   /* extended.headers.enabled, true */
	/* column type mapping (changes key, header and envelope bytes) */
	char *time_precision_mode;	   /* "adaptive" */
	char *decimal_handling_mode;	   /* "precise" */
	char *binary_handling_mode;	   /* "bytes" */
	char *hstore_handling_mode;	   /* "json" */
	char *interval_handling_mode;	   /* "numeric" */
	char *schema_name_adjustment_mode; /* "none" */
	int64_t money_fraction_digits;	   /* 2 */
	bool include_unknown_datatypes;	   /* false */
	struct kv connector; /* every connector-level key as given (Connect names), for reference */

	/* Kafka */
	char *bootstrap_servers; /* not repeated in ->producer */
	char *key_converter; /* Java class names, e.g. org.apache.kafka.connect.json.JsonConverter */
	char *value_converter;
	char *header_converter;
	struct kv key_converter_opts; /* prefix stripped: "schemas.enable" */
	struct kv value_converter_opts;
	struct kv header_converter_opts;
	char *transform_alias;	/* the one EventRouter's alias */
	struct kv transform;	/* its options, prefix stripped ("route.by.field"); no "type" */
	struct kv producer;	/* librdkafka settings the user set (translated); every entry is
					explicit, so the producer warns when one overrides a forced
					guarantee */
	char *errors_tolerance; /* "none" or "all" (only with a dead-letter topic) */

	/* derived once from the keys above, so no module assembles them itself */
	struct kv librdkafka;  /* ->producer plus bootstrap.servers: what the producer takes */
	char *heartbeat_topic; /* topic.heartbeat.prefix + topic.delimiter + topic.prefix */

	/* outboxd.* (DESIGN.md table) */
	bool slot_create;		/* false */
	int64_t http_port;		/* 8080, 0 = off */
	char *http_bind;		/* "0.0.0.0"; "::" every address of both families */
	int64_t shutdown_flush_ms;	/* 10000 */
	int64_t restart_backoff_max_ms; /* 30000 */
	int64_t halt_after_failures;	/* 5 */
	bool halt_stay;		 /* false: a halt exits; true: stays up, not ready, until SIGTERM */
	int64_t stall_warn_ms;	 /* 60000 */
	int64_t send_at_once_ms; /* 100: send at once while live (sendnow.h); 0 = never */
	int64_t read_pause_ms;	 /* 2: read in bursts while behind (sendnow.h); 0 = never */
	int64_t health_live_ms;	 /* 120000 */
	int64_t slot_poll_ms;	 /* 10000: pg_replication_slots read for metrics, 0 = off */
	char *cleanup_retention; /* outboxd.cleanup.*: `run` deletes confirmed rows; NULL off */
	char *cleanup_created_column; /* "created_at" */
	int64_t cleanup_interval_ms;  /* 60000 */
	int64_t cleanup_batch_size;   /* 1000 */
	char *cleanup_partitions;     /* "off", "detach" or "drop": expired range partitions */
	char *log_format;	      /* "text" or "json" (OUTBOXD_LOG_FORMAT) */
	int64_t kafka_queue_records;  /* 1000: librdkafka's queue.buffering.max.messages */
	int64_t kafka_stats_ms;	      /* 10000: librdkafka's statistics.interval.ms, 0 = off */
	int64_t kafka_auth_grace_ms; /* 60000: a broker's refusal retried this long (authgrace.h) */
	char *dlq_topic;	     /* outboxd.errors.deadletterqueue.topic.name, NULL = halt */
	bool topic_creation_enable;  /* the worker's topic.creation.enable (true) */
	char *java_double_format;    /* "jdk17" or "shortest" */
	/* outboxd.poll.* (`outboxd poll`, README "Polling publisher") */
	char *poll_mode;		  /* "ordered" or "unordered" (SKIP LOCKED) */
	int64_t poll_partitions;	  /* 16: rows hashed by aggregateid, one owner each */
	int64_t poll_interval_ms;	  /* 1000: the fallback poll (NOTIFY wakes at once) */
	int64_t poll_batch_size;	  /* 500 rows per owned partition per query */
	int64_t poll_batch_max_bytes;	  /* 16 MiB: a batch read holds about this much */
	int64_t poll_claim_timeout_ms;	  /* 10 s: unordered, a claim's rows locked at most */
	char *poll_order_column;	  /* "seq" */
	char *poll_published_column;	  /* "published_at" */
	char *poll_after;		  /* "mark" or "delete" */
	char *poll_notify_channel;	  /* "outboxd_outbox" */
	char *poll_created_column;	  /* "created_at": the age of the oldest unpublished row */
	int64_t poll_stats_interval_ms;	  /* 5000: the count and age of the unpublished rows */
	char *poll_retention;		  /* a PostgreSQL interval; NULL: no cleanup */
	char *poll_archive_table;	  /* NULL: cleanup deletes; else moves rows there */
	int64_t poll_cleanup_interval_ms; /* 60000 */
	int64_t poll_cleanup_batch_size;  /* 1000 rows per cleanup transaction */

	/* keys accepted without effect: key as written -> reason, origin file:line; log once */
	struct kv ignored;
};

/**
 * config_load() - read and validate the configuration.
 * @paths: borrowed; @npaths files: a Connect worker .properties plus a connector .properties
 *         or JSON (any order), or one Debezium Server application.properties.
 * @envp: borrowed; the environment (environ), NULL-terminated; may be NULL.
 * @ret: on success a new config, caller frees with config_free().
 *
 * Return: 0, or -EINVAL (-errno for unreadable files) with one line in @errbuf:
 * "file:line: key: reason; fix" or "file:line: unknown key ...".
 */
int config_load(const char *const *paths, int npaths, char *const *envp, struct config **ret,
		char *errbuf, size_t errlen);

/**
 * config_load_src() - config_load() of sources already read (cfgsrc_load(), or built in memory
 * by the configuration reference's probe).
 * @src: borrowed.
 */
int config_load_src(const struct cfgsrc *src, struct config **ret, char *errbuf, size_t errlen);

/**
 * config_router() - the router's settings as @cfg gives them. Every pointer borrows from @cfg
 * (and @run_id), which must outlive the call to router_new().
 * @run_id: borrowed; the __debezium.context.runId of this start.
 */
struct router_config config_router(const struct config *cfg, const char *run_id);

/* config_free() - free @cfg; NULL is allowed. */
void config_free(struct config *cfg);

/* config_ignored() - the keys accepted without effect (key, reason, origin). Borrowed. */
const struct kv *config_ignored(const struct config *cfg);

/**
 * config_describe() - append a human-readable summary to @out, one "key = value" per line,
 * secrets (secret_key(), util/secret.h) shown as "(set)". For `outboxd check`.
 */
void config_describe(const struct config *cfg, struct buf *out);

#endif
