/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_KV_H
#define OUTBOXD_KV_H

/*
 * An ordered list of configuration key/value pairs with their origin (file:line), the form in
 * which config hands option groups to the modules that own them (EventRouter options to router,
 * converter options to convert, producer settings to producer). Later entries with the same key
 * replace earlier ones on kv_set.
 */

#include <stddef.h>

struct kv_entry {
	char *key;    /* owned */
	char *value;  /* owned */
	char *origin; /* owned: "file:line" or "environment OUTBOXD_X", for error messages */
};

struct kv {
	struct kv_entry *v; /* owned */
	size_t n;
	size_t cap;
};

#define KV_INIT ((struct kv){ NULL, 0, 0 })

/* kv_set() - add or replace @key. All strings are copied; @origin may be NULL. */
void kv_set(struct kv *kv, const char *key, const char *value, const char *origin);

/* kv_get() - the value of @key or NULL. Borrowed from @kv. */
const char *kv_get(const struct kv *kv, const char *key);

/* kv_find() - the entry of @key or NULL. Borrowed from @kv. */
const struct kv_entry *kv_find(const struct kv *kv, const char *key);

/* kv_del() - remove @key if present. */
void kv_del(struct kv *kv, const char *key);

/* kv_fini() - free every entry; @kv is left empty and reusable. */
void kv_fini(struct kv *kv);

#endif
