/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nullclient - the cheapest client a logical slot can have, for bench/run.
 *
 *   nullclient CONNINFO SLOT PUBLICATION ENDLSN [PAUSE_US]
 *
 * Streams SLOT as outboxd does (START_REPLICATION SLOT ... LOGICAL 0/0 (proto_version '1',
 * publication_names ...), CONNINFO plus replication=database), discards every XLogData ('w')
 * message and confirms what it received at once: write = flush = apply = the highest position
 * the walsender has sent. The stream then runs as fast as the walsender (and the connection)
 * can feed it: the ceiling outboxd, and pg_recvlogical, which writes every message, are
 * compared with. Stops, as pg_recvlogical -E does, at the first message whose position reaches ENDLSN,
 * then confirms it, ends the COPY and drains the walsender's answer.
 *
 * PAUSE_US (default 0): once everything received is taken, sleep this long before reading
 * again, so that the stream piles up in the socket as it does while a relay works. A logical
 * walsender tries to send after every message; a reader that keeps its socket empty makes each
 * of those a send() (on loopback, with the receiving side's work in the sender's context), a
 * full socket lets the walsender write its buffer in larger pieces. With a pause the walsender's
 * own cost per message is measured, not the reader's wake-ups.
 *
 * Prints "messages=N bytes=B seconds=S" (N XLogData messages, B their pgoutput bytes without
 * the 25-byte XLogData header, S from start to exit). Exit 0 at ENDLSN, 1 on any failure, 2
 * on a usage error. The conninfo is never printed: it may hold a password.
 */
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

/* A status update per message would make this client syscall-bound (a send() per 'w'); one
 * every 10 ms at most, or whenever a keepalive asks, is still "at once" on the walsender's scale
 * (pg_recvlogical, run by bench/run with -s 10, confirms every 10 s). */
#define STATUS_INTERVAL_US 10000

/* XLogData: 'w', dataStart, walEnd, sendTime, then the pgoutput message. */
#define XLOGDATA_HDR 25
/* Primary keepalive: 'k', walEnd, sendTime, replyRequested. */
#define KEEPALIVE_LEN 18

struct stream {
	uint64_t endpos;
	long pause_us;	    /* sleep when drained (PAUSE_US); 0 = block in libpq's read */
	uint64_t received;  /* highest position the walsender has sent us */
	uint64_t confirmed; /* last position sent in a status update */
	int64_t confirmed_us;
	unsigned long messages;
	unsigned long long bytes;
};

static uint64_t
get_be64(const char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

static void
put_be64(char *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, sizeof(v));
}

static int64_t
clock_us(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Standby status update ('r'); its clock counts from 2000-01-01 as PostgreSQL's does. */
static int
send_status(PGconn *c, struct stream *s)
{
	char m[34];

	m[0] = 'r';
	put_be64(m + 1, s->received);
	put_be64(m + 9, s->received);
	put_be64(m + 17, s->received);
	put_be64(m + 25, (uint64_t)(clock_us(CLOCK_REALTIME) - 946684800LL * 1000000));
	m[33] = 0;
	if (PQputCopyData(c, m, sizeof(m)) != 1 || PQflush(c) != 0) {
		fprintf(stderr, "nullclient: sending a status update: %s", PQerrorMessage(c));
		return -1;
	}
	s->confirmed = s->received;
	s->confirmed_us = clock_us(CLOCK_MONOTONIC);
	return 0;
}

/* Connects (CONNINFO may be key=value or a URI: it is expanded as dbname, and replication
 * overrides it, as pg_recvlogical's GetConnection does) and starts streaming SLOT. */
static PGconn *
start_stream(const char *conninfo, const char *slot, const char *pub)
{
	const char *keys[] = { "dbname", "replication", NULL };
	const char *vals[] = { conninfo, "database", NULL };
	PGconn *c = PQconnectdbParams(keys, vals, 1);
	char *id = NULL, *lit = NULL, *cmd = NULL;
	PGresult *r = NULL;
	bool ok = false;

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "nullclient: connecting: %s", PQerrorMessage(c));
		goto out;
	}
	id = PQescapeIdentifier(c, slot, strlen(slot));
	lit = PQescapeLiteral(c, pub, strlen(pub));
	if (!id || !lit) {
		fprintf(stderr, "nullclient: quoting the slot or publication name: %s",
			PQerrorMessage(c));
		goto out;
	}
	if (asprintf(&cmd,
		     "START_REPLICATION SLOT %s LOGICAL 0/0 (proto_version '1', "
		     "publication_names %s)",
		     id, lit) < 0) {
		fprintf(stderr, "nullclient: out of memory\n");
		cmd = NULL;
		goto out;
	}
	r = PQexec(c, cmd);
	if (PQresultStatus(r) != PGRES_COPY_BOTH) {
		fprintf(stderr, "nullclient: START_REPLICATION on slot %s: %s", id,
			PQerrorMessage(c));
		goto out;
	}
	ok = true;
out:
	PQclear(r);
	free(cmd);
	PQfreemem(lit);
	PQfreemem(id);
	if (!ok) {
		PQfinish(c);
		c = NULL;
	}
	return c;
}

