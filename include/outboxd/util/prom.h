/* SPDX-License-Identifier: Apache-2.0 */
#ifndef OUTBOXD_UTIL_PROM_H
#define OUTBOXD_UTIL_PROM_H

/*
 * The Prometheus text exposition format (0.0.4), the pieces every renderer of /metrics writes:
 * a family's "# HELP" and "# TYPE" lines, an escaped label value, a one-sample family, and
 * seconds with a fixed number of decimals. One writer, so the metrics, the process' figures, the
 * slot's and librdkafka's statistics cannot drift apart in how they spell the format. Pure.
 */

#include <stdint.h>

#include "outboxd/util/buf.h"

/**
 * prom_family() - announce the family @name: "# HELP @name @help" and "# TYPE @name @type".
 * @type: "counter", "gauge" or "histogram". All strings borrowed; @help is written as it is
 *        (ours are constants without '\' or newline).
 */
void prom_family(struct buf *out, const char *name, const char *type, const char *help);

/**
 * prom_label_value() - @s (borrowed) as the text between a label's quotes: '\', '"' and newline
 * escaped as the exposition format requires.
 */
void prom_label_value(struct buf *out, const char *s);

/* prom_int() - a family of one sample: prom_family() and the line "@name @v". */
void prom_int(struct buf *out, const char *name, const char *type, const char *help, int64_t v);

/**
 * prom_seconds_ms() - the sample line "@name S.mmm" for @us microseconds: seconds with
 * milliseconds, truncated toward zero (ages and timestamps; finer digits would be noise).
 */
void prom_seconds_ms(struct buf *out, const char *name, int64_t us);

/* prom_seconds_us() - the sample line "@name S.uuuuuu": seconds with microseconds (round trips). */
void prom_seconds_us(struct buf *out, const char *name, int64_t us);

#endif
