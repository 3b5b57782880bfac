/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The configuration sources: which file is the Kafka Connect worker, the connector (properties
 * or JSON) or a Debezium Server application.properties; Connect's ${file:...}, ${env:...} and
 * ${dir:...} providers; Server's environment overrides and ${VAR:default}; outboxd.* keys and
 * OUTBOXD_* variables. The environment is always passed in, never read from the process.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "outboxd/config/cfgsrc.h"
#include "outboxd/util/buf.h"
#include "testdir.h"

static const char WORKER[] = "bootstrap.servers=kafka:9092\n"
			     "key.converter=org.apache.kafka.connect.json.JsonConverter\n";

static const char CONNECTOR[] =
	"name=outbox-connector\n"
	"connector.class=io.debezium.connector.postgresql.PostgresConnector\n"
	"database.hostname=db\n";

/* cfgsrc_load() of @n paths with @envp; must succeed. */
static struct cfgsrc
load_ok(const char *const *paths, int n, char *const *envp)
{
	struct cfgsrc src = CFGSRC_INIT;
	char err[512] = "";

	ck_assert_msg(cfgsrc_load(paths, n, envp, &src, err, sizeof(err)) == 0, "%s", err);
	return src;
}

/* cfgsrc_load() of @n paths with @envp; must fail; returns the message (static). */
static const char *
load_error(const char *const *paths, int n, char *const *envp)
{
	static char err[512];
	struct cfgsrc src = CFGSRC_INIT;

	err[0] = '\0';
	ck_assert_int_ne(cfgsrc_load(paths, n, envp, &src, err, sizeof(err)), 0);
	ck_assert_int_eq(src.flavour, 0); /* untouched */
	ck_assert_uint_gt(strlen(err), 0);
	return err;
}

START_TEST(test_worker_and_connector_are_told_apart_by_connector_class)
{
	const char *w = testdir_put("worker.properties", WORKER);
	const char *c = testdir_put("connector.properties", CONNECTOR);

	/* either order */
	for (int order = 0; order < 2; order++) {
		const char *paths[2] = { order ? c : w, order ? w : c };
		struct cfgsrc src = load_ok(paths, 2, NULL);

		ck_assert_int_eq(src.flavour, CFGSRC_CONNECT);
		ck_assert_str_eq(src.worker_path, w);
		ck_assert_str_eq(src.connector_path, c);
		ck_assert_str_eq(kv_get(&src.worker, "bootstrap.servers"), "kafka:9092");
		ck_assert_ptr_null(kv_get(&src.worker, "connector.class"));
		ck_assert_str_eq(kv_get(&src.connector, "database.hostname"), "db");
		ck_assert_uint_eq(src.server.n, 0);
		cfgsrc_fini(&src);
	}
}
END_TEST

START_TEST(test_connector_json_gives_config_keys_name_and_lines)
{
	const char *paths[2] = {
		testdir_put("worker.properties", WORKER),
		testdir_put(
			"connector.json",
			"{\n"
			"  \"name\": \"outbox-connector\",\n"
			"  \"config\": {\n"
			"    \"connector.class\": \"io.debezium.connector.postgresql.PostgresConnector\",\n"
			"    \"database.port\": 5432,\n"
			"    \"database.tcpKeepAlive\": true\n"
			"  }\n"
			"}\n"),
	};
	struct cfgsrc src = load_ok(paths, 2, NULL);
	char want[160];

	ck_assert_int_eq(src.flavour, CFGSRC_CONNECT);
	ck_assert_str_eq(src.connector_path, paths[1]);
	/* numbers and booleans as Connect sees them: their text */
	ck_assert_str_eq(kv_get(&src.connector, "database.port"), "5432");
	ck_assert_str_eq(kv_get(&src.connector, "database.tcpKeepAlive"), "true");
	/* the REST document's top-level name is the connector's name */
	ck_assert_str_eq(kv_get(&src.connector, "name"), "outbox-connector");
	snprintf(want, sizeof(want), "%s:5", paths[1]);
	ck_assert_str_eq(kv_find(&src.connector, "database.port")->origin, want);
	snprintf(want, sizeof(want), "%s:2", paths[1]);
	ck_assert_str_eq(kv_find(&src.connector, "name")->origin, want);
	cfgsrc_fini(&src);
}
END_TEST

