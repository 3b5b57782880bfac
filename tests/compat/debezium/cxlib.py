# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the compat scripts (compat.py, topics.py): the log, failing with a reason,
the stack's settings, psql and the end offsets of a run's topics."""

import json
import os
import re
import subprocess
import sys
import time

T0 = time.time()
PREFIX = "compat"  # the script's name in its "<PREFIX>: FAIL: ..." line


def log(msg):
    print("[%5.1fs] %s" % (time.time() - T0, msg), flush=True)


def die(msg):
    print("%s: FAIL: %s" % (PREFIX, msg), flush=True)
    sys.exit(1)


def need_env(name):
    v = os.environ.get(name)
    if not v:
        die("%s is not set; start the test stack first: eval \"$(scripts/stack up)\"" % name)
    return v


def psql(conninfo, sql, check=True):
    p = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", conninfo,
                        "-f", "-"], input=sql.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if check and p.returncode != 0:
        raise RuntimeError("psql failed: %s\n%s" % (p.stderr.decode(errors="replace"), sql[:2000]))
    return p.stdout.decode()


def end_offsets(bootstrap, substr):
    """{(topic, partition): end offset} for every topic whose name holds @substr (kcat)."""
    for _ in range(30):   # the shared broker may be restarted by another suite
        p = subprocess.run(["kcat", "-b", bootstrap, "-L", "-J", "-m", "10"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        if p.returncode == 0:
            break
        time.sleep(2)
    else:
        raise RuntimeError("kcat -L failed: %s" % p.stderr.decode(errors="replace"))
    args = []
    for t in json.loads(p.stdout).get("topics", []):
        if substr in t["topic"] and not t.get("error"):
            for part in t["partitions"]:
                args += ["-t", "%s:%d:-1" % (t["topic"], part["partition"])]
    if not args:
        return {}
    p = subprocess.run(["kcat", "-b", bootstrap, "-Q", "-m", "10"] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    out = {}
    for line in p.stdout.decode(errors="replace").splitlines():
        m = re.match(r"^(\S+) \[(\d+)\] offset (-?\d+)$", line)
        if m:
            out[(m.group(1), int(m.group(2)))] = max(0, int(m.group(3)))
    return out


def run(main, cleanup=None):
    """Exits with main()'s status; a harness failure (an exception) is a test failure."""
    try:
        rc = main()
    except SystemExit:
        raise
    except Exception as e:
        import traceback
        traceback.print_exc()
        print("%s: FAIL: harness error: %s" % (PREFIX, e))
        rc = 1
    finally:
        if cleanup:
            cleanup()
    sys.exit(rc)
