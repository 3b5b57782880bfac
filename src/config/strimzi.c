/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Strimzi's KafkaConnector resource as a connector file. The YAML is libyaml's to parse (its
 * document API, which keeps each node's line); this file only walks the one document that is
 * a KafkaConnector and turns scalars into the text Kafka Connect would receive.
 */
#include "outboxd/config/strimzi.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "outboxd/util/buf.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"

/* More digits than this may not fit go-yaml's int64, which would make the value a float. */
#define INT_DIGITS_MAX 18

struct walk {
	const char *path;
	const char *text;
	size_t len;
	yaml_document_t *doc;
	struct kv *out;
	struct kv *ignored;
	char *errbuf;
	size_t errlen;
};

static int
line_of(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

static int fail(struct walk *w, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "path:line: message" for node @n; returns -EINVAL. */
static int
fail(struct walk *w, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	errbuf_set(w->errbuf, w->errlen, "%s:%d: %s", w->path, line_of(n), msg);
	return -EINVAL;
}

static bool
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

bool
strimzi_is_resource(const char *path, const char *text)
{
	if (ends_with(path, ".yaml") || ends_with(path, ".yml")) {
		return true;
	}
	for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *v;

		if (strncmp(p, "kind:", 5) != 0) {
			continue;
		}
		for (v = p + 5; *v == ' ' || *v == '\t'; v++) {
		}
		if (strncmp(v, "KafkaConnector", 14) == 0 &&
		    (v[14] == '\0' || isspace((unsigned char)v[14]) || v[14] == '#')) {
			return true;
		}
	}
	return false;
}

static const char *
scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The value of @key in mapping @map, its key node in *@at (may be NULL). */
static yaml_node_t *
map_get(yaml_document_t *doc, const yaml_node_t *map, const char *key, yaml_node_t **at)
{
	if (!map || map->type != YAML_MAPPING_NODE) {
		return NULL;
	}
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		const char *s = scalar(k);

		if (s && strcmp(s, key) == 0) {
			if (at) {
				*at = k;
			}
			return yaml_document_get_node(doc, p->value);
		}
	}
	return NULL;
}

/* Kubernetes reads YAML with go-yaml v2 (YAML 1.1): these plain words are booleans. */
static const char *
yaml11_bool(const char *s)
{
	static const char *const yes[] = { "y",	   "Y",	   "yes", "Yes", "YES", "true",
					   "True", "TRUE", "on",  "On",	 "ON" };
	static const char *const no[] = { "n",	   "N",	    "no",  "No",  "NO", "false",
					  "False", "FALSE", "off", "Off", "OFF" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(s, yes[i]) == 0) {
			return "true";
		}
		if (strcmp(s, no[i]) == 0) {
			return "false";
		}
	}
	return NULL;
}

static bool
all_of(const char *s, const char *set)
{
	return *s && strspn(s, set) == strlen(s);
}

/* go-yaml v2's float syntax, [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool
yaml11_float(const char *s)
{
	size_t i = s[0] == '+' || s[0] == '-', d;

	d = strspn(s + i, "0123456789");
	i += d;
	if (s[i] == '.') {
		size_t f = strspn(s + i + 1, "0123456789");

		if (d == 0 && f == 0) {
			return false;
		}
		i += 1 + f;
	} else if (d == 0) {
		return false;
	}
	if (s[i] == 'e' || s[i] == 'E') {
		i++;
		i += s[i] == '+' || s[i] == '-';
		d = strspn(s + i, "0123456789");
		if (d == 0) {
			return false;
		}
		i += d;
	}
	return s[i] == '\0';
}

/*
 * Whether go-yaml v2 would read plain @s as a number: after removing '_', an integer in any of
 * Go's bases (0x, 0o, 0b, a leading 0) or a float, or one of the .inf/.nan spellings.
 */
