/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/util/failpoint.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const names[FAILPOINT_COUNT_] = {
	[FAILPOINT_BEFORE_START_REPLICATION] = "before_start",
	[FAILPOINT_AFTER_BEGIN] = "after_begin",
	[FAILPOINT_MID_TRANSACTION] = "mid_transaction",
	[FAILPOINT_AFTER_PRODUCE] = "after_produce",
	[FAILPOINT_AFTER_DELIVERY] = "after_delivery",
	[FAILPOINT_AFTER_STATUS] = "after_status",
	[FAILPOINT_SHUTDOWN_FLUSH] = "shutdown_flush",
	[FAILPOINT_POLL_BEFORE_MARK] = "poll_before_mark",
};

/*
 * Module state, set once at start-up from the environment. A test hook of this kind is the
 * one place a mutable static is clearer than threading a handle through every module.
 */
static int armed = -1;	   /* the armed failpoint, or -1 */
static long remaining = 0; /* passes left before it fires */
static bool hang = false;  /* ":hang": the thread stops there for good instead of a SIGKILL */

const char *
failpoint_name(enum failpoint fp)
{
	return fp < FAILPOINT_COUNT_ ? names[fp] : "?";
}

int
failpoint_init(const char *spec)
{
	const char *colon;
	size_t len, slen;
	long n = 1;

	armed = -1;
	hang = false;
	if (!spec || !*spec) {
		return 0;
	}
	slen = strlen(spec);
	if (slen > 5 && strcmp(spec + slen - 5, ":hang") == 0) {
		hang = true;
		slen -= 5;
	}
	colon = memchr(spec, ':', slen);
	len = colon ? (size_t)(colon - spec) : slen;
	if (colon) {
		char *end;

		n = strtol(colon + 1, &end, 10);
		if (end == colon + 1 || end != spec + slen || n < 1) {
			return -EINVAL;
		}
	}
	for (int i = 0; i < FAILPOINT_COUNT_; i++) {
		if (strlen(names[i]) == len && strncmp(names[i], spec, len) == 0) {
			armed = i;
			remaining = n;
			return 0;
		}
	}
	return -EINVAL;
}

void
failpoint_hit(enum failpoint fp)
{
	if ((int)fp != armed || --remaining > 0) {
		return;
	}
	if (hang) {
		/* A wedged thread (the liveness endpoint's case): the others, HTTP's, go on. */
		for (;;) {
			pause();
		}
	}
	/* A crash: no cleanup, no flush, nothing confirmed beyond what was already sent. */
	kill(getpid(), SIGKILL);
	pause();
}
