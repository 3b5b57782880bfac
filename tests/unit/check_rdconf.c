/* SPDX-License-Identifier: Apache-2.0 */
/* Java producer settings -> librdkafka (docs/running.md, "Producer settings"). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/config/rdconf.h"
#include "outboxd/util/kv.h"

#define ORIGIN "worker.properties:7"

/* The outcome of translating one setting. */
struct outcome {
	int rc;
	struct kv out;
	struct kv ignored;
	char err[512];
};

/* Translates @key=@value (displayed as producer.@key) with @all as the producer's settings. */
static struct outcome
translate_with(const char *key, const char *value, const struct kv *all)
{
	struct outcome o = { .out = KV_INIT, .ignored = KV_INIT };
	char display[128];

	snprintf(display, sizeof(display), "producer.%s", key);
	o.rc = rdconf_translate(key, value, all, ORIGIN, display, &o.out, &o.ignored, o.err,
				sizeof(o.err));
	return o;
}

static struct outcome
translate(const char *key, const char *value)
{
	struct kv all = KV_INIT;
	struct outcome o;

	kv_set(&all, key, value, ORIGIN);
	o = translate_with(key, value, &all);
	kv_fini(&all);
	return o;
}

static void
outcome_fini(struct outcome *o)
{
	kv_fini(&o->out);
	kv_fini(&o->ignored);
}

/* @key=@value translates to exactly one librdkafka setting @rd=@want. */
static void
assert_becomes(const char *key, const char *value, const char *rd, const char *want)
{
	struct outcome o = translate(key, value);

	ck_assert_msg(o.rc == 0, "%s: %s", key, o.err);
	ck_assert_uint_eq(o.out.n, 1);
	ck_assert_str_eq(o.out.v[0].key, rd);
	ck_assert_str_eq(o.out.v[0].value, want);
	ck_assert_str_eq(o.out.v[0].origin, ORIGIN);
	ck_assert_uint_eq(o.ignored.n, 0);
	outcome_fini(&o);
}

/* @key=@value is refused; the message starts "origin: display: " and contains @needle. */
static void
assert_refused(const char *key, const char *value, const char *needle)
{
	struct outcome o = translate(key, value);
	char prefix[160];

	snprintf(prefix, sizeof(prefix), "%s: producer.%s: ", ORIGIN, key);
	ck_assert_int_eq(o.rc, -EINVAL);
	ck_assert_msg(strncmp(o.err, prefix, strlen(prefix)) == 0, "%s", o.err);
	ck_assert_msg(strstr(o.err, needle) != NULL, "no \"%s\" in: %s", needle, o.err);
	ck_assert_uint_eq(o.out.n, 0);
	outcome_fini(&o);
}

/* @key is listed as ignored (under its displayed name) with a reason containing @needle. */
static void
assert_ignored(const char *key, const char *value, const char *needle)
{
	struct outcome o = translate(key, value);
	char display[128];

	snprintf(display, sizeof(display), "producer.%s", key);
	ck_assert_msg(o.rc == 0, "%s: %s", key, o.err);
	ck_assert_uint_eq(o.out.n, 0);
	ck_assert_uint_eq(o.ignored.n, 1);
	ck_assert_str_eq(o.ignored.v[0].key, display);
	ck_assert_msg(strstr(o.ignored.v[0].value, needle) != NULL, "%s: %s", key,
		      o.ignored.v[0].value);
	ck_assert_str_eq(o.ignored.v[0].origin, ORIGIN);
	outcome_fini(&o);
}

START_TEST(test_sasl_jaas_config_becomes_sasl_username_and_password)
{
	struct outcome o =
		translate("sasl.jaas.config",
			  "org.apache.kafka.common.security.plain.PlainLoginModule required "
			  "username=\"alice\" password=\"s3cret\";");

	ck_assert_msg(o.rc == 0, "%s", o.err);
	ck_assert_uint_eq(o.out.n, 2);
	ck_assert_str_eq(kv_get(&o.out, "sasl.username"), "alice");
	ck_assert_str_eq(kv_get(&o.out, "sasl.password"), "s3cret");
	ck_assert_str_eq(kv_find(&o.out, "sasl.password")->origin, ORIGIN);
	ck_assert_ptr_null(kv_get(&o.out, "sasl.jaas.config"));
	outcome_fini(&o);
}
END_TEST