START_TEST(test_bare_json_object_is_a_connector_config)
{
	const char *paths[2] = {
		testdir_put("worker.properties", WORKER),
		testdir_put("c.json", "  {\"connector.class\": \"x\", \"slot.name\": \"s\"}"),
	};
	struct cfgsrc src = load_ok(paths, 2, NULL);

	ck_assert_str_eq(kv_get(&src.connector, "slot.name"), "s");
	ck_assert_ptr_null(kv_get(&src.connector, "name"));
	cfgsrc_fini(&src);
}
END_TEST

START_TEST(test_json_that_is_not_a_flat_config_is_refused_with_the_line)
{
	const char *paths[2] = { testdir_put("worker.properties", WORKER), NULL };
	char want[160];

	paths[1] = testdir_put("c.json", "{\"config\": {\n\"a\": \"b\",\n\"nested\": {\"x\": 1}}}");
	snprintf(want, sizeof(want), "%s:3: nested:", paths[1]);
	ck_assert_ptr_nonnull(strstr(load_error(paths, 2, NULL), want));
	paths[1] = testdir_put("c.json", "{\"config\": [1]}");
	ck_assert_ptr_nonnull(strstr(load_error(paths, 2, NULL), "must be a JSON object"));
	paths[1] = testdir_put("c.json", "{\n\"a\": \n");
	ck_assert_ptr_nonnull(strstr(load_error(paths, 2, NULL), "invalid JSON"));
}
END_TEST

START_TEST(test_connect_needs_exactly_one_worker_and_one_connector)
{
	const char *w1 = testdir_put("w1.properties", WORKER),
		   *w2 = testdir_put("w2.properties", WORKER);
	const char *c = testdir_put("c.properties", CONNECTOR);
	const char *two_workers[2] = { w1, w2 }, *two_connectors[2] = { c, c };
	const char *only_worker[1] = { w1 }, *only_connector[1] = { c };

	ck_assert_ptr_nonnull(
		strstr(load_error(two_workers, 2, NULL), "is also a Kafka Connect worker"));
	ck_assert_ptr_nonnull(strstr(load_error(two_connectors, 2, NULL), "is also a connector"));
	ck_assert_ptr_nonnull(strstr(load_error(only_worker, 1, NULL), "no connector file"));
	ck_assert_ptr_nonnull(strstr(load_error(only_connector, 1, NULL), "no worker file"));
	ck_assert_ptr_nonnull(strstr(load_error(NULL, 0, NULL), "no configuration file"));
}
END_TEST

START_TEST(test_missing_file_is_an_error_naming_it)
{
	char missing[128];
	const char *paths[1] = { missing };

	snprintf(missing, sizeof(missing), "%s/nope.properties", testdir_path());
	ck_assert_ptr_nonnull(strstr(load_error(paths, 1, NULL), "nope.properties"));
}
END_TEST

static const char SERVER[] =
	"debezium.sink.type=kafka\n"
	"debezium.sink.kafka.producer.bootstrap.servers=kafka:9092\n"
	"debezium.source.connector.class=io.debezium.connector.postgresql.PostgresConnector\n"
	"debezium.source.database.hostname=db\n"
	"debezium.transforms=outbox\n"
	"debezium.transforms.outbox.type=io.debezium.transforms.outbox.EventRouter\n"
	"debezium.predicates=p\n"
	"debezium.predicates.p.type=x\n"
	"debezium.format.value.schemas.enable=false\n"
	"quarkus.log.level=INFO\n"
	"outboxd.http.port=9000\n";

