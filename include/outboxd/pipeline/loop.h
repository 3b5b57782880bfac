/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PIPELINE_LOOP_H
#define OUTBOXD_PIPELINE_LOOP_H

/*
 * The only wait of the process (DESIGN.md "The main loop"): one poll(2) over a source's socket
 * (the replication connection), librdkafka's wake-up pipe and the signalfd, bounded by the
 * earliest of a session's named deadlines; and the interruptible sleep between sessions. Signals
 * are served here and nowhere else: SIGTERM and SIGINT ask the process to stop, SIGHUP is
 * logged and ignored (no reload).
 *
 * The deadlines belong to a session (struct loop_deadlines, zeroed with it), so nothing one
 * session armed can fire in the next.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The named deadlines of a session. */
enum loop_deadline {
	LOOP_STATUS,   /* the next standby status update */
	LOOP_PROBE,    /* the reply a liveness probe asked for is overdue */
	LOOP_PERIODIC, /* the earliest due periodic job (periodic.h) */
	LOOP_RETRY,    /* the record that waits for producer queue space is tried again */
	LOOP_SEND,     /* the records produced since the last send at once are sent */
	LOOP_READ,     /* reading resumes after a pause while behind (sendnow.h) */
	LOOP_NDEADLINES,
};

/* Monotonic microseconds (now_mono_us()) per deadline; 0 = not armed. */
struct loop_deadlines {
	int64_t at_us[LOOP_NDEADLINES];
};

/*
 * What runs after every wait (redis's aftersleep): the process stamps the liveness endpoint's
 * evidence there. @arg is the hook's own.
 */
typedef void (*loop_hook)(void *arg);

/*
 * The process side: the signalfd, whether a stop was asked for, and the hook run after every
 * wait (NULL = none); the loop knows nothing of what it does.
 */
struct loop {
	int signal_fd;
	bool stopping;
	loop_hook after_wait;
	void *after_wait_arg;
};

/* One wait: what to watch, and what was found ready. */
struct loop_wait {
	int source_fd;	   /* a source's socket, or -1 */
	bool source_read;  /* watch it for input (false while reading is paused on purpose) */
	bool source_write; /* watch it for output space (buffered output waits) */
	/*
	 * Watch it for the peer's hang-up alone (POLLRDHUP), without reading: while reading is
	 * paused, unread data would otherwise hide that the server closed the connection.
	 */
	bool source_hangup;
	int wake_fd; /* the read end of librdkafka's wake-up pipe, or -1 */
	const struct loop_deadlines *deadlines; /* NULL = none */
	int64_t max_us;				/* the longest wait; <= 0 = do not block */
	/* results */
	bool source_ready;  /* readable or writable as asked, or in error */
	bool source_closed; /* with source_hangup: the peer hung up, or the socket is in error */
	bool wake_ready;
};

/* loop_init() - @signal_fd delivers SIGTERM, SIGINT and SIGHUP (borrowed, may be -1). */
void loop_init(struct loop *l, int signal_fd);

/**
 * loop_wait() - wait until a watched fd is ready, a signal arrives, the earliest armed deadline
 * or @w->max_us passes; serves the signals.
 * Return: 0, or -EIO when poll(2) fails (text in @errbuf).
 */
int loop_wait(struct loop *l, struct loop_wait *w, char *errbuf, size_t errlen);

/**
 * loop_sleep() - sleep @ms, ending early on SIGTERM/SIGINT; the loop turns at least once a
 * second meanwhile (a long backoff is not a wedged process).
 * Return: false if a stop was asked for (before or during the sleep).
 */
bool loop_sleep(struct loop *l, int64_t ms);

/* loop_serve_signals() - read pending signals without waiting. */
void loop_serve_signals(struct loop *l);

/* loop_arm() - set deadline @d to @at_us (monotonic); 0 disarms it. */
void loop_arm(struct loop_deadlines *dl, enum loop_deadline d, int64_t at_us);

/* loop_armed() - deadline @d is set. */
bool loop_armed(const struct loop_deadlines *dl, enum loop_deadline d);

/* loop_due() - deadline @d is set and not after @now_us. */
bool loop_due(const struct loop_deadlines *dl, enum loop_deadline d, int64_t now_us);

/* loop_ms_until() - milliseconds from @now_us to @at_us, rounded up, within [0, INT_MAX]. */
int loop_ms_until(int64_t at_us, int64_t now_us);

#endif
