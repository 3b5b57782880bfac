/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdlib.h>

#include "outboxd/pipeline/sqlq.h"

/*
 * The queue's bookkeeping, without a server: sending needs a connection, and the integration
 * suite runs the statements (heartbeat.action.query and the slot's health) against PostgreSQL.
 */

static enum outcome
ignore(void *arg, const PGresult *r, char *why, size_t whylen)
{
	(void)arg, (void)r, (void)why, (void)whylen;
	return OUTCOME_OK;
}

START_TEST(test_one_statement_per_kind)
{
	struct sqlq q;
	const char *p[1] = { "debezium" };

	sqlq_init(&q, NULL);
	ck_assert(!sqlq_pending(&q, SQLQ_SLOT));
	ck_assert(sqlq_submit(&q, SQLQ_SLOT, "SELECT $1", p, 1, ignore, NULL));
	ck_assert(sqlq_pending(&q, SQLQ_SLOT));
	ck_assert(!sqlq_submit(&q, SQLQ_SLOT, "SELECT $1", p, 1, ignore, NULL));
	ck_assert(!sqlq_pending(&q, SQLQ_HEARTBEAT));
	ck_assert(sqlq_submit(&q, SQLQ_HEARTBEAT, "SELECT 1; SELECT 2", NULL, 0, ignore, NULL));
	ck_assert(sqlq_pending(&q, SQLQ_HEARTBEAT));
	sqlq_fini(&q);
	ck_assert(!sqlq_pending(&q, SQLQ_SLOT) && !sqlq_pending(&q, SQLQ_HEARTBEAT));
}
END_TEST

START_TEST(test_too_many_parameters_are_refused)
{
	struct sqlq q;
	const char *p[SQLQ_MAX_PARAMS + 1] = { "a", "b", "c", "d", "e", "f" };

	sqlq_init(&q, NULL);
	ck_assert(!sqlq_submit(&q, SQLQ_CLEANUP, "SELECT", p, SQLQ_MAX_PARAMS + 1, ignore, NULL));
	ck_assert(!sqlq_pending(&q, SQLQ_CLEANUP));
	ck_assert(sqlq_submit(&q, SQLQ_CLEANUP, "SELECT", p, SQLQ_MAX_PARAMS, ignore, NULL));
	sqlq_fini(&q);
}
END_TEST

START_TEST(test_poll_and_settle_with_nothing_running_do_nothing)
{
	struct sqlq q;
	char why[64] = "";

	sqlq_init(&q, NULL);
	ck_assert_int_eq(sqlq_settle(&q, why, sizeof(why)), OUTCOME_OK);
	ck_assert_int_eq(sqlq_poll(&q, why, sizeof(why)), OUTCOME_OK); /* nothing queued */
	sqlq_fini(&q);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("sqlq");
	TCase *tc = tcase_create("queue");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_one_statement_per_kind);
	tcase_add_test(tc, test_too_many_parameters_are_refused);
	tcase_add_test(tc, test_poll_and_settle_with_nothing_running_do_nothing);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
