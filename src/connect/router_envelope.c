/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The record's value: the payload after table.expand.json.payload, the additional placements
 * (headers, envelope fields, the partition) and the envelope with its cached schema names
 * (reference §2.6-§2.10). Private to the router.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"
#include "router_int.h"

/* Connect's Date or Time: an INT32 schema whose Java value is a java.util.Date, no Integer. */
static bool
java_date(const struct cvalue *v)
{
	return v->name &&
	       (strcmp(v->name, CVALUE_DATE_NAME) == 0 || strcmp(v->name, CVALUE_TIME_NAME) == 0);
}

/* Placements in list order: headers appended, envelope fields collected, partition set. */
int
router_envelope_placements(struct router *r, const struct router_view *vw, size_t *nenv)
{
	const struct relcache_rel *rel = vw->row.rel;

	for (size_t i = 0; i < r->npl; i++) {
		const struct placement *p = &r->pl[i];
		struct pgvalue *pv = &r->vals[SLOT_PLACEMENTS + i];
		int rc = router_column(r, vw, p->column, SLOT_PLACEMENTS + (int)i);

		if (rc > 0 && !r->missing_error) {
			continue;
		}
		if (rc > 0) {
			errbuf_set(
				vw->errbuf, vw->errlen,
				"table.fields.additional.placement column '%s' is "
				"missing from %s.%s; add it or set table.field.additional.missing="
				"ignore",
				p->column, rel->nspname, rel->relname);
			return -EINVAL;
		}
		if (rc < 0) {
			return -EINVAL;
		}
		if (p->where == PLACE_HEADER) {
			if (router_header_value(r, vw, p->alias, &pv->v) < 0) {
				return -EINVAL;
			}
		} else if (p->where == PLACE_ENVELOPE) {
			r->envfields[*nenv] = pv->v;
			r->envfields[(*nenv)++].field = p->alias;
		} else if (pv->v.type != CVALUE_INT32 || java_date(&pv->v)) {
			errbuf_set(vw->errbuf, vw->errlen,
				   "partition placement column '%s' must be an integer "
				   "(int4) column; Debezium fails with DataException (or "
				   "ClassCastException for a date or time under "
				   "time.precision.mode=connect)",
				   p->column);
			return -EINVAL;
		} else if (!pv->v.is_null && !r->server) {
			/* Debezium Server's sink leaves the partition to the producer */
			vw->out->partition = (int32_t)pv->v.u.i;
		}
	}
	return 0;
}

static struct envname *
envname_add(struct router *r, const struct router_view *vw, const char *key)
{
	const struct relcache_rel *rel = vw->row.rel;
	const struct cvalue *rv = &r->vals[SLOT_ROUTE].v;
	struct envname *e;

	r->envnames = xrealloc(r->envnames, (r->nenvnames + 1) * sizeof(*r->envnames));
	e = &r->envnames[r->nenvnames++];
	*e = (struct envname){ .key = xstrdup(key) };
	buf_reset(&r->tmp);
	buf_add_fmt(&r->tmp, "%s.%s.%s.%.*s.Value", r->topic_prefix, rel->nspname, rel->relname,
		    (int)rv->u.s.len, rv->u.s.p);
	e->name = buf_steal(&r->tmp);
	return e;
}

/*
 * Can @v stand under the cached payload schema @s (Struct.put()'s validation)? A null
 * needs an optional schema, a struct an equal schema (@same), anything else the same type.
 */
static bool
fits_cached(const struct cvalue *v, const struct cvalue *s, bool same)
{
	if (v->is_null) {
		return s->optional;
	}
	if (v->type == CVALUE_STRUCT || v->type == CVALUE_ARRAY || v->type == CVALUE_MAP) {
		return same;
	}
	return v->type == s->type && (v->type != CVALUE_BYTES || !v->name == !s->name);
}

/*
 * The envelope schema name, and the payload field as the envelope holds it. Unversioned,
 * the cache is keyed by payload schema and the first route value names it; versioned, the
 * first record of a version fixes name and payload schema (quirks §2.10).
 */
