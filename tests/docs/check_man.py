#!/usr/bin/env python3
"""The man page (TAP): build/outboxd.1, made by help2man from `outboxd --help`, renders with
`man -l` without a groff warning, has its sections, and names every command --help names."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from taplib import finish, tap  # noqa: E402

page, binary = sys.argv[1], sys.argv[2]
r = subprocess.run(["man", "--warnings", "-l", page], capture_output=True, text=True,
                   env=dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="0"), timeout=60)
tap(r.returncode == 0 and not r.stderr.strip(), "man -l renders the page without warnings",
    r.stderr)
# without a terminal, man keeps groff's overstrikes (bold as "N\bN"): col -b removes them
text = subprocess.run(["col", "-bx"], input=r.stdout, capture_output=True, text=True).stdout
for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "ENVIRONMENT", "FILES", "SEE ALSO"):
    tap(any(line.strip() == section for line in text.splitlines()), f"section {section}")
helptext = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
commands = [line.split("  ")[1].strip() for line in helptext.splitlines()
            if line.startswith("  ") and line.strip() and not line.startswith("   ")]
tap(len(commands) >= 10, f"--help lists {len(commands)} commands and variables", helptext)
flat = " ".join(text.split())
missing = [c for c in commands if c.split()[0] not in flat]
tap(not missing, "the page names every command and variable of --help", ", ".join(missing))
sys.exit(finish())
