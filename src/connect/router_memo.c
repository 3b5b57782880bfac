/* SPDX-License-Identifier: Apache-2.0 */
#include <stdint.h>
#include <string.h>

#include "outboxd/util/hash.h"
#include "router_int.h"

/*
 * The topic of recent routing values. Why: the RegexRouter's matches() and replaceFirst() ran
 * for every row, though an outbox table carries a handful of aggregate types, and the topic
 * depends on the value alone. Direct-mapped by an FNV-1a hash; only values that routed without
 * an error are stored, so an error is reported again for every row that has it.
 */

/* The slot for @s, or NULL for a value too long to remember. */
static struct router_memo_slot *
slot_of(struct router_memo *m, const char *s, size_t len)
{
	if (len > ROUTER_MEMO_MAX_VALUE) {
		return NULL;
	}
	return &m->slot[hash_fnv1a(s, len) % ROUTER_MEMO_SLOTS];
}

bool
router_memo_lookup(struct router_memo *m, const char *value, size_t len, struct buf *topic)
{
	const struct router_memo_slot *sl = slot_of(m, value, len);

	if (!sl || !sl->used || sl->value.len != len || memcmp(sl->value.data, value, len) != 0) {
		return false;
	}
	buf_add(topic, sl->topic.data, sl->topic.len);
	return true;
}

void
router_memo_store(struct router_memo *m, const char *value, size_t len, const char *topic,
		  size_t topic_len)
{
	struct router_memo_slot *sl = slot_of(m, value, len);

	if (!sl) {
		return;
	}
	buf_reset(&sl->value);
	buf_add(&sl->value, value, len);
	buf_reset(&sl->topic);
	buf_add(&sl->topic, topic, topic_len);
	sl->used = true;
}

void
router_memo_fini(struct router_memo *m)
{
	for (size_t i = 0; i < ROUTER_MEMO_SLOTS; i++) {
		buf_fini(&m->slot[i].value);
		buf_fini(&m->slot[i].topic);
		m->slot[i].used = false;
	}
}
