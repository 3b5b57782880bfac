/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The records that are not outbox rows but leave through the router's converters: dead letters
 * for poison rows, Debezium's heartbeat records and its records of logical decoding messages.
 */
#include "outboxd/connect/router.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"
#include "router_int.h"

void
router_dead_letter(struct router *r, const struct router_row *row,
		   const struct router_dead_letter_info *info, struct record *out)
{
	const struct relcache_rel *rel = row->rel;
	const struct slice *key = router_raw_column(row, r->col_key);
	const struct slice *id = router_raw_column(row, r->col_id);
	const struct slice *payload = router_raw_column(row, r->col_payload);
	char err[256];
	const struct router_view vw = {
		.row = *row, .out = out, .errbuf = err, .errlen = sizeof(err)
	};

	record_reset(out);
	buf_add_str(&out->topic, info->topic);
	/* The key the record would have had; its raw text when even that cannot be converted. */
	if (!row->tup || router_column(r, &vw, r->col_key, SLOT_KEY) != 0 ||
	    convert_write(r->key_conv, &r->vals[SLOT_KEY].v, &out->key, &out->key_null, err,
			  sizeof(err)) < 0) {
		buf_reset(&out->key);
		out->key_null = key == NULL;
		if (key) {
			buf_add(&out->key, key->p, key->len);
		}
	}
	out->value_null = !payload || !info->keep_value;
	if (!out->value_null) {
		buf_add(&out->value, payload->p, payload->len);
	}
	if (id) {
		record_add_text_header(out, "id", id->p, id->len);
	}
	record_add_text_header(out, "__outboxd.error.reason", info->reason, strlen(info->reason));
	record_add_text_header(out, "__outboxd.error.commit.lsn", info->commit_lsn,
			       strlen(info->commit_lsn));
	record_add_text_header(out, "__outboxd.error.table", rel->nspname, strlen(rel->nspname));
	buf_add_char(&out->headers[out->nheaders - 1].value, '.');
	buf_add_str(&out->headers[out->nheaders - 1].value, rel->relname);
}

int
router_heartbeat(struct router *r, const char *topic, int64_t now_ms, struct record *out,
		 char *errbuf, size_t errlen)
{
	struct cvalue server = { .type = CVALUE_STRING,
				 .field = "serverName",
				 .u.s = slice_from_str(r->topic_prefix) };
	struct cvalue ts = { .type = CVALUE_INT64, .field = "ts_ms", .u.i = now_ms };
	const struct cvalue key = { .type = CVALUE_STRUCT,
				    .name = "io.debezium.connector.common.ServerNameKey",
				    .version = 1,
				    .u.fields = { &server, 1 } };
	const struct cvalue value = { .type = CVALUE_STRUCT,
				      .name = "io.debezium.connector.common.Heartbeat",
				      .version = 1,
				      .u.fields = { &ts, 1 } };

	record_reset(out);
	buf_add_str(&out->topic, topic);
	/* Debezium's heartbeat SourceRecord names partition 0 and carries no headers. */
	out->partition = r->server ? -1 : 0;
	if (convert_write(r->key_conv, &key, &out->key, &out->key_null, errbuf, errlen) < 0 ||
	    convert_write(r->value_conv, &value, &out->value, &out->value_null, errbuf, errlen) <
		    0) {
		return -EINVAL;
	}
	return 0;
}

/* Debezium's PostgreSQL source block schema (io.debezium.connector.postgresql.Source v1). */
static const struct cvalue_param snapshot_allowed[] = {
	{ "allowed", "true,first,first_in_data_collection,last_in_data_collection,last,false,"
		     "incremental" },
};
static const struct cvalue snapshot_default = { .type = CVALUE_STRING,
						.optional = true,
						.name = "io.debezium.data.Enum",
						.version = 1,
						.u.s = { "false", 5 } };

static struct cvalue
str_field(const char *field, bool optional, const char *v)
{
	return (struct cvalue){ .type = CVALUE_STRING,
				.optional = optional,
				.field = field,
				.is_null = v == NULL,
				.u.s = slice_from_str(v) };
}

static struct cvalue
i64_field(const char *field, bool optional, bool present, int64_t v)
{
	return (struct cvalue){ .type = CVALUE_INT64,
				.optional = optional,
				.field = field,
				.is_null = !present,
				.u.i = v };
}

