#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""
Topic creation (KIP-158) compared with the real thing: Kafka Connect 4.3.0 running Debezium
3.6.1.Final and `outboxd run`, with the same connector file (topic.creation.* groups with
include and exclude patterns, partitions, replication factors and topic settings) against a
broker that creates no topic by itself (scripts/stack strict: auto.create.topics.enable=false).

    eval "$(scripts/stack up)"
    OUTBOXD_BIN=build/outboxd tests/compat/debezium/topics.py [--keep]

How it works:
  1. The stack's strict broker is started (scripts/stack strict up). A schema <run> with one outbox
     table, its publication and two pgoutput slots (Debezium's and outboxd's), both made before
     any row, so both sides decode the same rows; then rows of four aggregate types, one per
     creation rule (a named group, a group's exclude falling through to the next group's include,
     the default group), and heartbeats (heartbeat.interval.ms) for a fifth topic, in a group
     whose -1 partitions and replication factor mean the broker's defaults.
  2. Debezium: a Kafka Connect standalone worker with the connector file on its command line
     (offsets in a file: Connect itself creates no topic). Stopped once every row is on the
     topics. Each topic of the run is described (kafka-topics --describe: partitions, replication
     factor and every setting it lists) and its records dumped (Dump.java); then the topics are
     deleted.
  3. outboxd: `outboxd run` with the same worker and connector files (only the slot differs),
     stopped with SIGTERM once its slot confirmed the last row's commit; described and dumped.
  4. Compared: the set of topics, each topic's description, and each row's record (topic,
     partition, key, value, header names, order and bytes; the heartbeat topic only as a topic).
The last line is "compat topics: ..."; exit status 1 on any difference or harness failure. It
never skips: without the stack, Java, Maven or kcat it fails naming the fix.
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import string
import subprocess
import sys
import tempfile
import time

import cxlib
from cxlib import T0, die, log, need_env

cxlib.PREFIX = "compat topics"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

ap = argparse.ArgumentParser()
ap.add_argument("--keep", action="store_true", help="keep the work folder")
ARGS = ap.parse_args()

PG_CONNINFO = need_env("OUTBOXD_TEST_PG_CONNINFO")
PG_HOST = need_env("OUTBOXD_TEST_PG_HOST")
PG_PORT = need_env("OUTBOXD_TEST_PG_PORT")
PG_PASSWORD = need_env("OUTBOXD_TEST_PG_SUPERUSER_PASSWORD")
STACK_DIR = need_env("OUTBOXD_TEST_STACK_DIR")
KAFKA_CP = open(need_env("OUTBOXD_TEST_KAFKA_CLASSPATH")).read().strip()
OUTBOXD = os.environ.get("OUTBOXD_BIN") or os.path.join(ROOT, "build", "outboxd")
for tool in ("java", "mvn", "psql", "kcat"):
    if not shutil.which(tool):
        die("%s is not installed; scripts/install-deps installs it" % tool)
if not os.access(OUTBOXD, os.X_OK):
    die("outboxd binary %s not found; build it or set OUTBOXD_BIN" % OUTBOXD)

RUN = "ct" + "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(6))
WORK = tempfile.mkdtemp(prefix="outboxd-compat-topics-%s-" % RUN)
AGGS = ("order", "customer", "payment", "misc")
ROWS_PER_AGG = 5
HEARTBEAT = "__debezium-heartbeat." + RUN
JSON = "org.apache.kafka.connect.json.JsonConverter"
children = []


def psql(sql):
    return cxlib.psql(PG_CONNINFO, sql).strip()


