/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pipeline/supervise.h"

#include <stdio.h>
#include <string.h>

void
supervise_init(struct supervise *sv, int64_t backoff_max_ms, int64_t halt_after, bool dead_letter)
{
	*sv = (struct supervise){ .max_ms = backoff_max_ms,
				  .halt_after = halt_after,
				  .dead_letter = dead_letter };
}

int64_t
supervise_wait_ms(struct supervise *sv, int64_t ran_us)
{
	int64_t ms = !sv->last_ms || ran_us >= SUPERVISE_HEALTHY_US ? SUPERVISE_FIRST_MS :
		     sv->last_ms > INT64_MAX / 2		    ? INT64_MAX :
								      sv->last_ms * 2;

	sv->last_ms = ms > sv->max_ms ? sv->max_ms : ms;
	return sv->last_ms;
}

enum supervise_verdict
supervise_failed(struct supervise *sv, const char *culprit, const char *row, int64_t *ret_count)
{
	if (!culprit || !*culprit) {
		sv->culprit[0] = '\0';
		sv->count = 0;
	} else {
		if (strcmp(sv->culprit, culprit) != 0) {
			snprintf(sv->culprit, sizeof(sv->culprit), "%s", culprit);
			sv->count = 0;
		}
		sv->count++;
	}
	if (ret_count) {
		*ret_count = sv->count;
	}
	if (!sv->count || sv->count < sv->halt_after) {
		return SUPERVISE_RETRY;
	}
	row = row ? row : culprit;
	if (!sv->dead_letter || strcmp(sv->dead_lettered, row) == 0) {
		return SUPERVISE_HALT;
	}
	snprintf(sv->dead_lettered, sizeof(sv->dead_lettered), "%s", row);
	sv->count = 0;
	return SUPERVISE_DEAD_LETTER;
}
