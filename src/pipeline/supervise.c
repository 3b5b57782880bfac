/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pipeline/supervise.h"

#include <stdio.h>
#include <string.h>

#include "outboxd/util/hash.h"

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

static bool
key_is(const struct supervise_key *k, const char *s)
{
	size_t len = strlen(s);

	return k->len == len && k->hash == hash_fnv1a(s, len) &&
	       strncmp(k->text, s, sizeof(k->text) - 1) == 0;
}

static void
key_set(struct supervise_key *k, const char *s)
{
	k->len = strlen(s);
	k->hash = hash_fnv1a(s, k->len);
	snprintf(k->text, sizeof(k->text), "%s", s);
}

enum supervise_verdict
supervise_failed(struct supervise *sv, const char *culprit, const char *row, int64_t *ret_count)
{
	if (!culprit || !*culprit) {
		key_set(&sv->culprit, "");
		sv->count = 0;
	} else {
		if (!key_is(&sv->culprit, culprit)) {
			key_set(&sv->culprit, culprit);
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
	if (!sv->dead_letter || key_is(&sv->dead_lettered, row)) {
		return SUPERVISE_HALT;
	}
	key_set(&sv->dead_lettered, row);
	sv->count = 0;
	return SUPERVISE_DEAD_LETTER;
}
