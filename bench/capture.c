/* SPDX-License-Identifier: Apache-2.0 */
/*
 * capture - record a raw pgoutput stream for bench/replay.
 *
 *   capture CONNINFO SLOT PUBLICATION ENDPOS OUTFILE [MAXROWS]
 *
 * Opens a replication connection, runs START_REPLICATION SLOT ... LOGICAL 0/0 (proto_version
 * '1', publication_names ...) -- what outboxd asks for -- and writes every XLogData ('w')
 * CopyData message, header included, to OUTFILE as [u32 big-endian length][bytes]. Stops after
 * the Commit whose end LSN reaches ENDPOS (or a keepalive past it), or after the Commit that
 * follows the MAXROWS-th Insert. Keepalives that ask for a
 * reply are answered; nothing is confirmed (flush stays 0/0), so the slot can be replayed again.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <libpq-fe.h>

static uint64_t
be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++) {
		v = (v << 8) | p[i];
	}
	return v;
}

static void
put64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

static int64_t
pg_now_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return ((int64_t)tv.tv_sec - 946684800) * 1000000 + tv.tv_usec;
}

static int
send_status(PGconn *c, uint64_t received)
{
	uint8_t m[34];

	m[0] = 'r';
	put64(m + 1, received);
	put64(m + 9, 0);
	put64(m + 17, 0);
	put64(m + 25, (uint64_t)pg_now_us());
	m[33] = 0;
	return PQputCopyData(c, (const char *)m, sizeof(m)) == 1 && PQflush(c) == 0 ? 0 : -1;
}

int
main(int argc, char **argv)
{
	unsigned hi, lo;
	uint64_t endpos, received = 0;
	unsigned long frames = 0, commits = 0, rows = 0, maxrows;
	PGconn *c;
	PGresult *r;
	FILE *out;
	char *conninfo, *cmd, *slot, *lit;

	if ((argc != 6 && argc != 7) || sscanf(argv[4], "%X/%X", &hi, &lo) != 2) {
		fprintf(stderr,
			"usage: capture CONNINFO SLOT PUBLICATION ENDPOS OUTFILE [MAXROWS]\n");
		return 2;
	}
	endpos = ((uint64_t)hi << 32) | lo;
	maxrows = argc == 7 ? strtoul(argv[6], NULL, 10) : 0;
	if (asprintf(&conninfo, "%s replication=database", argv[1]) < 0) {
		return 1;
	}
	c = PQconnectdb(conninfo);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "capture: %s", PQerrorMessage(c));
		return 1;
	}
	slot = PQescapeIdentifier(c, argv[2], strlen(argv[2]));
	lit = PQescapeLiteral(c, argv[3], strlen(argv[3]));
	if (asprintf(&cmd,
		     "START_REPLICATION SLOT %s LOGICAL 0/0 (proto_version '1', "
		     "publication_names %s)",
		     slot, lit) < 0) {
		return 1;
	}
	r = PQexec(c, cmd);
	if (PQresultStatus(r) != PGRES_COPY_BOTH) {
		fprintf(stderr, "capture: %s", PQerrorMessage(c));
		return 1;
	}
	PQclear(r);
	out = fopen(argv[5], "wb");
	if (!out) {
		perror(argv[5]);
		return 1;
	}
	for (;;) {
		char *buf = NULL;
		int n = PQgetCopyData(c, &buf, 0);

		if (n < 0) {
			fprintf(stderr, "capture: stream ended before %s: %s", argv[4],
				PQerrorMessage(c));
			return 1;
		}
		if (n >= 18 && buf[0] == 'k') {
			uint64_t walend = be64((uint8_t *)buf + 1);

			if (walend > received) {
				received = walend;
			}
			if (buf[17] && send_status(c, received) < 0) {
				fprintf(stderr, "capture: %s", PQerrorMessage(c));
				return 1;
			}
			PQfreemem(buf);
			if (walend >= endpos && commits > 0) {
				break;
			}
			continue;
		}
		if (n >= 26 && buf[0] == 'w') {
			uint8_t len[4] = { (uint8_t)(n >> 24), (uint8_t)(n >> 16),
					   (uint8_t)(n >> 8), (uint8_t)n };
			const uint8_t *d = (uint8_t *)buf + 25;
			bool done = false;

			fwrite(len, 1, 4, out);
			fwrite(buf, 1, (size_t)n, out);
			frames++;
			if (d[0] == 'I') {
				rows++;
			} else if (d[0] == 'C' && n >= 25 + 18) {
				uint64_t end = be64(d + 10);

				commits++;
				received = end;
				done = end >= endpos || (maxrows && rows >= maxrows);
			}
			if (frames % 10000 == 0 && send_status(c, received) < 0) {
				fprintf(stderr, "capture: %s", PQerrorMessage(c));
				return 1;
			}
			PQfreemem(buf);
			if (done) {
				break;
			}
			continue;
		}
		PQfreemem(buf);
	}
	fclose(out);
	fprintf(stderr, "capture: %lu frames, %lu transactions, %lu inserts\n", frames, commits,
		rows);
	PQfinish(c);
	return 0;
}
