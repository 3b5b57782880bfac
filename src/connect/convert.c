/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/connect/convert.h"

#include <errno.h>
#include <string.h>

#include "outboxd/connect/configdef.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/utf8.h"

/*
 * Facts below were checked by running Kafka 4.3.0's own converters: JsonConverter writes
 * Decimal as Base64 of the unscaled bytes or (NUMERIC) as BigDecimal.toString() ("1E-8");
 * a header struct under SimpleHeaderConverter is {"a":"q\"\\","b":"AQID","c":null};
 * Struct.toString() omits null fields and prints ByteBuffer as HeapByteBuffer[...].
 */

enum convert_kind {
	KIND_JSON,
	KIND_STRING,
	KIND_BYTEARRAY,
	KIND_SIMPLEHEADER,
	KIND_BINARY,
};

#define DELEGATE "delegate.converter.type"

struct convert {
	enum convert_kind kind;
	enum convert_role role;
	const char *class_name;	/* static */
	bool schemas_enable;	/* JsonConverter: schemas.enable */
	bool decimal_numeric;	/* JsonConverter: decimal.format=NUMERIC */
	bool replace_null;	/* JsonConverter: replace.null.with.default */
	enum jsonw_double_format dfmt;
	struct convert *delegate; /* BinaryDataConverter: delegate.converter.type or NULL */
};

/* Every converter takes converter.type (ConverterConfig); these are each class's own options. */
static const char *const json_options[] = {
	"schemas.enable", "schemas.cache.size", "decimal.format", "replace.null.with.default", NULL,
};
static const char *const string_options[] = { "converter.encoding", NULL };
/* "delegate.converter.type.*": the delegate's own options (Configuration.subset) */
static const char *const binary_options[] = { DELEGATE, DELEGATE ".*", NULL };
static const char *const no_options[] = { NULL };

#define ROLE(r) (1u << (r))
#define DATA_ROLES (ROLE(CONVERT_KEY) | ROLE(CONVERT_VALUE))

/*
 * The registry: every converter class outboxd writes the bytes of, the roles convert_new()
 * takes it in, and its options. In the order messages list them.
 */
static const struct convert_class {
	const char *name;
	enum convert_kind kind;
	unsigned roles;
	const char *const *options;
} classes[] = {
	{ CONVERT_CLASS_SIMPLE_HEADER, KIND_SIMPLEHEADER, ROLE(CONVERT_HEADER), no_options },
	{ CONVERT_CLASS_JSON, KIND_JSON, DATA_ROLES | ROLE(CONVERT_HEADER), json_options },
	{ CONVERT_CLASS_STRING, KIND_STRING, DATA_ROLES, string_options },
	{ CONVERT_CLASS_BYTEARRAY, KIND_BYTEARRAY, DATA_ROLES, no_options },
	{ CONVERT_CLASS_BINARY, KIND_BINARY, DATA_ROLES | ROLE(CONVERT_HEADER), binary_options },
};

static const struct convert_class *
find_class(const char *name)
{
	for (size_t i = 0; name && i < sizeof(classes) / sizeof(classes[0]); i++) {
		if (strcmp(name, classes[i].name) == 0) {
			return &classes[i];
		}
	}
	return NULL;
}

const char *
convert_role_name(enum convert_role role)
{
	return role == CONVERT_KEY ? "key" : role == CONVERT_VALUE ? "value" : "header";
}

bool
convert_class_supports(const char *class_name, enum convert_role role)
{
	const struct convert_class *cls = find_class(class_name);

	return cls && (cls->roles & ROLE(role));
}

bool
convert_class_has_option(const char *class_name, const char *option)
{
	const struct convert_class *cls = find_class(class_name);

	if (!cls) {
		return false;
	}
	if (strcmp(option, "converter.type") == 0) {
		return true;
	}
	for (const char *const *o = cls->options; *o; o++) {
		size_t n = strlen(*o);

		if ((*o)[n - 1] == '*' ? strncmp(option, *o, n - 1) == 0 : strcmp(option, *o) == 0) {
			return true;
		}
	}
	return false;
}

