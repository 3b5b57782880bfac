/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/config/cfgsrc.h"

#include <ctype.h>
#include <errno.h>
#include <json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfgsrc_int.h"
#include "outboxd/config/properties.h"
#include "outboxd/config/strimzi.h"
#include "outboxd/config/vocab.h"
#include "outboxd/connect/configdef.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/mem.h"

enum file_kind {
	FILE_WORKER,
	FILE_CONNECTOR,
	FILE_SERVER,
};

struct file {
	const char *path; /* borrowed */
	enum file_kind kind;
	struct kv keys;
	struct kv ignored; /* a Strimzi resource's fields without effect */
};

static bool
starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int
line_of(const char *text, size_t off)
{
	int line = 1;

	for (size_t i = 0; i < off && text[i]; i++) {
		line += text[i] == '\n';
	}
	return line;
}

/* The line of the first `"key" :` after @from in JSON @text; the object's line if not found. */
static int
json_key_line(const char *text, size_t from, const char *key)
{
	struct buf q = BUF_INIT;
	const char *p = text + from;
	int line = line_of(text, from);

	buf_add_fmt(&q, "\"%s\"", key);
	while ((p = strstr(p, buf_cstr(&q))) != NULL) {
		const char *c = p + q.len;

		while (isspace((unsigned char)*c)) {
			c++;
		}
		if (*c == ':') {
			line = line_of(text, (size_t)(p - text));
			break;
		}
		p++;
	}
	buf_fini(&q);
	return line;
}

/* Connector JSON: {"name": ..., "config": {...}} or the bare config object. */
static int
parse_json(const char *path, const char *text, size_t len, struct kv *ret, char *errbuf,
	   size_t errlen)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root, *cfg, *name = NULL;
	struct kv out = KV_INIT;
	struct buf origin = BUF_INIT;
	const char *cfg_at;
	size_t from = 0;
	int r = 0;

	root = json_tokener_parse_ex(tok, text, (int)len);
	if (!root || json_tokener_get_error(tok) != json_tokener_success) {
		errbuf_set(errbuf, errlen, "%s:%d: invalid JSON: %s", path,
			   line_of(text, json_tokener_get_parse_end(tok)),
			   json_tokener_error_desc(json_tokener_get_error(tok)));
		json_object_put(root);
		json_tokener_free(tok);
		return -EINVAL;
	}
	json_tokener_free(tok);
	if (!json_object_is_type(root, json_type_object)) {
		errbuf_set(errbuf, errlen,
			   "%s:1: expected a JSON object {\"name\": ..., \"config\": {...}}", path);
		json_object_put(root);
		return -EINVAL;
	}
	cfg = root;
	if (json_object_object_get_ex(root, "config", &cfg)) {
		cfg_at = strstr(text, "\"config\"");
		from = cfg_at ? (size_t)(cfg_at - text) : 0;
		(void)json_object_object_get_ex(root, "name", &name);
	} else {
		cfg = root;
	}
	if (!json_object_is_type(cfg, json_type_object)) {
		errbuf_set(errbuf, errlen, "%s:%d: \"config\" must be a JSON object", path,
			   line_of(text, from));
		json_object_put(root);
		return -EINVAL;
	}
	json_object_object_foreach(cfg, key, val)
	{
		int line = json_key_line(text, from, key);

		buf_reset(&origin);
		buf_add_fmt(&origin, "%s:%d", path, line);
		if (!json_object_is_type(val, json_type_string) &&
		    !json_object_is_type(val, json_type_int) &&
		    !json_object_is_type(val, json_type_double) &&
		    !json_object_is_type(val, json_type_boolean)) {
			errbuf_set(errbuf, errlen,
				   "%s: %s: the value must be a string, number or boolean",
				   buf_cstr(&origin), key);
			r = -EINVAL;
			break;
		}
		kv_set(&out, key, json_object_get_string(val), buf_cstr(&origin));
	}
	if (r == 0 && name && json_object_is_type(name, json_type_string) &&
	    !kv_find(&out, "name")) {
		buf_reset(&origin);
		buf_add_fmt(&origin, "%s:%d", path, json_key_line(text, 0, "name"));
		kv_set(&out, "name", json_object_get_string(name), buf_cstr(&origin));
	}
	buf_fini(&origin);
	json_object_put(root);
	if (r) {
		kv_fini(&out);
		return r;
	}
	*ret = out;
	return 0;
}

