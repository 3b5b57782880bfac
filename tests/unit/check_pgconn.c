/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The classification of PostgreSQL failures (pgconn_classify(), pgconn_classify_message()):
 * by SQLSTATE, never by the wording of a message; whatever the server did not report is
 * transient. The messages below are what libpq 15 writes with PQERRORS_VERBOSE, captured from
 * the test stack (a wrong password under sslmode=prefer is reported twice: once per attempt).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/pg/pgconn.h"

/* Transient: retried with backoff. */
static const char *const transient_codes[] = {
	"08000", /* connection_exception */
	"08001", /* sqlclient_unable_to_establish_sqlconnection */
	"08006", /* connection_failure */
	"08P01", /* protocol_violation */
	"57P01", /* admin_shutdown: terminating connection due to administrator command */
	"57P02", /* crash_shutdown */
	"57P03", /* cannot_connect_now: starting up, shutting down, in recovery */
	"57P05", /* idle_session_timeout */
	"57014", /* query_canceled: statement_timeout */
	"53000", /* insufficient_resources */
	"53100", /* disk_full */
	"53200", /* out_of_memory */
	"53300", /* too_many_connections */
	"53400", /* configuration_limit_exceeded */
	"40001", /* serialization_failure */
	"40P01", /* deadlock_detected */
	"55P03", /* lock_not_available */
	"58030", /* io_error */
	"XX000", /* internal_error */
	"P0001", /* raise_exception (a user's statement) */
};

/* Preconditions: exit 2 with the fix. */
static const char *const precondition_codes[] = {
	"28000", /* invalid_authorization_specification: pg_hba.conf, role may not log in */
	"28P01", /* invalid_password */
	"3D000", /* invalid_catalog_name: the database does not exist */
	"3F000", /* invalid_schema_name */
	"42501", /* insufficient_privilege: no REPLICATION, no CONNECT */
	"42704", /* undefined_object: replication slot or publication does not exist */
	"42P01", /* undefined_table */
	"42601", /* syntax_error (database.initial.statements) */
	"42883", /* undefined_function */
	"0A000", /* feature_not_supported */
	"22023", /* invalid_parameter_value (START_REPLICATION options) */
	"55000", /* object_not_in_prerequisite_state: can no longer get changes from the slot */
	"57P04", /* database_dropped */
};

START_TEST(test_transient_codes_restart)
{
	for (size_t i = 0; i < sizeof(transient_codes) / sizeof(transient_codes[0]); i++) {
		ck_assert_msg(pgconn_classify(transient_codes[i], 0) == PGCONN_TRANSIENT,
			      "%s is not transient", transient_codes[i]);
		ck_assert_ptr_null(pgconn_fix(transient_codes[i], 0));
	}
}
END_TEST

START_TEST(test_precondition_codes_exit_with_a_fix)
{
	for (size_t i = 0; i < sizeof(precondition_codes) / sizeof(precondition_codes[0]); i++) {
		const char *fix = pgconn_fix(precondition_codes[i], 0);

		ck_assert_msg(pgconn_classify(precondition_codes[i], 0) == PGCONN_PRECONDITION,
			      "%s is not a precondition", precondition_codes[i]);
		ck_assert_msg(fix && strlen(fix) > 10, "%s has no fix", precondition_codes[i]);
	}
}
END_TEST

START_TEST(test_slot_in_use_is_busy)
{
	ck_assert_int_eq(pgconn_classify("55006", 0), PGCONN_BUSY);
	ck_assert_ptr_null(pgconn_fix("55006", 0));
}
END_TEST

START_TEST(test_no_sqlstate_is_transient_unless_a_password_was_missing)
{
	ck_assert_int_eq(pgconn_classify(NULL, 0), PGCONN_TRANSIENT);
	ck_assert_ptr_null(pgconn_fix(NULL, 0));
	ck_assert_int_eq(pgconn_classify(NULL, PGCONN_NEEDS_PASSWORD), PGCONN_PRECONDITION);
	ck_assert_ptr_nonnull(strstr(pgconn_fix(NULL, PGCONN_NEEDS_PASSWORD), "database.password"));
	/* what the server said decides when it said something */
	ck_assert_int_eq(pgconn_classify("57P03", PGCONN_NEEDS_PASSWORD), PGCONN_TRANSIENT);
}
END_TEST

START_TEST(test_malformed_sqlstate_is_transient)
{
	static const char *const bad[] = { "", "2800", "28P011", "28p01", "28 01", "3D" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(pgconn_classify(bad[i], 0) == PGCONN_TRANSIENT, "\"%s\"", bad[i]);
	}
}
END_TEST

