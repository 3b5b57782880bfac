/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outboxd's command line: parses argv, loads the configuration, wires the modules together and
 * maps outcomes to exit codes (0 clean stop, 1 runtime failure, 2 configuration or
 * precondition error). The only file outside the core library.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "outboxd/config/config.h"
#include "outboxd/connect/router.h"
#include "outboxd/connect/runid.h"
#include "outboxd/diag/diagnose.h"
#include "outboxd/obs/http.h"
#include "outboxd/obs/metrics.h"
#include "outboxd/pg/pgconn.h"
#include "outboxd/pg/pgsql.h"
#include "outboxd/pipeline/loop.h"
#include "outboxd/pipeline/supervise.h"
#include "outboxd/poll/poll.h"
#include "outboxd/relay/relay.h"
#include "outboxd/snapshot/snapshot.h"
#include "outboxd/util/buf.h"
#include "outboxd/util/errbuf.h"
#include "outboxd/util/failpoint.h"
#include "outboxd/util/log.h"
#include "outboxd/util/lsn.h"
#include "outboxd/util/now.h"
#include "outboxd/util/version.h"

#define MOD "main"

extern char **environ;

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

static void
usage(FILE *out)
{
	/* Its headings are help2man's ("Usage:", "Commands:", ...): the man page is this text. */
	fputs("Usage: outboxd COMMAND [FILE...]\n"
	      "\n"
	      "Relays transactional-outbox rows from PostgreSQL logical replication to Kafka,\n"
	      "producing the records Debezium's outbox EventRouter produces.\n"
	      "\n"
	      "FILE... is the configuration a Debezium user already has: a Kafka Connect\n"
	      "standalone worker .properties plus a connector .properties or connector JSON file.\n"
	      "\n"
	      "Commands:\n"
	      "  run FILE...           run the relay until SIGTERM or SIGINT\n"
	      "  poll FILE...          run the polling publisher (no logical replication) from the\n"
	      "                        same files and outboxd.poll.*\n"
	      "  check FILE...         validate configuration, connectivity, slot, publication and\n"
	      "                        privileges, and print a diagnosis\n"
	      "  check --poll FILE...  the same for `outboxd poll`: table, columns, cleanup\n"
	      "                        settings, privileges, index, NOTIFY trigger\n"
	      "  slot create FILE...   create the configured pgoutput slot (operations staff)\n"
	      "  slot drop FILE...     drop it\n"
	      "  slot status FILE...   show it\n"
	      "  version               print the version of outboxd and of its libraries\n"
	      "  --help                print this text\n"
	      "\n"
	      "Environment:\n"
	      "  OUTBOXD_LOG_LEVEL     error, warn, info (the default) or debug\n"
	      "  OUTBOXD_LOG_FORMAT    text (the default) or json; also outboxd.log.format\n"
	      "  OUTBOXD_<KEY>         overrides outboxd.<key>, e.g. OUTBOXD_SLOT_CREATE=true\n"
	      "\n"
	      "Exit status:\n"
	      "  0                     clean stop (SIGTERM or SIGINT, the producer flushed)\n"
	      "  1                     runtime failure (a restart may help)\n"
	      "  2                     configuration or precondition error (a restart does not)\n"
	      "\n"
	      "Secrets belong in files read through ${file:PATH:KEY} or in the environment, never\n"
	      "on the command line. The manual is README.md and docs/.\n",
	      out);
}

/* A fresh version 7 UUID: Debezium's __debezium.context.runId, one per start (runid.h). */
static void
run_id(char out[RUNID_LEN])
{
	uint8_t b[10];

	if (getrandom(b, sizeof(b), 0) != sizeof(b)) {
		FILE *in = fopen("/dev/urandom", "r");

		if (!in || fread(b, 1, sizeof(b), in) != sizeof(b)) {
			abort();
		}
		fclose(in);
	}
	runid_format(now_unix_ms(), b, out);
}

static struct config *
load_config(int nfiles, char **files, bool poll)
{
	struct config *cfg = NULL;
	char err[1024];

	if (nfiles < 1) {
		fprintf(stderr, "outboxd: no configuration files given; see \"outboxd --help\"\n");
		return NULL;
	}
	if (config_load((const char *const *)files, nfiles, environ, &cfg, err, sizeof(err)) < 0) {
		log_error(MOD, "%s", err);
		return NULL;
	}
	/*
	 * outboxd.log.format in a file (OUTBOXD_LOG_FORMAT took effect at start already), and
	 * what every JSON line names from now on: set before any thread logs.
	 */
	log_set_format(strcmp(cfg->log_format, "json") == 0 ? LOG_FORMAT_JSON : LOG_FORMAT_TEXT);
	if (poll) {
		log_set_context("table", cfg->table_include_list);
	} else {
		log_set_context("slot", cfg->slot_name);
	}
	for (size_t i = 0; i < cfg->ignored.n; i++) {
		const struct kv_entry *e = &cfg->ignored.v[i];

		log_info(MOD, "accepted without effect: %s (%s)%s%s", e->key, e->value,
			 e->origin ? " at " : "", e->origin ? e->origin : "");
	}
	return cfg;
}

