/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JsonConverter.fromConnectData(): the schema as asJsonSchema() writes it, the value as
 * convertToJson() writes it, and the {"schema":...,"payload":...} envelope, in Jackson's
 * bytes (jsonw). Checked by running Kafka 4.3.0: Decimal is Base64 of the unscaled bytes, or
 * with decimal.format=NUMERIC BigDecimal.toString() ("1E-8", convert_text.c).
 */
#include "convert_int.h"

#include <errno.h>
#include <string.h>

#include "outboxd/util/errbuf.h"

static int json_value(const struct convert *c, const struct cvalue *v, struct buf *out,
		      char *errbuf, size_t errlen);

/* Static so that it inlines into the writers below (once per string of every record). */
static int
json_str(struct buf *out, const char *s, size_t len, char *errbuf, size_t errlen)
{
	if (jsonw_string(out, s, len) < 0) {
		errbuf_set(
			errbuf, errlen,
			"a string value is not valid UTF-8 (Kafka Connect "
			"cannot write it); check the database encoding and client_encoding=UTF8");
		return -EINVAL;
	}
	return 0;
}

int
convert_json_str(struct buf *out, const char *s, size_t len, char *errbuf, size_t errlen)
{
	return json_str(out, s, len, errbuf, errlen);
}

/* A NUL-terminated name as a JSON string; NULL (a value outside any struct) as "". */
static int
json_cstr(struct buf *out, const char *s, char *errbuf, size_t errlen)
{
	return json_str(out, s ? s : "", s ? strlen(s) : 0, errbuf, errlen);
}

/* JsonConverter.asJsonSchema(): type, fields, optional, name, version, doc, parameters, default. */
static int
json_schema(const struct convert *c, const struct cvalue *v, struct buf *out, char *errbuf,
	    size_t errlen)
{
	buf_add_fmt(out, "{\"type\":\"%s\"", convert_text_type_name(v->type));
	if (v->type == CVALUE_ARRAY) {
		buf_add_str(out, ",\"items\":");
		if (json_schema(c, v->u.array.items, out, errbuf, errlen) < 0) {
			return -EINVAL;
		}
	}
	if (v->type == CVALUE_MAP) {
		buf_add_str(out, ",\"keys\":");
		if (json_schema(c, v->u.map.keys, out, errbuf, errlen) < 0) {
			return -EINVAL;
		}
		buf_add_str(out, ",\"values\":");
		if (json_schema(c, v->u.map.values, out, errbuf, errlen) < 0) {
			return -EINVAL;
		}
	}
	if (v->type == CVALUE_STRUCT) {
		buf_add_str(out, ",\"fields\":[");
		for (size_t i = 0; i < v->u.fields.n; i++) {
			const struct cvalue *f = &v->u.fields.v[i];

			if (i) {
				buf_add_char(out, ',');
			}
			if (json_schema(c, f, out, errbuf, errlen) < 0) {
				return -EINVAL;
			}
			out->len--; /* reopen the field's schema object: "field" comes last */
			buf_add_str(out, ",\"field\":");
			if (json_cstr(out, f->field, errbuf, errlen) < 0) {
				return -EINVAL;
			}
			buf_add_char(out, '}');
		}
		buf_add_char(out, ']');
	}
	buf_add_fmt(out, ",\"optional\":%s", v->optional ? "true" : "false");
	if (v->name) {
		buf_add_str(out, ",\"name\":");
		if (json_cstr(out, v->name, errbuf, errlen) < 0) {
			return -EINVAL;
		}
	}
	if (v->version) {
		buf_add_fmt(out, ",\"version\":%d", (int)v->version);
	}
	if (v->doc) {
		buf_add_str(out, ",\"doc\":");
		if (json_cstr(out, v->doc, errbuf, errlen) < 0) {
			return -EINVAL;
		}
	}
	if (v->params) {
		buf_add_str(out, ",\"parameters\":{");
		for (size_t i = 0; i < v->nparams; i++) {
			if (i) {
				buf_add_char(out, ',');
			}
			if (json_cstr(out, v->params[i].key, errbuf, errlen) < 0 ||
			    (buf_add_char(out, ':'),
			     json_cstr(out, v->params[i].value, errbuf, errlen)) < 0) {
				return -EINVAL;
			}
		}
		buf_add_char(out, '}');
	}
	if (v->def) {
		buf_add_str(out, ",\"default\":");
		if (json_value(c, v->def, out, errbuf, errlen) < 0) {
			return -EINVAL;
		}
	}
	buf_add_char(out, '}');
	return 0;
}

/*
 * A map as JsonConverter writes it: an object when the keys are strings (hstore's, the only
 * maps outboxd makes), else an array of [key, value] pairs.
 */
static int
json_map(const struct convert *c, const struct cvalue *v, struct buf *out, char *errbuf,
	 size_t errlen)
{
	bool object = v->u.map.keys->type == CVALUE_STRING;

	buf_add_char(out, object ? '{' : '[');
	for (size_t i = 0; i < v->u.map.n; i++) {
		if (i) {
			buf_add_char(out, ',');
		}
		if (!object) {
			buf_add_char(out, '[');
		}
		if (json_value(c, &v->u.map.kv[2 * i], out, errbuf, errlen) < 0) {
			return -EINVAL;
		}
		buf_add_char(out, object ? ':' : ',');
		if (json_value(c, &v->u.map.kv[2 * i + 1], out, errbuf, errlen) < 0) {
			return -EINVAL;
		}
		if (!object) {
			buf_add_char(out, ']');
		}
	}
	buf_add_char(out, object ? '}' : ']');
	return 0;
}

