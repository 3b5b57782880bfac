#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every link between the project's documents resolves (TAP): in README.md, CONTRIBUTING.md,
bench/README.md and docs/*.md, each relative link names a file or folder of the source tree,
and each #anchor (in the same page or another) names a heading of that page, by GitHub's rule
(lowercase; punctuation but '-' and '_' dropped; spaces to '-'; a repeated heading gets -1,
-2, ...). Links to other sites are not fetched. Usage: check_links.py SOURCE_ROOT"""

import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
PAGES = ["README.md", "CONTRIBUTING.md", "bench/README.md"]
if os.path.isdir(os.path.join(ROOT, "docs")):
    PAGES += sorted("docs/" + f for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))

LINK = re.compile(r"(?<!!)\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose(text):
    """The page without its fenced code blocks and inline code spans (no links there)."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return out


def anchors(path):
    seen, out = {}, set()
    fenced = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                fenced = not fenced
                continue
            m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else "%s-%d" % (slug, n))
    return out


def check(page):
    path = os.path.join(ROOT, page)
    bad = []
    with open(path, encoding="utf-8") as f:
        lines = prose(f.read())
    for no, line in enumerate(lines, 1):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # another site, mailto:
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(dest):
                bad.append("%s: link to %s: no such file" % (page, target))
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                bad.append("%s: link to %s: %s has no heading #%s"
                           % (page, target, os.path.relpath(dest, ROOT), anchor))
    return bad


def main():
    pages = [p for p in PAGES if os.path.exists(os.path.join(ROOT, p))]
    print("1..%d" % len(pages))
    failed = 0
    for i, page in enumerate(pages, 1):
        bad = check(page)
        print("%s %d - %s: every link resolves" % ("not ok" if bad else "ok", i, page))
        for b in bad:
            print("# " + b)
        failed += bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
