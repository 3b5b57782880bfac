/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PIPELINE_TYPECHECK_H
#define OUTBOXD_PIPELINE_TYPECHECK_H

/*
 * The columns the router converts (router_reads()), checked against the types outboxd converts
 * (pgvalue_known() by number, the catalog's facts for the others) before any row is read: a
 * configuration that places a column of a type outboxd does not convert yet is refused at start-up (the catalog, before streaming, polling or
 * the snapshot) or at the Relation message that brings the type (an ALTER TABLE while
 * streaming), naming the table, the column, its type and the fix, instead of halting at the
 * first row. A column nothing converts may have any type.
 */

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "outboxd/connect/router.h"
#include "outboxd/pg/pgsql.h"
#include "outboxd/pg/relcache.h"

/**
 * typecheck_next() - the first column of @rel from column @from on that @router converts and
 * whose type is not one pgvalue_known() converts by its number alone, or -1: the columns the
 * catalog is asked about. @ret_option: the option that names it (router_reads()). Pure.
 */
int typecheck_next(const struct router *router, const struct relcache_rel *rel, int from,
		   const char **ret_option);

/**
 * typecheck_converts() - whether values of the type @f describes become the bytes Debezium
 * gives them. A built-in type outboxd does not convert yet (pgvalue_converts()) does not; nor
 * does an array, range, geometric or extension type outboxd does not know by number; a string,
 * enum or network type is written as its text, as Debezium writes it, hstore and ltree as the
 * router converts them; a domain over a type of those, converted as its base as Debezium does
 * (router_domain()). Pure.
 */
bool typecheck_converts(const struct pgsql_type_facts *f);

/**
 * typecheck_array_elem() - whether an array (not known by number) whose element type @elem
 * describes converts as Debezium converts it: arrays of enums (Enum items, required) and of
 * string types such as citext (plain strings), whose elements the router writes as text
 * (router_array_type()). Pure.
 */
bool typecheck_array_elem(const struct pgsql_type_facts *elem);

/**
 * typecheck_describe() - the type @f describes, for a refusal: its name, and for a domain its
 * base ("money_d, a domain over money"). Pure.
 */
void typecheck_describe(const struct pgsql_type_facts *f, char *out, size_t len);

/**
 * typecheck_reason() - the refusal of column @i of @rel, named by @option, whose type is
 * @type_name (format_type()): the table, the column, the type and the fix, into @errbuf. Pure.
 */
void typecheck_reason(const struct relcache_rel *rel, int i, const char *option,
		      const char *type_name, char *errbuf, size_t errlen);

/**
 * typecheck_relation() - @rel (as a Relation message or pgsql_describe() gives it) checked; the
 * type of a refused column named by the catalog on @c; the labels of an enum column's type
 * learnt by @router (router_enum_labels()).
 * Return: 0; -EINVAL a refused column (typecheck_reason() in @errbuf); or a failed query's code
 * (pgsql.h: -EIO transient, every other code a precondition).
 */
int typecheck_relation(PGconn *c, struct router *router, const struct relcache_rel *rel,
		       char *errbuf, size_t errlen);

/**
 * typecheck_table() - @schema.@table as the catalog describes it now, checked as
 * typecheck_relation() checks a relation. Return: as typecheck_relation().
 */
int typecheck_table(PGconn *c, struct router *router, const char *schema, const char *table,
		    char *errbuf, size_t errlen);

#endif