static int
build_router(const struct config *cfg, const char *rid, struct router **ret)
{
	struct router_config rc = config_router(cfg, rid);
	char err[1024];

	if (router_new(&rc, ret, err, sizeof(err)) < 0) {
		log_error(MOD, "%s", err);
		return -EINVAL;
	}
	return 0;
}

/* SIGTERM, SIGINT and SIGHUP arrive through a signalfd; the loop handles them. */
static int
signal_fd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* The tries at a slot on a standby that a conflict invalidates before it is protected. */
#define STANDBY_SLOT_TRIES 3

/*
 * Creates the slot. On a standby the new slot is exposed until the standby's next feedback
 * carries its catalog_xmin to the primary (wal_receiver_status_interval): catalog rows the
 * primary prunes meanwhile invalidate it (a conflict with recovery). So this waits one interval
 * and a second, checks that the slot survived, and makes it again when it did not (it has
 * delivered nothing, so nothing is lost), at most STANDBY_SLOT_TRIES times.
 * Return: 0, -EINTR when a stop was asked for while waiting, or pgsql_slot_create()'s, the
 * checks' or pgsql_slot_drop()'s code with @err set.
 */
static int
slot_create_settled(PGconn *c, const struct config *cfg, struct loop *loop, lsn_t *lsn, char *err,
		    size_t errlen)
{
	for (int attempt = 1;; attempt++) {
		bool standby = false, feedback = false;
		struct pgsql_slot slot;
		int64_t ms = 0;
		int rc = pgsql_slot_create(c, cfg->slot_name, cfg->slot_failover, lsn, err, errlen);

		rc = rc ? rc : pgsql_standby(c, &standby, &feedback, err, errlen);
		if (rc || !standby) {
			return rc;
		}
		if (!feedback || (rc = pgsql_feedback_interval_ms(c, &ms, err, errlen)) ||
		    ms == 0) {
			log_warn(MOD,
				 "replication slot \"%s\" was made on a standby whose %s: nothing "
				 "keeps the primary from removing catalog rows it needs",
				 cfg->slot_name,
				 !feedback ?
					 "hot_standby_feedback is off" :
					 "wal_receiver_status_interval is 0 (no regular feedback)");
			return rc;
		}
		log_info(
			MOD,
			"replication slot \"%s\" was made on a standby: waiting %lld ms, one "
			"wal_receiver_status_interval and a second, for its feedback to protect the "
			"slot on the primary",
			cfg->slot_name, (long long)ms + 1000);
		if (!loop_sleep(loop, ms + 1000)) {
			return -EINTR;
		}
		rc = pgsql_check_slot(c, cfg->slot_name, &slot, err, errlen);
		if (rc != -ESTALE) {
			return rc;
		}
		if (attempt == STANDBY_SLOT_TRIES) {
			errbuf_set(
				err, errlen,
				"a conflict with recovery invalidated the new slot before the "
				"standby's feedback protected it, %d times: the primary prunes catalog "
				"rows faster than wal_receiver_status_interval; lower it on the standby",
				attempt);
			return -EPERM;
		}
		log_warn(
			MOD,
			"a conflict with recovery invalidated replication slot \"%s\" before the "
			"standby's feedback protected it; it had delivered nothing: making it again",
			cfg->slot_name);
		if ((rc = pgsql_slot_drop(c, cfg->slot_name, err, errlen)) != 0) {
			return rc;
		}
	}
}

/*
 * outboxd.slot.create=true: creates the slot if it is missing (never recreates or replaces
 * one). A server that is not up yet, or any other transient failure, is waited for with the
 * pipeline's backoff (0.5 s doubling up to outboxd.restart.backoff.max.ms). Returns an exit
 * code, or -1 to go on streaming.
 */
