/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/obs/http_clients.h"

/* The client @text ("10.0.0.1", "::ffff:10.0.0.1", "2001:db8::1") as accept(2) would give it. */
static struct http_client
client(const char *text)
{
	struct sockaddr_in in4 = { .sin_family = AF_INET };
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
	struct http_client who;

	if (inet_pton(AF_INET, text, &in4.sin_addr) == 1) {
		http_client_from((struct sockaddr *)&in4, sizeof(in4), &who);
	} else {
		ck_assert_int_eq(inet_pton(AF_INET6, text, &in6.sin6_addr), 1);
		http_client_from((struct sockaddr *)&in6, sizeof(in6), &who);
	}
	return who;
}

/* A list of @n connections, @conns[i] from @from[i], the first the oldest (newest first). */
static struct http_conn *
list(struct http_conn *conns, const char *const *from, int n)
{
	struct http_conn *head = NULL;

	for (int i = 0; i < n; i++) {
		conns[i] =
			(struct http_conn){ .who = client(from[i]), .fd = -1, .due_us = 1000 + i };
		conns[i].next = head;
		if (head) {
			head->prev = &conns[i];
		}
		head = &conns[i];
	}
	return head;
}

START_TEST(test_an_ipv4_mapped_address_is_its_ipv4_client)
{
	struct http_client a = client("127.0.0.1"), b = client("::ffff:127.0.0.1");
	struct http_client c = client("::1"), d = client("127.0.0.2");
	char text[INET6_ADDRSTRLEN];

	ck_assert_mem_eq(&a, &b, sizeof(a));
	ck_assert_int_ne(memcmp(&a, &c, sizeof(a)), 0);
	ck_assert_int_ne(memcmp(&a, &d, sizeof(a)), 0);
	http_client_format(&b, text, sizeof(text));
	ck_assert_str_eq(text, "127.0.0.1");
	http_client_format(&c, text, sizeof(text));
	ck_assert_str_eq(text, "::1");

	/* too short for its family, or no address at all: one unknown client */
	http_client_from(NULL, 0, &a);
	ck_assert_int_eq(a.family, 0);
	http_client_format(&a, text, sizeof(text));
	ck_assert_str_eq(text, "?");
}
END_TEST

START_TEST(test_a_client_holding_its_share_is_refused_others_are_not)
{
	static const char *const from[] = { "10.0.0.1", "10.0.0.1", "::ffff:10.0.0.1", "10.0.0.2" };
	struct http_conn conns[4], *evict = (struct http_conn *)0x1;
	struct http_conn *head = list(conns, from, 4);
	struct http_client a = client("10.0.0.1"), b = client("10.0.0.2");

	ck_assert_uint_eq(http_clients_held(head, &a), 3);
	ck_assert(!http_clients_admit(head, &a, 3, 64, &evict));
	ck_assert_ptr_null(evict);
	ck_assert(http_clients_admit(head, &b, 3, 64, &evict));
	ck_assert_ptr_null(evict);

	/* a connection the deadline cut holds no place, though libmicrohttpd has not closed it */
	conns[1].cut = true;
	ck_assert_uint_eq(http_clients_held(head, &a), 2);
	ck_assert(http_clients_admit(head, &a, 3, 64, &evict));
	ck_assert_ptr_null(evict);
}
END_TEST

/*
 * Full: a client holding none takes the place of the oldest connection of the client holding the
 * most, so slow clients on any number of addresses never shut out a probe from another.
 */
START_TEST(test_a_full_endpoint_makes_room_from_the_heaviest_client)
{
	static const char *const from[] = { "10.0.0.2", "10.0.0.1", "10.0.0.1",
					    "10.0.0.2", "10.0.0.1", "10.0.0.3" };
	struct http_conn conns[6], *evict = NULL;
	struct http_conn *head = list(conns, from, 6);
	struct http_client fresh = client("10.0.0.9"), two = client("10.0.0.2");
	struct http_client one = client("10.0.0.1");

	ck_assert(http_clients_admit(head, &fresh, 8, 6, &evict));
	ck_assert_ptr_eq(evict, &conns[1]); /* 10.0.0.1 holds three; [1] is its oldest */

	/* 10.0.0.2 holds two: it may take one of 10.0.0.1's three, never a place of its equal */
	ck_assert(http_clients_admit(head, &two, 8, 6, &evict));
	ck_assert_ptr_eq(evict, &conns[1]);
	ck_assert(!http_clients_admit(head, &one, 8, 6, &evict));
	ck_assert_ptr_null(evict);

	/* of clients holding equally many, the oldest connection goes */
	conns[4].cut = true;
	ck_assert(http_clients_admit(head, &fresh, 8, 5, &evict));
	ck_assert_ptr_eq(evict, &conns[0]);
}
END_TEST

START_TEST(test_when_every_client_holds_one_a_client_holding_none_still_gets_in)
{
	static const char *const from[] = { "10.0.0.1", "10.0.0.2", "10.0.0.3" };
	struct http_conn conns[3], *evict = NULL;
	struct http_conn *head = list(conns, from, 3);
	struct http_client fresh = client("10.0.0.4"), one = client("10.0.0.1");

	ck_assert(http_clients_admit(head, &fresh, 8, 3, &evict));
	ck_assert_ptr_eq(evict, &conns[0]);
	ck_assert(!http_clients_admit(head, &one, 8, 3, &evict));
	ck_assert(http_clients_admit(NULL, &one, 8, 3, &evict));
	ck_assert_ptr_null(evict);
}
END_TEST

static Suite *
http_clients_suite(void)
{
	Suite *s = suite_create("http_clients");
	TCase *tc = tcase_create("admit");

	tcase_add_test(tc, test_an_ipv4_mapped_address_is_its_ipv4_client);
	tcase_add_test(tc, test_a_client_holding_its_share_is_refused_others_are_not);
	tcase_add_test(tc, test_a_full_endpoint_makes_room_from_the_heaviest_client);
	tcase_add_test(tc, test_when_every_client_holds_one_a_client_holding_none_still_gets_in);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(http_clients_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
