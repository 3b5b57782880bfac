# SPDX-License-Identifier: Apache-2.0
"""
The fault suite's machinery: a private test stack, per-scenario fixtures (schema, outbox,
publication, pgoutput slot, side test_decoding slot, config files, outboxd), a load generator
with recorded outcomes, and the invariant checker.

Invariants (issue 5, reliability.md 5.1):
  L  a committed outbox id never reached Kafka
  P  an id of a transaction that never committed (rolled back, rolled-back savepoint, killed
     client) reached Kafka
  O  per aggregate, the first occurrences (after dedupe by the `id` header) are not in commit
     order (commit order is read from the side test_decoding slot: commit end LSN, then
     position inside the transaction)
  D  a duplicate outside every unconfirmed window: a window lies between the slot's
     confirmed_flush_lsn and the WAL position at a fault the scenario marks, or at a change of
     the slot's walsender the sampler saw (a new session resends from the confirmed position
     up to what the old one could have read); a duplicate inside one is allowed
  W  confirmed_flush_lsn covered a transaction (end_lsn <= confirmed) whose rows were not all
     in Kafka at that moment: sampled every 100 ms while the scenario runs (Sampler) against
     each record's broker append time, and judged at each marked fault
Any L, P, O, D outside or W fails the scenario. Only the standard library is used; psql and
kcat come from the machine.
"""
import bisect
import copy
import json
import os
import random
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))


class Fail(Exception):
    pass


class Retry(Exception):
    """A read of Kafka that may succeed when tried again."""


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def need_tools():
    missing = [t for t in ("psql", "kcat", "socat", "java", "runuser") if not shutil.which(t)]
    if os.getuid() != 0 and "runuser" in missing:
        missing.remove("runuser")
    if missing:
        raise Fail("missing tools: " + ", ".join(missing) + " (scripts/install-deps installs them)")


def lsn_parse(s):
    if not s:
        return 0
    hi, lo = s.strip().split("/")
    return (int(hi, 16) << 32) | int(lo, 16)


def lsn_fmt(v):
    return f"{v >> 32:X}/{v & 0xFFFFFFFF:X}"


# ---------------------------------------------------------------------------------------------
# The private stack