START_TEST(test_server_file_splits_into_connector_keys_and_the_rest)
{
	const char *paths[1] = { testdir_put("application.properties", SERVER) };
	struct cfgsrc src = load_ok(paths, 1, NULL);

	ck_assert_int_eq(src.flavour, CFGSRC_SERVER);
	ck_assert_ptr_null(src.worker_path);
	ck_assert_str_eq(src.connector_path, paths[0]);
	ck_assert_uint_eq(src.worker.n, 0);
	/* debezium.source.* without the prefix; debezium.transforms / predicates as Connect's */
	ck_assert_str_eq(kv_get(&src.connector, "database.hostname"), "db");
	ck_assert_str_eq(kv_get(&src.connector, "transforms"), "outbox");
	ck_assert_str_eq(kv_get(&src.connector, "transforms.outbox.type"),
			 "io.debezium.transforms.outbox.EventRouter");
	ck_assert_str_eq(kv_get(&src.connector, "predicates.p.type"), "x");
	ck_assert_str_eq(kv_get(&src.server, "debezium.sink.type"), "kafka");
	ck_assert_str_eq(kv_get(&src.server, "debezium.format.value.schemas.enable"), "false");
	ck_assert_str_eq(kv_get(&src.server, "quarkus.log.level"), "INFO");
	ck_assert_ptr_null(kv_get(&src.server, "debezium.source.database.hostname"));
	ck_assert_str_eq(kv_get(&src.outboxd, "outboxd.http.port"), "9000");
	cfgsrc_fini(&src);
}
END_TEST

START_TEST(test_server_file_must_come_alone)
{
	const char *paths[2] = { testdir_put("application.properties", SERVER),
				 testdir_put("worker.properties", WORKER) };

	ck_assert_ptr_nonnull(strstr(load_error(paths, 2, NULL), "pass it alone"));
}
END_TEST

/* MicroProfile Config: DEBEZIUM_SOURCE_DATABASE_HOSTNAME overrides debezium.source.database.hostname. */
START_TEST(test_server_environment_overrides_and_adds_keys)
{
	const char *paths[1] = { testdir_put("application.properties", SERVER) };
	char *envp[] = { "DEBEZIUM_SOURCE_DATABASE_HOSTNAME=db2",
			 "DEBEZIUM_SOURCE_SLOT_NAME=from_env",
			 "DEBEZIUM_SINK_KAFKA_PRODUCER_LINGER_MS=5", "HOME=/root", NULL };
	struct cfgsrc src = load_ok(paths, 1, envp);

	ck_assert_str_eq(kv_get(&src.connector, "database.hostname"), "db2");
	ck_assert_str_eq(kv_find(&src.connector, "database.hostname")->origin,
			 "environment DEBEZIUM_SOURCE_DATABASE_HOSTNAME");
	/* a key only the environment names gets the vocabulary's spelling */
	ck_assert_str_eq(kv_get(&src.connector, "slot.name"), "from_env");
	ck_assert_str_eq(kv_get(&src.server, "debezium.sink.kafka.producer.linger.ms"), "5");
	/* variables outside Debezium's prefixes are no keys */
	ck_assert_ptr_null(kv_get(&src.server, "home"));
	cfgsrc_fini(&src);
}
END_TEST

START_TEST(test_server_expressions_expand_from_environment_properties_and_defaults)
{
	const char *paths[1] = {
		testdir_put("application.properties",
			    "debezium.sink.type=kafka\n"
			    "debezium.source.database.user=${PG_USER}\n"
			    "debezium.source.database.port=${PG_PORT:5432}\n"
			    "debezium.source.database.dbname=${db.name}-${PG_SUFFIX:x}\n"
			    "db.name=app\n"
			    "debezium.source.topic.prefix=${debezium.sink.type}\n"),
	};
	char *envp[] = { "PG_USER=alice", NULL };
	struct cfgsrc src = load_ok(paths, 1, envp);

	ck_assert_str_eq(kv_get(&src.connector, "database.user"), "alice");
	ck_assert_str_eq(kv_get(&src.connector, "database.port"), "5432");
	ck_assert_str_eq(kv_get(&src.connector, "database.dbname"), "app-x");
	ck_assert_str_eq(kv_get(&src.connector, "topic.prefix"), "kafka");
	cfgsrc_fini(&src);
}
END_TEST

/*
 * As SmallRye Config reads a value, \$ and $$ are a literal $: how a Debezium Server user keeps
 * EventRouter's ${routedByValue} (the file's \\$ is the properties escape of \$). A backslash
 * before anything else stays, and so does a lone $.
 */
