/* SPDX-License-Identifier: Apache-2.0 */
#include "router_int.h"

#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/jsonr.h"
#include "outboxd/util/mem.h"

/*
 * table.expand.json.payload: Debezium 3.6.1's JsonSchemaData over a Jackson tree (reference
 * §2.6), checked against the 3.6.1 jar: schema inference (toConnectSchema) and value
 * conversion (toConnectData) over the tree jsonr reads as Jackson's readTree() would.
 *
 * Known difference, on input PostgreSQL's jsonb never produces: element schemas of an array
 * of objects are merged in order of first appearance, where Debezium iterates a HashSet whose
 * order depends on identity hash codes (it varies between JVM runs). The reader's own are in
 * jsonr.h.
 */

/* An inferred Connect schema. */
struct jschema {
	enum cvalue_type type;
	bool optional;
	const char *name;
	struct jschema *items;
	struct jfield *fields;
	size_t nfields;
	struct cvalue *cv; /* the schema as a null cvalue, built on first use */
};

struct jfield {
	const char *name;
	struct jschema *schema;
};

struct router_expand {
	struct jsonr *rd; /* the tree and everything else of the current payload */
	bool null_bytes;
	enum name_adjust adjust;
	struct buf tmp;
};

/* Outcomes of schema inference and value conversion. */
enum {
	NO_SCHEMA = 1, /* Java null schema: the field is left out */
};

struct router_expand *
router_expand_new(void)
{
	struct router_expand *x = znew(struct router_expand);

	x->rd = jsonr_new();
	return x;
}

void
router_expand_free(struct router_expand *x)
{
	if (!x) {
		return;
	}
	jsonr_free(x->rd);
	buf_fini(&x->tmp);
	free(x);
}

static void *
arena_alloc(struct router_expand *x, size_t size)
{
	return jsonr_alloc(x->rd, size);
}

static char *
arena_strndup(struct router_expand *x, const char *s, size_t n)
{
	return jsonr_strndup(x->rd, s, n);
}

/* --- schema inference (JsonSchemaData.toConnectSchema) ------------------------------------ */

static struct jschema *
jschema_new(struct router_expand *x, enum cvalue_type type, const char *name)
{
	struct jschema *s = arena_alloc(x, sizeof(*s));

	s->type = type;
	s->optional = true;
	s->name = name;
	return s;
}

/* Connect's Schema.equals() for inferred schemas. */
static bool
jschema_eq(const struct jschema *a, const struct jschema *b)
{
	if (a == b) {
		return true;
	}
	if (!a || !b || a->type != b->type || a->optional != b->optional ||
	    (!a->name != !b->name) || (a->name && strcmp(a->name, b->name) != 0) ||
	    !jschema_eq(a->items, b->items) || a->nfields != b->nfields) {
		return false;
	}
	for (size_t i = 0; i < a->nfields; i++) {
		if (strcmp(a->fields[i].name, b->fields[i].name) != 0 ||
		    !jschema_eq(a->fields[i].schema, b->fields[i].schema)) {
			return false;
		}
	}
	return true;
}

static void
add_field(struct router_expand *x, struct jschema *s, const char *name, struct jschema *fs)
{
	struct jfield *f = arena_alloc(x, (s->nfields + 1) * sizeof(*f));

	if (s->nfields) {
		memcpy(f, s->fields, s->nfields * sizeof(*f));
	}
	f[s->nfields++] = (struct jfield){ name, fs };
	s->fields = f;
}

static struct jfield *
find_field(const struct jschema *s, const char *name)
{
	for (size_t i = 0; i < s->nfields; i++) {
		if (strcmp(s->fields[i].name, name) == 0) {
			return &s->fields[i];
		}
	}
	return NULL;
}

