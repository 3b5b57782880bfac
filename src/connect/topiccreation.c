/* SPDX-License-Identifier: Apache-2.0 */
/*
 * KIP-158's groups (topiccreation.h), read as Kafka Connect reads them: ConfigDef's LIST, INT
 * and SHORT parsing and the validators' messages, TopicCreationGroup's patterns (regex_java.h,
 * java.util.regex semantics).
 */
#include "outboxd/connect/topiccreation.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "outboxd/connect/regex_java.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"

struct group {
	struct topiccreation_group g;
	char *name;
	char *include, *exclude; /* the joined patterns, for the description */
	struct regex_java *inc, *exc;
	struct kv settings;
};

struct topiccreation {
	struct group *groups; /* the named ones in list order, then the default */
	size_t n;
};

/* The value of @prefix@key in @keys, or NULL. */
static const char *
get(const struct kv *keys, const char *prefix, const char *key)
{
	size_t pl = strlen(prefix), kl = strlen(key);

	for (size_t i = 0; i < keys->n; i++) {
		const char *k = keys->v[i].key;

		if (strlen(k) == pl + kl && strncmp(k, prefix, pl) == 0 &&
		    strcmp(k + pl, key) == 0) {
			return keys->v[i].value;
		}
	}
	return NULL;
}

/* Java's String.trim(): the blanks and control characters at both ends. */
static void
trim(const char **s, size_t *n)
{
	while (*n && (unsigned char)**s <= ' ') {
		(*s)++;
		(*n)--;
	}
	while (*n && (unsigned char)(*s)[*n - 1] <= ' ') {
		(*n)--;
	}
}

/*
 * ConfigDef's LIST, its items joined by @sep: the trimmed value split at every comma with the
 * blanks around it (Java's split("\\s*,\\s*", -1)); an empty value is no item. Appends to @out.
 * Return: the number of items.
 */
static size_t
list_join(const char *value, const char *sep, struct buf *out)
{
	const char *s = value ? value : "";
	size_t n = strlen(s), items = 0;

	trim(&s, &n);
	while (n) {
		const char *comma = memchr(s, ',', n);
		size_t len = comma ? (size_t)(comma - s) : n;
		const char *item = s;
		size_t ilen = len;

		while (ilen && (unsigned char)item[ilen - 1] <= ' ') {
			ilen--;
		}
		if (items++) {
			buf_add_str(out, sep);
		}
		buf_add(out, item, ilen);
		if (!comma) {
			break;
		}
		s = comma + 1;
		n -= len + 1;
		while (n && (unsigned char)*s <= ' ') {
			s++;
			n--;
		}
		if (!n) {
			items++; /* a trailing comma: Java keeps the empty last item */
			buf_add_str(out, sep);
		}
	}
	return items;
}

/*
 * An INT (@max INT_MAX) or SHORT (@max SHRT_MAX) setting: the default group's is required,
 * a named group's defaults to it (@dflt); -1 or at least 1.
 */
static int
number(const struct kv *keys, const char *prefix, const char *group, const char *what, long max,
       long dflt, long *ret, char *errbuf, size_t errlen)
{
	struct buf k = BUF_INIT;
	const char *v;
	char *end;
	long n;

	buf_add_fmt(&k, "%s.%s", group, what);
	v = get(keys, prefix, buf_cstr(&k));
	if (!v && dflt != LONG_MIN) {
		*ret = dflt;
		buf_fini(&k);
		return 0;
	}
	if (!v) {
		errbuf_set(errbuf, errlen,
			   "Missing required configuration \"%s%s\" which has no default value "
			   "(Kafka Connect needs it once any %s* key is set; -1 takes the broker's "
			   "default)",
			   prefix, buf_cstr(&k), prefix);
		buf_fini(&k);
		return -EINVAL;
	}
	/* ConfigDef: the value trimmed (String.trim(): every char up to ' '), then parsed */
	while (*v && (unsigned char)*v <= ' ') {
		v++;
	}
	errno = 0;
	n = strtol(v, &end, 10);
	while (*end && (unsigned char)*end <= ' ') {
		end++;
	}
	if (!*v || *end || errno || n < INT_MIN || n > max) {
		errbuf_set(errbuf, errlen,
			   "Invalid value %s for configuration %s%s: Not a number of type %s", v,
			   prefix, buf_cstr(&k), max == SHRT_MAX ? "SHORT" : "INT");
		buf_fini(&k);
		return -EINVAL;
	}
	if (n != -1 && n < 1) {
		errbuf_set(errbuf, errlen, "Invalid value %ld for configuration %s%s: %s", n,
			   prefix, buf_cstr(&k),
			   max == SHRT_MAX ?
				   "Replication factor must be positive and not larger "
				   "than the number of brokers in the Kafka cluster, or -1 "
				   "to use the broker's default" :
				   "Number of partitions must be positive, or -1 to use the "
				   "broker's default");
		buf_fini(&k);
		return -EINVAL;
	}
	*ret = n;
	buf_fini(&k);
	return 0;
}