START_TEST(test_server_expressions_escape_dollar_as_smallrye_does)
{
	const char *paths[1] = {
		testdir_put(
			"application.properties",
			"debezium.sink.type=kafka\n"
			"debezium.transforms.outbox.route.topic.replacement=outbox.\\\\${routedByValue}\n"
			"debezium.source.a=$${routedByValue}-x\n"
			"debezium.source.b=p$$$${PG_USER}q\n"
			"debezium.source.c=$${PG_USER}${PG_USER}\\\\d $1 $$$ $\n"
			"debezium.source.d=\\\\\\\\${PG_USER}\n"),
	};
	char *envp[] = { "PG_USER=alice", NULL };
	struct cfgsrc src = load_ok(paths, 1, envp);

	ck_assert_str_eq(kv_get(&src.connector, "transforms.outbox.route.topic.replacement"),
			 "outbox.${routedByValue}");
	ck_assert_str_eq(kv_get(&src.connector, "a"), "${routedByValue}-x");
	ck_assert_str_eq(kv_get(&src.connector, "b"), "p$${PG_USER}q");
	ck_assert_str_eq(kv_get(&src.connector, "c"), "${PG_USER}alice\\d $1 $$ $");
	ck_assert_str_eq(kv_get(&src.connector, "d"), "\\${PG_USER}");
	cfgsrc_fini(&src);
}
END_TEST

START_TEST(test_server_expression_without_value_or_default_is_an_error)
{
	const char *paths[1] = { testdir_put(
		"application.properties", "debezium.sink.type=kafka\n"
					  "debezium.source.database.password=${PG_PASSWORD}\n") };
	const char *err = load_error(paths, 1, NULL);
	char want[160];

	snprintf(want, sizeof(want),
		 "%s:2: debezium.source.database.password: ${PG_PASSWORD} is "
		 "not set",
		 paths[0]);
	ck_assert_msg(strstr(err, want) != NULL, "%s", err);
	paths[0] =
		testdir_put("application.properties", "debezium.sink.type=${a}\na=${b}\nb=${a}\n");
	ck_assert_ptr_nonnull(strstr(load_error(paths, 1, NULL), "nest too deeply"));
}
END_TEST

/* References that multiply within the depth (10^8 bytes from 463) are refused, and fast. */
START_TEST(test_server_expressions_that_multiply_are_refused)
{
	struct buf text = BUF_INIT;
	const char *paths[1];

	buf_add_str(&text, "debezium.source.k0=");
	for (int level = 0; level < 8; level++) {
		for (int i = 0; i < 10; i++) {
			buf_add_fmt(&text, "${k%d}", level + 1);
		}
		buf_add_fmt(&text, "\nk%d=", level + 1);
	}
	buf_add_str(&text, "xxxxxxxxxx\n");
	paths[0] = testdir_put("application.properties", buf_cstr(&text));
	ck_assert_ptr_nonnull(strstr(load_error(paths, 1, NULL), "references multiply"));
	buf_fini(&text);
}
END_TEST

static const char PROVIDERS[] =
	"config.providers=file, env,dir\n"
	"config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider\n"
	"config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider\n"
	"config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider\n";

START_TEST(test_declared_providers_resolve_file_env_and_dir_references)
{
	struct buf connector = BUF_INIT;
	const char *paths[2];
	char *envp[] = { "PG_USER=alice", NULL };
	struct cfgsrc src;

	testdir_put("secrets.properties", "pg.password=s3cret\n");
	{
		char sub[128];

		snprintf(sub, sizeof(sub), "%s/d", testdir_path());
		ck_assert_int_eq(mkdir(sub, 0700), 0);
		testdir_put("d/token", "t0k3n");
	}
	buf_add_str(&connector, CONNECTOR);
	buf_add_fmt(&connector,
		    "database.password=${file:%s/secrets.properties:pg.password}\n"
		    "database.user=${env:PG_USER}\n"
		    "database.sslpassword=${dir:%s/d:token}\n"
		    "database.dbname=app-${env:PG_USER}-db\n",
		    testdir_path(), testdir_path());
	paths[0] = testdir_put("worker.properties", PROVIDERS);
	paths[1] = testdir_put("connector.properties", buf_cstr(&connector));
	src = load_ok(paths, 2, envp);
	ck_assert_str_eq(kv_get(&src.connector, "database.password"), "s3cret");
	ck_assert_str_eq(kv_get(&src.connector, "database.user"), "alice");
	ck_assert_str_eq(kv_get(&src.connector, "database.sslpassword"), "t0k3n");
	ck_assert_str_eq(kv_get(&src.connector, "database.dbname"), "app-alice-db");
	cfgsrc_fini(&src);
	buf_fini(&connector);
}
END_TEST

