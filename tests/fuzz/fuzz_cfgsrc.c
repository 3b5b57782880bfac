/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer entry point for cfgsrc, the reader of the configuration a Debezium user already
 * has: Kafka Connect worker and connector files (.properties or connector JSON, told apart by
 * content, with ${file:..} ${env:..} ${dir:..} config providers) and Debezium Server's
 * application.properties (MicroProfile environment names, ${VAR:default} expressions). The
 * first input byte gives the number of files (bit 0: two, else one); the rest is split at
 * "\n----\n" into the files and, last, an environment of the input's own, one NAME=value a
 * line, so nothing of the real environment is read.
 * Checked: a failure says why and leaves the result as CFGSRC_INIT; a success has the shape
 * cfgsrc.h promises (the flavour's paths, outboxd.* keys only in the outboxd list and all of
 * them there, no key twice in a list, every entry with a value and an origin naming a file or
 * the environment).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_tmp.h"
#include "outboxd/config/cfgsrc.h"
#include "outboxd/util/kv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ENV 64

static void
expect(bool ok)
{
	if (!ok) {
		abort();
	}
}

/* The length of the part at @p up to "\n----\n" or @end; *@next is where the next starts. */
static size_t
part(const uint8_t *p, const uint8_t *end, const uint8_t **next)
{
	static const char sep[] = "\n----\n";
	const size_t n = sizeof(sep) - 1;

	for (const uint8_t *q = p; (size_t)(end - q) >= n; q++) {
		if (memcmp(q, sep, n) == 0) {
			*next = q + n;
			return (size_t)(q - p);
		}
	}
	*next = end;
	return (size_t)(end - p);
}

/* Split @text (NUL-terminated, modified) into lines; at most MAX_ENV, NULL after the last. */
static void
split_env(char *text, char **envp)
{
	int n = 0;

	for (char *line = text; line && n < MAX_ENV; n++) {
		char *nl = strchr(line, '\n');

		envp[n] = line;
		if (nl) {
			*nl = '\0';
		}
		line = nl ? nl + 1 : NULL;
	}
	envp[n] = NULL;
}

static bool
starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Every entry complete, none twice, its origin a file or the environment. */
static void
check_list(const struct kv *kv, const char *const *paths, int npaths, bool outboxd)
{
	for (size_t i = 0; i < kv->n; i++) {
		const struct kv_entry *e = &kv->v[i];
		bool known = starts_with(e->origin, "environment ");

		expect(e->key && e->value && e->origin);
		expect(starts_with(e->key, "outboxd.") == outboxd);
		for (int k = 0; k < npaths && !known; k++) {
			known = starts_with(e->origin, paths[k]) &&
				e->origin[strlen(paths[k])] == ':';
		}
		expect(known);
		for (size_t j = 0; j < i; j++) {
			expect(strcmp(kv->v[j].key, e->key) != 0);
		}
	}
}

static void
check_result(const struct cfgsrc *src, const char *const *paths, int npaths)
{
	expect(src->connector_path != NULL);
	check_list(&src->outboxd, paths, npaths, true);
	check_list(&src->worker, paths, npaths, false);
	switch (src->flavour) {
	case CFGSRC_CONNECT:
		expect(npaths == 2 && src->worker_path && src->server.n == 0);
		expect(strcmp(src->worker_path, src->connector_path) != 0);
		for (size_t i = 0; i < src->connector.n; i++) {
			expect(!starts_with(src->connector.v[i].key, "outboxd."));
		}
		break;
	case CFGSRC_SERVER:
		expect(npaths == 1 && !src->worker_path && src->worker.n == 0);
		check_list(&src->server, paths, npaths, false);
		for (size_t i = 0; i < src->server.n; i++) {
			expect(!starts_with(src->server.v[i].key, "debezium.source."));
		}
		break;
	default: abort();
	}
}

static void
load(const char *const *paths, int npaths, char *const *envp)
{
	struct cfgsrc src = CFGSRC_INIT;
	char err[512];

	err[0] = '\0';
	if (cfgsrc_load(paths, npaths, envp, &src, err, sizeof(err)) == 0) {
		check_result(&src, paths, npaths);
		cfgsrc_fini(&src);
	} else {
		expect(err[0] != '\0');
		expect(src.flavour == 0 && !src.worker_path && !src.connector_path);
		expect(src.worker.n == 0 && src.connector.n == 0 && src.server.n == 0 &&
		       src.outboxd.n == 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path0[96], path1[96], *env_text, *envp[MAX_ENV + 1];
	const char *paths[2] = { path0, path1 };
	const uint8_t *p, *next, *end = data + size;
	const char *dir = fuzz_tmp_dir("cfgsrc");
	int npaths;
	size_t n;

	if (size < 1 || !dir) {
		return 0;
	}
	npaths = data[0] & 1 ? 2 : 1;
	p = data + 1;
	snprintf(path0, sizeof(path0), "%s/first.properties", dir);
	snprintf(path1, sizeof(path1), "%s/second.properties", dir);
	for (int i = 0; i < npaths; i++) {
		n = part(p, end, &next);
		if (fuzz_tmp_write(paths[i], p, n) < 0) {
			return 0;
		}
		p = next;
	}
	env_text = malloc((size_t)(end - p) + 1);
	expect(env_text != NULL);
	memcpy(env_text, p, (size_t)(end - p));
	env_text[end - p] = '\0';
	split_env(env_text, envp);
	load(paths, npaths, envp);
	free(env_text);
	for (int i = 0; i < npaths; i++) {
		unlink(paths[i]);
	}
	return 0;
}
