/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SimpleHeaderConverter.fromConnectHeader(): Values.convertToString(), which is
 * Values.append() of the value. Checked by running Kafka 4.3.0: a struct header is
 * {"a":"q\"\\","b":"AQID","c":null} (names and strings quoted with only '"' and '\'
 * escaped, bytes as Base64); an array is its elements as inside a struct, between '[' and ']'
 * (the compat suite's array columns). Integers and booleans are written as JsonConverter writes
 * them (convert_json.c).
 */
#include "convert_int.h"

#include <errno.h>
#include <string.h>

#include "outboxd/util/utf8.h"

static int header_text(const struct convert *c, const struct cvalue *v, bool embedded,
		       struct buf *out, char *errbuf, size_t errlen);

/*
 * Values.append() of a Map or a Struct: '{', key ':' value (a struct's field names as keys),
 * both as inside a struct, ',' between, '}'.
 */
static int
header_pairs(const struct convert *c, const struct cvalue *v, struct buf *out, char *errbuf,
	     size_t errlen)
{
	bool map = v->type == CVALUE_MAP;
	size_t n = map ? v->u.map.n : v->u.fields.n;

	buf_add_char(out, '{');
	for (size_t i = 0; i < n; i++) {
		const struct cvalue *f = map ? &v->u.map.kv[2 * i + 1] : &v->u.fields.v[i];
		struct cvalue name = { .type = CVALUE_STRING,
				       .u.s = slice_from_str(f->field ? f->field : "") };

		if (i) {
			buf_add_char(out, ',');
		}
		if (header_text(c, map ? &v->u.map.kv[2 * i] : &name, true, out, errbuf, errlen) <
		    0) {
			return -EINVAL;
		}
		buf_add_char(out, ':');
		if (header_text(c, f, true, out, errbuf, errlen) < 0) {
			return -EINVAL;
		}
	}
	buf_add_char(out, '}');
	return 0;
}

/* Values.append(): how SimpleHeaderConverter renders a value; @embedded inside a struct. */
static int
header_text(const struct convert *c, const struct cvalue *v, bool embedded, struct buf *out,
	    char *errbuf, size_t errlen)
{
	int64_t ms;

	if (v->is_null) {
		buf_add_str(out, "null");
		return 0;
	}
	if (convert_date_millis(v, &ms)) {
		/* a java.util.Date (Connect's Date, Time, Timestamp): unquoted, also when embedded */
		convert_date_values(ms, out);
		return 0;
	}
	switch (v->type) {
	case CVALUE_STRING:
		if (!utf8_valid(v->u.s.p, v->u.s.len)) {
			return convert_json_str(out, v->u.s.p, v->u.s.len, errbuf, errlen);
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
		if (convert_text_decimal(v, out)) {
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
	case CVALUE_FLOAT32: jsonw_java_float(out, (float)v->u.f, c->dfmt); return 0;
	case CVALUE_FLOAT64: jsonw_java_double(out, v->u.f, c->dfmt); return 0;
	case CVALUE_ARRAY:
		/* Values.append() of a List: its elements as inside a struct, ',' between */
		buf_add_char(out, '[');
		for (size_t i = 0; i < v->u.array.n; i++) {
			if (i) {
				buf_add_char(out, ',');
			}
			if (header_text(c, &v->u.array.v[i], true, out, errbuf, errlen) < 0) {
				return -EINVAL;
			}
		}
		buf_add_char(out, ']');
		return 0;
	case CVALUE_MAP:
	case CVALUE_STRUCT: return header_pairs(c, v, out, errbuf, errlen);
	default: return convert_json_nonnull(c, v, out, errbuf, errlen);
	}
}

int
convert_header_write(const struct convert *c, const struct cvalue *v, struct buf *out, char *errbuf,
		     size_t errlen)
{
	return header_text(c, v, false, out, errbuf, errlen);
}