/* The include or exclude list of @grp compiled; the joined text into *@text. */
static int
pattern(const struct kv *keys, const char *prefix, const char *grp, const char *what,
	struct regex_java **re, char **text, char *errbuf, size_t errlen)
{
	struct buf k = BUF_INIT, joined = BUF_INIT;
	int rc;

	buf_add_fmt(&k, "%s.%s", grp, what);
	list_join(get(keys, prefix, buf_cstr(&k)), "|", &joined);
	rc = regex_java_compile(buf_cstr(&joined), false, re, errbuf, errlen);
	if (rc < 0) {
		struct buf why = BUF_INIT;

		buf_add_str(&why, errbuf);
		errbuf_set(errbuf, errlen, "%s%s: Syntax error in regular expression: %s", prefix,
			   buf_cstr(&k), buf_cstr(&why));
		buf_fini(&why);
	} else {
		*text = buf_steal(&joined);
	}
	buf_fini(&joined);
	buf_fini(&k);
	return rc;
}

/* The topic settings of @grp: its keys but include, exclude, partitions, replication.factor. */
static void
settings(const struct kv *keys, const char *prefix, const char *grp, struct kv *out)
{
	size_t pl = strlen(prefix), gl = strlen(grp);
	static const char *const own[] = { "include", "exclude", "partitions",
					   "replication.factor" };

	for (size_t i = 0; i < keys->n; i++) {
		const char *k = keys->v[i].key, *rest;
		bool skip = false;

		if (strncmp(k, prefix, pl) != 0 || strncmp(k + pl, grp, gl) != 0 ||
		    k[pl + gl] != '.') {
			continue;
		}
		rest = k + pl + gl + 1;
		for (size_t j = 0; j < sizeof(own) / sizeof(own[0]); j++) {
			skip = skip || strcmp(rest, own[j]) == 0;
		}
		if (!skip && *rest) {
			kv_set(out, rest, keys->v[i].value, keys->v[i].origin);
		}
	}
}

/* Group @name (the default when @dflt) into @g; the default's numbers in @dp and @dr. */
static int
group(const struct kv *keys, const char *prefix, const char *name, const struct group *dflt,
      struct group *g, char *errbuf, size_t errlen)
{
	long parts, repl;

	g->name = xstrdup(name);
	if (number(keys, prefix, name, "partitions", INT_MAX, dflt ? dflt->g.partitions : LONG_MIN,
		   &parts, errbuf, errlen) < 0 ||
	    number(keys, prefix, name, "replication.factor", SHRT_MAX,
		   dflt ? dflt->g.replication : LONG_MIN, &repl, errbuf, errlen) < 0) {
		return -EINVAL;
	}
	if (dflt) {
		if (pattern(keys, prefix, name, "include", &g->inc, &g->include, errbuf, errlen) <
			    0 ||
		    pattern(keys, prefix, name, "exclude", &g->exc, &g->exclude, errbuf, errlen) <
			    0) {
			return -EINVAL;
		}
	}
	settings(keys, prefix, name, &g->settings);
	g->g = (struct topiccreation_group){ .name = g->name,
					     .partitions = (int32_t)parts,
					     .replication = (int16_t)repl,
					     .settings = &g->settings };
	return 0;
}

/* Whether any key starts with @prefix: the connector asks for creation (usesTopicCreation). */
static bool
asked(const struct kv *keys, const char *prefix)
{
	for (size_t i = 0; i < keys->n; i++) {
		if (strncmp(keys->v[i].key, prefix, strlen(prefix)) == 0) {
			return true;
		}
	}
	return false;
}

