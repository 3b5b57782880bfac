/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "outboxd/util/log.h"

/* Runs log_msg() with stderr redirected to a temporary file and returns what was written. */
static char *
capture(enum log_level level, const char *msg)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	static char out[512];
	size_t n;

	ck_assert_ptr_nonnull(tmp);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	log_msg(level, "unit", "%s value=%d", msg, 7);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, sizeof(out) - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
	return out;
}

/* The same for log_fields() with a row id, and a message JSON must escape. */
static char *
capture_fields(void)
{
	const struct log_field f[] = { { "row_id", "0badc0de" }, { "topic", NULL } };
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	static char out[1024];
	size_t n;

	ck_assert_ptr_nonnull(tmp);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	log_fields(LOG_ERROR, "relay", f, 2, "halt: \"quoted\" \\ tab\t newline\n end %d", 1);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, sizeof(out) - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
	return out;
}

static const char *
field(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

START_TEST(test_json_lines_are_one_object_each_with_the_context)
{
	struct json_object *o;
	char *line;

	log_set_level(LOG_INFO);
	log_set_format(LOG_FORMAT_JSON);
	log_set_context("slot", "debezium");
	line = capture_fields();
	/* one line, one object: the newline of the message is escaped */
	ck_assert_ptr_eq(strchr(line, '\n'), line + strlen(line) - 1);
	ck_assert_ptr_nonnull(o = json_tokener_parse(line));
	ck_assert_str_eq(field(o, "level"), "error");
	ck_assert_str_eq(field(o, "module"), "relay");
	ck_assert_str_eq(field(o, "message"), "halt: \"quoted\" \\ tab\t newline\n end 1");
	ck_assert_str_eq(field(o, "slot"), "debezium");
	ck_assert_str_eq(field(o, "row_id"), "0badc0de");
	ck_assert_ptr_null(field(o, "topic")); /* NULL: left out */
	ck_assert_int_eq(strlen(field(o, "time")), 24);
	ck_assert_int_eq(field(o, "time")[23], 'Z');
	/* the keys in order: time, level, module, message, the context, the line's */
	ck_assert_ptr_eq(strstr(line, "{\"time\":"), line);
	ck_assert(strstr(line, "\"message\"") < strstr(line, "\"slot\"") &&
		  strstr(line, "\"slot\"") < strstr(line, "\"row_id\""));
	json_object_put(o);
	/* a plain log_msg() line carries the context too; removing it removes the field */
	ck_assert_ptr_nonnull(o = json_tokener_parse(capture(LOG_WARN, "w")));
	ck_assert_str_eq(field(o, "slot"), "debezium");
	ck_assert_str_eq(field(o, "message"), "w value=7");
	json_object_put(o);
	log_set_context("slot", NULL);
	ck_assert_ptr_nonnull(o = json_tokener_parse(capture(LOG_WARN, "w")));
	ck_assert_ptr_null(field(o, "slot"));
	json_object_put(o);
	log_set_format(LOG_FORMAT_TEXT);
	/* the text format has the message alone */
	ck_assert_ptr_nonnull(strstr(capture_fields(), " error relay: halt: \"quoted\""));
}
END_TEST

START_TEST(test_format_names_parse)
{
	enum log_format f = LOG_FORMAT_TEXT;

	ck_assert_int_eq(log_format_parse("JSON", &f), 0);
	ck_assert_int_eq(f, LOG_FORMAT_JSON);
	ck_assert_int_eq(log_format_parse("text", &f), 0);
	ck_assert_int_eq(f, LOG_FORMAT_TEXT);
	ck_assert_int_eq(log_format_parse("logfmt", &f), -EINVAL);
	ck_assert_int_eq(f, LOG_FORMAT_TEXT);
}
END_TEST

START_TEST(test_line_is_one_utc_timestamped_line_with_level_and_module)
{
	char *line;

	log_set_level(LOG_INFO);
	line = capture(LOG_WARN, "slot busy, retrying in 2s");
	/* 2026-12-02T14:40:00.123Z warn  unit: slot busy, retrying in 2s value=7\n */
	ck_assert_uint_eq(strlen(line) > 25, 1);
	ck_assert_int_eq(line[4], '-');
	ck_assert_int_eq(line[10], 'T');
	ck_assert_int_eq(line[23], 'Z');
	ck_assert_ptr_nonnull(strstr(line, " warn  unit: slot busy, retrying in 2s value=7\n"));
	/* exactly one line */
	ck_assert_ptr_eq(strchr(line, '\n'), line + strlen(line) - 1);
}
END_TEST

START_TEST(test_messages_below_the_level_are_dropped)
{
	log_set_level(LOG_WARN);
	ck_assert_str_eq(capture(LOG_INFO, "hidden"), "");
	ck_assert_str_eq(capture(LOG_DEBUG, "hidden"), "");
	ck_assert_ptr_nonnull(strstr(capture(LOG_ERROR, "shown"), "error unit: shown"));
}
END_TEST

START_TEST(test_level_names_parse_in_any_case_and_bad_ones_change_nothing)
{
	enum log_level l = LOG_INFO;

	ck_assert_int_eq(log_level_parse("DEBUG", &l), 0);
	ck_assert_int_eq(l, LOG_DEBUG);
	ck_assert_int_eq(log_level_parse("warn", &l), 0);
	ck_assert_int_eq(l, LOG_WARN);
	ck_assert_int_eq(log_level_parse("verbose", &l), -EINVAL);
	ck_assert_int_eq(l, LOG_WARN);
}
END_TEST

static Suite *
log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("lines");

	tcase_add_test(tc, test_line_is_one_utc_timestamped_line_with_level_and_module);
	tcase_add_test(tc, test_messages_below_the_level_are_dropped);
	tcase_add_test(tc, test_json_lines_are_one_object_each_with_the_context);
	tcase_add_test(tc, test_format_names_parse);
	tcase_add_test(tc, test_level_names_parse_in_any_case_and_bad_ones_change_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(log_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
