/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/util/hash.h"

#define FNV_OFFSET 2166136261u
#define FNV_PRIME  16777619u

uint32_t
hash_fnv1a(const void *p, size_t len)
{
	const uint8_t *s = p;
	uint32_t h = FNV_OFFSET;

	for (size_t i = 0; i < len; i++) {
		h = (h ^ s[i]) * FNV_PRIME;
	}
	return h;
}