def strict_broker():
    """Starts the stack's strict broker; its PLAINTEXT bootstrap (a super user's listener)."""
    p = subprocess.run([os.path.join(ROOT, "scripts", "stack"), "--dir", STACK_DIR, "strict", "up"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        die("scripts/stack strict up failed:\n" + p.stderr.decode(errors="replace")[-3000:])
    m = re.search(r"OUTBOXD_TEST_KAFKA_STRICT_BOOTSTRAP=(\S+)", p.stdout.decode())
    if not m:
        die("scripts/stack strict up printed no OUTBOXD_TEST_KAFKA_STRICT_BOOTSTRAP")
    return m.group(1)


BOOTSTRAP = None  # set in main(): the strict broker


def write_props(path, props):
    # every value here is plain ASCII without a character properties files escape but "\"
    with open(path, "w", encoding="ascii") as f:
        for k, v in props.items():
            f.write("%s=%s\n" % (k, v.replace("\\", "\\\\")))


def worker_props(offsets):
    return {"bootstrap.servers": BOOTSTRAP, "key.converter": JSON, "value.converter": JSON,
            "key.converter.schemas.enable": "false", "value.converter.schemas.enable": "false",
            "offset.storage.file.filename": offsets, "offset.flush.interval.ms": "1000",
            "listeners": "http://127.0.0.1:0", "plugin.discovery": "service_load"}


def connector_props(slot):
    ev = r"outbox\.event\." + RUN
    return {
        "name": RUN,
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "tasks.max": "1",
        "database.hostname": PG_HOST, "database.port": PG_PORT, "database.user": "postgres",
        "database.password": PG_PASSWORD, "database.dbname": "outboxd",
        "topic.prefix": RUN, "plugin.name": "pgoutput", "slot.name": slot,
        "publication.name": RUN + "_pub", "publication.autocreate.mode": "disabled",
        "table.include.list": RUN + ".outbox", "snapshot.mode": "no_data",
        "message.prefix.exclude.list": ".*",
        "heartbeat.interval.ms": "1000",
        "transforms": "outbox",
        "transforms.outbox.type": "io.debezium.transforms.outbox.EventRouter",
        # KIP-158: the first group whose include matches and whose exclude does not wins
        "topic.creation.default.replication.factor": "-1",
        "topic.creation.default.partitions": "3",
        "topic.creation.default.retention.ms": "86400000",
        "topic.creation.groups": "compacted,big,beat",
        "topic.creation.compacted.include": "%s_(order|customer)" % ev,
        "topic.creation.compacted.exclude": r".*_customer",
        "topic.creation.compacted.replication.factor": "1",
        "topic.creation.compacted.partitions": "2",
        "topic.creation.compacted.cleanup.policy": "compact",
        "topic.creation.compacted.min.compaction.lag.ms": "60000",
        "topic.creation.big.include": "%s_pay.*, .*customer" % ev,
        "topic.creation.big.partitions": "5",
        "topic.creation.big.compression.type": "zstd",
        "topic.creation.big.max.message.bytes": "2097152",
        "topic.creation.big.retention.bytes": "1073741824",
        # -1: the broker's num.partitions (2 on the strict broker) and default.replication.factor
        "topic.creation.beat.include": r"__debezium-heartbeat\..*",
        "topic.creation.beat.partitions": "-1",
        "topic.creation.beat.replication.factor": "-1",
        "topic.creation.beat.cleanup.policy": "compact",
    }


def setup_database():
    psql("CREATE SCHEMA %s;"
         "CREATE TABLE %s.outbox (id uuid PRIMARY KEY, aggregatetype varchar(255) NOT NULL,"
         " aggregateid varchar(255) NOT NULL, type varchar(255) NOT NULL, payload jsonb);"
         "CREATE PUBLICATION %s_pub FOR TABLE %s.outbox WITH (publish = 'insert');"
         % (RUN, RUN, RUN, RUN))
    for side in ("d", "o"):
        psql("SELECT pg_create_logical_replication_slot('%s_%s', 'pgoutput')" % (RUN, side))
    for i in range(ROWS_PER_AGG):
        psql("INSERT INTO %s.outbox SELECT gen_random_uuid(), '%s_' || a, 'k%d-' || a, 'Created',"
             " jsonb_build_object('agg', a, 'n', %d) FROM unnest(ARRAY['%s']) a"
             % (RUN, RUN, i, i, "','".join(AGGS)))
    return int(psql("SELECT pg_current_wal_lsn() - '0/0'"))


def cleanup():
    for p in children:
        if p.poll() is None:
            p.kill()
            p.wait()
    try:
        psql("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
             "WHERE slot_name LIKE '%s\\_%%' AND NOT active; DROP SCHEMA IF EXISTS %s CASCADE;"
             "DROP PUBLICATION IF EXISTS %s_pub" % (RUN, RUN, RUN))
    except Exception as e:  # a cleanup failure is reported, the result stands
        log("cleanup: %s" % e)
    if not ARGS.keep:
        shutil.rmtree(WORK, ignore_errors=True)
    else:
        log("work folder kept: " + WORK)


def java(*args, **kw):
    return subprocess.run(["java", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                           "-Dlog4j2.configurationFile=" + os.path.join(WORK, "log4j2-tools.properties"),
                           "-cp", KAFKA_CP] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, **kw)


def end_offsets():
    """{(topic, partition): end offset} of every topic of the run."""
    return cxlib.end_offsets(BOOTSTRAP, RUN)


def rows_on_topics():
    return sum(n for (t, _), n in end_offsets().items() if t != HEARTBEAT)


def describe():
    """{topic: (partitions, replication factor, {setting: value})} as kafka-topics shows them."""
    p = java("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", BOOTSTRAP, "--describe",
             "--topic", ".*" + RUN + ".*")
    if p.returncode != 0:
        raise RuntimeError("kafka-topics --describe failed:\n" + p.stdout.decode(errors="replace"))
    out = {}
    for line in p.stdout.decode(errors="replace").splitlines():
        m = re.match(r"^Topic: (\S+)\s+TopicId: \S+\s+PartitionCount: (\d+)\s+"
                     r"ReplicationFactor: (\d+)\s+Configs: ?(.*)$", line)
        if m:
            settings = dict(kv.split("=", 1) for kv in m.group(4).split(",") if kv)
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)), settings)
    return out


