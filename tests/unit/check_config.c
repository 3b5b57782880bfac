/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outboxd/config/config.h"
#include "outboxd/config/rdconf.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/kv.h"
#include "outboxd/util/mem.h"
#include "testdir.h"

static const char WORKER[] = "bootstrap.servers=kafka:9092\n"
			     "key.converter=org.apache.kafka.connect.json.JsonConverter\n"
			     "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
			     "key.converter.schemas.enable=false\n"
			     "value.converter.schemas.enable=true\n"
			     "offset.storage.file.filename=/tmp/offsets\n"
			     "offset.flush.interval.ms=10000\n";

static const char CONNECTOR[] =
	"name=outbox-connector\n"
	"connector.class=io.debezium.connector.postgresql.PostgresConnector\n"
	"database.hostname=db\n"
	"database.user=relay\n"
	"database.password=hunter2\n"
	"database.dbname=app\n"
	"topic.prefix=app\n"
	"plugin.name=pgoutput\n"
	"table.include.list=public.outbox\n"
	"transforms=outbox\n"
	"transforms.outbox.type=io.debezium.transforms.outbox.EventRouter\n"
	"transforms.outbox.route.by.field=aggregatetype\n";

/* Load a worker file and a connector file with @extra appended to the connector. */
static int
load_pair(const char *worker_extra, const char *connector_extra, char *const *envp,
	  struct config **ret, char *err, size_t errlen)
{
	struct buf w = BUF_INIT, c = BUF_INIT;
	const char *paths[2];
	int r;

	buf_add_fmt(&w, "%s%s", WORKER, worker_extra);
	buf_add_fmt(&c, "%s%s", CONNECTOR, connector_extra);
	paths[0] = testdir_put("worker.properties", buf_cstr(&w));
	paths[1] = testdir_put("connector.properties", buf_cstr(&c));
	r = config_load((const char *const *)paths, 2, envp, ret, err, errlen);
	buf_fini(&w);
	buf_fini(&c);
	return r;
}

static struct config *
pair_ok(const char *worker_extra, const char *connector_extra, char *const *envp)
{
	struct config *cfg = NULL;
	char err[512] = "";

	ck_assert_msg(load_pair(worker_extra, connector_extra, envp, &cfg, err, sizeof(err)) == 0,
		      "load failed: %s", err);
	return cfg;
}

