/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_LSN_H
#define OUTBOXD_LSN_H

#include <stddef.h>
#include <stdint.h>

/* A WAL position. Printed %X/%X (high and low 32 bits), as PostgreSQL prints it. */
typedef uint64_t lsn_t;

#define LSN_INVALID ((lsn_t)0)

/* Room for "FFFFFFFF/FFFFFFFF" and its NUL. */
#define LSN_STRLEN 18

/**
 * lsn_parse() - read PostgreSQL's text form of an LSN ("16/B374D848").
 * @s: borrowed, NUL-terminated; the whole string must be one LSN.
 * @ret_lsn: written only on success.
 *
 * Return: 0, or -EINVAL if @s is not exactly hex/hex with each half at most 8 digits.
 */
int lsn_parse(const char *s, lsn_t *ret_lsn);

/**
 * lsn_format() - write @lsn as %X/%X into @out.
 * @out: at least LSN_STRLEN bytes.
 *
 * Return: @out, for use inside a printf argument list.
 */
char *lsn_format(lsn_t lsn, char out[LSN_STRLEN]);

#endif
