"""TAP output, the stack's environment, a bounded wait and a free port, shared by the Python
test scripts (check_sql.py, check_standby.py, check_failover.py, check_security.py,
check_image.py): meson reads the TAP."""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from freeport import free_port  # noqa: E402,F401  (tests import it from here)

SOURCE = os.environ.get("OUTBOXD_TEST_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
BIN = os.environ.get("OUTBOXD_BIN", os.path.join(SOURCE, "build", "outboxd"))

_count = 0
_failed = 0


def tap(ok, what, detail=""):
    """One TAP line; a failure's @detail follows as comments (its last 80 lines), and both go
    to stderr too: meson reads stdout as TAP and shows a failed test's stderr only."""
    global _count, _failed
    _count += 1
    _failed += 0 if ok else 1
    print(f"{'ok' if ok else 'not ok'} {_count} - {what}")
    if not ok:
        lines = detail.strip().splitlines()[-80:] if detail else []
        for line in lines:
            print(f"# {line}")
        print(f"not ok {_count} - {what}", file=sys.stderr)
        for line in lines:
            print(f"# {line}", file=sys.stderr)
        sys.stderr.flush()
    sys.stdout.flush()


def note(msg):
    print(f"# {msg}")
    sys.stdout.flush()


def finish():
    """The plan line; the exit status: 1 when a test failed."""
    print(f"1..{_count}")
    return 1 if _failed else 0


def failed():
    return _failed > 0


def env(name):
    """A stack variable, or a bail-out that says how to start the stack."""
    v = os.environ.get(name)
    if not v:
        print(f"Bail out! {name} is not set: run scripts/test, or eval \"$(scripts/stack up)\"")
        sys.exit(1)
    return v


def wait_for(pred, seconds, step=0.2):
    """@pred's value once it is truthy, polled every @step seconds; its last value after
    @seconds (the bound every wait for another process has)."""
    deadline = time.time() + seconds
    while True:
        v = pred()
        if v or time.time() > deadline:
            return v
        time.sleep(step)


def terminate(p, timeout=30):
    """SIGTERM to the process @p (a Popen) if it still runs, then its exit status within @timeout
    seconds; after that SIGKILL, and None."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return None
