/* SPDX-License-Identifier: Apache-2.0 */
/*
 * numeric and money, as Debezium's PostgresValueConverter converts them under
 * decimal.handling.mode: Decimal (a column with a scale, money with money.fraction.digits) or
 * VariableScaleDecimal (unconstrained numeric); a double; or text.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/pgvalue.h"
#include "pgvalue_int.h"

/* Decimal digits (with an optional leading '-') -> minimal big-endian two's complement. */
static void
digits_to_twos(const char *digits, size_t nd, bool neg, struct buf *out)
{
	size_t cap = nd / 2 + 2, used = 1, i, j;
	uint8_t *mag = calloc(cap, 1); /* little-endian magnitude */
	bool carry;

	if (!mag) {
		abort();
	}
	for (i = 0; i < nd; i++) {
		unsigned c = (unsigned)(digits[i] - '0');

		for (j = 0; j < used; j++) {
			c += mag[j] * 10u;
			mag[j] = (uint8_t)c;
			c >>= 8;
		}
		if (c) {
			mag[used++] = (uint8_t)c;
		}
	}
	/* room for the sign bit */
	if (mag[used - 1] & 0x80) {
		mag[used++] = 0;
	}
	if (neg) {
		carry = true;
		for (j = 0; j < used; j++) {
			mag[j] = (uint8_t)~mag[j];
			if (carry) {
				carry = ++mag[j] == 0;
			}
		}
		/* drop redundant 0xFF sign bytes */
		while (used > 1 && mag[used - 1] == 0xFF && (mag[used - 2] & 0x80)) {
			used--;
		}
	} else {
		while (used > 1 && mag[used - 1] == 0 && !(mag[used - 2] & 0x80)) {
			used--;
		}
	}
	for (j = used; j-- > 0;) {
		buf_add_char(out, (char)mag[j]);
	}
	free(mag);
}

/* NaN and the infinities, which Debezium's precise mode writes as null. */
static bool
numeric_special(struct slice t)
{
	static const char *const special[] = { "NaN", "Infinity", "-Infinity" };

	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
		if (t.len == strlen(special[i]) && memcmp(t.p, special[i], t.len) == 0) {
			return true;
		}
	}
	return false;
}

/*
 * numeric text ("-"? digits ("." digits)?, as PostgreSQL writes it) -> unscaled
 * two's-complement bytes and its scale. @scale >= 0: the column's, to which the digits are
 * padded; @scale < 0 (unconstrained): trailing fraction zeros stripped, as Debezium's
 * BigDecimal.stripTrailingZeros() with a negative scale put back to 0 ("1200.00": 1200, 0).
 */
static int
numeric_unscaled(const char *s, size_t len, int scale, struct buf *out, int *ret_scale)
{
	struct buf digits = BUF_INIT;
	bool neg = len && s[0] == '-';
	int have = 0, whole = 0;
	size_t i = neg, point = 0;

	for (; i < len; i++) {
		if (s[i] == '.' && !point && whole) {
			point = i;
		} else if (s[i] >= '0' && s[i] <= '9') {
			buf_add_char(&digits, s[i]);
			have += point != 0;
			whole += point == 0;
		} else {
			buf_fini(&digits);
			return -EINVAL;
		}
	}
	/* no digit ("", "-"), none after the point ("5."), or more than the column keeps */
	if (!whole || (point && !have) || (scale >= 0 && have > scale)) {
		buf_fini(&digits);
		return -EINVAL;
	}
	for (; scale >= 0 && have < scale; have++) {
		buf_add_char(&digits, '0');
	}
	for (; scale < 0 && have > 0 && digits.data[digits.len - 1] == '0'; have--) {
		digits.len--;
	}
	digits_to_twos(digits.data, digits.len, neg, out);
	*ret_scale = have;
	buf_fini(&digits);
	return 0;
}

/*
 * decimal.handling.mode=string and double: SpecialValueDecimal gives BigDecimal.toPlainString(),
 * which for PostgreSQL's output (plain digits at the column's scale) is that text, and for NaN,
 * Infinity and -Infinity the names of its special values (NAN, POSITIVE_INFINITY,
 * NEGATIVE_INFINITY, as the compat suite shows); doubleValue(), the nearest double, which
 * strtod() gives too.
 * Unconstrained or not, the scale is kept: only precise mode strips trailing zeros.
 */
