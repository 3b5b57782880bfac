#!/usr/bin/env python3
"""Failover, proven (PostgreSQL 17+, TAP): a primary and a streaming hot standby with slot
synchronisation (scripts/stack standby), a failover slot made by `outboxd slot create` with
slot.failover=true, writers committing outbox rows all along, outboxd pointed at both hosts with
target_session_attrs=read-write.

The standby is cut off from the primary for a while (its WAL receiver stopped, its
primary_conninfo pointed nowhere), so that the primary commits transactions the standby does not
have; then the primary is killed (SIGKILL), the standby
promoted, the writers go on against it. The truth is the new primary's outbox table:
  L  rows the new primary has that Kafka lacks          (lost)
  P  events in Kafka for rows the new primary lacks     (phantom: no committed change)
  O  aggregates whose events are out of commit order
  D  duplicate events (at-least-once; consumers drop them by id)

Run 1, synchronized_standby_slots set on the primary: L = P = O = 0. Run 2, without it: `outboxd
check` says FAIL and `outboxd run` refuses the slot (exit 2); with outboxd.failover.unsafe=true it
streams, and the same failure publishes phantom events, which is why the refusal is the default. Each run has a private stack (scripts/stack --dir), removed at the end.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from taplib import BIN, SOURCE, finish, note, tap, terminate  # noqa: E402
MAJOR = os.environ.get("OUTBOXD_FAILOVER_PG", "17")
STACK = os.path.join(SOURCE, "scripts", "stack")


def exports(out):
    env = {}
    for line in out.splitlines():
        if line.startswith("export "):
            k, _, v = line[len("export "):].partition("=")
            env[k] = v.strip("'")
    return env


class Cluster:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="outboxd-failover-", dir="/tmp")
        r = subprocess.run([STACK, "--dir", self.dir, "--pg", MAJOR, "up"], capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise RuntimeError("scripts/stack up failed:\n" + r.stderr[-3000:])
        self.env = exports(r.stdout)
        r = subprocess.run([STACK, "--dir", self.dir, "standby", "up"], capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise RuntimeError("scripts/stack standby up failed:\n" + r.stderr[-3000:])
        self.env.update(exports(r.stdout))
        self.primary = int(self.env["OUTBOXD_TEST_PG_PORT"])
        self.standby = int(self.env["OUTBOXD_TEST_PG_STANDBY_PORT"])
        self.password = self.env["OUTBOXD_TEST_PG_SUPERUSER_PASSWORD"]
        self.psql_bin = os.path.join(self.env["OUTBOXD_TEST_PG_CLIENT_BIN"], "psql")
        self.boot = self.env["OUTBOXD_TEST_KAFKA_BOOTSTRAP"]

    def down(self):
        subprocess.run([STACK, "--dir", self.dir, "down"], capture_output=True, text=True)

    def conninfo(self, port=None):
        if port:
            return f"host=127.0.0.1 port={port} user=postgres dbname=outboxd connect_timeout=3"
        return (f"host=127.0.0.1,127.0.0.1 port={self.primary},{self.standby} user=postgres "
                f"dbname=outboxd connect_timeout=3 target_session_attrs=read-write")

    def psql(self, sql, port=None, check=True, timeout=30):
        r = subprocess.run([self.psql_bin, self.conninfo(port), "-X", "-qAt", "-v",
                            "ON_ERROR_STOP=1", "-c", sql], capture_output=True, text=True,
                           env=dict(os.environ, PGPASSWORD=self.password), timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"psql: {r.stderr.strip()}\n  SQL: {sql[:200]}")
        return r

    def as_pg(self, args):
        return ["runuser", "-u", "postgres", "--"] + args if os.getuid() == 0 else args


class Writers:
    """Sessions, each with aggregates of its own, commit one-row transactions in a loop through
    the multi-host conninfo, so that they follow the primary across the failover. Each row
    carries its aggregate's sequence number n: one aggregate's rows commit in n order."""

    def __init__(self, cl, sessions=3):
        self.cl = cl
        self.stop_ev = threading.Event()
        self.committed = []  # (id, agg, n) the client saw commit
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.run, args=(s,), daemon=True)
                        for s in range(sessions)]

    def run(self, s):
        n = {}
        k = 0
        while not self.stop_ev.is_set():
            agg = f"a{s}-{k % 2}"
            k += 1
            n[agg] = n.get(agg, 0) + 1
            i = str(uuid.uuid4())
            payload = json.dumps({"id": i, "agg": agg, "n": n[agg]})
            try:
                r = self.cl.psql(f"INSERT INTO outbox VALUES ('{i}', 'fo', '{agg}', 'Ev', "
                                 f"'{payload}', {n[agg]})", check=False, timeout=10)
            except subprocess.TimeoutExpired:
                r = None
            if r is not None and r.returncode == 0:
                with self.lock:
                    self.committed.append((i, agg, n[agg]))
            else:
                # not known to have committed: the next row of the aggregate comes after it
                # in any case, so the order stays checkable
                time.sleep(0.1)

    def start(self):
        for t in self.threads:
            t.start()

    def stop(self):
        self.stop_ev.set()
        for t in self.threads:
            t.join(timeout=30)


def wait_setting(cl, port, name, value):
    """Waits, 15 s at most, until SHOW @name on @port reads @value (a reload is asynchronous)."""
    deadline = time.time() + 15
    while True:
        r = cl.psql(f"SHOW {name}", port=port, check=False)
        if r.stdout.strip() == value or time.time() > deadline:
            return r.stdout.strip() == value
        time.sleep(0.1)


def standby_conf(cl, name, value):
    """Appends name = 'value' to the standby's postgresql.conf, reloads it, and waits until the
    standby reports @value."""
    with open(os.path.join(cl.env["OUTBOXD_TEST_PG_STANDBY_DATA"], "postgresql.conf"), "a") as f:
        f.write(f"{name} = '{value}'\n")
    subprocess.run(cl.as_pg([os.path.join(cl.env["OUTBOXD_TEST_PG_BIN"], "pg_ctl"), "-D",
                             cl.env["OUTBOXD_TEST_PG_STANDBY_DATA"], "reload"]),
                   capture_output=True)
    tap(wait_setting(cl, cl.standby, name, value), f"the standby's {name} reads {value} "
        "after the reload")


def write_config(cl, d, topic):
    worker = os.path.join(d, "worker.properties")
    conn = os.path.join(d, "connector.properties")
    with open(worker, "w") as f:
        f.write(f"""bootstrap.servers={cl.boot}
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
outboxd.http.port=0
outboxd.restart.backoff.max.ms=500
""")
    with open(conn, "w") as f:
        f.write(f"""name=failover
