/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The publish path over a sink that is not Kafka (written here, in memory): what publish.c does
 * with each answer of the seam, with no librdkafka underneath. A record taken, a full queue kept
 * and retried with its token, a record over the sink's size halting with the sink's own bound and
 * words, a
 * failed report blamed, a fatal error counted once, a precondition named after the sink's kind.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/obs/metrics.h"
#include "outboxd/pipeline/publish.h"
#include "outboxd/sink/sink.h"

struct memsink {
	struct sink base;
	sink_on_delivery on_delivery;
	void *opaque;
	uint64_t queued[64];
	size_t nqueued, capacity, max_bytes;
	bool fail_next; /* the next report is a failure */
	char fatal[64], precondition[64];
	struct sink_failure failure;
};

static struct memsink *last; /* the sink publish_new() opened last */

static struct memsink *
ms(const struct sink *s)
{
	return (struct memsink *)s;
}

static int
m_send(struct sink *s, const struct sink_record *rec, uint64_t token, char *errbuf, size_t errlen)
{
	struct memsink *m = ms(s);

	if (m->fatal[0]) {
		snprintf(errbuf, errlen, "%s", m->fatal);
		return -ESHUTDOWN;
	}
	if (rec->value_len > m->max_bytes) {
		return -EMSGSIZE;
	}
	if (m->nqueued == m->capacity) {
		return -EAGAIN;
	}
	m->queued[m->nqueued++] = token;
	return 0;
}

static void
m_serve(struct sink *s)
{
	struct memsink *m = ms(s);

	for (size_t i = 0; i < m->nqueued; i++) {
		bool ok = !m->fail_next;

		m->fail_next = false;
		m->failure = ok ? (struct sink_failure){ 0 } :
				  (struct sink_failure){ .id = "r1", .id_len = 2, .size = 5 };
		m->on_delivery(m->opaque, m->queued[i], ok, ok ? NULL : "refused by memsink");
	}
	m->nqueued = 0;
}

static int
m_flush(struct sink *s, int64_t timeout_ms)
{
	(void)timeout_ms;
	m_serve(s);
	return 0;
}

static int
m_wake_fd(const struct sink *s)
{
	(void)s;
	return -1;
}

static bool
m_text(const char *text, char *errbuf, size_t errlen)
{
	if (errbuf && text[0]) {
		snprintf(errbuf, errlen, "%s", text);
	}
	return text[0] != '\0';
}

static bool
m_fatal(struct sink *s, char *errbuf, size_t errlen)
{
	return m_text(ms(s)->fatal, errbuf, errlen);
}

static bool
m_precondition(struct sink *s, char *errbuf, size_t errlen)
{
	return m_text(ms(s)->precondition, errbuf, errlen);
}

static int
m_queue_len(const struct sink *s)
{
	return (int)ms(s)->nqueued;
}

static struct sink_failure
m_report_failure(const struct sink *s)
{
	return ms(s)->failure;
}

static size_t
m_broker_state(const struct sink *s, int64_t now_us, char *out, size_t len)
{
	(void)s;
	(void)now_us;
	return (size_t)snprintf(out, len, "memory");
}

static int64_t
m_max_record_bytes(const struct sink *s)
{
	return (int64_t)ms(s)->max_bytes;
}

static int
m_discard(struct sink *s, int64_t inflight_ms, char *fatal, size_t fatallen)
{
	(void)inflight_ms;
	(void)fatal;
	(void)fatallen;
	if (last == ms(s)) {
		last = NULL;
	}
	free(s);
	return 0;
}

static const struct sink_ops memsink_ops = {
	.send = m_send,
	.serve = m_serve,
	.flush = m_flush,
	.wake_fd = m_wake_fd,
	.fatal = m_fatal,
	.precondition = m_precondition,
	.queue_len = m_queue_len,
	.report_failure = m_report_failure,
	.broker_state = m_broker_state,
	.max_record_bytes = m_max_record_bytes,
	.discard = m_discard,
};

static const struct sink_kind memsink_kind;