/* SchemaNameAdjuster: avro keeps [A-Za-z0-9_] (no digit first); per UTF-16 unit. */
static const char *
adjust_name(struct router_expand *x, const char *in)
{
	const unsigned char *p = (const unsigned char *)in;
	struct buf b = BUF_INIT;
	bool first = true;

	if (x->adjust == ADJUST_NONE) {
		return in;
	}
	while (*p) {
		unsigned cp, units[2];
		int nu = 1, len = *p < 0x80 ? 1 : *p < 0xE0 ? 2 : *p < 0xF0 ? 3 : 4;

		cp = len == 1 ? *p : len == 2 ? *p & 0x1F : len == 3 ? *p & 0x0F : *p & 0x07;
		for (int k = 1; k < len && p[k]; k++) {
			cp = cp << 6 | (p[k] & 0x3F);
		}
		p += len;
		units[0] = cp;
		if (cp > 0xFFFF) {
			units[0] = 0xD800 + ((cp - 0x10000) >> 10);
			units[1] = 0xDC00 + ((cp - 0x10000) & 0x3FF);
			nu = 2;
		}
		for (int k = 0; k < nu; k++, first = false) {
			unsigned u = units[k];
			bool alpha = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z');
			bool digit = u >= '0' && u <= '9';

			if (x->adjust == ADJUST_AVRO && (alpha || u == '_' || (digit && !first))) {
				buf_add_char(&b, (char)u);
			} else if (x->adjust == ADJUST_AVRO && digit) {
				buf_add_char(&b, '_');
				buf_add_char(&b, (char)u);
			} else if (x->adjust == ADJUST_AVRO) {
				buf_add_char(&b, '_');
			} else if (alpha || (digit && !first)) {
				buf_add_char(&b, (char)u);
			} else {
				buf_add_fmt(&b, "_u%04x", u);
			}
		}
	}
	in = arena_strndup(x, buf_cstr(&b), b.len);
	buf_fini(&b);
	return in;
}

static int infer(struct router_expand *x, const char *key, const struct jsonr_node *n,
		 struct jschema **ret);

/* Number nodes of one kind give one schema: int32, int64, or float64 (BigInteger too). */
static enum cvalue_type
number_type(const struct jsonr_node *n)
{
	return n->type == JSONR_INT  ? CVALUE_INT32 :
	       n->type == JSONR_LONG ? CVALUE_INT64 :
				       CVALUE_FLOAT64;
}

static bool
is_number(const struct jsonr_node *n)
{
	return n->type == JSONR_INT || n->type == JSONR_LONG || n->type == JSONR_BIG ||
	       n->type == JSONR_DOUBLE;
}

/* getFirstArrayElement(): the first non-null element; the others must be of its kind. */
static int
first_element(const struct jsonr_node *arr, const struct jsonr_node **ret)
{
	const struct jsonr_node *ref = NULL;

	for (size_t i = 0; i < arr->n; i++) {
		const struct jsonr_node *e = &arr->kids[i];

		if (e->type == JSONR_NULL) {
			continue;
		}
		if (!ref) {
			ref = e;
		}
		if (is_number(ref) != is_number(e) || (!is_number(e) && e->type != ref->type) ||
		    (is_number(e) && number_type(e) != number_type(ref))) {
			return -1; /* "Field is not a homogenous array" */
		}
	}
	*ret = ref;
	return 0;
}

/* mergeSchema(): a new, required struct: left's fields, then right's new ones. */
static struct jschema *
merge(struct router_expand *x, struct jschema *left, struct jschema *right)
{
	struct jschema *m;

	if (!left) {
		return right;
	}
	m = jschema_new(x, CVALUE_STRUCT, left->name);
	m->optional = false; /* SchemaUtil.copySchemaBasics() does not copy optional */
	for (size_t i = 0; i < left->nfields; i++) {
		add_field(x, m, left->fields[i].name, left->fields[i].schema);
	}
	for (size_t i = 0; i < right->nfields; i++) {
		struct jfield *old = find_field(m, right->fields[i].name);

		if (!old) {
			add_field(x, m, right->fields[i].name, right->fields[i].schema);
		} else if (!jschema_eq(old->schema, right->fields[i].schema) &&
			   old->schema->type == CVALUE_BYTES &&
			   right->fields[i].schema->type != CVALUE_BYTES) {
			old->schema = right->fields[i].schema;
		}
	}
	return m;
}

