/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/javafloat.h"

/* One input and what each Java generation's toString printed for it. */
struct vector {
	char kind; /* 'd' double, 'f' float */
	uint64_t bits;
	const char *jdk17;
	const char *shortest;
};

/*
 * Printed by real JDKs (gen_javafloat_vectors.sh), grouped by the classes where the two
 * algorithms part: integers from 2^53 (long arithmetic), huge values, powers of two (symmetric
 * margin), subnormals, integral floats, plus ordinary values where they agree.
 */
static const struct vector vectors[] = {
#include "javafloat_vectors.h"
};

static const char *
fmt(struct buf *b, const struct vector *v, bool jdk17)
{
	buf_reset(b);
	if (v->kind == 'd') {
		double x;

		memcpy(&x, &v->bits, sizeof(x));
		if (jdk17) {
			javafloat_double_jdk17(x, b);
		} else {
			javafloat_double_shortest(x, b);
		}
	} else {
		uint32_t u = (uint32_t)v->bits;
		float x;

		memcpy(&x, &u, sizeof(x));
		if (jdk17) {
			javafloat_float_jdk17(x, b);
		} else {
			javafloat_float_shortest(x, b);
		}
	}
	return buf_cstr(b);
}

/* Every row in one test, so a regression lists all the rows it breaks, not the first. */
static void
check_all(bool jdk17)
{
	struct buf b = BUF_INIT, report = BUF_INIT;
	size_t bad = 0;

	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		const struct vector *v = &vectors[i];
		const char *want = jdk17 ? v->jdk17 : v->shortest;

		if (strcmp(fmt(&b, v, jdk17), want) != 0) {
			buf_add_fmt(&report, "\n  %c %016llx: got %s, Java printed %s", v->kind,
				    (unsigned long long)v->bits, buf_cstr(&b), want);
			bad++;
		}
	}
	ck_assert_msg(bad == 0, "%zu rows differ from %s:%s", bad, jdk17 ? "Java 17" : "Java 19+",
		      buf_cstr(&report));
	buf_fini(&report);
	buf_fini(&b);
}

START_TEST(test_jdk17_format_prints_every_vector_as_java_17)
{
	check_all(true);
}
END_TEST

START_TEST(test_shortest_format_prints_every_vector_as_java_19_and_later)
{
	check_all(false);
}
END_TEST

/* The table must keep covering inputs where the generations differ, not only agreements. */
START_TEST(test_vector_table_covers_inputs_where_the_formats_differ)
{
	size_t n = sizeof(vectors) / sizeof(vectors[0]), differ = 0, floats = 0;

	for (size_t i = 0; i < n; i++) {
		differ += strcmp(vectors[i].jdk17, vectors[i].shortest) != 0;
		floats += vectors[i].kind == 'f';
	}
	ck_assert_uint_ge(n, 300);
	ck_assert_uint_ge(differ, 150);
	ck_assert_uint_ge(floats, 50);
}
END_TEST

/* Named cases, readable without the table; expected texts from Java 17 and Java 25. */
START_TEST(test_1e23_and_other_named_cases_print_as_each_jdk_does)
{
	struct buf b = BUF_INIT;

	javafloat_double_jdk17(1e23, &b);
	buf_add_char(&b, ' ');
	javafloat_double_shortest(1e23, &b);
	buf_add_char(&b, ' ');
	javafloat_double_jdk17(2.82879384806159E17, &b);
	buf_add_char(&b, ' ');
	javafloat_double_shortest(2.82879384806159E17, &b);
	buf_add_char(&b, ' ');
	javafloat_double_jdk17(2 * 4.9e-324, &b);
	buf_add_char(&b, ' ');
	javafloat_double_shortest(2 * 4.9e-324, &b);
	ck_assert_str_eq(buf_cstr(&b), "9.999999999999999E22 1.0E23 2.82879384806159008E17 "
				       "2.82879384806159E17 1.0E-323 9.9E-324");
	buf_reset(&b);
	javafloat_float_jdk17(6.7647527E14f, &b);
	buf_add_char(&b, ' ');
	javafloat_float_shortest(6.764753E14f, &b);
	buf_add_char(&b, ' ');
	javafloat_float_jdk17(-0.0f, &b);
	buf_add_char(&b, ' ');
	javafloat_float_shortest(NAN, &b);
	buf_add_char(&b, ' ');
	javafloat_double_jdk17(-INFINITY, &b);
	buf_add_char(&b, ' ');
	javafloat_double_jdk17(1e7, &b);
	buf_add_char(&b, ' ');
	javafloat_double_jdk17(9999999.0, &b);
	buf_add_char(&b, ' ');
	javafloat_double_jdk17(0.001, &b);
	buf_add_char(&b, ' ');
	javafloat_double_shortest(0.0009999, &b);
	ck_assert_str_eq(buf_cstr(&b), "6.7647527E14 6.764753E14 -0.0 NaN -Infinity 1.0E7 "
				       "9999999.0 0.001 9.999E-4");
	buf_fini(&b);
}
END_TEST

static Suite *
javafloat_suite(void)
{
	Suite *s = suite_create("javafloat");
	TCase *tc = tcase_create("vectors");

	tcase_add_test(tc, test_jdk17_format_prints_every_vector_as_java_17);
	tcase_add_test(tc, test_shortest_format_prints_every_vector_as_java_19_and_later);
	tcase_add_test(tc, test_vector_table_covers_inputs_where_the_formats_differ);
	tcase_add_test(tc, test_1e23_and_other_named_cases_print_as_each_jdk_does);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(javafloat_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
