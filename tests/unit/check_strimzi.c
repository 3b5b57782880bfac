/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Strimzi's KafkaConnector resource as a connector file: the keys and their lines, the values as
 * Kafka Connect would receive them after Kubernetes (YAML 1.1) and Strimzi, the fields without
 * effect, and a clear refusal with the line for everything outboxd cannot take as written.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/config/strimzi.h"

static const char CONNECTOR[] =
	"# the resource as a Strimzi user has it\n"				   /* 1 */
	"apiVersion: kafka.strimzi.io/v1beta2\n"				   /* 2 */
	"kind: KafkaConnector\n"						   /* 3 */
	"metadata:\n"								   /* 4 */
	"  name: outbox-connector\n"						   /* 5 */
	"  labels:\n"								   /* 6 */
	"    strimzi.io/cluster: my-connect\n"					   /* 7 */
	"spec:\n"								   /* 8 */
	"  class: io.debezium.connector.postgresql.PostgresConnector\n"		   /* 9 */
	"  tasksMax: 1\n"							   /* 10 */
	"  autoRestart:\n"							   /* 11 */
	"    enabled: true\n"							   /* 12 */
	"  state: running\n"							   /* 13 */
	"  config: # f\u00fcr den Relay, \u00e9t\u00e9 \u2014 \u00fcberall\n"	   /* 14 */
	"    database.hostname: d\u00e9.example.com\n"				   /* 15 */
	"    database.port: 5432\n"						   /* 16 */
	"    database.password: ${file:/run/secrets/pg:password}\n"		   /* 17 */
	"    database.tcpKeepAlive: yes\n"					   /* 18 */
	"    route.tombstone.on.empty.payload: Off\n"				   /* 19 */
	"    heartbeat.interval.ms: '010'\n"					   /* 20 */
	"    table.include.list: \"public.outbox\"\n"				   /* 21 */
	"    transforms.outbox.route.topic.replacement: ${routedByValue}.events\n" /* 22 */
	"    transforms.outbox.table.fields.additional.placement: >-\n"		   /* 23 */
	"      type:header:eventType,\n"					   /* 24 */
	"      tenant:partition\n"						   /* 25 */
	"    snapshot.mode: !!str no\n"						   /* 26 */
	"    poll.interval.ms: -5\n"						   /* 27 */
	"    outboxd.http.port: 0\n";						   /* 28 */

static struct kv keys, ignored;
static char err[512];

static int
parse(const char *text)
{
	kv_fini(&keys);
	kv_fini(&ignored);
	err[0] = '\0';
	return strimzi_parse("c.yaml", text, strlen(text), &keys, &ignored, err, sizeof(err));
}

static void
teardown(void)
{
	kv_fini(&keys);
	kv_fini(&ignored);
}

/* Fails the test unless parsing @text fails with a message containing @want. */
static void
refused(const char *text, const char *want)
{
	ck_assert_int_ne(parse(text), 0);
	ck_assert_msg(strstr(err, want), "want \"%s\" in: %s", want, err);
	ck_assert_uint_eq(keys.n, 0);
}

static void
has(const char *key, const char *value, const char *origin)
{
	const struct kv_entry *e = kv_find(&keys, key);

	ck_assert_msg(e, "%s missing", key);
	ck_assert_str_eq(e->value, value);
	ck_assert_str_eq(e->origin, origin);
}

