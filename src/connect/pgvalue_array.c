/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Arrays, as Debezium's PostgresValueConverter converts them: a Connect ARRAY of the element
 * type's conversion (optional elements), from PostgreSQL's array text ("{a,"b c",NULL}"). A
 * numeric NaN or infinity makes the whole array null (special_numeric()), and so does a NULL
 * in a tsvector array (required_elements()); time and timetz elements lose what java.sql.Time
 * cannot hold (pgvalue_sqltime()). Multi-dimensional arrays are refused (element() says why).
 * Parsed by hand: libpq has no array parser.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "outboxd/connect/pgvalue.h"
#include "outboxd/pg/pgtype.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/utf8.h"
#include "pgvalue_int.h"

/* The arrays converted, by their type, to their element's (pg_type.typelem); 0 for others. */
uint32_t
pgvalue_array_elem(uint32_t array_oid)
{
	/* a switch, not a table: every column's conversion asks, on the relay's hot path */
	switch (array_oid) {
	case 1000: return PGTYPE_BOOL;
	case 1001: return PGTYPE_BYTEA;
	case 1005: return PGTYPE_INT2;
	case 1007: return PGTYPE_INT4;
	case 1009: return PGTYPE_TEXT;
	case 1014: return PGTYPE_BPCHAR;
	case 1015: return PGTYPE_VARCHAR;
	case 1016: return PGTYPE_INT8;
	case 1021: return PGTYPE_FLOAT4;
	case 1022: return PGTYPE_FLOAT8;
	case 1182: return PGTYPE_DATE;
	case 1115: return PGTYPE_TIMESTAMP;
	case 1185: return PGTYPE_TIMESTAMPTZ;
	case 1231: return PGTYPE_NUMERIC;
	case 2951: return PGTYPE_UUID;
	case 199: return PGTYPE_JSON;
	case 3807: return PGTYPE_JSONB;
	case 1183: return PGTYPE_TIME;
	case 1270: return PGTYPE_TIMETZ;
	case 1041: return PGTYPE_INET;
	case 651: return PGTYPE_CIDR;
	case 1040: return PGTYPE_MACADDR;
	case 775: return PGTYPE_MACADDR8;
	case 1002: return PGTYPE_CHAR;
	case 1028: return PGTYPE_OID;
	case 3643: return PGTYPE_TSVECTOR;
	case 3905: return PGTYPE_INT4RANGE;
	case 3907: return PGTYPE_NUMRANGE;
	case 3909: return PGTYPE_TSRANGE;
	case 3911: return PGTYPE_TSTZRANGE;
	case 3913: return PGTYPE_DATERANGE;
	case 3927: return PGTYPE_INT8RANGE;
	default: return 0;
	}
}

/* A bounded cursor over the array text. */
struct acur {
	const char *p, *end;
};

/* A "..." element into @out, backslash escapes undone; false if unterminated. */
static bool
quoted(struct acur *c, struct buf *out)
{
	for (c->p++; c->p < c->end; c->p++) {
		if (*c->p == '"') {
			c->p++;
			return true;
		}
		if (*c->p == '\\' && ++c->p == c->end) {
			return false;
		}
		buf_add_char(out, *c->p);
	}
	return false;
}

/* Element slot @i of @pv, made on first use; its cvalue reset to an optional null. */
static struct pgvalue *
slot(struct pgvalue *pv, size_t i)
{
	if (i == pv->elemcap) {
		size_t cap = pv->elemcap ? pv->elemcap * 2 : 8;

		pv->elems = xrealloc(pv->elems, cap * sizeof(*pv->elems));
		pv->evals = xrealloc(pv->evals, cap * sizeof(*pv->evals));
		memset(pv->elems + pv->elemcap, 0, (cap - pv->elemcap) * sizeof(*pv->elems));
		pv->elemcap = cap;
	}
	buf_reset(&pv->elems[i].data);
	buf_reset(&pv->elems[i].raw);
	pv->elems[i].v = (struct cvalue){ .optional = true, .is_null = true };
	return &pv->elems[i];
}

/*
 * pgjdbc reads a numeric array's elements as BigDecimal, which has no NaN or infinity: the
 * array fails and Debezium writes a null, whatever decimal.handling.mode says.
 */
static bool
special_numeric(uint32_t elem, struct slice t)
{
	return elem == PGTYPE_NUMERIC && (slice_eq_str(t, "NaN") || slice_eq_str(t, "Infinity") ||
					  slice_eq_str(t, "-Infinity"));
}

/*
 * Debezium gives a tsvector array's elements a required schema (optional false): a NULL
 * element fails the array, which Debezium then writes as a null (the compat suite's
 * ob_arrays2).
 */
static bool
required_elements(uint32_t elem)
{
	return elem == PGTYPE_TSVECTOR;
}

/*
 * An element's conversion: time and timetz elements come to Debezium as java.sql.Time
 * (pgvalue_sqltime()), every other as the scalar column would.
 */
static int
convert_element(const struct relcache_col *ecol, struct slice t, struct pgvalue_modes modes,
		pgvalue_elem_fn convert, struct pgvalue *e)
{
	if (ecol->type_oid == PGTYPE_TIME || ecol->type_oid == PGTYPE_TIMETZ) {
		return pgvalue_sqltime(ecol, t, modes.time, e);
	}
	return convert(ecol, t, modes, e);
}

