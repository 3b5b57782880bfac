/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Quarkus (SmallRye Config) property expressions in a Debezium Server application.properties:
 * ${NAME} and ${NAME:default}, NAME from the environment or the file, \$ and $$ a literal $.
 * Private to config/ (cfgsrc_int.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfgsrc_int.h"
#include "outboxd/config/cfgsrc.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"

/* Bound on nested ${...} references (a refers to b refers to a ...). */
#define EXPAND_DEPTH 8
/*
 * Bounds on one value's expansion: references that multiply (a=${b}${b}, b=${c}${c}, ...)
 * stay within the depth but grow as a power of it; 463 bytes of file took a minute.
 */
#define EXPAND_REFS  10000
#define EXPAND_BYTES (1024 * 1024)

/* The end of the ${...} expression starting at @open (pointing at '$'), or NULL. */
static const char *
expr_end(const char *open)
{
	int depth = 0;

	for (const char *p = open; *p; p++) {
		if (p[0] == '$' && p[1] == '{') {
			depth++;
			p++;
		} else if (*p == '}' && --depth == 0) {
			return p;
		}
	}
	return NULL;
}

/* One value's expansion: where names are looked up, the text so far, and what is left. */
struct expansion {
	const struct kv *raw;
	char *const *envp;
	struct buf out;
	struct buf why;
	size_t refs; /* ${...} resolved so far */
};

static int expand(struct expansion *x, const char *in, int depth);

/* Quarkus property expressions: ${NAME} or ${NAME:default}; NAME from the environment or file. */
static int
expand_one(struct expansion *x, const char *inner, size_t len, int depth)
{
	char *s = xstrndup(inner, len), *colon = strchr(s, ':'), *env;
	const char *v;
	int r = 0;

	if (colon) {
		*colon = '\0';
	}
	env = cfgsrc_env_name(s);
	v = cfgsrc_env_get(x->envp, s);
	v = v ? v : cfgsrc_env_get(x->envp, env);
	if (v) {
		buf_add_str(&x->out, v);
	} else if ((v = kv_get(x->raw, s)) != NULL) {
		r = expand(x, v, depth + 1);
	} else if (colon) {
		r = expand(x, colon + 1, depth + 1);
	} else {
		buf_add_fmt(
			&x->why,
			"${%s} is not set (no environment variable %s or %s, no property %s, no default)",
			s, s, env, s);
		r = -ENOENT;
	}
	free(env);
	free(s);
	return r;
}

/*
 * The next "${" of @*in that opens an expression, the text before it copied to the output, or
 * NULL (what is left stays in @*in). As SmallRye Config reads a value (its
 * ExpressionConfigSourceInterceptor rewrites each \$ to $$, and $$ is a literal $), "\$" and
 * "$$" are a literal "$": a Debezium Server file keeps EventRouter's ${routedByValue} with
 * \\${routedByValue} (the properties file's own escape leaves \${...}) or $${routedByValue}.
 */
static const char *
next_expr(struct expansion *x, const char **in)
{
	const char *p = *in;

	for (;;) {
		const char *d = strchr(p, '$');

		if (!d) {
			return NULL;
		}
		/* what lies between *in and d has no "$" that means anything: copied as it is */
		if (d > *in && d[-1] == '\\') {
			buf_add(&x->out, *in, (size_t)(d - 1 - *in));
			buf_add_char(&x->out, '$');
			p = *in = d + 1;
		} else if (d[1] == '$') {
			buf_add(&x->out, *in, (size_t)(d - *in));
			buf_add_char(&x->out, '$');
			p = *in = d + 2;
		} else if (d[1] == '{') {
			buf_add(&x->out, *in, (size_t)(d - *in));
			*in = d;
			return d;
		} else {
			p = d + 1;
		}
	}
}

static int
expand(struct expansion *x, const char *in, int depth)
{
	const char *open, *end;

	if (depth > EXPAND_DEPTH) {
		buf_add_str(&x->why, "${...} references nest too deeply (a loop?)");
		return -ELOOP;
	}
	while ((open = next_expr(x, &in)) != NULL && (end = expr_end(open)) != NULL) {
		int r;

		if (++x->refs > EXPAND_REFS || x->out.len > EXPAND_BYTES) {
			buf_add_fmt(&x->why,
				    "${...} references multiply (more than %d, or more than %d "
				    "bytes); refer to each value once",
				    EXPAND_REFS, EXPAND_BYTES);
			return -E2BIG;
		}
		r = expand_one(x, open + 2, (size_t)(end - open - 2), depth);
		if (r) {
			return r;
		}
		in = end + 1;
	}
	buf_add_str(&x->out, in);
	return 0;
}

int
cfgsrc_expr_expand(struct kv *raw, char *const *envp, char *errbuf, size_t errlen)
{
	struct expansion x = { raw, envp, BUF_INIT, BUF_INIT, 0 };
	char **values = xcalloc(raw->n + 1, sizeof(*values));
	int r = 0;

	/* expand against the unexpanded file, then replace, so the order of keys does not matter */
	for (size_t i = 0; i < raw->n && r == 0; i++) {
		buf_reset(&x.out);
		x.refs = 0;
		r = expand(&x, raw->v[i].value, 0);
		if (r) {
			errbuf_set(errbuf, errlen, "%s: %s: %s", raw->v[i].origin, raw->v[i].key,
				   buf_cstr(&x.why));
		} else {
			values[i] = xstrdup(buf_cstr(&x.out));
		}
	}
	for (size_t i = 0; i < raw->n; i++) {
		if (r == 0) {
			free(raw->v[i].value);
			raw->v[i].value = values[i];
		} else {
			free(values[i]);
		}
	}
	free(values);
	buf_fini(&x.out);
	buf_fini(&x.why);
	return r ? -EINVAL : 0;
}
