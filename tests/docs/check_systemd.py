#!/usr/bin/env python3
"""The systemd unit (TAP): deploy/systemd/outboxd.service passes `systemd-analyze verify` (with
ExecStart pointed at the built binary), keeps the settings docs/installing.md ("systemd")
promises (a dynamic user, the password as a credential read through ${file:...}, no restart
after exit 2, room for the flush at stop), and `systemd-analyze security --offline` rates its
exposure at most 2.0.

These machines run no systemd as PID 1, so the unit is checked, not started (docs/installing.md
says so)."""
import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from taplib import finish, note, tap  # noqa: E402

unit, binary = sys.argv[1], sys.argv[2]
text = open(unit).read()
d = tempfile.mkdtemp(prefix="outboxd-unit-")
atexit.register(shutil.rmtree, d, True)
copy = os.path.join(d, "outboxd.service")
with open(copy, "w") as f:
    f.write(text.replace("/usr/local/bin/outboxd", os.path.abspath(binary)))
r = subprocess.run(["systemd-analyze", "verify", "--man=no", copy], capture_output=True,
                   text=True, timeout=60)
tap(r.returncode == 0 and not r.stderr.strip() and not r.stdout.strip(),
    "systemd-analyze verify: no complaint", r.stdout + r.stderr)

settings = {}
for line in text.splitlines():
    if "=" in line and not line.startswith("#"):
        k, v = line.split("=", 1)
        settings.setdefault(k.strip(), []).append(v.strip())
for key, want in (("DynamicUser", "yes"), ("RestartPreventExitStatus", "2"),
                  ("Restart", "on-failure"), ("NoNewPrivileges", "yes"),
                  ("ProtectSystem", "strict"), ("KillSignal", "SIGTERM")):
    tap(want in settings.get(key, []), f"{key}={want}", str(settings.get(key)))
tap("OUTBOXD_HTTP_BIND=::" in settings.get("Environment", []),
    "Environment=OUTBOXD_HTTP_BIND=:: (the endpoint's addresses set explicitly)",
    str(settings.get("Environment")))
cred = settings.get("LoadCredential", [""])[0].split(":", 1)[0]
tap(cred and f"${{file:/run/credentials/outboxd.service/{cred}:password}}" in text,
    "the password is a credential, read through ${file:/run/credentials/outboxd.service/...}")
stop = settings.get("TimeoutStopSec", ["0s"])[0]
tap(stop.endswith("s") and int(stop[:-1]) >= 15, f"TimeoutStopSec={stop} leaves room for the "
    "10 s flush")

r = subprocess.run(["systemd-analyze", "security", "--offline=true", "--no-pager", copy],
                   capture_output=True, text=True, timeout=60)
m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", r.stdout + r.stderr)
level = float(m.group(1)) if m else 99.0
note(f"systemd-analyze security: exposure {level}")
tap(r.returncode == 0 and level <= 2.0, f"systemd-analyze security --offline: exposure "
    f"{level} <= 2.0", r.stdout[-2000:] + r.stderr)
sys.exit(finish())