static int
m_open(const struct sink_params *p, struct sink **ret, char *errbuf, size_t errlen)
{
	struct memsink *m = calloc(1, sizeof(*m));

	(void)errbuf;
	(void)errlen;
	m->base = (struct sink){ .ops = &memsink_ops, .kind = &memsink_kind };
	m->on_delivery = p->on_delivery;
	m->opaque = p->opaque;
	m->capacity = 64;
	m->max_bytes = 100;
	last = m;
	*ret = &m->base;
	return 0;
}

static const struct sink_kind memsink_kind = { .name = "memory",
					       .client = "memory client",
					       .library = "libmemory",
					       .size_setting = "memory.max.bytes",
					       .size_fix = "raise memory.max.bytes",
					       .open = m_open };

/* What the source heard. */
struct heard {
	uint64_t produced[8], delivered[8];
	int nproduced, ndelivered, failed;
	char reason[128];
};

static void
on_produced(void *opaque, uint64_t token)
{
	struct heard *h = opaque;

	h->produced[h->nproduced++ % 8] = token;
}

static void
on_delivery(void *opaque, uint64_t token, bool ok, const char *reason)
{
	struct heard *h = opaque;

	if (ok) {
		h->delivered[h->ndelivered++ % 8] = token;
	} else {
		h->failed++;
		snprintf(h->reason, sizeof(h->reason), "%s", reason);
	}
}

struct fixture {
	struct metrics *m;
	struct publish_params pp;
	struct heard heard;
	struct publish *pub;
};

