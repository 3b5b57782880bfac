/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A row's columns as Connect values (pgvalue, with the column DEFAULTs Debezium's schemas carry),
 * and Connect values as record headers through the header converter. Private to the router.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"
#include "router_int.h"

/*
 * Append header @name = @v through the header converter. Kafka Connect sends a header whose
 * converted value is a Kafka null with a null value; Debezium Server drops it
 * (ConverterBuilder), but its default header format, JSON with schemas, gives a null column
 * bytes: {"schema":{...},"payload":null}, or null without schemas.
 */
int
router_header_value(struct router *r, const struct router_view *vw, const char *name,
		    const struct cvalue *v)
{
	struct record_header *h = record_add_header(vw->out, name);
	int rc = convert_write(r->header_conv, v, &h->value, &h->null, vw->errbuf, vw->errlen);

	if (rc == 0 && r->server && h->null) {
		vw->out->nheaders--; /* the last one, just added; its buffers stay for reuse */
	}
	return rc;
}

/*
 * The literal of a constant DEFAULT expression as pg_get_expr() prints it: 'text'::type
 * ('' unescaped), a number, (-1), true/false (as 't'/'f'). 0 with @out filled, -1 when
 * the expression is not a constant Debezium would read (functions, NULL::type).
 */
static int
default_literal(const char *e, struct buf *out)
{
	size_t n = strlen(e);

	if (e[0] == '\'') {
		const char *p = e + 1;

		for (; *p; p++) {
			if (*p == '\'' && p[1] == '\'') {
				buf_add_char(out, '\'');
				p++;
			} else if (*p == '\'') {
				break;
			} else {
				buf_add_char(out, *p);
			}
		}
		return *p == '\'' && (p[1] == '\0' || (p[1] == ':' && p[2] == ':')) ? 0 : -1;
	}
	if (strcmp(e, "true") == 0 || strcmp(e, "false") == 0) {
		buf_add_char(out, e[0]);
		return 0;
	}
	if (n > 2 && e[0] == '(' && e[n - 1] == ')') {
		e++;
		n -= 2;
	}
	if (n == 0 || strspn(e, "-+0123456789.eE") < n) {
		return -1;
	}
	buf_add(out, e, n);
	return 0;
}

/* The entry of @type_oid, made on first use. */
static struct router_type *
learnt(struct router *r, uint32_t type_oid)
{
	for (size_t i = 0; i < r->ntypes; i++) {
		if (r->types[i].oid == type_oid) {
			return &r->types[i];
		}
	}
	r->types = xrealloc(r->types, (r->ntypes + 1) * sizeof(*r->types));
	r->types[r->ntypes] = (struct router_type){ .oid = type_oid };
	return &r->types[r->ntypes++];
}

void
router_enum_labels(struct router *r, uint32_t type_oid, const char *labels)
{
	struct router_type *e = learnt(r, type_oid);

	e->kind = ROUTER_TYPE_ENUM;
	free(e->labels);
	e->labels = xstrdup(labels);
	e->allowed = (struct cvalue_param){ "allowed", e->labels };
}

int
router_named_type(struct router *r, uint32_t type_oid, const char *typname)
{
	struct router_type *e;

	if (strcmp(typname, "ltree") != 0 && strcmp(typname, "hstore") != 0) {
		return -EINVAL;
	}
	e = learnt(r, type_oid);
	e->kind = strcmp(typname, "ltree") == 0 ? ROUTER_TYPE_LTREE : ROUTER_TYPE_HSTORE;
	return 0;
}

void
router_array_type(struct router *r, uint32_t type_oid, uint32_t elem_oid)
{
	struct router_type *e = learnt(r, type_oid);

	e->kind = ROUTER_TYPE_ARRAY;
	e->base_oid = elem_oid;
}

/*
 * A value of an array of type @e: strings, with an enum element's Enum schema (required) when
 * the element is an enum the router knows.
 */
static int
array_type(const struct router *r, const struct router_type *e, const struct relcache_col *col,
	   struct slice t, struct pgvalue *pv)
{
	struct cvalue item = { .type = CVALUE_STRING, .optional = true };

	for (size_t i = 0; i < r->ntypes; i++) {
		if (r->types[i].oid == e->base_oid && r->types[i].kind == ROUTER_TYPE_ENUM) {
			item = (struct cvalue){ .type = CVALUE_STRING,
						.name = "io.debezium.data.Enum",
						.version = 1,
						.params = &r->types[i].allowed,
						.nparams = 1 };
		}
	}
	return pgvalue_text_array(col, t, &item, pv);
}

void
router_domain(struct router *r, uint32_t type_oid, uint32_t base_oid, int32_t base_typmod)
{
	struct router_type *e = learnt(r, type_oid);

	e->kind = ROUTER_TYPE_DOMAIN;
	e->base_oid = base_oid;
	e->base_typmod = base_typmod;
}

/* Column @col as its type converts: a domain's as its base (router_domain()). */
static struct relcache_col
as_base(const struct router *r, const struct relcache_col *col)
{
	struct relcache_col c = *col;

	for (size_t i = 0; i < r->ntypes; i++) {
		if (r->types[i].oid == col->type_oid && r->types[i].kind == ROUTER_TYPE_DOMAIN) {
			c.type_oid = r->types[i].base_oid;
			c.typmod = r->types[i].base_typmod;
		}
	}
	return c;
}

