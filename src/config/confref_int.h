/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_CONFREF_INT_H
#define OUTBOXD_CONFREF_INT_H

/*
 * Private to the configuration reference: confref_probe.c loads a key and classifies it,
 * confref.c renders the tables and the probes' results.
 */

#include "outboxd/util/buf.h"

enum confref_class {
	CONFREF_HONOURED,
	CONFREF_IGNORED, /* accepted without effect */
	CONFREF_REFUSED,
};

struct confref_probe {
	enum confref_class cls;
	char *note;    /* ignored: why; refused: the loader's reason and fix; owned */
	char *rdkafka; /* a producer key: the librdkafka settings it set ("a, b"); owned */
};

/* Where a key of a vocabulary group is written for the probe (enum vocab_group). */
enum confref_place {
	CONFREF_WORKER,	   /* the worker file */
	CONFREF_PRODUCER,  /* the worker file, producer.<key> */
	CONFREF_CONNECTOR, /* the connector file */
	CONFREF_SMT,	   /* the connector file, transforms.outbox.<key> */
	CONFREF_CONVERTER, /* the worker file, value.converter.<key> */
	CONFREF_HEADER,	   /* the worker file, header.converter.<key> */
	CONFREF_SERVER,	   /* a Debezium Server file, the key as written */
	CONFREF_SOURCE,	   /* a Debezium Server file, debezium.source.<key> */
};

/*
 * confref_probe() - load a minimal Kafka Connect configuration with @key (a name, with any
 * pattern part of the vocabulary filled in) at @place, and classify what the loader did.
 * Return: 0, or -EINVAL if the minimal configuration itself did not load (a bug).
 */
int confref_probe(const char *key, enum confref_place place, struct confref_probe *out);

/* confref_probe_fini() - free @p's strings. */
void confref_probe_fini(struct confref_probe *p);

#endif