/* toConnectSchemaWithCycles(): the element schema of a non-empty array. */
static int
element_schema(struct router_expand *x, const char *key, const struct jsonr_node *arr,
	       struct jschema **ret)
{
	const struct jsonr_node *sample = NULL;
	struct jschema **distinct, *m = NULL;
	size_t nd = 0;
	int rc;

	if (first_element(arr, &sample) < 0) {
		return -1;
	}
	if (!sample || sample->type != JSONR_OBJECT) {
		static const struct jsonr_node null_node = { .type = JSONR_NULL };

		rc = infer(x, NULL, sample ? sample : &null_node, ret);
		return rc == 0 ? 0 : -1; /* no schema: "unrecognized member schema" */
	}
	distinct = arena_alloc(x, arr->n * sizeof(*distinct));
	for (size_t i = 0; i < arr->n; i++) {
		struct jschema *s;
		size_t k;

		if (arr->kids[i].type != JSONR_OBJECT) {
			continue;
		}
		if (infer(x, key, &arr->kids[i], &s) != 0) {
			return -1;
		}
		for (k = 0; k < nd && !jschema_eq(distinct[k], s); k++) {
		}
		if (k == nd) {
			distinct[nd++] = s;
		}
	}
	for (size_t k = 0; k < nd; k++) {
		m = merge(x, m, distinct[k]);
	}
	*ret = m;
	return 0;
}

static int
infer_object(struct router_expand *x, const char *key, const struct jsonr_node *n,
	     struct jschema **ret)
{
	struct jschema *s = jschema_new(x, CVALUE_STRUCT, key);

	for (size_t i = 0; i < n->n; i++) {
		const char *fname = adjust_name(x, n->kids[i].key);
		struct jschema *fs;
		char *fkey;
		bool blank = true;
		int rc;

		if (!*fname) {
			return -1; /* SchemaBuilder.field() refuses an empty name */
		}
		for (const char *k = key; k && *k; k++) {
			blank = blank && (*k == ' ' || *k == '\t' || *k == '\n' || *k == '\r');
		}
		buf_reset(&x->tmp);
		buf_add_fmt(&x->tmp, "%s%s%s", blank ? "" : key, blank ? "" : ".", fname);
		fkey = arena_strndup(x, x->tmp.data, x->tmp.len);
		rc = infer(x, fkey, &n->kids[i], &fs);
		if (rc < 0) {
			return -1;
		}
		if (rc == 0 && !find_field(s, fname)) {
			add_field(x, s, fname, fs);
		}
	}
	*ret = s;
	return 0;
}

/* 0 with *ret, NO_SCHEMA (Java null), or -1 (an exception: expansion abandoned). */
static int
infer(struct router_expand *x, const char *key, const struct jsonr_node *n, struct jschema **ret)
{
	struct jschema *items;

	switch (n->type) {
	case JSONR_STRING: *ret = jschema_new(x, CVALUE_STRING, NULL); return 0;
	case JSONR_BOOL: *ret = jschema_new(x, CVALUE_BOOLEAN, NULL); return 0;
	case JSONR_INT:
	case JSONR_LONG:
	case JSONR_BIG:
	case JSONR_DOUBLE: *ret = jschema_new(x, number_type(n), NULL); return 0;
	case JSONR_ARRAY:
		if (n->n == 0) {
			return NO_SCHEMA;
		}
		if (element_schema(x, key, n, &items) < 0) {
			return -1;
		}
		*ret = jschema_new(x, CVALUE_ARRAY, NULL);
		(*ret)->items = items;
		return 0;
	case JSONR_OBJECT: return infer_object(x, key, n, ret);
	case JSONR_NULL:
		if (x->null_bytes) {
			*ret = jschema_new(x, CVALUE_BYTES, NULL);
			return 0;
		}
		return NO_SCHEMA;
	}
	return -1;
}

/* --- values (JsonSchemaData.toConnectData, validated as Struct.put() validates) ------------ */

