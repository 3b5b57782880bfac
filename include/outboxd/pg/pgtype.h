/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PG_PGTYPE_H
#define OUTBOXD_PG_PGTYPE_H

/*
 * The OIDs of PostgreSQL's built-in types that outboxd names (src/include/catalog/pg_type.dat):
 * fixed, because they are the catalog's initial data. A Relation message carries a column's
 * type as one of these; pgvalue maps them to Connect schemas as Debezium does.
 */
enum pgtype_oid {
	PGTYPE_BOOL = 16,
	PGTYPE_BYTEA = 17,
	PGTYPE_CHAR = 18,
	PGTYPE_NAME = 19,
	PGTYPE_INT8 = 20,
	PGTYPE_INT2 = 21,
	PGTYPE_INT4 = 23,
	PGTYPE_TEXT = 25,
	PGTYPE_OID = 26,
	PGTYPE_JSON = 114,
	PGTYPE_XML = 142,
	PGTYPE_POINT = 600,
	PGTYPE_CIDR = 650,
	PGTYPE_FLOAT4 = 700,
	PGTYPE_FLOAT8 = 701,
	PGTYPE_MACADDR8 = 774,
	PGTYPE_MONEY = 790,
	PGTYPE_MACADDR = 829,
	PGTYPE_INET = 869,
	PGTYPE_INT4_ARRAY = 1007,
	PGTYPE_TEXT_ARRAY = 1009,
	PGTYPE_BPCHAR = 1042,
	PGTYPE_VARCHAR = 1043,
	PGTYPE_DATE = 1082,
	PGTYPE_TIME = 1083,
	PGTYPE_TIMESTAMP = 1114,
	PGTYPE_TIMESTAMPTZ = 1184,
	PGTYPE_INTERVAL = 1186,
	PGTYPE_TIMETZ = 1266,
	PGTYPE_NUMERIC = 1700,
	PGTYPE_UUID = 2950,
	PGTYPE_UUID_ARRAY = 2951,
	PGTYPE_JSONB = 3802,
	PGTYPE_JSONB_ARRAY = 3807,
};

#endif