static int
create_slot(const struct config *cfg, struct loop *loop)
{
	struct supervise sv;

	supervise_init(&sv, cfg->restart_backoff_max_ms, cfg->halt_after_failures, false);
	for (;;) {
		enum pgconn_failure f = PGCONN_TRANSIENT;
		int64_t backoff;
		PGconn *c = NULL;
		char err[1024], at[LSN_STRLEN];
		lsn_t lsn = 0;
		int rc = pgconn_open(&cfg->pg_conn, false, &c, &f, err, sizeof(err));

		if (rc == 0) {
			rc = slot_create_settled(c, cfg, loop, &lsn, err, sizeof(err));
			PQfinish(c);
		} else if (f == PGCONN_PRECONDITION) {
			log_error(MOD, "%s", err);
			return EXIT_USAGE;
		}
		if (rc == 0) {
			log_info(MOD,
				 "created replication slot \"%s\" at %s (outboxd.slot.create=true, "
				 "snapshot.mode=no_data)",
				 cfg->slot_name, lsn_format(lsn, at));
		}
		if (rc == 0 || rc == -EEXIST) {
			return -1;
		}
		if (rc == -EINTR) {
			return EXIT_OK; /* SIGTERM/SIGINT while the new slot settled */
		}
		if (rc != -EIO) { /* pgsql.h: -EIO is transient, every other code is not */
			log_error(MOD, "could not create replication slot \"%s\": %s",
				  cfg->slot_name, err);
			return EXIT_USAGE;
		}
		backoff = supervise_wait_ms(&sv, 0);
		log_warn(MOD,
			 "could not create replication slot \"%s\": %s; trying again in %lld ms",
			 cfg->slot_name, err, (long long)backoff);
		if (!loop_sleep(loop, backoff)) {
			return EXIT_OK; /* SIGTERM/SIGINT while waiting */
		}
	}
}

/*
 * The slot before streaming: with snapshot.mode=initial the snapshot (which creates the slot
 * when outboxd.slot.create=true), else with outboxd.slot.create=true the slot alone. Returns an
 * exit code, or -1 to go on streaming.
 */
static int
prepare_slot(const struct config *cfg, struct router *router, struct metrics *metrics,
	     struct loop *loop)
{
	struct snapshot_params sp = {
		.cfg = cfg, .router = router, .metrics = metrics, .loop = loop
	};

	if (strcmp(cfg->snapshot_mode, "initial") == 0) {
		switch (snapshot_run(&sp)) {
		case OUTCOME_OK: break;
		case OUTCOME_STOP: return EXIT_OK;
		case OUTCOME_HALT: return EXIT_RUNTIME;
		default: return EXIT_USAGE;
		}
	}
	return cfg->slot_create ? create_slot(cfg, loop) : -1;
}

/* What `run` and `poll` share: the configuration, router, metrics, HTTP and signal loop. */
struct proc {
	struct config *cfg;
	struct router *router;
	struct metrics *metrics;
	struct http *http;
	struct loop loop;
	char rid[RUNID_LEN];
	int sfd;
};

/* After every wait of the loop: the liveness endpoint's evidence (loop_hook). */
static void
loop_turned(void *metrics)
{
	metrics_loop_turned(metrics);
}

/* Sets up @p from the files; false (exit 2) when a step failed, which is logged. */
static bool
proc_start(struct proc *p, int nfiles, char **files, bool poll)
{
	char err[512];

	*p = (struct proc){ .sfd = -1 };
	p->metrics = metrics_new();
	if (!(p->cfg = load_config(nfiles, files, poll))) {
		return false;
	}
	/* Before any thread exists (libmicrohttpd, librdkafka): they inherit the blocked mask. */
	p->sfd = signal_fd();
	loop_init(&p->loop, p->sfd);
	p->loop.after_wait = loop_turned;
	p->loop.after_wait_arg = p->metrics;
	metrics_set_live_bound(p->metrics, p->cfg->health_live_ms);
	run_id(p->rid);
	if (build_router(p->cfg, p->rid, &p->router) < 0) {
		return false;
	}
	if (p->cfg->http_port > 0) {
		if (http_start(p->cfg->http_bind, (int)p->cfg->http_port, NULL, p->metrics,
			       &p->http, err, sizeof(err)) < 0) {
			log_error(MOD, "%s", err);
			return false;
		}
		log_info(MOD,
			 "serving /metrics, /health, /health/live and /health/ready on %s port %d",
			 p->cfg->http_bind ? p->cfg->http_bind : "0.0.0.0", http_port(p->http));
	}
	return true;
}

static void
proc_finish(struct proc *p)
{
	if (p->sfd >= 0) {
		close(p->sfd);
	}
	http_stop(p->http);
	metrics_free(p->metrics);
	router_free(p->router);
	config_free(p->cfg);
}

