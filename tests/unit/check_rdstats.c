/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/kafka/rdstats.h"

/*
 * A document shaped as librdkafka's (STATISTICS.md), cut to the fields rdstats reads plus a few
 * it must skip: the internal broker, a bootstrap name beside the learned brokers, topics.
 */
static const char DOC[] =
	"{\"name\":\"rdkafka#producer-1\",\"type\":\"producer\",\"msg_cnt\":12,"
	"\"msg_size\":3456,\"msg_max\":5000,\"msg_size_max\":1048576000,"
	"\"brokers\":{"
	"\"GroupCoordinator\":{\"source\":\"internal\",\"state\":\"INIT\",\"txretries\":0},"
	"\"127.0.0.1:9092/bootstrap\":{\"source\":\"configured\",\"nodeid\":-1,\"state\":\"UP\","
	"\"txretries\":1,\"req_timeouts\":0,\"disconnects\":1,"
	"\"rtt\":{\"avg\":90000000,\"p99\":90000000,\"cnt\":1}},"
	"\"b1:9092/1\":{\"source\":\"learned\",\"nodeid\":1,\"state\":\"UP\",\"txretries\":3,"
	"\"req_timeouts\":2,\"disconnects\":0,"
	"\"rtt\":{\"min\":100,\"max\":9000,\"avg\":1500,\"p99\":8000,\"cnt\":40}},"
	"\"b2:9092/2\":{\"source\":\"configured\",\"nodeid\":2,\"state\":\"DOWN\",\"txretries\":5,"
	"\"req_timeouts\":1,\"disconnects\":4,"
	"\"rtt\":{\"avg\":0,\"p99\":0,\"cnt\":0}},"
	"\"b3:9092/3\":{\"source\":\"learned\",\"nodeid\":3,\"state\":\"APIVERSION_QUERY\","
	"\"rtt\":{\"avg\":2500,\"p99\":3000,\"cnt\":2}}},"
	"\"topics\":{\"outbox.event.order\":{\"partitions\":{}}}}";

START_TEST(test_parse_sums_brokers_and_skips_the_internal_one)
{
	struct rdstats st;
	char err[128];

	ck_assert_int_eq(rdstats_parse(DOC, strlen(DOC), &st, err, sizeof(err)), 0);
	ck_assert_int_eq(st.queue_records, 12);
	ck_assert_int_eq(st.queue_capacity_records, 5000);
	ck_assert_int_eq(st.queue_bytes, 3456);
	ck_assert_int_eq(st.queue_capacity_bytes, 1048576000);
	ck_assert_int_eq(st.brokers[RDSTATS_UP], 1);
	ck_assert_int_eq(st.brokers[RDSTATS_DOWN], 1);
	ck_assert_int_eq(st.brokers[RDSTATS_CONNECTING], 1);
	ck_assert_int_eq(st.retries, 9); /* the bootstrap connection's retry counts */
	ck_assert_int_eq(st.timeouts, 3);
	ck_assert_int_eq(st.disconnects, 5);
	ck_assert_int_eq(st.rtt_avg_us, 2500); /* the slowest known broker, not the bootstrap's */
	ck_assert_int_eq(st.rtt_p99_us, 8000);
}
END_TEST