/* The source block of a message: @src holds 16 fields; strings point into @seq and @info. */
static void
message_source(const struct router *r, const struct pgoutput_msg *m,
	       const struct router_message_info *info, const char *seq, struct cvalue *src)
{
	int64_t us = info->commit_time_us;
	/* null for a message: JsonConverter writes the schema default, Struct.toString skips it */
	struct cvalue snap = str_field("snapshot", true, NULL);

	snap.name = "io.debezium.data.Enum";
	snap.version = 1;
	snap.params = snapshot_allowed;
	snap.nparams = 1;
	snap.def = &snapshot_default;
	src[0] = str_field("version", false, "3.6.1.Final");
	src[1] = str_field("connector", false, "postgresql");
	src[2] = str_field("name", false, r->topic_prefix);
	src[3] = i64_field("ts_ms", false, true, us / 1000);
	src[4] = snap;
	src[5] = str_field("db", false, info->dbname);
	src[6] = str_field("sequence", true, seq);
	src[7] = i64_field("ts_us", true, true, us);
	src[8] = i64_field("ts_ns", true, true, us * 1000);
	src[9] = str_field("schema", false, "");
	src[10] = str_field("table", false, "");
	src[11] = i64_field("txId", true, info->has_xid, info->xid);
	src[12] = i64_field("lsn", true, true, (int64_t)m->u.message.lsn);
	src[13] = i64_field("xmin", true, false, 0);
	src[14] = str_field("origin", true, NULL);
	src[15] = i64_field("origin_lsn", true, false, 0);
}

int
router_message(struct router *r, const struct pgoutput_msg *m,
	       const struct router_message_info *info, struct record *out, char *errbuf,
	       size_t errlen)
{
	struct cvalue src[16], block[3], msg[2], top[5];
	struct cvalue kf = { .type = CVALUE_STRING,
			     .optional = true,
			     .field = "prefix",
			     .u.s = m->u.message.prefix };
	const struct cvalue key = { .type = CVALUE_STRUCT,
				    .name = "io.debezium.connector.postgresql.MessageKey",
				    .version = 1,
				    .u.fields = { &kf, 1 } };
	struct cvalue value = { .type = CVALUE_STRUCT,
				.name = "io.debezium.connector.postgresql.MessageValue",
				.version = 1,
				.u.fields = { top, 5 } };
	struct buf seq = BUF_INIT;
	int rc = 0;

	/* sequence: ["<last commit LSN>","<this LSN>"] as decimal strings, JSON in a string */
	if (info->has_last_commit) {
		buf_add_fmt(&seq, "[\"%llu\",", (unsigned long long)info->last_commit_lsn);
	} else {
		buf_add_str(&seq, "[null,");
	}
	buf_add_fmt(&seq, "\"%llu\"]", (unsigned long long)m->u.message.lsn);
	message_source(r, m, info, buf_cstr(&seq), src);
	block[0] = str_field("id", false, "");
	block[1] = i64_field("total_order", false, true, 0);
	block[2] = i64_field("data_collection_order", false, true, 0);
	msg[0] = (struct cvalue){ .type = CVALUE_STRING,
				  .optional = true,
				  .field = "prefix",
				  .u.s = m->u.message.prefix };
	msg[1] = (struct cvalue){ .type = CVALUE_BYTES,
				  .optional = true,
				  .field = "content",
				  .u.s = m->u.message.content };
	top[0] = str_field("op", false, "m");
	top[1] = i64_field("ts_ms", true, true, info->now_ms);
	top[2] = (struct cvalue){ .type = CVALUE_STRUCT,
				  .field = "source",
				  .name = "io.debezium.connector.postgresql.Source",
				  .version = 1,
				  .u.fields = { src, 16 } };
	top[3] = (struct cvalue){ .type = CVALUE_STRUCT,
				  .optional = true,
				  .is_null = true,
				  .field = "transaction",
				  .name = "event.block",
				  .version = 1,
				  .u.fields = { block, 3 } };
	top[4] = (struct cvalue){ .type = CVALUE_STRUCT,
				  .field = "message",
				  .name = "io.debezium.connector.postgresql.Message",
				  .version = 1,
				  .u.fields = { msg, 2 } };
	record_reset(out);
	buf_add_fmt(&out->topic, "%s.message", r->topic_prefix);
	if (convert_write(r->key_conv, &key, &out->key, &out->key_null, errbuf, errlen) < 0 ||
	    convert_write(r->value_conv, &value, &out->value, &out->value_null, errbuf, errlen) <
		    0) {
		rc = -EINVAL;
	}
	buf_fini(&seq);
	return rc;
}