START_TEST(test_whole_code_before_its_class)
{
	/* 28P01 and 42704 have fixes of their own, more precise than their class's */
	ck_assert_ptr_nonnull(strstr(pgconn_fix("28P01", 0), "database.password"));
	ck_assert_ptr_nonnull(strstr(pgconn_fix("28000", 0), "pg_hba.conf"));
	ck_assert_ptr_nonnull(strstr(pgconn_fix("42704", 0), "outboxd slot create"));
	ck_assert_ptr_nonnull(strstr(pgconn_fix("42704", 0), "outboxd.slot.create=true"));
	ck_assert_ptr_nonnull(strstr(pgconn_fix("42501", 0), "REPLICATION"));
	ck_assert_ptr_nonnull(strstr(pgconn_fix("3D000", 0), "database.dbname"));
	ck_assert_ptr_nonnull(strstr(pgconn_fix("55000", 0), "invalidated"));
}
END_TEST

struct message_case {
	const char *message;
	unsigned flags;
	enum pgconn_failure want;
	const char *sqlstate;
};

#define AT "connection to server at \"127.0.0.1\", port 52429 failed: "

static const struct message_case server_said[] = {
	{ AT "FATAL:  28P01: password authentication failed for user \"postgres\"\n"
	     "LOCATION:  auth_failed, auth.c:334\n" AT
	     "FATAL:  28P01: password authentication failed for user \"postgres\"\n"
	     "LOCATION:  auth_failed, auth.c:334\n",
	  0, PGCONN_PRECONDITION, "28P01" },
	{ AT "FATAL:  3D000: database \"nodb\" does not exist\n"
	     "LOCATION:  InitPostgres, postinit.c:948\n",
	  0, PGCONN_PRECONDITION, "3D000" },
	{ AT "FATAL:  42501: must be superuser or replication role to start walsender\n", 0,
	  PGCONN_PRECONDITION, "42501" },
	{ AT "FATAL:  28000: role \"nologin\" is not permitted to log in\n", 0, PGCONN_PRECONDITION,
	  "28000" },
	{ AT "FATAL:  28000: no pg_hba.conf entry for replication connection from host "
	     "\"127.0.0.1\", user \"x\", SSL encryption\n" AT
	     "FATAL:  28000: no pg_hba.conf entry for replication connection from host "
	     "\"127.0.0.1\", user \"x\", no encryption\n",
	  0, PGCONN_PRECONDITION, "28000" },
	{ AT "FATAL:  57P03: the database system is starting up\n", 0, PGCONN_TRANSIENT, "57P03" },
	{ AT "FATAL:  57P03: the database system is shutting down\n", 0, PGCONN_TRANSIENT,
	  "57P03" },
	{ AT "FATAL:  53300: sorry, too many clients already\n", 0, PGCONN_TRANSIENT, "53300" },
	/* a start-up on one host and a wrong password on the next: the precondition decides */
	{ AT "FATAL:  57P03: the database system is starting up\n" AT
	     "FATAL:  28P01: password authentication failed for user \"x\"\n",
	  0, PGCONN_PRECONDITION, "28P01" },
	{ AT "FATAL:  28P01: password authentication failed for user \"x\"\n"
	     "connection to server at \"10.0.0.2\", port 5432 failed: Connection refused\n"
	     "\tIs the server running on that host and accepting TCP/IP connections?\n",
	  0, PGCONN_PRECONDITION, "28P01" },
	/* libpq before 14 starts the message with the severity */
	{ "FATAL:  28P01: password authentication failed for user \"x\"\n", 0, PGCONN_PRECONDITION,
	  "28P01" },
	/* a server whose lc_messages translates the severity */
	{ AT "SCHWERWIEGEND:  3D000: Datenbank \302\273nodb\302\253 existiert nicht\n", 0,
	  PGCONN_PRECONDITION, "3D000" },
	/* the server's code, even with a needed password flagged */
	{ AT "FATAL:  57P03: the database system is starting up\n", PGCONN_NEEDS_PASSWORD,
	  PGCONN_TRANSIENT, "57P03" },
};

/* What libpq says when the server reported nothing: all transient. */
static const char *const server_silent[] = {
	AT "SSL SYSCALL error: EOF detected\n",
	AT "SSL SYSCALL error: EOF detected\n" AT
	   "expected authentication request from server, but received S\n",
	AT "SSL connection has been closed unexpectedly\n",
	AT "SSL error: unexpected eof while reading\n",
	AT "server closed the connection unexpectedly\n"
	   "\tThis probably means the server terminated abnormally\n"
	   "\tbefore or while processing the request.\n",
	AT "Connection refused\n\tIs the server running on that host and accepting TCP/IP "
	   "connections?\n",
	AT "Connection reset by peer\n",
	AT "could not send SSL negotiation packet: Connection reset by peer\n",
	AT "timeout expired\n",
	AT "SSL error: certificate verify failed\n",
	AT "server does not support SSL, but SSL was required\n",
	"could not translate host name \"db\" to address: Name or service not known\n",
	/* the exact structure only: one space after the severity is not the server's */
	AT "FATAL: 28P01: password authentication failed\n",
	/* a severity inside a sentence is not one */
	AT "something went wrong:  28P01: here\n",
	"",
};