START_TEST(test_render)
{
	struct rdstats st;
	struct buf b = BUF_INIT;
	const char *s;

	ck_assert_int_eq(rdstats_parse(DOC, strlen(DOC), &st, NULL, 0), 0);
	rdstats_render(&st, 1500000, &b);
	s = buf_cstr(&b);
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_kafka_stats_age_seconds 1.500000\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_producer_queue_capacity_records 5000\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_producer_queue_bytes 3456\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_producer_queue_capacity_bytes 1048576000\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_kafka_brokers{state=\"up\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_kafka_brokers{state=\"connecting\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_kafka_brokers{state=\"down\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(s, "# TYPE outboxd_kafka_request_retries_total counter\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_kafka_request_retries_total 9\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_kafka_request_timeouts_total 3\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_kafka_disconnects_total 5\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_kafka_rtt_avg_seconds 0.002500\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutboxd_kafka_rtt_p99_seconds 0.008000\n"));
	buf_fini(&b);
}
END_TEST

/* A cluster never reached: only bootstrap names, down; they are what the state shows. */
START_TEST(test_bootstrap_names_count_while_no_broker_is_known)
{
	static const char doc[] =
		"{\"brokers\":{\"a:9092/bootstrap\":{\"source\":\"configured\",\"nodeid\":-1,"
		"\"state\":\"DOWN\"},\"b:9092/bootstrap\":{\"source\":\"configured\","
		"\"nodeid\":-1,\"state\":\"CONNECT\"}}}";
	struct rdstats st;

	ck_assert_int_eq(rdstats_parse(doc, strlen(doc), &st, NULL, 0), 0);
	ck_assert_int_eq(st.brokers[RDSTATS_UP], 0);
	ck_assert_int_eq(st.brokers[RDSTATS_DOWN], 1);
	ck_assert_int_eq(st.brokers[RDSTATS_CONNECTING], 1);
}
END_TEST

START_TEST(test_not_an_object_is_refused)
{
	struct rdstats st;
	char err[128];

	ck_assert_int_eq(rdstats_parse("[1,2]", 5, &st, err, sizeof(err)), -22);
	ck_assert_ptr_nonnull(strstr(err, "not a JSON object"));
	ck_assert_int_eq(rdstats_parse("{\"msg_cnt\":", 11, &st, err, sizeof(err)), -22);
	/* an object without the fields is all zero, not an error */
	ck_assert_int_eq(rdstats_parse("{}", 2, &st, err, sizeof(err)), 0);
	ck_assert_int_eq(st.brokers[RDSTATS_UP] + st.queue_capacity_records, 0);
}
END_TEST

/*
 * Malformed documents are refused whole, figures zeroed: a scalar running into a brace or a
 * quote, a broker object broken after a whole one (its figures must not count), a string cut
 * after a backslash. An escaped backslash before a quote ends the string.
 */
START_TEST(test_malformed_documents_are_refused)
{
	static const char *const bad[] = {
		"{\"a\":1{}",
		"{\"a\":x\"}",
		"{\"a\":}",
		"{\"brokers\":{\"b1\":{\"nodeid\":1,\"state\":\"UP\",\"txretries\":4},"
		"\"b2\":{\"nodeid\":2,\"state\"}}}",
		"{\"a\":\"x\\",
		"{\"msg_cnt\":3} x",
	};
	struct rdstats st;
	static const char ok[] = "{\"client_id\":\"x\\\\\",\"msg_cnt\":3}";

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(rdstats_parse(bad[i], strlen(bad[i]), &st, NULL, 0) == -EINVAL,
			      "accepted %s", bad[i]);
		ck_assert_int_eq(st.retries + st.brokers[RDSTATS_UP] + st.queue_records, 0);
	}
	ck_assert_int_eq(rdstats_parse(ok, strlen(ok), &st, NULL, 0), 0);
	ck_assert_int_eq(st.queue_records, 3);
}
END_TEST

/* Every cut of the document short of its end is refused; none is read past its length. */
START_TEST(test_every_cut_document_is_refused)
{
	size_t n = strlen(DOC);
	struct rdstats st;

	for (size_t len = 0; len < n; len++) {
		char *cut = malloc(len ? len : 1); /* exact size: ASan sees a read past it */

		memcpy(cut, DOC, len);
		ck_assert_msg(rdstats_parse(cut, len, &st, NULL, 0) == -22, "cut at %zu read", len);
		free(cut);
	}
	ck_assert_int_eq(rdstats_parse(DOC, n, &st, NULL, 0), 0);
}
END_TEST

/*
 * What rdstats skips is not read: strings holding braces, brackets, escaped quotes and the keys
 * it looks for, nested arrays, whitespace between tokens, a member after them, and 10,000
 * topics of partitions (as librdkafka lists them: the document grows with the topic count).
 */
START_TEST(test_skipped_members_are_not_read)
{
	struct buf b = BUF_INIT;
	struct rdstats st;

	buf_add_fmt(&b, "{ \"client_id\" : \"x{\\\"msg_cnt\\\":[99]}\\\\\", \"msg_cnt\" : 7 ,"
			"\"req\":{\"Produce\":[1,[2,{\"msg_max\":3}]]},\"topics\":{");
	for (int t = 0; t < 10000; t++) {
		buf_add_fmt(&b,
			    "%s\"t%d\":{\"topic\":\"t%d\",\"partitions\":{\"0\":{\"msg_cnt\":5,"
			    "\"rtt\":{\"avg\":1}},\"-1\":{\"partition\":-1}}}",
			    t ? "," : "", t, t);
	}
	buf_add_fmt(&b,
		    "},\n \"brokers\" : { \"b1:9092/1\" : { \"nodeid\" : 1, \"state\" : \"UP\", "
		    "\"toppars\":{\"t0-0\":{\"topic\":\"t0\"}}, \"txretries\" : 2 } } ,"
		    "\"msg_max\":5000}\n");
	ck_assert_int_eq(rdstats_parse(buf_cstr(&b), b.len, &st, NULL, 0), 0);
	ck_assert_int_eq(st.queue_records, 7);
	ck_assert_int_eq(st.queue_capacity_records, 5000);
	ck_assert_int_eq(st.brokers[RDSTATS_UP], 1);
	ck_assert_int_eq(st.retries, 2);
	ck_assert_int_eq(st.rtt_avg_us, 0);
	buf_fini(&b);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("rdstats");
	TCase *tc = tcase_create("rdstats");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_parse_sums_brokers_and_skips_the_internal_one);
	tcase_add_test(tc, test_render);
	tcase_add_test(tc, test_not_an_object_is_refused);
	tcase_add_test(tc, test_bootstrap_names_count_while_no_broker_is_known);
	tcase_add_test(tc, test_every_cut_document_is_refused);
	tcase_add_test(tc, test_malformed_documents_are_refused);
	tcase_add_test(tc, test_skipped_members_are_not_read);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
