/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_CONFREF_H
#define OUTBOXD_CONFREF_H

/*
 * The configuration reference (docs/configuration.md, outboxd.conf(5)), generated from the
 * loader itself so that it cannot drift: outboxd's own keys and the Debezium keys it honours
 * from the key tables (type, default, range, meaning), and the class of every other key of the
 * vocabularies (Kafka Connect worker, Java producer, Debezium connector and its JDBC properties,
 * the EventRouter, the converters) found by loading a minimal configuration with that key set
 * and seeing what the loader does: honours it, accepts it without effect (and why), or refuses it
 * (and the fix).
 */

#include "outboxd/util/buf.h"

enum confref_format {
	CONFREF_MARKDOWN, /* docs/configuration.md */
	CONFREF_MAN,	  /* outboxd.conf.5 (roff, man macros) */
};

/* confref_render() - append the whole reference in @fmt to @out. */
void confref_render(enum confref_format fmt, struct buf *out);

#endif
