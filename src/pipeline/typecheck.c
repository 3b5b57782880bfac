/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/pipeline/typecheck.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/pgvalue.h"
#include "outboxd/pg/pgsql.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"

int
typecheck_next(const struct router *router, const struct relcache_rel *rel, int from,
	       const char **ret_option)
{
	for (int i = from; i < rel->ncols; i++) {
		const char *option;

		if (pgvalue_known(rel->cols[i].type_oid)) {
			continue;
		}
		option = router_reads(router, rel->cols[i].name);
		if (option) {
			*ret_option = option;
			return i;
		}
	}
	return -1;
}

/* Written as PostgreSQL's text output on both sides (Debezium's string schema, no name). */
static bool
as_text(char category)
{
	return category == 'S' || category == 'E' || category == 'I';
}

/* hstore and ltree, which the router converts once it knows their numbers (router.h). */
static bool
extension_type(const struct pgsql_type_facts *f)
{
	return f->typtype == 'b' &&
	       (strcmp(f->typname, "hstore") == 0 || strcmp(f->typname, "ltree") == 0);
}

bool
typecheck_converts(const struct pgsql_type_facts *f)
{
	if (!pgvalue_converts(f->base_oid)) {
		return false;
	}
	if (f->domain) {
		/*
		 * converted as its base, as Debezium converts it (router_domain()); but a domain
		 * over an enum stops Debezium 3.6.1's type registry (a NullPointerException from
		 * ResultSet.getArray() at its start, the compat suite found): refused
		 */
		return f->typtype != 'e' && (pgvalue_known(f->base_oid) || as_text(f->category));
	}
	return pgvalue_known(f->base_oid) || as_text(f->category) || extension_type(f);
}

bool
typecheck_array_elem(const struct pgsql_type_facts *elem)
{
	return !elem->domain &&
	       (elem->typtype == 'e' || (elem->typtype == 'b' && elem->category == 'S'));
}

void
typecheck_describe(const struct pgsql_type_facts *f, char *out, size_t len)
{
	if (f->domain) {
		snprintf(out, len, "%s, a domain over %s", f->name, f->base_name);
	} else {
		snprintf(out, len, "%s", f->name);
	}
}

void
typecheck_reason(const struct relcache_rel *rel, int i, const char *option, const char *type_name,
		 char *errbuf, size_t errlen)
{
	/*
	 * The fix: not converting the column, or converting a copy of a type outboxd converts.
	 * pgoutput publishes a table's stored columns only (no view, no generated column before
	 * PostgreSQL 18), so the copy is a column the application or a BEFORE INSERT trigger fills.
	 */
	errbuf_set(
		errbuf, errlen,
		"table %s.%s: column \"%s\" (%s) has type %s, which outboxd does not convert "
		"yet (docs/debezium.md): every row would be a poison row; "
		"take the column out of %s, or use a column of a type outboxd converts instead "
		"(text, for instance, that the application or a BEFORE INSERT trigger fills with "
		"%s::text)",
		rel->nspname, rel->relname, rel->cols[i].name, option, type_name, option,
		rel->cols[i].name);
}

/* An enum's labels, for the Enum schema its values carry (router_enum_labels()). */
static int
learn_enum(PGconn *c, struct router *router, uint32_t type_oid, char *errbuf, size_t errlen)
{
	struct buf labels = BUF_INIT;
	int rc = pgsql_enum_labels(c, type_oid, &labels, errbuf, errlen);

	if (rc == 0) {
		router_enum_labels(router, type_oid, buf_cstr(&labels));
	}
	buf_fini(&labels);
	return rc;
}

/*
 * An array @f (of column type @type_oid) whose elements the router writes as text
 * (typecheck_array_elem()): learnt by @router, with its element enum's labels.
 * Return: 1 learnt, 0 not such an array, or a failed query's code.
 */
static int
learn_array(PGconn *c, struct router *router, const struct pgsql_type_facts *f, uint32_t type_oid,
	    char *errbuf, size_t errlen)
{
	struct pgsql_type_facts e;
	int rc;

	if (f->domain || f->category != 'A' || !f->elem_oid) {
		return 0;
	}
	if ((rc = pgsql_type_facts(c, f->elem_oid, -1, &e, errbuf, errlen)) < 0) {
		return rc;
	}
	if (!typecheck_array_elem(&e)) {
		return 0;
	}
	if (e.typtype == 'e' && (rc = learn_enum(c, router, e.base_oid, errbuf, errlen)) < 0) {
		return rc;
	}
	router_array_type(router, type_oid, e.base_oid);
	return 1;
}

int
typecheck_relation(PGconn *c, struct router *router, const struct relcache_rel *rel, char *errbuf,
		   size_t errlen)
{
	const char *option = NULL;

	for (int i = typecheck_next(router, rel, 0, &option); i >= 0;
	     i = typecheck_next(router, rel, i + 1, &option)) {
		struct pgsql_type_facts f;
		char type[300];
		int rc = pgsql_type_facts(c, rel->cols[i].type_oid, rel->cols[i].typmod, &f, errbuf,
					  errlen);

		if (rc < 0) {
			return rc;
		}
		if (!typecheck_converts(&f) &&
		    (rc = learn_array(c, router, &f, rel->cols[i].type_oid, errbuf, errlen)) <= 0) {
			if (rc < 0) {
				return rc;
			}
			typecheck_describe(&f, type, sizeof(type));
			typecheck_reason(rel, i, option, type, errbuf, errlen);
			return -EINVAL;
		}
		if (f.typtype == 'e' &&
		    (rc = learn_enum(c, router, f.base_oid, errbuf, errlen)) < 0) {
			return rc;
		}
		if (!f.domain && extension_type(&f)) {
			router_named_type(router, f.base_oid, f.typname);
		}
		if (f.domain) {
			router_domain(router, rel->cols[i].type_oid, f.base_oid, f.base_typmod);
		}
	}
	return 0;
}

int
typecheck_table(PGconn *c, struct router *router, const char *schema, const char *table,
		char *errbuf, size_t errlen)
{
	struct pgsql_column *cols = NULL;
	struct relcache_col *rcols;
	struct relcache_rel rel;
	int n = 0, rc = pgsql_table_columns(c, schema, table, &cols, &n, errbuf, errlen);

	if (rc < 0) {
		return rc;
	}
	/* borrowed names: the relation lives for this call only */
	rcols = xcalloc((size_t)n + 1, sizeof(*rcols));
	for (int i = 0; i < n; i++) {
		rcols[i] = (struct relcache_col){ .name = cols[i].name,
						  .type_oid = cols[i].type_oid,
						  .typmod = cols[i].typmod };
	}
	rel = (struct relcache_rel){
		.nspname = (char *)schema, .relname = (char *)table, .ncols = n, .cols = rcols
	};
	rc = typecheck_relation(c, router, &rel, errbuf, errlen);
	free(rcols);
	pgsql_columns_free(cols, n);
	return rc;
}
