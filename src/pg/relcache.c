/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pg/relcache.h"

#include <stdlib.h>
#include <string.h>

#include "outboxd/util/mem.h"

/*
 * A sorted array of entry pointers, searched by relid. A database publishes few tables, and
 * entries change only on Relation messages, so a binary search beats a hash on simplicity.
 * Entries are separate allocations: a pointer handed out stays valid while other relids
 * are added.
 */
struct relcache {
	struct relcache_rel **rels;
	size_t n, cap;
};

struct relcache *
relcache_new(void)
{
	return znew(struct relcache);
}

static void
rel_free(struct relcache_rel *rel, void (*free_user)(void *user))
{
	if (!rel) {
		return;
	}
	if (free_user && rel->user) {
		free_user(rel->user);
	}
	for (int i = 0; i < rel->ncols; i++) {
		free(rel->cols[i].name);
	}
	free(rel->cols);
	free(rel->nspname);
	free(rel->relname);
	free(rel);
}

void
relcache_free(struct relcache *rc, void (*free_user)(void *user))
{
	if (!rc) {
		return;
	}
	for (size_t i = 0; i < rc->n; i++) {
		rel_free(rc->rels[i], free_user);
	}
	free(rc->rels);
	free(rc);
}

/* Index of @relid, or of the slot where it would be inserted; *found says which. */
static size_t
find(const struct relcache *rc, uint32_t relid, bool *found)
{
	size_t lo = 0, hi = rc->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rc->rels[mid]->relid < relid) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	*found = lo < rc->n && rc->rels[lo]->relid == relid;
	return lo;
}

/* A NUL-terminated copy; a slice without bytes (even a NULL one) becomes "". */
static char *
slice_dup(struct slice s)
{
	return s.len ? xstrndup(s.p, s.len) : xstrdup("");
}

/* A deep copy of the Relation message; the user pointer starts out NULL. */
static struct relcache_rel *
rel_copy(const struct pgoutput_msg *msg)
{
	struct relcache_rel *rel = znew(*rel);
	int ncols = msg->u.relation.ncols;

	rel->relid = msg->u.relation.relid;
	if (msg->u.relation.nspname.len) {
		rel->nspname = slice_dup(msg->u.relation.nspname);
	} else {
		rel->nspname = xstrdup("pg_catalog");
	}
	rel->relname = slice_dup(msg->u.relation.relname);
	rel->replident = msg->u.relation.replident;
	rel->ncols = ncols;
	rel->cols = xcalloc(ncols > 0 ? (size_t)ncols : 1, sizeof(*rel->cols));
	for (int i = 0; i < ncols; i++) {
		const struct pgoutput_rel_col *src = &msg->u.relation.cols[i];

		rel->cols[i].name = slice_dup(src->name);
		rel->cols[i].type_oid = src->type_oid;
		rel->cols[i].typmod = src->typmod;
		rel->cols[i].key = (src->flags & 1) != 0;
	}
	return rel;
}

/* Open a hole at @at for one more entry. */
static void
insert_at(struct relcache *rc, size_t at, struct relcache_rel *rel)
{
	if (rc->n == rc->cap) {
		rc->cap = rc->cap ? rc->cap * 2 : 8;
		rc->rels = xrealloc(rc->rels, rc->cap * sizeof(*rc->rels));
	}
	memmove(&rc->rels[at + 1], &rc->rels[at], (rc->n - at) * sizeof(*rc->rels));
	rc->rels[at] = rel;
	rc->n++;
}

const struct relcache_rel *
relcache_apply(struct relcache *rc, const struct pgoutput_msg *msg, void (*free_user)(void *user))
{
	struct relcache_rel *rel;
	bool found;
	size_t at;

	if (msg->type != PGOUTPUT_MSG_RELATION) {
		return NULL;
	}
	rel = rel_copy(msg);
	at = find(rc, rel->relid, &found);
	if (found) {
		rel_free(rc->rels[at], free_user);
		rc->rels[at] = rel;
	} else {
		insert_at(rc, at, rel);
	}
	return rel;
}

struct relcache_rel *
relcache_get(const struct relcache *rc, uint32_t relid)
{
	bool found;
	size_t at = find(rc, relid, &found);

	return found ? rc->rels[at] : NULL;
}

int
relcache_count(const struct relcache *rc)
{
	return (int)rc->n;
}