static int
convert_numeric_as(struct slice t, enum pgvalue_decimal mode, struct pgvalue *pv)
{
	struct buf check = BUF_INIT;
	int scale, rc = 0;

	if (!pv->v.is_null && !numeric_special(t)) {
		/* the same refusal of text that is not PostgreSQL's numeric output */
		rc = numeric_unscaled(t.p, t.len, -1, &check, &scale);
		buf_fini(&check);
		if (rc < 0) {
			pv->v.type =
				mode == PGVALUE_DECIMAL_DOUBLE ? CVALUE_FLOAT64 : CVALUE_STRING;
			return -EINVAL;
		}
	}
	if (mode == PGVALUE_DECIMAL_DOUBLE) {
		pv->v.type = CVALUE_FLOAT64;
		if (!pv->v.is_null) {
			/* a numeric has up to 147,455 digits: a copy of any length, NUL-ended */
			buf_reset(&pv->data);
			buf_add(&pv->data, t.p, t.len);
			pv->v.u.f = strtod(buf_cstr(&pv->data), NULL);
		}
		return 0;
	}
	pv->v.type = CVALUE_STRING;
	if (slice_eq_str(t, "NaN")) {
		pv->v.u.s = slice_from_str("NAN");
	} else if (slice_eq_str(t, "Infinity")) {
		pv->v.u.s = slice_from_str("POSITIVE_INFINITY");
	} else if (slice_eq_str(t, "-Infinity")) {
		pv->v.u.s = slice_from_str("NEGATIVE_INFINITY");
	} else if (!pv->v.is_null) {
		pv->v.u.s = t;
	}
	return 0;
}

int
pgvalue_numeric(const struct relcache_col *col, struct slice t, enum pgvalue_decimal mode,
		struct pgvalue *pv)
{
	int scale;

	if (mode != PGVALUE_DECIMAL_PRECISE) {
		return convert_numeric_as(t, mode, pv);
	}
	if (col->typmod >= 4) {
		int prec = ((col->typmod - 4) >> 16) & 0xffff;
		int want = (((col->typmod - 4) & 0x7ff) ^ 1024) - 1024;

		if (want < 0) {
			return -EINVAL; /* negative scale (PG 15): not supported yet */
		}
		pv->v.type = CVALUE_BYTES;
		pv->v.name = CVALUE_DECIMAL_NAME;
		pv->v.version = 1;
		snprintf(pv->scale_txt, sizeof(pv->scale_txt), "%d", want);
		snprintf(pv->prec_txt, sizeof(pv->prec_txt), "%d", prec);
		pv->params[0] = (struct cvalue_param){ "scale", pv->scale_txt };
		pv->params[1] = (struct cvalue_param){ "connect.decimal.precision", pv->prec_txt };
		pv->v.params = pv->params;
		pv->v.nparams = 2;
		/* NaN / Infinity: Debezium's precise mode gives null */
		pv->v.is_null = pv->v.is_null || numeric_special(t);
		if (pv->v.is_null) {
			return 0;
		}
		if (numeric_unscaled(t.p, t.len, want, &pv->data, &scale) < 0) {
			return -EINVAL;
		}
		pv->v.u.s = (struct slice){ pv->data.data, pv->data.len };
		return 0;
	}
	pv->v.type = CVALUE_STRUCT;
	pv->v.name = "io.debezium.data.VariableScaleDecimal";
	pv->v.version = 1;
	pv->v.doc = "Variable scaled decimal";
	pv->fields[0] = (struct cvalue){ .type = CVALUE_INT32, .field = "scale" };
	pv->fields[1] = (struct cvalue){ .type = CVALUE_BYTES, .field = "value" };
	pv->v.u.fields.v = pv->fields;
	pv->v.u.fields.n = 2;
	pv->v.is_null = pv->v.is_null || numeric_special(t);
	if (pv->v.is_null) {
		return 0;
	}
	if (numeric_unscaled(t.p, t.len, -1, &pv->data, &scale) < 0) {
		return -EINVAL;
	}
	pv->fields[0].u.i = scale;
	pv->fields[1].u.s = (struct slice){ pv->data.data, pv->data.len };
	return 0;
}

/*
 * PostgreSQL's money output under lc_monetary=C (the default of initdb without a locale, and
 * the only form pgjdbc's PGmoney reads): "[-]$d,ddd.dd". Its number as plain text into @out.
 */