static int
read_one(const char *path, struct file *f, char *errbuf, size_t errlen)
{
	char *text;
	const char *p;
	size_t len;
	int r;

	r = properties_read_file(path, &text, &len, errbuf, errlen);
	if (r) {
		return r;
	}
	for (p = text; isspace((unsigned char)*p); p++) {
	}
	f->path = path;
	if (strimzi_is_resource(path, text)) {
		f->kind = FILE_CONNECTOR;
		r = strimzi_parse(path, text, len, &f->keys, &f->ignored, errbuf, errlen);
		free(text);
		return r;
	}
	if (*p == '{') {
		f->kind = FILE_CONNECTOR;
		r = parse_json(path, text, len, &f->keys, errbuf, errlen);
		free(text);
		return r;
	}
	r = properties_parse(text, len, path, &f->keys, errbuf, errlen);
	free(text);
	if (r) {
		return r;
	}
	f->kind = kv_find(&f->keys, "connector.class") ? FILE_CONNECTOR : FILE_WORKER;
	for (size_t i = 0; i < f->keys.n; i++) {
		if (starts_with(f->keys.v[i].key, "debezium.")) {
			f->kind = FILE_SERVER;
			break;
		}
	}
	return 0;
}

/* Move outboxd.* entries of @from into @to (later files win). */
static void
take_outboxd(struct kv *from, struct kv *to)
{
	for (size_t i = 0; i < from->n;) {
		struct kv_entry *e = &from->v[i];

		if (starts_with(e->key, "outboxd.")) {
			kv_set(to, e->key, e->value, e->origin);
			kv_del(from, e->key);
		} else {
			i++;
		}
	}
}

/* OUTBOXD_SLOT_CREATE=true -> outboxd.slot.create; the environment wins over files. */
static void
env_outboxd(char *const *envp, struct kv *out)
{
	struct buf key = BUF_INIT, origin = BUF_INIT;

	for (; envp && *envp; envp++) {
		const char *eq = strchr(*envp, '=');

		if (!eq || !starts_with(*envp, "OUTBOXD_")) {
			continue;
		}
		buf_reset(&key);
		for (const char *c = *envp; c < eq; c++) {
			buf_add_char(&key, *c == '_' ? '.' : (char)tolower((unsigned char)*c));
		}
		buf_reset(&origin);
		buf_add_str(&origin, "environment ");
		buf_add(&origin, *envp, (size_t)(eq - *envp));
		kv_set(out, buf_cstr(&key), eq + 1, buf_cstr(&origin));
	}
	buf_fini(&key);
	buf_fini(&origin);
}

/* ---- Kafka Connect config providers ---- */

/* The class of provider @name declared in config.providers (a ConfigDef LIST), or NULL. */
static const char *
provider_class(const struct kv *worker, const char *name)
{
	const char *list = kv_get(worker, "config.providers");
	struct configdef_list names = CONFIGDEF_LIST_INIT;
	struct buf key = BUF_INIT;
	const char *cls = NULL;

	if (list) {
		configdef_list(list, &names);
	}
	for (size_t i = 0; i < names.n; i++) {
		if (strcmp(names.v[i], name) == 0) {
			buf_add_fmt(&key, "config.providers.%s.class", name);
			cls = kv_get(worker, buf_cstr(&key));
			cls = cls ? cls : "";
			break;
		}
	}
	configdef_list_fini(&names);
	buf_fini(&key);
	return cls;
}

static int
read_provided(const char *cls, const char *path, const char *key, char *const *envp,
	      struct buf *out, char *why, size_t whylen)
{
	struct kv props = KV_INIT;
	struct buf full = BUF_INIT;
	char *text;
	size_t len;
	const char *v;
	int r;

