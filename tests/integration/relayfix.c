/* SPDX-License-Identifier: Apache-2.0 */
#include "relayfix.h"

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"
#include "outboxd/util/mem.h"

/* "<name>_<suffix>" */
static char *
suffixed(const char *name, const char *suffix)
{
	struct buf b = BUF_INIT;

	buf_add_fmt(&b, "%s_%s", name, suffix);
	return buf_steal(&b);
}

void
relayfix_init(struct relayfix *f, bool all_tables)
{
	char *u = itest_unique("rf");
	char tmpl[] = "/tmp/outboxd-itest-XXXXXX";

	memset(f, 0, sizeof(*f));
	f->name = u;
	f->all_tables = all_tables;
	f->slot = suffixed(u, "slot");
	f->pub = suffixed(u, "pub");
	f->side_slot = suffixed(u, "side");
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	f->dir = xstrdup(tmpl);
	f->pg = itest_pg();
	/*
	 * A failed test skips relayfix_fini(): its slots would stay and, a few failures later,
	 * use up max_replication_slots for every test after it. Tests run one at a time, each in
	 * its own process, so an inactive fixture slot of another process is such a leftover.
	 */
	itest_sqlf(f->pg,
		   "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
		   "WHERE slot_name LIKE 'rf\\_%%' AND slot_name NOT LIKE 'rf\\_%%\\_%d\\_%%' AND "
		   "NOT active",
		   (int)getpid());
	itest_sqlf(f->pg, "CREATE SCHEMA %s", u);
	itest_sqlf(
		f->pg,
		"CREATE TABLE %s.outbox (id uuid PRIMARY KEY, aggregatetype varchar(255) NOT NULL, "
		"aggregateid varchar(255) NOT NULL, type varchar(255) NOT NULL, payload jsonb, "
		"created_at timestamptz NOT NULL DEFAULT now())",
		u);
	itest_sqlf(f->pg, "CREATE TABLE %s.business (id serial PRIMARY KEY, v text)", u);
	if (all_tables) {
		itest_sqlf(f->pg, "CREATE PUBLICATION %s FOR ALL TABLES", f->pub);
	} else {
		itest_sqlf(f->pg,
			   "CREATE PUBLICATION %s FOR TABLE %s.outbox WITH (publish = 'insert')",
			   f->pub, u);
	}
	/* The publication first, then the slots (reference pgoutput.md 1.4). */
	itest_sqlf(f->pg, "SELECT pg_create_logical_replication_slot('%s', 'pgoutput')", f->slot);
	itest_sqlf(f->pg, "SELECT pg_create_logical_replication_slot('%s', 'test_decoding')",
		   f->side_slot);
}

void
relayfix_config(struct relayfix *f, const char *worker_extra, const char *connector_extra)
{
	struct buf path = BUF_INIT;
	FILE *w;

	buf_add_fmt(&path, "%s/worker.properties", f->dir);
	w = fopen(buf_cstr(&path), "w");
	ck_assert_ptr_nonnull(w);
	fprintf(w,
		"# Kafka Connect standalone worker, as a Debezium user has it\n"
		"bootstrap.servers=%s\n"
		"key.converter=org.apache.kafka.connect.json.JsonConverter\n"
		"value.converter=org.apache.kafka.connect.json.JsonConverter\n"
		"key.converter.schemas.enable=false\n"
		"value.converter.schemas.enable=false\n"
		"offset.storage.file.filename=/tmp/connect.offsets\n"
		"offset.flush.interval.ms=10000\n"
		"outboxd.http.port=0\n"
		"%s\n",
		itest_env("OUTBOXD_TEST_KAFKA_BOOTSTRAP"), worker_extra ? worker_extra : "");
	fclose(w);
	buf_reset(&path);
	buf_add_fmt(&path, "%s/connector.properties", f->dir);
	w = fopen(buf_cstr(&path), "w");
	ck_assert_ptr_nonnull(w);
	fprintf(w,
		"name=outbox-connector\n"
		"connector.class=io.debezium.connector.postgresql.PostgresConnector\n"
		"tasks.max=1\n"
		"database.hostname=%s\n"
		"database.port=%s\n"
		"database.user=postgres\n"
		"database.password=%s\n"
		"database.dbname=outboxd\n"
		"topic.prefix=%s\n"
		"plugin.name=pgoutput\n"
		"slot.name=%s\n"
		"publication.name=%s\n"
		"publication.autocreate.mode=disabled\n"
		"table.include.list=%s.outbox\n"
		"snapshot.mode=no_data\n"
		"# other tests emit logical decoding messages in the same database\n"
		"message.prefix.exclude.list=.*\n"
		"transforms=outbox\n"
		"transforms.outbox.type=io.debezium.transforms.outbox.EventRouter\n"
		"%s\n",
		itest_env("OUTBOXD_TEST_PG_HOST"), itest_env("OUTBOXD_TEST_PG_PORT"),
		itest_env("OUTBOXD_TEST_PG_SUPERUSER_PASSWORD"), f->name, f->slot, f->pub, f->name,
		connector_extra ? connector_extra : "");
	fclose(w);
	buf_fini(&path);
}