/* One element at the cursor into @e; 1 the array is to be null, 0 done, <0 refused. */
static int
element(struct acur *c, const struct relcache_col *ecol, struct pgvalue_modes modes,
	pgvalue_elem_fn convert, struct pgvalue *e)
{
	struct slice t;
	const char *s = c->p;

	if (*c->p == '{') {
		/*
		 * A row of a multi-dimensional array: Debezium writes a null for some element
		 * types and Java's identity of the row (e.g. "[Ljava.lang.String;@310af372") for
		 * others, which nobody can reproduce: refused.
		 */
		return -EINVAL;
	}
	if (*c->p == '"') {
		if (!quoted(c, &e->raw)) {
			return -EINVAL;
		}
	} else {
		while (c->p < c->end && *c->p != ',' && *c->p != '}') {
			c->p++;
		}
		if (c->p == s) {
			return -EINVAL;
		}
		if (c->p - s == 4 && strncasecmp(s, "NULL", 4) == 0) {
			return required_elements(ecol->type_oid) ?
				       1 :
				       convert_element(ecol, SLICE_NULL, modes, convert, e);
		}
		buf_add(&e->raw, s, (size_t)(c->p - s));
	}
	t = (struct slice){ e->raw.data, e->raw.len };
	if (special_numeric(ecol->type_oid, t)) {
		return 1;
	}
	e->v.is_null = false;
	return convert_element(ecol, t, modes, convert, e);
}

int
pgvalue_array(const struct relcache_col *col, uint32_t elem, struct slice t,
	      struct pgvalue_modes modes, pgvalue_elem_fn convert, struct pgvalue *pv)
{
	const struct relcache_col ecol = { .name = col->name,
					   .type_oid = elem,
					   .typmod = col->typmod };
	struct acur c = { t.p, t.p + t.len };
	size_t n = 0;
	int rc;

	if (!pv->item) {
		pv->item = xcalloc(1, sizeof(*pv->item));
	}
	buf_reset(&pv->item->data);
	pv->item->v = (struct cvalue){ .optional = true, .is_null = true };
	if ((rc = convert_element(&ecol, SLICE_NULL, modes, convert, pv->item)) < 0) {
		return rc;
	}
	pv->item->v.optional = !required_elements(elem);
	pv->v.type = CVALUE_ARRAY;
	pv->v.u.array.items = &pv->item->v;
	pv->v.u.array.v = NULL;
	pv->v.u.array.n = 0;
	if (pv->v.is_null) {
		return 0;
	}
	if (c.p == c.end || *c.p++ != '{') {
		return -EINVAL; /* a dimension decoration ("[0:1]={...}") too */
	}
	if (c.p < c.end && *c.p == '}') {
		c.p++;
	} else {
		for (;;) {
			struct pgvalue *e = slot(pv, n);

			if (c.p == c.end) {
				return -EINVAL;
			}
			rc = element(&c, &ecol, modes, convert, e);
			if (rc == 1) {
				pv->v.is_null = true;
				return 0;
			}
			if (rc < 0) {
				return rc;
			}
			n++;
			if (c.p < c.end && *c.p == ',') {
				c.p++;
				continue;
			}
			if (c.p < c.end && *c.p == '}') {
				c.p++;
				break;
			}
			return -EINVAL;
		}
	}
	if (c.p != c.end) {
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		pv->evals[i] = pv->elems[i].v;
	}
	pv->v.u.array.v = pv->evals;
	pv->v.u.array.n = n;
	return 0;
}

/* An element of pgvalue_text_array(): a plain string. */
static int
text_elem(const struct relcache_col *col, struct slice t, struct pgvalue_modes modes,
	  struct pgvalue *pv)
{
	(void)col;
	(void)modes;
	pv->v.type = CVALUE_STRING;
	if (!pv->v.is_null) {
		if (!utf8_valid(t.p, t.len)) {
			return -EILSEQ;
		}
		pv->v.u.s = t;
	}
	return 0;
}

int
pgvalue_text_array(const struct relcache_col *col, struct slice t, const struct cvalue *item,
		   struct pgvalue *pv)
{
	int rc = pgvalue_array(col, PGTYPE_TEXT, t, (struct pgvalue_modes){ 0 }, text_elem, pv);

	if (rc < 0) {
		return rc;
	}
	/* the item schema, on the array and on each element; a NULL where none may be nulls it */
	pv->item->v.name = item->name;
	pv->item->v.version = item->version;
	pv->item->v.params = item->params;
	pv->item->v.nparams = item->nparams;
	pv->item->v.optional = item->optional;
	for (size_t i = 0; i < pv->v.u.array.n; i++) {
		struct cvalue *e = &pv->evals[i];

		if (e->is_null && !item->optional) {
			pv->v.is_null = true;
			pv->v.u.array.n = 0;
			return 0;
		}
		e->name = item->name;
		e->version = item->version;
		e->params = item->params;
		e->nparams = item->nparams;
		e->optional = item->optional;
	}
	return 0;
}

void
pgvalue_array_fini(struct pgvalue *pv)
{
	for (size_t i = 0; i < pv->elemcap; i++) {
		buf_fini(&pv->elems[i].data);
		buf_fini(&pv->elems[i].raw);
	}
	free(pv->elems);
	free(pv->evals);
	if (pv->item) {
		buf_fini(&pv->item->data);
		buf_fini(&pv->item->raw);
		free(pv->item);
	}
}
