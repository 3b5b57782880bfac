/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outboxd/obs/procstat.h"

/* A /proc/self/stat line whose command name holds a space and a ')' (proc(5) allows both). */
static const char *const STAT =
	"4242 (out box) d) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 125 0 0 20 0 3 0 "
	"5000 123456789 2048 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0";

START_TEST(test_parse_reads_the_fields_after_the_command_name)
{
	struct procstat ps = { 0 };

	ck_assert(procstat_parse(STAT, 1700000000.0, 100, 4096, &ps));
	ck_assert_double_eq_tol(ps.cpu_seconds, 3.75, 1e-9); /* (250 + 125) / 100 */
	ck_assert_double_eq_tol(ps.start_time, 1700000050.0, 1e-6);
	ck_assert_uint_eq(ps.virtual_bytes, 123456789);
	ck_assert_uint_eq(ps.resident_bytes, 2048u * 4096u);
	ck_assert(!procstat_parse("4242 (cut", 0, 100, 4096, &ps));
	ck_assert(!procstat_parse("4242 (x) S 1 2 3", 0, 100, 4096, &ps));
}
END_TEST

START_TEST(test_read_and_render_this_process)
{
	struct procstat ps = { 0 };
	struct buf b = BUF_INIT;

	ck_assert(procstat_read(&ps));
	ck_assert(ps.resident_bytes > 0 && ps.open_fds >= 3 && ps.start_time > 1.6e9);
	procstat_render(&ps, &b);
	ck_assert_ptr_nonnull(strstr(buf_cstr(&b), "# TYPE process_cpu_seconds_total counter\n"));
	ck_assert_ptr_nonnull(strstr(buf_cstr(&b), "\nprocess_resident_memory_bytes "));
	ck_assert_ptr_nonnull(strstr(buf_cstr(&b), "\nprocess_open_fds "));
	ck_assert_ptr_nonnull(strstr(buf_cstr(&b), "\nprocess_start_time_seconds 1"));
	buf_fini(&b);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("procstat");
	TCase *tc = tcase_create("proc");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_parse_reads_the_fields_after_the_command_name);
	tcase_add_test(tc, test_read_and_render_this_process);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
