/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The converter registry (which classes, in which roles, with which options) and the dispatch:
 * convert_new() configures a converter as Kafka Connect would, convert_write() hands a value
 * to the writer of its class (convert_int.h) and writes ByteArrayConverter,
 * BinaryDataConverter and StringConverter's plain cases itself.
 */
#include "outboxd/connect/convert.h"

#include <errno.h>
#include <string.h>

#include "convert_int.h"
#include "outboxd/connect/configdef.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"
#include "outboxd/util/utf8.h"

#define DELEGATE "delegate.converter.type"

/* Every converter takes converter.type (ConverterConfig); these are each class's own options. */
static const char *const json_options[] = {
	"schemas.enable", "schemas.cache.size", "decimal.format", "replace.null.with.default", NULL,
};
static const char *const string_options[] = { "converter.encoding", NULL };
/* "delegate.converter.type.*": the delegate's own options (Configuration.subset) */
static const char *const binary_options[] = { DELEGATE, DELEGATE ".*", NULL };
static const char *const no_options[] = { NULL };

#define ROLE(r)	   (1u << (r))
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
		bool prefix = (*o)[n - 1] == '*';

		if (prefix ? strncmp(option, *o, n - 1) == 0 : strcmp(option, *o) == 0) {
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
			errbuf_set(errbuf, errlen,
				   "%s: JsonConverter option %s='%s' is not a boolean; "
				   "use true or false",
				   e->origin ? e->origin : "config", e->key, e->value);
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(e->key, "decimal.format") == 0) {
		if (configdef_eq(e->value, "BASE64") || configdef_eq(e->value, "NUMERIC")) {
			c->decimal_numeric = configdef_eq(e->value, "NUMERIC");
			return 0;
		}
		errbuf_set(errbuf, errlen,
			   "%s: JsonConverter decimal.format='%s' is invalid; use BASE64 "
			   "or NUMERIC",
			   e->origin ? e->origin : "config", e->value);
		return -EINVAL;
	}
	if (strcmp(e->key, "schemas.cache.size") == 0) {
		int32_t v;

		if (configdef_int(e->value, 0, INT32_MAX, &v) < 0) {
			errbuf_set(errbuf, errlen,
				   "%s: JsonConverter schemas.cache.size='%s' is not a "
				   "non-negative integer",
				   e->origin ? e->origin : "config", e->value);
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
		errbuf_set(errbuf, errlen,
			   "%s: unknown option '%s' for %s; check the spelling "
			   "(it is not an option of this converter)",
			   e->origin ? e->origin : "config", e->key, c->class_name);
		return -EINVAL;
	}
	if (strcmp(e->key, "converter.type") == 0) {
		if (configdef_eq(e->value, "key") || configdef_eq(e->value, "value") ||
		    configdef_eq(e->value, "header")) {
			return 0;
		}
		errbuf_set(errbuf, errlen,
			   "%s: converter.type='%s' is invalid; use key, value or header",
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
		errbuf_set(errbuf, errlen,
			   "%s: StringConverter %s='%s' is not supported; outboxd "
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
		errbuf_set(errbuf, errlen,
			   "BinaryDataConverter " DELEGATE " cannot be "
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
			   convert_role_name(role), class_name ? class_name : "(none)",
			   buf_cstr(&ok));
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

/* A String value under a schema of another type (cvalue.java_string). */
static int
write_java_string(const struct convert *c, const struct cvalue *v, struct buf *out, bool *ret_null,
		  char *errbuf, size_t errlen)
{
	switch (c->kind) {
	case KIND_JSON:
		if (convert_json_write_java_string(c, v, out, errbuf, errlen) < 0) {
			return -EINVAL;
		}
		break;
	case KIND_STRING:
		if (!utf8_valid(v->u.s.p, v->u.s.len)) {
			errbuf_set(errbuf, errlen,
				   "StringConverter: a string value is not valid UTF-8");
			return -EINVAL;
		}
		buf_add(out, v->u.s.p, v->u.s.len);
		break;
	default:
		if (c->kind == KIND_BINARY && c->delegate) {
			return convert_write(c->delegate, v, out, ret_null, errbuf, errlen);
		}
		errbuf_set(errbuf, errlen,
			   "%s cannot write a String value (Kafka Connect fails with "
			   "DataException)",
			   c->class_name);
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
		errbuf_set(errbuf, errlen,
			   "BinaryDataConverter: a %s value needs a delegate converter "
			   "(Debezium fails with DataException); set " DELEGATE " (for example "
			   "org.apache.kafka.connect.json.JsonConverter) or use a bytea column",
			   convert_text_type_name(v->type));
		return -EINVAL;
	}
	return convert_write(c->delegate, v, out, ret_null, errbuf, errlen);
}

int
convert_write(const struct convert *c, const struct cvalue *v, struct buf *out, bool *ret_null,
	      char *errbuf, size_t errlen)
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
	case KIND_BINARY: return write_binary(c, v, out, ret_null, errbuf, errlen);
	case KIND_JSON: r = convert_json_write(c, v, out, errbuf, errlen); break;
	case KIND_STRING:
		if (v->is_null) {
			*ret_null = true;
			return 0;
		}
		if (convert_java_string(v, c->dfmt, out) < 0) {
			errbuf_set(errbuf, errlen,
				   "StringConverter: a string value is not valid UTF-8");
			return -EINVAL;
		}
		break;
	case KIND_BYTEARRAY:
		if (v->type != CVALUE_BYTES) {
			errbuf_set(
				errbuf, errlen,
				"ByteArrayConverter: invalid schema type %s (Kafka "
				"Connect fails with DataException); it only writes BYTES values (a "
				"bytea column); use org.apache.kafka.connect.json.JsonConverter or "
				"org.apache.kafka.connect.storage.StringConverter for this %s",
				convert_text_type_name(v->type), convert_role_name(c->role));
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
		r = convert_header_write(c, v, out, errbuf, errlen);
		break;
	}
	if (r < 0) {
		return r;
	}
	*ret_null = false;
	return 0;
}
