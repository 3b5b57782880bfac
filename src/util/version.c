/* SPDX-License-Identifier: Apache-2.0 */
#include "outboxd/util/version.h"

#include <json.h>
#include <libpq-fe.h>
#include <librdkafka/rdkafka.h>
#include <microhttpd.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <yaml.h>

#include "outboxd/util/buf.h"

const char *
version_string(void)
{
	return OUTBOXD_VERSION;
}

void
version_print(FILE *out)
{
	int pq = PQlibVersion();
	char pcre[64] = "";

	pcre2_config(PCRE2_CONFIG_VERSION, pcre);
	fprintf(out, "outboxd %s\n", OUTBOXD_VERSION);
	fprintf(out, "libpq %d.%d\n", pq / 10000, pq % 10000);
	fprintf(out, "librdkafka %s\n", rd_kafka_version_str());
	fprintf(out, "json-c %s\n", json_c_version());
	fprintf(out, "pcre2 %s\n", pcre);
	fprintf(out, "libmicrohttpd %s\n", MHD_get_version());
	fprintf(out, "libyaml %s\n", yaml_get_version_string());
}
