/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdlib.h>

#include "outboxd/util/secret.h"

/* Every key that either of the two former predicates hid is still hidden. */
START_TEST(test_hides_what_config_and_producer_hid)
{
	static const char *const keys[] = {
		/* config.c's config_is_secret */
		"database.password",
		"database.sslpassword",
		"sasl.jaas.config",
		"producer.sasl.jaas.config",
		"sasl.oauthbearer.client.secret",
		"ssl.keystore.key",
		"ssl.key.pem",
		"ssl.key.passphrase",
		/* producer.c's secret_key */
		"sasl.password",
		"ssl.key.password",
		"ssl.keystore.password",
		"sasl.oauthbearer.config",
		/* config_describe()'s extra rule */
		"sasl.username",
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		ck_assert_msg(secret_key(keys[i]), "%s is shown", keys[i]);
	}
}
END_TEST

/* The name decides whatever its spelling: a Server prefix or upper case does not reveal it. */
START_TEST(test_hides_any_spelling_of_a_secret_name)
{
	ck_assert(secret_key("debezium.sink.kafka.producer.sasl.jaas.config"));
	ck_assert(secret_key("debezium.source.database.password"));
	ck_assert(secret_key("DATABASE.PASSWORD"));
	ck_assert(secret_key("Sasl.Username"));
}
END_TEST

/* Ordinary settings stay visible, or `outboxd check` would tell nothing. */
START_TEST(test_shows_ordinary_settings)
{
	static const char *const keys[] = {
		"database.hostname", "database.user",	   "bootstrap.servers",
		"ssl.key.location",  "ssl.ca.location",	   "sasl.mechanism",
		"security.protocol", "topic.prefix",	   "ssl.keystore.location",
		"ssl.keystore.type", "table.include.list", "",
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		ck_assert_msg(!secret_key(keys[i]), "%s is hidden", keys[i]);
	}
	ck_assert(!secret_key(NULL));
}
END_TEST

static Suite *
secret_suite(void)
{
	Suite *s = suite_create("secret");
	TCase *tc = tcase_create("secret_key");

	tcase_add_test(tc, test_hides_what_config_and_producer_hid);
	tcase_add_test(tc, test_hides_any_spelling_of_a_secret_name);
	tcase_add_test(tc, test_shows_ordinary_settings);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(secret_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
