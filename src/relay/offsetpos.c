/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/relay/offsetpos.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "outboxd/connect/jsonr.h"
#include "outboxd/connect/jsonw.h"

void
offsetpos_key(struct buf *out, const char *name, const char *server)
{
	buf_add_char(out, '[');
	jsonw_string(out, name, strlen(name));
	buf_add_str(out, ",{\"server\":");
	jsonw_string(out, server, strlen(server));
	buf_add_str(out, "}]");
}

bool
offsetpos_key_is(const char *s, size_t len, const char *name, const char *server)
{
	struct buf want = BUF_INIT;
	bool is;

	/* Connect writes its keys with one converter: the same bytes or another connector's */
	offsetpos_key(&want, name, server);
	is = s && len == want.len && memcmp(s, buf_cstr(&want), len) == 0;
	buf_fini(&want);
	return is;
}

static void
member(struct buf *out, const char *name, int64_t v)
{
	buf_add_fmt(out, "%s\"%s\":", out->data[out->len - 1] == '{' ? "" : ",", name);
	jsonw_int(out, v);
}

void
offsetpos_value(struct buf *out, const struct offsetpos *p)
{
	/* Java's HashMap order for these keys, as Debezium's getOffset() map comes out */
	buf_add_char(out, '{');
	member(out, "lsn_proc", (int64_t)p->lsn_proc);
	if (p->has_events) {
		member(out, "lsn_events_processed", p->events);
	}
	buf_add_str(out, ",\"messageType\":");
	jsonw_string(out, p->message_type, strlen(p->message_type));
	member(out, "lsn_commit", (int64_t)p->lsn_commit);
	member(out, "lsn", (int64_t)p->lsn);
	if (p->has_txid) {
		member(out, "txId", p->txid);
	}
	member(out, "ts_usec", p->ts_usec);
	buf_add_char(out, '}');
}

/* The integer member @name of @obj: 1 found, 0 absent, -1 not a non-negative long. */
static int
long_member(const struct jsonr_node *obj, const char *name, int64_t *ret)
{
	for (size_t i = 0; i < obj->n; i++) {
		const struct jsonr_node *k = &obj->kids[i];

		if (strcmp(k->key, name) != 0) {
			continue;
		}
		if ((k->type != JSONR_INT && k->type != JSONR_LONG) || k->i < 0) {
			return -1;
		}
		*ret = k->i;
		return 1;
	}
	return 0;
}

static int
fields(const struct jsonr_node *v, struct offsetpos *out, char *errbuf, size_t errlen)
{
	static const char *const required[] = { "lsn", "lsn_proc", "lsn_commit", "ts_usec" };
	int64_t got[4];
	int tx, ev;

	for (size_t i = 0; i < 4; i++) {
		if (long_member(v, required[i], &got[i]) != 1) {
			snprintf(errbuf, errlen,
				 "\"%s\" is missing or not a non-negative integer: not a position "
				 "of Debezium's PostgreSQL connector",
				 required[i]);
			return -EPROTO;
		}
	}
	out->lsn = (lsn_t)got[0];
	out->lsn_proc = (lsn_t)got[1];
	out->lsn_commit = (lsn_t)got[2];
	out->ts_usec = got[3];
	tx = long_member(v, "txId", &out->txid);
	ev = long_member(v, "lsn_events_processed", &out->events);
	if (tx < 0 || ev < 0) {
		snprintf(errbuf, errlen, "\"txId\" or \"lsn_events_processed\" is not an integer");
		return -EPROTO;
	}
	out->has_txid = tx == 1;
	out->has_events = ev == 1;
	for (size_t i = 0; i < v->n; i++) {
		const struct jsonr_node *k = &v->kids[i];

		if (strcmp(k->key, "messageType") == 0 && k->type == JSONR_STRING &&
		    k->s.len < sizeof(out->message_type)) {
			memcpy(out->message_type, k->s.p, k->s.len);
			out->message_type[k->s.len] = '\0';
		}
	}
	return 0;
}

int
offsetpos_decode(const char *s, size_t len, struct offsetpos *out, char *errbuf, size_t errlen)
{
	struct jsonr *r;
	const struct jsonr_node *v;
	int rc;

	*out = (struct offsetpos){ 0 };
	if (!s) {
		return -ENOENT;
	}
	r = jsonr_new();
	if (jsonr_parse(r, s, len, &v) != 0) {
		snprintf(errbuf, errlen, "not JSON");
		rc = -EPROTO;
	} else if (v->type == JSONR_NULL) {
		rc = -ENOENT; /* JsonConverter's null: a tombstone written as "null" */
	} else if (v->type != JSONR_OBJECT) {
		snprintf(errbuf, errlen, "not a JSON object");
		rc = -EPROTO;
	} else {
		rc = fields(v, out, errbuf, errlen);
	}
	jsonr_free(r);
	return rc;
}

bool
offsetpos_slot_behind(const struct offsetpos *p, lsn_t slot_confirmed)
{
	return slot_confirmed <= p->lsn_commit;
}

bool
offsetpos_txn_in(const struct offsetpos *p, lsn_t end_lsn)
{
	return end_lsn <= p->lsn_commit;
}

bool
offsetpos_event_in(const struct offsetpos *p, lsn_t lsn, int64_t nth)
{
	if (p->lsn_proc <= p->lsn_commit) {
		return false; /* a position between transactions names no event inside one */
	}
	if (lsn != p->lsn_proc) {
		return lsn < p->lsn_proc;
	}
	return !p->has_events || nth <= p->events;
}
