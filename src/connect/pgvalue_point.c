/* SPDX-License-Identifier: Apache-2.0 */
/*
 * point, as Debezium's PostgresValueConverter converts it: an io.debezium.data.geometry.Point
 * struct {x, y, wkb, srid}, wkb the little-endian Well-Known Binary of the point (byte order
 * 1, type 1, x, y as IEEE doubles), srid null.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/pgvalue.h"
#include "pgvalue_int.h"

/* A float8 of PostgreSQL's text output (extra_float_digits=3) ending at @stop; false if not. */
static bool
coord(const char **p, const char *end, char stop, double *ret)
{
	char tmp[64], *e;
	const char *s = *p;
	size_t n = 0;

	while (s + n < end && s[n] != stop) {
		n++;
	}
	if (n == 0 || n >= sizeof(tmp) || s + n == end) {
		return false;
	}
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	*ret = strtod(tmp, &e);
	*p = s + n + 1;
	return *e == '\0' && (tmp[0] == '-' || (tmp[0] >= '0' && tmp[0] <= '9') ||
			      strcmp(tmp, "NaN") == 0 || strcmp(tmp, "Infinity") == 0);
}

static void
le_double(struct buf *out, double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	for (int i = 0; i < 8; i++) {
		buf_add_char(out, (char)(u >> (8 * i)));
	}
}

int
pgvalue_point(struct slice t, struct pgvalue *pv)
{
	const char *p = t.p, *end = t.p + t.len;
	double x, y;

	pv->v.type = CVALUE_STRUCT;
	pv->v.name = "io.debezium.data.geometry.Point";
	pv->v.version = 1;
	pv->v.doc = "Geometry (POINT)";
	pv->fields[0] = (struct cvalue){ .type = CVALUE_FLOAT64, .field = "x" };
	pv->fields[1] = (struct cvalue){ .type = CVALUE_FLOAT64, .field = "y" };
	pv->fields[2] = (struct cvalue){ .type = CVALUE_BYTES, .optional = true, .field = "wkb" };
	pv->fields[3] = (struct cvalue){
		.type = CVALUE_INT32, .optional = true, .is_null = true, .field = "srid"
	};
	pv->v.u.fields.v = pv->fields;
	pv->v.u.fields.n = 4;
	if (pv->v.is_null) {
		return 0;
	}
	if (t.len < 5 || *p++ != '(' || !coord(&p, end, ',', &x) || !coord(&p, end, ')', &y) ||
	    p != end) {
		return -EINVAL;
	}
	pv->fields[0].u.f = x;
	pv->fields[1].u.f = y;
	buf_reset(&pv->data);
	buf_add(&pv->data, "\x01\x01\x00\x00\x00", 5);
	le_double(&pv->data, x);
	le_double(&pv->data, y);
	pv->fields[2].u.s = (struct slice){ pv->data.data, pv->data.len };
	return 0;
}