/* The error of a pair that must fail; the text is compared with @want after the dir prefix. */
static void
pair_fails(const char *worker_extra, const char *connector_extra, const char *want)
{
	struct config *cfg = NULL;
	char err[512] = "";
	struct buf exp = BUF_INIT;

	ck_assert_int_eq(load_pair(worker_extra, connector_extra, NULL, &cfg, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_null(cfg);
	buf_add_fmt(&exp, "%s/%s", testdir_path(), want);
	ck_assert_str_eq(err, buf_cstr(&exp));
	ck_assert_ptr_null(strstr(err, "hunter2"));
	buf_fini(&exp);
}

#define ck_kv(kv, k, v)                                                                            \
	do {                                                                                       \
		const char *got_ = kv_get(&(kv), k);                                               \
		ck_assert_msg(got_ != NULL, "key \"%s\" missing", k);                              \
		ck_assert_str_eq(got_, v);                                                         \
	} while (0)

START_TEST(test_connect_pair_gets_debezium_defaults)
{
	struct config *cfg = pair_ok("", "", NULL);

	ck_assert_int_eq(cfg->flavour, CONFIG_CONNECT);
	ck_assert_str_eq(cfg->name, "outbox-connector");
	ck_kv(cfg->pg_conn, "host", "db");
	ck_kv(cfg->pg_conn, "port", "5432");
	ck_kv(cfg->pg_conn, "user", "relay");
	ck_kv(cfg->pg_conn, "password", "hunter2");
	ck_kv(cfg->pg_conn, "dbname", "app");
	ck_kv(cfg->pg_conn, "sslmode", "prefer");
	ck_kv(cfg->pg_conn, "connect_timeout", "10");
	ck_kv(cfg->pg_conn, "keepalives", "1");
	ck_kv(cfg->pg_conn, "application_name", "outboxd");
	ck_assert_str_eq(cfg->slot_name, "debezium");
	ck_assert_str_eq(cfg->publication_name, "dbz_publication");
	ck_assert_str_eq(cfg->plugin_name, "pgoutput");
	ck_assert(cfg->plugin_name_set);
	ck_assert_str_eq(cfg->topic_prefix, "app");
	ck_assert_str_eq(cfg->table_include_list, "public.outbox");
	ck_assert_ptr_null(cfg->table_exclude_list);
	ck_assert_str_eq(cfg->snapshot_mode, "initial");
	ck_assert_int_eq(cfg->status_update_interval_ms, 10000);
	ck_assert_int_eq(cfg->slot_max_retries, 6);
	ck_assert_int_eq(cfg->slot_retry_delay_ms, 10000);
	ck_assert_int_eq(cfg->heartbeat_interval_ms, 0);
	ck_assert_ptr_null(cfg->heartbeat_action_query);
	ck_assert_str_eq(cfg->topic_heartbeat_prefix, "__debezium-heartbeat");
	ck_assert(cfg->extended_headers);
	ck_assert_str_eq(cfg->time_precision_mode, "adaptive");
	ck_assert_str_eq(cfg->decimal_handling_mode, "precise");
	ck_assert_str_eq(cfg->bootstrap_servers, "kafka:9092");
	ck_assert_str_eq(cfg->key_converter, "org.apache.kafka.connect.json.JsonConverter");
	ck_assert_str_eq(cfg->header_converter,
			 "org.apache.kafka.connect.storage.SimpleHeaderConverter");
	ck_kv(cfg->key_converter_opts, "schemas.enable", "false");
	ck_kv(cfg->value_converter_opts, "schemas.enable", "true");
	ck_assert_uint_eq(cfg->header_converter_opts.n, 0);
	ck_assert_str_eq(cfg->transform_alias, "outbox");
	ck_kv(cfg->transform, "route.by.field", "aggregatetype");
	ck_assert_ptr_null(kv_get(&cfg->transform, "type"));
	ck_assert_uint_eq(cfg->producer.n, 0);
	ck_assert_str_eq(cfg->errors_tolerance, "none");
	ck_assert(!cfg->slot_create);
	ck_assert_int_eq(cfg->http_port, 8080);
	ck_assert_int_eq(cfg->shutdown_flush_ms, 10000);
	ck_assert_int_eq(cfg->restart_backoff_max_ms, 30000);
	ck_assert_int_eq(cfg->halt_after_failures, 5);
	ck_assert_int_eq(cfg->stall_warn_ms, 60000);
	ck_assert_int_eq(cfg->send_at_once_ms, 100);
	ck_assert_int_eq(cfg->read_pause_ms, 2);
	ck_assert_int_eq(cfg->kafka_queue_records, 1000);
	ck_assert_str_eq(kv_get(&cfg->librdkafka, "queue.buffering.max.messages"), "1000");
	ck_assert_ptr_null(cfg->dlq_topic);
	ck_assert_str_eq(cfg->java_double_format, "jdk17");
	ck_assert_str_eq(cfg->poll_mode, "ordered");
	ck_assert_int_eq(cfg->poll_partitions, 16);
	ck_assert_int_eq(cfg->poll_interval_ms, 1000);
	ck_assert_int_eq(cfg->poll_batch_size, 500);
	ck_assert_str_eq(cfg->poll_order_column, "seq");
	ck_assert_str_eq(cfg->poll_published_column, "published_at");
	ck_assert_str_eq(cfg->poll_after, "mark");
	ck_assert_str_eq(cfg->poll_notify_channel, "outboxd_outbox");
	ck_assert_ptr_nonnull(kv_get(config_ignored(cfg), "offset.flush.interval.ms"));
	config_free(cfg);
}
END_TEST

/*
 * The worker's REST listener settings under ssl.* are no producer settings: accepted without
 * effect, not "unknown" (the configuration reference's probe found it), and never passed on.
 */
START_TEST(test_worker_rest_tls_setting_is_accepted_without_effect)
{
	struct config *cfg = pair_ok("ssl.client.auth=required\n", "", NULL);

	ck_assert_str_eq(kv_get(config_ignored(cfg), "ssl.client.auth"),
			 "Kafka Connect worker setting without effect in outboxd");
	ck_assert_ptr_null(kv_get(&cfg->librdkafka, "ssl.client.auth"));
	config_free(cfg);
}
END_TEST

/*
 * The exactly-once keys (issue 37): a guarantee outboxd does not give is refused where Kafka
 * Connect would fail the connector (required; the worker's enabled), and said, not silently
 * accepted, where Connect falls back (requested, the transaction boundary).
 */
START_TEST(test_exactly_once_keys_say_at_least_once)
{
	struct config *cfg;

	pair_fails(
		"", "exactly.once.support=Required\n",
		"connector.properties:13: exactly.once.support: outboxd delivers at least once "
		"(a crash may publish the last unconfirmed rows again; consumers deduplicate by "
		"the id header): exactly-once to Kafka is not available; set requested or remove it");
	pair_fails(
		"exactly.once.source.support=enabled\n", "",
		"worker.properties:8: exactly.once.source.support: outboxd delivers at least once "
		"(a crash may publish the last unconfirmed rows again; consumers deduplicate by "
		"the id header): exactly-once to Kafka is not available; set it to disabled or "
		"remove it");
	cfg = pair_ok("exactly.once.source.support=preparing\n",
		      "exactly.once.support=requested\ntransaction.boundary=poll\n"
		      "transaction.boundary.interval.ms=100\n",
		      NULL);
	ck_assert_ptr_nonnull(strstr(kv_get(config_ignored(cfg), "exactly.once.support"),
				     "outboxd delivers at least once"));
	ck_assert_ptr_nonnull(strstr(kv_get(config_ignored(cfg), "transaction.boundary"),
				     "read with exactly-once delivery only"));
	ck_assert_ptr_nonnull(kv_get(config_ignored(cfg), "transaction.boundary.interval.ms"));
	ck_assert_ptr_nonnull(kv_get(config_ignored(cfg), "exactly.once.source.support"));
	config_free(cfg);
}
END_TEST

START_TEST(test_file_order_is_free_and_connector_keys_override_the_worker)
{
	const char *paths[2];
	struct config *cfg = NULL;
	char err[512] = "";

	paths[0] = testdir_put("c.properties", CONNECTOR);
	paths[1] = testdir_put("w.properties", WORKER);
	ck_assert_int_eq(config_load((const char *const *)paths, 2, NULL, &cfg, err, sizeof(err)),
			 0);
	ck_assert_str_eq(cfg->name, "outbox-connector");
	config_free(cfg);

	/* the connector's converter replaces the worker's, options included */
	cfg = pair_ok("",
		      "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
		      "database.port=6543\nslot.name=outbox_slot\nsnapshot.mode=NO_DATA\n"
		      "status.update.interval.ms=2000\nheartbeat.interval.ms=0\n"
		      "database.sslmode=verify-full\ndatabase.sslrootcert=/ca.pem\n"
		      "outboxd.slot.create=true\noutboxd.http.port=0\n",
		      NULL);
	ck_assert_str_eq(cfg->value_converter, "org.apache.kafka.connect.storage.StringConverter");
	ck_assert_uint_eq(cfg->value_converter_opts.n, 0);
	ck_kv(cfg->pg_conn, "port", "6543");
	ck_kv(cfg->pg_conn, "sslmode", "verify-full");
	ck_kv(cfg->pg_conn, "sslrootcert", "/ca.pem");
	ck_assert_str_eq(cfg->slot_name, "outbox_slot");
	ck_assert_str_eq(cfg->snapshot_mode, "no_data");
	ck_assert_int_eq(cfg->status_update_interval_ms, 2000);
	ck_assert_int_eq(cfg->heartbeat_interval_ms, 0);
	ck_assert(cfg->slot_create);
	ck_assert_int_eq(cfg->http_port, 0);
	config_free(cfg);
}
END_TEST

START_TEST(test_connector_json_configures_like_properties)
{
	const char *paths[2];
	struct config *cfg = NULL;
	char err[512] = "";
	struct buf want = BUF_INIT;

	paths[0] = testdir_put("w.properties", WORKER);
	paths[1] = testdir_put(
		"c.json",
		"{\n"
		"  \"name\": \"outbox\",\n"
		"  \"config\": {\n"
		"    \"connector.class\": \"io.debezium.connector.postgresql.PostgresConnector\",\n"
		"    \"database.hostname\": \"db\",\n"
		"    \"database.port\": 5433,\n"
		"    \"database.user\": \"relay\",\n"
		"    \"database.dbname\": \"app\",\n"
		"    \"topic.prefix\": \"app\",\n"
		"    \"extended.headers.enabled\": false,\n"
		"    \"transforms\": \"outbox\",\n"
		"    \"transforms.outbox.type\": \"io.debezium.transforms.outbox.EventRouter\"\n"
		"  }\n"
		"}\n");
	ck_assert_msg(config_load((const char *const *)paths, 2, NULL, &cfg, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_str_eq(cfg->name, "outbox");
	ck_kv(cfg->pg_conn, "port", "5433");
	ck_assert(!cfg->extended_headers);
	ck_assert(!cfg->plugin_name_set);
	config_free(cfg);

	paths[1] = testdir_put(
		"c.json",
		"{\"name\": \"x\", \"config\": {\n"
		"\"connector.class\": \"io.debezium.connector.postgresql.PostgresConnector\",\n"
		"\"slot.name\": {\"nested\": 1}}}\n");
	ck_assert_int_eq(config_load((const char *const *)paths, 2, NULL, &cfg, err, sizeof(err)),
			 -EINVAL);
	buf_add_fmt(&want, "%s:3: slot.name: the value must be a string, number or boolean",
		    paths[1]);
	ck_assert_str_eq(err, buf_cstr(&want));

	paths[1] = testdir_put("c.json", "{\"config\": {\n\"a\": \n");
	ck_assert_int_eq(config_load((const char *const *)paths, 2, NULL, &cfg, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "invalid JSON"));
	buf_fini(&want);
}
END_TEST

/*
 * Strimzi's KafkaConnector as the connector file: the same keys, classified the same way (a
 * typo is an error at its line), the worker's ${file:...} provider resolved in spec.config,
 * outboxd.* keys taken, and the fields without effect listed among the ignored keys.
 */
START_TEST(test_kafkaconnector_yaml_configures_like_properties)
{
	const char *paths[2];
	struct config *cfg = NULL;
	char err[512] = "";
	struct buf w = BUF_INIT, want = BUF_INIT;
	const char *secret = testdir_put("pg.properties", "password=s3cret\n");

	buf_add_fmt(&w,
		    "%sconfig.providers=file\n"
		    "config.providers.file.class="
		    "org.apache.kafka.common.config.provider.FileConfigProvider\n",
		    WORKER);
	paths[0] = testdir_put("w.properties", buf_cstr(&w));
	buf_reset(&w);
	buf_add_fmt(&w,
		    "apiVersion: kafka.strimzi.io/v1beta2\n"
		    "kind: KafkaConnector\n"
		    "metadata:\n"
		    "  name: outbox\n"
		    "spec:\n"
		    "  class: io.debezium.connector.postgresql.PostgresConnector\n"
		    "  tasksMax: 1\n"
		    "  autoRestart: {enabled: true, maxRestarts: 10}\n"
		    "  config:\n"
		    "    database.hostname: db\n"
		    "    database.port: 5433\n"
		    "    database.user: relay\n"
		    "    database.password: ${file:%s:password}\n"
		    "    database.dbname: app\n"
		    "    topic.prefix: app\n"
		    "    extended.headers.enabled: false\n"
		    "    transforms: outbox\n"
		    "    transforms.outbox.type: io.debezium.transforms.outbox.EventRouter\n"
		    "    outboxd.http.port: 0\n",
		    secret);
	paths[1] = testdir_put("connector.yaml", buf_cstr(&w));
	ck_assert_msg(config_load((const char *const *)paths, 2, NULL, &cfg, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_str_eq(cfg->name, "outbox");
	ck_kv(cfg->pg_conn, "port", "5433");
	ck_kv(cfg->pg_conn, "password", "s3cret");
	ck_assert(!cfg->extended_headers);
	ck_assert_int_eq(cfg->http_port, 0);
	buf_add_fmt(&want, "%s:8", paths[1]);
	ck_assert_str_eq(kv_find(config_ignored(cfg), "spec.autoRestart")->origin, buf_cstr(&want));
	config_free(cfg);

	/* a typo in spec.config is an unknown key at its line, as in any connector file */
	paths[1] = testdir_put("connector.yaml",
			       "apiVersion: kafka.strimzi.io/v1beta2\n"
			       "kind: KafkaConnector\n"
			       "spec:\n"
			       "  class: io.debezium.connector.postgresql.PostgresConnector\n"
			       "  config:\n"
			       "    database.hostnme: db\n");
	ck_assert_int_eq(config_load((const char *const *)paths, 2, NULL, &cfg, err, sizeof(err)),
			 -EINVAL);
	buf_reset(&want);
	buf_add_fmt(&want, "%s:6: unknown key \"database.hostnme\"", paths[1]);
	ck_assert_msg(strstr(err, buf_cstr(&want)), "%s", err);
	buf_fini(&w);
	buf_fini(&want);
}
END_TEST

static const char SERVER[] =
	"debezium.sink.type=kafka\n"
	"debezium.sink.kafka.producer.bootstrap.servers=${KAFKA:localhost:9092}\n"
	"debezium.sink.kafka.producer.key.serializer=org.apache.kafka.common.serialization.StringSerializer\n"
	"debezium.sink.kafka.producer.value.serializer=org.apache.kafka.common.serialization.StringSerializer\n"
	"debezium.sink.kafka.producer.acks=all\n"
	"debezium.source.connector.class=io.debezium.connector.postgresql.PostgresConnector\n"
	"debezium.source.offset.storage.file.filename=data/offsets.dat\n"
	"debezium.source.offset.flush.interval.ms=0\n"
	"debezium.source.database.hostname=localhost\n"
	"debezium.source.database.user=${PGUSER}\n"
	"debezium.source.database.password=${PGPASSWORD:secret}\n"
	"debezium.source.database.dbname=app\n"
	"debezium.source.topic.prefix=app\n"
	"debezium.source.plugin.name=pgoutput\n"
	"debezium.transforms=outbox\n"
	"debezium.transforms.outbox.type=io.debezium.transforms.outbox.EventRouter\n"
	"debezium.transforms.outbox.route.by.field=aggregatetype\n"
	"debezium.format.schemas.enable=false\n"
	"debezium.format.value.schemas.enable=true\n"
	"debezium.format.value=json\n"
	"quarkus.log.level=INFO\n";

START_TEST(test_server_file_takes_environment_overrides_and_expressions)
{
	char *envp[] = {
		"PGUSER=relay",
		"DEBEZIUM_SOURCE_DATABASE_HOSTNAME=db.internal",
		"DEBEZIUM_SOURCE_DATABASE_TCPKEEPALIVE=false",
		"DEBEZIUM_SOURCE_SLOT_NAME=from_env",
		"DEBEZIUM_VERSION=3.6.1",
		"OUTBOXD_SLOT_CREATE=true",
		"OUTBOXD_TEST_BINARY=/x",
		NULL,
	};
	const char *path = testdir_put("application.properties", SERVER);
	struct config *cfg = NULL;
	char err[512] = "";

	ck_assert_msg(config_load((const char *const *)&path, 1, envp, &cfg, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_int_eq(cfg->flavour, CONFIG_SERVER);
	ck_assert_str_eq(cfg->name, "kafka");
	ck_assert_str_eq(cfg->bootstrap_servers, "localhost:9092");
	ck_kv(cfg->pg_conn, "host", "db.internal");
	ck_kv(cfg->pg_conn, "user", "relay");
	ck_kv(cfg->pg_conn, "password", "secret");
	ck_kv(cfg->pg_conn, "keepalives", "0");
	ck_assert_str_eq(cfg->slot_name, "from_env");
	ck_assert_str_eq(cfg->java_double_format, "shortest"); /* Server 3.6 needs Java 21+ */
	ck_assert_str_eq(cfg->key_converter, "org.apache.kafka.connect.json.JsonConverter");
	ck_assert_str_eq(cfg->header_converter, "org.apache.kafka.connect.json.JsonConverter");
	ck_kv(cfg->key_converter_opts, "schemas.enable", "false");
	ck_kv(cfg->header_converter_opts, "schemas.enable", "false");
	ck_kv(cfg->value_converter_opts, "schemas.enable", "true");
	ck_kv(cfg->transform, "route.by.field", "aggregatetype");
	ck_kv(cfg->producer, "acks", "all");
	ck_assert(cfg->slot_create);
	ck_assert_ptr_nonnull(
		kv_get(config_ignored(cfg), "debezium.sink.kafka.producer.key.serializer"));
	ck_assert_ptr_nonnull(
		kv_get(config_ignored(cfg), "debezium.source.offset.flush.interval.ms"));
	ck_assert_ptr_nonnull(kv_get(config_ignored(cfg), "quarkus.log.level"));
	ck_assert_ptr_nonnull(kv_get(config_ignored(cfg), "OUTBOXD_TEST_BINARY"));
	ck_assert_str_eq(kv_find(&cfg->pg_conn, "host")->origin,
			 "environment DEBEZIUM_SOURCE_DATABASE_HOSTNAME");
	config_free(cfg);
}
END_TEST

/* Debezium Server 3.6 needs Java 21+: its doubles are Java 19+'s shortest form, unless the
 * operator says otherwise */
START_TEST(test_server_doubles_default_to_the_shortest_form)
{
	char *envp[] = { "PGUSER=relay", NULL, NULL };
	const char *path = testdir_put("application.properties", SERVER);
	struct config *cfg = NULL;
	char err[512] = "";

	ck_assert_msg(config_load((const char *const *)&path, 1, envp, &cfg, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_str_eq(cfg->java_double_format, "shortest");
	config_free(cfg);
	envp[1] = "OUTBOXD_JAVA_DOUBLE_FORMAT=jdk17";
	ck_assert_msg(config_load((const char *const *)&path, 1, envp, &cfg, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_str_eq(cfg->java_double_format, "jdk17");
	config_free(cfg);
}
END_TEST

START_TEST(test_server_variable_without_a_value_is_an_error_at_its_line)
{
	const char *path = testdir_put("application.properties", SERVER);
	struct config *cfg = NULL;
	char err[512] = "";
	struct buf want = BUF_INIT;

	ck_assert_int_eq(config_load((const char *const *)&path, 1, NULL, &cfg, err, sizeof(err)),
			 -EINVAL);
	buf_add_fmt(&want,
		    "%s:10: debezium.source.database.user: ${PGUSER} is not set (no environment "
		    "variable PGUSER or PGUSER, no property PGUSER, no default)",
		    path);
	ck_assert_str_eq(err, buf_cstr(&want));
	buf_fini(&want);
}
END_TEST

START_TEST(test_declared_providers_resolve_and_a_missing_key_names_the_file)
{
	char *envp[] = { "DB_USER=vault_user", NULL };
	const char *secrets = testdir_put("secrets.properties", "password=s3cret\n");
	struct buf w = BUF_INIT, c = BUF_INIT, want = BUF_INIT;
	struct config *cfg;
	char err[512] = "";

	buf_add_fmt(
		&w,
		"config.providers=file,env\n"
		"config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider\n"
		"config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider\n");
	buf_add_fmt(&c,
		    "database.password=${file:%s:password}\n"
		    "database.user=${env:DB_USER}\n"
		    "slot.name=${vault:x}\n",
		    secrets);
	cfg = pair_ok(buf_cstr(&w), buf_cstr(&c), envp);
	ck_kv(cfg->pg_conn, "password", "s3cret");
	ck_kv(cfg->pg_conn, "user", "vault_user");
	ck_assert_str_eq(cfg->slot_name, "${vault:x}"); /* undeclared provider: left as is */
	config_free(cfg);

	buf_reset(&c);
	buf_add_fmt(&c, "database.password=${file:%s:nope}\n", secrets);
	ck_assert_int_eq(load_pair(buf_cstr(&w), buf_cstr(&c), envp, &cfg, err, sizeof(err)),
			 -EINVAL);
	buf_add_fmt(
		&want,
		"%s/connector.properties:13: database.password: cannot resolve ${file:%s:nope}: "
		"key \"nope\" not found in %s",
		testdir_path(), secrets, secrets);
	ck_assert_str_eq(err, buf_cstr(&want));
	buf_fini(&w);
	buf_fini(&c);
	buf_fini(&want);
}
END_TEST

START_TEST(test_unknown_key_is_an_error_asking_to_check_the_spelling)
{
	pair_fails(
		"", "slot.nmae=x\n",
		"connector.properties:13: unknown key \"slot.nmae\" (not a Kafka Connect, producer, "
		"Debezium PostgreSQL connector or EventRouter setting); check the spelling");
	pair_fails(
		"offset.flush.intervall.ms=1\n", "",
		"worker.properties:8: unknown key \"offset.flush.intervall.ms\" (not a Kafka Connect, "
		"producer, Debezium PostgreSQL connector or EventRouter setting); check the spelling");
	pair_fails(
		"producer.ackss=all\n", "",
		"worker.properties:8: unknown key \"producer.ackss\" (not a Kafka Connect, producer, "
		"Debezium PostgreSQL connector or EventRouter setting); check the spelling");
	pair_fails(
		"", "transforms.outbox.route.by.feld=x\n",
		"connector.properties:13: unknown key \"transforms.outbox.route.by.feld\" (not a Kafka "
		"Connect, producer, Debezium PostgreSQL connector or EventRouter setting); check the spelling");
	pair_fails(
		"value.converter.schema.enable=true\n", "",
		"worker.properties:8: unknown key \"value.converter.schema.enable\" (not a Kafka Connect, "
		"producer, Debezium PostgreSQL connector or EventRouter setting); check the spelling");
	pair_fails(
		"", "outboxd.slot.crate=true\n",
		"connector.properties:13: unknown key \"outboxd.slot.crate\" (not an outboxd setting); "
		"check the spelling");
}
END_TEST

/* A value that would wait forever, or overflow a poll(2) timeout, is refused where it is set. */
START_TEST(test_out_of_range_numbers_name_the_line_the_range_and_the_fix)
{
	pair_fails("", "outboxd.stall.warn.ms=9223372036854775807\n",
		   "connector.properties:13: outboxd.stall.warn.ms: \"9223372036854775807\" is not "
		   "an integer from 1000 to 86400000; set one in that range");
	pair_fails(
		"", "heartbeat.interval.ms=-1\n",
		"connector.properties:13: heartbeat.interval.ms: \"-1\" is not an integer from 0 "
		"to 86400000; set one in that range");
	pair_fails("outboxd.restart.backoff.max.ms=3600001\n", "",
		   "worker.properties:8: outboxd.restart.backoff.max.ms: \"3600001\" is not an "
		   "integer from 1 to 3600000; set one in that range");
	pair_fails("", "outboxd.poll.partitions=0\n",
		   "connector.properties:13: outboxd.poll.partitions: \"0\" is not an integer "
		   "from 1 to 1024; set one in that range");
	pair_fails("", "outboxd.poll.after=archive\n",
		   "connector.properties:13: outboxd.poll.after: \"archive\" is not one of "
		   "mark|delete");
	pair_fails("", "outboxd.halt.after.failures=0\n",
		   "connector.properties:13: outboxd.halt.after.failures: \"0\" is not an integer "
		   "from 1 to 1000; set one in that range");
	pair_fails("", "status.update.interval.ms=10s\n",
		   "connector.properties:13: status.update.interval.ms: \"10s\" is not an integer "
		   "from 1 to 86400000; set one in that range");
}
END_TEST

/* outboxd.http.bind: 0.0.0.0 unless set; a numeric address of either family, else refused. */
START_TEST(test_http_bind_is_a_numeric_address_or_refused_naming_the_key_and_the_fix)
{
	static const char *const ok[] = { "::", "::1", "127.0.0.1", "fe80::1", "0.0.0.0" };
	char *const env[] = { "OUTBOXD_HTTP_BIND=::", NULL };
	struct config *cfg = pair_ok("", "", NULL);

	ck_assert_str_eq(cfg->http_bind, "0.0.0.0");
	config_free(cfg);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct buf line = BUF_INIT;

		buf_add_fmt(&line, "outboxd.http.bind=%s\n", ok[i]);
		cfg = pair_ok("", buf_cstr(&line), NULL);
		ck_assert_str_eq(cfg->http_bind, ok[i]);
		config_free(cfg);
		buf_fini(&line);
	}
	cfg = pair_ok("", "", env);
	ck_assert_str_eq(cfg->http_bind, "::");
	config_free(cfg);
	pair_fails("", "outboxd.http.bind=localhost\n",
		   "connector.properties:13: outboxd.http.bind=\"localhost\" is not a numeric IPv4 "
		   "or IPv6 address; set it to 0.0.0.0 (every IPv4 address), :: (every address, "
		   "IPv4 and IPv6), or one address of this host such as 127.0.0.1 or ::1");
	pair_fails("outboxd.http.bind=[::1]\n", "",
		   "worker.properties:8: outboxd.http.bind=\"[::1]\" is not a numeric IPv4 "
		   "or IPv6 address; set it to 0.0.0.0 (every IPv4 address), :: (every address, "
		   "IPv4 and IPv6), or one address of this host such as 127.0.0.1 or ::1");
}
END_TEST

START_TEST(test_refused_options_name_the_reason_and_the_fix)
{
	pair_fails(
		"", "slot.drop.on.stop=true\n",
		"connector.properties:13: slot.drop.on.stop: outboxd never drops the slot (it belongs to "
		"operations; `outboxd slot drop` does it on purpose); set it to false or remove it");
	pair_fails(
		"", "plugin.name=decoderbufs\n",
		"connector.properties:13: plugin.name: \"decoderbufs\" is not supported; outboxd decodes "
		"pgoutput only: set plugin.name=pgoutput (a slot created for another plugin must be recreated)");
	pair_fails(
		"", "snapshot.mode=never\n",
		"connector.properties:13: snapshot.mode: \"never\" was removed in Debezium 3 (3.6.1 "
		"rejects it); use no_data");
	pair_fails(
		"", "transforms=outbox,unwrap\n",
		"connector.properties:13: transforms: more than one transform is listed; outboxd "
		"implements exactly one io.debezium.transforms.outbox.EventRouter and nothing else (e.g. "
		"transforms=outbox, transforms.outbox.type=io.debezium.transforms.outbox.EventRouter)");
	pair_fails(
		"", "transforms.outbox.predicate=isOutbox\n",
		"connector.properties:13: transforms.outbox.predicate: predicates are not supported; "
		"outboxd routes every row of the outbox tables (select them with table.include.list); remove it");
	pair_fails(
		"", "transforms.outbox.type=org.apache.kafka.connect.transforms.RegexRouter\n",
		"connector.properties:13: transforms.outbox.type: transform "
		"\"org.apache.kafka.connect.transforms.RegexRouter\" is not supported; outboxd implements "
		"io.debezium.transforms.outbox.EventRouter only");
	pair_fails(
		"", "errors.tolerance=all\n",
		"connector.properties:13: errors.tolerance: \"all\" makes Kafka Connect skip a failing "
		"source record silently, losing the outbox event; set "
		"outboxd.errors.deadletterqueue.topic.name to send such rows to a dead-letter topic, or "
		"remove errors.tolerance (outboxd then halts on such a row, naming it)");
	pair_fails(
		"", "value.converter=io.confluent.connect.avro.AvroConverter\n",
		"connector.properties:13: value.converter: converter "
		"\"io.confluent.connect.avro.AvroConverter\" is not supported; outboxd writes the bytes of "
		"JsonConverter, StringConverter, ByteArrayConverter and BinaryDataConverter");
	/* convert_new() would refuse these header converters later: config refuses them itself */
	pair_fails("", "header.converter=org.apache.kafka.connect.storage.StringConverter\n",
		   "connector.properties:13: header.converter: converter "
		   "\"org.apache.kafka.connect.storage.StringConverter\" is not supported as a "
		   "header converter; outboxd writes the bytes of SimpleHeaderConverter, "
		   "JsonConverter and BinaryDataConverter");
	pair_fails("header.converter=org.apache.kafka.connect.converters.ByteArrayConverter\n", "",
		   "worker.properties:8: header.converter: converter "
		   "\"org.apache.kafka.connect.converters.ByteArrayConverter\" is not supported "
		   "as a header converter; outboxd writes the bytes of SimpleHeaderConverter, "
		   "JsonConverter and BinaryDataConverter");
	pair_fails(
		"producer.ssl.truststore.location=/t.jks\n", "",
		"worker.properties:8: producer.ssl.truststore.location: a JKS trust store cannot be read "
		"by librdkafka; export the CA certificates to a PEM file and set ssl.ca.location (or "
		"ssl.truststore.type=PEM)");
	pair_fails("", "table.exclude.list=public.x\n",
		   "connector.properties:13: table.exclude.list: cannot be set together with "
		   "table.include.list (Debezium refuses both); keep one");
	pair_fails("", "database.port=70000\n",
		   "connector.properties:13: database.port: invalid value \"70000\"");
}
END_TEST

/* The router gets every selection list and the flavour from one place (main and bench share it). */
START_TEST(test_router_config_carries_the_selection_lists_and_the_flavour)
{
	struct config *cfg = pair_ok("", "message.prefix.include.list=outbox.*\n", NULL);
	struct router_config rc = config_router(cfg, "run-1");

	ck_assert_str_eq(rc.run_id, "run-1");
	ck_assert_str_eq(rc.topic_prefix, cfg->topic_prefix);
	ck_assert_str_eq(rc.message_prefix_include_list, "outbox.*");
	ck_assert_ptr_eq(rc.smt, &cfg->transform);
	ck_assert(!rc.server_flavour);
	ck_assert(rc.extended_headers);
	config_free(cfg);
}
END_TEST

START_TEST(test_errors_tolerance_all_is_accepted_with_a_dead_letter_topic)
{
	struct config *cfg = pair_ok(
		"", "errors.tolerance=all\noutboxd.errors.deadletterqueue.topic.name=dlq\n", NULL);

	ck_assert_str_eq(cfg->errors_tolerance, "all");
	ck_assert_str_eq(cfg->dlq_topic, "dlq");
	config_free(cfg);
}
END_TEST

/*
 * KIP-158: topic.creation.* is honoured (handed to the producer as outboxd.topic.creation.*),
 * refused as Connect refuses it (the default's two numbers), and without effect when the
 * worker turns it off or in Debezium Server's files (its Kafka sink creates no topics).
 */
START_TEST(test_topic_creation_is_honoured_checked_and_turned_off_as_connect_does)
{
	static const char tc[] = "topic.creation.default.partitions=3\n"
				 "topic.creation.default.replication.factor=-1\n"
				 "topic.creation.groups=compacted\n"
				 "topic.creation.compacted.include=outbox\\.event\\.cfg.*\n"
				 "topic.creation.compacted.cleanup.policy=compact\n";
	struct config *cfg = pair_ok("", tc, NULL);
	char *envp[] = { "PGUSER=relay", NULL };
	struct buf server = BUF_INIT;
	const char *path;
	char err[512] = "";

	ck_assert_str_eq(kv_get(&cfg->librdkafka, "outboxd.topic.creation.default.partitions"),
			 "3");
	ck_assert_str_eq(
		kv_get(&cfg->librdkafka, "outboxd.topic.creation.compacted.cleanup.policy"),
		"compact");
	ck_assert_ptr_null(kv_get(config_ignored(cfg), "topic.creation.groups"));
	config_free(cfg);
	pair_fails("", "topic.creation.default.partitions=3\n",
		   "connector.properties: Missing required configuration "
		   "\"topic.creation.default.replication.factor\" which has no default value "
		   "(Kafka Connect needs it once any topic.creation.* key is set; -1 takes the "
		   "broker's default)");
	pair_fails(
		"topic.creation.enable=maybe\n", "",
		"worker.properties:8: topic.creation.enable: \"maybe\" is not a boolean; use true "
		"or false");
	cfg = pair_ok("topic.creation.enable=false\n", tc, NULL);
	ck_assert_ptr_null(kv_get(&cfg->librdkafka, "outboxd.topic.creation.default.partitions"));
	ck_assert_ptr_nonnull(kv_get(config_ignored(cfg), "topic.creation.groups"));
	config_free(cfg);
	buf_add_str(&server, SERVER);
	buf_add_str(&server, "debezium.source.topic.creation.default.partitions=3\n");
	path = testdir_put("application.properties", buf_cstr(&server));
	ck_assert_msg(config_load((const char *const *)&path, 1, envp, &cfg, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_ptr_null(kv_get(&cfg->librdkafka, "outboxd.topic.creation.default.partitions"));
	ck_assert_ptr_nonnull(
		kv_get(config_ignored(cfg), "debezium.source.topic.creation.default.partitions"));
	config_free(cfg);
	buf_fini(&server);
}
END_TEST

START_TEST(test_keys_without_effect_are_listed_as_ignored_with_the_reason)
{
	struct config *cfg =
		pair_ok("group.id=connect\n",
			"publication.autocreate.mode=filtered\n"
			"transforms.outbox.table.fields.additional.error.on.missing=false\n"
			"database.server.name=legacy\n"
			"slot.drop.on.stop=false\n",
			NULL);
	const struct kv *ig = config_ignored(cfg);

	ck_assert_str_eq(
		kv_get(ig, "publication.autocreate.mode"),
		"outboxd never creates publications; create it with the statement in sql/publication.sql");
	ck_assert_str_eq(
		kv_get(ig, "transforms.outbox.table.fields.additional.error.on.missing"),
		"read by Debezium 2.5 to 3.5 only; 3.6.1 reads table.field.additional.missing");
	ck_assert_ptr_nonnull(kv_get(ig, "database.server.name"));
	ck_assert_ptr_nonnull(kv_get(ig, "group.id"));
	ck_assert_str_eq(kv_find(ig, "publication.autocreate.mode")->origin,
			 kv_find(ig, "publication.autocreate.mode")->origin); /* has an origin */
	ck_assert_ptr_null(kv_get(&cfg->transform, "table.fields.additional.error.on.missing"));
	config_free(cfg);

	/* A leftover JsonConverter option beside a StringConverter: Connect ignores it, so do we. */
	cfg = pair_ok("key.converter=org.apache.kafka.connect.storage.StringConverter\n"
		      "key.converter.schemas.enable=true\n",
		      "", NULL);
	ig = config_ignored(cfg);
	ck_assert_ptr_nonnull(kv_get(ig, "key.converter.schemas.enable"));
	ck_assert_ptr_null(kv_get(&cfg->key_converter_opts, "schemas.enable"));
	config_free(cfg);
}
END_TEST

START_TEST(test_producer_settings_are_translated_and_overrides_win)
{
	struct config *cfg = pair_ok(
		"security.protocol=SASL_SSL\n"
		"sasl.mechanism=SCRAM-SHA-512\n"
		"producer.security.protocol=SASL_SSL\n"
		"producer.sasl.mechanism=SCRAM-SHA-256\n"
		"producer.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
		"username=\"relay\" password=\"pa\\\\\"ss\";\n"
		"producer.max.request.size=2097152\n"
		"producer.buffer.memory=33554432\n"
		"producer.delivery.timeout.ms=120000\n"
		"producer.linger.ms=5\n"
		"producer.max.block.ms=60000\n"
		"producer.ssl.truststore.type=PEM\n"
		"producer.ssl.truststore.location=/ca.pem\n"
		"producer.ssl.keystore.type=PKCS12\n"
		"producer.ssl.keystore.location=/client.p12\n"
		"producer.ssl.keystore.password=kspass\n"
		"producer.acks=1\n",
		"producer.override.linger.ms=20\n", NULL);

	ck_kv(cfg->producer, "security.protocol", "SASL_SSL");
	ck_kv(cfg->producer, "sasl.mechanisms", "SCRAM-SHA-256");
	ck_kv(cfg->producer, "sasl.username", "relay");
	ck_kv(cfg->producer, "sasl.password", "pa\"ss");
	ck_kv(cfg->producer, "message.max.bytes", "2097152");
	ck_kv(cfg->producer, "queue.buffering.max.kbytes", "32768");
	ck_kv(cfg->producer, "message.timeout.ms", "120000");
	ck_kv(cfg->producer, "linger.ms", "20");
	ck_kv(cfg->producer, "ssl.ca.location", "/ca.pem");
	ck_kv(cfg->producer, "ssl.keystore.location", "/client.p12");
	ck_kv(cfg->producer, "ssl.keystore.password", "kspass");
	ck_kv(cfg->producer, "acks", "1");
	ck_assert_ptr_null(kv_get(&cfg->producer, "sasl.jaas.config"));
	ck_assert_ptr_null(kv_get(&cfg->producer, "max.block.ms"));
	ck_assert_ptr_null(kv_get(&cfg->producer, "bootstrap.servers"));
	ck_assert_ptr_nonnull(kv_get(config_ignored(cfg), "producer.max.block.ms"));
	ck_assert_ptr_nonnull(kv_get(config_ignored(cfg), "producer.ssl.truststore.type"));
	config_free(cfg);
}
END_TEST

START_TEST(test_jaas_plain_credentials_are_read_and_other_modules_refused)
{
	char *u = NULL, *p = NULL;

	ck_assert_int_eq(
		rdconf_jaas_credentials(
			"org.apache.kafka.common.security.plain.PlainLoginModule required\n  username=alice\n"
			"  password=\"x y\";",
			&u, &p),
		0);
	ck_assert_str_eq(u, "alice");
	ck_assert_str_eq(p, "x y");
	free(u);
	free(p);
	ck_assert_int_eq(
		rdconf_jaas_credentials(
			"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
			&u, &p),
		-ENOTSUP);
	ck_assert_int_eq(
		rdconf_jaas_credentials(
			"org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\";",
			&u, &p),
		-EINVAL);
}
END_TEST

START_TEST(test_secret_never_shown)
{
	struct config *cfg = NULL;
	char err[512] = "";
	struct buf out = BUF_INIT;

	ck_assert_int_eq(
		load_pair("producer.sasl.jaas.config=org.apache.kafka.common.security.plain."
			  "PlainLoginModule required username=\"u\" password=\"hunter2\n",
			  "", NULL, &cfg, err, sizeof(err)),
		-EINVAL);
	ck_assert_ptr_null(strstr(err, "hunter2"));
	ck_assert_ptr_nonnull(strstr(err, "producer.sasl.jaas.config"));
	ck_assert_int_eq(load_pair("",
				   "database.sslpassword=hunter2\ndatabase.password=hunter2\n"
				   "database.sslmode=bogus\n",
				   NULL, &cfg, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_null(strstr(err, "hunter2"));

	cfg = pair_ok(
		"producer.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
		"required username=\"u\" password=\"hunter2\";\n",
		"", NULL);
	config_describe(cfg, &out);
	ck_assert_ptr_null(strstr(buf_cstr(&out), "hunter2"));
	ck_assert_ptr_nonnull(strstr(buf_cstr(&out), "topic.prefix = app"));
	config_free(cfg);
	buf_fini(&out);
}
END_TEST

START_TEST(test_missing_worker_file_or_required_key_is_an_error)
{
	struct config *cfg = NULL;
	char err[512] = "";
	const char *path = testdir_put("connector.properties", CONNECTOR);
	struct buf want = BUF_INIT;

	ck_assert_int_eq(config_load((const char *const *)&path, 1, NULL, &cfg, err, sizeof(err)),
			 -EINVAL);
	buf_add_fmt(
		&want,
		"%s: no worker file; pass the Kafka Connect worker .properties and the "
		"connector .properties, JSON or Strimzi KafkaConnector YAML (the connector file is "
		"the one with connector.class)",
		path);
	ck_assert_str_eq(err, buf_cstr(&want));
	buf_fini(&want);

	pair_fails("", "topic.prefix=\n",
		   "connector.properties: missing required key \"topic.prefix\"");
}
END_TEST

/*
 * Values are read as Kafka's ConfigDef and Debezium read them: String.trim() takes control
 * characters too (here U+0001 from a \u escape), enums match whole words in any case.
 */
START_TEST(test_values_trimmed_and_matched_like_java)
{
	struct config *cfg = pair_ok("",
				     "outboxd.http.port=9090\\u0001\n"
				     "extended.headers.enabled=\\u0002FALSE\n"
				     "database.sslmode=REQUIRE\n"
				     "time.precision.mode=Adaptive\n",
				     NULL);

	ck_assert_int_eq(cfg->http_port, 9090);
	ck_assert(!cfg->extended_headers);
	ck_kv(cfg->pg_conn, "sslmode", "require");
	ck_assert_str_eq(cfg->time_precision_mode, "adaptive");
	config_free(cfg);
	/* a part of a word is no word (the old check took any substring of the list) */
	pair_fails("", "database.sslmode=able\n",
		   "connector.properties:13: database.sslmode: invalid value \"able\"");
}
END_TEST

static Suite *
config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("load");

	tcase_add_checked_fixture(tc, testdir_setup, testdir_teardown);
	tcase_add_test(tc, test_connect_pair_gets_debezium_defaults);
	tcase_add_test(tc,
		       test_http_bind_is_a_numeric_address_or_refused_naming_the_key_and_the_fix);
	tcase_add_test(tc, test_file_order_is_free_and_connector_keys_override_the_worker);
	tcase_add_test(tc, test_worker_rest_tls_setting_is_accepted_without_effect);
	tcase_add_test(tc, test_exactly_once_keys_say_at_least_once);
	tcase_add_test(tc, test_connector_json_configures_like_properties);
	tcase_add_test(tc, test_kafkaconnector_yaml_configures_like_properties);
	tcase_add_test(tc, test_server_file_takes_environment_overrides_and_expressions);
	tcase_add_test(tc, test_router_config_carries_the_selection_lists_and_the_flavour);
	tcase_add_test(tc, test_server_doubles_default_to_the_shortest_form);
	tcase_add_test(tc, test_server_variable_without_a_value_is_an_error_at_its_line);
	tcase_add_test(tc, test_declared_providers_resolve_and_a_missing_key_names_the_file);
	tcase_add_test(tc, test_unknown_key_is_an_error_asking_to_check_the_spelling);
	tcase_add_test(tc, test_out_of_range_numbers_name_the_line_the_range_and_the_fix);
	tcase_add_test(tc, test_refused_options_name_the_reason_and_the_fix);
	tcase_add_test(tc, test_errors_tolerance_all_is_accepted_with_a_dead_letter_topic);
	tcase_add_test(tc, test_keys_without_effect_are_listed_as_ignored_with_the_reason);
	tcase_add_test(tc, test_topic_creation_is_honoured_checked_and_turned_off_as_connect_does);
	tcase_add_test(tc, test_producer_settings_are_translated_and_overrides_win);
	tcase_add_test(tc, test_jaas_plain_credentials_are_read_and_other_modules_refused);
	tcase_add_test(tc, test_secret_never_shown);
	tcase_add_test(tc, test_missing_worker_file_or_required_key_is_an_error);
	tcase_add_test(tc, test_values_trimmed_and_matched_like_java);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(config_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
