/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bit and bit varying, as Debezium's PostgresValueConverter converts them: bit(1) a BOOLEAN;
 * any other an io.debezium.data.Bits, the bits read as one binary number (the first the most
 * significant) in java.util.BitSet.toByteArray()'s order: little-endian bytes, none past the
 * highest set bit (so all zeros are no bytes); parameter "length", the column's (2147483647
 * unbounded).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "outboxd/connect/pgvalue.h"
#include "outboxd/pg/pgtype.h"
#include "pgvalue_int.h"

int
pgvalue_bits(const struct relcache_col *col, struct slice t, struct pgvalue *pv)
{
	bool one = col->type_oid == PGTYPE_BIT && col->typmod <= 1;
	size_t nbytes;

	if (one) {
		pv->v.type = CVALUE_BOOLEAN;
		if (pv->v.is_null) {
			return 0;
		}
		if (t.len != 1 || (t.p[0] != '0' && t.p[0] != '1')) {
			return -EINVAL;
		}
		pv->v.u.b = t.p[0] == '1';
		return 0;
	}
	pv->v.type = CVALUE_BYTES;
	pv->v.name = "io.debezium.data.Bits";
	pv->v.version = 1;
	snprintf(pv->scale_txt, sizeof(pv->scale_txt), "%d",
		 col->typmod > 0 ? (int)col->typmod : 2147483647);
	pv->params[0] = (struct cvalue_param){ "length", pv->scale_txt };
	pv->v.params = pv->params;
	pv->v.nparams = 1;
	if (pv->v.is_null) {
		return 0;
	}
	/* bit k of the number is character len-1-k */
	nbytes = (t.len + 7) / 8;
	buf_reset(&pv->data);
	for (size_t b = 0; b < nbytes; b++) {
		unsigned char byte = 0;

		for (size_t k = 0; k < 8 && b * 8 + k < t.len; k++) {
			char ch = t.p[t.len - 1 - (b * 8 + k)];

			if (ch != '0' && ch != '1') {
				return -EINVAL;
			}
			byte |= (unsigned char)((ch == '1') << k);
		}
		buf_add_char(&pv->data, (char)byte);
	}
	while (pv->data.len > 0 && pv->data.data[pv->data.len - 1] == 0) {
		pv->data.len--;
	}
	pv->v.u.s = (struct slice){ pv->data.data, pv->data.len };
	return 0;
}