/*
 * outboxd.halt.stay: after a halt the process stays up, alive and not ready, with the reason on
 * /health and outboxd_halts_total on /metrics, until SIGTERM; the exit code stays the halt's.
 */
static void
stay_halted(struct proc *p)
{
	if (!p->cfg || !p->cfg->halt_stay || metrics_state(p->metrics) != METRICS_STATE_HALTED) {
		return;
	}
	log_info(MOD, "halted; staying up until SIGTERM (outboxd.halt.stay=true): /health/ready "
		      "answers 503 with the reason, /health/live 200");
	while (loop_sleep(&p->loop, 1000)) {
	}
}

static int
cmd_run(int nfiles, char **files)
{
	struct proc p;
	int rc = EXIT_USAGE;

	if (proc_start(&p, nfiles, files, false)) {
		log_info(MOD,
			 "outboxd %s starting: slot \"%s\", publication \"%s\", topic.prefix "
			 "\"%s\", runId %s",
			 version_string(), p.cfg->slot_name, p.cfg->publication_name,
			 p.cfg->topic_prefix, p.rid);
		rc = prepare_slot(p.cfg, p.router, p.metrics, &p.loop);
		if (rc < 0) {
			rc = (int)relay_run(&(struct relay_params){ .cfg = p.cfg,
								    .router = p.router,
								    .metrics = p.metrics },
					    &p.loop);
		}
		stay_halted(&p);
	}
	proc_finish(&p);
	return rc;
}

/* The keys given that only logical replication reads: listed once, as `poll` ignores them. */
static void
say_replication_keys(const struct config *cfg)
{
	static const char *const prefixes[] = { "slot.",	  "publication.",   "plugin.name",
						"snapshot.",	  "status.update.", "heartbeat.",
						"message.prefix." };
	struct buf keys = BUF_INIT;

	for (size_t i = 0; i < cfg->connector.n; i++) {
		for (size_t j = 0; j < sizeof(prefixes) / sizeof(prefixes[0]); j++) {
			if (strncmp(cfg->connector.v[i].key, prefixes[j], strlen(prefixes[j])) ==
			    0) {
				buf_add_fmt(&keys, "%s%s", keys.len ? ", " : "",
					    cfg->connector.v[i].key);
				break;
			}
		}
	}
	if (keys.len) {
		log_info(MOD,
			 "accepted without effect by outboxd poll (logical replication only): %s",
			 buf_cstr(&keys));
	}
	buf_fini(&keys);
}

static int
cmd_poll(int nfiles, char **files)
{
	struct proc p;
	int rc = EXIT_USAGE;

	if (proc_start(&p, nfiles, files, true)) {
		say_replication_keys(p.cfg);
		log_info(MOD, "outboxd %s polling: topic.prefix \"%s\", runId %s", version_string(),
			 p.cfg->topic_prefix, p.rid);
		switch (poll_run(&(struct poll_params){ .cfg = p.cfg,
							.router = p.router,
							.metrics = p.metrics,
							.loop = &p.loop })) {
		case OUTCOME_STOP:
		case OUTCOME_OK: rc = EXIT_OK; break;
		case OUTCOME_HALT: rc = EXIT_RUNTIME; break;
		default: rc = EXIT_USAGE; break;
		}
		stay_halted(&p);
	}
	proc_finish(&p);
	return rc;
}

/* @poll: `outboxd check --poll`, what `outboxd poll` needs instead of the slot's things. */
static int
cmd_check(int nfiles, char **files, bool poll)
{
	struct config *cfg = load_config(nfiles, files, poll);
	struct router *router = NULL;
	struct buf desc = BUF_INIT;
	char rid[RUNID_LEN];
	bool ok;

	if (!cfg) {
		printf("FAIL configuration (see the line above)\n");
		return EXIT_USAGE;
	}
	run_id(rid);
	config_describe(cfg, &desc);
	printf("%s", buf_cstr(&desc));
	buf_fini(&desc);
	ok = build_router(cfg, rid, &router) == 0;
	diagnose_line(NULL, ok ? 0 : 2, "configuration",
		      ok ? "valid" : "invalid (see the line above)");
	if (ok && poll) {
		ok = poll_check(&(struct poll_params){ .cfg = cfg, .router = router },
				diagnose_line, NULL);
		ok = diagnose_broker(cfg) && ok;
	} else if (ok) {
		ok = diagnose_postgres(cfg, router);
		ok = diagnose_broker(cfg) && ok;
	}
	printf("%s %s\n", poll ? "outboxd poll" : "outboxd",
	       ok ? "can run with this configuration" :
		    "cannot run with this configuration: fix the FAIL lines");
	router_free(router);
	config_free(cfg);
	return ok ? EXIT_OK : EXIT_USAGE;
}