/* Kafka's ConfigTransformer leaves a reference to an undeclared provider as written. */
START_TEST(test_reference_to_an_undeclared_provider_stays_as_written)
{
	const char *paths[2] = { testdir_put("worker.properties", WORKER),
				 testdir_put("connector.properties",
					     "connector.class=x\ndatabase.user=${env:PG_USER}\n") };
	char *envp[] = { "PG_USER=alice", NULL };
	struct cfgsrc src = load_ok(paths, 2, envp);

	ck_assert_str_eq(kv_get(&src.connector, "database.user"), "${env:PG_USER}");
	cfgsrc_fini(&src);
	paths[0] = testdir_put("worker.properties", PROVIDERS);
	paths[1] = testdir_put("connector.properties",
			       "connector.class=x\ndatabase.user=${vault:k}\n");
	src = load_ok(paths, 2, envp);
	ck_assert_str_eq(kv_get(&src.connector, "database.user"), "${vault:k}");
	cfgsrc_fini(&src);
}
END_TEST

START_TEST(test_unresolvable_reference_names_key_and_origin_not_secrets)
{
	struct buf connector = BUF_INIT;
	const char *paths[2];
	const char *err;
	char want[160];

	testdir_put("secrets.properties", "pg.password=s3cret\n");
	buf_add_fmt(
		&connector,
		"connector.class=x\ndatabase.password=${file:%s/secrets.properties:pg.pasword}\n",
		testdir_path());
	paths[0] = testdir_put("worker.properties", PROVIDERS);
	paths[1] = testdir_put("connector.properties", buf_cstr(&connector));
	err = load_error(paths, 2, NULL);
	snprintf(want, sizeof(want), "%s:2: database.password: cannot resolve", paths[1]);
	ck_assert_msg(strstr(err, want) != NULL, "%s", err);
	ck_assert_ptr_nonnull(strstr(err, "\"pg.pasword\" not found"));
	ck_assert_msg(strstr(err, "s3cret") == NULL, "%s", err);
	paths[1] = testdir_put("connector.properties",
			       "connector.class=x\ndatabase.user=${env:NOPE}\n");
	ck_assert_ptr_nonnull(strstr(load_error(paths, 2, NULL), "NOPE is not set"));
	buf_fini(&connector);
}
END_TEST

START_TEST(test_unsupported_provider_class_is_refused)
{
	const char *paths[2] = {
		testdir_put(
			"worker.properties",
			"config.providers=vault\nconfig.providers.vault.class=com.example.VaultProvider\n"),
		testdir_put("connector.properties", CONNECTOR),
	};

	ck_assert_ptr_nonnull(strstr(load_error(paths, 2, NULL),
				     "\"com.example.VaultProvider\" is not supported"));
}
END_TEST

