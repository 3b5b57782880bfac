#!/usr/bin/env python3
"""The configuration's man page (TAP): build/outboxd.conf.5, made by outboxd-confref from the
same source as docs/configuration.md, renders with `man -l` without a groff warning, has its
sections, and names every key the Markdown page's tables name."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from taplib import finish, tap  # noqa: E402

page, markdown = sys.argv[1], sys.argv[2]
r = subprocess.run(["man", "--warnings", "-l", page], capture_output=True, text=True,
                   env=dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="0"), timeout=60)
tap(r.returncode == 0 and not r.stderr.strip(), "man -l renders the page without warnings",
    r.stderr)
# without a terminal, man keeps groff's overstrikes (bold as "N\bN"): col -b removes them
text = subprocess.run(["col", "-bx"], input=r.stdout, capture_output=True, text=True).stdout
lines = [line.strip() for line in text.splitlines()]
for section in ("NAME", "DESCRIPTION", "outboxd settings", "Refused settings", "SEE ALSO"):
    tap(section in lines, f"section {section}")
with open(markdown, encoding="utf-8") as f:
    keys = re.findall(r"^\| `([^`]+)` \|", f.read(), re.M)
tap(len(keys) > 300, f"the Markdown page's tables name {len(keys)} keys")
# (a tag shorter than the indent shares its line with the paragraph's first words)
missing = [k for k in keys if not any(ln == k or ln.startswith(k + " ") for ln in lines)]
tap(not missing, "the man page has a paragraph for each of them", ", ".join(missing[:20]))
sys.exit(finish())