def delete_topics(names):
    for t in names:
        p = java("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", BOOTSTRAP, "--delete",
                 "--topic", t)
        if p.returncode != 0:
            raise RuntimeError("kafka-topics --delete %s failed:\n%s"
                               % (t, p.stdout.decode(errors="replace")))
    deadline = time.time() + 60
    while time.time() < deadline:
        if not end_offsets():
            return
        time.sleep(0.5)
    raise RuntimeError("the run's topics were not deleted within 60 s")


def dump(side):
    start, out, end = (os.path.join(WORK, "%s.%s" % (side, x)) for x in ("start", "jsonl", "end"))
    with open(start, "w") as f:
        f.write("-\n")
    p = subprocess.run(["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp",
                        KAFKA_CP, os.path.join(HERE, "Dump.java"), BOOTSTRAP, RUN, start, out, end],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        raise RuntimeError("Dump.java failed:\n" + p.stdout.decode(errors="replace")[-3000:])
    with open(out) as f:
        return [json.loads(line) for line in f]


def wait(what, cond, timeout, proc=None, logpath=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.5)
    tail = ""
    if logpath:
        with open(logpath, errors="replace") as f:
            tail = "\n".join(f.read().splitlines()[-40:])
    raise RuntimeError("%s: not within %d s%s\n%s" % (
        what, timeout, "" if proc is None or proc.poll() is None else
        " (the process exited with %s)" % proc.poll(), tail))


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def debezium_classpath():
    cpf = os.path.join(WORK, "debezium.classpath")
    base = ["mvn", "-q", "-B", "-f", os.path.join(HERE, "pom.xml"), "dependency:build-classpath",
            "-Dmdep.outputFile=" + cpf]
    if subprocess.run(base[:1] + ["-o"] + base[1:], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode != 0:
        p = subprocess.run(base, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            die("could not resolve the Debezium jars:\n" + p.stdout.decode(errors="replace")[-3000:])
    with open(cpf) as f:
        return f.read().strip()


def run_debezium(n_rows):
    wp, cp = os.path.join(WORK, "d-worker.properties"), os.path.join(WORK, "d-connector.properties")
    write_props(wp, worker_props(os.path.join(WORK, "d.offsets")))
    write_props(cp, connector_props(RUN + "_d"))
    l4j, logpath = os.path.join(WORK, "log4j2-connect.properties"), os.path.join(WORK, "connect.log")
    with open(l4j, "w") as f:
        f.write("status = warn\nappender.file.type = File\nappender.file.name = file\n"
                "appender.file.fileName = %s\nappender.file.layout.type = PatternLayout\n"
                "appender.file.layout.pattern = [%%d] %%p %%m (%%c)%%n\nrootLogger.level = INFO\n"
                "rootLogger.appenderRef.file.ref = file\n" % logpath)
    proc = subprocess.Popen(["java", "-Xms64m", "-Xmx384m", "-XX:+UseSerialGC",
                             "-XX:TieredStopAtLevel=1", "-Dlog4j2.configurationFile=" + l4j,
                             "-cp", debezium_classpath(),
                             "org.apache.kafka.connect.cli.ConnectStandalone", wp, cp],
                            stdout=open(os.path.join(WORK, "connect.stdout"), "w"),
                            stderr=subprocess.STDOUT)
    children.append(proc)
    wait("Debezium's records of every row", lambda: rows_on_topics() >= n_rows, 180, proc, logpath)
    wait("Debezium's heartbeat topic", lambda: any(t == HEARTBEAT for t, _ in end_offsets()), 30,
         proc, logpath)
    stop(proc)


def run_outboxd(last_lsn):
    wp, cp = os.path.join(WORK, "o-worker.properties"), os.path.join(WORK, "o-connector.properties")
    write_props(wp, dict(worker_props(os.path.join(WORK, "o.offsets")), **{"outboxd.http.port": "0"}))
    write_props(cp, connector_props(RUN + "_o"))
    logpath = os.path.join(WORK, "outboxd.log")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OUTBOXD_")}
    proc = subprocess.Popen([OUTBOXD, "run", wp, cp], stdout=subprocess.DEVNULL,
                            stderr=open(logpath, "w"), env=env)
    children.append(proc)

    def confirmed():
        v = psql("SELECT confirmed_flush_lsn - '0/0' FROM pg_replication_slots "
                 "WHERE slot_name = '%s_o'" % RUN)
        return v and int(v) >= last_lsn
    wait("outboxd's confirmation of the last row", confirmed, 120, proc, logpath)
    wait("outboxd's heartbeat topic", lambda: any(t == HEARTBEAT for t, _ in end_offsets()), 30,
         proc, logpath)
    rc = stop(proc)
    if rc != 0:
        raise RuntimeError("outboxd exited %s after SIGTERM" % rc)
    with open(logpath, errors="replace") as f:
        return sum(1 for line in f if "created topic " in line)


def header_value(r, name):
    for n, v in r["headers"]:
        if n == name:
            return v
    return None


UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-([0-9a-f])[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$")


def headers(r):
    """Names and values (text) in order; runId (new per start) as its UUID version only."""
    out = []
    for n, v in r["headers"]:
        v = None if v is None else bytes.fromhex(v).decode(errors="replace")
        m = UUID_RE.match(v or "") if n == "__debezium.context.runId" else None
        out.append((n, "<uuid v%s>" % m.group(1) if m else v))
    return out


def compare(d_topics, o_topics, d_recs, o_recs):
    diffs = []
    for t in sorted(set(d_topics) | set(o_topics)):
        if t not in o_topics or t not in d_topics:
            diffs.append("topic %s: created by %s only" % (t, "Debezium" if t in d_topics else "outboxd"))
        elif d_topics[t] != o_topics[t]:
            diffs.append("topic %s: Debezium %r, outboxd %r" % (t, d_topics[t], o_topics[t]))
    rows = {}
    for side, recs in (("d", d_recs), ("o", o_recs)):
        for r in recs:
            if r["topic"] != HEARTBEAT:
                rows.setdefault(header_value(r, "id"), {}).setdefault(side, []).append(r)
    for rid, by in sorted(rows.items(), key=lambda kv: str(kv[0])):
        d, o = by.get("d", []), by.get("o", [])
        if len(d) != 1 or len(o) != 1:
            diffs.append("row %s: %d records from Debezium, %d from outboxd" % (rid, len(d), len(o)))
            continue
        d[0]["headers"], o[0]["headers"] = headers(d[0]), headers(o[0])
        for what in ("topic", "partition", "key", "value", "headers"):
            if d[0][what] != o[0][what]:
                diffs.append("row %s: %s differs: Debezium %r, outboxd %r"
                             % (bytes.fromhex(rid).decode(errors="replace") if rid else rid,
                                what, d[0][what], o[0][what]))
    return diffs, len(rows)


def main():
    global BOOTSTRAP
    BOOTSTRAP = strict_broker()
    with open(os.path.join(WORK, "log4j2-tools.properties"), "w") as f:
        f.write("status = error\nrootLogger.level = ERROR\n")
    log("strict broker %s (no automatic topic creation); schema %s" % (BOOTSTRAP, RUN))
    last_lsn = setup_database()
    n_rows = len(AGGS) * ROWS_PER_AGG
    run_debezium(n_rows)
    d_topics = describe()
    d_recs = dump("d")
    log("Debezium: %d topics created, %d records" % (len(d_topics), len(d_recs)))
    delete_topics(sorted(d_topics))
    created = run_outboxd(last_lsn)
    o_topics = describe()
    o_recs = dump("o")
    log("outboxd: %d topics created (%d \"created topic\" lines), %d records"
        % (len(o_topics), created, len(o_recs)))
    for t in sorted(d_topics):
        print("  %-44s %s" % (t, d_topics[t]))
    diffs, n = compare(d_topics, o_topics, d_recs, o_recs)
    if created != len(o_topics):
        diffs.append("outboxd logged %d creations for %d topics" % (created, len(o_topics)))
    if len(d_topics) != len(AGGS) + 1 or n != n_rows:
        diffs.append("expected %d topics and %d rows, Debezium gave %d topics and %d rows"
                     % (len(AGGS) + 1, n_rows, len(d_topics), n))
    for d in diffs:
        print("DIFF " + d)
    print("compat topics: %d topics (partitions, replication factor, %d settings) and %d rows "
          "compared, %d differences (%.0f s)"
          % (len(d_topics), sum(len(v[2]) for v in d_topics.values()), n, len(diffs),
             time.time() - T0))
    return 1 if diffs else 0


if __name__ == "__main__":
    cxlib.run(main, cleanup)