	if (strcmp(cls, "org.apache.kafka.common.config.provider.EnvVarConfigProvider") == 0) {
		v = cfgsrc_env_get(envp, key);
		if (!v) {
			snprintf(why, whylen, "environment variable %s is not set", key);
			return -ENOENT;
		}
		buf_add_str(out, v);
		return 0;
	}
	if (strcmp(cls, "org.apache.kafka.common.config.provider.DirectoryConfigProvider") == 0) {
		buf_add_fmt(&full, "%s/%s", path, key);
		r = properties_read_file(buf_cstr(&full), &text, &len, why, whylen);
		buf_fini(&full);
		if (r) {
			return r;
		}
		buf_add(out, text, len);
		free(text);
		return 0;
	}
	r = properties_load(path, &props, why, whylen);
	if (r) {
		return r;
	}
	v = kv_get(&props, key);
	if (v) {
		buf_add_str(out, v);
	} else {
		snprintf(why, whylen, "key \"%s\" not found in %s", key, path);
		r = -ENOENT;
	}
	kv_fini(&props);
	return r;
}

/* Resolve ${provider:[path:]key} references in @e's value, as Kafka's ConfigTransformer does. */
static int
resolve_providers(const struct kv *worker, char *const *envp, struct kv_entry *e, char *errbuf,
		  size_t errlen)
{
	struct buf out = BUF_INIT;
	const char *p = e->value, *open;
	bool changed = false;
	int r = 0;

	while ((open = strstr(p, "${")) != NULL) {
		const char *close = strchr(open, '}');
		char *inner, *c1, *c2, *path, *key;
		const char *cls;
		char why[512];

		if (!close) {
			break;
		}
		buf_add(&out, p, (size_t)(open - p));
		inner = xstrndup(open + 2, (size_t)(close - open - 2));
		c1 = strchr(inner, ':');
		cls = c1 ? (*c1 = '\0', provider_class(worker, inner)) : NULL;
		if (!cls) {
			/* not a declared provider: Kafka leaves the text as it is */
			buf_add(&out, open, (size_t)(close - open + 1));
			free(inner);
			p = close + 1;
			continue;
		}
		c2 = strchr(c1 + 1, ':');
		path = c2 ? c1 + 1 : (char *)"";
		key = c2 ? (*c2 = '\0', c2 + 1) : c1 + 1;
		r = read_provided(cls, path, key, envp, &out, why, sizeof(why));
		if (r) {
			errbuf_set(errbuf, errlen, "%s: %s: cannot resolve ${%s:%s%s%s}: %s",
				   e->origin, e->key, inner, path, *path ? ":" : "", key, why);
		}
		free(inner);
		if (r) {
			break;
		}
		changed = true;
		p = close + 1;
	}
	if (r == 0 && changed) {
		buf_add_str(&out, p);
		free(e->value);
		e->value = buf_steal(&out);
	}
	buf_fini(&out);
	return r ? -EINVAL : 0;
}

static int
check_providers(const struct kv *worker, char *errbuf, size_t errlen)
{
	static const char *const known[] = {
		"org.apache.kafka.common.config.provider.FileConfigProvider",
		"org.apache.kafka.common.config.provider.EnvVarConfigProvider",
		"org.apache.kafka.common.config.provider.DirectoryConfigProvider",
	};

	for (size_t i = 0; i < worker->n; i++) {
		const struct kv_entry *e = &worker->v[i];
		size_t n = strlen(e->key);
		bool ok = false;

		if (!starts_with(e->key, "config.providers.") || n < 6 ||
		    strcmp(e->key + n - 6, ".class") != 0) {
			continue;
		}
		for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
			ok = ok || strcmp(e->value, known[k]) == 0;
		}
		if (!ok) {
			errbuf_set(
				errbuf, errlen,
				"%s: %s: config provider \"%s\" is not supported; outboxd resolves "
				"FileConfigProvider, EnvVarConfigProvider and DirectoryConfigProvider",
				e->origin, e->key, e->value);
			return -EINVAL;
		}
	}
	return 0;
}