static bool
yaml11_number(const char *s)
{
	static const char *const special[] = {
		".inf",	 ".Inf",  ".INF",  "+.inf", "+.Inf", "+.INF",
		"-.inf", "-.Inf", "-.INF", ".nan",  ".NaN",  ".NAN"
	};
	char *p = xstrdup(s), *q = p, *body;
	bool number;

	for (const char *c = s; *c; c++) {
		if (*c != '_') {
			*q++ = *c;
		}
	}
	*q = '\0';
	body = p + (*p == '+' || *p == '-');
	/* (body[1] first: strchr() also finds the terminating NUL) */
	if (body[0] == '0' && body[1] && strchr("xX", body[1])) {
		number = all_of(body + 2, "0123456789abcdefABCDEF");
	} else if (body[0] == '0' && body[1] && strchr("oO", body[1])) {
		number = all_of(body + 2, "01234567");
	} else if (body[0] == '0' && body[1] && strchr("bB", body[1])) {
		number = all_of(body + 2, "01");
	} else {
		number = all_of(body, "0123456789") || yaml11_float(p);
	}
	for (size_t i = 0; !number && i < sizeof(special) / sizeof(special[0]); i++) {
		number = strcmp(s, special[i]) == 0;
	}
	free(p);
	return number;
}

/* -?(0|[1-9][0-9]*), short enough for int64: the one number form whose text survives. */
static bool
plain_decimal(const char *s)
{
	const char *d = s + (*s == '-');
	size_t n = strspn(d, "0123456789");

	return n > 0 && d[n] == '\0' && n <= INT_DIGITS_MAX && (d[0] != '0' || n == 1);
}

/*
 * The byte offset of @m in the text. libyaml counts its index and columns in characters, not
 * bytes, so the offset is found from the line (lines end at '\n') and the column in UTF-8
 * characters.
 */
static size_t
byte_offset(const struct walk *w, yaml_mark_t m)
{
	size_t i = 0;

	for (size_t line = 0; line < m.line && i < w->len; i++) {
		line += w->text[i] == '\n';
	}
	for (size_t col = 0; i < w->len; i++) {
		if (((unsigned char)w->text[i] & 0xc0) != 0x80 && col++ == m.column) {
			break;
		}
	}
	return i;
}

/* Whether the scalar @n carries an explicit tag in the source (`!!str yes`, `&a !!str yes`). */
static bool
tagged(const struct walk *w, const yaml_node_t *n)
{
	size_t i = byte_offset(w, n->start_mark);

	if (i < w->len && w->text[i] == '&') {
		while (i < w->len && !isspace((unsigned char)w->text[i])) {
			i++;
		}
		while (i < w->len && (w->text[i] == ' ' || w->text[i] == '\t')) {
			i++;
		}
	}
	return i < w->len && w->text[i] == '!';
}

/*
 * The text Kafka Connect would receive for scalar @n (@field names it in messages): Kubernetes
 * turns the YAML into JSON (go-yaml v2 types), Strimzi passes that JSON value on, Connect takes
 * its text. NULL with the reason set when that text would not be what the file shows.
 */
static const char *
connect_text(struct walk *w, const yaml_node_t *n, const char *field)
{
	const char *s = scalar(n);

	if (!s) {
		fail(w, n, "%s: expected a single value, found a %s", field,
		     n->type == YAML_MAPPING_NODE ? "map" : "list");
		return NULL;
	}
	if (strcmp((const char *)n->tag, YAML_STR_TAG) != 0) {
		fail(w, n, "%s: the tag %s is not supported; remove it and quote the value", field,
		     (const char *)n->tag);
		return NULL;
	}
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || tagged(w, n)) {
		return s;
	}
	if (!*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
	    strcmp(s, "NULL") == 0) {
		fail(w, n, "%s: no value (null); give one, or \"\" for an empty string", field);
		return NULL;
	}
	if (yaml11_bool(s)) {
		return yaml11_bool(s);
	}
	if (yaml11_number(s) && !plain_decimal(s)) {
		fail(w, n,
		     "%s: the unquoted number %s reaches Kafka Connect as other text (Kubernetes "
		     "reads it as YAML 1.1 does); quote it",
		     field, s);
		return NULL;
	}
	return s;
}