START_TEST(test_jaas_credentials_read_quotes_escapes_and_line_breaks)
{
	char *user = NULL, *pass = NULL;

	ck_assert_int_eq(
		rdconf_jaas_credentials(
			"  org.apache.kafka.common.security.scram.ScramLoginModule required\n"
			"\tusername=alice\n\tpassword=\"pa\\\"ss word\";",
			&user, &pass),
		0);
	ck_assert_str_eq(user, "alice");
	ck_assert_str_eq(pass, "pa\"ss word");
	free(user);
	free(pass);
}
END_TEST

START_TEST(test_jaas_credentials_refuse_other_modules_and_incomplete_options)
{
	char *user = (char *)0x1, *pass = (char *)0x1;

	ck_assert_int_eq(rdconf_jaas_credentials("org.apache.kafka.common.security.oauthbearer."
						 "OAuthBearerLoginModule required;",
						 &user, &pass),
			 -ENOTSUP);
	ck_assert_int_eq(rdconf_jaas_credentials("org.apache.kafka.common.security.plain."
						 "PlainLoginModule required username=\"u\";",
						 &user, &pass),
			 -EINVAL);
	ck_assert_int_eq(rdconf_jaas_credentials("org.apache.kafka.common.security.plain."
						 "PlainLoginModule required username=\"u\" "
						 "password=\"unterminated",
						 &user, &pass),
			 -EINVAL);
	ck_assert_int_eq(rdconf_jaas_credentials("org.apache.kafka.common.security.plain."
						 "PlainLoginModule required username \"u\";",
						 &user, &pass),
			 -EINVAL);
	/* written only on success */
	ck_assert_ptr_eq(user, (char *)0x1);
	ck_assert_ptr_eq(pass, (char *)0x1);
}
END_TEST

/* A refused sasl.jaas.config never shows its value: it holds the password. */
START_TEST(test_refused_jaas_config_never_shows_the_password)
{
	static const char *const bad[] = {
		"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
		"unsecuredLoginStringClaim_sub=\"s3cret\";",
		"com.example.LoginModule required clientSecret=\"s3cret\";",
		"org.apache.kafka.common.security.plain.PlainLoginModule required "
		"username=\"alice\" password=\"s3cret",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct outcome o = translate("sasl.jaas.config", bad[i]);

		ck_assert_int_eq(o.rc, -EINVAL);
		ck_assert_ptr_nonnull(strstr(o.err, ORIGIN ": producer.sasl.jaas.config: "));
		ck_assert_msg(strstr(o.err, "s3cret") == NULL, "%s", o.err);
		ck_assert_msg(strstr(o.err, "alice") == NULL, "%s", o.err);
		outcome_fini(&o);
	}
}
END_TEST

START_TEST(test_max_request_size_becomes_message_max_bytes)
{
	assert_becomes("max.request.size", "2097152", "message.max.bytes", "2097152");
}
END_TEST

/* buffer.memory is bytes, queue.buffering.max.kbytes KiB: rounded up, never below the bytes. */
START_TEST(test_buffer_memory_becomes_kbytes_rounded_up)
{
	assert_becomes("buffer.memory", "33554432", "queue.buffering.max.kbytes", "32768");
	assert_becomes("buffer.memory", "1025", "queue.buffering.max.kbytes", "2");
	assert_becomes("buffer.memory", "1", "queue.buffering.max.kbytes", "1");
	assert_refused("buffer.memory", "0", "positive number of bytes");
	assert_refused("buffer.memory", "-1", "positive number of bytes");
	assert_refused("buffer.memory", "32m", "positive number of bytes");
	assert_refused("buffer.memory", "", "positive number of bytes");
	/* librdkafka's largest queue, 2147483647 KiB, and no overflow on the way near INT64_MAX */
	assert_becomes("buffer.memory", "2199023254528", "queue.buffering.max.kbytes",
		       "2147483647");
	assert_refused("buffer.memory", "2199023254529", "at most 2147483647 KiB");
	assert_refused("buffer.memory", "9223372036854775807", "at most 2147483647 KiB");
	assert_refused("buffer.memory", "9223372036854775295", "queue.buffering.max.kbytes");
}
END_TEST

START_TEST(test_renamed_settings_take_the_librdkafka_name)
{
	assert_becomes("delivery.timeout.ms", "120000", "message.timeout.ms", "120000");
	assert_becomes("sasl.mechanism", "SCRAM-SHA-512", "sasl.mechanisms", "SCRAM-SHA-512");
	assert_becomes("compression.zstd.level", "3", "compression.level", "3");
	assert_becomes("ssl.truststore.certificates", "-----BEGIN", "ssl.ca.pem", "-----BEGIN");
	/* Java's -1 (the OS default) is librdkafka's 0 */
	assert_becomes("receive.buffer.bytes", "-1", "socket.receive.buffer.bytes", "0");
	assert_becomes("send.buffer.bytes", "131072", "socket.send.buffer.bytes", "131072");
	/* Java's empty value switches host name verification off; librdkafka spells it none */
	assert_becomes("ssl.endpoint.identification.algorithm", "",
		       "ssl.endpoint.identification.algorithm", "none");
	assert_becomes("ssl.endpoint.identification.algorithm", "https",
		       "ssl.endpoint.identification.algorithm", "https");
}
END_TEST