static void fill_schema(struct router_expand *x, const struct jschema *s, struct cvalue *v);

/* The schema as a null cvalue (for a field that is absent, and for array items). */
static struct cvalue *
schema_cv(struct router_expand *x, struct jschema *s)
{
	if (!s->cv) {
		s->cv = arena_alloc(x, sizeof(*s->cv));
		fill_schema(x, s, s->cv);
		s->cv->is_null = true;
	}
	return s->cv;
}

static void
fill_schema(struct router_expand *x, const struct jschema *s, struct cvalue *v)
{
	*v = (struct cvalue){ .type = s->type, .optional = s->optional, .name = s->name };
	if (s->type == CVALUE_ARRAY) {
		v->u.array.items = schema_cv(x, s->items);
	} else if (s->type == CVALUE_STRUCT) {
		struct cvalue *f = arena_alloc(x, s->nfields * sizeof(*f));

		for (size_t i = 0; i < s->nfields; i++) {
			f[i] = *schema_cv(x, s->fields[i].schema);
			f[i].field = s->fields[i].name;
		}
		v->u.fields.v = f;
		v->u.fields.n = s->nfields;
	}
}

static const struct jsonr_node *
member(const struct jsonr_node *obj, const char *name)
{
	for (size_t i = 0; i < obj->n; i++) {
		if (strcmp(obj->kids[i].key, name) == 0) {
			return &obj->kids[i];
		}
	}
	return NULL;
}

/* getStructFieldValue() for @n under @s; -1 where Connect's validation throws. */
static int
to_value(struct router_expand *x, const struct jsonr_node *n, const struct jschema *s,
	 struct cvalue *v)
{
	fill_schema(x, s, v);
	switch (n->type) {
	case JSONR_NULL: v->is_null = true; return s->optional ? 0 : -1;
	case JSONR_STRING: v->u.s = n->s; return s->type == CVALUE_STRING ? 0 : -1;
	case JSONR_BOOL: v->u.b = n->b; return s->type == CVALUE_BOOLEAN ? 0 : -1;
	case JSONR_INT:
	case JSONR_LONG: v->u.i = n->i; return s->type == number_type(n) ? 0 : -1;
	case JSONR_DOUBLE: v->u.f = n->d; return s->type == CVALUE_FLOAT64 ? 0 : -1;
	case JSONR_BIG: return -1; /* a BigDecimal is no FLOAT64 value */
	case JSONR_ARRAY: {
		struct cvalue *e;

		if (s->type != CVALUE_ARRAY) {
			return -1;
		}
		e = arena_alloc(x, n->n * sizeof(*e));
		for (size_t i = 0; i < n->n; i++) {
			if (to_value(x, &n->kids[i], s->items, &e[i]) < 0) {
				return -1;
			}
		}
		v->u.array.v = e;
		v->u.array.n = n->n;
		return 0;
	}
	case JSONR_OBJECT: {
		struct cvalue *f;

		if (s->type != CVALUE_STRUCT) {
			return -1;
		}
		f = (struct cvalue *)v->u.fields.v;
		for (size_t i = 0; i < s->nfields; i++) {
			const struct jsonr_node *m = member(n, s->fields[i].name);

			if (m && to_value(x, m, s->fields[i].schema, &f[i]) < 0) {
				return -1;
			}
			f[i].field = s->fields[i].name;
		}
		return 0;
	}
	}
	return -1;
}