class Stack:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="outboxd-fault-", dir="/tmp")
        self.env = {}

    def up(self):
        log(f"private stack in {self.dir}")
        # The broker stamps every record with the time it appended it (LogAppendTime): the W
        # sampler compares that with the slot's confirmed position over time. Nothing else
        # the suite checks reads the record timestamp.
        env = dict(os.environ, OUTBOXD_STACK_KAFKA_PROPERTIES="log.message.timestamp.type=LogAppendTime")
        r = subprocess.run([os.path.join(SOURCE, "scripts", "stack"), "--dir", self.dir, "up"],
                           capture_output=True, text=True, env=env)
        if r.returncode != 0:
            raise Fail("scripts/stack up failed:\n" + r.stderr[-3000:])
        for line in r.stdout.splitlines():
            m = re.match(r"export (\w+)='?([^']*)'?$", line)
            if m:
                self.env[m.group(1)] = m.group(2)
        self.host = self.env["OUTBOXD_TEST_PG_HOST"]
        self.port = int(self.env["OUTBOXD_TEST_PG_PORT"])
        self.password = self.env["OUTBOXD_TEST_PG_SUPERUSER_PASSWORD"]
        self.pg_bin = self.env["OUTBOXD_TEST_PG_BIN"]
        self.pg_data = self.env["OUTBOXD_TEST_PG_DATA"]
        self.boot = self.env["OUTBOXD_TEST_KAFKA_BOOTSTRAP"]

    def down(self):
        subprocess.run([os.path.join(SOURCE, "scripts", "stack"), "--dir", self.dir, "down"],
                       capture_output=True, text=True)

    # --- PostgreSQL

    def as_pg(self, args):
        if os.getuid() == 0:
            return ["runuser", "-u", "postgres", "--"] + args
        return args

    def pg_stop(self, mode):
        r = subprocess.run(self.as_pg([f"{self.pg_bin}/pg_ctl", "-D", self.pg_data, "-m", mode,
                                       "-w", "-t", "60", "stop"]), capture_output=True, text=True)
        if r.returncode != 0:
            raise Fail(f"pg_ctl stop -m {mode}: {r.stderr.strip()}")

    def pg_start(self):
        r = subprocess.run(self.as_pg([f"{self.pg_bin}/pg_ctl", "-D", self.pg_data, "-l",
                                       os.path.join(self.dir, "pg", "server.log"), "-w", "-t",
                                       "60", "start"]), capture_output=True, text=True)
        if r.returncode != 0:
            raise Fail(f"pg_ctl start: {r.stderr.strip()}")

    def pg_log_size(self):
        try:
            return os.path.getsize(os.path.join(self.dir, "pg", "server.log"))
        except OSError:
            return 0

    def pg_log_since(self, off):
        with open(os.path.join(self.dir, "pg", "server.log"), "rb") as f:
            f.seek(off)
            return f.read().decode("utf-8", "replace")

    def psql(self, sql, check=True, timeout=60):
        env = dict(os.environ, PGPASSWORD=self.password, PGCONNECT_TIMEOUT="5")
        r = subprocess.run(["psql", "-X", "-qAt", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-h",
                            self.host, "-p", str(self.port), "-U", "postgres", "-d", "outboxd",
                            "-f", "-"], input=sql, capture_output=True, text=True, env=env,
                           timeout=timeout)
        if check and r.returncode != 0:
            raise Fail(f"psql failed: {r.stderr.strip()}\n  SQL: {sql[:300]}")
        return r.stdout

    def psql_retry(self, sql, seconds=60):
        deadline = time.time() + seconds
        while True:
            try:
                return self.psql(sql)
            except (Fail, subprocess.TimeoutExpired):
                if time.time() > deadline:
                    raise
                time.sleep(0.5)

    def ensure(self):
        """Both servers running (a failed scenario must not break the next one)."""
        try:
            os.kill(self.kafka_pid(), signal.SIGCONT)
            os.kill(self.kafka_pid(), 0)
        except (ProcessLookupError, OSError):
            log("kafka was not running: restarting it")
            self.kafka_start()
        r = subprocess.run(self.as_pg([f"{self.pg_bin}/pg_ctl", "-D", self.pg_data, "status"]),
                           capture_output=True)
        if r.returncode != 0:
            log("postgresql was not running: restarting it")
            self.pg_start()

    # --- Kafka

    def kafka_pid(self):
        with open(os.path.join(self.dir, "kafka", "pid")) as f:
            return int(f.read().strip())

    def kafka_kill(self, sig=signal.SIGKILL):
        pid = self.kafka_pid()
        os.kill(pid, sig)
        if sig == signal.SIGKILL:
            for _ in range(100):
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                # a zombie of ours? it was started by scripts/stack (setsid), not by us
                time.sleep(0.1)

    def kafka_start(self):
        kd = os.path.join(self.dir, "kafka")
        with open(os.path.join(kd, "classpath")) as f:
            cp = f.read().strip()
        out = open(os.path.join(kd, "stdout.log"), "ab")
        # the options scripts/stack started it with (heap, log4j, the OAUTHBEARER JWKS URL)
        with open(os.path.join(kd, "jvm.options")) as f:
            jvm = [line for line in f.read().splitlines() if line]
        p = subprocess.Popen(["java"] + jvm + ["-cp", cp, "kafka.Kafka",
                                                f"{kd}/server.properties"],
                             stdout=out, stderr=out, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        with open(os.path.join(kd, "pid"), "w") as f:
            f.write(f"{p.pid}\n")
        deadline = time.time() + 120
        while subprocess.run(["kcat", "-b", self.boot, "-L", "-m", "5"],
                             capture_output=True).returncode != 0:
            if p.poll() is not None:
                raise Fail("kafka exited during restart")
            if time.time() > deadline:
                raise Fail("kafka did not come back within 120 s")
            time.sleep(0.5)
        self.kafka_proc = p

    def kafka_admin(self, cls, args, timeout=60):
        """One of Kafka's own command-line tools (org.apache.kafka.tools.TopicCommand,
        kafka.admin.ConfigCommand) from the broker's classpath, against the stack's broker."""
        with open(os.path.join(self.dir, "kafka", "classpath")) as f:
            cp = f.read().strip()
        r = subprocess.run(["java", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                            "-cp", cp, cls, "--bootstrap-server", self.boot] + args,
                           capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise Fail(f"{cls} {' '.join(args)}: exit {r.returncode}: {r.stderr[-1500:]}")
        return r.stdout

    def cluster(self):
        """The three-node cluster beside the broker (scripts/stack cluster up), as a Cluster;
        the caller takes it down (Cluster.down)."""
        return Cluster(self)

    # Reads of Kafka. `kcat -C -e` ends at the first empty fetch response of each partition;
    # once the other partitions are done, the broker answers the last one's long poll
    # (fetch.wait.max.ms, 500 ms) as soon as a record arrives, so while outboxd produces faster
    # than that such a read never ends. Every read is bounded by the end offsets instead,
    # queried first: it returns exactly what Kafka held at that moment, or fails.

    def kcat(self, args, timeout):
        """kcat against the stack's broker, never creating a topic (a producer handle, as -L
        and -Q use, would auto-create one). (exit status or None if killed after @timeout s,
        stdout bytes, stderr text)."""
        cmd = ["kcat", "-b", self.boot] + args + ["-X", "allow.auto.create.topics=false"]
        try:
            r = subprocess.run(cmd, capture_output=True, timeout=max(1.0, timeout))
        except subprocess.TimeoutExpired as e:
            return None, e.stdout or b"", (e.stderr or b"").decode("utf-8", "replace")
        return r.returncode, r.stdout, r.stderr.decode("utf-8", "replace")

    def read_topic(self, topic, timeout=120):
        """Every record of @topic below its end offsets at the time of the call: list of dicts
        partition, offset, ts (the broker's append time, ms), key, headers, value ([] if the
        broker does not know the topic).
        Each partition yields exactly its offsets from its start to its end offset, or the read
        is tried again (a broker that is restarting, a leader not yet known) and after
        @timeout s fails with what kcat said."""
        deadline = time.time() + timeout
        retried = False
        while True:
            try:
                return self._read_topic(topic, deadline)
            except Retry as e:
                if time.time() + 1 > deadline:
                    raise Fail(f"kafka: {topic} not read within {timeout} s: {e}")
                if not retried:
                    log(f"kafka: reading {topic} again: {e}")
                    retried = True
                time.sleep(0.5)

    def _read_topic(self, topic, deadline):
        def left():
            return min(30.0, deadline - time.time())

        rc, out, err = self.kcat(["-L", "-J", "-m", "5", "-t", topic], left())
        if rc != 0:
            raise Retry(f"metadata: {kcat_said(rc, err)}")
        md = kcat_json(out)
        t = (md.get("topics") or [{}])[0]
        if "Unknown topic" in t.get("error", ""):
            return []
        parts = sorted(p["partition"] for p in t.get("partitions", []))
        if not md.get("brokers") or t.get("error") or not parts or \
                any(p.get("error") or p.get("leader", -1) < 0 for p in t["partitions"]):
            raise Retry(f"metadata not usable yet: {out.decode('utf-8', 'replace')[:500]}")
        first = self._offsets(topic, parts, -2, left())
        end = self._offsets(topic, parts, -1, left())
        recs = []
        for p in parts:
            if end[p] <= first[p]:
                continue
            rc, out, err = self.kcat(["-C", "-t", topic, "-p", str(p), "-o", str(first[p]),
                                      "-c", str(end[p] - first[p]), "-e", "-q", "-f", KCAT_FORMAT,
                                      "-X", "topic.metadata.refresh.interval.ms=1000"], left())
            got = kcat_records(out) if rc == 0 else []
            offsets = [r["offset"] for r in got]
            if offsets != list(range(first[p], end[p])):
                span = f"{offsets[0]}..{offsets[-1]}" if offsets else "none"
                raise Retry(f"partition {p}: {len(offsets)} records (offsets {span}) read of "
                            f"offsets {first[p]}..{end[p] - 1}: {kcat_said(rc, err)}")
            recs += got
        return recs

    def _offsets(self, topic, parts, which, timeout):
        """{partition: offset} of @parts, @which -2 the first, -1 the end offset."""
        args = ["-Q", "-J", "-m", "5"]
        for p in parts:
            args += ["-t", f"{topic}:{p}:{which}"]
        rc, out, err = self.kcat(args, timeout)
        if rc != 0:
            raise Retry(f"offsets: {kcat_said(rc, err)}")
        got = kcat_json(out).get(topic, {})
        res = {}
        for p in parts:
            o = got.get(str(p), {})
            if o.get("error") or o.get("offset", -1) < 0:
                raise Retry(f"offsets: partition {p}: {o or 'not in the answer'}")
            res[p] = o["offset"]
        return res

    def timestamp_type(self, topic, partition, offset):
        """kcat's tstype of one record ("logappend", "create"), or None if it was not read."""
        rc, out, _ = self.kcat(["-C", "-t", topic, "-p", str(partition), "-o", str(offset), "-c",
                                "1", "-e", "-q", "-J"], 30)
        try:
            return json.loads(out.decode("utf-8", "replace").split("\n")[0]).get("tstype")
        except ValueError:
            return None


class Cluster:
    """The stack's three-node Kafka cluster (scripts/stack cluster up: KRaft, replication
    factor 3, min.insync.replicas 2), and a view of the stack whose Kafka is the cluster
    (self.stack: the same PostgreSQL, every read of Kafka from the cluster), for a Fixture."""

    def __init__(self, st):
        self.st = st
        env = dict(os.environ, OUTBOXD_STACK_KAFKA_PROPERTIES="log.message.timestamp.type=LogAppendTime")
        r = subprocess.run([os.path.join(SOURCE, "scripts", "stack"), "--dir", st.dir, "cluster",
                            "up"], capture_output=True, text=True, env=env)
        if r.returncode != 0:
            raise Fail("scripts/stack cluster up failed:\n" + r.stderr[-3000:])
        vals = dict(re.findall(r"export (\w+)=(\S+)", r.stdout))
        self.boot = vals["OUTBOXD_TEST_KAFKA_CLUSTER_BOOTSTRAP"]
        self.dir = vals["OUTBOXD_TEST_KAFKA_CLUSTER_DIR"]
        self.nodes = len(self.boot.split(","))
        self.stack = copy.copy(st)
        self.stack.boot = self.boot

    def down(self):
        subprocess.run([os.path.join(SOURCE, "scripts", "stack"), "--dir", self.st.dir, "cluster",
                        "down"], capture_output=True, text=True)

    def _node(self, n, name):
        with open(os.path.join(self.dir, f"node{n}", name)) as f:
            return f.read().strip()

    def stop(self, n, sig=signal.SIGTERM, timeout=90):
        """Stops node @n (SIGTERM: a controlled shutdown, its leaderships handed over first) and
        waits for the process to end."""
        pid = int(self._node(n, "pid"))
        os.kill(pid, sig)
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.2)
        raise Fail(f"kafka cluster node {n} did not stop within {timeout} s")

    def start(self, n):
        """Starts node @n again as scripts/stack started it."""
        nd = os.path.join(self.dir, f"node{n}")
        with open(os.path.join(self.st.dir, "kafka", "classpath")) as f:
            cp = f.read().strip()
        jvm = [l for l in self._node(n, "jvm.options").splitlines() if l]
        out = open(os.path.join(nd, "stdout.log"), "ab")
        p = subprocess.Popen(["java"] + jvm + ["-cp", cp, "kafka.Kafka",
                                                os.path.join(nd, "server.properties")],
                             stdout=out, stderr=out, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        with open(os.path.join(nd, "pid"), "w") as f:
            f.write(f"{p.pid}\n")

    def wait_in_sync(self, topic, timeout=180):
        """Waits until every node is a broker again and every partition of @topic has all of
        them in its ISR (a rolling restart moves on only then, as operators do)."""
        deadline = time.time() + timeout
        last = ""
        while time.time() < deadline:
            rc, out, err = self.stack.kcat(["-L", "-J", "-m", "5", "-t", topic], 10)
            try:
                md = json.loads(out) if rc == 0 else {}
            except ValueError:
                md = {}
            parts = (md.get("topics") or [{}])[0].get("partitions", [])
            if len(md.get("brokers", [])) == self.nodes and parts and \
                    all(len(p.get("isrs", [])) == self.nodes for p in parts):
                return
            last = out.decode("utf-8", "replace")[:300] if rc == 0 else err[-300:]
            time.sleep(0.5)
        raise Fail(f"{topic}: not every partition had {self.nodes} in-sync replicas within "
                   f"{timeout} s: {last}")


KCAT_FORMAT = "%p\\t%o\\t%T\\t%K\\t%k\\t%h\\t%S\\t%s\\n"


def kcat_said(rc, err):
    how = "did not exit in time" if rc is None else f"exit status {rc}"
    err = err.strip()
    return how + (f", stderr:\n{err[-1500:]}" if err else ", nothing on stderr")


def kcat_json(out):
    try:
        return json.loads(out)
    except ValueError:
        raise Retry(f"kcat's JSON not understood: {out[:300]!r}")


def kcat_records(out):
    """kcat's KCAT_FORMAT lines: list of dicts partition, offset, ts, key, headers, value."""
    recs = []
    for line in out.decode("utf-8", "replace").split("\n"):
        if not line:
            continue
        f = line.split("\t")
        if len(f) < 8:
            raise Fail(f"kcat line not understood: {line[:200]!r}")
        klen, key, hdrs, vlen = int(f[3]), f[4], f[5], int(f[6])
        value = "\t".join(f[7:])
        headers = {}
        for h in hdrs.split(",") if hdrs else []:
            if "=" in h:
                k, v = h.split("=", 1)
                headers[k] = v
        recs.append({"partition": int(f[0]), "offset": int(f[1]), "ts": int(f[2]),
                     "key": None if klen < 0 else key, "headers": headers,
                     "value": None if vlen < 0 else value})
    return recs


# ---------------------------------------------------------------------------------------------
# The W sampler


class Sampler:
    """Samples the scenario's slot every PERIOD s while the scenario runs: the server's clock,
    confirmed_flush_lsn, the walsender's pid (0 when none holds the slot) and the WAL position.
    One psql reads the query from its stdin (started again after PostgreSQL went away, at most
    every 0.5 s) and appends its answers to a file read when the sampler stops: one small query
    per 100 ms, no fork per sample.

    Soundness of the W judgment (check_w_samples) rests on the order of events for a row that
    a correct relay confirms: the broker stamps the record (LogAppendTime, its clock in whole
    milliseconds, rounded down), then acknowledges it, then outboxd gets the delivery report,
    then sends the confirm, then the walsender moves confirmed_flush_lsn, then the sample reads
    the slot. The sample's time must therefore be taken no earlier than that read, or a confirm
    landing between the time and the read would be flagged on a correct relay. Here the time is
    clock_timestamp() in the query's projection, which PostgreSQL computes after the function
    scan of pg_get_replication_slots() has read the slots (EXPLAIN VERBOSE: "Output:
    EXTRACT(epoch FROM clock_timestamp()), ..." on the Function Scan, which materializes every
    slot at its first call): the tightest bound on the right side, from the same machine clock
    the broker reads. A time taken before the query was sent would be the strict direction,
    not the conservative one. What a sample can miss is a record appended within the query's
    own microseconds after the read, or within the same millisecond (the broker rounds down)."""
    PERIOD = 0.1

    def __init__(self, fx):
        self.fx = fx
        self.path = os.path.join(fx.dir, "samples.tsv")
        self.stop_ev = threading.Event()
        self.thread = None
        self.psql_starts = 0

    def start(self):
        if self.fx.poll:
            return  # no slot: the poller's marks are judged instead (check_poll_marks)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        s = self.fx.s
        q = (f"SELECT extract(epoch FROM clock_timestamp()), confirmed_flush_lsn, "
             f"coalesce(active_pid, 0), pg_current_wal_lsn() FROM pg_replication_slots "
             f"WHERE slot_name = '{self.fx.slot}';\n").encode()
        env = dict(os.environ, PGPASSWORD=s.password, PGCONNECT_TIMEOUT="5")
        cmd = ["psql", "-X", "-qAt", "-F", "\t", "-h", s.host, "-p", str(s.port), "-U", "postgres",
               "-d", "outboxd", "-f", "-"]
        p = None
        with open(self.path, "ab") as out:
            try:
                while not self.stop_ev.is_set():
                    if p is None or p.poll() is not None:
                        if p is not None and self.stop_ev.wait(0.5):
                            break  # PostgreSQL went away: do not fork psql 10 times a second
                        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=out,
                                             stderr=subprocess.DEVNULL, env=env)
                        self.psql_starts += 1
                    try:
                        p.stdin.write(q)
                        p.stdin.flush()
                    except OSError:
                        pass  # psql ended (the server stopped): started again above
                    self.stop_ev.wait(self.PERIOD)
            finally:
                if p is not None:
                    try:
                        p.stdin.close()
                    except OSError:
                        pass
                    try:
                        p.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait()

    def stop(self):
        """Stops sampling (idempotent); every answer psql gave is in the file afterwards."""
        self.stop_ev.set()
        if self.thread:
            self.thread.join(timeout=30)
            self.thread = None

    def samples(self):
        """[(unix time s, confirmed, walsender pid or 0, WAL position)] in time order."""
        res = []
        try:
            with open(self.path) as f:
                lines = f.read().split("\n")
        except OSError:
            return res
        for line in lines:
            f = line.split("\t")
            if len(f) != 4:
                continue  # a line cut short when psql lost its server
            try:
                res.append((float(f[0]), lsn_parse(f[1]), int(f[2]), lsn_parse(f[3])))
            except ValueError:
                continue
        res.sort()
        return res


def session_windows(samples):
    """The unconfirmed windows at each end of a walsender session the samples saw: a new
    session resends from the slot's confirmed position, which is at least the lowest one seen
    from the old session's last sample until the next session's first (lower only when a
    PostgreSQL restart rewound the slot), up to at most the WAL position at the first sample
    without the old session (the old one cannot have read further). A session that lived
    between two samples is covered by the window of the one before it."""
    wins = []
    for k in range(1, len(samples)):
        pid = samples[k - 1][2]
        if not pid or samples[k][2] == pid:
            continue
        lo = samples[k - 1][1]
        for t, c, p, w in samples[k:]:
            lo = min(lo, c)
            if p and p != pid:
                break
        wins.append({"what": f"walsender {pid} gone at {time.strftime('%H:%M:%S', time.localtime(samples[k][0]))}"
                             f".{int(samples[k][0] * 1000) % 1000:03d}",
                     "confirmed": lo, "wal": samples[k][3]})
    return wins


# ---------------------------------------------------------------------------------------------
# One scenario's fixture


class Fixture:
    def __init__(self, stack, bin_path, name, publish_ops="insert", nullable=True, poll=False,
                 image=None):
        self.s = stack
        self.poll = poll  # `outboxd poll` on the table of sql/outbox_poll.sql; no slot of its own
        self.bin = bin_path
        # outboxd from this container image instead of @bin_path, run as users run it (as
        # tests/image/check_image.py does): the image's user, read-only, no capabilities, the
        # host's network; the fixture's folder mounted read-only where it is
        self.image = image
        self.name = name
        self.schema = "f_" + name
        self.slot = self.schema + "_slot"
        self.side = self.schema + "_side"
        self.pub = self.schema + "_pub"
        self.aggtype = self.schema
        self.topic = "outbox.event." + self.aggtype
        self.dir = tempfile.mkdtemp(prefix=f"outboxd-fault-{name}-")
        self.logpath = os.path.join(self.dir, "outboxd.log")
        self.proc = None
        self.port = stack.port
        self.side_txns = {}  # xid -> {"end": lsn, "ids": [id...]}
        self.side_order = []  # xids in commit order as decoded
        self.side_lock = threading.Lock()
        null = "" if nullable else " NOT NULL"
        pubsql = (f"CREATE PUBLICATION {self.pub} FOR TABLE {self.schema}.outbox" +
                  (f" WITH (publish = '{publish_ops}')" if publish_ops else ""))
        stack.psql(f"""
            DROP SCHEMA IF EXISTS {self.schema} CASCADE;
            CREATE SCHEMA {self.schema};
            CREATE TABLE {self.schema}.outbox (id uuid PRIMARY KEY,
              aggregatetype varchar(255){null}, aggregateid varchar(255){null},
              type varchar(255) NOT NULL, payload jsonb,
              created_at timestamptz NOT NULL DEFAULT now());
            CREATE TABLE {self.schema}.business (id bigserial PRIMARY KEY, v text);
            {pubsql};
            SELECT pg_create_logical_replication_slot('{self.slot}', 'pgoutput');
            SELECT pg_create_logical_replication_slot('{self.side}', 'test_decoding');
        """)
        if poll:
            # as sql/outbox_poll.sql makes it; the side slot still tells the commit order
            stack.psql(f"""
                ALTER TABLE {self.schema}.outbox
                  ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY (CACHE 1),
                  ADD COLUMN published_at timestamptz NULL;
                CREATE INDEX ON {self.schema}.outbox (seq) WHERE published_at IS NULL;
                CREATE FUNCTION {self.schema}.outbox_notify() RETURNS trigger LANGUAGE plpgsql
                  AS $$ BEGIN PERFORM pg_notify('{self.schema}', ''); RETURN NULL; END; $$;
                CREATE TRIGGER outbox_notify AFTER INSERT ON {self.schema}.outbox
                  FOR EACH STATEMENT EXECUTE FUNCTION {self.schema}.outbox_notify();
                SELECT pg_drop_replication_slot('{self.slot}');
            """)
        self.fault_marks = []  # (confirmed, current_wal, kafka ids set)
        self.notes = []
        self.failures = []
        self.w_topics = [self.topic]  # where a row counts as delivered (plus a dead-letter topic)
        self.holds = []  # periods in which confirmed_flush_lsn must stay below a commit end
        self.config()
        self.sampler = Sampler(self)
        self.sampler.start()

    def config(self, worker_extra="", connector_extra="", port=None, suffix="", status_ms=300):
        """The worker and connector files. @status_ms: status.update.interval.ms (None: not
        set, outboxd's default as a user has it)."""
        port = port or self.port
        status = "" if status_ms is None else f"status.update.interval.ms={status_ms}"
        with open(os.path.join(self.dir, f"worker{suffix}.properties"), "w") as f:
            f.write(f"""bootstrap.servers={self.s.boot}
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=false
value.converter.schemas.enable=false
offset.storage.file.filename=/tmp/connect.offsets
outboxd.http.port=0
outboxd.restart.backoff.max.ms=1000
outboxd.stall.warn.ms=3000
{f"outboxd.poll.notify.channel={self.schema}" if self.poll else ""}
{worker_extra}
""")
        with open(os.path.join(self.dir, f"connector{suffix}.properties"), "w") as f:
            f.write(f"""name=outbox-connector
connector.class=io.debezium.connector.postgresql.PostgresConnector
tasks.max=1
database.hostname={self.s.host}
database.port={port}
database.user=postgres
database.password={self.s.password}
database.dbname=outboxd
topic.prefix={self.schema}
plugin.name=pgoutput
slot.name={self.slot}
publication.name={self.pub}
publication.autocreate.mode=disabled
table.include.list={self.schema}.outbox
snapshot.mode=no_data
{status}
slot.max.retries=40
slot.retry.delay.ms=250
transforms=outbox
transforms.outbox.type=io.debezium.transforms.outbox.EventRouter
{connector_extra}
""")

    # --- outboxd

    def start(self, env=None, suffix="", other=False):
        """Starts outboxd (`poll` for a poller's fixture) on the fixture's files, logging to
        its log; @other: one more process beside self.proc (kept in self.others)."""
        e = dict(os.environ)
        for k in ("OUTBOXD_FAILPOINT", "OUTBOXD_BIN"):
            e.pop(k, None)
        e.update(env or {})
        lf = open(self.logpath, "ab")
        lf.write(f"---- start {time.strftime('%H:%M:%S')} env={env or {}}\n".encode())
        lf.flush()
        args = ["poll" if self.poll else "run",
                os.path.join(self.dir, f"worker{suffix}.properties"),
                os.path.join(self.dir, f"connector{suffix}.properties")]
        p = subprocess.Popen(self.container(env or {}) + args if self.image else [self.bin] + args,
                             stdout=lf, stderr=lf, stdin=subprocess.DEVNULL, env=e)
        lf.close()
        if other:
            self.others = getattr(self, "others", []) + [p]
        elif not suffix:
            self.proc = p
        return p

    def container(self, env):
        """The podman command line that runs the image (its arguments follow): attached, so
        that its output is the log, and named, so that signals reach it (kill())."""
        os.chmod(self.dir, 0o755)
        for f in os.listdir(self.dir):
            if f.endswith(".properties"):
                os.chmod(os.path.join(self.dir, f), 0o644)
        self.cname = f"outboxd-fault-{self.name}-{uuid.uuid4().hex[:8]}"
        cmd = [os.path.join(SOURCE, "scripts", "image"), "podman", "run", "--rm", "--name",
               self.cname, "--user", "10001:10001", "--read-only", "--cap-drop", "all",
               "--security-opt", "no-new-privileges", "--network", "host", "--ulimit",
               "nofile=20000:20000", "--ulimit", "nproc=32768:32768", "-v",
               f"{self.dir}:{self.dir}:ro"]
        for k, v in env.items():
            cmd += ["-e", f"{k}={v}"]
        return cmd + [self.image]

    def kill(self, sig=signal.SIGKILL):
        if self.image and self.proc and self.proc.poll() is None:
            # the client forwards no SIGKILL: the container gets the signal itself
            subprocess.run([os.path.join(SOURCE, "scripts", "image"), "podman", "kill",
                            "--signal", str(int(sig)), self.cname], capture_output=True)
        elif self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
        if self.proc:
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        rc = self.proc.returncode if self.proc else None
        self.proc = None
        return rc

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def read_log(self):
        try:
            with open(self.logpath, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def wait_log(self, needle, timeout, since=0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if needle in self.read_log()[since:]:
                return True
            time.sleep(0.2)
        return False

    # --- positions

    def confirmed(self):
        out = self.s.psql(f"SELECT confirmed_flush_lsn FROM pg_replication_slots "
                          f"WHERE slot_name = '{self.slot}'").strip()
        return lsn_parse(out) if out else None

    def current_wal(self):
        return lsn_parse(self.s.psql("SELECT pg_current_wal_lsn()").strip())

    def kafka_ids(self):
        return {r["headers"].get("id") for r in self.s.read_topic(self.topic)}

    def unpublished(self):
        """The poller's fixture: rows whose published_at is still NULL."""
        return int(self.s.psql_retry(f"SELECT count(*) FROM {self.schema}.outbox "
                                     f"WHERE published_at IS NULL").strip())

    def marks(self):
        """The poller's fixture: id -> published_at in Unix milliseconds (None: unmarked)."""
        out = self.s.psql_retry(f"SELECT id, extract(epoch FROM published_at) * 1000 "
                                f"FROM {self.schema}.outbox")
        res = {}
        for line in out.split("\n"):
            if line:
                i, _, t = line.partition("\t")
                res[i] = float(t) if t else None
        return res

    def mark_fault(self, what, confirmed=None):
        """Records the unconfirmed window at a fault: the slot's confirmed_flush_lsn, the WAL
        position, and what Kafka holds right then (for W). Read in that order, so Kafka can
        only hold more than what the confirmed position was based on."""
        c = self.confirmed() if confirmed is None else confirmed
        w = self.current_wal()
        ids = self.kafka_ids()
        self.fault_marks.append(judge_w({"what": what, "confirmed": c or 0, "wal": w}, self, ids))

    def hold_below(self, what, end, since, until):
        """Asserts (at check()) that every sample taken from @since to @until (Unix times) has
        confirmed_flush_lsn below commit end @end: a halted relay confirms nothing from the
        transaction it halted on."""
        self.holds.append({"what": what, "end": end, "since": since, "until": until})

    # --- the side slot: commit order and end LSNs

    def read_side(self):
        try:
            out = self.s.psql(f"SELECT lsn, xid, data FROM pg_logical_slot_get_changes("
                              f"'{self.side}', NULL, NULL)")
        except Fail as e:
            if "invalidated" not in str(e):
                raise
            return  # the slot-invalidation scenario: what was read before stays

        cur = {}
        # the outbox or, partitioned, one of its partitions (outbox_*)
        pat = re.compile(r"^table " + re.escape(self.schema) +
                         r"\.outbox(?:_\w+)?: INSERT: id\[uuid\]:'([0-9a-f-]+)'")
        with self.side_lock:
            for line in out.split("\n"):
                if not line:
                    continue
                lsn, xid, data = line.split("\t", 2)
                if data.startswith("BEGIN"):
                    cur[xid] = []
                elif data.startswith("COMMIT"):
                    ids = cur.pop(xid, [])
                    if ids and xid not in self.side_txns:
                        self.side_txns[xid] = {"end": lsn_parse(lsn), "ids": ids}
                        self.side_order.append(xid)
                else:
                    m = pat.match(data)
                    if m:
                        cur.setdefault(xid, []).append(m.group(1))

    def last_end(self):
        self.read_side()
        with self.side_lock:
            return max((t["end"] for t in self.side_txns.values()), default=0)

    def cleanup(self):
        self.sampler.stop()
        for p in getattr(self, "others", []):
            if p.poll() is None:
                p.kill()
                p.wait()
        if self.proc and self.proc.poll() is None:
            self.kill()
        for _ in range(50):
            out = self.s.psql(f"SELECT count(*) FROM pg_replication_slots WHERE active AND "
                              f"slot_name IN ('{self.slot}', '{self.side}')", check=False).strip()
            if out == "0":
                break
            time.sleep(0.1)
        self.s.psql(f"""
            SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots
              WHERE slot_name IN ('{self.slot}', '{self.side}');
            DROP PUBLICATION IF EXISTS {self.pub};
            DROP SCHEMA IF EXISTS {self.schema} CASCADE;""", check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# The load generator


def judge_w(mark, fx, kafka_ids):
    """W at one fault: the transactions at or below the confirmed position whose rows Kafka
    did not all hold. Judged at once (the side slot has decoded everything up to the WAL
    position), so only the verdict is kept, not a copy of the topic per fault."""
    fx.read_side()
    bad = [x for x in fx.side_order if fx.side_txns[x]["end"] <= mark["confirmed"] and
           not all(i in kafka_ids for i in fx.side_txns[x]["ids"])]
    mark["w_bad"] = [fx.side_txns[x]["end"] for x in bad]
    return mark


class Txn:
    __slots__ = ("ids", "aborted_ids", "outcome", "kind", "session")

    def __init__(self, ids, aborted_ids, kind, session):
        self.ids = ids  # [(id, aggregateid)] meant to commit
        self.aborted_ids = aborted_ids  # ids inside a rolled-back savepoint
        self.outcome = "unknown"  # committed | aborted | unknown
        self.kind = kind
        self.session = session


class Generator:
    """Concurrent sessions commit random transactions: 1..max_rows outbox rows over a few
    aggregates, a business row in the same transaction, some rolled back, some with a
    rolled-back savepoint. Each transaction runs in its own psql; the exit status is the
    client-observed outcome, and a transaction whose client failed is "unknown" until settled
    by querying PostgreSQL."""

    def __init__(self, fx, rng, sessions=3, max_rows=50, pause=(0.05, 0.3), naggs=8,
                 own_aggs=None):
        self.fx = fx
        self.rng = rng
        self.sessions = sessions
        self.max_rows = max_rows
        self.pause = pause
        self.naggs = naggs
        # each session writes aggregates of its own: one aggregate's writes are serialised,
        # as an application that locks the aggregate does (the initial snapshot's order, and
        # the poller's: rows in seq order, which is commit order per aggregate only then)
        self.own_aggs = fx.poll if own_aggs is None else own_aggs
        self.txns = []
        self.lock = threading.Lock()
        self.stop_ev = threading.Event()
        self.threads = []
        self.seeds = [rng.randrange(1 << 30) for _ in range(sessions)]

    def script(self, r, txn, rollback, savepoint, sleep_before_commit=0):
        fx = self.fx
        lines = ["BEGIN;", f"INSERT INTO {fx.schema}.business (v) VALUES ('s{txn.session}');"]

        def ins(i, a):
            payload = json.dumps({"id": i, "agg": a, "pad": "x" * r.randrange(0, 64)})
            return (f"INSERT INTO {fx.schema}.outbox (id, aggregatetype, aggregateid, type, "
                    f"payload) VALUES ('{i}', '{fx.aggtype}', '{a}', 'Ev', '{payload}');")
        half = len(txn.ids) // 2
        for i, a in txn.ids[:half]:
            lines.append(ins(i, a))
        if savepoint:
            lines.append("SAVEPOINT sp;")
            for i in txn.aborted_ids:
                lines.append(ins(i, "sp-" + i[:4]))
            lines.append("ROLLBACK TO SAVEPOINT sp;")
        for i, a in txn.ids[half:]:
            lines.append(ins(i, a))
        if sleep_before_commit:
            lines.append(f"SELECT pg_sleep({sleep_before_commit});")
        lines.append("ROLLBACK;" if rollback else "COMMIT;")
        return "\n".join(lines) + "\n"

    def new_txn(self, r, session, kind="normal"):
        n = r.randint(1, self.max_rows)
        own = f"{session}-" if self.own_aggs else ""
        ids = [(str(uuid.uuid4()), f"agg-{own}{r.randrange(self.naggs)}") for _ in range(n)]
        savepoint = r.random() < 0.1
        aborted = [str(uuid.uuid4()) for _ in range(r.randint(1, 3))] if savepoint else []
        t = Txn(ids, aborted, kind, session)
        with self.lock:
            self.txns.append(t)
        return t, savepoint

    def run_one(self, r, session, kill_after=None, sleep_before_commit=0, rollback=None):
        t, savepoint = self.new_txn(r, session)
        if rollback is None:
            rollback = r.random() < 0.12
        sc = self.script(r, t, rollback, savepoint, sleep_before_commit)
        env = dict(os.environ, PGPASSWORD=self.fx.s.password, PGCONNECT_TIMEOUT="5")
        p = subprocess.Popen(["psql", "-X", "-qAt", "-v", "ON_ERROR_STOP=1", "-h", self.fx.s.host,
                              "-p", str(self.fx.s.port), "-U", "postgres", "-d", "outboxd",
                              "-f", "-"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=env)
        try:
            p.stdin.write(sc.encode())
            p.stdin.close()
        except BrokenPipeError:
            pass
        if kill_after is not None:
            time.sleep(kill_after)
            p.kill()
            p.wait()
            t.kind = "client-killed"
            return t  # outcome stays unknown: settled later
        try:
            rc = p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            return t
        if rc == 0:
            t.outcome = "aborted" if rollback else "committed"
        return t

    def _loop(self, session):
        r = random.Random(self.seeds[session])
        while not self.stop_ev.is_set():
            self.run_one(r, session)
            time.sleep(r.uniform(*self.pause))

    def start(self):
        self.stop_ev.clear()
        self.threads = [threading.Thread(target=self._loop, args=(i,), daemon=True)
                        for i in range(self.sessions)]
        for t in self.threads:
            t.start()

    def stop(self):
        self.stop_ev.set()
        for t in self.threads:
            t.join(timeout=120)
        self.threads = []

    def settle(self):
        """Unknown outcomes: a row present in the outbox committed, else it did not."""
        unknown = [t for t in self.txns if t.outcome == "unknown"]
        if not unknown:
            return 0
        ids = [i for t in unknown for i, _ in t.ids]
        present = set()
        for k in range(0, len(ids), 500):
            chunk = ",".join(f"'{i}'" for i in ids[k:k + 500])
            out = self.fx.s.psql_retry(f"SELECT id FROM {self.fx.schema}.outbox WHERE id IN ({chunk})")
            present.update(out.split())
        for t in unknown:
            got = [i in present for i, _ in t.ids]
            if all(got):
                t.outcome = "committed"
            elif not any(got):
                t.outcome = "aborted"
            else:
                raise Fail(f"transaction half present in the outbox: {t.ids[:3]}...")
        return len(unknown)

    def committed_ids(self):
        return {i for t in self.txns if t.outcome == "committed" for i, _ in t.ids}

    def aborted_ids(self):
        s = {i for t in self.txns for i in t.aborted_ids}
        s.update(i for t in self.txns if t.outcome == "aborted" for i, _ in t.ids)
        return s


class SteadyGenerator(Generator):
    """A steady write load: @rate rows a second in transactions of @rows rows (a business row
    in each, one in ten with a rolled-back savepoint), over @sessions long-lived psql sessions
    fed through their stdin, so that the load costs no process per transaction. Every
    transaction of a session whose psql exited 0 committed; the others are settled by querying
    (Generator.settle)."""

    def __init__(self, fx, rng, rate=500, rows=10, sessions=2, naggs=8):
        super().__init__(fx, rng, sessions=sessions, max_rows=rows, naggs=naggs)
        self.rate = rate
        self.rows = rows

    def _loop(self, session):
        r = random.Random(self.seeds[session])
        env = dict(os.environ, PGPASSWORD=self.fx.s.password, PGCONNECT_TIMEOUT="5")
        p = subprocess.Popen(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", self.fx.s.host,
                              "-p", str(self.fx.s.port), "-U", "postgres", "-d", "outboxd",
                              "-f", "-"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=env)
        mine = []
        every = self.sessions * self.rows / self.rate
        due = time.time()
        try:
            while not self.stop_ev.is_set() and p.poll() is None:
                t, savepoint = self.new_txn(r, session)
                mine.append(t)
                p.stdin.write(self.script(r, t, False, savepoint).encode())
                p.stdin.flush()
                due += every
                self.stop_ev.wait(max(0.0, due - time.time()))
        except (BrokenPipeError, OSError):
            pass
        try:
            p.stdin.close()
        except OSError:
            pass
        try:
            rc = p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
        if rc == 0:
            for t in mine:
                t.outcome = "committed"

    def new_txn(self, r, session, kind="normal"):
        """Exactly self.rows rows (Generator draws 1..max_rows)."""
        ids = [(str(uuid.uuid4()), f"agg-{r.randrange(self.naggs)}") for _ in range(self.rows)]
        savepoint = r.random() < 0.1
        aborted = [str(uuid.uuid4())] if savepoint else []
        t = Txn(ids, aborted, kind, session)
        with self.lock:
            self.txns.append(t)
        return t, savepoint


# ---------------------------------------------------------------------------------------------
# The checker


class Result:
    def __init__(self, name):
        self.name = name
        self.L = self.P = self.O = self.W = 0
        self.D_in = self.D_out = 0
        self.committed = 0
        self.records = 0
        self.faults = 0
        self.secs = 0.0
        self.failures = []  # text lines
        self.info = []

    @property
    def ok(self):
        return not (self.L or self.P or self.O or self.W or self.D_out or self.failures)


def check(fx, gen, res, expect_ids=None, exclude_after_end=None, allow_no_side=False):
    """Reads the topic back and judges it. @expect_ids: committed ids that must be there
    (default: every committed id the generator saw, plus extra rows the scenario wrote).
    @exclude_after_end: ids of transactions at/after this commit end LSN are not expected
    (a halted relay)."""
    # The sampler stops before Kafka is read: every record appended before the last sample is
    # in the read, so a row absent from it was not in Kafka at any sample's time.
    fx.sampler.stop()
    samples = fx.sampler.samples()
    fx.read_side()
    recs = fx.s.read_topic(fx.topic)
    res.records = len(recs)
    committed = gen.committed_ids() if gen else set()
    committed |= getattr(fx, "extra_committed", set())
    aborted = gen.aborted_ids() if gen else set()
    aborted |= getattr(fx, "extra_aborted", set())
    # truth from the side slot
    pos = {}  # id -> (end_lsn, index in txn)
    end_of = {}
    for xid in fx.side_order:
        t = fx.side_txns[xid]
        for k, i in enumerate(t["ids"]):
            pos[i] = (t["end"], k)
            end_of[i] = t["end"]
    side_ids = set(pos)
    if committed - side_ids and not allow_no_side:
        res.failures.append(f"harness: {len(committed - side_ids)} committed ids not decoded by the "
                            f"side slot, e.g. {sorted(committed - side_ids)[:2]}")
    if side_ids & aborted:
        res.failures.append(f"harness: side slot decoded ids the generator saw abort: "
                            f"{sorted(side_ids & aborted)[:2]}")
    expected = set(expect_ids) if expect_ids is not None else committed
    if exclude_after_end is not None:
        expected = {i for i in expected if end_of.get(i, 0) < exclude_after_end}
    res.committed = len(expected)
    seen = {}
    by_agg = {}
    dups = []
    for r in sorted(recs, key=lambda r: (r["partition"], r["offset"])):
        i = r["headers"].get("id")
        if i is None:
            res.failures.append(f"record without id header at {r['partition']}/{r['offset']}")
            continue
        if i in seen:
            dups.append(i)
            continue
        seen[i] = r
        if i in pos:
            by_agg.setdefault((r["partition"], r["key"]), []).append((pos[i], i))
    missing = expected - set(seen)
    res.L = len(missing)
    if missing:
        ex = sorted(missing, key=lambda i: end_of.get(i, 0))[:3]
        res.failures.append(f"L: {len(missing)} committed ids never published, e.g. " +
                            ", ".join(f"{i} (commit end {lsn_fmt(end_of.get(i, 0))})" for i in ex))
    orphans = (set(seen) - side_ids) | (set(seen) & aborted)
    res.P = len(orphans)
    if orphans:
        res.failures.append(f"P: {len(orphans)} published ids of no committed transaction, e.g. "
                            f"{sorted(orphans)[:3]}")
    for (part, key), lst in by_agg.items() if getattr(fx, "ordered", True) else ():
        for a, b in zip(lst, lst[1:]):
            if b[0] <= a[0]:
                res.O += 1
                if res.O <= 3:
                    res.failures.append(
                        f"O: key {key} partition {part}: {b[1]} (commit end {lsn_fmt(b[0][0])} #{b[0][1]}) "
                        f"published after {a[1]} (commit end {lsn_fmt(a[0][0])} #{a[0][1]})")
    if fx.poll:
        check_poll_marks(fx, res, recs)
        return res
    check_d(fx, res, dups, end_of, fx.fault_marks + session_windows(samples))
    check_w_samples(fx, res, recs, samples)
    check_holds(fx, res, samples)
    # W: at each fault, everything at or below the confirmed position was already in Kafka.
    for m in fx.fault_marks:
        bad = m["w_bad"]
        if bad:
            res.W += len(bad)
            res.failures.append(
                f"W: at fault '{m['what']}' confirmed_flush_lsn {lsn_fmt(m['confirmed'])} covers "
                f"{len(bad)} transaction(s) not fully in Kafka, e.g. commit end {lsn_fmt(bad[0])}")
    res.faults = len(fx.fault_marks)
    return res


def check_poll_marks(fx, res, recs):
    """The poller's W and D, from its marks: a row is marked (published_at, PostgreSQL's now()
    of the marking statement) only after its delivery report, so after the broker appended it
    (LogAppendTime, the same machine clock, rounded down to the millisecond). W: a row marked
    before its first copy was appended, or marked and never appended. D: a copy appended after
    the row's mark is outside (the poller read a marked row again); copies before it are the
    unmarked batches a crash or a failed delivery republishes, inside."""
    if recs and fx.s.timestamp_type(fx.topic, recs[0]["partition"], recs[0]["offset"]) != "logappend":
        res.failures.append(f"harness: {fx.topic} does not carry the broker's append time")
        return
    marks = fx.marks()
    copies = {}
    for r in recs:
        i = r["headers"].get("id")
        if i is not None:
            copies.setdefault(i, []).append(r["ts"])
    early, out = [], []
    for i, m in marks.items():
        ts = sorted(copies.get(i, []))
        if m is None:
            continue  # unmarked at the end: a halted poller's rows (L says if one was due)
        if not ts or ts[0] > m:
            early.append((i, m, ts[0] if ts else None))
        for t in ts[1:]:
            if t > m:
                out.append((i, m, t))
            else:
                res.D_in += 1
    res.D_out += len(out)
    res.W += len(early)
    res.info.append(f"{sum(1 for m in marks.values() if m is not None)} of {len(marks)} rows "
                    f"marked; every copy's append time compared with its row's mark")
    if early:
        i, m, t = early[0]
        res.failures.append(f"W: {len(early)} row(s) marked published before the broker appended "
                            f"them, e.g. {i}: " + ("never appended" if t is None else
                                                    f"appended {t - m:.0f} ms after its mark"))
    if out:
        i, m, t = out[0]
        res.failures.append(f"D: {len(out)} copies appended after their row was marked, e.g. "
                            f"{i} {t - m:.0f} ms after its mark")


def check_d(fx, res, dups, end_of, windows):
    """D: each duplicate must lie inside an unconfirmed window (confirmed < commit end <= WAL)
    of a marked fault or of a walsender session's end; one outside fails the scenario."""
    out = []
    for i in dups:
        e = end_of.get(i)
        if e is not None and any(m["confirmed"] < e <= m["wal"] for m in windows):
            res.D_in += 1
        else:
            res.D_out += 1
            out.append((i, e))
    if out:
        i, e = out[0]
        ws = "; ".join(f"{m['what']}: {lsn_fmt(m['confirmed'])}..{lsn_fmt(m['wal'])}"
                       for m in windows[:8]) or "none"
        more = f" (and {len(windows) - 8} more)" if len(windows) > 8 else ""
        res.failures.append(
            f"D: {len(out)} duplicate(s) outside every unconfirmed window, e.g. {i} (commit end "
            f"{lsn_fmt(e) if e is not None else 'unknown: not decoded by the side slot'}); "
            f"windows (confirmed..WAL): {ws}{more}")


def check_w_samples(fx, res, recs, samples):
    """W over time: at each sample, every transaction at or below the sampled confirmed
    position had all its rows appended to Kafka at or before the sample's time (see Sampler
    for why that order holds on a correct relay). Each transaction is judged at the first
    sample that covered it; a row in none of fx.w_topics never arrived."""
    if not samples:
        res.failures.append("harness: the W sampler took no sample of the slot")
        return
    appended = {}  # id -> the earliest broker append time of any copy, ms
    extra = [r for t in fx.w_topics if t != fx.topic for r in fx.s.read_topic(t)]
    for r in recs + extra:
        i = r["headers"].get("id")
        if i is not None and (i not in appended or r["ts"] < appended[i]):
            appended[i] = r["ts"]
    if recs and fx.s.timestamp_type(fx.topic, recs[0]["partition"], recs[0]["offset"]) != "logappend":
        res.failures.append(f"harness: {fx.topic} does not carry the broker's append time "
                            f"(log.message.timestamp.type=LogAppendTime): W cannot be sampled")
        return
    snap = getattr(fx, "snapshot", None)
    if snap:
        check_w_snapshot(res, snap, fx.side_txns.values(), appended)
    txns = sorted((t["end"], max(appended.get(i, float("inf")) for i in t["ids"]))
                  for t in fx.side_txns.values() if not snap or t["end"] > snap["point"])
    ends = [e for e, _ in txns]
    covered, bad, worst = 0, [], None
    for t, c, _, _ in samples:
        k = bisect.bisect_right(ends, c)
        for j in range(covered, k):
            late = txns[j][1] - t * 1000.0
            if late > 0:
                bad.append(j)
                if worst is None:
                    worst = (t, c, txns[j][0], late)
        covered = max(covered, k)
    res.info.append(f"W sampled {len(samples)} times ({fx.sampler.psql_starts} psql session(s)), "
                    f"{covered} of {len(txns)} transactions covered")
    if bad:
        t, c, e, late = worst
        when = time.strftime("%H:%M:%S", time.localtime(t)) + f".{int(t * 1000) % 1000:03d}"
        res.W += len(bad)
        res.failures.append(
            f"W: {len(bad)} transaction(s) covered by confirmed_flush_lsn before all their rows "
            f"were in Kafka; first at {when}: confirmed {lsn_fmt(c)} covered commit end "
            f"{lsn_fmt(e)}, " + ("a row of which never reached Kafka" if late == float("inf")
                                 else f"whose last row was appended {late:.0f} ms later"))


def check_w_snapshot(res, snap, txns, appended):
    """W for an initial snapshot (@snap: its consistent point, the Unix time outboxd logged it
    complete, the ids deleted before it was taken): the slot's confirmed position is the
    consistent point from the moment the slot exists, so it covers every transaction committed
    before it at once; what keeps those rows is the marker slot, which outboxd drops only after
    every snapshot row was acknowledged, and then logs the snapshot complete. So every row
    committed before the consistent point and not deleted must have been appended to Kafka by
    that log line."""
    late = [(i, appended.get(i, float("inf"))) for t in txns if t["end"] <= snap["point"]
            for i in t["ids"] if i not in snap["gone"]]
    bad = [(i, a) for i, a in late if a > snap["done"] * 1000.0]
    res.info.append(f"W for the snapshot: {len(late)} rows before its consistent point "
                    f"{lsn_fmt(snap['point'])}, {len(bad)} appended after it was logged complete")
    if bad:
        res.W += len(bad)
        i, a = bad[0]
        res.failures.append(
            f"W: {len(bad)} snapshot row(s) not in Kafka when outboxd logged the snapshot "
            f"complete, e.g. {i} " + ("never" if a == float("inf") else
                                       f"appended {a - snap['done'] * 1000.0:.0f} ms later"))


def check_holds(fx, res, samples):
    """Fixture.hold_below(): no sample of the period confirmed the held transaction (a W: the
    relay halted on it, so Kafka does not hold it)."""
    for h in fx.holds:
        during = [(t, c) for t, c, _, _ in samples if h["since"] <= t <= h["until"]]
        over = [(t, c) for t, c in during if c >= h["end"]]
        if not during:
            res.failures.append(f"harness: no sample of the slot while {h['what']}")
        elif over:
            res.W += 1
            res.failures.append(
                f"W: while {h['what']}, {len(over)} of {len(during)} samples had "
                f"confirmed_flush_lsn at or past its commit end {lsn_fmt(h['end'])}, first "
                f"{lsn_fmt(over[0][1])}")
        else:
            res.info.append(f"while {h['what']}: {len(during)} samples, confirmed_flush_lsn "
                            f"at most {lsn_fmt(max(c for _, c in during))}, below its commit "
                            f"end {lsn_fmt(h['end'])}")


def settle(fx, gen, timeout=90, expect_ids=None):
    """Waits until Kafka holds every committed id and the slot confirmed the last commit."""
    if gen:
        gen.settle()
    want = set(expect_ids) if expect_ids is not None else (gen.committed_ids() if gen else set())
    want |= getattr(fx, "extra_committed", set())
    deadline = time.time() + timeout
    last = fx.last_end()
    while True:
        have = fx.kafka_ids()
        if fx.poll:
            left = fx.unpublished()
            if want <= have and left == 0:
                return True, ""
            if time.time() > deadline:
                why = [f"{len(want - have)} ids still missing from Kafka"] if not want <= have else []
                return False, "; ".join(why + ([f"{left} rows still unmarked"] if left else []))
            time.sleep(1)
            continue
        c = fx.confirmed() or 0
        if want <= have and c >= last:
            return True, ""
        if time.time() > deadline:
            why = []
            if not want <= have:
                why.append(f"{len(want - have)} ids still missing from Kafka")
            if c < last:
                why.append(f"confirmed_flush_lsn {lsn_fmt(c)} below the last commit end {lsn_fmt(last)}")
            return False, "; ".join(why)
        time.sleep(1)
