/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/connect/pgvalue.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/jsonw.h"
#include "outboxd/pg/pgtype.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/utf8.h"
#include "pgvalue_int.h"

/*
 * Built-in types Debezium does not map to a plain string and outboxd does not convert yet
 * (geometric types but point, a multirange, arrays of the types pgvalue_array.c does not take:
 * interval[], money[], varbit[], xml[] and point[] columns Debezium 3.6.1 leaves out of its
 * records, bit[] it writes as a null under the element's schema): refused rather than bytes
 * that differ from Debezium's.
 */
static bool
unsupported_oid(uint32_t oid)
{
	static const uint32_t deny[] = {
		601, 602, 603, 604, 628, 718, 4451, 1187, 791, 1561, 1563, 143,
	};

	if (oid >= 1000 && oid <= 1040) {
		return !pgvalue_array_elem(oid); /* arrays of the other basic types */
	}
	for (size_t i = 0; i < sizeof(deny) / sizeof(deny[0]); i++) {
		if (deny[i] == oid) {
			return true;
		}
	}
	return false;
}

bool
pgvalue_converts(uint32_t type_oid)
{
	return !unsupported_oid(type_oid);
}

bool
pgvalue_known(uint32_t type_oid)
{
	switch (type_oid) {
	case PGTYPE_BOOL:
	case PGTYPE_INT2:
	case PGTYPE_INT4:
	case PGTYPE_INT8:
	case PGTYPE_OID:
	case PGTYPE_FLOAT4:
	case PGTYPE_FLOAT8:
	case PGTYPE_NUMERIC:
	case PGTYPE_BYTEA:
	case PGTYPE_DATE:
	case PGTYPE_TIMESTAMP:
	case PGTYPE_TIMESTAMPTZ:
	case PGTYPE_TIME:
	case PGTYPE_TIMETZ:
	case PGTYPE_INTERVAL:
	case PGTYPE_MONEY:
	case PGTYPE_BIT:
	case PGTYPE_VARBIT:
	case PGTYPE_POINT:
	case PGTYPE_UUID:
	case PGTYPE_JSON:
	case PGTYPE_JSONB:
	case PGTYPE_XML:
	case PGTYPE_TEXT:
	case PGTYPE_VARCHAR:
	case PGTYPE_BPCHAR:
	case PGTYPE_NAME:
	case PGTYPE_CHAR:
	case PGTYPE_INET:
	case PGTYPE_CIDR:
	case PGTYPE_MACADDR:
	case PGTYPE_MACADDR8:
	case PGTYPE_TSVECTOR:
	case PGTYPE_INT4RANGE:
	case PGTYPE_NUMRANGE:
	case PGTYPE_TSRANGE:
	case PGTYPE_TSTZRANGE:
	case PGTYPE_DATERANGE:
	case PGTYPE_INT8RANGE: return true;
	default: return pgvalue_array_elem(type_oid) != 0;
	}
}

void
pgvalue_fini(struct pgvalue *pv)
{
	buf_fini(&pv->data);
	buf_fini(&pv->raw);
	pgvalue_array_fini(pv);
	free(pv->kv);
	pv->kv = NULL;
	pv->kvcap = 0;
}

static int
convert_bytea(struct slice t, enum pgvalue_binary binary, struct pgvalue *pv)
{
	struct buf raw = BUF_INIT;

	pv->v.type = binary == PGVALUE_BINARY_BYTES ? CVALUE_BYTES : CVALUE_STRING;
	if (pv->v.is_null) {
		return 0;
	}
	if (t.len < 2 || t.p[0] != '\\' || t.p[1] != 'x' || t.len % 2) {
		return -EINVAL; /* bytea_output=escape: the session pins hex */
	}
	for (size_t i = 2; i < t.len; i += 2) {
		/* exactly, not by case folding: 0x14 | 0x20 would read as '4' */
		int a = utf8_hex_digit(t.p[i]), b = utf8_hex_digit(t.p[i + 1]);

		if (a < 0 || b < 0) {
			buf_fini(&raw);
			return -EINVAL;
		}
		buf_add_char(&raw, (char)(a << 4 | b));
	}
	switch (binary) {
	case PGVALUE_BINARY_BYTES: buf_add(&pv->data, raw.data, raw.len); break;
	case PGVALUE_BINARY_BASE64: jsonw_base64(&pv->data, raw.data, raw.len); break;
	case PGVALUE_BINARY_BASE64_URL_SAFE: jsonw_base64url(&pv->data, raw.data, raw.len); break;
	case PGVALUE_BINARY_HEX:
		/* from the bytes, not the text: Debezium's HexConverter writes lower case */
		for (size_t i = 0; i < raw.len; i++) {
			buf_add_fmt(&pv->data, "%02x", (unsigned char)raw.data[i]);
		}
		break;
	}
	buf_fini(&raw);
	pv->v.u.s = (struct slice){ pv->data.data ? pv->data.data : "", pv->data.len };
	return 0;
}