connector.class=io.debezium.connector.postgresql.PostgresConnector
database.hostname=127.0.0.1,127.0.0.1
database.port={cl.primary},{cl.standby}
outboxd.database.target.session.attrs=read-write
database.user=postgres
database.password={cl.password}
database.dbname=outboxd
database.connectTimeout=3
topic.prefix=fo
slot.name=fo_slot
slot.failover=true
publication.name=fo_pub
table.include.list=public.outbox
status.update.interval.ms=200
slot.max.retries=60
slot.retry.delay.ms=500
transforms=outbox
transforms.outbox.type=io.debezium.transforms.outbox.EventRouter
transforms.outbox.route.topic.replacement={topic}
""")
    return worker, conn


def outboxd(args, files, log=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OUTBOXD_")}
    if log is None:
        r = subprocess.run([BIN] + args + files, capture_output=True, text=True, timeout=120,
                           env=env)
        return r.returncode, r.stdout + r.stderr
    return subprocess.Popen([BIN] + args + files, stdout=log, stderr=subprocess.STDOUT,
                            env=env)


def read_topic(cl, topic):
    """Every value in @topic, in partition order (kcat: to the end, then exit)."""
    r = subprocess.run(["kcat", "-C", "-b", cl.boot, "-t", topic, "-o", "beginning", "-e",
                        "-q", "-f", "%p %s\\n"], capture_output=True, text=True, timeout=60)
    recs = []
    for line in r.stdout.splitlines():
        p, _, v = line.partition(" ")
        try:
            recs.append((int(p), json.loads(v)))
        except ValueError:
            pass
    return recs


def log_count(path, needle):
    with open(path, errors="replace") as f:
        return f.read().count(needle)


def one_run(synced):
    label = "with synchronized_standby_slots" if synced else "without synchronized_standby_slots"
    cl = Cluster()
    d = tempfile.mkdtemp(prefix="outboxd-failover-cfg-", dir="/tmp")
    topic = f"failover_{uuid.uuid4().hex[:8]}"
    proc = None
    writers = None
    try:
        cl.psql("CREATE TABLE outbox (id uuid PRIMARY KEY, aggregatetype text NOT NULL, "
                "aggregateid text NOT NULL, type text NOT NULL, payload jsonb, n int NOT NULL); "
                "CREATE PUBLICATION fo_pub FOR TABLE outbox WITH (publish = 'insert')",
                port=cl.primary)
        files = list(write_config(cl, d, topic))
        rc, out = outboxd(["slot", "create"], files)
        tap(rc == 0, f"{label}: outboxd slot create with slot.failover=true", out)
        if synced:
            cl.psql("ALTER SYSTEM SET synchronized_standby_slots = 'outboxd_standby'",
                    port=cl.primary)
            cl.psql("SELECT pg_reload_conf()", port=cl.primary)
            tap(wait_setting(cl, cl.primary, "synchronized_standby_slots", "outboxd_standby"),
                f"{label}: the primary's synchronized_standby_slots is set after the reload")
        # the standby has the slot, synchronised
        deadline = time.time() + 30
        while time.time() < deadline:
            r = cl.psql("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'fo_slot' "
                        "AND synced AND NOT temporary", port=cl.standby, check=False)
            if r.stdout.strip() == "1":
                break
            time.sleep(0.3)
        tap(r.stdout.strip() == "1", f"{label}: the standby holds a synced copy of the slot",
            r.stdout + r.stderr)

        rc, out = outboxd(["check"], files)
        lines = out.splitlines()
        standby = f"standby 127.0.0.1:{cl.standby}"
        if synced:
            tap(rc == 0 and any(l.startswith("ok   failover") and "synchronized_standby_slots ="
                                in l for l in lines) and
                any(l.startswith("ok   failover") and standby in l and "holds a synced copy"
                    in l for l in lines),
                f"{label}: outboxd check passes the primary's and the standby's failover lines",
                out)
            # a standby without hot_standby_feedback: named
            standby_conf(cl, "hot_standby_feedback", "off")
            rc, out = outboxd(["check"], files)
            tap(rc == 2 and any(l.startswith("FAIL failover") and standby in l and
                                "hot_standby_feedback is off" in l for l in out.splitlines()),
                f"{label}: outboxd check FAILs a standby without hot_standby_feedback", out)
            standby_conf(cl, "hot_standby_feedback", "on")
        else:
            tap(rc == 2 and any(l.startswith("FAIL failover") and
                                "synchronized_standby_slots is empty" in l for l in lines) and
                any(l.startswith("FAIL failover") and standby in l and "does not name" in l
                    for l in lines),
                f"{label}: outboxd check FAILs, naming synchronized_standby_slots on the "
                "primary and the standby's slot it lacks", out)

        if not synced:
            # `outboxd run` refuses such a slot (exit 2, naming the setting) ...
            rc, out = outboxd(["run"], files)
            tap(rc == 2 and "synchronized_standby_slots is empty" in out and
                "outboxd.failover.unsafe=true" in out,
                f"{label}: outboxd run refuses the failover slot (exit 2, the setting named)",
                out[-2000:])
            # ... and streams from it only when the operator accepts the risk, which the rest
            # of this run shows
            with open(files[0], "a") as f:
                f.write("outboxd.failover.unsafe=true\n")
        logpath = os.path.join(d, "outboxd.log")
        log = open(logpath, "w")
        proc = outboxd(["run"], files, log)
        deadline = time.time() + 30
        while time.time() < deadline and log_count(logpath, "streaming slot") < 1:
            time.sleep(0.1)
        writers = Writers(cl)
        writers.start()
        time.sleep(3)
        # cut the standby off: from now on the primary commits what the standby lacks (a
        # frozen receiver would read what the socket buffered once thawed; a conninfo that
        # leads nowhere keeps the restarted receiver away)
        standby_conf(cl, "primary_conninfo", "host=127.0.0.1 port=1 connect_timeout=1")
        wr = cl.psql("SELECT pid FROM pg_stat_wal_receiver", port=cl.standby).stdout.strip()
        if wr:
            os.kill(int(wr), signal.SIGTERM)
        time.sleep(2)
        with open(os.path.join(cl.dir, "pg", "data", "postmaster.pid")) as f:
            pm = int(f.readline())
        t_kill = time.time()
        subprocess.run(["pkill", "-KILL", "-P", str(pm)])
        os.kill(pm, signal.SIGKILL)
        r = subprocess.run(cl.as_pg([os.path.join(cl.env["OUTBOXD_TEST_PG_BIN"], "pg_ctl"),
                                     "-D", cl.env["OUTBOXD_TEST_PG_STANDBY_DATA"], "-w", "-t",
                                     "60", "promote"]), capture_output=True, text=True)
        tap(r.returncode == 0, f"{label}: the standby is promoted", r.stdout + r.stderr)
        t_promoted = time.time()
        # outboxd finds the new primary (target_session_attrs=read-write) and its slot
        deadline = time.time() + 90
        while time.time() < deadline and log_count(logpath, "streaming slot") < 2:
            time.sleep(0.1)
        t_resumed = time.time()
        resumed = log_count(logpath, "streaming slot") >= 2
        time.sleep(3)
        writers.stop()
        new = {}
        for line in cl.psql("SELECT id, aggregateid, n FROM outbox", port=cl.standby).stdout.splitlines():
            i, a, n = line.split("|")
            new[i] = (a, int(n))
        # every row of the new primary in Kafka, or 60 s
        deadline = time.time() + 60
        while True:
            recs = read_topic(cl, topic)
            seen = {v["id"] for _, v in recs}
            if set(new) <= seen or time.time() > deadline:
                break
            time.sleep(1)
        ids = [v["id"] for _, v in recs]
        lost = set(new) - set(ids)
        phantom = set(ids) - set(new)
        dups = len(ids) - len(set(ids))
        disorder = 0
        last = {}
        firsts = set()
        for _, v in recs:  # partition order: one aggregate lives on one partition
            if v["id"] in firsts:
                continue
            firsts.add(v["id"])
            if v["n"] <= last.get(v["agg"], 0):
                disorder += 1
            last[v["agg"]] = v["n"]
        client = {i for i, _, _ in writers.committed}
        gone = client - set(new)  # committed on the old primary only
        note(f"{label}: {len(writers.committed)} commits seen by the writers, {len(new)} rows on "
             f"the new primary, {len(gone)} committed on the old primary only; Kafka {len(ids)} "
             f"events: L={len(lost)} P={len(phantom)} O={disorder} D={dups}; outboxd resumed "
             f"{t_resumed - t_kill:.1f} s after the kill ({t_resumed - t_promoted:.1f} s after "
             f"the promotion)")
        tap(resumed, f"{label}: outboxd resumes streaming on the promoted standby", open(logpath).read()[-3000:])
        if synced:
            # checked again at the reconnect: the new primary has no standby yet, a warning
            tap(log_count(logpath, "synchronized_standby_slots is empty and this server has "
                          "no physical slot") >= 1,
                f"{label}: the reconnect to the new primary checked the slot again (warned: no "
                "standby can take over yet)", open(logpath).read()[-3000:])
        tap(len(gone) > 0, f"{label}: the failure lost commits of the old primary "
            f"(the case to prove: {len(gone)})")
        tap(not lost, f"{label}: L=0 (every row of the new primary is in Kafka)",
            f"lost: {sorted(lost)[:5]}; their (aggregate, n): "
            f"{sorted(new[i] for i in lost)[:5]}; the first records of their aggregates in "
            f"Kafka (partition, aggregate, n): "
            f"{[(p, v['agg'], v['n']) for p, v in recs if v['agg'] in {new[i][0] for i in lost}][:8]}"
            f"; partitions: {sorted({p for p, _ in recs})}; outboxd's log:\n"
            + open(logpath).read()[-6000:])
        tap(disorder == 0, f"{label}: O=0 (per-aggregate order)")
        if synced:
            tap(not phantom, f"{label}: P=0 (no event without a committed change)",
                f"phantom: {sorted(phantom)[:5]}")
        else:
            tap(len(phantom) > 0, f"{label}: P>0: {len(phantom)} events for transactions the "
                "promoted standby never received, what the setting prevents")
        return {"label": label, "L": len(lost), "P": len(phantom), "O": disorder, "D": dups,
                "switch_s": round(t_resumed - t_kill, 1)}
    finally:
        if writers:
            writers.stop()
        if proc:
            terminate(proc)
        cl.down()
        subprocess.run(["rm", "-rf", d])


def main():
    print("TAP version 13")
    if int(MAJOR) < 17:
        print(f"# PostgreSQL {MAJOR} has no failover slots")
        tap(False, f"OUTBOXD_FAILOVER_PG={MAJOR}: the failover test needs 17 or later")
    else:
        for synced in (True, False):
            one_run(synced)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
