/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_CONNECT_PGVALUE_INT_H
#define OUTBOXD_CONNECT_PGVALUE_INT_H

/* Between pgvalue.c and the conversions it dispatches to in their own files. */

#include "outboxd/connect/pgvalue.h"

/*
 * pgvalue_numeric() - @t, the text of numeric column @col (NULL when @pv's value is), into @pv
 * under decimal.handling.mode @mode. Return: 0, or -EINVAL (text that is not PostgreSQL's
 * numeric output, or a negative scale in precise mode).
 */
int pgvalue_numeric(const struct relcache_col *col, struct slice t, enum pgvalue_decimal mode,
		    struct pgvalue *pv);

/*
 * pgvalue_datetime() - @t, the text of date, timestamp, timestamptz, time or timetz column
 * @col, into @pv under time.precision.mode @mode. Return: 0, or -EINVAL (text that is not
 * PostgreSQL's ISO output, a BC date, a value Debezium's type cannot hold).
 */
int pgvalue_datetime(const struct relcache_col *col, struct slice t, enum pgvalue_time mode,
		     struct pgvalue *pv);

/*
 * pgvalue_sqltime() - @t, the text of an element of a time or timetz array @col, into @pv as
 * Debezium converts it: through java.sql.Time, so a time keeps milliseconds only and 24:00:00
 * is 00:00:00, and a timetz loses its fraction and may have an offset with seconds.
 * Return: 0, or -EINVAL (not PostgreSQL's output).
 */
int pgvalue_sqltime(const struct relcache_col *col, struct slice t, enum pgvalue_time mode,
		    struct pgvalue *pv);

/*
 * pgvalue_interval() - @t, the text of an interval column (IntervalStyle=postgres), into @pv
 * under interval.handling.mode @mode. Return: 0, or -EINVAL (text that is not that output).
 */
int pgvalue_interval(struct slice t, enum pgvalue_interval mode, struct pgvalue *pv);

/*
 * pgvalue_money() - @t, the text of a money column (lc_monetary=C), into @pv under
 * decimal.handling.mode and money.fraction.digits, as its exact decimal.
 * Return: 0, or -EINVAL (another locale's text).
 */
int pgvalue_money(struct slice t, struct pgvalue_modes modes, struct pgvalue *pv);

/*
 * pgvalue_bits() - @t, the text of bit or bit varying column @col, into @pv. Return: 0, or
 * -EINVAL (not a bit string).
 */
int pgvalue_bits(const struct relcache_col *col, struct slice t, struct pgvalue *pv);

/* pgvalue_point() - @t, the text of a point column, into @pv. Return: 0, or -EINVAL. */
int pgvalue_point(struct slice t, struct pgvalue *pv);

/* A scalar conversion, which pgvalue_array() applies to each element. */
typedef int (*pgvalue_elem_fn)(const struct relcache_col *col, struct slice t,
			       struct pgvalue_modes modes, struct pgvalue *pv);

/* pgvalue_array_elem() - the element type of an array type converted, or 0. */
uint32_t pgvalue_array_elem(uint32_t array_oid);

/*
 * pgvalue_array() - @t, the text of array column @col whose elements are of type @elem, into
 * @pv as a Connect ARRAY, each element by @convert. Return: 0, or a conversion's error.
 */
int pgvalue_array(const struct relcache_col *col, uint32_t elem, struct slice t,
		  struct pgvalue_modes modes, pgvalue_elem_fn convert, struct pgvalue *pv);

/* pgvalue_array_fini() - free what pgvalue_array() made in @pv. */
void pgvalue_array_fini(struct pgvalue *pv);

#endif
