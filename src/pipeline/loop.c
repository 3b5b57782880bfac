/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pipeline/loop.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "outboxd/util/errbuf.h"
#include "outboxd/util/log.h"
#include "outboxd/util/now.h"

#define MOD "loop"

void
loop_init(struct loop *l, int signal_fd)
{
	*l = (struct loop){ .signal_fd = signal_fd };
}

void
loop_serve_signals(struct loop *l)
{
	struct signalfd_siginfo si;

	while (l->signal_fd >= 0 && read(l->signal_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			log_info(MOD, "SIGHUP ignored: outboxd does not reload its configuration; "
				      "restart it to apply changes");
		} else if (!l->stopping) {
			log_info(MOD, "%s: stopping", strsignal((int)si.ssi_signo));
			l->stopping = true;
		}
	}
}

int
loop_ms_until(int64_t at_us, int64_t now_us)
{
	int64_t us = at_us - now_us;

	if (us <= 0) {
		return 0;
	}
	/* rounded up, so a wake-up never comes just before the deadline it waits for */
	return us / 1000 >= INT_MAX ? INT_MAX : (int)((us + 999) / 1000);
}

/* The earliest of @w->max_us from now and the armed deadlines. */
static int
timeout_ms(const struct loop_wait *w, int64_t now)
{
	int64_t until = now + (w->max_us > 0 ? w->max_us : 0);

	for (int d = 0; w->deadlines && w->max_us > 0 && d < LOOP_NDEADLINES; d++) {
		int64_t at = w->deadlines->at_us[d];

		if (at && at < until) {
			until = at;
		}
	}
	return loop_ms_until(until, now);
}

int
loop_wait(struct loop *l, struct loop_wait *w, char *errbuf, size_t errlen)
{
	struct pollfd fds[3] = {
		{ .fd = l->signal_fd, .events = POLLIN },
		{ .fd = w->wake_fd, .events = POLLIN },
		{ .fd = w->source_fd,
		  .events =
			  (short)((w->source_read ? POLLIN : 0) | (w->source_write ? POLLOUT : 0) |
				  (w->source_hangup ? POLLRDHUP : 0)) },
	};

	w->source_ready = w->wake_ready = w->source_closed = false;
	if (w->source_fd < 0 || !fds[2].events) {
		fds[2].fd = -1; /* poll(2) skips negative fds */
	}
	if (poll(fds, 3, l->stopping ? 0 : timeout_ms(w, now_monotonic_us())) < 0 &&
	    errno != EINTR) {
		errbuf_set(errbuf, errlen, "poll: %s", strerror(errno));
		return -EIO;
	}
	if (fds[0].revents) {
		loop_serve_signals(l);
	}
	w->wake_ready = fds[1].revents != 0;
	w->source_ready = fds[2].revents != 0;
	/* POLLHUP and POLLERR come whatever was asked; POLLRDHUP only when asked for */
	w->source_closed = w->source_hangup && (fds[2].revents & (POLLRDHUP | POLLHUP | POLLERR));
	if (l->after_wait) {
		l->after_wait(l->after_wait_arg);
	}
	return 0;
}

bool
loop_sleep(struct loop *l, int64_t ms)
{
	int64_t until = now_monotonic_us() + (ms > 0 ? ms : 0) * 1000;
	struct loop_wait w = { .source_fd = -1, .wake_fd = -1 };

	while (!l->stopping) {
		int64_t now = now_monotonic_us();

		if (now >= until) {
			break;
		}
		w.max_us = until - now > 1000000 ? 1000000 : until - now;
		if (loop_wait(l, &w, NULL, 0) < 0) {
			break;
		}
	}
	return !l->stopping;
}

void
loop_arm(struct loop_deadlines *dl, enum loop_deadline d, int64_t at_us)
{
	dl->at_us[d] = at_us;
}

bool
loop_armed(const struct loop_deadlines *dl, enum loop_deadline d)
{
	return dl->at_us[d] != 0;
}

bool
loop_due(const struct loop_deadlines *dl, enum loop_deadline d, int64_t now_us)
{
	return dl->at_us[d] && dl->at_us[d] <= now_us;
}
