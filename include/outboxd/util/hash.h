/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_HASH_H
#define OUTBOXD_HASH_H

/*
 * The one hash for in-memory tables (the producer's topic handles, the router's topic memo):
 * 32-bit FNV-1a. Not for anything an attacker should not be able to collide on purpose, and
 * not Kafka's partitioner (that is librdkafka's murmur2, DESIGN.md invariant 7). Inline: the
 * router's topic memo hashes every row's routing value.
 */

#include <stddef.h>
#include <stdint.h>

/**
 * hash_fnv1a() - the 32-bit FNV-1a hash of @len bytes.
 * @p: borrowed; may be NULL when @len is 0.
 *
 * Return: the hash (2166136261 for no bytes).
 */
static inline uint32_t
hash_fnv1a(const void *p, size_t len)
{
	const uint8_t *s = p;
	uint32_t h = 2166136261u; /* the FNV offset basis */

	for (size_t i = 0; i < len; i++) {
		h = (h ^ s[i]) * 16777619u; /* the FNV prime */
	}
	return h;
}

#endif