START_TEST(test_settings_without_a_rule_pass_through_with_their_origin)
{
	assert_becomes("linger.ms", "5", "linger.ms", "5");
	assert_becomes("compression.type", "zstd", "compression.type", "zstd");
	assert_becomes("ssl.key.password", "k", "ssl.key.password", "k");
	assert_becomes("security.protocol", "SASL_SSL", "security.protocol", "SASL_SSL");
}
END_TEST

/* Java's default trust and key store type is JKS, which librdkafka cannot read. */
START_TEST(test_jks_stores_are_refused_with_the_pem_fix)
{
	struct kv all = KV_INIT;
	struct outcome o;

	assert_refused("ssl.truststore.location", "/etc/kafka/trust.jks", "ssl.ca.location");
	assert_refused("ssl.keystore.location", "/etc/kafka/key.jks", "PKCS12");
	kv_set(&all, "ssl.truststore.type", "JKS", ORIGIN);
	o = translate_with("ssl.truststore.location", "/t.jks", &all);
	ck_assert_int_eq(o.rc, -EINVAL);
	ck_assert_ptr_nonnull(strstr(o.err, "a JKS trust store"));
	ck_assert_ptr_nonnull(strstr(o.err, "ssl.ca.location"));
	outcome_fini(&o);
	/* librdkafka has no PKCS12 trust store either */
	kv_set(&all, "ssl.truststore.type", "PKCS12", ORIGIN);
	o = translate_with("ssl.truststore.location", "/t.p12", &all);
	ck_assert_int_eq(o.rc, -EINVAL);
	ck_assert_ptr_nonnull(strstr(o.err, "ssl.ca.location"));
	outcome_fini(&o);
	kv_fini(&all);
}
END_TEST

START_TEST(test_pem_and_pkcs12_stores_become_librdkafka_locations)
{
	struct kv all = KV_INIT;
	struct outcome o;

	kv_set(&all, "ssl.truststore.type", "PEM", ORIGIN);
	kv_set(&all, "ssl.keystore.type", "pem", ORIGIN);
	o = translate_with("ssl.truststore.location", "/ca.pem", &all);
	ck_assert_msg(o.rc == 0, "%s", o.err);
	ck_assert_str_eq(kv_get(&o.out, "ssl.ca.location"), "/ca.pem");
	outcome_fini(&o);
	/* a PEM key store file holds the key and its certificate chain */
	o = translate_with("ssl.keystore.location", "/client.pem", &all);
	ck_assert_msg(o.rc == 0, "%s", o.err);
	ck_assert_uint_eq(o.out.n, 2);
	ck_assert_str_eq(kv_get(&o.out, "ssl.certificate.location"), "/client.pem");
	ck_assert_str_eq(kv_get(&o.out, "ssl.key.location"), "/client.pem");
	outcome_fini(&o);
	kv_set(&all, "ssl.keystore.type", "PKCS12", ORIGIN);
	o = translate_with("ssl.keystore.location", "/client.p12", &all);
	ck_assert_msg(o.rc == 0, "%s", o.err);
	ck_assert_str_eq(kv_get(&o.out, "ssl.keystore.location"), "/client.p12");
	outcome_fini(&o);
	kv_fini(&all);
}
END_TEST

START_TEST(test_keystore_password_is_kept_only_for_pkcs12)
{
	struct kv all = KV_INIT;
	struct outcome o;

	kv_set(&all, "ssl.keystore.type", "PKCS12", ORIGIN);
	o = translate_with("ssl.keystore.password", "pw", &all);
	ck_assert_str_eq(kv_get(&o.out, "ssl.keystore.password"), "pw");
	ck_assert_uint_eq(o.ignored.n, 0);
	outcome_fini(&o);
	assert_ignored("ssl.keystore.password", "pw", "PKCS12");
	kv_fini(&all);
}
END_TEST

