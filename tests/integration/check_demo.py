#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""
README's first command, as a user runs it: scripts/demo on a stack of its own (OUTBOXD_STACK_DIR,
so the suite's stack is untouched), then the commands it prints at the end, run as printed:
the psql insert, the kcat consumer, the metrics URL, sql/monitoring.sql and the stop line.
TAP output. Independent of PostgreSQL's version (the demo starts 15): on 15 only.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from taplib import SOURCE, finish, tap, wait_for  # noqa: E402

DEMO_EVENTS = 7  # scripts/demo inserts 4 order and 3 customer events


def printed(text, pattern):
    """The command line of the demo's closing text that matches @pattern (indentation off)."""
    for line in text.splitlines():
        if re.search(pattern, line):
            return line.strip()
    return None


def shell(cmd, env, timeout=60, **kw):
    return subprocess.run(["bash", "-c", cmd], cwd=SOURCE, env=env, capture_output=True,
                          text=True, timeout=timeout, **kw)


def check_events(out):
    lines = [ln for ln in out.splitlines() if ln.startswith("topic=outbox.event.")]
    tap(len(lines) == DEMO_EVENTS, "the demo shows its %d events from Kafka" % DEMO_EVENTS,
        "got %d:\n%s" % (len(lines), "\n".join(lines)))
    orders = [ln for ln in lines if ln.startswith("topic=outbox.event.order ")]
    tap(len(orders) == 4 and len(lines) - len(orders) == 3,
        "4 on outbox.event.order, 3 on outbox.event.customer", "\n".join(lines))
    tap(all(re.search(r"headers=(.*,)?id=\"?[0-9a-f-]{36}", ln) for ln in lines),
        "each record carries the row id in its id header", "\n".join(lines[:2]))
    o1001 = [ln for ln in orders if 'key="o-1001"' in ln]
    parts = {re.search(r"partition=(\d+)", ln).group(1) for ln in o1001}
    # OrderCreated (total), OrderPaid (method), OrderShipped (carrier), committed in that order
    marks = [m for ln in o1001 for m in ("total", "method", "carrier") if m in ln]
    tap(len(o1001) == 3 and len(parts) == 1 and marks == ["total", "method", "carrier"],
        "an aggregate's events share one partition, in commit order", "\n".join(o1001))


def check_insert(closing, env):
    """The printed kcat consumer, then the printed psql insert: the new row arrives."""
    kcat = printed(closing, r"^\s*kcat -C ")
    insert = printed(closing, r"^\s*psql .* -c \"INSERT INTO outbox")
    tap(kcat is not None and insert is not None, "the demo prints a consumer and an insert",
        closing)
    if kcat is None or insert is None:
        return
    # (stdbuf: a terminal would get each line at once; a pipe gets stdio's full buffers)
    consumer = subprocess.Popen(["bash", "-c", "exec stdbuf -oL " + kcat], cwd=SOURCE, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    os.set_blocking(consumer.stdout.fileno(), False)
    seen = []

    def arrived():
        try:
            chunk = os.read(consumer.stdout.fileno(), 65536)
        except BlockingIOError:
            chunk = b""
        if chunk:
            seen.append(chunk.decode(errors="replace"))
        return "o-1003" in "".join(seen)

    try:
        # -o end: rows inserted before kcat reached the end are not shown, so the insert is
        # repeated (a new row each time) until one arrives, within a bound.
        ok = False
        for _ in range(6):
            r = shell(insert, env)
            if r.returncode != 0:
                tap(False, "the printed psql insert runs", r.stderr)
                return
            if wait_for(arrived, 10):
                ok = True
                break
        tap(ok, "the printed insert arrives at the printed consumer", "".join(seen)[-2000:])
    finally:
        consumer.kill()
        consumer.wait()


def check_rest(closing, env):
    url = re.search(r"(http://127\.0\.0\.1:\d+)/metrics", closing)
    body = ""
    if url:
        try:
            with urllib.request.urlopen(url.group(1) + "/metrics", timeout=10) as r:
                body = r.read().decode()
        except OSError as e:
            body = str(e)
    tap(url is not None and "outboxd_records_acknowledged_total" in body,
        "the printed metrics URL answers with outboxd's metrics", body[:500])
    mon = printed(closing, r"^\s*The slot and its lag:")
    mon = mon.split(":", 1)[1].strip() if mon else None
    r = shell(mon, env) if mon else None
    tap(r is not None and r.returncode == 0 and "debezium" in r.stdout,
        "the printed sql/monitoring.sql command shows the slot",
        (r.stdout + r.stderr)[-1000:] if r else closing)


def main():
    stack = tempfile.mkdtemp(prefix="outboxd-demo-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OUTBOXD_")}
    env["OUTBOXD_STACK_DIR"] = stack
    pid = None
    try:
        r = subprocess.run([os.path.join(SOURCE, "scripts", "demo")], cwd=SOURCE, env=env,
                           capture_output=True, text=True, timeout=900)
        tap(r.returncode == 0, "scripts/demo exits 0", r.stderr[-3000:])
        check_events(r.stdout)
        closing = r.stderr.split("==> Done:", 1)[-1]
        m = re.search(r"Stop:\s+(kill (\d+); scripts/stack down)", closing)
        pid = int(m.group(2)) if m else None
        check_insert(closing, env)
        check_rest(closing, env)
        tap(m is not None, "the demo prints how to stop", closing[-1000:])
        if m:
            s = shell(m.group(1), env, timeout=120)
            gone = wait_for(lambda: not os.path.exists("/proc/%d" % pid), 30)
            tap(s.returncode == 0 and gone and not os.path.exists(os.path.join(stack, "pg")),
                "the printed stop line stops outboxd and the stack", s.stderr[-1000:])
            pid = None
    finally:
        if pid:
            subprocess.run(["kill", str(pid)])
        subprocess.run([os.path.join(SOURCE, "scripts", "stack"), "--dir", stack, "down"],
                       capture_output=True)
        shutil.rmtree(stack, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