/* Frees what group() made. */
static void
group_fini(struct group *g)
{
	free(g->name);
	free(g->include);
	free(g->exclude);
	regex_java_free(g->inc);
	regex_java_free(g->exc);
	kv_fini(&g->settings);
}

int
topiccreation_parse(const struct kv *keys, const char *prefix, bool enabled,
		    struct topiccreation **ret, char *errbuf, size_t errlen)
{
	struct topiccreation *tc;
	struct group dflt = { 0 };
	struct buf names = BUF_INIT;
	char *tok, *next;

	*ret = NULL;
	if (!enabled || !asked(keys, prefix)) {
		return 0;
	}
	if (group(keys, prefix, "default", NULL, &dflt, errbuf, errlen) < 0) {
		group_fini(&dflt);
		return -EINVAL;
	}
	tc = xcalloc(1, sizeof(*tc));
	tc->groups = xcalloc(list_join(get(keys, prefix, "groups"), ",", &names) + 1,
			     sizeof(*tc->groups));
	/* the aliases, empty ones too (Java's split keeps them), each once, "default" included */
	for (tok = names.len ? names.data : NULL; tok; tok = next) {
		next = strchr(tok, ',');
		if (next) {
			*next++ = '\0';
		}
		for (char *o = names.data; o < tok; o += strlen(o) + 1) {
			if (strcmp(o, tok) == 0) {
				errbuf_set(errbuf, errlen,
					   "%sgroups: Duplicate alias provided: \"%s\"", prefix,
					   tok);
				goto fail;
			}
		}
		if (strcmp(tok, "default") == 0) {
			continue; /* Connect: always exists, need not be listed (a warning there) */
		}
		if (group(keys, prefix, tok, &dflt, &tc->groups[tc->n++], errbuf, errlen) < 0) {
			goto fail;
		}
	}
	/* the default last: it takes what no named group matched */
	tc->groups[tc->n] = dflt;
	tc->groups[tc->n].g.settings = &tc->groups[tc->n].settings;
	tc->n++;
	buf_fini(&names);
	*ret = tc;
	return 0;
fail:
	buf_fini(&names);
	group_fini(&dflt);
	topiccreation_free(tc);
	return -EINVAL;
}

void
topiccreation_free(struct topiccreation *tc)
{
	if (!tc) {
		return;
	}
	for (size_t i = 0; i < tc->n; i++) {
		group_fini(&tc->groups[i]);
	}
	free(tc->groups);
	free(tc);
}

const struct topiccreation_group *
topiccreation_match(const struct topiccreation *tc, const char *topic)
{
	size_t len = strlen(topic);

	for (size_t i = 0; i + 1 < tc->n; i++) {
		const struct group *g = &tc->groups[i];

		/* TopicCreationGroup.matches(): not excluded, and included */
		if (regex_java_matches(g->exc, topic, len) != 1 &&
		    regex_java_matches(g->inc, topic, len) == 1) {
			return &g->g;
		}
	}
	return &tc->groups[tc->n - 1].g;
}

size_t
topiccreation_ngroups(const struct topiccreation *tc)
{
	return tc->n;
}

const struct topiccreation_group *
topiccreation_group(const struct topiccreation *tc, size_t i)
{
	return &tc->groups[i].g;
}

void
topiccreation_describe(const struct topiccreation_group *g, struct buf *out)
{
	const struct group *own = (const struct group *)g; /* g is the first member */

	if (own->include) {
		buf_add_fmt(out, "include %s", own->include);
		if (own->exclude && *own->exclude) {
			buf_add_fmt(out, ", exclude %s", own->exclude);
		}
		buf_add_str(out, ", ");
	}
	buf_add_fmt(out, "partitions %d", (int)g->partitions);
	if (g->partitions == -1) {
		buf_add_str(out, " (the broker's default)");
	}
	buf_add_fmt(out, ", replication factor %d", (int)g->replication);
	if (g->replication == -1) {
		buf_add_str(out, " (the broker's default)");
	}
	for (size_t i = 0; i < g->settings->n; i++) {
		buf_add_fmt(out, ", %s=%s", g->settings->v[i].key, g->settings->v[i].value);
	}
}
