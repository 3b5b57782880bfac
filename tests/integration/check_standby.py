#!/usr/bin/env python3
"""outboxd on a hot standby (TAP). The test stack gets a streaming standby for the time of the
test (scripts/stack standby up); rows are written on the primary.

On 16 and later the slot lives on the standby: `outboxd slot create` against the standby makes
it (the primary logs the standby snapshot it waits for), `outboxd run` against the standby
relays what the primary commits, says at start-up that it decodes on a standby and that a
heartbeat.action.query there runs read-only, and refuses outboxd.cleanup.retention (nothing can
be deleted on a standby). Before 16, creating the slot on the standby is refused with
PostgreSQL's reason.
"""
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from taplib import BIN, SOURCE, env, finish, free_port, tap, wait_for  # noqa: E402


STACK_DIR = env("OUTBOXD_TEST_STACK_DIR")
PRIMARY = env("OUTBOXD_TEST_PG_PORT")
PASSWORD = env("OUTBOXD_TEST_PG_SUPERUSER_PASSWORD")
MAJOR = int(env("OUTBOXD_TEST_PG_MAJOR"))
BOOT = env("OUTBOXD_TEST_KAFKA_BOOTSTRAP")
STACK = os.path.join(SOURCE, "scripts", "stack")


def psql(port, sql, check=True):
    r = subprocess.run(["psql", f"host=127.0.0.1 port={port} user=postgres dbname=outboxd", "-X",
                        "-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True,
                       text=True, env=dict(os.environ, PGPASSWORD=PASSWORD), timeout=60)
    if check and r.returncode != 0:
        raise RuntimeError(f"psql: {r.stderr.strip()}\n  SQL: {sql[:200]}")
    return r.stdout.strip()


def outboxd(args, files, popen_log=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("OUTBOXD_")}
    if popen_log:
        return subprocess.Popen([BIN] + args + files, stdout=popen_log, stderr=subprocess.STDOUT,
                                env=e)
    r = subprocess.run([BIN] + args + files, capture_output=True, text=True, timeout=120, env=e)
    return r.returncode, r.stdout + r.stderr


def files(d, standby, tag, extra=""):
    w, c = os.path.join(d, "worker.properties"), os.path.join(d, "connector.properties")
    with open(w, "w") as f:
        f.write(f"""bootstrap.servers={BOOT}
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
outboxd.http.port=0
""")
    with open(c, "w") as f:
        f.write(f"""name=sb
connector.class=io.debezium.connector.postgresql.PostgresConnector
database.hostname=127.0.0.1
database.port={standby}
database.user=postgres
database.password={PASSWORD}
database.dbname=outboxd
topic.prefix={tag}
slot.name={tag}_slot
publication.name={tag}_pub
table.include.list={tag}.outbox
transforms=outbox
transforms.outbox.type=io.debezium.transforms.outbox.EventRouter
transforms.outbox.route.topic.replacement={tag}_events
{extra}
""")
    return [w, c]


def count_topic(topic):
    r = subprocess.run(["kcat", "-C", "-b", BOOT, "-t", topic, "-o", "beginning", "-e", "-q",
                        "-f", "%s\\n"], capture_output=True, text=True, timeout=60)
    return len([l for l in r.stdout.splitlines() if l])


def scrape(port):
    import urllib.request
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            return r.read().decode()
    except OSError:
        return ""


def monitoring(port, slot):
    """sql/monitoring.sql on the standby: it runs there (the WAL position is the received one)."""
    r = subprocess.run(["psql", f"host=127.0.0.1 port={port} user=postgres dbname=outboxd", "-X",
                        "-q", "-v", "ON_ERROR_STOP=1", "-v", f"slot={slot}", "-f",
                        os.path.join(SOURCE, "sql", "monitoring.sql")], capture_output=True,
                       text=True, env=dict(os.environ, PGPASSWORD=PASSWORD), timeout=60)
    tap(r.returncode == 0, f"sql/monitoring.sql -v slot={slot} runs on the standby",
        r.stdout + r.stderr)


def main():
    print("TAP version 13")
    tag = f"sb_{secrets.token_hex(4)}"
    r = subprocess.run([STACK, "--dir", STACK_DIR, "standby", "up"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        print("Bail out! scripts/stack standby up failed: " + r.stderr[-2000:])
        return 1
    standby = [l.split("=", 1)[1] for l in r.stdout.splitlines()
               if l.startswith("export OUTBOXD_TEST_PG_STANDBY_PORT=")][0]
    d = tempfile.mkdtemp(prefix="outboxd-standby-")
    try:
        psql(PRIMARY, f"CREATE SCHEMA {tag}; CREATE TABLE {tag}.outbox (id uuid PRIMARY KEY, "
                      "aggregatetype text NOT NULL, aggregateid text NOT NULL, type text NOT "
                      f"NULL, payload jsonb); CREATE TABLE {tag}.hb (x int); CREATE PUBLICATION "
                      f"{tag}_pub FOR TABLE {tag}.outbox WITH (publish = 'insert')")
        tap(wait_for(lambda: psql(standby, f"SELECT to_regclass('{tag}.outbox') IS NOT NULL")
                     == "t", 30), "the standby replays the primary's outbox table")
        cfg = files(d, standby, tag)
        if MAJOR < 16:
            monitoring(standby, "debezium")
            rc, out = outboxd(["slot", "create"], cfg)
            tap(rc == 2 and "logical decoding cannot be used while in recovery" in out,
                f"PostgreSQL {MAJOR}: a slot on a standby is refused with PostgreSQL's reason", out)
            return finish()
        # slot creation on a standby waits for a standby snapshot from the primary
        stop = threading.Event()

        def snapshots():
            while not stop.is_set():
                psql(PRIMARY, "SELECT pg_log_standby_snapshot()", check=False)
                time.sleep(0.5)
        t = threading.Thread(target=snapshots, daemon=True)
        t.start()
        rc, out = outboxd(["slot", "create"], cfg)
        stop.set()
        t.join()
        tap(rc == 0 and psql(standby, f"SELECT count(*) FROM pg_replication_slots WHERE "
                                      f"slot_name = '{tag}_slot'") == "1",
            "outboxd slot create against the standby makes the slot there", out)
        # Until the standby's feedback carries the new slot's catalog_xmin to the primary, the
        # primary may prune catalog rows the slot needs, and the standby then invalidates the
        # slot (rows_removed; docs/postgresql.md, "Decoding on a standby"). PostgreSQL's own test
        # of decoding on a standby (035_standby_logical_decoding.pl) waits for it the same way.
        tap(wait_for(lambda: psql(PRIMARY, "SELECT catalog_xmin IS NOT NULL FROM "
                                           "pg_replication_slots WHERE slot_name = "
                                           "'outboxd_standby'") == "t", 30),
            "the primary holds the standby slot's catalog_xmin (hot_standby_feedback)")
        # the cleanup cannot run on a standby
        rc, out = outboxd(["run"], files(d, standby, tag, "outboxd.cleanup.retention=1 day"))
        tap(rc == 2 and "this server is a standby, where nothing can be deleted" in out,
            "outboxd run on a standby refuses outboxd.cleanup.retention (exit 2)", out)
        port = free_port()
        cfg = files(d, standby, tag, f"heartbeat.interval.ms=500\n"
                                     f"heartbeat.action.query=INSERT INTO {tag}.hb VALUES (1)\n"
                                     f"outboxd.http.port={port}\noutboxd.slot.poll.ms=300")
        logpath = os.path.join(d, "run.log")
        with open(logpath, "w") as log:
            p = outboxd(["run"], cfg, log)
            ok = wait_for(lambda: "streaming slot" in open(logpath).read(), 30)
            for i in range(20):
                psql(PRIMARY, f"INSERT INTO {tag}.outbox VALUES (gen_random_uuid(), 'A', "
                              f"'agg-{i % 3}', 'T', '{{\"i\": {i}}}')")
            got = wait_for(lambda: count_topic(f"{tag}_events") >= 20, 60)
            # the slot's health, read on the standby (its WAL position: the last received)
            metrics = ""

            def scraped():
                nonlocal metrics
                metrics = scrape(port)
                return "outboxd_slot_active 1" in metrics and \
                    "outboxd_slot_retained_wal_bytes " in metrics
            wait_for(scraped, 20)
            want = ["outboxd_slot_exists 1", "outboxd_slot_active 1",
                    "outboxd_slot_retained_wal_bytes "]
            if MAJOR >= 17:
                want += ["outboxd_slot_failover 0", "outboxd_slot_synced 0"]
            tap(all(w in metrics for w in want),
                f"/metrics on a standby: {', '.join(w.strip() for w in want)}",
                "\n".join(l for l in metrics.splitlines() if l.startswith("outboxd_slot")))
            monitoring(standby, f"{tag}_slot")
            p.send_signal(signal.SIGTERM)
            try:
                rc = p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = -1
        text = open(logpath).read()
        relayed = ok and got and count_topic(f"{tag}_events") == 20
        if not relayed:
            # what the standby says of the slot, and its log's end, beside outboxd's log
            slot = psql(standby, "SELECT to_jsonb(s) FROM pg_replication_slots s WHERE "
                                 f"slot_name = '{tag}_slot'", check=False)
            try:
                sblog = open(os.path.join(STACK_DIR, "standby", "server.log")).read()[-3000:]
            except OSError as e:
                sblog = str(e)
            text += f"\n--- the slot on the standby: {slot}\n--- standby log:\n{sblog}"
        tap(relayed, "outboxd run against the standby relays the 20 rows committed on the primary",
            text[-6000:])
        tap("this server is a standby: decoding here" in text and
            "heartbeat.action.query runs here read-only" in text,
            "it says at start-up that it decodes on a standby, and what that means for "
            "heartbeat.action.query", text[-3000:])
        tap(rc == 0, f"SIGTERM: exit 0 (exit {rc})", text[-3000:])
    finally:
        psql(standby, f"SELECT pg_drop_replication_slot('{tag}_slot') FROM pg_replication_slots "
                      f"WHERE slot_name = '{tag}_slot'", check=False)
        subprocess.run([STACK, "--dir", STACK_DIR, "standby", "down"], capture_output=True)
        psql(PRIMARY, f"DROP PUBLICATION IF EXISTS {tag}_pub; DROP SCHEMA IF EXISTS {tag} "
                      "CASCADE", check=False)
        subprocess.run(["rm", "-rf", d])
    return finish()


if __name__ == "__main__":
    sys.exit(main())
