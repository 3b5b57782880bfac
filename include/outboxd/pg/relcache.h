/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_RELCACHE_H
#define OUTBOXD_RELCACHE_H

/*
 * Relation metadata by relid, replaced whole on every Relation message (pgoutput resends them
 * after any invalidation, and always after a reconnect). The only module that copies decoded
 * bytes, because its entries outlive the CopyData buffer. Pure: no I/O.
 */

#include <stdbool.h>
#include <stdint.h>

#include "outboxd/pg/pgoutput.h"

struct relcache_col {
	char *name; /* owned, NUL-terminated */
	uint32_t type_oid;
	int32_t typmod;
	bool key; /* part of the replica identity */
};

struct relcache_rel {
	uint32_t relid;
	char *nspname; /* owned; "pg_catalog" when the message carried an empty namespace */
	char *relname; /* owned */
	char replident;
	int ncols;
	struct relcache_col *cols; /* owned */
	/*
	 * Free for the caller (the relay): per-relation state derived from the columns, such as
	 * "selected by table.include.list" and column positions, recomputed when the entry is
	 * replaced. relcache only zeroes it on replace and frees nothing it points to.
	 */
	void *user;
};

struct relcache;

/* relcache_new() - an empty cache. Caller frees with relcache_free(). */
struct relcache *relcache_new(void);

/* relcache_free() - free the cache and every entry; NULL allowed. @free_user frees rel->user. */
void relcache_free(struct relcache *rc, void (*free_user)(void *user));

/**
 * relcache_apply() - add or replace the entry of a decoded Relation message.
 * @msg: borrowed; must be of type PGOUTPUT_MSG_RELATION. Its bytes are copied.
 * @free_user: called on the replaced entry's user pointer (NULL: not called).
 *
 * Return: the new entry (borrowed from the cache, valid until replaced or the cache is freed).
 */
const struct relcache_rel *relcache_apply(struct relcache *rc, const struct pgoutput_msg *msg,
					  void (*free_user)(void *user));

/* relcache_get() - the entry for @relid, or NULL. Borrowed. */
struct relcache_rel *relcache_get(const struct relcache *rc, uint32_t relid);

/* relcache_count() - number of cached relations. */
int relcache_count(const struct relcache *rc);

#endif
