/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pipeline/periodic.h"

void
periodic_start(struct periodic *p, const struct periodic_job *jobs, int njobs,
	       int64_t (*clock)(void))
{
	int64_t now = clock();

	*p = (struct periodic){ .njobs = njobs < PERIODIC_MAX_JOBS ? njobs : PERIODIC_MAX_JOBS,
				.clock = clock };
	for (int i = 0; i < p->njobs; i++) {
		p->job[i] = jobs[i];
		p->next_us[i] = now + jobs[i].first_us;
		p->left[i] = PERIODIC_DONE;
	}
}

static bool
due(const struct periodic *p, int i, int64_t now)
{
	return p->job[i].every_us > 0 && (p->left[i] != PERIODIC_DONE || now >= p->next_us[i]);
}

/* The wait after @failures failed steps in a row: the cadence, doubled at each further one. */
static int64_t
backoff_us(const struct periodic *p, int i, int failures)
{
	int64_t wait = p->job[i].every_us,
		cap = p->backoff_max_us[i] > wait ? p->backoff_max_us[i] : wait;

	for (int k = 1; k < failures && wait < cap; k++) {
		wait = wait > cap / 2 ? cap : wait * 2;
	}
	return wait;
}

void
periodic_backoff(struct periodic *p, int i, int64_t max_us)
{
	if (i >= 0 && i < p->njobs) {
		p->backoff_max_us[i] = max_us;
	}
}

int64_t
periodic_retry_us(const struct periodic *p, int i)
{
	if (i < 0 || i >= p->njobs) {
		return 0;
	}
	return backoff_us(p, i, p->failures[i] + 1);
}

/* Job @i's step, if it is due at *@now; *@now becomes the step's end (one clock read a step). */
static enum outcome
run(struct periodic *p, int i, int64_t *now)
{
	enum periodic_left left = PERIODIC_DONE;
	enum outcome o;

	if (!due(p, i, *now)) {
		return OUTCOME_OK;
	}
	o = p->job[i].step(p->job[i].arg, *now, &left);
	*now = p->clock();
	p->left[i] = left == PERIODIC_FAILED ? PERIODIC_DONE : left;
	if (left == PERIODIC_FAILED) {
		p->failures[i]++;
		p->next_us[i] = *now + backoff_us(p, i, p->failures[i]);
	} else if (left == PERIODIC_DONE) {
		/* from the step's end: a long step does not make the next one come sooner */
		p->failures[i] = 0;
		p->next_us[i] = *now + p->job[i].every_us;
	}
	return o;
}

enum outcome
periodic_run_job(struct periodic *p, int i)
{
	int64_t now;

	if (i < 0 || i >= p->njobs) {
		return OUTCOME_OK;
	}
	now = p->clock();
	return run(p, i, &now);
}

enum outcome
periodic_run(struct periodic *p)
{
	enum outcome o = OUTCOME_OK;
	int64_t now = p->njobs ? p->clock() : 0;

	/* one pass: a job with work left runs again at the next turn, never twice in this one */
	for (int i = 0; i < p->njobs && o == OUTCOME_OK; i++) {
		o = run(p, i, &now);
	}
	return o;
}

int64_t
periodic_job_next_us(const struct periodic *p, int i)
{
	if (i < 0 || i >= p->njobs || p->job[i].every_us <= 0 || p->left[i] == PERIODIC_WAITING) {
		return 0;
	}
	if (p->left[i] == PERIODIC_MORE) {
		return p->clock();
	}
	/* 0 says "none" to the loop (loop_arm()): a clock at 0 is due at 1 */
	return p->next_us[i] ? p->next_us[i] : 1;
}

int64_t
periodic_next_us(const struct periodic *p)
{
	int64_t earliest = 0;

	for (int i = 0; i < p->njobs; i++) {
		int64_t at = periodic_job_next_us(p, i);

		if (at && (!earliest || at < earliest)) {
			earliest = at;
		}
	}
	return earliest;
}

void
periodic_poke(struct periodic *p, int i)
{
	if (i >= 0 && i < p->njobs && p->next_us[i] > p->clock()) {
		p->next_us[i] = p->clock();
	}
}