/*
 * A value of a type the catalog named: an enum's carries Debezium's Enum schema
 * (io.debezium.data.Enum with its labels as "allowed"), an ltree's io.debezium.data.Ltree, an
 * hstore's is its JSON object or a map (pgvalue_hstore_json(), pgvalue_hstore_map()), an
 * array of an enum or a string type an array of strings (array_type()); pgvalue below the
 * router knows the type's number only, which differs per database. @t is the value's text.
 * Return: as pgvalue_hstore_json(), 0 for the others.
 */
static int
named_type(const struct router *r, const struct relcache_col *col, struct slice t,
	   struct pgvalue *pv)
{
	for (size_t i = 0; i < r->ntypes; i++) {
		const struct router_type *e = &r->types[i];

		if (e->oid != col->type_oid || pv->v.type != CVALUE_STRING) {
			continue;
		}
		if (e->kind == ROUTER_TYPE_HSTORE) {
			return r->modes.hstore_map ? pgvalue_hstore_map(t, pv) :
						     pgvalue_hstore_json(t, pv);
		}
		if (e->kind == ROUTER_TYPE_ARRAY) {
			return array_type(r, e, col, t, pv);
		}
		pv->v.name = e->kind == ROUTER_TYPE_ENUM ? "io.debezium.data.Enum" :
							   "io.debezium.data.Ltree";
		pv->v.version = 1;
		if (e->kind == ROUTER_TYPE_ENUM) {
			pv->v.params = &e->allowed;
			pv->v.nparams = 1;
		}
		return 0;
	}
	return 0;
}

/*
 * The column's DEFAULT into defs[@slot] and @pv's schema; a non-constant one is ignored. A
 * NULL value then reads as the default, as Struct.get() reads it for the EventRouter (so
 * JsonConverter's replace.null.with.default has nothing left to replace in these records).
 */
static void
column_default(struct router *r, const struct router_view *vw, int i, bool notnull, int slot,
	       struct pgvalue *pv)
{
	const char *const *defaults = vw->row.defaults;
	struct pgoutput_col pc = { .kind = 't' };
	struct relcache_col col;

	if (!defaults || !defaults[i]) {
		return;
	}
	buf_reset(&r->deftxt[slot]);
	if (default_literal(defaults[i], &r->deftxt[slot]) < 0) {
		return;
	}
	pc.value = (struct slice){ buf_cstr(&r->deftxt[slot]), r->deftxt[slot].len };
	col = as_base(r, &vw->row.rel->cols[i]);
	if (pgvalue_convert(&col, &pc, notnull, r->modes, &r->defs[slot], NULL, 0) < 0) {
		return;
	}
	if (named_type(r, &col, pc.value, &r->defs[slot]) < 0) {
		return;
	}
	r->defs[slot].v.field = NULL;
	pv->v.def = &r->defs[slot].v;
	if (pv->v.is_null) {
		/* EventRouter reads columns with Struct.get(), which returns the default for null */
		pv->v.is_null = false;
		pv->v.u = r->defs[slot].v.u;
	}
}

/*
 * Convert column @name into slot @slot; 1 if absent, 0 done, -EINVAL poison. pgvalue_convert()
 * keeps its per-value arguments rather than the row's view: it converts one value, which is not
 * always the row's (column_default() hands it a DEFAULT's literal), pgvalue is below the router
 * and knows no row (the fuzzers and check_pgvalue call it on a bare value), and one column and
 * one NOT NULL fact are all of the row it reads.
 */
int
router_column(struct router *r, const struct router_view *vw, const char *name, int slot)
{
	const struct relcache_rel *rel = vw->row.rel;
	int i = router_find_col(rel, name);
	struct relcache_col col;
	bool nn;

	if (i < 0) {
		return 1;
	}
	nn = vw->row.notnull && vw->row.notnull[i];
	col = as_base(r, &rel->cols[i]);
	if (pgvalue_convert(&col, &vw->row.tup->cols[i], nn, r->modes, &r->vals[slot], vw->errbuf,
			    vw->errlen) < 0) {
		return -EINVAL;
	}
	if (named_type(r, &col, vw->row.tup->cols[i].value, &r->vals[slot]) < 0) {
		errbuf_set(vw->errbuf, vw->errlen,
			   "column '%s' (hstore or an array): value '%.*s' is not its type's "
			   "output, is not UTF-8, or is an hstore that fills a java.util.HashMap "
			   "bucket with 8 keys (whose order outboxd does not reproduce)",
			   rel->cols[i].name,
			   (int)(vw->row.tup->cols[i].value.len > 64 ?
					 64 :
					 vw->row.tup->cols[i].value.len),
			   vw->row.tup->cols[i].value.p ? vw->row.tup->cols[i].value.p : "");
		return -EINVAL;
	}
	column_default(r, vw, i, nn, slot, &r->vals[slot]);
	return 0;
}

/* The raw text of column @name, or NULL (absent or SQL NULL). */
const struct slice *
router_raw_column(const struct router_row *row, const char *name)
{
	const struct pgoutput_tuple *tup = row->tup;
	int i = tup ? router_find_col(row->rel, name) : -1;

	if (i < 0 || i >= tup->ncols || (tup->cols[i].kind != 't' && tup->cols[i].kind != 'b')) {
		return NULL;
	}
	return &tup->cols[i].value;
}
