/* SPDX-License-Identifier: Apache-2.0 */
/* How the Kafka connections are secured: the failures that are exit 2, and check's line. */
#include <check.h>
#include <librdkafka/rdkafka.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/kafka/kafkasec.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/kv.h"

#define V2_0_2 0x020002ff
#define V2_8_0 0x020800ff

/* librdkafka's texts, as its error callback gives them (2.0.2 against Kafka 4.3) */
static const char *const sasl_failed =
	"sasl_ssl://127.0.0.1:9093/bootstrap: SASL authentication error: Authentication failed "
	"during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512 (after "
	"312ms in state AUTH_REQ)";
static const char *const verify_failed =
	"ssl://127.0.0.1:9094/bootstrap: SSL handshake failed: error:0A000086:SSL "
	"routines::certificate verify failed: broker certificate could not be verified, verify that "
	"ssl.ca.location is correctly configured or root CA certificates are installed (install "
	"ca-certificates package) (after 5ms in state SSL_HANDSHAKE)";
static const char *const cert_refused =
	"ssl://127.0.0.1:9094/bootstrap: Receive failed: error:0A000412:SSL routines::sslv3 alert "
	"bad certificate: SSL alert number 42 (after 0ms in state APIVERSION_QUERY)";

START_TEST(test_refused_login_is_a_precondition_naming_the_settings)
{
	const char *fix = kafkasec_fix(RD_KAFKA_RESP_ERR__AUTHENTICATION, sasl_failed,
				       "SCRAM-SHA-512", V2_8_0);

	ck_assert_ptr_nonnull(fix);
	ck_assert_ptr_nonnull(strstr(fix, "sasl.jaas.config"));
	ck_assert_ptr_null(strstr(fix, "4895"));
	/* before 2.6.1 a right SCRAM password is refused by Kafka 4 too: the fix says so */
	fix = kafkasec_fix(RD_KAFKA_RESP_ERR__AUTHENTICATION, sasl_failed, "SCRAM-SHA-512", V2_0_2);
	ck_assert_ptr_nonnull(strstr(fix, "librdkafka#4895"));
	fix = kafkasec_fix(RD_KAFKA_RESP_ERR__AUTHENTICATION, sasl_failed, "PLAIN", V2_0_2);
	ck_assert_ptr_null(strstr(fix, "4895"));
}
END_TEST

/* OAUTHBEARER: a refused client or token is the configuration's fault, an IdP outage is not. */
START_TEST(test_oauth_refusals_are_preconditions_identity_provider_outages_are_not)
{
	const char *fix = kafkasec_fix(RD_KAFKA_RESP_ERR__AUTHENTICATION,
				       "Failed to acquire SASL OAUTHBEARER token: {\"error\": "
				       "\"invalid_client\"}",
				       "OAUTHBEARER", V2_8_0);

	ck_assert_ptr_nonnull(fix);
	ck_assert_ptr_nonnull(strstr(fix, "clientSecret"));
	ck_assert_ptr_null(
		kafkasec_fix(RD_KAFKA_RESP_ERR__AUTHENTICATION,
			     "Failed to acquire SASL OAUTHBEARER token: Failed to connect "
			     "to 127.0.0.1 port 1 after 0 ms: Could not connect to server",
			     "OAUTHBEARER", V2_8_0));
	ck_assert_ptr_null(
		kafkasec_fix(RD_KAFKA_RESP_ERR__AUTHENTICATION,
			     "Failed to acquire SASL OAUTHBEARER token: <html>503 Service "
			     "Unavailable</html>",
			     "OAUTHBEARER", V2_8_0));
	fix = kafkasec_fix(RD_KAFKA_RESP_ERR__AUTHENTICATION,
			   "sasl_ssl://b:9095/bootstrap: SASL authentication error: "
			   "{\"status\":\"invalid_token\"}",
			   "OAUTHBEARER", V2_8_0);
	ck_assert_ptr_nonnull(strstr(fix, "the broker refused the token"));
}
END_TEST

START_TEST(test_certificate_failures_are_preconditions_other_tls_errors_outages)
{
	ck_assert_ptr_nonnull(
		strstr(kafkasec_fix(RD_KAFKA_RESP_ERR__SSL, verify_failed, NULL, V2_8_0),
		       "ssl.truststore.location"));
	ck_assert_ptr_nonnull(
		strstr(kafkasec_fix(RD_KAFKA_RESP_ERR__TRANSPORT, cert_refused, NULL, V2_8_0),
		       "client certificate"));
	/* an unclean close (librdkafka#4294), a refused port: outages, retried */
	ck_assert_ptr_null(kafkasec_fix(RD_KAFKA_RESP_ERR__SSL,
					"ssl://b:9094/1: SSL transport error: unexpected eof while "
					"reading",
					NULL, V2_8_0));
	ck_assert_ptr_null(
		kafkasec_fix(RD_KAFKA_RESP_ERR__TRANSPORT,
			     "b:9092/1: Connect to ipv4#127.0.0.1:9092 failed: Connection "
			     "refused",
			     NULL, V2_8_0));
	ck_assert_ptr_null(kafkasec_fix(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, "1/1 brokers are down",
					NULL, V2_8_0));
	ck_assert_ptr_null(kafkasec_fix(RD_KAFKA_RESP_ERR__SSL, NULL, NULL, V2_8_0));
}
END_TEST

