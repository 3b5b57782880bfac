#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""
The scripts in sql/, as operations staff run them with psql against the test stack's
PostgreSQL: with names of their own given as psql variables (a mixed-case table, to prove the
quoting), each run twice (they must be harmless to run again), then the objects they made
checked in the catalog, `outboxd check` run as the role they made (exit 0: the role, the
publication and the slot are what outboxd needs), and monitoring.sql run on the slot.
role_managed.sql is run for each service it knows (the rds_replication role RDS provides is
created here to stand in for the service's). TAP output; the stack's environment is required.
"""
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from taplib import BIN, SOURCE, env, finish, tap, terminate  # noqa: E402


CONNINFO = env("OUTBOXD_TEST_PG_CONNINFO")


def psql(args, sql=None):
    cmd = ["psql", CONNINFO, "-X", "-q", "-v", "ON_ERROR_STOP=1"] + args
    if sql:
        cmd += ["-Atc", sql]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def value(sql):
    r = psql([], sql)
    return r.stdout.strip() if r.returncode == 0 else f"ERROR {r.stderr.strip()}"


def files_and_env(d, worker, cfg):
    """The worker and connector files with their texts in @d, and outboxd's environment (none
    of the test stack's variables)."""
    paths = []
    for name, text in (("worker.properties", worker), ("connector.properties", cfg)):
        paths.append(os.path.join(d, name))
        with open(paths[-1], "w") as f:
            f.write(text)
    return paths, {k: v for k, v in os.environ.items() if not k.startswith("OUTBOXD_TEST")}


def run_outboxd(args, worker, cfg):
    """outboxd ARGS... WORKER CONNECTOR with the two files' text; (exit status, output)."""
    with tempfile.TemporaryDirectory() as d:
        paths, e = files_and_env(d, worker, cfg)
        r = subprocess.run([BIN] + args + paths, capture_output=True, text=True, timeout=120,
                           env=e)
        return r.returncode, r.stdout + r.stderr


def run_until(args, worker, cfg, needle, timeout=30):
    """outboxd ARGS... as run_outboxd() does, until @needle is in its output (@timeout s at
    most), then SIGTERM; its output."""
    with tempfile.TemporaryDirectory() as d:
        paths, e = files_and_env(d, worker, cfg)
        log = os.path.join(d, "out")
        with open(log, "w") as f:
            p = subprocess.Popen([BIN] + args + paths, stdout=f, stderr=subprocess.STDOUT, env=e)
        deadline = time.time() + timeout
        while time.time() < deadline and p.poll() is None and needle not in open(log).read():
            time.sleep(0.1)
        terminate(p)
        return open(log).read()


def lines(out, prefix):
    return [l for l in out.splitlines() if l.startswith(prefix)]


def check_failover_lines(tag, major, worker, fcfg, cfg):
    """outboxd check's failover lines: what synchronized_standby_slots lacks, named."""
    if major < 17:
        rc, out = run_outboxd(["check"], worker, cfg + "slot.failover=true\n")
        tap(rc == 2 and any("needs PostgreSQL 17" in l for l in lines(out, "FAIL failover")),
            f"outboxd check: slot.failover=true is a FAIL on {major}", out)
        return
    rc, out = run_outboxd(["check"], worker, cfg + "slot.failover=true\n")
    tap(rc == 2 and any("ALTER_REPLICATION_SLOT" in l for l in lines(out, "FAIL failover")),
        "outboxd check: slot.failover=true on a plain slot is a FAIL naming the ALTER", out)
    # no physical slot on the server: no standby can hold a synced copy, nothing to fail over to
    # (a new primary after a failover): a warning, so that `run` goes on there
    physical = value("SELECT count(*) FROM pg_replication_slots WHERE slot_type = 'physical'")
    rc, out = run_outboxd(["check"], worker, fcfg)
    tap(physical == "0" and rc == 0 and
        any("synchronized_standby_slots is empty and this server has no physical slot" in l
            for l in lines(out, "warn failover")),
        "outboxd check: a failover slot without synchronized_standby_slots on a server without "
        f"physical slots is a warning ({physical} physical slots)", out)
    # a physical slot, so a standby may hold a copy: the empty setting is a FAIL
    psql([], f"SELECT pg_create_physical_replication_slot('px_{tag}', true)")
    rc, out = run_outboxd(["check"], worker, fcfg)
    tap(rc == 2 and any("synchronized_standby_slots is empty" in l
                        for l in lines(out, "FAIL failover")),
        "outboxd check: a failover slot without synchronized_standby_slots is a FAIL", out)
    # `outboxd run` refuses to stream from it (exit 2, naming the setting and the way out) ...
    rc, out = run_outboxd(["run"], worker, fcfg)
    tap(rc == 2 and "synchronized_standby_slots is empty" in out and
        "outboxd.failover.unsafe=true" in out,
        "outboxd run: a failover slot without synchronized_standby_slots is refused (exit 2)",
        out[-2000:])
    # ... unless outboxd.failover.unsafe=true accepts the risk: it streams, with a warning
    out = run_until(["run"], worker, fcfg + "outboxd.failover.unsafe=true\n", "streaming slot")
    tap("streaming anyway (outboxd.failover.unsafe=true)" in out and "streaming slot" in out,
        "outboxd run with outboxd.failover.unsafe=true streams from it, with a warning",
        out[-2000:])
    sb = f"sb_{tag}"
    psql([], f"ALTER SYSTEM SET synchronized_standby_slots = '{sb}'")
    psql([], "SELECT pg_reload_conf()")
    # the new value is read by sessions that start after the reload has been processed
    ok = False
    for _ in range(50):
        rc, out = run_outboxd(["check"], worker, fcfg)
        if any("does not exist" in l for l in lines(out, "FAIL failover")):
            ok = rc == 2
            break
        time.sleep(0.1)
    tap(ok, "outboxd check: synchronized_standby_slots naming a missing slot is a FAIL", out)
    psql([], f"SELECT pg_create_physical_replication_slot('{sb}', true)")
    rc, out = run_outboxd(["check"], worker, fcfg)
    tap(rc == 0 and any("is not connected" in l for l in lines(out, "warn failover")) and
        any(f"synchronized_standby_slots = '{sb}'" in l for l in lines(out, "ok   failover")),
        "outboxd check: an existing physical slot is ok, its absent standby a warning", out)


def failover_checks(tag, worker, cfg):
    """slot.sql -v failover=on and `outboxd slot create` with slot.failover=true: failover slots
    on 17+, a refusal naming the version before; two_phase and non-failover slots refused."""
    major = int(env("OUTBOXD_TEST_PG_MAJOR"))
    fslot, oslot = f"fo_{tag}", f"fx_{tag}"
    try:
        r = psql(["-v", f"slot={fslot}", "-v", "failover=on", "-f",
                  os.path.join(SOURCE, "sql", "slot.sql")])
        if major >= 17:
            tap(r.returncode == 0 and value(f"SELECT failover FROM pg_replication_slots "
                                            f"WHERE slot_name = '{fslot}'") == "t",
                "sql/slot.sql -v failover=on makes a failover slot", r.stdout + r.stderr)
        else:
            tap(r.returncode != 0 and "needs PostgreSQL 17 or later" in r.stderr and
                value(f"SELECT count(*) FROM pg_replication_slots WHERE slot_name = '{fslot}'")
                == "0", f"sql/slot.sql -v failover=on refused on {major}", r.stdout + r.stderr)
        # an existing plain slot asked to be a failover slot: refused with the ALTER that fixes it
        psql([], f"SELECT pg_create_logical_replication_slot('{oslot}', 'pgoutput')")
        r = psql(["-v", f"slot={oslot}", "-v", "failover=on", "-f",
                  os.path.join(SOURCE, "sql", "slot.sql")])
        if major >= 17:
            tap(r.returncode != 0 and "is not a failover slot" in r.stderr and
                "ALTER_REPLICATION_SLOT" in r.stderr, "sql/slot.sql: a plain slot is not "
                "taken for a failover slot, the fix named", r.stdout + r.stderr)
            a = subprocess.run(["psql", CONNINFO + " replication=database", "-X", "-q", "-c",
                                f"ALTER_REPLICATION_SLOT {oslot} (FAILOVER true)"],
                               capture_output=True, text=True, timeout=60)
            r = psql(["-v", f"slot={oslot}", "-v", "failover=on", "-f",
                      os.path.join(SOURCE, "sql", "slot.sql")])
            tap(a.returncode == 0 and r.returncode == 0, "the named ALTER_REPLICATION_SLOT "
                "makes it one, and slot.sql then accepts it", a.stderr + r.stdout + r.stderr)
        psql([], f"SELECT pg_drop_replication_slot('{oslot}')")
        psql([], f"SELECT pg_create_logical_replication_slot('{oslot}', 'pgoutput', false, true)")
        r = psql(["-v", f"slot={oslot}", "-f", os.path.join(SOURCE, "sql", "slot.sql")])
        tap(r.returncode != 0 and "two_phase" in r.stderr, "sql/slot.sql refuses a two_phase slot",
            r.stdout + r.stderr)
        psql([], f"SELECT pg_drop_replication_slot('{fslot}') FROM pg_replication_slots "
                 f"WHERE slot_name = '{fslot}'")
        # outboxd slot create with slot.failover=true
        fcfg = re.sub(r"(?m)^slot\.name=.*$", f"slot.name={fslot}", cfg) + "slot.failover=true\n"
        rc, out = run_outboxd(["slot", "create"], worker, fcfg)
        if major >= 17:
            tap(rc == 0 and value(f"SELECT failover FROM pg_replication_slots "
                                  f"WHERE slot_name = '{fslot}'") == "t",
                "outboxd slot create with slot.failover=true makes a failover slot", out)
        else:
            tap(rc == 2 and "slot.failover=true needs PostgreSQL 17 or later" in out,
                f"outboxd slot create with slot.failover=true: exit 2 on {major}", out)
        check_failover_lines(tag, major, worker, fcfg, cfg)
    finally:
        psql([], "ALTER SYSTEM RESET synchronized_standby_slots; SELECT pg_reload_conf()"
             if major >= 17 else "SELECT 1")
        for sl in (fslot, oslot, f"sb_{tag}", f"px_{tag}"):
            psql([], f"SELECT pg_drop_replication_slot('{sl}') FROM pg_replication_slots "
                     f"WHERE slot_name = '{sl}'")


def main():
    tag = secrets.token_hex(4)
    schema, table = f"sq_{tag}", f"Outbox_{tag}"
    pub, slot, role = f"pub_{tag}", f"slot_{tag}", f"relay_{tag}"
    password = secrets.token_urlsafe(18)
    names = ["-v", f"schema={schema}", "-v", f"table={table}", "-v", f"publication={pub}",
             "-v", f"slot={slot}", "-v", f"role={role}", "-v", "cleanup=on",
             "-v", f"outboxd_password={password}"]
    print("TAP version 13")
    psql([], f'CREATE SCHEMA "{schema}"')
    try:
        for f in ("outbox", "publication", "role", "slot"):
            for k in (1, 2):
                r = psql(names + ["-f", os.path.join(SOURCE, "sql", f"{f}.sql")])
                tap(r.returncode == 0 and password not in r.stdout + r.stderr,
                    f"sql/{f}.sql with names of its own, run {k}", r.stdout + r.stderr)
        q = f'"{schema}"."{table}"'
        tap(value(f"SELECT to_regclass('{q}') IS NOT NULL") == "t", f"the table {q} exists")
        tap(value(f"SELECT count(*) FROM pg_indexes WHERE schemaname = '{schema}' AND "
                  f"indexdef LIKE '%(created_at)%'") == "1", "cleanup=on: the created_at index")
        tap(value(f"SELECT pubinsert AND NOT pubupdate AND NOT pubdelete FROM pg_publication "
                  f"WHERE pubname = '{pub}'") == "t", f"publication {pub}: inserts only")
        tap(value(f"SELECT count(*) FROM pg_publication_tables WHERE pubname = '{pub}' AND "
                  f"schemaname = '{schema}' AND tablename = '{table}'") == "1",
            f"publication {pub} holds {q}")
        tap(value(f"SELECT rolcanlogin AND rolreplication AND NOT rolsuper FROM pg_roles "
                  f"WHERE rolname = '{role}'") == "t", f"role {role}: LOGIN REPLICATION")
        tap(value(f"SELECT has_table_privilege('{role}', '{q}', 'SELECT') AND "
                  f"has_table_privilege('{role}', '{q}', 'DELETE') AND NOT "
                  f"has_table_privilege('{role}', '{q}', 'UPDATE')") == "t",
            f"role {role}: SELECT and DELETE (cleanup=on), nothing more")
        tap(value(f"SELECT plugin FROM pg_replication_slots WHERE slot_name = '{slot}'")
            == "pgoutput", f"slot {slot}: pgoutput")
        r = psql(["-v", f"slot={slot}", "-f", os.path.join(SOURCE, "sql", "monitoring.sql")])
        tap(r.returncode == 0 and slot in r.stdout, "sql/monitoring.sql -v slot=...",
            r.stdout + r.stderr)
        # outboxd check as the role: it may stream, the publication and slot are right
        host = env("OUTBOXD_TEST_PG_HOST")
        port = env("OUTBOXD_TEST_PG_PORT")
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(d, "connector.properties")
            with open(cfg, "w") as f:
                f.write(f"""name=c
connector.class=io.debezium.connector.postgresql.PostgresConnector
database.hostname={host}
database.port={port}
database.user={role}
database.password={password}
database.dbname=outboxd
topic.prefix={tag}
slot.name={slot}
publication.name={pub}
table.include.list={schema}.{table}
transforms=outbox
transforms.outbox.type=io.debezium.transforms.outbox.EventRouter
outboxd.cleanup.retention=7 days
""")
            worker = os.path.join(d, "worker.properties")
            with open(worker, "w") as f:
                f.write(f"bootstrap.servers={env('OUTBOXD_TEST_KAFKA_BOOTSTRAP')}\n"
                        "key.converter=org.apache.kafka.connect.json.JsonConverter\n"
                        "value.converter=org.apache.kafka.connect.json.JsonConverter\n")
            e = {k: v for k, v in os.environ.items() if not k.startswith("OUTBOXD_TEST")}
            r = subprocess.run([BIN, "check", worker, cfg], capture_output=True, text=True, timeout=120,
                               env=e)
            out = r.stdout + r.stderr
            tap(r.returncode == 0 and password not in out,
                f"outboxd check as {role} exits 0 (exit {r.returncode})", out)
            tap(any(l.startswith("ok") and " cleanup " in l for l in out.splitlines()),
                "outboxd check: the cleanup may run (cleanup=on granted DELETE)", out)
            cfg_ok = open(cfg).read()
            worker_ok = open(worker).read()
        # a role without DELETE (role_managed.sql without -v cleanup=on): check names the GRANT
        crole = f"m_{tag}_cloudsql"
        # the managed-service variant, for each service it knows
        psql([], "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = "
                 "'rds_replication') THEN CREATE ROLE rds_replication; END IF; END $$")
        for service, check in (("rds", f"pg_has_role('m_{tag}_rds', 'rds_replication', 'MEMBER')"),
                               ("cloudsql", "rolreplication"), ("azure", "rolreplication")):
            mrole = f"m_{tag}_{service}"
            r = psql(names[:4] + ["-v", f"role={mrole}", "-v", f"service={service}",
                                  "-v", f"outboxd_password={password}",
                                  "-f", os.path.join(SOURCE, "sql", "role_managed.sql")])
            ok = r.returncode == 0 and value(
                f"SELECT {check} AND rolcanlogin FROM pg_roles WHERE rolname = '{mrole}'") == "t"
            tap(ok, f"sql/role_managed.sql -v service={service}", r.stdout + r.stderr)
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(d, "connector.properties")
            with open(cfg, "w") as f:
                f.write(cfg_ok.replace(f"database.user={role}", f"database.user={crole}"))
            worker2 = os.path.join(d, "worker.properties")
            with open(worker2, "w") as f:
                f.write(worker_ok)
            e = {k: v for k, v in os.environ.items() if not k.startswith("OUTBOXD_TEST")}
            r = subprocess.run([BIN, "check", worker2, cfg], capture_output=True, text=True,
                               timeout=120, env=e)
            out = r.stdout + r.stderr
            tap(r.returncode == 2 and any(l.startswith("FAIL cleanup") and "GRANT DELETE" in l
                                          for l in out.splitlines()),
                f"outboxd check as {crole} (no DELETE): FAIL cleanup naming the GRANT", out)
        failover_checks(tag, worker_ok, cfg_ok)
        r = psql(names[:4] + ["-v", f"role=m_{tag}_x", "-v", "service=heroku",
                              "-v", f"outboxd_password={password}",
                              "-f", os.path.join(SOURCE, "sql", "role_managed.sql")])
        tap(r.returncode != 0 and "service must be rds, cloudsql or azure" in r.stderr,
            "sql/role_managed.sql refuses a service it does not know", r.stdout + r.stderr)
    finally:
        psql([], f"SELECT pg_drop_replication_slot('{slot}') FROM pg_replication_slots "
                 f"WHERE slot_name = '{slot}'")
        psql([], f'DROP PUBLICATION IF EXISTS "{pub}"')
        psql([], f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        for r in (role, f"m_{tag}_rds", f"m_{tag}_cloudsql", f"m_{tag}_azure"):
            psql([], f'DROP OWNED BY "{r}"; DROP ROLE "{r}"')
    return finish()


if __name__ == "__main__":
    sys.exit(main())
