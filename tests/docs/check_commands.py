#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every shell block of the documents is a command a user can run (TAP).

  check_commands.py SOURCE_ROOT OUTBOXD_BINARY [--all-refused]

(--all-refused: the check of the check, on tests/docs/fixtures/commands: passes only when every
block is refused.)

A block fenced as ```sh in README.md, CONTRIBUTING.md, bench/README.md or docs/*.md is meant to
be run as written (an example that is not uses another fence: ```text, ```console). For each:
  - bash parses it (bash -n);
  - each command's program is known: a file of the repository (scripts/..., executable), the
    outboxd binary (its command and options as `outboxd --help` lists them), or a tool from the
    list below;
  - a script's subcommand and options appear in the script (its usage and its case labels);
  - `meson test --suite S` names a suite some meson.build defines;
  - every repository path a command names exists (build/ is made by the build: not checked).
The demo's own instructions are run whole by the integration suite (tests/integration/
check_demo.py)."""

import os
import re
import shlex
import subprocess
import sys

PAGES = ["README.md", "CONTRIBUTING.md", "bench/README.md"]
# Programs the documents may ask for that the repository does not hold.
TOOLS = {"meson", "ninja", "kubectl", "systemctl", "install", "cp", "podman", "docker", "eval",
         "psql", "kcat", "curl", "cd", "git", "export", "sudo", "apt-get", "mkdir", "chmod",
         "chown", "python3", "openssl", "keytool", "man", "cat", "echo", "kill", "sleep"}
# Top-level folders whose paths in a command must exist.
TREE = ("sql/", "deploy/", "docker/", "scripts/", "tests/", "bench/", "docs/", "src/",
        "include/", "examples/")
SEPARATORS = {"&&", "||", ";", "|", "&", "(", ")", "<<<", "<", ">", ">>", "2>", "2>&1"}

results = []


def tap(ok, what, detail=""):
    results.append((ok, what, detail))


def blocks(root):
    """(page, line, text) of every ```sh block."""
    pages = PAGES + sorted("docs/" + f for f in os.listdir(os.path.join(root, "docs"))
                           if f.endswith(".md"))
    for page in pages:
        path = os.path.join(root, page)
        if not os.path.exists(path):
            continue
        lines = open(path, encoding="utf-8").read().splitlines()
        i = 0
        while i < len(lines):
            if lines[i].strip() == "```sh":
                start = i + 1
                j = start
                while j < len(lines) and not lines[j].startswith("```"):
                    j += 1
                yield page, start, "\n".join(lines[start:j]) + "\n"
                i = j
            i += 1


def commands(text):
    """Each simple command of @text as a list of words (continuations joined, comments and
    here-document bodies dropped, split at the shell's separators)."""
    text = re.sub(r"\\\n", " ", text)
    out = []
    for line in text.splitlines():
        lex = shlex.shlex(line, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        lex.commenters = "#"
        try:
            words = list(lex)
        except ValueError:
            words = line.split()
        cmd = []
        for w in words + [";"]:
            if w in SEPARATORS or set(w) <= set("&|;()<>"):
                if cmd:
                    out.append(cmd)
                cmd = []
            else:
                cmd.append(w)
    return out


def meson_suites(root):
    names = set()
    for d, _, files in os.walk(root):
        if "/build" in d[len(root):] or "/subprojects" in d[len(root):]:
            continue
        if "meson.build" in files:
            text = open(os.path.join(d, "meson.build"), encoding="utf-8").read()
            for m in re.finditer(r"suite\s*:\s*\[([^\]]*)\]", text):
                names.update(re.findall(r"'([^']+)'", m.group(1)))
    return names


def mentions(text, word):
    """@word stands in @text as a whole word (--poll does not count for --pol)."""
    return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(word), text) is not None


def check_outboxd(words, help_text):
    """outboxd COMMAND [sub] [--options]: the command and options are in --help."""
    problems = []
    listed = re.findall(r"^  (\w[\w ]*?)(?: FILE\.\.\.|  )", help_text, re.M)
    args = [w for w in words[1:] if not w.startswith("-")]
    if args:
        pair = " ".join(args[:2])
        if args[0] not in {c.split()[0] for c in listed} and pair not in listed:
            problems.append("outboxd has no command \"%s\" (outboxd --help)" % args[0])
    for w in words[1:]:
        if w.startswith("--") and not mentions(help_text, w.split("=")[0]):
            problems.append("outboxd --help lists no option %s" % w)
    return problems


def check_script(root, words):
    problems = []
    path = os.path.join(root, words[0])
    if not os.path.isfile(path):
        return ["%s is not a file of the repository" % words[0]]
    if not os.access(path, os.X_OK):
        problems.append("%s is not executable" % words[0])
    text = open(path, encoding="utf-8", errors="replace").read()
    args = [w for w in words[1:] if not w.startswith("$")]
    sub = next((w for w in args if not w.startswith("-")), None)
    if sub and not mentions(text, sub):
        problems.append("%s knows no subcommand \"%s\"" % (words[0], sub))
    for w in args:
        if w.startswith("-") and not mentions(text, w.split("=")[0]):
            problems.append("%s has no option %s" % (words[0], w))
        if sub and w == sub:
            break  # the subcommand's own arguments belong to the program it runs
    return problems


def check_command(root, words, help_text, suites):
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words = words[1:]  # VAR=value before the program
    if not words:
        return []
    prog, problems = words[0], []
    if prog in ("outboxd", "build/outboxd", "/usr/local/bin/outboxd"):
        problems += check_outboxd(words, help_text)
    elif prog.startswith(("scripts/", "tests/", "bench/")):
        problems += check_script(root, words)
    elif prog.startswith("build"):
        pass  # made by the build
    elif prog not in TOOLS:
        problems.append("unknown program \"%s\" (a typo? else add it to TOOLS)" % prog)
    if prog == "meson" and "--suite" in words:
        s = words[words.index("--suite") + 1] if words.index("--suite") + 1 < len(words) else ""
        if s not in suites:
            problems.append("no meson suite \"%s\"" % s)
    for w in words[1:]:
        for part in w.split("="):
            if part.startswith(TREE) and "$" not in part and "*" not in part:
                p = part.split(":")[0]
                if not os.path.exists(os.path.join(root, p)):
                    problems.append("%s does not exist" % p)
    return problems


def main():
    root, binary = sys.argv[1], sys.argv[2]
    refused = "--all-refused" in sys.argv[3:]
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    suites = meson_suites(root)
    n = 0
    for page, line, text in blocks(root):
        n += 1
        where = "%s:%d" % (page, line)
        r = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
        problems = [r.stderr.strip()] if r.returncode else []
        for words in commands(text):
            problems += check_command(root, words, help_text, suites)
        if refused:
            tap(bool(problems), "%s: refused" % where, "\n".join(problems) or "not refused")
        else:
            tap(not problems, "%s: the shell block runs as written" % where, "\n".join(problems))
    tap(n > 0, "the documents hold shell blocks (%d)" % n)
    print("1..%d" % len(results))
    for i, (ok, what, detail) in enumerate(results, 1):
        print("%sok %d - %s" % ("" if ok else "not ", i, what))
        if detail and (not ok or refused):
            for ln in detail.splitlines():
                print("# " + ln)
    sys.exit(0 if all(ok for ok, _, _ in results) else 1)


if __name__ == "__main__":
    main()