/* A number's text as a C string for strto*(); false if empty or longer than any valid one. */
static bool
number_cstr(struct slice t, char *tmp, size_t size)
{
	if (t.len == 0 || t.len >= size) {
		return false;
	}
	memcpy(tmp, t.p, t.len);
	tmp[t.len] = '\0';
	return true;
}

/* Advance @i over decimal digits of @t; how many there were. */
static size_t
skip_digits(struct slice t, size_t *i)
{
	size_t from = *i;

	while (*i < t.len && t.p[*i] >= '0' && t.p[*i] <= '9') {
		(*i)++;
	}
	return *i - from;
}

/* "-"? digits: PostgreSQL's integer output (strtoll() would also take blanks and '+'). */
static bool
int_text(struct slice t)
{
	size_t i = t.len && t.p[0] == '-';

	return skip_digits(t, &i) && i == t.len;
}

/*
 * PostgreSQL's float output: NaN, [-]Infinity, or "-"? digits ("." digits)? (e [+-]? digits)?.
 * strtod() would also take blanks, '+', hex floats, "inf" and "nan".
 */
static bool
float_text(struct slice t)
{
	static const char *const special[] = { "NaN", "Infinity", "-Infinity" };
	size_t i = t.len && t.p[0] == '-';

	for (size_t k = 0; k < sizeof(special) / sizeof(special[0]); k++) {
		if (t.len == strlen(special[k]) && memcmp(t.p, special[k], t.len) == 0) {
			return true;
		}
	}
	if (!skip_digits(t, &i)) {
		return false;
	}
	if (i < t.len && t.p[i] == '.' && (++i, !skip_digits(t, &i))) {
		return false;
	}
	if (i < t.len && (t.p[i] == 'e' || t.p[i] == 'E')) {
		i++;
		i += i < t.len && (t.p[i] == '+' || t.p[i] == '-');
		if (!skip_digits(t, &i)) {
			return false;
		}
	}
	return i == t.len;
}

static int
convert_int(struct slice t, enum cvalue_type type, struct pgvalue *pv)
{
	char tmp[32], *end;

	pv->v.type = type;
	if (pv->v.is_null) {
		return 0;
	}
	if (!int_text(t) || !number_cstr(t, tmp, sizeof(tmp))) {
		return -EINVAL;
	}
	errno = 0;
	pv->v.u.i = strtoll(tmp, &end, 10);
	if (*end || errno) {
		return -EINVAL;
	}
	/* int2 and int4 text beyond their range is not PostgreSQL's output: refused, not cut */
	if ((type == CVALUE_INT16 && (pv->v.u.i < INT16_MIN || pv->v.u.i > INT16_MAX)) ||
	    (type == CVALUE_INT32 && (pv->v.u.i < INT32_MIN || pv->v.u.i > INT32_MAX))) {
		return -EINVAL;
	}
	return 0;
}

static int
convert_float(struct slice t, enum cvalue_type type, struct pgvalue *pv)
{
	char tmp[64], *end;

	pv->v.type = type;
	if (pv->v.is_null) {
		return 0;
	}
	if (!float_text(t) || !number_cstr(t, tmp, sizeof(tmp))) {
		return -EINVAL;
	}
	pv->v.u.f = type == CVALUE_FLOAT32 ? (double)strtof(tmp, &end) : strtod(tmp, &end);
	return *end ? -EINVAL : 0;
}

static int
convert_string(struct slice t, const char *name, struct pgvalue *pv)
{
	pv->v.type = CVALUE_STRING;
	if (name) {
		pv->v.name = name;
		pv->v.version = 1;
	}
	if (!pv->v.is_null) {
		if (!utf8_valid(t.p, t.len)) {
			return -EILSEQ;
		}
		pv->v.u.s = t;
	}
	return 0;
}