static int
connect_resolve(struct cfgsrc *src, char *const *envp, char *errbuf, size_t errlen)
{
	struct kv *lists[] = { &src->worker, &src->connector, &src->outboxd };
	int r = check_providers(&src->worker, errbuf, errlen);

	if (r || !kv_find(&src->worker, "config.providers")) {
		return r;
	}
	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
		for (size_t i = 0; i < lists[l]->n; i++) {
			r = resolve_providers(&src->worker, envp, &lists[l]->v[i], errbuf, errlen);
			if (r) {
				return r;
			}
		}
	}
	return 0;
}

/* ---- Debezium Server ---- */

/* Env name prefixes that introduce keys not present in the file. */
static const char *const server_env_prefixes[] = {
	"DEBEZIUM_SOURCE_",    "DEBEZIUM_SINK_",      "DEBEZIUM_FORMAT_",
	"DEBEZIUM_TRANSFORMS", "DEBEZIUM_PREDICATES",
};

/* The property name for an environment-only DEBEZIUM_* variable (vocabulary spelling if any). */
static char *
server_env_key(const char *name, size_t n)
{
	struct buf key = BUF_INIT;

	if (n > 16 && strncmp(name, "DEBEZIUM_SOURCE_", 16) == 0) {
		for (size_t i = 0; i < vocab_data_len; i++) {
			char *env;
			bool same;

			buf_reset(&key);
			buf_add_fmt(&key, "debezium.source.%s", vocab_data[i].key);
			env = cfgsrc_env_name(buf_cstr(&key));
			same = strlen(env) == n && strncmp(env, name, n) == 0;
			free(env);
			if (same) {
				return buf_steal(&key);
			}
		}
		buf_reset(&key);
	}
	for (size_t i = 0; i < n; i++) {
		buf_add_char(&key, name[i] == '_' ? '.' : (char)tolower((unsigned char)name[i]));
	}
	return buf_steal(&key);
}

static void
server_env(struct kv *raw, char *const *envp)
{
	struct buf origin = BUF_INIT;

	for (char *const *ep = envp; ep && *ep; ep++) {
		const char *eq = strchr(*ep, '=');
		size_t n = eq ? (size_t)(eq - *ep) : 0;
		bool matched = false, wanted = false;

		if (!eq) {
			continue;
		}
		buf_reset(&origin);
		buf_add_str(&origin, "environment ");
		buf_add(&origin, *ep, n);
		for (size_t i = 0; i < raw->n; i++) {
			char *env = cfgsrc_env_name(raw->v[i].key);

			if (strlen(env) == n && strncmp(env, *ep, n) == 0) {
				free(raw->v[i].value);
				free(raw->v[i].origin);
				raw->v[i].value = xstrdup(eq + 1);
				raw->v[i].origin = xstrdup(buf_cstr(&origin));
				matched = true;
			}
			free(env);
		}
		for (size_t i = 0; i < sizeof(server_env_prefixes) / sizeof(server_env_prefixes[0]);
		     i++) {
			wanted = wanted || strncmp(*ep, server_env_prefixes[i],
						   strlen(server_env_prefixes[i])) == 0;
		}
		if (!matched && wanted) {
			char *key = server_env_key(*ep, n);

			kv_set(raw, key, eq + 1, buf_cstr(&origin));
			free(key);
		}
	}
	buf_fini(&origin);
}

/* Split the Server file into connector keys (Connect names) and the rest. */
static void
server_split(struct kv *raw, struct cfgsrc *src)
{
	for (size_t i = 0; i < raw->n; i++) {
		const struct kv_entry *e = &raw->v[i];

		if (starts_with(e->key, "debezium.source.")) {
			kv_set(&src->connector, e->key + 16, e->value, e->origin);
		} else if (starts_with(e->key, "debezium.transforms") ||
			   starts_with(e->key, "debezium.predicates")) {
			kv_set(&src->connector, e->key + 9, e->value, e->origin);
		} else if (starts_with(e->key, "outboxd.")) {
			kv_set(&src->outboxd, e->key, e->value, e->origin);
		} else {
			kv_set(&src->server, e->key, e->value, e->origin);
		}
	}
}

