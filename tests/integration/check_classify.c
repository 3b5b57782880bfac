/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The classification of PostgreSQL failures against the real server of the stack (the table
 * is unit-tested in tests/unit/check_pgconn.c): what a wrong password, a missing database, a
 * role without REPLICATION, a refused port, a connection cut in the TLS handshake, a session
 * terminated by the server and a missing or busy slot each become, and that the TLS the stack
 * serves (ssl=on, its own CA) is what outboxd's connections use.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "itest.h"
#include "outboxd/pg/pgconn.h"
#include "outboxd/pg/pgsql.h"
#include "outboxd/pg/pgstream.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/kv.h"

/* The stack's superuser on its database, as outboxd's configuration would give it. */
static void
stack_params(struct kv *p)
{
	*p = KV_INIT;
	kv_set(p, "host", itest_env("OUTBOXD_TEST_PG_HOST"), NULL);
	kv_set(p, "port", itest_env("OUTBOXD_TEST_PG_PORT"), NULL);
	kv_set(p, "user", "postgres", NULL);
	kv_set(p, "password", itest_env("OUTBOXD_TEST_PG_SUPERUSER_PASSWORD"), NULL);
	kv_set(p, "dbname", "outboxd", NULL);
	kv_set(p, "sslmode", "prefer", NULL);
}

/* Connects with @p and expects a failure of class @want whose line holds @needle. */
static void
expect_open_fails(const struct kv *p, bool replication, enum pgconn_failure want,
		  const char *needle)
{
	enum pgconn_failure f = 0;
	PGconn *c = NULL;
	char err[1024];

	ck_assert_int_eq(pgconn_open(p, replication, &c, &f, err, sizeof(err)), -EIO);
	ck_assert_ptr_null(c);
	ck_assert_msg(f == want, "class %d, want %d: %s", f, want, err);
	ck_assert_msg(strstr(err, needle), "no \"%s\" in: %s", needle, err);
	ck_assert_msg(!strstr(err, itest_env("OUTBOXD_TEST_PG_SUPERUSER_PASSWORD")),
		      "the password is in the message: %s", err);
	ck_assert_msg(!strstr(err, "LOCATION:") && !strchr(err, '\n'), "not one line: %s", err);
}

START_TEST(test_wrong_password_is_a_precondition_with_its_fix)
{
	struct kv p;

	stack_params(&p);
	kv_set(&p, "password", "wrong-password", NULL);
	expect_open_fails(&p, false, PGCONN_PRECONDITION, "28P01");
	expect_open_fails(&p, false, PGCONN_PRECONDITION,
			  "check database.user and database.password");
	kv_fini(&p);
}
END_TEST

START_TEST(test_missing_database_is_a_precondition)
{
	struct kv p;

	stack_params(&p);
	kv_set(&p, "dbname", "no_such_database", NULL);
	expect_open_fails(&p, false, PGCONN_PRECONDITION, "check database.dbname");
	kv_fini(&p);
}
END_TEST

START_TEST(test_role_without_replication_is_a_precondition)
{
	PGconn *c = itest_pg();
	char *role = itest_unique("norepl");
	struct buf q = BUF_INIT;
	struct kv p;

	buf_add_fmt(&q, "CREATE ROLE %s LOGIN PASSWORD 'pw'", role);
	PQclear(itest_sql(c, buf_cstr(&q)));
	stack_params(&p);
	kv_set(&p, "user", role, NULL);
	kv_set(&p, "password", "pw", NULL);
	expect_open_fails(&p, true, PGCONN_PRECONDITION, "42501");
	buf_reset(&q);
	buf_add_fmt(&q, "DROP ROLE %s", role);
	PQclear(itest_sql(c, buf_cstr(&q)));
	buf_fini(&q);
	kv_fini(&p);
	free(role);
	PQfinish(c);
}
END_TEST

START_TEST(test_refused_port_is_transient)
{
	struct kv p;
	char port[16];

	snprintf(port, sizeof(port), "%d", itest_free_port());
	stack_params(&p);
	kv_set(&p, "port", port, NULL);
	expect_open_fails(&p, false, PGCONN_TRANSIENT, "refused");
	kv_fini(&p);
}
END_TEST

/* A listener that plays a server cut off at once, or in the TLS handshake. */
struct cutter {
	int fd, port;
	bool tls; /* answer the SSLRequest with 'S', then close: the handshake is cut */
	pthread_t th;
};

static void *
cutter_run(void *arg)
{
	struct cutter *k = arg;
	int c;

	while ((c = accept(k->fd, NULL, NULL)) >= 0) {
		char buf[4096];

		/* the SSLRequest, 'S', then the ClientHello, which is never answered */
		if (k->tls && recv(c, buf, 8, MSG_WAITALL) == 8 &&
		    send(c, "S", 1, MSG_NOSIGNAL) == 1 && recv(c, buf, sizeof(buf), 0) < 0) {
			fprintf(stderr, "# the client went away before its ClientHello\n");
		}
		close(c);
	}
	return NULL;
}