void
relayfix_start(struct relayfix *f)
{
	relayfix_start_command(f, "run");
}

pid_t
relayfix_spawn(const struct relayfix *f, const char *command, const char *log, int http_port)
{
	const char *bin = itest_env("OUTBOXD_BIN");
	struct buf lp = BUF_INIT, wk = BUF_INIT, cn = BUF_INIT;
	pid_t pid;

	buf_add_fmt(&lp, "%s/%s", f->dir, log);
	buf_add_fmt(&wk, "%s/worker.properties", f->dir);
	buf_add_fmt(&cn, "%s/connector.properties", f->dir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		FILE *out = freopen(buf_cstr(&lp), "a", stderr);
		char port[16];

		(void)out;
		if (http_port) {
			snprintf(port, sizeof(port), "%d", http_port);
			setenv("OUTBOXD_HTTP_PORT", port, 1);
		}
		/* A test that fails mid-way must not leave outboxd running. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(bin, bin, command, buf_cstr(&wk), buf_cstr(&cn), (char *)NULL);
		_exit(127);
	}
	buf_fini(&lp);
	buf_fini(&wk);
	buf_fini(&cn);
	return pid;
}

void
relayfix_start_command(struct relayfix *f, const char *command)
{
	f->pid = relayfix_spawn(f, command, "outboxd.log", 0);
}

static int
status_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int
relayfix_wait_exit(struct relayfix *f, int timeout_s)
{
	int st;

	for (int i = 0; i < timeout_s * 10; i++) {
		pid_t r = waitpid(f->pid, &st, WNOHANG);

		if (r == f->pid) {
			f->pid = 0;
			return status_code(st);
		}
		usleep(100 * 1000);
	}
	return -1;
}

int
relayfix_stop(struct relayfix *f, int sig)
{
	int st, rc;

	if (!f->pid) {
		return -1;
	}

	kill(f->pid, sig);
	if ((rc = relayfix_wait_exit(f, 60)) >= 0) {
		return rc;
	}
	kill(f->pid, SIGKILL);
	waitpid(f->pid, &st, 0);
	f->pid = 0;
	return status_code(st);
}

char *
relayfix_log_named(const struct relayfix *f, const char *log)
{
	struct buf path = BUF_INIT, out = BUF_INIT;
	char chunk[4096];
	size_t n;
	FILE *in;

	buf_add_fmt(&path, "%s/%s", f->dir, log);
	in = fopen(buf_cstr(&path), "r");
	buf_fini(&path);
	if (in) {
		while ((n = fread(chunk, 1, sizeof(chunk), in)) > 0) {
			buf_add(&out, chunk, n);
		}
		fclose(in);
	}
	return buf_steal(&out);
}

char *
relayfix_log(const struct relayfix *f)
{
	return relayfix_log_named(f, "outboxd.log");
}

char *
relayfix_log_tail(const struct relayfix *f)
{
	char *all = relayfix_log(f);
	size_t n = strlen(all);

	if (n > 3000) {
		memmove(all, all + n - 3000, 3001);
	}
	return all;
}

bool
relayfix_wait_log_named(const struct relayfix *f, const char *log, const char *needle,
			int timeout_s)
{
	for (int i = 0; i < timeout_s * 10; i++) {
		char *text = relayfix_log_named(f, log);
		bool found = strstr(text, needle) != NULL;

		free(text);
		if (found) {
			return true;
		}
		usleep(100 * 1000);
	}
	return false;
}

bool
relayfix_wait_log(const struct relayfix *f, const char *needle, int timeout_s)
{
	return relayfix_wait_log_named(f, "outboxd.log", needle, timeout_s);
}

static lsn_t
lsn_query(PGconn *c, const char *sql)
{
	PGresult *r = itest_sql(c, sql);
	lsn_t l = 0;

	if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 0)) {
		ck_assert_int_eq(lsn_parse(PQgetvalue(r, 0, 0), &l), 0);
	}
	PQclear(r);
	return l;
}

lsn_t
relayfix_confirmed(struct relayfix *f)
{
	struct buf q = BUF_INIT;
	lsn_t l;

	buf_add_fmt(&q,
		    "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '%s'",
		    f->slot);
	l = lsn_query(f->pg, buf_cstr(&q));
	buf_fini(&q);
	return l;
}

lsn_t
relayfix_last_commit_end(struct relayfix *f)
{
	struct buf q = BUF_INIT;
	lsn_t l;

	/*
	 * test_decoding reports each COMMIT at the transaction's end LSN, the position pgoutput's
	 * Commit carries as end_lsn. Only transactions that wrote the outbox are of interest.
	 * Changes are consumed (get, not peek) so each call decodes only what is new.
	 */
	buf_add_fmt(&q,
		    "WITH c AS (SELECT lsn, xid, data FROM pg_logical_slot_get_changes('%s', NULL, "
		    "NULL)) SELECT max(c.lsn) FROM c WHERE c.data LIKE 'COMMIT%%' AND c.xid IN "
		    "(SELECT xid FROM c WHERE data LIKE 'table %s.outbox: INSERT:%%')",
		    f->side_slot, f->name);
	l = lsn_query(f->pg, buf_cstr(&q));
	buf_fini(&q);
	if (l > f->last_end) {
		f->last_end = l;
	}
	return f->last_end;
}

char *
relayfix_aggtype(const struct relayfix *f, const char *suffix)
{
	struct buf b = BUF_INIT;

	buf_add_fmt(&b, "%s_%s", f->name, suffix);
	return buf_steal(&b);
}

void
relayfix_busy(struct relayfix *f, bool on)
{
	if (!on) {
		if (f->busy_pid) {
			kill(f->busy_pid, SIGKILL);
			waitpid(f->busy_pid, NULL, 0);
			f->busy_pid = 0;
		}
		return;
	}
	f->busy_pid = fork();
	ck_assert_int_ge(f->busy_pid, 0);
	if (f->busy_pid == 0) {
		PGconn *c;
		struct buf q = BUF_INIT;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		c = PQconnectdb(getenv("OUTBOXD_TEST_PG_CONNINFO"));
		/* Inserts, updates and deletes in steady state: the table stays small. */
		buf_add_fmt(
			&q,
			"INSERT INTO %s.business (v) SELECT 'x' FROM generate_series(1, 10); "
			"UPDATE %s.business SET v = 'y' WHERE id IN (SELECT id FROM %s.business "
			"ORDER BY id DESC LIMIT 5); "
			"DELETE FROM %s.business WHERE id IN (SELECT id FROM %s.business ORDER BY id "
			"LIMIT 10)",
			f->name, f->name, f->name, f->name, f->name);
		for (;;) {
			PQclear(PQexec(c, buf_cstr(&q)));
			usleep(50 * 1000);
		}
	}
}

long
relayfix_peak_rss_kb(const struct relayfix *f)
{
	char path[64], line[256];
	long kb = -1;
	FILE *in;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)f->pid);
	in = fopen(path, "r");
	if (!in) {
		return -1;
	}
	while (fgets(line, sizeof(line), in)) {
		if (strncmp(line, "VmHWM:", 6) == 0) {
			kb = strtol(line + 6, NULL, 10);
		}
	}
	fclose(in);
	return kb;
}