static int
load_server(struct file *f, char *const *envp, struct cfgsrc *src, char *errbuf, size_t errlen)
{
	int r;

	server_env(&f->keys, envp);
	r = cfgsrc_expr_expand(&f->keys, envp, errbuf, errlen);
	if (r) {
		return r;
	}
	src->flavour = CFGSRC_SERVER;
	src->connector_path = xstrdup(f->path);
	server_split(&f->keys, src);
	return 0;
}

static int
load_connect(struct file *files, int n, char *const *envp, struct cfgsrc *src, char *errbuf,
	     size_t errlen)
{
	struct file *worker = NULL, *connector = NULL;

	for (int i = 0; i < n; i++) {
		struct file **slot = files[i].kind == FILE_WORKER ? &worker : &connector;

		if (*slot) {
			errbuf_set(
				errbuf, errlen,
				"%s: %s is also a %s file; pass one worker file and one connector file",
				files[i].path, (*slot)->path,
				files[i].kind == FILE_WORKER ? "Kafka Connect worker" :
							       "connector");
			return -EINVAL;
		}
		*slot = &files[i];
	}
	if (!worker || !connector) {
		errbuf_set(
			errbuf, errlen,
			"%s: no %s file; pass the Kafka Connect worker .properties and the connector "
			".properties, JSON or Strimzi KafkaConnector YAML (the connector file is the "
			"one with connector.class)",
			files[0].path, worker ? "connector" : "worker");
		return -EINVAL;
	}
	src->flavour = CFGSRC_CONNECT;
	src->worker_path = xstrdup(worker->path);
	src->connector_path = xstrdup(connector->path);
	src->worker = worker->keys;
	src->connector = connector->keys;
	src->ignored = connector->ignored;
	worker->keys = KV_INIT;
	connector->keys = KV_INIT;
	connector->ignored = KV_INIT;
	take_outboxd(&src->worker, &src->outboxd);
	take_outboxd(&src->connector, &src->outboxd);
	return connect_resolve(src, envp, errbuf, errlen);
}

int
cfgsrc_load(const char *const *paths, int npaths, char *const *envp, struct cfgsrc *ret,
	    char *errbuf, size_t errlen)
{
	struct file *files;
	struct cfgsrc src = CFGSRC_INIT;
	int r = 0, nread = 0;

	if (npaths < 1) {
		errbuf_set(errbuf, errlen, "no configuration file given");
		return -EINVAL;
	}
	files = xcalloc((size_t)npaths, sizeof(*files));
	for (; nread < npaths && r == 0; nread++) {
		r = read_one(paths[nread], &files[nread], errbuf, errlen);
	}
	for (int i = 0; r == 0 && i < npaths; i++) {
		if (files[i].kind == FILE_SERVER && npaths > 1) {
			errbuf_set(
				errbuf, errlen,
				"%s: a Debezium Server application.properties is the whole configuration; "
				"pass it alone",
				files[i].path);
			r = -EINVAL;
		}
	}
	if (r == 0) {
		r = files[0].kind == FILE_SERVER ?
			    load_server(&files[0], envp, &src, errbuf, errlen) :
			    load_connect(files, npaths, envp, &src, errbuf, errlen);
	}
	for (int i = 0; i < nread; i++) {
		kv_fini(&files[i].keys);
		kv_fini(&files[i].ignored);
	}
	free(files);
	if (r) {
		cfgsrc_fini(&src);
		return r;
	}
	env_outboxd(envp, &src.outboxd);
	*ret = src;
	return 0;
}

void
cfgsrc_fini(struct cfgsrc *src)
{
	free(src->worker_path);
	free(src->connector_path);
	kv_fini(&src->worker);
	kv_fini(&src->connector);
	kv_fini(&src->server);
	kv_fini(&src->outboxd);
	kv_fini(&src->ignored);
	*src = CFGSRC_INIT;
}
