/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/util/kv.h"

#include <stdlib.h>
#include <string.h>

#include "outboxd/util/mem.h"

const struct kv_entry *
kv_find(const struct kv *kv, const char *key)
{
	for (size_t i = 0; i < kv->n; i++) {
		if (strcmp(kv->v[i].key, key) == 0) {
			return &kv->v[i];
		}
	}
	return NULL;
}

const char *
kv_get(const struct kv *kv, const char *key)
{
	const struct kv_entry *e = kv_find(kv, key);

	return e ? e->value : NULL;
}

void
kv_set(struct kv *kv, const char *key, const char *value, const char *origin)
{
	struct kv_entry *e = (struct kv_entry *)kv_find(kv, key);

	if (e) {
		free(e->value);
		free(e->origin);
	} else {
		if (kv->n == kv->cap) {
			kv->cap = kv->cap ? kv->cap * 2 : 16;
			kv->v = xrealloc(kv->v, kv->cap * sizeof(*kv->v));
		}
		e = &kv->v[kv->n++];
		e->key = xstrdup(key);
	}
	e->value = xstrdup(value);
	e->origin = origin ? xstrdup(origin) : NULL;
}

void
kv_del(struct kv *kv, const char *key)
{
	struct kv_entry *e = (struct kv_entry *)kv_find(kv, key);
	size_t i;

	if (!e) {
		return;
	}
	i = (size_t)(e - kv->v);
	free(e->key);
	free(e->value);
	free(e->origin);
	memmove(&kv->v[i], &kv->v[i + 1], (kv->n - i - 1) * sizeof(*kv->v));
	kv->n--;
}

void
kv_fini(struct kv *kv)
{
	for (size_t i = 0; i < kv->n; i++) {
		free(kv->v[i].key);
		free(kv->v[i].value);
		free(kv->v[i].origin);
	}
	free(kv->v);
	*kv = KV_INIT;
}
