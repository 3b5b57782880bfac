/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_TESTS_TESTDIR_H
#define OUTBOXD_TESTS_TESTDIR_H

/*
 * A fresh temporary directory per test for the suites that read files (config, cfgsrc):
 * testdir_setup/testdir_teardown are a Check fixture pair.
 */

/* testdir_setup() - create a fresh directory under /tmp. */
void testdir_setup(void);

/* testdir_teardown() - remove it with every file, and forget the paths handed out. */
void testdir_teardown(void);

/* testdir_path() - the directory of this test. Borrowed. */
const char *testdir_path(void);

/**
 * testdir_put() - write @text to @name in the directory; fails the test on error.
 * Return: the file's path, borrowed until testdir_teardown().
 */
const char *testdir_put(const char *name, const char *text);

#endif
