/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer entry point for pgvalue, which parses PostgreSQL's text output of a column. The
 * first input byte chooses the column (bits 0-5: a row of CASES below, type OID, typmod and
 * binary.handling.mode; bit 6: NOT NULL; bit 7: the value is SQL NULL), the rest is the text,
 * from an exact-size heap copy so an overread shows. What a conversion gives is checked
 * against the text (fuzz_pgvalue_check.c), and a broken property abort()s.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_pgvalue_check.h"
#include "outboxd/connect/pgvalue.h"
#include "outboxd/pg/pgtype.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* NUMERIC(p, s) as a typmod. */
#define TYPMOD(p, s) ((int32_t)((((p) << 16) | ((s)&0x7ff)) + 4))

static const struct fuzz_pgvalue_case CASES[] = {
	{ PGTYPE_BOOL, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_INT2, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_INT4, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_INT8, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_OID, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_FLOAT4, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_FLOAT8, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_NUMERIC, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_NUMERIC, TYPMOD(5, 2), PGVALUE_BINARY_BYTES },
	{ PGTYPE_NUMERIC, TYPMOD(38, 0), PGVALUE_BINARY_BYTES },
	{ PGTYPE_NUMERIC, TYPMOD(10, 4), PGVALUE_BINARY_BYTES },
	{ PGTYPE_NUMERIC, TYPMOD(1000, 500), PGVALUE_BINARY_BYTES },
	{ PGTYPE_NUMERIC, TYPMOD(2, -1), PGVALUE_BINARY_BYTES },
	{ PGTYPE_BYTEA, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_BYTEA, -1, PGVALUE_BINARY_BASE64 },
	{ PGTYPE_BYTEA, -1, PGVALUE_BINARY_BASE64_URL_SAFE },
	{ PGTYPE_BYTEA, -1, PGVALUE_BINARY_HEX },
	{ PGTYPE_DATE, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_TIMESTAMP, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_TIMESTAMP, 0, PGVALUE_BINARY_BYTES },
	{ PGTYPE_TIMESTAMP, 3, PGVALUE_BINARY_BYTES },
	{ PGTYPE_TIMESTAMP, 6, PGVALUE_BINARY_BYTES },
	{ PGTYPE_TIMESTAMPTZ, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_TIMESTAMPTZ, 0, PGVALUE_BINARY_BYTES },
	{ PGTYPE_TIMESTAMPTZ, 2, PGVALUE_BINARY_BYTES },
	{ PGTYPE_TIMESTAMPTZ, 3, PGVALUE_BINARY_BYTES },
	{ PGTYPE_TIMESTAMPTZ, 6, PGVALUE_BINARY_BYTES },
	{ PGTYPE_UUID, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_JSON, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_JSONB, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_XML, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_TEXT, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_VARCHAR, 14, PGVALUE_BINARY_BYTES },
	{ PGTYPE_BPCHAR, 8, PGVALUE_BINARY_BYTES },
	{ PGTYPE_NAME, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_CHAR, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_INT4_ARRAY, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_TEXT_ARRAY, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_UUID_ARRAY, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_JSONB_ARRAY, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_TIME, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_INTERVAL, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_MONEY, -1, PGVALUE_BINARY_BYTES },
	{ PGTYPE_POINT, -1, PGVALUE_BINARY_BYTES },
	{ 603, -1, PGVALUE_BINARY_BYTES },   /* box, which outboxd does not convert */
	{ 16385, -1, PGVALUE_BINARY_BYTES }, /* a user-defined type (an enum, a domain) */
};

#define NCASES (sizeof(CASES) / sizeof(CASES[0]))

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct fuzz_pgvalue_case *c;
	struct relcache_col col = { .name = "col" };
	struct pgoutput_col pc = { 't', { NULL, 0 } };
	struct pgvalue pv = { 0 };
	char err[512], *copy;
	int rc;

	if (size < 1) {
		return 0;
	}
	c = &CASES[(data[0] & 0x3f) % NCASES];
	col.type_oid = c->oid;
	col.typmod = c->typmod;
	copy = malloc(size - 1 ? size - 1 : 1);
	if (!copy) {
		abort();
	}
	memcpy(copy, data + 1, size - 1);
	if (data[0] & 0x80) {
		pc.kind = 'n';
	} else {
		pc.value = (struct slice){ copy, size - 1 };
	}
	err[0] = '\0';
	rc = pgvalue_convert(&col, &pc, data[0] & 0x40,
			     (struct pgvalue_modes){ .binary = c->binary }, &pv, err, sizeof(err));
	fuzz_pgvalue_check(c, &pc, &pv, rc, err);
	pgvalue_fini(&pv);
	free(copy);
	return 0;
}