/* Takes one CopyData message into account; *ret_reply says whether the walsender wants an
 * answer now. */
static int
take(struct stream *s, const char *buf, int n, bool *ret_reply)
{
	uint64_t pos;

	if (buf[0] == 'w' && n >= XLOGDATA_HDR) {
		/* A logical walsender puts the message's LSN in dataStart (a Commit's is the end
		 * of its record; 0 for a Relation); adding the length would name no WAL position. */
		pos = get_be64(buf + 1);
		s->messages++;
		s->bytes += (unsigned long long)(n - XLOGDATA_HDR);
		*ret_reply = false;
	} else if (buf[0] == 'k' && n >= KEEPALIVE_LEN) {
		/* walEnd is what the walsender has decoded; every change before it is already in
		 * the stream, so confirming it is safe (the subscription worker does the same). */
		pos = get_be64(buf + 1);
		*ret_reply = buf[17] != 0;
	} else {
		fprintf(stderr, "nullclient: unexpected CopyData message '%c' of %d bytes\n",
			buf[0], n);
		return -1;
	}
	if (pos > s->received) {
		s->received = pos;
	}
	return 0;
}

/* Reads until the position reaches endpos, confirming as it goes. */
static int
stream(PGconn *c, struct stream *s)
{
	bool drained = false; /* the socket had nothing at the last read */

	for (;;) {
		char *buf = NULL;
		bool reply = false;
		int n = PQgetCopyData(c, &buf, s->pause_us > 0);

		if (n == 0) {
			/*
			 * Paused mode, libpq's buffer taken: read the socket; only when that brought
			 * nothing either, let the stream pile up first.
			 */
			struct timespec ts = { s->pause_us / 1000000,
					       (s->pause_us % 1000000) * 1000 };

			if (drained) {
				nanosleep(&ts, NULL);
			}
			drained = true;
			if (!PQconsumeInput(c)) {
				fprintf(stderr, "nullclient: reading: %s", PQerrorMessage(c));
				return -1;
			}
			continue;
		}
		drained = false;
		if (n < 0) {
			PGresult *r = n == -1 ? PQgetResult(c) : NULL;
			const char *why = r ? PQresultErrorMessage(r) : PQerrorMessage(c);

			fprintf(stderr, "nullclient: stream ended before the end position: %s",
				*why ? why : "the server ended the COPY\n");
			PQclear(r);
			return -1;
		}
		if (take(s, buf, n, &reply) < 0) {
			PQfreemem(buf);
			return -1;
		}
		PQfreemem(buf);
		if (s->received >= s->endpos) {
			return 0;
		}
		if (reply || (s->received > s->confirmed &&
			      clock_us(CLOCK_MONOTONIC) - s->confirmed_us >= STATUS_INTERVAL_US)) {
			if (send_status(c, s) < 0) {
				return -1;
			}
		}
	}
}

/* The final confirm, then CopyDone; the walsender answers with its own CopyDone and
 * CommandComplete, and an error it raises in between must not pass unseen. */
static int
finish(PGconn *c, struct stream *s)
{
	PGresult *r;
	char *buf;
	int n, rc = 0;

	if (send_status(c, s) < 0) {
		return -1;
	}
	if (PQputCopyEnd(c, NULL) != 1 || PQflush(c) != 0) {
		fprintf(stderr, "nullclient: ending the COPY: %s", PQerrorMessage(c));
		return -1;
	}
	while ((n = PQgetCopyData(c, &buf, 0)) > 0) {
		PQfreemem(buf);
	}
	if (n == -2) {
		fprintf(stderr, "nullclient: reading past the end: %s", PQerrorMessage(c));
		return -1;
	}
	while ((r = PQgetResult(c)) != NULL) {
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			fprintf(stderr, "nullclient: ending the stream: %s",
				PQresultErrorMessage(r));
			rc = -1;
		}
		PQclear(r);
	}
	return rc;
}

int
main(int argc, char **argv)
{
	struct stream s = { 0 };
	int64_t t0 = clock_us(CLOCK_MONOTONIC);
	unsigned hi, lo;
	char tail;
	PGconn *c;
	int rc;

	if ((argc != 5 && argc != 6) || sscanf(argv[4], "%X/%X%c", &hi, &lo, &tail) != 2 ||
	    (argc == 6 && sscanf(argv[5], "%ld%c", &s.pause_us, &tail) != 1) || s.pause_us < 0) {
		fprintf(stderr, "usage: nullclient CONNINFO SLOT PUBLICATION ENDLSN [PAUSE_US]\n");
		return 2;
	}
	s.endpos = ((uint64_t)hi << 32) | lo;
	c = start_stream(argv[1], argv[2], argv[3]);
	if (!c) {
		return 1;
	}
	s.confirmed_us = clock_us(CLOCK_MONOTONIC);
	rc = stream(c, &s) == 0 && finish(c, &s) == 0 ? 0 : 1;
	PQfinish(c);
	if (rc == 0) {
		printf("messages=%lu bytes=%llu seconds=%.3f\n", s.messages, s.bytes,
		       (double)(clock_us(CLOCK_MONOTONIC) - t0) / 1e6);
	}
	return rc;
}