static bool
money_text(struct slice t, struct buf *out)
{
	size_t i = 0;
	bool digits = false;

	if (i < t.len && t.p[i] == '-') {
		buf_add_char(out, '-');
		i++;
	}
	if (i >= t.len || t.p[i++] != '$') {
		return false;
	}
	for (; i < t.len; i++) {
		char ch = t.p[i];

		if (ch >= '0' && ch <= '9') {
			buf_add_char(out, ch);
			digits = true;
		} else if (ch == '.' && digits && !strchr(buf_cstr(out), '.')) {
			buf_add_char(out, ch);
		} else if (ch != ',' || !digits) {
			return false;
		}
	}
	return digits;
}

/*
 * The decimal text @s ("1234.56", "-0.01", "1.5E3") as BigDecimal reads it, set to @scale with
 * RoundingMode.HALF_UP: the unscaled digits into @out, their sign in @neg.
 */
static void
java_decimal_scaled(const char *s, int scale, struct buf *out, bool *neg)
{
	struct buf d = BUF_INIT;
	long exp = 0;
	int frac = 0;
	bool in_frac = false;

	*neg = *s == '-';
	s += *neg;
	for (; *s && *s != 'E'; s++) {
		if (*s == '.') {
			in_frac = true;
		} else {
			buf_add_char(&d, *s);
			frac += in_frac;
		}
	}
	if (*s == 'E') {
		exp = strtol(s + 1, NULL, 10);
	}
	/* value = d * 10^(exp - frac); wanted: d * 10^(exp - frac + scale) */
	exp = exp - frac + scale;
	if (exp >= 0) {
		for (long k = 0; k < exp; k++) {
			buf_add_char(&d, '0');
		}
	} else {
		size_t keep = (size_t)-exp >= d.len ? 0 : d.len - (size_t)-exp;
		bool up = (size_t)-exp <= d.len && d.data[keep] >= '5';

		d.len = keep;
		if (up) {
			size_t k = d.len;

			while (k > 0 && d.data[k - 1] == '9') {
				d.data[--k] = '0';
			}
			if (k == 0) {
				buf_add_char(&d, '0');
				memmove(d.data + 1, d.data, d.len - 1);
				d.data[0] = '1';
			} else {
				d.data[k - 1]++;
			}
		}
	}
	if (d.len == 0) {
		buf_add_char(&d, '0');
	}
	buf_add(out, d.data, d.len);
	buf_fini(&d);
}

int
pgvalue_money(struct slice t, struct pgvalue_modes modes, struct pgvalue *pv)
{
	struct buf num = BUF_INIT, digits = BUF_INIT;
	bool neg;

	if (modes.decimal == PGVALUE_DECIMAL_PRECISE) {
		pv->v.type = CVALUE_BYTES;
		pv->v.name = CVALUE_DECIMAL_NAME;
		pv->v.version = 1;
		snprintf(pv->scale_txt, sizeof(pv->scale_txt), "%d", modes.money_digits);
		pv->params[0] = (struct cvalue_param){ "scale", pv->scale_txt };
		pv->v.params = pv->params;
		pv->v.nparams = 1;
	} else {
		pv->v.type =
			modes.decimal == PGVALUE_DECIMAL_DOUBLE ? CVALUE_FLOAT64 : CVALUE_STRING;
	}
	if (pv->v.is_null) {
		return 0;
	}
	if (!money_text(t, &num)) {
		buf_fini(&num);
		return -EINVAL;
	}
	/* the exact decimal (the compat suite: money's largest value keeps every digit) */
	if (modes.decimal == PGVALUE_DECIMAL_DOUBLE) {
		pv->v.u.f = strtod(buf_cstr(&num), NULL);
	} else if (modes.decimal == PGVALUE_DECIMAL_STRING) {
		buf_add(&pv->data, num.data, num.len);
	} else {
		/* setScale(money.fraction.digits, HALF_UP) */
		java_decimal_scaled(buf_cstr(&num), modes.money_digits, &digits, &neg);
		digits_to_twos(digits.data, digits.len, neg, &pv->data);
	}
	if (modes.decimal != PGVALUE_DECIMAL_DOUBLE) {
		pv->v.u.s = (struct slice){ pv->data.data, pv->data.len };
	}
	buf_fini(&num);
	buf_fini(&digits);
	return 0;
}
