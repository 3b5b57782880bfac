/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/config/vocab.h"

#include <stdlib.h>
#include <string.h>

/*
 * Keys the generated table cannot show: legacy names that Debezium 3.6.1 still tolerates but no
 * longer reads (reference §1 and §4 "D"), and options a component reads outside its ConfigDef.
 * A legacy key is accepted and listed as ignored, exactly as 3.6.1 silently ignores it.
 */
struct hand_entry {
	const char *key;
	unsigned groups;
	const char *note; /* NULL: honoured like any generated key */
};

static const struct hand_entry hand[] = {
	/* EventRouter reads it from the SMT config to sanitise expanded-JSON field names */
	{ "field.name.adjustment.mode", VOCAB_SMT, NULL },
	{ "table.fields.additional.error.on.missing", VOCAB_SMT | VOCAB_LEGACY,
	  "read by Debezium 2.5 to 3.5 only; 3.6.1 reads table.field.additional.missing" },
	{ "table.field.event.payload.id", VOCAB_SMT | VOCAB_LEGACY, "removed in Debezium 2.0" },
	{ "debezium.op.invalid.behavior", VOCAB_SMT | VOCAB_LEGACY,
	  "Debezium 1.x name; 3.6.1 reads table.op.invalid.behavior" },
	{ "table.json.payload.empty.array.behavior", VOCAB_SMT | VOCAB_LEGACY,
	  "added after 3.6.1, which ignores it" },
	{ "database.server.name", VOCAB_CONNECTOR | VOCAB_LEGACY,
	  "Debezium 1.x name; 3.6.1 reads topic.prefix" },
	{ "table.whitelist", VOCAB_CONNECTOR | VOCAB_LEGACY,
	  "Debezium 1.x name; 3.6.1 reads table.include.list" },
	{ "table.blacklist", VOCAB_CONNECTOR | VOCAB_LEGACY,
	  "Debezium 1.x name; 3.6.1 reads table.exclude.list" },
	{ "schema.whitelist", VOCAB_CONNECTOR | VOCAB_LEGACY,
	  "Debezium 1.x name; 3.6.1 reads schema.include.list" },
	{ "schema.blacklist", VOCAB_CONNECTOR | VOCAB_LEGACY,
	  "Debezium 1.x name; 3.6.1 reads schema.exclude.list" },
	{ "column.whitelist", VOCAB_CONNECTOR | VOCAB_LEGACY,
	  "Debezium 1.x name; 3.6.1 reads column.include.list" },
	{ "column.blacklist", VOCAB_CONNECTOR | VOCAB_LEGACY,
	  "Debezium 1.x name; 3.6.1 reads column.exclude.list" },
};

static int
cmp_entry(const void *k, const void *e)
{
	return strcmp(k, ((const struct vocab_entry *)e)->key);
}

/* Match @key against a generated pattern name such as "column.truncate.to.(d+).chars". */
static bool
pattern_match(const char *pat, const char *key)
{
	static const char *const parts[] = { "(d+)", "([^.]+)", "(.+)" };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		size_t n = strlen(parts[i]);

		if (strncmp(pat, parts[i], n) != 0) {
			continue;
		}
		/* try every split of the remaining key */
		for (const char *k = key;; k++) {
			bool ok = k > key;

			for (const char *c = key; ok && c < k; c++) {
				ok = i == 0 ? (*c >= '0' && *c <= '9') : i == 1 ? *c != '.' : true;
			}
			if (ok && pattern_match(pat + n, k)) {
				return true;
			}
			if (!*k) {
				return false;
			}
		}
	}
	if (!*pat) {
		return !*key;
	}
	return *pat == *key && pattern_match(pat + 1, key + 1);
}

unsigned
vocab_groups(const char *key)
{
	const struct vocab_entry *e;
	unsigned groups = 0;

	e = bsearch(key, vocab_data, vocab_data_len, sizeof(vocab_data[0]), cmp_entry);
	if (e) {
		groups = e->groups;
	} else {
		for (size_t i = 0; i < vocab_data_len; i++) {
			if (strchr(vocab_data[i].key, '(') &&
			    pattern_match(vocab_data[i].key, key)) {
				groups |= vocab_data[i].groups;
			}
		}
	}
	for (size_t i = 0; i < sizeof(hand) / sizeof(hand[0]); i++) {
		if (strcmp(hand[i].key, key) == 0) {
			groups |= hand[i].groups;
		}
	}
	return groups;
}

bool
vocab_is(const char *key, unsigned groups)
{
	return (vocab_groups(key) & groups) != 0;
}

const char *
vocab_note(const char *key, unsigned groups)
{
	for (size_t i = 0; i < sizeof(hand) / sizeof(hand[0]); i++) {
		if ((hand[i].groups & groups) && strcmp(hand[i].key, key) == 0) {
			return hand[i].note;
		}
	}
	return NULL;
}