START_TEST(test_java_only_settings_are_ignored_with_the_reason)
{
	assert_ignored("key.serializer",
		       "org.apache.kafka.common.serialization.ByteArraySerializer", "converters");
	assert_ignored("value.serializer", "x", "converters");
	assert_ignored("max.block.ms", "60000", "never blocks");
	assert_ignored("interceptor.classes", "com.example.I", "Java classes");
	assert_ignored("metrics.sample.window.ms", "30000", "/metrics"); /* a prefix rule */
	assert_ignored("ssl.truststore.password", "pw", "PEM");
	assert_ignored("transaction.timeout.ms", "60000", "transactions");
	/* the Java default partitioner is what outboxd does anyway */
	assert_ignored("partitioner.class",
		       "org.apache.kafka.clients.producer.internals.DefaultPartitioner", "murmur2");
	assert_ignored("partitioner.ignore.keys", "false", "default");
}
END_TEST

/* sasl.jaas.config's OAuthBearerLoginModule with @options; its outcome. */
static struct outcome
oauth_jaas(const char *options)
{
	char jaas[512];

	snprintf(jaas, sizeof(jaas),
		 "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
		 "clientId=\"relay\" clientSecret=\"s3cret\" %s;",
		 options);
	return translate("sasl.jaas.config", jaas);
}

/*
 * librdkafka splits sasl.oauthbearer.extensions at commas (a backslash escapes one) and each at
 * its first '=': a value's comma and backslash are escaped, so the broker gets the value whole.
 */
START_TEST(test_oauth_extension_separators_are_escaped)
{
	struct outcome o = oauth_jaas("extension_groups=\"a,b=c\\\\d\" extension_pool=\"p=1\"");

	ck_assert_msg(o.rc == 0, "%s", o.err);
	ck_assert_str_eq(kv_get(&o.out, "sasl.oauthbearer.extensions"),
			 "groups=a\\,b=c\\\\d,pool=p=1");
	outcome_fini(&o);
}
END_TEST