static int
describe(const char *settings, int version, struct buf *out)
{
	struct kv rd = KV_INIT;
	char *copy = strdup(settings), *save = NULL;
	int n;

	for (char *kv = strtok_r(copy, "\n", &save); kv; kv = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(kv, '=');

		*eq = '\0';
		kv_set(&rd, kv, eq + 1, NULL);
	}
	buf_reset(out);
	n = kafkasec_describe(&rd, version, out);
	kv_fini(&rd);
	free(copy);
	return n;
}

START_TEST(test_describe_says_what_is_verified_and_never_a_secret)
{
	struct buf b = BUF_INIT;

	ck_assert_int_eq(describe("security.protocol=SSL\nssl.ca.location=/ca.crt\n"
				  "ssl.certificate.location=/c.pem\nssl.key.location=/c.pem\n"
				  "ssl.key.password=hunter2",
				  V2_8_0, &b),
			 0);
	ck_assert_str_eq(buf_cstr(&b), "security.protocol SSL; TLS, the broker's certificate "
				       "verified against ssl.ca.location, host name verified; "
				       "client certificate (key encrypted)");
	ck_assert_int_eq(describe("security.protocol=SASL_SSL\nsasl.mechanisms=SCRAM-SHA-512\n"
				  "sasl.username=alice\nsasl.password=hunter2",
				  V2_8_0, &b),
			 0);
	ck_assert_str_eq(buf_cstr(&b),
			 "security.protocol SASL_SSL; TLS, the broker's certificate "
			 "verified against the system's CA store, host name verified; "
			 "SASL SCRAM-SHA-512");
	ck_assert_ptr_null(strstr(buf_cstr(&b), "alice"));
	ck_assert_ptr_null(strstr(buf_cstr(&b), "hunter2"));
	ck_assert_int_eq(
		describe("security.protocol=SASL_SSL\nsasl.mechanisms=OAUTHBEARER\n"
			 "sasl.oauthbearer.method=oidc\nsasl.oauthbearer.client.secret=hunter2",
			 V2_0_2, &b),
		0);
	ck_assert_str_eq(buf_cstr(&b),
			 "security.protocol SASL_SSL; TLS, the broker's certificate "
			 "verified against the system's CA store, host name verified; "
			 "SASL OAUTHBEARER, tokens from an OIDC token endpoint");
	ck_assert_int_eq(describe("bootstrap.servers=b:9092", V2_8_0, &b), 0);
	ck_assert_str_eq(buf_cstr(&b), "security.protocol plaintext; no TLS");
	buf_fini(&b);
}
END_TEST

START_TEST(test_describe_warns_of_what_gives_security_up)
{
	struct buf b = BUF_INIT;

	ck_assert_int_eq(describe("security.protocol=SASL_PLAINTEXT\nsasl.mechanisms=PLAIN\n"
				  "sasl.password=hunter2",
				  V2_8_0, &b),
			 1);
	ck_assert_ptr_nonnull(strstr(buf_cstr(&b), "warning: the SASL password travels in clear"));
	ck_assert_int_eq(describe("security.protocol=sasl_plaintext\nsasl.mechanisms=SCRAM-SHA-256",
				  V2_8_0, &b),
			 1);
	ck_assert_ptr_nonnull(strstr(buf_cstr(&b), "warning: SASL without TLS"));
	ck_assert_int_eq(
		describe("security.protocol=SSL\nenable.ssl.certificate.verification=false", V2_8_0,
			 &b),
		1);
	ck_assert_ptr_nonnull(strstr(buf_cstr(&b), "NOT verified; warning"));
	ck_assert_int_eq(
		describe("security.protocol=SSL\nssl.endpoint.identification.algorithm=none",
			 V2_8_0, &b),
		1);
	ck_assert_ptr_nonnull(strstr(buf_cstr(&b), "host name NOT verified"));
	ck_assert_int_eq(
		describe("security.protocol=SASL_SSL\nsasl.mechanisms=SCRAM-SHA-512", V2_0_2, &b),
		1);
	ck_assert_ptr_nonnull(strstr(buf_cstr(&b), "librdkafka#4895"));
	ck_assert(kafkasec_scram_broken(0x020600ff));
	ck_assert(!kafkasec_scram_broken(0x020601ff));
	buf_fini(&b);
}
END_TEST

static Suite *
kafkasec_suite(void)
{
	Suite *s = suite_create("kafkasec");
	TCase *fix = tcase_create("fix"), *desc = tcase_create("describe");

	tcase_add_test(fix, test_refused_login_is_a_precondition_naming_the_settings);
	tcase_add_test(fix, test_certificate_failures_are_preconditions_other_tls_errors_outages);
	tcase_add_test(fix,
		       test_oauth_refusals_are_preconditions_identity_provider_outages_are_not);
	tcase_add_test(desc, test_describe_says_what_is_verified_and_never_a_secret);
	tcase_add_test(desc, test_describe_warns_of_what_gives_security_up);
	suite_add_tcase(s, fix);
	suite_add_tcase(s, desc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(kafkasec_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