void
relayfix_fini(struct relayfix *f)
{
	struct buf cmd = BUF_INIT, marker = BUF_INIT;

	relayfix_busy(f, false);
	relayfix_stop(f, SIGKILL);
	/* A just-killed walsender may hold the slot a moment longer. */
	for (int i = 0; i < 50; i++) {
		struct buf q = BUF_INIT;
		PGresult *r;

		buf_add_fmt(&q,
			    "SELECT count(*) FROM pg_replication_slots WHERE active AND slot_name "
			    "IN ('%s', '%s')",
			    f->slot, f->side_slot);
		r = itest_sql(f->pg, buf_cstr(&q));
		buf_fini(&q);
		if (strcmp(PQgetvalue(r, 0, 0), "0") == 0) {
			PQclear(r);
			break;
		}
		PQclear(r);
		usleep(100 * 1000);
	}
	/* The initial snapshot's marker slot, which a test may leave behind on purpose. */
	buf_add_fmt(&marker, "%s_outboxd_snapshot", f->slot);
	PQclear(PQexecParams(f->pg,
			     "SELECT pg_drop_replication_slot(slot_name) FROM "
			     "pg_replication_slots WHERE slot_name IN ($1, $2, $3)",
			     3, NULL, (const char *[]){ f->slot, f->side_slot, buf_cstr(&marker) },
			     NULL, NULL, 0));
	buf_fini(&marker);
	itest_sqlf(f->pg, "DROP PUBLICATION IF EXISTS %s", f->pub);
	itest_sqlf(f->pg, "DROP SCHEMA IF EXISTS %s CASCADE", f->name);
	PQfinish(f->pg);
	buf_add_fmt(&cmd, "rm -rf '%s'", f->dir);
	if (system(buf_cstr(&cmd)) != 0) {
		fprintf(stderr, "could not remove %s\n", f->dir);
	}
	buf_fini(&cmd);
	free(f->name);
	free(f->slot);
	free(f->pub);
	free(f->side_slot);
	free(f->dir);
}