/* JsonConverter.convertToJson() for a non-null value. */
int
convert_json_nonnull(const struct convert *c, const struct cvalue *v, struct buf *out, char *errbuf,
		     size_t errlen)
{
	switch (v->type) {
	case CVALUE_INT8:
	case CVALUE_INT16:
	case CVALUE_INT32:
	case CVALUE_INT64: jsonw_int(out, v->u.i); return 0;
	case CVALUE_FLOAT32: jsonw_float(out, (float)v->u.f, c->dfmt); return 0;
	case CVALUE_FLOAT64: jsonw_double(out, v->u.f, c->dfmt); return 0;
	case CVALUE_BOOLEAN: buf_add_str(out, v->u.b ? "true" : "false"); return 0;
	case CVALUE_STRING: return json_str(out, v->u.s.p, v->u.s.len, errbuf, errlen);
	case CVALUE_BYTES:
		if (c->decimal_numeric && convert_text_decimal(v, out)) {
			return 0;
		}
		buf_add_char(out, '"');
		jsonw_base64(out, v->u.s.p, v->u.s.len);
		buf_add_char(out, '"');
		return 0;
	case CVALUE_STRUCT:
		buf_add_char(out, '{');
		for (size_t i = 0; i < v->u.fields.n; i++) {
			const struct cvalue *f = &v->u.fields.v[i];

			if (i) {
				buf_add_char(out, ',');
			}
			if (json_cstr(out, f->field, errbuf, errlen) < 0) {
				return -EINVAL;
			}
			buf_add_char(out, ':');
			if (json_value(c, f, out, errbuf, errlen) < 0) {
				return -EINVAL;
			}
		}
		buf_add_char(out, '}');
		return 0;
	case CVALUE_ARRAY:
		buf_add_char(out, '[');
		for (size_t i = 0; i < v->u.array.n; i++) {
			if (i) {
				buf_add_char(out, ',');
			}
			if (json_value(c, &v->u.array.v[i], out, errbuf, errlen) < 0) {
				return -EINVAL;
			}
		}
		buf_add_char(out, ']');
		return 0;
	case CVALUE_MAP: return json_map(c, v, out, errbuf, errlen);
	case CVALUE_NONE: break;
	}
	buf_add_str(out, "null");
	return 0;
}

static int
json_value(const struct convert *c, const struct cvalue *v, struct buf *out, char *errbuf,
	   size_t errlen)
{
	if (!v->is_null) {
		return convert_json_nonnull(c, v, out, errbuf, errlen);
	}
	if (v->type == CVALUE_NONE) {
		buf_add_str(out, "null");
		return 0;
	}
	if (v->def && c->replace_null) {
		return convert_json_nonnull(c, v->def, out, errbuf, errlen);
	}
	if (v->optional) {
		buf_add_str(out, "null");
		return 0;
	}
	errbuf_set(
		errbuf, errlen,
		"JsonConverter: null value for %s%s%s that is required and has "
		"no default value (Kafka Connect fails with DataException 'Conversion error: null "
		"value for field that is required and has no default value')",
		v->field ? "field '" : "a value", v->field ? v->field : "", v->field ? "'" : "");
	return -EINVAL;
}

int
convert_json_write(const struct convert *c, const struct cvalue *v, struct buf *out, char *errbuf,
		   size_t errlen)
{
	if (!c->schemas_enable) {
		return json_value(c, v, out, errbuf, errlen);
	}
	buf_add_str(out, "{\"schema\":");
	if (v->type == CVALUE_NONE) {
		buf_add_str(out, "null");
	} else if (json_schema(c, v, out, errbuf, errlen) < 0) {
		return -EINVAL;
	}
	buf_add_str(out, ",\"payload\":");
	if (json_value(c, v, out, errbuf, errlen) < 0) {
		return -EINVAL;
	}
	buf_add_char(out, '}');
	return 0;
}

int
convert_schema_json(const struct cvalue *v, struct buf *out)
{
	static const struct convert dflt = { .kind = KIND_JSON,
					     .schemas_enable = true,
					     .replace_null = true };

	if (v->java_string) {
		return -EINVAL; /* the union holds the string, not the nested schema */
	}
	return json_schema(&dflt, v, out, NULL, 0);
}

/* JsonConverter given a String under a schema of another type (cvalue.java_string). */
int
convert_json_write_java_string(const struct convert *c, const struct cvalue *v, struct buf *out,
			       char *errbuf, size_t errlen)
{
	if (v->type != CVALUE_NONE) {
		errbuf_set(errbuf, errlen,
			   "JsonConverter: Invalid type for %s: class "
			   "java.lang.String (Kafka Connect fails with DataException: the "
			   "EventRouter kept the payload string after a failed "
			   "table.expand.json.payload)",
			   convert_text_type_name(v->type));
		return -EINVAL;
	}
	if (c->schemas_enable) {
		buf_add_str(out, "{\"schema\":null,\"payload\":");
	}
	if (json_str(out, v->u.s.p, v->u.s.len, errbuf, errlen) < 0) {
		return -EINVAL;
	}
	if (c->schemas_enable) {
		buf_add_char(out, '}');
	}
	return 0;
}