enum router_expand_result
router_expand_payload(struct router_expand *x, const char *field, bool null_bytes,
		      enum name_adjust adjust, const struct cvalue *payload,
		      const struct cvalue **ret)
{
	const struct jsonr_node *root;
	struct jschema *s = NULL;
	struct cvalue *v;
	int rc;

	jsonr_reset(x->rd);
	*ret = payload;
	if (payload->is_null || payload->type != CVALUE_STRING || payload->java_string) {
		/* null: untouched; bytea: Debezium warns that it is not a string */
		return payload->is_null ? ROUTER_EXPAND_DONE : ROUTER_EXPAND_KEPT;
	}
	if (!payload->u.s.len || (payload->u.s.p[0] != '{' && payload->u.s.p[0] != '[')) {
		return ROUTER_EXPAND_KEPT;
	}
	x->null_bytes = null_bytes;
	x->adjust = adjust;
	if (jsonr_parse(x->rd, payload->u.s.p, payload->u.s.len, &root) < 0) {
		return ROUTER_EXPAND_KEPT;
	}
	rc = infer(x, field, root, &s);
	if (rc < 0) {
		return ROUTER_EXPAND_KEPT;
	}
	v = arena_alloc(x, sizeof(*v));
	if (rc == NO_SCHEMA || s->type != CVALUE_STRUCT || to_value(x, root, s, v) < 0) {
		/*
		 * 3.6.1 keeps the new schema and the old String value (hazard (a)). The string
		 * takes the value's union, where a struct's fields or an array's items would be,
		 * so only the schema's top level stays: all anything downstream reads of it
		 * (JsonConverter and the envelope refuse the value, StringConverter writes it).
		 */
		*v = rc == NO_SCHEMA ? (struct cvalue){ .type = CVALUE_NONE } :
				       (struct cvalue){ .type = s->type,
							.optional = s->optional,
							.name = s->name };
		v->java_string = true;
		v->u.s = payload->u.s;
		*ret = v;
		return ROUTER_EXPAND_HALF;
	}
	*ret = v;
	return ROUTER_EXPAND_DONE;
}

/* --- deep copies of schemas (the versioned envelope cache) -------------------------------- */

static void
dup_into(const struct cvalue *v, struct cvalue *d)
{
	*d = (struct cvalue){ .type = v->type,
			      .optional = v->optional,
			      .is_null = true,
			      .version = v->version,
			      .nparams = v->nparams };
	d->name = v->name ? xstrdup(v->name) : NULL;
	d->doc = v->doc ? xstrdup(v->doc) : NULL;
	d->field = v->field ? xstrdup(v->field) : NULL;
	if (v->params) {
		struct cvalue_param *p = xcalloc(v->nparams, sizeof(*p));

		for (size_t i = 0; i < v->nparams; i++) {
			p[i].key = xstrdup(v->params[i].key);
			p[i].value = xstrdup(v->params[i].value);
		}
		d->params = p;
	}
	if (v->java_string) {
		return; /* the union holds a string: there is no nested schema to copy */
	}
	if (v->type == CVALUE_ARRAY) {
		d->u.array.items = router_expand_schema_dup(v->u.array.items);
	} else if (v->type == CVALUE_STRUCT) {
		struct cvalue *f = xcalloc(v->u.fields.n ? v->u.fields.n : 1, sizeof(*f));

		for (size_t i = 0; i < v->u.fields.n; i++) {
			dup_into(&v->u.fields.v[i], &f[i]);
		}
		d->u.fields.v = f;
		d->u.fields.n = v->u.fields.n;
	}
}

struct cvalue *
router_expand_schema_dup(const struct cvalue *v)
{
	struct cvalue *d = xmalloc(sizeof(*d));

	dup_into(v, d);
	return d;
}

static void
free_inner(struct cvalue *v)
{
	free((char *)v->name);
	free((char *)v->doc);
	free((char *)v->field);
	for (size_t i = 0; v->params && i < v->nparams; i++) {
		free((char *)v->params[i].key);
		free((char *)v->params[i].value);
	}
	free((struct cvalue_param *)v->params);
	if (v->type == CVALUE_ARRAY) {
		router_expand_schema_free((struct cvalue *)v->u.array.items);
	} else if (v->type == CVALUE_STRUCT) {
		for (size_t i = 0; i < v->u.fields.n; i++) {
			free_inner((struct cvalue *)&v->u.fields.v[i]);
		}
		free((struct cvalue *)v->u.fields.v);
	}
}

void
router_expand_schema_free(struct cvalue *v)
{
	if (v) {
		free_inner(v);
		free(v);
	}
}