void
convert_class_list(enum convert_role role, bool full_names, const char *conj, struct buf *out)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		n += (classes[i].roles & ROLE(role)) != 0;
	}
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		const char *name = classes[i].name, *dot = strrchr(name, '.');

		if (!(classes[i].roles & ROLE(role))) {
			continue;
		}
		if (k) {
			buf_add_fmt(out, k + 1 == n ? " %s " : ", ", conj);
		}
		buf_add_str(out, full_names ? name : dot + 1);
		k++;
	}
}

static int
json_option(struct convert *c, const struct kv_entry *e, char *errbuf, size_t errlen)
{
	if (strcmp(e->key, "schemas.enable") == 0 ||
	    strcmp(e->key, "replace.null.with.default") == 0) {
		bool *dst = e->key[0] == 's' ? &c->schemas_enable : &c->replace_null;

		if (configdef_bool(e->value, dst) < 0) {
			errbuf_set(errbuf, errlen, "%s: JsonConverter option %s='%s' is not a boolean; "
			       "use true or false", e->origin ? e->origin : "config", e->key,
			       e->value);
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(e->key, "decimal.format") == 0) {
		if (configdef_eq(e->value, "BASE64") || configdef_eq(e->value, "NUMERIC")) {
			c->decimal_numeric = configdef_eq(e->value, "NUMERIC");
			return 0;
		}
		errbuf_set(errbuf, errlen, "%s: JsonConverter decimal.format='%s' is invalid; use BASE64 "
		       "or NUMERIC", e->origin ? e->origin : "config", e->value);
		return -EINVAL;
	}
	if (strcmp(e->key, "schemas.cache.size") == 0) {
		int32_t v;

		if (configdef_int(e->value, 0, INT32_MAX, &v) < 0) {
			errbuf_set(errbuf, errlen, "%s: JsonConverter schemas.cache.size='%s' is not a "
			       "non-negative integer", e->origin ? e->origin : "config", e->value);
			return -EINVAL;
		}
		return 0; /* no effect: outboxd keeps no schema cache */
	}
	return 0; /* not reached: the registry lists no other JsonConverter option */
}

static int
check_option(struct convert *c, const struct kv_entry *e, char *errbuf, size_t errlen)
{
	if (!convert_class_has_option(c->class_name, e->key)) {
		errbuf_set(errbuf, errlen, "%s: unknown option '%s' for %s; check the spelling (it is "
		       "not an option of this converter)", e->origin ? e->origin : "config", e->key,
		       c->class_name);
		return -EINVAL;
	}
	if (strcmp(e->key, "converter.type") == 0) {
		if (configdef_eq(e->value, "key") || configdef_eq(e->value, "value") ||
		    configdef_eq(e->value, "header")) {
			return 0;
		}
		errbuf_set(errbuf, errlen, "%s: converter.type='%s' is invalid; use key, value or header",
		       e->origin ? e->origin : "config", e->value);
		return -EINVAL;
	}
	if (c->kind == KIND_JSON) {
		return json_option(c, e, errbuf, errlen);
	}
	if (c->kind == KIND_STRING) {
		if (configdef_eq(e->value, "UTF-8") || configdef_eq(e->value, "UTF8")) {
			return 0;
		}
		errbuf_set(errbuf, errlen, "%s: StringConverter %s='%s' is not supported; outboxd "
		       "writes UTF-8 only (remove the option or set UTF-8)",
		       e->origin ? e->origin : "config", e->key, e->value);
		return -EINVAL;
	}
	return 0; /* BinaryDataConverter's delegate options: taken by setup_delegate() */
}

/*
 * BinaryDataConverter.configure(): the delegate gets the options under
 * "delegate.converter.type." with that prefix stripped (Configuration.subset), and the role
 * of its host (a header host configures it as a value converter).
 */
static int
setup_delegate(struct convert *c, const struct kv *options, char *errbuf, size_t errlen)
{
	const char *cls = options ? kv_get(options, DELEGATE) : NULL;
	struct kv sub = KV_INIT;
	size_t plen = strlen(DELEGATE) + 1;
	int rc;

	if (!cls) {
		return 0;
	}
	for (size_t i = 0; i < options->n; i++) {
		const struct kv_entry *e = &options->v[i];

		if (strncmp(e->key, DELEGATE ".", plen) == 0 && e->key[plen]) {
			kv_set(&sub, e->key + plen, e->value, e->origin);
		}
	}
	rc = convert_new(cls, &sub, c->role == CONVERT_KEY ? CONVERT_KEY : CONVERT_VALUE,
			 &c->delegate, errbuf, errlen);
	kv_fini(&sub);
	if (rc == 0 && c->delegate->kind == KIND_BINARY) {
		errbuf_set(errbuf, errlen, "BinaryDataConverter " DELEGATE " cannot be "
		       "BinaryDataConverter itself; name JsonConverter, StringConverter or "
		       "ByteArrayConverter");
		return -EINVAL;
	}
	return rc;
}

int
convert_new(const char *class_name, const struct kv *options, enum convert_role role,
	    struct convert **ret, char *errbuf, size_t errlen)
{
	const struct convert_class *cls = find_class(class_name);
	struct convert *c;

	if (!cls || !(cls->roles & ROLE(role))) {
		struct buf ok = BUF_INIT;

		convert_class_list(role, true, "or", &ok);
		errbuf_set(errbuf, errlen, "%s converter class '%s' is not supported; use %s",
		       convert_role_name(role), class_name ? class_name : "(none)", buf_cstr(&ok));
		buf_fini(&ok);
		return -EINVAL;
	}
	c = znew(*c);
	c->kind = cls->kind;
	c->role = role;
	c->class_name = cls->name;
	c->schemas_enable = true;
	c->replace_null = true;
	c->dfmt = JSONW_DOUBLE_JDK17;
	for (size_t i = 0; options && i < options->n; i++) {
		if (check_option(c, &options->v[i], errbuf, errlen) < 0) {
			convert_free(c);
			return -EINVAL;
		}
	}
	if (c->kind == KIND_BINARY && setup_delegate(c, options, errbuf, errlen) < 0) {
		convert_free(c);
		return -EINVAL;
	}
	*ret = c;
	return 0;
}

void
convert_free(struct convert *c)
{
	if (c) {
		convert_free(c->delegate);
	}
	free(c);
}

void
convert_set_double_format(struct convert *c, enum jsonw_double_format fmt)
{
	c->dfmt = fmt;
	if (c->delegate) {
		convert_set_double_format(c->delegate, fmt);
	}
}

const char *
convert_class(const struct convert *c)
{
	return c->class_name;
}

static bool
is_decimal(const struct cvalue *v)
{
	return v->type == CVALUE_BYTES && v->name && strcmp(v->name, CVALUE_DECIMAL_NAME) == 0;
}

static int32_t
decimal_scale(const struct cvalue *v)
{
	for (size_t i = 0; i < v->nparams; i++) {
		if (strcmp(v->params[i].key, "scale") == 0) {
			return (int32_t)strtol(v->params[i].value, NULL, 10);
		}
	}
	return 0;
}

void
convert_decimal_string(const uint8_t *p, size_t len, int32_t scale, struct buf *out)
{
	uint8_t *mag = xmalloc(len ? len : 1);
	bool neg = len && (p[0] & 0x80);
	struct buf digits = BUF_INIT;
	size_t i, nd;
	long long adjusted;

	/* magnitude of the two's-complement value */
	for (i = 0; i < len; i++) {
		mag[i] = neg ? (uint8_t)~p[i] : p[i];
	}
	for (i = len; neg && i-- > 0;) {
		if (++mag[i] != 0) {
			break;
		}
	}
	/* repeated division by 10, least significant digit first */
	for (;;) {
		unsigned rem = 0;
		bool zero = true;

		for (i = 0; i < len; i++) {
			unsigned cur = rem * 256 + mag[i];

			mag[i] = (uint8_t)(cur / 10);
			rem = cur % 10;
			zero = zero && mag[i] == 0;
		}
		buf_add_char(&digits, (char)('0' + rem));
		if (zero) {
			break;
		}
	}
	free(mag);
	nd = digits.len;
	for (i = 0; i < nd / 2; i++) {
		char t = digits.data[i];

		digits.data[i] = digits.data[nd - 1 - i];
		digits.data[nd - 1 - i] = t;
	}
	if (neg) {
		buf_add_char(out, '-');
	}
	adjusted = -(long long)scale + (long long)(nd - 1);
	if (scale == 0) {
		buf_add(out, digits.data, nd);
	} else if (scale > 0 && adjusted >= -6) {
		/* plain notation */
		if ((size_t)scale >= nd) {
			buf_add_str(out, "0.");
			for (i = 0; i < (size_t)scale - nd; i++) {
				buf_add_char(out, '0');
			}
			buf_add(out, digits.data, nd);
		} else {
			buf_add(out, digits.data, nd - (size_t)scale);
			buf_add_char(out, '.');
			buf_add(out, digits.data + nd - (size_t)scale, (size_t)scale);
		}
	} else {
		buf_add_char(out, digits.data[0]);
		if (nd > 1) {
			buf_add_char(out, '.');
			buf_add(out, digits.data + 1, nd - 1);
		}
		buf_add_fmt(out, "E%s%lld", adjusted > 0 ? "+" : "", adjusted);
	}
	buf_fini(&digits);
}

static const char *
type_name(enum cvalue_type t)
{
	static const char *const names[] = {
		[CVALUE_NONE] = "null", [CVALUE_INT8] = "int8", [CVALUE_INT16] = "int16",
		[CVALUE_INT32] = "int32", [CVALUE_INT64] = "int64", [CVALUE_FLOAT32] = "float",
		[CVALUE_FLOAT64] = "double", [CVALUE_BOOLEAN] = "boolean",
		[CVALUE_STRING] = "string", [CVALUE_BYTES] = "bytes", [CVALUE_STRUCT] = "struct",
		[CVALUE_ARRAY] = "array",
	};

	return names[t];
}

static int json_value(const struct convert *c, const struct cvalue *v, struct buf *out,
		      char *errbuf, size_t errlen);

static int
json_str(struct buf *out, const char *s, size_t len, char *errbuf, size_t errlen)
{
	if (jsonw_string(out, s, len) < 0) {
		errbuf_set(errbuf, errlen, "a string value is not valid UTF-8 (Kafka Connect cannot "
		       "write it); check the database encoding and client_encoding=UTF8");
		return -EINVAL;
	}
	return 0;
}

/* JsonConverter.asJsonSchema(): type, fields, optional, name, version, doc, parameters, default. */
static int
json_schema(const struct convert *c, const struct cvalue *v, struct buf *out, char *errbuf,
	    size_t errlen)
{
	buf_add_fmt(out, "{\"type\":\"%s\"", type_name(v->type));
	if (v->type == CVALUE_ARRAY) {
		buf_add_str(out, ",\"items\":");
		if (json_schema(c, v->u.array.items, out, errbuf, errlen) < 0) {
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
			if (json_str(out, f->field ? f->field : "", f->field ? strlen(f->field) : 0,
				     errbuf, errlen) < 0) {
				return -EINVAL;
			}
			buf_add_char(out, '}');
		}
		buf_add_char(out, ']');
	}
	buf_add_fmt(out, ",\"optional\":%s", v->optional ? "true" : "false");
	if (v->name) {
		buf_add_str(out, ",\"name\":");
		if (json_str(out, v->name, strlen(v->name), errbuf, errlen) < 0) {
			return -EINVAL;
		}
	}
	if (v->version) {
		buf_add_fmt(out, ",\"version\":%d", (int)v->version);
	}
	if (v->doc) {
		buf_add_str(out, ",\"doc\":");
		if (json_str(out, v->doc, strlen(v->doc), errbuf, errlen) < 0) {
			return -EINVAL;
		}
	}
	if (v->params) {
		buf_add_str(out, ",\"parameters\":{");
		for (size_t i = 0; i < v->nparams; i++) {
			if (i) {
				buf_add_char(out, ',');
			}
			if (json_str(out, v->params[i].key, strlen(v->params[i].key), errbuf,
				     errlen) < 0 ||
			    (buf_add_char(out, ':'), json_str(out, v->params[i].value,
							       strlen(v->params[i].value), errbuf,
							       errlen)) < 0) {
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

/* JsonConverter.convertToJson() for a non-null value. */
static int
json_nonnull(const struct convert *c, const struct cvalue *v, struct buf *out, char *errbuf,
	     size_t errlen)
{
	switch (v->type) {
	case CVALUE_INT8:
	case CVALUE_INT16:
	case CVALUE_INT32:
	case CVALUE_INT64:
		jsonw_int(out, v->u.i);
		return 0;
	case CVALUE_FLOAT32:
		jsonw_float(out, (float)v->u.f, c->dfmt);
		return 0;
	case CVALUE_FLOAT64:
		jsonw_double(out, v->u.f, c->dfmt);
		return 0;
	case CVALUE_BOOLEAN:
		buf_add_str(out, v->u.b ? "true" : "false");
		return 0;
	case CVALUE_STRING:
		return json_str(out, v->u.s.p, v->u.s.len, errbuf, errlen);
	case CVALUE_BYTES:
		if (is_decimal(v) && c->decimal_numeric) {
			convert_decimal_string((const uint8_t *)v->u.s.p, v->u.s.len,
					       decimal_scale(v), out);
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
			if (json_str(out, f->field ? f->field : "", f->field ? strlen(f->field) : 0,
				     errbuf, errlen) < 0) {
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
	case CVALUE_NONE:
		break;
	}
	buf_add_str(out, "null");
	return 0;
}

static int
json_value(const struct convert *c, const struct cvalue *v, struct buf *out, char *errbuf,
	   size_t errlen)
{
	if (!v->is_null) {
		return json_nonnull(c, v, out, errbuf, errlen);
	}
	if (v->type == CVALUE_NONE) {
		buf_add_str(out, "null");
		return 0;
	}
	if (v->def && c->replace_null) {
		return json_nonnull(c, v->def, out, errbuf, errlen);
	}
	if (v->optional) {
		buf_add_str(out, "null");
		return 0;
	}
	errbuf_set(errbuf, errlen, "JsonConverter: null value for %s%s%s that is required and has no "
	       "default value (Kafka Connect fails with DataException 'Conversion error: null "
	       "value for field that is required and has no default value')",
	       v->field ? "field '" : "a value", v->field ? v->field : "", v->field ? "'" : "");
	return -EINVAL;
}

static int
write_json(const struct convert *c, const struct cvalue *v, struct buf *out, char *errbuf,
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

/* Values.append(): how SimpleHeaderConverter renders a value; @embedded inside a struct. */
static int
header_text(const struct convert *c, const struct cvalue *v, bool embedded, struct buf *out,
	    char *errbuf, size_t errlen)
{
	if (v->is_null) {
		buf_add_str(out, "null");
		return 0;
	}
	switch (v->type) {
	case CVALUE_STRING:
		if (!utf8_valid(v->u.s.p, v->u.s.len)) {
			return json_str(out, v->u.s.p, v->u.s.len, errbuf, errlen);
		}
		if (!embedded) {
			buf_add(out, v->u.s.p, v->u.s.len);
			return 0;
		}
		buf_add_char(out, '"');
		for (size_t i = 0; i < v->u.s.len; i++) {
			if (v->u.s.p[i] == '"' || v->u.s.p[i] == '\\') {
				buf_add_char(out, '\\');
			}
			buf_add_char(out, v->u.s.p[i]);
		}
		buf_add_char(out, '"');
		return 0;
	case CVALUE_BYTES:
		if (is_decimal(v)) {
			convert_decimal_string((const uint8_t *)v->u.s.p, v->u.s.len,
					       decimal_scale(v), out);
			return 0;
		}
		if (embedded) {
			buf_add_char(out, '"');
		}
		jsonw_base64(out, v->u.s.p, v->u.s.len);
		if (embedded) {
			buf_add_char(out, '"');
		}
		return 0;
	case CVALUE_FLOAT32:
		jsonw_java_float(out, (float)v->u.f, c->dfmt);
		return 0;
	case CVALUE_FLOAT64:
		jsonw_java_double(out, v->u.f, c->dfmt);
		return 0;
	case CVALUE_STRUCT:
		buf_add_char(out, '{');
		for (size_t i = 0; i < v->u.fields.n; i++) {
			const struct cvalue *f = &v->u.fields.v[i];
			struct cvalue name = { .type = CVALUE_STRING,
					       .u.s = slice_from_str(f->field ? f->field : "") };

			if (i) {
				buf_add_char(out, ',');
			}
			if (header_text(c, &name, true, out, errbuf, errlen) < 0) {
				return -EINVAL;
			}
			buf_add_char(out, ':');
			if (header_text(c, f, true, out, errbuf, errlen) < 0) {
				return -EINVAL;
			}
		}
		buf_add_char(out, '}');
		return 0;
	default:
		return json_nonnull(c, v, out, errbuf, errlen);
	}
}

int
convert_java_string(const struct cvalue *v, enum jsonw_double_format fmt, struct buf *out)
{
	switch (v->type) {
	case CVALUE_STRING:
		if (!utf8_valid(v->u.s.p, v->u.s.len)) {
			return -EINVAL;
		}
		buf_add(out, v->u.s.p, v->u.s.len);
		return 0;
	case CVALUE_BYTES:
		if (is_decimal(v)) {
			convert_decimal_string((const uint8_t *)v->u.s.p, v->u.s.len,
					       decimal_scale(v), out);
		} else {
			buf_add_fmt(out, "java.nio.HeapByteBuffer[pos=0 lim=%zu cap=%zu]",
				    v->u.s.len, v->u.s.len);
		}
		return 0;
	case CVALUE_FLOAT32:
		jsonw_java_float(out, (float)v->u.f, fmt);
		return 0;
	case CVALUE_FLOAT64:
		jsonw_java_double(out, v->u.f, fmt);
		return 0;
	case CVALUE_BOOLEAN:
		buf_add_str(out, v->u.b ? "true" : "false");
		return 0;
	case CVALUE_STRUCT: {
		bool first = true;

		buf_add_str(out, "Struct{");
		for (size_t i = 0; i < v->u.fields.n; i++) {
			const struct cvalue *f = &v->u.fields.v[i];

			if (f->is_null) {
				continue;
			}
			if (!first) {
				buf_add_char(out, ',');
			}
			first = false;
			buf_add_fmt(out, "%s=", f->field ? f->field : "");
			if (convert_java_string(f, fmt, out) < 0) {
				return -EINVAL;
			}
		}
		buf_add_char(out, '}');
		return 0;
	}
	case CVALUE_ARRAY:
		/* List.toString(): elements by String.valueOf, ", " between */
		buf_add_char(out, '[');
		for (size_t i = 0; i < v->u.array.n; i++) {
			const struct cvalue *e = &v->u.array.v[i];

			if (i) {
				buf_add_str(out, ", ");
			}
			if (e->is_null) {
				buf_add_str(out, "null");
			} else if (convert_java_string(e, fmt, out) < 0) {
				return -EINVAL;
			}
		}
		buf_add_char(out, ']');
		return 0;
	case CVALUE_NONE:
		buf_add_str(out, "null");
		return 0;
	default:
		jsonw_int(out, v->u.i);
		return 0;
	}
}

int
convert_schema_json(const struct cvalue *v, struct buf *out)
{
	static const struct convert dflt = { .kind = KIND_JSON, .schemas_enable = true,
					     .replace_null = true };

	return json_schema(&dflt, v, out, NULL, 0);
}

/* A String value under a schema of another type (cvalue.java_string). */
static int
write_java_string(const struct convert *c, const struct cvalue *v, struct buf *out,
		  bool *ret_null, char *errbuf, size_t errlen)
{
	switch (c->kind) {
	case KIND_JSON:
		if (v->type != CVALUE_NONE) {
			errbuf_set(errbuf, errlen, "JsonConverter: Invalid type for %s: class "
			       "java.lang.String (Kafka Connect fails with DataException: the "
			       "EventRouter kept the payload string after a failed "
			       "table.expand.json.payload)", type_name(v->type));
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
		break;
	case KIND_STRING:
		if (!utf8_valid(v->u.s.p, v->u.s.len)) {
			errbuf_set(errbuf, errlen, "StringConverter: a string value is not valid UTF-8");
			return -EINVAL;
		}
		buf_add(out, v->u.s.p, v->u.s.len);
		break;
	default:
		if (c->kind == KIND_BINARY && c->delegate) {
			return convert_write(c->delegate, v, out, ret_null, errbuf, errlen);
		}
		errbuf_set(errbuf, errlen, "%s cannot write a String value (Kafka Connect fails with "
		       "DataException)", c->class_name);
		return -EINVAL;
	}
	*ret_null = false;
	return 0;
}

/* BinaryDataConverter.fromConnectData(): BYTES (or schemaless) raw, the rest delegated. */
static int
write_binary(const struct convert *c, const struct cvalue *v, struct buf *out, bool *ret_null,
	     char *errbuf, size_t errlen)
{
	if (v->type == CVALUE_BYTES && v->is_null) {
		*ret_null = true;
		return 0;
	}
	if (v->type == CVALUE_BYTES) {
		buf_add(out, v->u.s.p, v->u.s.len);
		*ret_null = false;
		return 0;
	}
	if (!c->delegate) {
		errbuf_set(errbuf, errlen, "BinaryDataConverter: a %s value needs a delegate converter "
		       "(Debezium fails with DataException); set " DELEGATE " (for example "
		       "org.apache.kafka.connect.json.JsonConverter) or use a bytea column",
		       type_name(v->type));
		return -EINVAL;
	}
	return convert_write(c->delegate, v, out, ret_null, errbuf, errlen);
}

int
convert_write(const struct convert *c, const struct cvalue *v, struct buf *out,
	      bool *ret_null, char *errbuf, size_t errlen)
{
	int r = 0;

	buf_reset(out);
	/* every converter maps a null value without a schema to a Kafka null */
	if (!v || (v->type == CVALUE_NONE && v->is_null)) {
		*ret_null = true;
		return 0;
	}
	if (v->java_string) {
		return write_java_string(c, v, out, ret_null, errbuf, errlen);
	}
	switch (c->kind) {
	case KIND_BINARY:
		return write_binary(c, v, out, ret_null, errbuf, errlen);
	case KIND_JSON:
		r = write_json(c, v, out, errbuf, errlen);
		break;
	case KIND_STRING:
		if (v->is_null) {
			*ret_null = true;
			return 0;
		}
		if (convert_java_string(v, c->dfmt, out) < 0) {
			errbuf_set(errbuf, errlen, "StringConverter: a string value is not valid UTF-8");
			return -EINVAL;
		}
		break;
	case KIND_BYTEARRAY:
		if (v->type != CVALUE_BYTES) {
			errbuf_set(errbuf, errlen, "ByteArrayConverter: invalid schema type %s (Kafka "
			       "Connect fails with DataException); it only writes BYTES values (a "
			       "bytea column); use org.apache.kafka.connect.json.JsonConverter or "
			       "org.apache.kafka.connect.storage.StringConverter for this %s",
			       type_name(v->type), c->role == CONVERT_KEY ? "key" : "value");
			return -EINVAL;
		}
		if (v->is_null) {
			*ret_null = true;
			return 0;
		}
		buf_add(out, v->u.s.p, v->u.s.len);
		break;
	case KIND_SIMPLEHEADER:
		if (v->is_null) {
			*ret_null = true;
			return 0;
		}
		r = header_text(c, v, false, out, errbuf, errlen);
		break;
	}
	if (r < 0) {
		return r;
	}
	*ret_null = false;
	return 0;
}