static int
envelope_schema(struct router *r, const struct router_view *vw, const struct cvalue *payload,
		int32_t version, const char **ret_name, struct cvalue *ret_payload)
{
	struct buf key = BUF_INIT, skey = BUF_INIT;
	struct envname *e = NULL;

	(void)convert_schema_json(payload, &skey); /* text came through UTF-8 checks */
	if (r->col_version) {
		buf_add_fmt(&key, "v%d", (int)version);
	} else {
		buf_add(&key, skey.data, skey.len);
	}
	for (size_t i = 0; i < r->nenvnames && !e; i++) {
		if (strcmp(r->envnames[i].key, buf_cstr(&key)) == 0) {
			e = &r->envnames[i];
		}
	}
	if (!e) {
		e = envname_add(r, vw, buf_cstr(&key));
		if (r->col_version) {
			e->payload_key = xstrdup(buf_cstr(&skey));
			e->payload = router_expand_schema_dup(payload);
		}
	}
	*ret_name = e->name;
	*ret_payload = *payload;
	if (e->payload && strcmp(e->payload_key, buf_cstr(&skey)) != 0) {
		if (!fits_cached(payload, e->payload, false)) {
			errbuf_set(
				vw->errbuf, vw->errlen,
				"the payload schema differs from the first one seen "
				"for schema version %d, which Debezium caches (DataException: Invalid "
				"Java object for schema); give each payload shape its own version",
				(int)version);
			buf_fini(&key);
			buf_fini(&skey);
			return -EINVAL;
		}
		*ret_payload = *e->payload;
		ret_payload->is_null = payload->is_null;
		ret_payload->u = payload->u;
	}
	buf_fini(&key);
	buf_fini(&skey);
	return 0;
}

static bool
java_blank(const struct cvalue *v)
{
	if (v->is_null) {
		return true;
	}
	if (v->type != CVALUE_STRING && !v->java_string) {
		return false; /* Struct.toString(), ByteBuffer.toString(), numbers: never blank */
	}
	for (size_t i = 0; i < v->u.s.len; i++) {
		if ((unsigned char)v->u.s.p[i] > ' ') {
			return false;
		}
	}
	return true;
}

/* The payload after table.expand.json.payload (§2.6), in r->payload. */
void
router_envelope_payload(struct router *r)
{
	const struct cvalue *v = &r->vals[SLOT_PAYLOAD].v;

	if (r->expand) {
		(void)router_expand_payload(r->exp, r->col_payload, r->null_bytes, r->adjust, v,
					    &v);
	}
	r->payload = *v;
	r->payload.field = NULL;
}

static int
build_envelope(struct router *r, const struct router_view *vw, size_t nenv, struct cvalue *env)
{
	const struct cvalue *ver = &r->vals[SLOT_VERSION].v;
	const struct relcache_rel *rel = vw->row.rel;
	char *errbuf = vw->errbuf;
	size_t errlen = vw->errlen;
	int32_t version = 0;

	if (r->payload.java_string) {
		errbuf_set(
			errbuf, errlen,
			"table.expand.json.payload: the payload could not be "
			"converted to the schema inferred from it, and the envelope refuses the "
			"string left behind (Debezium: DataException: Invalid Java object for schema "
			"... for field: \"payload\"); fix the payload JSON");
		return -EINVAL;
	}
	if (r->col_version) {
		int rc = router_column(r, vw, r->col_version, SLOT_VERSION);

		if (rc != 0 || ver->type != CVALUE_INT32) {
			if (rc >= 0) {
				errbuf_set(
					errbuf, errlen,
					"table.field.event.schema.version column "
					"'%s' must be an int4 column of %s.%s (Debezium fails with "
					"DataException)",
					r->col_version, rel->nspname, rel->relname);
			}
			return -EINVAL;
		}
		/* Struct.getInt32() of NULL unboxed: NullPointerException in Debezium */
		if (ver->is_null) {
			errbuf_set(
				errbuf, errlen,
				"table.field.event.schema.version column '%s' is "
				"NULL (Debezium fails with NullPointerException); make it NOT NULL",
				r->col_version);
			return -EINVAL;
		}
		version = (int32_t)ver->u.i;
	}
	memmove(r->envfields + 1, r->envfields, nenv * sizeof(*r->envfields));
	*env = (struct cvalue){ .type = CVALUE_STRUCT,
				.version = version,
				.u.fields = { r->envfields, nenv + 1 } };
	if (envelope_schema(r, vw, &r->payload, version, &env->name, &r->envfields[0]) < 0) {
		return -EINVAL;
	}
	r->envfields[0].field = "payload";
	return 0;
}

int
router_envelope_value(struct router *r, const struct router_view *vw, size_t nenv)
{
	struct record *out = vw->out;
	struct cvalue env;
	const struct cvalue *v = &r->payload;

	if (r->envelope) {
		if (build_envelope(r, vw, nenv, &env) < 0) {
			return -EINVAL;
		}
		v = &env;
	}
	/* the tombstone test comes after the envelope is built, as in Debezium */
	if (r->tombstone_on_empty && java_blank(&r->payload)) {
		out->value_null = true;
		return 0;
	}
	return convert_write(r->value_conv, v, &out->value, &out->value_null, vw->errbuf,
			     vw->errlen);
}