static void
put(struct walk *w, struct kv *to, const char *key, const char *value, const yaml_node_t *at)
{
	struct buf origin = BUF_INIT;

	buf_add_fmt(&origin, "%s:%d", w->path, line_of(at));
	kv_set(to, key, value, buf_cstr(&origin));
	buf_fini(&origin);
}

static int
read_config(struct walk *w, const yaml_node_t *cfg)
{
	static const char *const forbidden[][2] = {
		{ "name", "metadata.name" },
		{ "connector.class", "spec.class" },
		{ "tasks.max", "spec.tasksMax" },
	};

	if (cfg->type != YAML_MAPPING_NODE) {
		return fail(w, cfg, "spec.config must be a map of connector settings");
	}
	for (yaml_node_pair_t *p = cfg->data.mapping.pairs.start; p < cfg->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
		const char *key = scalar(k), *v;

		if (!key) {
			return fail(w, k, "spec.config: a key must be a single value");
		}
		for (size_t i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++) {
			if (strcmp(key, forbidden[i][0]) == 0) {
				return fail(
					w, k,
					"spec.config.%s: Strimzi does not allow it here; set %s",
					key, forbidden[i][1]);
			}
		}
		if (kv_find(w->out, key)) {
			return fail(w, k, "spec.config.%s is given twice", key);
		}
		v = connect_text(w, yaml_document_get_node(w->doc, p->value), key);
		if (!v) {
			return -EINVAL;
		}
		put(w, w->out, key, v, k);
	}
	return 0;
}

/* spec.state and the deprecated spec.pause: outboxd runs the connector or refuses to start. */
static int
read_state(struct walk *w, const char *field, const yaml_node_t *v)
{
	const char *s = connect_text(w, v, field);

	if (!s) {
		return -EINVAL;
	}
	if (strcmp(field, "spec.pause") == 0 ? strcmp(s, "false") == 0 :
					       strcmp(s, "running") == 0) {
		return 0;
	}
	return fail(w, v,
		    "%s is %s: this connector is not meant to run; set it to running (or scale "
		    "outboxd's Deployment to 0 replicas instead)",
		    field, s);
}

static int
read_spec_field(struct walk *w, const char *name, yaml_node_t *k, yaml_node_t *v)
{
	static const char *const no_effect[][2] = {
		{ "autoRestart",
		  "outboxd restarts its own pipeline, and the orchestrator the process" },
		{ "listOffsets", "the replication slot is outboxd's only offset" },
		{ "alterOffsets", "the replication slot is outboxd's only offset" },
		{ "version", "outboxd is the connector" },
	};
	const char *s;

	if (strcmp(name, "config") == 0) {
		return read_config(w, v);
	}
	if (strcmp(name, "class") == 0 || strcmp(name, "tasksMax") == 0) {
		s = connect_text(w, v, strcmp(name, "class") == 0 ? "spec.class" : "spec.tasksMax");
		if (s) {
			put(w, w->out, strcmp(name, "class") == 0 ? "connector.class" : "tasks.max",
			    s, k);
		}
		return s ? 0 : -EINVAL;
	}
	if (strcmp(name, "state") == 0) {
		return read_state(w, "spec.state", v);
	}
	if (strcmp(name, "pause") == 0) {
		return read_state(w, "spec.pause", v);
	}
	for (size_t i = 0; i < sizeof(no_effect) / sizeof(no_effect[0]); i++) {
		if (strcmp(name, no_effect[i][0]) == 0) {
			char shown[64];

			snprintf(shown, sizeof(shown), "spec.%s", name);
			put(w, w->ignored, shown, no_effect[i][1], k);
			return 0;
		}
	}
	return fail(w, k,
		    "spec.%s is not a field of Strimzi's KafkaConnector (class, tasksMax, config, "
		    "state, pause, autoRestart, listOffsets, alterOffsets, version)",
		    name);
}