/* PostgreSQL's uuid output: 8-4-4-4-12 lower-case hex digits. */
static bool
uuid_text(struct slice t)
{
	if (t.len != 36) {
		return false;
	}
	for (size_t i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		char ch = t.p[i];

		if (dash ? ch != '-' : !((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) {
			return false;
		}
	}
	return true;
}

static int
dispatch(const struct relcache_col *col, struct slice t, struct pgvalue_modes modes,
	 struct pgvalue *pv)
{
	uint32_t elem;

	switch (col->type_oid) {
	case PGTYPE_BOOL:
		pv->v.type = CVALUE_BOOLEAN;
		pv->v.u.b = t.len == 1 && t.p[0] == 't';
		return pv->v.is_null || (t.len == 1 && (t.p[0] == 't' || t.p[0] == 'f')) ? 0 :
											   -EINVAL;
	case PGTYPE_INT2: return convert_int(t, CVALUE_INT16, pv);
	case PGTYPE_INT4: return convert_int(t, CVALUE_INT32, pv);
	case PGTYPE_INT8:
	case PGTYPE_OID: return convert_int(t, CVALUE_INT64, pv);
	case PGTYPE_FLOAT4: return convert_float(t, CVALUE_FLOAT32, pv);
	case PGTYPE_FLOAT8: return convert_float(t, CVALUE_FLOAT64, pv);
	case PGTYPE_NUMERIC: return pgvalue_numeric(col, t, modes.decimal, pv);
	case PGTYPE_BYTEA: return convert_bytea(t, modes.binary, pv);
	case PGTYPE_DATE:
	case PGTYPE_TIMESTAMP:
	case PGTYPE_TIMESTAMPTZ:
	case PGTYPE_TIME:
	case PGTYPE_TIMETZ: return pgvalue_datetime(col, t, modes.time, pv);
	case PGTYPE_INTERVAL: return pgvalue_interval(t, modes.interval, pv);
	case PGTYPE_MONEY: return pgvalue_money(t, modes, pv);
	case PGTYPE_BIT:
	case PGTYPE_VARBIT: return pgvalue_bits(col, t, pv);
	case PGTYPE_POINT: return pgvalue_point(t, pv);
	case PGTYPE_UUID:
		if (!pv->v.is_null && !uuid_text(t)) {
			pv->v.type = CVALUE_STRING;
			return -EINVAL;
		}
		return convert_string(t, "io.debezium.data.Uuid", pv);
	case PGTYPE_JSON:
	case PGTYPE_JSONB: return convert_string(t, "io.debezium.data.Json", pv);
	case PGTYPE_XML: return convert_string(t, "io.debezium.data.Xml", pv);
	case PGTYPE_TSVECTOR: return convert_string(t, "io.debezium.data.Tsvector", pv);
	default:
		elem = pgvalue_array_elem(col->type_oid);
		return elem ? pgvalue_array(col, elem, t, modes, dispatch, pv) :
			      convert_string(t, NULL, pv);
	}
}

int
pgvalue_convert(const struct relcache_col *col, const struct pgoutput_col *pc, bool notnull,
		struct pgvalue_modes modes, struct pgvalue *pv, char *errbuf, size_t errlen)
{
	int rc;

	buf_reset(&pv->data);
	pv->v = (struct cvalue){ .optional = !notnull, .field = col->name };
	if (unsupported_oid(col->type_oid)) {
		errbuf_set(
			errbuf, errlen,
			"column '%s' has type OID %u, which outboxd does not convert "
			"yet (Debezium does not write it as a plain string); use a text, varchar, "
			"uuid, jsonb, integer or timestamp column",
			col->name, col->type_oid);
		return -EINVAL;
	}
	if (pc->kind != 't' && pc->kind != 'n') {
		errbuf_set(errbuf, errlen, "column '%s' arrived as '%c' (%s), not as text",
			   col->name, pc->kind,
			   pc->kind == 'u' ? "unchanged TOAST value" : "binary format");
		return -EINVAL;
	}
	pv->v.is_null = pc->kind == 'n';
	rc = dispatch(col, pc->value, modes, pv);
	if (rc == -EILSEQ) {
		errbuf_set(errbuf, errlen,
			   "column '%s' is not valid UTF-8; set the database encoding "
			   "to UTF8 (outboxd pins client_encoding=UTF8)",
			   col->name);
		return -EINVAL;
	}
	if (rc < 0) {
		errbuf_set(
			errbuf, errlen,
			"column '%s' (type OID %u): value '%.*s' is not PostgreSQL's output of the "
			"type or cannot be converted (BC dates and negative numeric scales are not "
			"supported yet)",
			col->name, col->type_oid, (int)(pc->value.len > 64 ? 64 : pc->value.len),
			pc->value.p ? pc->value.p : "");
		return -EINVAL;
	}
	return 0;
}
