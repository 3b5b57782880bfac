/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_PGVALUE_H
#define OUTBOXD_PGVALUE_H

/*
 * PostgreSQL text output of one column -> the Connect value and schema Debezium's
 * PostgresValueConverter builds for it (reference debezium-outbox.md §3.7), under the session
 * settings outboxd pins (DateStyle=ISO, TimeZone=UTC, bytea_output=hex, extra_float_digits=3).
 * Pure: no I/O.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outboxd/connect/cvalue.h"
#include "outboxd/pg/pgoutput.h"
#include "outboxd/pg/relcache.h"
#include "outboxd/util/buf.h"

/* binary.handling.mode */
enum pgvalue_binary {
	PGVALUE_BINARY_BYTES,
	PGVALUE_BINARY_BASE64,
	PGVALUE_BINARY_BASE64_URL_SAFE,
	PGVALUE_BINARY_HEX,
};

/* decimal.handling.mode */
enum pgvalue_decimal {
	PGVALUE_DECIMAL_PRECISE, /* Decimal, or VariableScaleDecimal when unconstrained */
	PGVALUE_DECIMAL_DOUBLE,	 /* FLOAT64 */
	PGVALUE_DECIMAL_STRING,	 /* STRING, the plain text */
};

/* time.precision.mode, in the order of its values in router_opts.c */
enum pgvalue_time {
	PGVALUE_TIME_ADAPTIVE,			 /* time(0-3) Time, else MicroTime */
	PGVALUE_TIME_ADAPTIVE_TIME_MICROSECONDS, /* every time MicroTime */
	PGVALUE_TIME_CONNECT,	   /* Connect's Date, Time and Timestamp, in milliseconds */
	PGVALUE_TIME_ISOSTRING,	   /* IsoDate, IsoTime, IsoTimestamp text */
	PGVALUE_TIME_MICROSECONDS, /* every time and timestamp in microseconds */
	PGVALUE_TIME_NANOSECONDS,  /* NanoTime, NanoTimestamp */
};

/* interval.handling.mode */
enum pgvalue_interval {
	PGVALUE_INTERVAL_NUMERIC, /* MicroDuration */
	PGVALUE_INTERVAL_STRING,  /* Interval, ISO 8601 text */
};

/* The connector's type options a conversion follows. */
struct pgvalue_modes {
	enum pgvalue_binary binary;
	enum pgvalue_decimal decimal;
	enum pgvalue_time time;
	enum pgvalue_interval interval;
	int money_digits; /* money.fraction.digits */
	bool hstore_map;  /* hstore.handling.mode=map (the router converts hstore) */
};

/* A converted column. @v borrows from the other members: do not copy the struct. */
struct pgvalue {
	struct cvalue v;
	struct cvalue fields[4]; /* VariableScaleDecimal {scale, value}, Point {x, y, wkb, srid} */
	struct cvalue_param params[2]; /* Decimal scale, connect.decimal.precision */
	char scale_txt[16];
	char prec_txt[16];
	struct buf data; /* owned: decoded bytes or reformatted text */
	struct buf raw;	 /* owned: an array element's text, unquoted */
	/* an array (pgvalue_array.c): its elements, their cvalues side by side, its item schema */
	struct pgvalue *elems; /* owned */
	struct cvalue *evals;  /* owned */
	size_t elemcap;
	struct pgvalue *item; /* owned */
	struct cvalue *kv;    /* owned: a map's entries (pgvalue_hstore_map()) */
	size_t kvcap;
};

/**
 * pgvalue_converts() - whether pgvalue_convert() converts values of type @type_oid (as the
 * Relation message or pg_attribute.atttypid gives it). False for the built-in types outboxd does
 * not convert yet (the geometric types but point, multiranges, the arrays pgvalue_array.c does
 * not take): every value of such a column is refused, so a configuration that places one is
 * refused at start-up. Any other type converts (unknown ones as strings; typecheck.h judges
 * those from the catalog), though a single value may still be refused (pgvalue_convert()).
 */
bool pgvalue_converts(uint32_t type_oid);

/**
 * pgvalue_known() - whether @type_oid is one of the built-in types pgvalue_convert() converts
 * as Debezium does by its number alone (the typed ones and the plain strings). Every other
 * type (enums, domains, network types, extension types, ...) is judged from the catalog
 * (typecheck.h).
 */
bool pgvalue_known(uint32_t type_oid);

/**
 * pgvalue_hstore_json() - @t, the text of an hstore column (NULL when @pv's value is), into @pv
 * as Debezium's hstore.handling.mode=json writes it: io.debezium.data.Json text of a JSON object
 * in java.util.HashMap's order. The router calls it for the columns whose type the catalog
 * named hstore (hstore's number differs per database). Return: 0, or -EINVAL (not hstore's
 * output, or a HashMap bucket of 8 keys), -EILSEQ (not UTF-8).
 */
int pgvalue_hstore_json(struct slice t, struct pgvalue *pv);

/**
 * pgvalue_hstore_map() - @t, the text of an hstore column, into @pv as Debezium's
 * hstore.handling.mode=map writes it: a Connect MAP of STRING keys and optional STRING values
 * in java.util.HashMap's order. Return: as pgvalue_hstore_json().
 */
int pgvalue_hstore_map(struct slice t, struct pgvalue *pv);

/**
 * pgvalue_text_array() - @t, the text of array column @col (NULL when @pv's value is), into @pv
 * as a Connect ARRAY of strings under the item schema @item (borrowed: its name, parameters
 * and optionality; an Enum's for an array of enums), as Debezium writes an array of a type it
 * reads as text. A NULL element under a required @item nulls the array, as Debezium's does.
 * The router calls it for the arrays the catalog named (router_array_type()).
 * Return: 0, or -EINVAL (not PostgreSQL's array output, multi-dimensional), -EILSEQ.
 */
int pgvalue_text_array(const struct relcache_col *col, struct slice t, const struct cvalue *item,
		       struct pgvalue *pv);

/* pgvalue_fini() - free the owned buffer; the struct may be reused after. */
void pgvalue_fini(struct pgvalue *pv);

/**
 * pgvalue_convert() - convert one column value.
 * @col: borrowed; name, type OID and typmod.
 * @pc: borrowed; the value ('t' text or 'n' null).
 * @notnull: the column is NOT NULL (the schema is then required).
 * @modes: binary.handling.mode, decimal.handling.mode, time.precision.mode and
 *         interval.handling.mode.
 * @pv: filled; its cvalue borrows from @pc's bytes and from @pv itself.
 *
 * Return: 0, or -EINVAL (a poison value: unsupported type or value, invalid UTF-8, unchanged
 * TOAST, binary format) with the reason in @errbuf.
 */
int pgvalue_convert(const struct relcache_col *col, const struct pgoutput_col *pc, bool notnull,
		    struct pgvalue_modes modes, struct pgvalue *pv, char *errbuf, size_t errlen);

#endif
