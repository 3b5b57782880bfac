/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_MEM_H
#define OUTBOXD_MEM_H

#include <stddef.h>
#include <stdlib.h>

/*
 * Allocators that abort on out-of-memory. outboxd keeps no state the slot cannot replay:
 * after a crash the server resends everything past confirmed_flush_lsn, so OOM branches
 * would only add untested paths (STYLE.md 3.2).
 */

/**
 * xmalloc() - malloc() that aborts on failure.
 * @size: bytes wanted; 0 is treated as 1 so the result is never NULL.
 *
 * Return: caller-frees.
 */
void *xmalloc(size_t size);

/**
 * xcalloc() - zeroed array allocation that aborts on failure or overflow.
 * Return: caller-frees.
 */
void *xcalloc(size_t nmemb, size_t size);

/**
 * xrealloc() - realloc() that aborts on failure.
 * @ptr: stolen (may be NULL).
 * Return: caller-frees; replaces @ptr.
 */
void *xrealloc(void *ptr, size_t size);

/**
 * xstrdup() - strdup() that aborts on failure.
 * @s: borrowed; may be NULL, then NULL is returned.
 * Return: caller-frees.
 */
char *xstrdup(const char *s);

/**
 * xstrndup() - copy of the first @n bytes of @s, NUL-terminated.
 * @s: borrowed; need not be NUL-terminated.
 * Return: caller-frees.
 */
char *xstrndup(const char *s, size_t n);

/* znew(*p) allocates one zeroed object of p's type. */
#define znew(expr) ((__typeof__(expr) *)xcalloc(1, sizeof(expr)))

/* zfree(p) frees p and sets it to NULL in one step. */
#define zfree(p)                                                                                   \
	do {                                                                                       \
		free(p);                                                                           \
		(p) = NULL;                                                                        \
	} while (0)

#endif