static int
read_connector(struct walk *w, yaml_node_t *root)
{
	yaml_node_t *api = map_get(w->doc, root, "apiVersion", NULL);
	yaml_node_t *spec = map_get(w->doc, root, "spec", NULL);
	yaml_node_t *meta = map_get(w->doc, root, "metadata", NULL);
	yaml_node_t *name_at = NULL, *name = map_get(w->doc, meta, "name", &name_at);
	int r = 0;

	if (!scalar(api) || strncmp(scalar(api), "kafka.strimzi.io/", 17) != 0) {
		return fail(w, api ? api : root,
			    "apiVersion %s is not Strimzi's (kafka.strimzi.io/v1beta2)",
			    scalar(api) ? scalar(api) : "(missing)");
	}
	if (!spec || spec->type != YAML_MAPPING_NODE) {
		return fail(w, spec ? spec : root, "the KafkaConnector has no spec map");
	}
	if (name && scalar(name)) {
		put(w, w->out, "name", scalar(name), name_at);
	}
	for (yaml_node_pair_t *p = spec->data.mapping.pairs.start;
	     r == 0 && p < spec->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(w->doc, p->key);

		r = scalar(k) ? read_spec_field(w, scalar(k), k,
						yaml_document_get_node(w->doc, p->value)) :
				fail(w, k, "spec: a key must be a single value");
	}
	return r;
}

/* Loads the documents one by one; walks the one KafkaConnector, names the kinds of the rest. */
static int
read_documents(struct walk *w, yaml_parser_t *parser)
{
	struct buf kinds = BUF_INIT;
	int found_line = 0, r = 0;
	yaml_document_t doc;

	while (r == 0) {
		yaml_node_t *root, *kind;

		if (!yaml_parser_load(parser, &doc)) {
			errbuf_set(w->errbuf, w->errlen, "%s:%d: invalid YAML: %s%s%s", w->path,
				   (int)parser->problem_mark.line + 1,
				   parser->problem ? parser->problem : "error",
				   parser->context ? " " : "",
				   parser->context ? parser->context : "");
			r = -EINVAL;
			break;
		}
		root = yaml_document_get_root_node(&doc);
		if (!root) {
			yaml_document_delete(&doc);
			break;
		}
		w->doc = &doc;
		kind = map_get(&doc, root, "kind", NULL);
		if (scalar(kind) && strcmp(scalar(kind), "KafkaConnector") == 0) {
			if (found_line) {
				errbuf_set(w->errbuf, w->errlen,
					   "%s:%d: a second KafkaConnector (the first is at line "
					   "%d); give outboxd the one it runs",
					   w->path, line_of(root), found_line);
				r = -EINVAL;
			} else {
				found_line = line_of(root);
				r = read_connector(w, root);
			}
		} else {
			buf_add_fmt(&kinds, "%s%s at line %d", kinds.len ? ", " : "",
				    scalar(kind) ? scalar(kind) : "no kind", line_of(root));
		}
		yaml_document_delete(&doc);
	}
	if (r == 0 && !found_line) {
		errbuf_set(w->errbuf, w->errlen,
			   "%s:1: no KafkaConnector resource (found: %s); outboxd reads a Strimzi "
			   "KafkaConnector as the connector file, and the worker settings from a "
			   ".properties file",
			   w->path, kinds.len ? buf_cstr(&kinds) : "nothing");
		r = -EINVAL;
	}
	buf_fini(&kinds);
	return r;
}

int
strimzi_parse(const char *path, const char *text, size_t len, struct kv *ret, struct kv *ignored,
	      char *errbuf, size_t errlen)
{
	struct kv out = KV_INIT, skip = KV_INIT;
	struct walk w = { path, text, len, NULL, &out, &skip, errbuf, errlen };
	yaml_parser_t parser;
	int r;

	if (!yaml_parser_initialize(&parser)) {
		errbuf_set(errbuf, errlen, "%s: cannot start the YAML parser", path);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	r = read_documents(&w, &parser);
	yaml_parser_delete(&parser);
	if (r) {
		kv_fini(&out);
		kv_fini(&skip);
		return r;
	}
	*ret = out;
	*ignored = skip;
	return 0;
}