static void
open_path(struct fixture *f)
{
	const struct publish_source src = { on_produced, on_delivery, &f->heard };
	char err[256];

	f->m = metrics_new();
	f->pp = (struct publish_params){ .sink = { .kind = &memsink_kind }, .metrics = f->m };
	ck_assert_int_eq(publish_new(&f->pp, &src, &f->pub, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(last);
}

static void
close_path(struct fixture *f)
{
	publish_free(f->pub, PUBLISH_END_FINAL);
	ck_assert_ptr_null(last); /* the sink was discarded */
	metrics_free(f->m);
}

/* The scratch record with a value of @len bytes. */
static void
fill(struct publish *pub, size_t len)
{
	struct record *r = publish_scratch(pub);
	char v[256];

	memset(v, 'x', len);
	record_reset(r);
	buf_add_str(&r->topic, "orders");
	buf_add(&r->value, v, len);
	record_add_text_header(r, "id", "r1", 2);
}

static bool
rendered(struct metrics *m, const char *line)
{
	struct buf out = BUF_INIT;
	bool found;

	metrics_render(m, &out);
	found = strstr(buf_cstr(&out), line) != NULL;
	buf_fini(&out);
	return found;
}

START_TEST(test_taken_then_acknowledged)
{
	struct fixture f = { 0 };
	char why[256];

	open_path(&f);
	fill(f.pub, 5);
	ck_assert_int_eq(publish_scratch_send(f.pub, 7, NULL, 0, why, sizeof(why)), OUTCOME_OK);
	ck_assert_int_eq(f.heard.nproduced, 1);
	ck_assert_uint_eq(f.heard.produced[0], 7);
	ck_assert_int_eq(publish_queue_len(f.pub), 1);
	ck_assert_int_eq(publish_serve(f.pub, why, sizeof(why)), OUTCOME_OK);
	ck_assert_int_eq(f.heard.ndelivered, 1);
	ck_assert_uint_eq(f.heard.delivered[0], 7);
	ck_assert(rendered(f.m, "outboxd_records_published_total 1\n"));
	ck_assert(rendered(f.m, "outboxd_records_acknowledged_total 1\n"));
	close_path(&f);
}
END_TEST

START_TEST(test_full_queue_keeps_the_record_and_its_token)
{
	struct fixture f = { 0 };
	char why[256];

	open_path(&f);
	last->capacity = 0;
	fill(f.pub, 5);
	ck_assert_int_eq(publish_scratch_send(f.pub, 9, NULL, 0, why, sizeof(why)), OUTCOME_OK);
	ck_assert(publish_waiting(f.pub));
	ck_assert_int_eq(f.heard.nproduced, 0);
	ck_assert_int_eq(publish_retry(f.pub, why, sizeof(why)), OUTCOME_OK);
	ck_assert(publish_waiting(f.pub)); /* still full */
	last->capacity = 1;
	ck_assert_int_eq(publish_retry(f.pub, why, sizeof(why)), OUTCOME_OK);
	ck_assert(!publish_waiting(f.pub));
	ck_assert_uint_eq(f.heard.produced[0], 9);
	close_path(&f);
}
END_TEST

START_TEST(test_too_large_halts_with_the_sinks_bound)
{
	struct fixture f = { 0 };
	char why[512];

	open_path(&f);
	fill(f.pub, 150);
	ck_assert_int_eq(
		publish_scratch_send(f.pub, 3, "committing at", 0x16B3748, why, sizeof(why)),
		OUTCOME_HALT);
	ck_assert_msg(strstr(why, "halt: row id=r1 committing at 0/16B3748") == why, "%s", why);
	ck_assert_msg(strstr(why, "larger than memory.max.bytes (100); raise memory.max.bytes") !=
			      NULL,
		      "%s", why);
	close_path(&f);
}
END_TEST

START_TEST(test_failed_report_is_blamed)
{
	struct fixture f = { 0 };
	uint64_t token;
	const char *id, *reason;
	char why[256];

	open_path(&f);
	fill(f.pub, 5);
	ck_assert_int_eq(publish_scratch_send(f.pub, 4, NULL, 0, why, sizeof(why)), OUTCOME_OK);
	last->fail_next = true;
	ck_assert_int_eq(publish_serve(f.pub, why, sizeof(why)), OUTCOME_OK);
	ck_assert_int_eq(f.heard.failed, 1);
	ck_assert(publish_culprit(f.pub, &token, &id, &reason));
	ck_assert_uint_eq(token, 4);
	ck_assert_str_eq(id, "r1");
	ck_assert_str_eq(reason, "delivery failed: refused by memsink");
	close_path(&f);
}
END_TEST

START_TEST(test_fatal_restarts_and_counts_once)
{
	struct fixture f = { 0 };
	char why[256];

	open_path(&f);
	snprintf(last->fatal, sizeof(last->fatal), "the broker forgot us");
	ck_assert_int_eq(publish_serve(f.pub, why, sizeof(why)), OUTCOME_RESTART);
	ck_assert_str_eq(why, "fatal memory client error: the broker forgot us");
	ck_assert_int_eq(publish_serve(f.pub, why, sizeof(why)), OUTCOME_RESTART);
	ck_assert(rendered(f.m, "outboxd_producer_fatal_errors_total 1\n"));
	close_path(&f);
}
END_TEST

START_TEST(test_precondition_names_the_sink)
{
	struct fixture f = { 0 };
	char why[256];

	open_path(&f);
	snprintf(last->precondition, sizeof(last->precondition), "login refused: fix the password");
	ck_assert_int_eq(publish_serve(f.pub, why, sizeof(why)), OUTCOME_PRECONDITION);
	ck_assert_str_eq(why, "memory: login refused: fix the password");
	ck_assert_int_gt(publish_broker_state(f.pub, 0, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "memory");
	close_path(&f);
}
END_TEST

static Suite *
publish_suite(void)
{
	Suite *s = suite_create("publish");
	TCase *tc = tcase_create("memory-sink");

	tcase_add_test(tc, test_taken_then_acknowledged);
	tcase_add_test(tc, test_full_queue_keeps_the_record_and_its_token);
	tcase_add_test(tc, test_too_large_halts_with_the_sinks_bound);
	tcase_add_test(tc, test_failed_report_is_blamed);
	tcase_add_test(tc, test_fatal_restarts_and_counts_once);
	tcase_add_test(tc, test_precondition_names_the_sink);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(publish_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
