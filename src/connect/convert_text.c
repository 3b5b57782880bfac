/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Java's text forms of Connect values: Struct.toString() and List.toString() (what
 * StringConverter writes), BigDecimal.toString() of a Connect Decimal, and Schema.Type's names.
 * Checked by running Kafka 4.3.0: Struct.toString() omits null fields and prints a ByteBuffer
 * as HeapByteBuffer[...]; BigDecimal prints 1E-8 where the exponent is below -6.
 * Calls no other convert_*.c file (convert_int.h).
 */
#include "convert_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/util/mem.h"
#include "outboxd/util/utf8.h"

const char *
convert_text_type_name(enum cvalue_type t)
{
	static const char *const names[] = {
		[CVALUE_NONE] = "null",	     [CVALUE_INT8] = "int8",
		[CVALUE_INT16] = "int16",    [CVALUE_INT32] = "int32",
		[CVALUE_INT64] = "int64",    [CVALUE_FLOAT32] = "float",
		[CVALUE_FLOAT64] = "double", [CVALUE_BOOLEAN] = "boolean",
		[CVALUE_STRING] = "string",  [CVALUE_BYTES] = "bytes",
		[CVALUE_STRUCT] = "struct",  [CVALUE_ARRAY] = "array",
		[CVALUE_MAP] = "map",
	};

	return names[t];
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

bool
convert_text_decimal(const struct cvalue *v, struct buf *out)
{
	if (!is_decimal(v)) {
		return false;
	}
	convert_decimal_string((const uint8_t *)v->u.s.p, v->u.s.len, decimal_scale(v), out);
	return true;
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

/*
 * List.toString() ('[' elements ", " between ']') and AbstractMap.toString() ('{' key=value
 * ", " between '}'), each item by String.valueOf().
 */
static int
java_collection(const struct cvalue *v, enum jsonw_double_format fmt, struct buf *out)
{
	bool map = v->type == CVALUE_MAP;
	size_t n = map ? 2 * v->u.map.n : v->u.array.n;

	buf_add_char(out, map ? '{' : '[');
	for (size_t i = 0; i < n; i++) {
		const struct cvalue *e = map ? &v->u.map.kv[i] : &v->u.array.v[i];

		if (i) {
			buf_add_str(out, map && i % 2 ? "=" : ", ");
		}
		if (e->is_null) {
			buf_add_str(out, "null");
		} else if (convert_java_string(e, fmt, out) < 0) {
			return -EINVAL;
		}
	}
	buf_add_char(out, map ? '}' : ']');
	return 0;
}

int
convert_java_string(const struct cvalue *v, enum jsonw_double_format fmt, struct buf *out)
{
	int64_t ms;

	switch (v->type) {
	case CVALUE_STRING:
		if (!utf8_valid(v->u.s.p, v->u.s.len)) {
			return -EINVAL;
		}
		buf_add(out, v->u.s.p, v->u.s.len);
		return 0;
	case CVALUE_BYTES:
		if (!convert_text_decimal(v, out)) {
			buf_add_fmt(out, "java.nio.HeapByteBuffer[pos=0 lim=%zu cap=%zu]",
				    v->u.s.len, v->u.s.len);
		}
		return 0;
	case CVALUE_FLOAT32: jsonw_java_float(out, (float)v->u.f, fmt); return 0;
	case CVALUE_FLOAT64: jsonw_java_double(out, v->u.f, fmt); return 0;
	case CVALUE_BOOLEAN: buf_add_str(out, v->u.b ? "true" : "false"); return 0;
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
	case CVALUE_MAP: return java_collection(v, fmt, out);
	case CVALUE_NONE: buf_add_str(out, "null"); return 0;
	default:
		if (convert_date_millis(v, &ms)) {
			convert_date_java(ms, out);
		} else {
			jsonw_int(out, v->u.i);
		}
		return 0;
	}
}