START_TEST(test_a_connector_resource_gives_its_keys_and_lines)
{
	ck_assert_msg(parse(CONNECTOR) == 0, "%s", err);
	has("name", "outbox-connector", "c.yaml:5");
	has("connector.class", "io.debezium.connector.postgresql.PostgresConnector", "c.yaml:9");
	has("tasks.max", "1", "c.yaml:10");
	has("database.hostname", "d\u00e9.example.com", "c.yaml:15");
	has("database.port", "5432", "c.yaml:16");
	/* providers are the worker's business (cfgsrc resolves them later) */
	has("database.password", "${file:/run/secrets/pg:password}", "c.yaml:17");
	/* YAML 1.1 booleans, as Kubernetes reads them */
	has("database.tcpKeepAlive", "true", "c.yaml:18");
	has("route.tombstone.on.empty.payload", "false", "c.yaml:19");
	/* quoted: as written */
	has("heartbeat.interval.ms", "010", "c.yaml:20");
	has("table.include.list", "public.outbox", "c.yaml:21");
	has("transforms.outbox.route.topic.replacement", "${routedByValue}.events", "c.yaml:22");
	has("transforms.outbox.table.fields.additional.placement",
	    "type:header:eventType, tenant:partition", "c.yaml:23");
	/* an explicit string tag keeps the word a string (also after multi-byte characters:
	 * libyaml's marks count characters) */
	has("snapshot.mode", "no", "c.yaml:26");
	has("poll.interval.ms", "-5", "c.yaml:27");
	has("outboxd.http.port", "0", "c.yaml:28");
	ck_assert_uint_eq(keys.n, 15);
	/* the keys in file order */
	ck_assert_str_eq(keys.v[1].key, "connector.class");
	ck_assert_str_eq(keys.v[3].key, "database.hostname");
	/* accepted without effect, with the reason and the line */
	ck_assert_uint_eq(ignored.n, 1);
	ck_assert_str_eq(ignored.v[0].key, "spec.autoRestart");
	ck_assert_str_eq(ignored.v[0].origin, "c.yaml:11");
	ck_assert_ptr_nonnull(strstr(ignored.v[0].value, "restarts"));
}
END_TEST

START_TEST(test_the_connector_among_other_documents)
{
	const char *text = "apiVersion: kafka.strimzi.io/v1beta2\n"
			   "kind: KafkaConnect\n"
			   "metadata: {name: my-connect}\n"
			   "spec: {replicas: 1}\n"
			   "---\n"
			   "apiVersion: kafka.strimzi.io/v1\n"
			   "kind: KafkaConnector\n"
			   "metadata: {name: outbox}\n"
			   "spec:\n"
			   "  class: x\n"
			   "  config: {slot.name: s1}\n"
			   "status: {conditions: []}\n"
			   "---\n"
			   "kind: ConfigMap\n";

	ck_assert_msg(parse(text) == 0, "%s", err);
	has("name", "outbox", "c.yaml:8");
	has("slot.name", "s1", "c.yaml:11");
	ck_assert_uint_eq(keys.n, 3);
}
END_TEST

START_TEST(test_no_connector_or_two_are_refused)
{
	refused("kind: KafkaConnect\napiVersion: kafka.strimzi.io/v1beta2\n---\n{a: 1}\n",
		"c.yaml:1: no KafkaConnector resource (found: KafkaConnect at line 1, no kind at "
		"line 4)");
	refused("", "no KafkaConnector resource (found: nothing)");
	refused("apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaConnector\nspec: {}\n---\n"
		"apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaConnector\nspec: {}\n",
		"c.yaml:5: a second KafkaConnector (the first is at line 1)");
	refused("apiVersion: v1\nkind: KafkaConnector\nspec: {}\n",
		"c.yaml:1: apiVersion v1 is not Strimzi's");
	refused("apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaConnector\n",
		"c.yaml:1: the KafkaConnector has no spec map");
}
END_TEST

START_TEST(test_invalid_yaml_names_the_line)
{
	refused("apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaConnector\nspec:\n"
		"  config:\n    a: [1\n    b: 2\n",
		"c.yaml:6: invalid YAML");
	refused("kind: KafkaConnector\n\tspec: 1\n", "c.yaml:2: invalid YAML");
}
END_TEST

#define HEAD "apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaConnector\nspec:\n"

START_TEST(test_a_connector_not_meant_to_run_is_refused)
{
	refused(HEAD "  state: paused\n", "c.yaml:4: spec.state is paused");
	refused(HEAD "  state: stopped\n", "spec.state is stopped");
	refused(HEAD "  pause: true\n", "c.yaml:4: spec.pause is true");
	ck_assert_int_eq(parse(HEAD "  pause: false\n  class: x\n"), 0);
}
END_TEST

START_TEST(test_keys_strimzi_forbids_and_unknown_fields_are_refused)
{
	refused(HEAD "  config:\n    connector.class: x\n",
		"c.yaml:5: spec.config.connector.class: Strimzi does not allow it here; set "
		"spec.class");
	refused(HEAD "  config:\n    tasks.max: 1\n", "set spec.tasksMax");
	refused(HEAD "  config:\n    name: n\n", "set metadata.name");
	refused(HEAD "  clas: x\n", "c.yaml:4: spec.clas is not a field of Strimzi's");
	refused(HEAD "  config:\n    a: 1\n    a: 2\n", "c.yaml:6: spec.config.a is given twice");
	refused(HEAD "  config: [a]\n", "c.yaml:4: spec.config must be a map");
	refused(HEAD "  config:\n    ? [a]\n    : 1\n", "c.yaml:5: spec.config: a key must be");
}
END_TEST