int *
relayfix_java_partitions(const char *const *keys, const size_t *lens, size_t n, int nparts)
{
	char in_path[] = "/tmp/outboxd-keys-XXXXXX";
	int fd = mkstemp(in_path);
	struct buf cmd = BUF_INIT;
	int *parts = xcalloc(n ? n : 1, sizeof(*parts));
	FILE *w = fdopen(fd, "w"), *r;
	char here[4096];

	for (size_t i = 0; i < n; i++) {
		if (lens[i] == 0) {
			fputs("-", w);
		}
		for (size_t j = 0; j < lens[i]; j++) {
			fprintf(w, "%02x", (unsigned char)keys[i][j]);
		}
		fputc('\n', w);
	}
	fclose(w);
	snprintf(here, sizeof(here), "%s", itest_env("OUTBOXD_TEST_SOURCE_DIR"));
	buf_add_fmt(
		&cmd,
		"java -Xmx64m -cp \"$(cat '%s')\" '%s/tests/integration/Murmur2.java' %d < '%s'",
		itest_env("OUTBOXD_TEST_KAFKA_CLASSPATH"), here, nparts, in_path);
	r = popen(buf_cstr(&cmd), "r");
	ck_assert_ptr_nonnull(r);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(fscanf(r, "%d", &parts[i]), 1);
	}
	ck_assert_int_eq(pclose(r), 0);
	unlink(in_path);
	buf_fini(&cmd);
	return parts;
}

int
relayfix_check(struct relayfix *f, char *out, size_t size)
{
	struct buf cmd = BUF_INIT;
	size_t n;
	FILE *p;
	int st;

	buf_add_fmt(&cmd, "'%s' check '%s/worker.properties' '%s/connector.properties' 2>&1",
		    itest_env("OUTBOXD_BIN"), f->dir, f->dir);
	p = popen(buf_cstr(&cmd), "r");
	ck_assert(p != NULL);
	n = fread(out, 1, size - 1, p);
	out[n] = '\0';
	/* read to the end: a pipe closed early would kill outboxd with SIGPIPE */
	while (n == size - 1 && fgetc(p) != EOF) {
	}
	st = pclose(p);
	buf_fini(&cmd);
	return WEXITSTATUS(st);
}
