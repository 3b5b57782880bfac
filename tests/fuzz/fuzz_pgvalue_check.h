/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_FUZZ_PGVALUE_CHECK_H
#define OUTBOXD_FUZZ_PGVALUE_CHECK_H

/*
 * The properties fuzz_pgvalue checks, with their own reading of PostgreSQL's text output
 * (written apart from pgvalue.c so the two can disagree): what text each type accepts, and
 * what value that text must give.
 */

#include <stdint.h>

#include "outboxd/connect/pgvalue.h"

/* One column the fuzzer can choose. */
struct fuzz_pgvalue_case {
	uint32_t oid;
	int32_t typmod;
	enum pgvalue_binary binary;
};

/*
 * fuzz_pgvalue_check() - abort() unless pgvalue_convert()'s result (@rc, @pv, @err) is the
 * one @pc's text must give for column @c.
 */
void fuzz_pgvalue_check(const struct fuzz_pgvalue_case *c, const struct pgoutput_col *pc,
			const struct pgvalue *pv, int rc, const char *err);

#endif