/* Each unquoted value whose text Kubernetes would change: refused, with the fix. */
START_TEST(test_values_kubernetes_would_change_are_refused_with_the_line)
{
	static const char *const changed[] = {
		"1.0", "0x1f", "010",	"1_000", ".inf", "-.Inf", "1e3",
		"+5",  "0o17", "0b101", "1.",	 ".5",	 "09",	  "1234567890123456789"
	};
	char text[256];

	for (size_t i = 0; i < sizeof(changed) / sizeof(changed[0]); i++) {
		snprintf(text, sizeof(text), HEAD "  config:\n    k: %s\n", changed[i]);
		refused(text, "c.yaml:5: k: the unquoted number");
		ck_assert_msg(strstr(err, "quote it"), "%s", err);
		snprintf(text, sizeof(text), HEAD "  config:\n    k: '%s'\n", changed[i]);
		ck_assert_msg(parse(text) == 0, "%s: %s", changed[i], err);
		has("k", changed[i], "c.yaml:5");
	}
	refused(HEAD "  config:\n    k:\n", "c.yaml:5: k: no value (null)");
	refused(HEAD "  config:\n    k: ~\n", "no value (null)");
	refused(HEAD "  config:\n    k: {a: 1}\n",
		"c.yaml:5: k: expected a single value, found a map");
	refused(HEAD "  config:\n    k: [1, 2]\n", "found a list");
	refused(HEAD "  config:\n    k: !!int 5\n", "c.yaml:5: k: the tag tag:yaml.org,2002:int is "
						    "not supported");
	/* words and forms that stay text */
	ck_assert_int_eq(parse(HEAD "  config:\n    a: 10.0.0.1\n    b: 1.2.3\n    c: 0x\n"
				    "    d: 12ms\n    e: .5s\n    f: yesno\n    g: 0\n"),
			 0);
	has("a", "10.0.0.1", "c.yaml:5");
	has("b", "1.2.3", "c.yaml:6");
	has("c", "0x", "c.yaml:7");
	has("d", "12ms", "c.yaml:8");
	has("e", ".5s", "c.yaml:9");
	has("f", "yesno", "c.yaml:10");
	has("g", "0", "c.yaml:11");
	/* an empty string, quoted */
	ck_assert_int_eq(parse(HEAD "  config:\n    k: \"\"\n"), 0);
	has("k", "", "c.yaml:5");
}
END_TEST

START_TEST(test_which_files_are_resources)
{
	ck_assert(strimzi_is_resource("a/connector.yaml", "x=1"));
	ck_assert(strimzi_is_resource("connector.yml", ""));
	ck_assert(strimzi_is_resource("/etc/outboxd/connector",
				      "apiVersion: x\nkind: KafkaConnector\n"));
	ck_assert(strimzi_is_resource("c", "kind:KafkaConnector # the resource\n"));
	ck_assert(!strimzi_is_resource("c.properties", "name=kind: KafkaConnector\n"));
	ck_assert(!strimzi_is_resource("c.properties", "kind: KafkaConnectorX\n"));
	ck_assert(!strimzi_is_resource("c.json", "{\"kind\": \"KafkaConnector\"}"));
}
END_TEST

static Suite *
strimzi_suite(void)
{
	Suite *s = suite_create("strimzi");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_a_connector_resource_gives_its_keys_and_lines);
	tcase_add_test(tc, test_the_connector_among_other_documents);
	tcase_add_test(tc, test_no_connector_or_two_are_refused);
	tcase_add_test(tc, test_invalid_yaml_names_the_line);
	tcase_add_test(tc, test_a_connector_not_meant_to_run_is_refused);
	tcase_add_test(tc, test_keys_strimzi_forbids_and_unknown_fields_are_refused);
	tcase_add_test(tc, test_values_kubernetes_would_change_are_refused_with_the_line);
	tcase_add_test(tc, test_which_files_are_resources);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(strimzi_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