/* What Kafka's broker refuses is refused here, naming the extension (RFC 7628's syntax). */
START_TEST(test_oauth_extension_outside_rfc7628_is_refused)
{
	static const struct {
		const char *options, *needle;
	} bad[] = {
		{ "extension_team-id=\"x\"", "extension_team-id: an OAUTHBEARER extension's name" },
		{ "extension_auth=\"x\"", "extension_auth: an OAUTHBEARER extension's name" },
		{ "extension_=\"x\"", "extension_: an OAUTHBEARER extension's name" },
		{ "extension_team=\"caf\xc3\xa9\"",
		  "extension_team: an OAUTHBEARER extension's value" },
		{ "extension_team=\"a\x01\"", "byte 0x01 at 1" },
		{ "extension_team=\"\"",
		  "extension_team: an OAUTHBEARER extension's value may not" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct outcome o = oauth_jaas(bad[i].options);

		ck_assert_msg(o.rc == -EINVAL, "%s: rc %d", bad[i].options, o.rc);
		ck_assert_msg(strstr(o.err, "producer.sasl.jaas.config: ") != NULL, "%s", o.err);
		ck_assert_msg(strstr(o.err, bad[i].needle) != NULL, "no \"%s\" in: %s",
			      bad[i].needle, o.err);
		ck_assert_ptr_null(kv_get(&o.out, "sasl.oauthbearer.extensions"));
		outcome_fini(&o);
	}
}
END_TEST

/* OAUTHBEARER with an OIDC token endpoint, as the Java client writes it (3.1 to 4.x). */
START_TEST(test_oidc_client_credentials_become_librdkafka_oidc)
{
	struct outcome o =
		translate("sasl.jaas.config",
			  "org.apache.kafka.common.security.oauthbearer."
			  "OAuthBearerLoginModule required clientId=\"relay\" "
			  "clientSecret=\"s3cret\" scope=\"kafka\" extension_logicalCluster="
			  "\"lkc-1\" extension_identityPoolId=\"pool-2\";");

	ck_assert_msg(o.rc == 0, "%s", o.err);
	ck_assert_str_eq(kv_get(&o.out, "sasl.oauthbearer.client.id"), "relay");
	ck_assert_str_eq(kv_get(&o.out, "sasl.oauthbearer.client.secret"), "s3cret");
	ck_assert_str_eq(kv_get(&o.out, "sasl.oauthbearer.scope"), "kafka");
	ck_assert_str_eq(kv_get(&o.out, "sasl.oauthbearer.extensions"),
			 "logicalCluster=lkc-1,identityPoolId=pool-2");
	outcome_fini(&o);
	o = translate("sasl.oauthbearer.token.endpoint.url", "https://idp/token");
	ck_assert_int_eq(o.rc, 0);
	ck_assert_str_eq(kv_get(&o.out, "sasl.oauthbearer.token.endpoint.url"),
			 "https://idp/token");
	ck_assert_str_eq(kv_get(&o.out, "sasl.oauthbearer.method"), "oidc");
	outcome_fini(&o);
	assert_becomes("sasl.mechanism", "OAUTHBEARER", "sasl.mechanisms", "OAUTHBEARER");
	/* Kafka 4.1's names for the same grant */
	assert_becomes("sasl.oauthbearer.client.credentials.client.id", "relay",
		       "sasl.oauthbearer.client.id", "relay");
	assert_becomes("sasl.oauthbearer.client.credentials.client.secret", "s3cret",
		       "sasl.oauthbearer.client.secret", "s3cret");
	assert_becomes("sasl.oauthbearer.scope", "kafka", "sasl.oauthbearer.scope", "kafka");
	/* the Java client's token fetcher is what librdkafka's oidc method does */
	assert_ignored(
		"sasl.login.callback.handler.class",
		"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
		"oidc");
	assert_ignored("sasl.login.callback.handler.class",
		       "org.apache.kafka.common.security.oauthbearer.secured."
		       "OAuthBearerLoginCallbackHandler",
		       "oidc");
	/* validation is the broker's */
	assert_ignored("sasl.oauthbearer.jwks.endpoint.url", "https://idp/jwks", "broker");
	assert_ignored("sasl.oauthbearer.expected.audience", "kafka", "broker");
	assert_ignored("sasl.oauthbearer.sub.claim.name", "sub", "default");
}
END_TEST

START_TEST(test_settings_librdkafka_cannot_honour_are_refused_with_the_fix)
{
	assert_refused("transactional.id", "tx-1", "remove it");
	assert_refused("sasl.oauthbearer.jwt.retriever.class", "com.example.R",
		       "OIDC token endpoint");
	assert_refused("sasl.oauthbearer.assertion.file", "/jwt", "client credentials grant");
	assert_refused("sasl.oauthbearer.sub.claim.name", "user", "remove it");
	assert_refused("sasl.login.callback.handler.class", "com.example.H", "Java class");
	assert_refused("sasl.client.callback.handler.class", "com.example.H", "Java class");
	assert_refused("ssl.engine.factory.class", "com.example.F", "PEM");
	assert_refused("partitioner.class", "com.example.MyPartitioner", "remove it");
	assert_refused("partitioner.ignore.keys", "TRUE", "partitions by key");
}
END_TEST

static Suite *
rdconf_suite(void)
{
	Suite *s = suite_create("rdconf");
	TCase *sasl = tcase_create("sasl");
	TCase *size = tcase_create("sizes-and-names");
	TCase *ssl = tcase_create("stores");
	TCase *rest = tcase_create("ignored-and-refused");

	tcase_add_test(sasl, test_sasl_jaas_config_becomes_sasl_username_and_password);
	tcase_add_test(sasl, test_jaas_credentials_read_quotes_escapes_and_line_breaks);
	tcase_add_test(sasl, test_jaas_credentials_refuse_other_modules_and_incomplete_options);
	tcase_add_test(sasl, test_refused_jaas_config_never_shows_the_password);
	tcase_add_test(size, test_max_request_size_becomes_message_max_bytes);
	tcase_add_test(size, test_buffer_memory_becomes_kbytes_rounded_up);
	tcase_add_test(size, test_renamed_settings_take_the_librdkafka_name);
	tcase_add_test(size, test_settings_without_a_rule_pass_through_with_their_origin);
	tcase_add_test(ssl, test_jks_stores_are_refused_with_the_pem_fix);
	tcase_add_test(ssl, test_pem_and_pkcs12_stores_become_librdkafka_locations);
	tcase_add_test(ssl, test_keystore_password_is_kept_only_for_pkcs12);
	tcase_add_test(rest, test_java_only_settings_are_ignored_with_the_reason);
	tcase_add_test(rest, test_settings_librdkafka_cannot_honour_are_refused_with_the_fix);
	tcase_add_test(sasl, test_oidc_client_credentials_become_librdkafka_oidc);
	tcase_add_test(sasl, test_oauth_extension_separators_are_escaped);
	tcase_add_test(sasl, test_oauth_extension_outside_rfc7628_is_refused);
	suite_add_tcase(s, sasl);
	suite_add_tcase(s, size);
	suite_add_tcase(s, ssl);
	suite_add_tcase(s, rest);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(rdconf_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