static void
cutter_start(struct cutter *k, bool tls)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	k->tls = tls;
	k->fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(k->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(k->fd, 8), 0);
	ck_assert_int_eq(getsockname(k->fd, (struct sockaddr *)&a, &len), 0);
	k->port = ntohs(a.sin_port);
	ck_assert_int_eq(pthread_create(&k->th, NULL, cutter_run, k), 0);
}

static void
cutter_stop(struct cutter *k)
{
	shutdown(k->fd, SHUT_RDWR);
	pthread_join(k->th, NULL);
	close(k->fd);
}

/* sslmode=require through a listener that cuts: the server never answered, so transient. */
START_TEST(test_cut_connection_under_tls_is_transient)
{
	const char *needle[] = { "server closed the connection unexpectedly", "SSL" };
	struct cutter k;
	struct kv p;
	char port[16];

	cutter_start(&k, _i == 1);
	snprintf(port, sizeof(port), "%d", k.port);
	stack_params(&p);
	kv_set(&p, "port", port, NULL);
	kv_set(&p, "sslmode", "require", NULL);
	expect_open_fails(&p, false, PGCONN_TRANSIENT, needle[_i]);
	expect_open_fails(&p, true, PGCONN_TRANSIENT, needle[_i]);
	cutter_stop(&k);
	kv_fini(&p);
}
END_TEST