/* outboxd.* may sit in any file; the connector file wins over the worker, OUTBOXD_* over both. */
START_TEST(test_outboxd_keys_come_from_any_file_and_the_environment_wins)
{
	struct buf w = BUF_INIT, c = BUF_INIT;
	const char *paths[2];
	char *envp[] = { "OUTBOXD_HTTP_PORT=9092", "OUTBOXD_SLOT_CREATE=true", NULL };
	struct cfgsrc src;

	buf_add_fmt(&w, "%soutboxd.http.port=9090\noutboxd.stall.warn.ms=1000\n", WORKER);
	buf_add_fmt(&c, "%soutboxd.http.port=9091\noutboxd.stall.warn.ms=2000\n", CONNECTOR);
	paths[0] = testdir_put("worker.properties", buf_cstr(&w));
	paths[1] = testdir_put("connector.properties", buf_cstr(&c));
	src = load_ok(paths, 2, envp);
	ck_assert_str_eq(kv_get(&src.outboxd, "outboxd.stall.warn.ms"), "2000");
	ck_assert_str_eq(kv_get(&src.outboxd, "outboxd.http.port"), "9092");
	ck_assert_str_eq(kv_find(&src.outboxd, "outboxd.http.port")->origin,
			 "environment OUTBOXD_HTTP_PORT");
	ck_assert_str_eq(kv_get(&src.outboxd, "outboxd.slot.create"), "true");
	/* moved, not copied */
	ck_assert_ptr_null(kv_get(&src.worker, "outboxd.http.port"));
	ck_assert_ptr_null(kv_get(&src.connector, "outboxd.http.port"));
	cfgsrc_fini(&src);
	buf_fini(&w);
	buf_fini(&c);
}
END_TEST

START_TEST(test_env_name_is_upper_case_with_underscores)
{
	char *n = cfgsrc_env_name("debezium.source.database.hostname");

	ck_assert_str_eq(n, "DEBEZIUM_SOURCE_DATABASE_HOSTNAME");
	free(n);
	n = cfgsrc_env_name("a-b.c_d9");
	ck_assert_str_eq(n, "A_B_C_D9");
	free(n);
}
END_TEST

START_TEST(test_fini_leaves_cfgsrc_init)
{
	const char *paths[1] = { testdir_put("application.properties", SERVER) };
	struct cfgsrc src = load_ok(paths, 1, NULL);

	cfgsrc_fini(&src);
	ck_assert_int_eq(src.flavour, 0);
	ck_assert_ptr_null(src.connector_path);
	ck_assert_uint_eq(src.connector.n + src.server.n + src.outboxd.n + src.worker.n, 0);
	cfgsrc_fini(&src);
}
END_TEST

static Suite *
cfgsrc_suite(void)
{
	Suite *s = suite_create("cfgsrc");
	TCase *files = tcase_create("which-file");
	TCase *server = tcase_create("debezium-server");
	TCase *prov = tcase_create("providers");
	TCase *own = tcase_create("outboxd-keys");
	TCase *all[] = { files, server, prov, own };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		tcase_add_checked_fixture(all[i], testdir_setup, testdir_teardown);
		suite_add_tcase(s, all[i]);
	}
	tcase_add_test(files, test_worker_and_connector_are_told_apart_by_connector_class);
	tcase_add_test(files, test_connector_json_gives_config_keys_name_and_lines);
	tcase_add_test(files, test_bare_json_object_is_a_connector_config);
	tcase_add_test(files, test_json_that_is_not_a_flat_config_is_refused_with_the_line);
	tcase_add_test(files, test_connect_needs_exactly_one_worker_and_one_connector);
	tcase_add_test(files, test_missing_file_is_an_error_naming_it);
	tcase_add_test(server, test_server_file_splits_into_connector_keys_and_the_rest);
	tcase_add_test(server, test_server_file_must_come_alone);
	tcase_add_test(server, test_server_environment_overrides_and_adds_keys);
	tcase_add_test(server,
		       test_server_expressions_expand_from_environment_properties_and_defaults);
	tcase_add_test(server, test_server_expression_without_value_or_default_is_an_error);
	tcase_add_test(server, test_server_expressions_escape_dollar_as_smallrye_does);
	tcase_add_test(server, test_server_expressions_that_multiply_are_refused);
	tcase_add_test(prov, test_declared_providers_resolve_file_env_and_dir_references);
	tcase_add_test(prov, test_reference_to_an_undeclared_provider_stays_as_written);
	tcase_add_test(prov, test_unresolvable_reference_names_key_and_origin_not_secrets);
	tcase_add_test(prov, test_unsupported_provider_class_is_refused);
	tcase_add_test(own, test_outboxd_keys_come_from_any_file_and_the_environment_wins);
	tcase_add_test(own, test_env_name_is_upper_case_with_underscores);
	tcase_add_test(own, test_fini_leaves_cfgsrc_init);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(cfgsrc_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
