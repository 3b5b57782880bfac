/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer entry point for the configuration parser. The input is parsed as
 * java.util.Properties text (properties_parse), and then, split at the first "\n----\n" (or
 * in halves), written to a worker file and a connector file that config_load() reads as a
 * user's pair: the connector as .properties, or as connector JSON when the input starts with
 * '{' after the split. Every entry of the result is read back, so a value or origin pointing
 * past its buffer is caught by the sanitizers.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_tmp.h"
#include "outboxd/config/config.h"
#include "outboxd/config/properties.h"
#include "outboxd/util/kv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned
touch(const char *s)
{
	unsigned sum = 0;

	for (; s && *s; s++) {
		sum += (unsigned char)*s;
	}
	return sum;
}

static unsigned
touch_kv(const struct kv *kv)
{
	unsigned sum = 0;

	for (size_t i = 0; i < kv->n; i++) {
		sum += touch(kv->v[i].key) + touch(kv->v[i].value) + touch(kv->v[i].origin);
	}
	return sum;
}

/* Where the connector part starts: after the first "\n----\n", else the second half. */
static size_t
split_at(const uint8_t *data, size_t size, size_t *conn_off)
{
	static const char sep[] = "\n----\n";

	for (size_t i = 0; i + sizeof(sep) - 1 <= size; i++) {
		if (memcmp(data + i, sep, sizeof(sep) - 1) == 0) {
			*conn_off = i + sizeof(sep) - 1;
			return i;
		}
	}
	*conn_off = size / 2;
	return size / 2;
}

static void
fuzz_config_load(const uint8_t *data, size_t size)
{
	char worker[96], conn[96], err[512];
	const char *paths[2] = { worker, conn };
	struct config *cfg = NULL;
	size_t conn_off, wlen = split_at(data, size, &conn_off);
	int json = conn_off < size && data[conn_off] == '{';
	const char *dir = fuzz_tmp_dir("config");

	if (!dir) {
		return;
	}
	snprintf(worker, sizeof(worker), "%s/worker.properties", dir);
	snprintf(conn, sizeof(conn), "%s/connector.%s", dir, json ? "json" : "properties");
	if (fuzz_tmp_write(worker, data, wlen) < 0 ||
	    fuzz_tmp_write(conn, data + conn_off, size - conn_off) < 0) {
		return;
	}
	err[0] = '\0';
	if (config_load(paths, 2, NULL, &cfg, err, sizeof(err)) == 0) {
		volatile unsigned sink = touch_kv(config_ignored(cfg));

		(void)sink;
		config_free(cfg);
	} else {
		volatile unsigned sink = touch(err);

		(void)sink;
	}
	unlink(conn);
	unlink(worker);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kv kv = KV_INIT;
	char err[256];
	char *copy = malloc(size ? size : 1);
	volatile unsigned sink = 0;

	if (!copy) {
		return 0;
	}
	if (size) {
		memcpy(copy, data, size);
	}
	/* An exact-size heap copy without a terminating NUL, so an overread shows. */
	if (properties_parse(copy, size, "fuzz.properties", &kv, err, sizeof(err)) == 0) {
		sink += touch_kv(&kv);
	} else {
		sink += touch(err);
	}
	(void)sink;
	kv_fini(&kv);
	free(copy);
	fuzz_config_load(data, size);
	return 0;
}