START_TEST(test_message_with_the_servers_sqlstate)
{
	for (size_t i = 0; i < sizeof(server_said) / sizeof(server_said[0]); i++) {
		const struct message_case *c = &server_said[i];
		char state[6] = "x";

		ck_assert_msg(pgconn_classify_message(c->message, c->flags, state) == c->want,
			      "case %zu: %s", i, c->message);
		ck_assert_str_eq(state, c->sqlstate);
	}
}
END_TEST

START_TEST(test_message_without_the_servers_sqlstate_is_transient)
{
	for (size_t i = 0; i < sizeof(server_silent) / sizeof(server_silent[0]); i++) {
		char state[6] = "x";

		ck_assert_msg(pgconn_classify_message(server_silent[i], 0, state) ==
				      PGCONN_TRANSIENT,
			      "case %zu: %s", i, server_silent[i]);
		ck_assert_str_eq(state, "");
	}
}
END_TEST

START_TEST(test_message_missing_password_is_a_precondition)
{
	const char *m = AT "fe_sendauth: no password supplied\n";
	char state[6] = "x";

	ck_assert_int_eq(pgconn_classify_message(m, 0, NULL), PGCONN_TRANSIENT);
	ck_assert_int_eq(pgconn_classify_message(m, PGCONN_NEEDS_PASSWORD, state),
			 PGCONN_PRECONDITION);
	ck_assert_str_eq(state, "");
}
END_TEST

/* The client-side failures no server reports: the TLS settings, never a cut in the handshake. */
START_TEST(test_local_failures_have_a_fix_and_cuts_none)
{
	static const char *const local[] = {
		AT "SSL error: certificate verify failed\n",
		AT
		"server certificate for \"localhost\" (and 1 other name) does not match host name "
		"\"db.example\"\n",
		AT "root certificate file \"/x/ca.crt\" does not exist\nEither provide the file or "
		   "change sslmode to disable server certificate verification.\n",
		AT "could not open certificate file \"/x/c.crt\": Permission denied\n",
		AT "certificate present, but not private key file \"/x/c.key\"\n",
		AT "private key file \"/x/c.key\" has group or world access; file must have "
		   "permissions u=rw (0600) or less if owned by the current user\n",
		AT "server does not support SSL, but SSL was required\n",
		"invalid sslmode value: \"bogus\"\n",
	};

	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++) {
		ck_assert_msg(pgconn_local_fix(local[i]) != NULL, "case %zu: %s", i, local[i]);
	}
	ck_assert_ptr_nonnull(strstr(pgconn_local_fix(local[0]), "database.sslrootcert"));
	for (size_t i = 0; i < sizeof(server_silent) / sizeof(server_silent[0]); i++) {
		bool tls_setting = strstr(server_silent[i], "certificate verify failed") ||
				   strstr(server_silent[i], "does not support SSL");

		ck_assert_msg((pgconn_local_fix(server_silent[i]) != NULL) == tls_setting,
			      "case %zu: %s", i, server_silent[i]);
	}
	ck_assert_ptr_null(pgconn_local_fix(NULL));
}
END_TEST

START_TEST(test_failure_codes)
{
	ck_assert_int_eq(pgconn_failure_code(PGCONN_TRANSIENT), -EIO);
	ck_assert_int_eq(pgconn_failure_code(PGCONN_PRECONDITION), -EPERM);
	ck_assert_int_eq(pgconn_failure_code(PGCONN_BUSY), -EBUSY);
}
END_TEST

START_TEST(test_no_result_is_transient)
{
	char err[128];

	ck_assert_int_eq(pgconn_result_failure(NULL, err, sizeof(err)), PGCONN_TRANSIENT);
	ck_assert_str_ne(err, "");
}
END_TEST

static Suite *
pgconn_suite(void)
{
	Suite *s = suite_create("pgconn");
	TCase *codes = tcase_create("sqlstate");
	TCase *msgs = tcase_create("message");

	tcase_add_test(codes, test_transient_codes_restart);
	tcase_add_test(codes, test_precondition_codes_exit_with_a_fix);
	tcase_add_test(codes, test_slot_in_use_is_busy);
	tcase_add_test(codes, test_no_sqlstate_is_transient_unless_a_password_was_missing);
	tcase_add_test(codes, test_malformed_sqlstate_is_transient);
	tcase_add_test(codes, test_whole_code_before_its_class);
	tcase_add_test(codes, test_failure_codes);
	tcase_add_test(codes, test_no_result_is_transient);
	suite_add_tcase(s, codes);
	tcase_add_test(msgs, test_message_with_the_servers_sqlstate);
	tcase_add_test(msgs, test_message_without_the_servers_sqlstate_is_transient);
	tcase_add_test(msgs, test_message_missing_password_is_a_precondition);
	tcase_add_test(msgs, test_local_failures_have_a_fix_and_cuts_none);
	suite_add_tcase(s, msgs);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(pgconn_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