static int
cmd_slot(int argc, char **argv)
{
	struct config *cfg;
	enum pgconn_failure f;
	struct pgsql_slot slot;
	PGconn *c = NULL;
	char err[1024], at[LSN_STRLEN];
	lsn_t lsn = 0;
	int rc = EXIT_OK;

	if (argc < 1 ||
	    (strcmp(argv[0], "create") && strcmp(argv[0], "drop") && strcmp(argv[0], "status"))) {
		fprintf(stderr,
			"outboxd: slot needs create, drop or status; see \"outboxd --help\"\n");
		return EXIT_USAGE;
	}
	if (!(cfg = load_config(argc - 1, argv + 1, false))) {
		return EXIT_USAGE;
	}
	if (pgconn_open(&cfg->pg_conn, false, &c, &f, err, sizeof(err)) < 0) {
		log_error(MOD, "%s", err);
		config_free(cfg);
		return f == PGCONN_PRECONDITION ? EXIT_USAGE : EXIT_RUNTIME;
	}
	if (strcmp(argv[0], "create") == 0) {
		struct loop loop;
		int sfd = signal_fd();

		loop_init(&loop, sfd);
		rc = slot_create_settled(c, cfg, &loop, &lsn, err, sizeof(err));
		if (sfd >= 0) {
			close(sfd);
		}
		if (rc == -EINTR) {
			printf("stopped while the new replication slot \"%s\" settled on the standby; "
			       "it exists: check it with \"outboxd slot status\"\n",
			       cfg->slot_name);
			rc = EXIT_OK;
		} else if (rc == 0) {
			printf("created replication slot \"%s\" (pgoutput) at %s\n", cfg->slot_name,
			       lsn_format(lsn, at));
		} else {
			log_error(MOD, "could not create replication slot \"%s\": %s",
				  cfg->slot_name, err);
			rc = EXIT_USAGE;
		}
	} else if (strcmp(argv[0], "drop") == 0) {
		if (pgsql_slot_drop(c, cfg->slot_name, err, sizeof(err)) == 0) {
			printf("dropped replication slot \"%s\"\n", cfg->slot_name);
		} else {
			log_error(MOD, "could not drop replication slot \"%s\": %s", cfg->slot_name,
				  err);
			rc = EXIT_USAGE;
		}
	} else if (pgsql_check_slot(c, cfg->slot_name, &slot, err, sizeof(err)) == 0) {
		printf("slot \"%s\": logical pgoutput, confirmed_flush_lsn %s, %s\n",
		       cfg->slot_name, lsn_format(slot.confirmed_flush, at),
		       slot.active ? "active" : "inactive");
	} else {
		printf("slot \"%s\": %s\n", cfg->slot_name, err);
		rc = EXIT_USAGE;
	}
	PQfinish(c);
	config_free(cfg);
	return rc;
}

int
main(int argc, char **argv)
{
	const char *level = getenv("OUTBOXD_LOG_LEVEL"), *format = getenv("OUTBOXD_LOG_FORMAT");
	enum log_level l;
	enum log_format f;

	if (level && log_level_parse(level, &l) == 0) {
		log_set_level(l);
	}
	/* From the first line; the configuration's outboxd.log.format refuses a bad value. */
	if (format && log_format_parse(format, &f) == 0) {
		log_set_format(f);
	}
	/* Test-only crash points (tests/fault); inert unless the variable is set. */
	if (failpoint_init(getenv("OUTBOXD_FAILPOINT")) < 0) {
		fprintf(stderr, "outboxd: OUTBOXD_FAILPOINT=%s names no failpoint\n",
			getenv("OUTBOXD_FAILPOINT"));
		return EXIT_USAGE;
	}
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		version_print(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "run")) {
		return cmd_run(argc - 2, argv + 2);
	}
	if (!strcmp(argv[1], "poll")) {
		return cmd_poll(argc - 2, argv + 2);
	}
	if (!strcmp(argv[1], "check")) {
		bool poll = argc > 2 && strcmp(argv[2], "--poll") == 0;

		return cmd_check(argc - 2 - poll, argv + 2 + poll, poll);
	}
	if (!strcmp(argv[1], "slot")) {
		return cmd_slot(argc - 2, argv + 2);
	}
	fprintf(stderr, "outboxd: unknown command \"%s\"; run \"outboxd --help\" for the list\n",
		argv[1]);
	return EXIT_USAGE;
}