/* The stack serves TLS with its own CA: verify-full passes, and with a client certificate. */
START_TEST(test_stack_serves_verified_tls)
{
	PGconn *c = NULL;
	struct kv p;
	char err[1024];

	ck_assert_str_eq(itest_env("OUTBOXD_TEST_PG_SSL"), "on");
	stack_params(&p);
	kv_set(&p, "host", "localhost", NULL);
	kv_set(&p, "sslmode", "verify-full", NULL);
	kv_set(&p, "sslrootcert", itest_env("OUTBOXD_TEST_PG_SSLROOTCERT"), NULL);
	if (_i == 1) {
		kv_set(&p, "sslcert", itest_env("OUTBOXD_TEST_PG_SSLCERT"), NULL);
		kv_set(&p, "sslkey", itest_env("OUTBOXD_TEST_PG_SSLKEY"), NULL);
	}
	ck_assert_msg(pgconn_open(&p, _i == 1, &c, NULL, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(PQsslInUse(c), 1);
	/* the verbose start-up is over: a failed query reads as usual */
	ck_assert_int_eq(PQsetErrorVerbosity(c, PQERRORS_DEFAULT), PQERRORS_DEFAULT);
	PQfinish(c);
	kv_fini(&p);
}
END_TEST

/*
 * TLS settings that do not fit the server are preconditions with the fix, on both kinds of
 * connection: a root certificate that did not sign the server's (mode 0: the server's own
 * certificate as the CA), a host name the certificate does not hold (1), a root certificate
 * file that does not exist (2).
 */
START_TEST(test_tls_settings_that_do_not_fit_are_preconditions)
{
	static const char *const needle[] = { "database.sslrootcert", "does not match host name",
					      "database.sslrootcert names no readable file" };
	struct buf leaf = BUF_INIT;
	struct kv p;

	buf_add_fmt(&leaf, "%s/pg/tls/server.crt", itest_env("OUTBOXD_TEST_STACK_DIR"));
	stack_params(&p);
	kv_set(&p, "sslmode", "verify-full", NULL);
	kv_set(&p, "sslrootcert",
	       _i == 0 ? buf_cstr(&leaf) : itest_env("OUTBOXD_TEST_PG_SSLROOTCERT"), NULL);
	if (_i == 1) {
		kv_set(&p, "host", "outboxd.invalid", NULL);
		kv_set(&p, "hostaddr", itest_env("OUTBOXD_TEST_PG_HOST"), NULL);
	} else if (_i == 2) {
		kv_set(&p, "sslrootcert", "/nonexistent/outboxd-ca.crt", NULL);
	}
	expect_open_fails(&p, false, PGCONN_PRECONDITION, needle[_i]);
	expect_open_fails(&p, true, PGCONN_PRECONDITION, needle[_i]);
	buf_fini(&leaf);
	kv_fini(&p);
}
END_TEST

/* A session the server ends (57P01, as in a fast shutdown) fails its queries transiently. */
START_TEST(test_terminated_session_is_transient)
{
	PGconn *admin = itest_pg(), *c = NULL;
	struct buf q = BUF_INIT;
	struct kv p;
	char err[1024];

	stack_params(&p);
	ck_assert_msg(pgconn_open(&p, false, &c, NULL, err, sizeof(err)) == 0, "%s", err);
	buf_add_fmt(&q, "SELECT pg_terminate_backend(%d)", PQbackendPID(c));
	PQclear(itest_sql(admin, buf_cstr(&q)));
	ck_assert_int_eq(pgconn_run_statements(c, "SELECT 1", err, sizeof(err)), -EIO);
	ck_assert_int_eq(pgsql_check_role(c, err, sizeof(err)), -EIO);
	PQfinish(c);
	buf_fini(&q);
	kv_fini(&p);
	PQfinish(admin);
}
END_TEST

/* database.initial.statements that cannot run are a precondition, with the statement. */
START_TEST(test_failing_statement_is_a_precondition)
{
	PGconn *c = NULL;
	struct kv p;
	char err[1024];

	stack_params(&p);
	ck_assert_msg(pgconn_open(&p, false, &c, NULL, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(pgconn_run_statements(c, "SELECT 1;SELEC 2", err, sizeof(err)), -EPERM);
	ck_assert_msg(strstr(err, "\"SELEC 2\"") && strstr(err, "42601"), "%s", err);
	ck_assert_int_eq(pgconn_run_statements(c, "SELECT * FROM no_such_table", err, sizeof(err)),
			 -EPERM);
	ck_assert_msg(strstr(err, "42P01") && strstr(err, "create the table"), "%s", err);
	PQfinish(c);
	kv_fini(&p);
}
END_TEST

/* START_REPLICATION: a missing slot is a precondition naming it, a slot in use is busy. */
START_TEST(test_start_replication_missing_slot_and_busy_slot)
{
	enum pgstream_failure f = 0;
	struct pgstream *s = NULL, *t = NULL;
	PGconn *c = itest_pg();
	char *slot = itest_unique("classify_slot"), *pub = itest_unique("classify_pub");
	struct buf q = BUF_INIT;
	struct kv p;
	char err[1024];

	stack_params(&p);
	buf_add_fmt(&q, "CREATE PUBLICATION %s", pub);
	PQclear(itest_sql(c, buf_cstr(&q)));
	ck_assert_int_eq(pgstream_start(&p, slot, pub, &s, &f, err, sizeof(err)), -EIO);
	ck_assert_msg(f == PGSTREAM_PRECONDITION && strstr(err, slot) && strstr(err, "42704") &&
			      strstr(err, "outboxd slot create"),
		      "%d: %s", f, err);
	buf_reset(&q);
	buf_add_fmt(&q, "SELECT pg_create_logical_replication_slot('%s', 'pgoutput')", slot);
	PQclear(itest_sql(c, buf_cstr(&q)));
	ck_assert_msg(pgstream_start(&p, slot, pub, &s, &f, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(pgstream_start(&p, slot, pub, &t, &f, err, sizeof(err)), -EIO);
	ck_assert_msg(f == PGSTREAM_SLOT_BUSY && strstr(err, "is active for PID"), "%d: %s", f,
		      err);
	pgstream_free(s, true);
	buf_reset(&q);
	buf_add_fmt(&q, "SELECT pg_drop_replication_slot('%s')", slot);
	/* the walsender may hold the slot a moment after CopyDone */
	for (int i = 0; i < 50; i++) {
		PGresult *r = PQexec(c, buf_cstr(&q));
		bool done = PQresultStatus(r) == PGRES_TUPLES_OK;

		PQclear(r);
		if (done) {
			break;
		}
		usleep(100 * 1000);
	}
	buf_reset(&q);
	buf_add_fmt(&q, "DROP PUBLICATION %s", pub);
	PQclear(itest_sql(c, buf_cstr(&q)));
	buf_fini(&q);
	kv_fini(&p);
	free(slot);
	free(pub);
	PQfinish(c);
}
END_TEST

static Suite *
classify_suite(void)
{
	Suite *s = suite_create("classify");
	TCase *tc = tcase_create("classify");

	tcase_add_test(tc, test_wrong_password_is_a_precondition_with_its_fix);
	tcase_add_test(tc, test_missing_database_is_a_precondition);
	tcase_add_test(tc, test_role_without_replication_is_a_precondition);
	tcase_add_test(tc, test_refused_port_is_transient);
	tcase_add_loop_test(tc, test_cut_connection_under_tls_is_transient, 0, 2);
	tcase_add_loop_test(tc, test_stack_serves_verified_tls, 0, 2);
	tcase_add_loop_test(tc, test_tls_settings_that_do_not_fit_are_preconditions, 0, 3);
	tcase_add_test(tc, test_terminated_session_is_transient);
	tcase_add_test(tc, test_failing_statement_is_a_precondition);
	tcase_add_test(tc, test_start_replication_missing_slot_and_busy_slot);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(classify_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
