#!/usr/bin/env python3
"""The tree's structure rules (STYLE.md 3.8 rules 1, 2 and 13; DESIGN.md "Layout").

  check.py SOURCE_ROOT CORE_LIBRARY

Fails, listing every finding, when
  1. a file in src/ has more than 800 lines;
  2. a function in src/ is longer than 80 lines: house style puts a function body's braces at
     column 0, so a '{' alone at column 0 up to the next '}' alone at column 0 is one body;
  3. two .c files of the core library call each other: from `nm` of the library's objects, a
     symbol defined in A is used by B while another one defined in B is used by A;
  4. a .c file under src/<layer>/ has no header of the same name under include/outboxd/<layer>/,
     except main.c, the pieces of a module whose private src/<layer>/<module>_int.h joins them
     (router_opts.c with router_int.h) and the files listed in SHARED_HEADER with the reason;
  5. a header under include/outboxd/ is missing from tests/unit/meson.build's header_names
     (so nothing proves it compiles on its own);
  6. a folder calls into, or includes a header of, a folder that FOLDERS does not let it call
     (calls go one way: down the list; kafka/ and obs/ are peers, and so are relay/, snapshot/
     and poll/: peers never call each other), or a src/ folder is not in FOLDERS, or a folder's
     main header lacks its "Folder <name>/:" paragraph (what it owns and what it may call);
  7. a file outside a broker client's folder includes that client's library header (librdkafka
     outside kafka/), or a file above the sink seam includes a client's own header (kafka/...)
     other than pipeline/sinks.c, which picks the sink: above the seam, code speaks to
     sink/sink.h only.
"""
import os
import re
import subprocess
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80

# .c files whose declarations live in another module's public header, and why.
SHARED_HEADER = {
    "src/config/vocab_data.c": "the generated key table, declared in config/vocab.h beside the "
                               "lookups of vocab.c (tests/compat/vocab/generate writes it)",
}


# The folders of src/ (and include/outboxd/), from the bottom: a folder may call the folders
# of lower rank only; those of equal rank are peers that never call each other. Each has a main
# header whose "Folder <name>/:" paragraph says what it owns and what it may call. obs/ is kafka/'s
# peer: the metrics render other folders' families through sections those folders register
# (librdkafka's statistics from pipeline/publish.c), so they know no Kafka type.
FOLDERS = {
    "util": (0, "util/log.h"),
    "pg": (1, "pg/pgconn.h"),
    "connect": (2, "connect/router.h"),
    "config": (3, "config/config.h"),
    "sink": (4, "sink/sink.h"),
    "kafka": (5, "kafka/producer.h"),
    "obs": (5, "obs/metrics.h"),
    "pipeline": (6, "pipeline/publish.h"),
    "relay": (7, "relay/relay.h"),
    "snapshot": (7, "snapshot/snapshot.h"),
    "poll": (7, "poll/poll.h"),
    "diag": (8, "diag/diagnose.h"),
}


def rel(root, path):
    return os.path.relpath(path, root)


def src_files(root, exts):
    out = []
    for base, _, files in os.walk(os.path.join(root, "src")):
        out += [os.path.join(base, f) for f in files if f.endswith(exts)]
    return sorted(out)


def read_lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().split("\n")


def long_files(root):
    found = []
    for path in src_files(root, (".c", ".h")):
        n = len(read_lines(path)) - 1  # the text ends with a newline
        if n > MAX_FILE_LINES:
            found.append(f"{rel(root, path)}: {n} lines (at most {MAX_FILE_LINES})")
    return found


def function_name(lines, brace):
    """The name of the function whose body opens at line index @brace: the identifier before
    the first '(' on the nearest line above that starts at column 0 with a name."""
    for i in range(brace - 1, max(brace - 10, -1), -1):
        m = re.match(r"([A-Za-z_]\w*)\s*\(", lines[i])
        if m:
            return m.group(1)
    return "?"


def long_functions(root):
    found = []
    for path in src_files(root, (".c", ".h")):
        lines = read_lines(path)
        start = None
        for i, line in enumerate(lines):
            if line.rstrip() == "{":
                start = i
            elif line.startswith("}") and start is not None:
                n = i - start + 1
                if n > MAX_FUNCTION_LINES:
                    found.append(f"{rel(root, path)}:{start + 1}: {function_name(lines, start)}() "
                                 f"is {n} lines (at most {MAX_FUNCTION_LINES})")
                start = None
    return found


def object_sources(root):
    """meson's object name (src/relay/relay.c -> src_run_relay.c.o) -> source path."""
    return {rel(root, p).replace("/", "_") + ".o": rel(root, p) for p in src_files(root, (".c",))}


def symbols(root, lib):
    """From `nm` of the library's objects: symbol -> the source defining it, and source -> the
    symbols it uses."""
    names = object_sources(root)
    out = subprocess.run(["nm", "-P", "-A", lib], check=True, capture_output=True,
                         text=True).stdout
    defined, used = {}, {}
    for line in out.splitlines():
        m = re.match(r"[^\[]*\[([^\]]+)\]: (\S+) (\S)", line)
        if not m:
            continue
        member, sym, kind = m.groups()
        src = names.get(os.path.basename(member), os.path.basename(member))
        if kind == "U":
            used.setdefault(src, set()).add(sym)
        elif kind.isupper():
            defined[sym] = src
    return defined, used


def mutual_calls(root, lib):
    defined, used = symbols(root, lib)
    calls = {}  # (user, definer) -> symbols
    for user, syms in used.items():
        for sym in syms:
            definer = defined.get(sym)
            if definer and definer != user:
                calls.setdefault((user, definer), set()).add(sym)
    found = []
    for (a, b), a_uses in sorted(calls.items()):
        if a < b and (b, a) in calls:
            b_uses = calls[(b, a)]
            found.append(f"{a} <-> {b}: {a} uses {', '.join(sorted(a_uses)[:4])}"
                         f"{' ...' if len(a_uses) > 4 else ''}; {b} uses "
                         f"{', '.join(sorted(b_uses)[:4])}{' ...' if len(b_uses) > 4 else ''}")
    return found


def folder_of(path):
    """The folder of src/<folder>/x.c or include/outboxd/<folder>/x.h, else None."""
    parts = path.split("/")
    if parts[0] == "src" and len(parts) == 3:
        return parts[1]
    if parts[:2] == ["include", "outboxd"] and len(parts) == 4:
        return parts[2]
    return None


def may_call(a, b):
    return a == b or FOLDERS[b][0] < FOLDERS[a][0]


def folder_rules(root, lib):
    found = []
    for name, (_, main) in sorted(FOLDERS.items()):
        path = os.path.join(root, "include", "outboxd", main)
        if not os.path.isfile(path):
            found.append(f"{name}/: its main header include/outboxd/{main} is missing")
        elif f"Folder {name}/:" not in open(path, encoding="utf-8").read():
            found.append(f"include/outboxd/{main}: no 'Folder {name}/:' paragraph (what the "
                         f"folder owns and what it may call)")
    for d in sorted(os.listdir(os.path.join(root, "src"))):
        if os.path.isdir(os.path.join(root, "src", d)) and d not in FOLDERS:
            found.append(f"src/{d}/: not in FOLDERS of {__file__} (give it its rank)")
    for base in ("src", os.path.join("include", "outboxd")):
        for dirpath, _, files in os.walk(os.path.join(root, base)):
            for f in sorted(files):
                r = rel(root, os.path.join(dirpath, f))
                a = folder_of(r)
                if a not in FOLDERS:
                    continue
                for line, b in re.findall(r'^(#include "outboxd/(\w+)/\w+\.h")', "\n".join(
                        read_lines(os.path.join(root, r))), re.M):
                    if b in FOLDERS and not may_call(a, b):
                        found.append(f"{r}: {line}: {a}/ may not call {b}/")
    defined, used = symbols(root, lib)
    for user, syms in sorted(used.items()):
        for sym in sorted(syms):
            definer = defined.get(sym)
            a, b = folder_of(user), folder_of(definer or "")
            if a in FOLDERS and b in FOLDERS and not may_call(a, b):
                found.append(f"{user} calls {sym} of {definer}: {a}/ may not call {b}/")
    return found


# A broker client's library header, the folder that may include it, and who else may and why.
CLIENT_LIBRARIES = {
    "librdkafka/": ("kafka", {"src/util/version.c": "`outboxd version` prints the library's version"}),
}
# Files above the seam that may include a broker client's own headers, and why.
SINK_CHOOSERS = {
    "src/pipeline/sinks.c": "the one place a sink is picked from the configuration",
}


def seam_rules(root):
    found = []
    for base in ("src", os.path.join("include", "outboxd")):
        for dirpath, _, files in os.walk(os.path.join(root, base)):
            for f in sorted(files):
                r = rel(root, os.path.join(dirpath, f))
                a = folder_of(r)
                text = "\n".join(read_lines(os.path.join(root, r)))
                for lib, (client, allowed) in CLIENT_LIBRARIES.items():
                    if (re.search(r'^#include <' + re.escape(lib), text, re.M) and a != client
                            and r not in allowed):
                        found.append(f"{r}: includes <{lib}...>: only {client}/ speaks to it "
                                     f"(go through sink/sink.h)")
                for line, b in re.findall(r'^(#include "outboxd/(\w+)/\w+\.h")', text, re.M):
                    clients = {c for c, _ in CLIENT_LIBRARIES.values()}
                    if (b in clients and a != b and a in FOLDERS and b in FOLDERS
                            and FOLDERS[a][0] > FOLDERS[b][0] and r not in SINK_CHOOSERS):
                        found.append(f"{r}: {line}: above the sink seam only sink/sink.h "
                                     f"(and pipeline/sinks.c to pick one)")
    return found


def missing_headers(root):
    found = []
    for path in src_files(root, (".c",)):
        r = rel(root, path)
        parts = r.split("/")
        name = parts[-1][:-2]
        if r == "src/main.c" or r in SHARED_HEADER:
            continue
        if len(parts) != 3:
            found.append(f"{r}: not in a layer folder src/<layer>/")
            continue
        layer = parts[1]
        if os.path.isfile(os.path.join(root, "include", "outboxd", layer, name + ".h")):
            continue
        private = [h for h in os.listdir(os.path.dirname(path))
                   if h.endswith("_int.h") and name.startswith(h[:-6] + "_")]
        if private:
            continue
        found.append(f"{r}: no include/outboxd/{layer}/{name}.h (nor a private "
                     f"src/{layer}/<module>_int.h, nor a SHARED_HEADER entry in {__file__})")
    for r in sorted(SHARED_HEADER):
        if not os.path.isfile(os.path.join(root, r)):
            found.append(f"{r}: listed in SHARED_HEADER but gone; remove the entry")
    return found


def untested_headers(root):
    text = open(os.path.join(root, "tests", "unit", "meson.build"), encoding="utf-8").read()
    m = re.search(r"header_names\s*=\s*\[(.*?)\]", text, re.S)
    listed = set(re.findall(r"'([^']+)'", m.group(1))) if m else set()
    found = []
    inc = os.path.join(root, "include", "outboxd")
    for base, _, files in os.walk(inc):
        for f in sorted(files):
            if f.endswith(".h"):
                name = os.path.relpath(os.path.join(base, f), inc)[:-2]
                if name not in listed:
                    found.append(f"include/outboxd/{name}.h: not in header_names of "
                                 f"tests/unit/meson.build (add '{name}')")
    for name in sorted(listed):
        if not os.path.isfile(os.path.join(inc, name + ".h")):
            found.append(f"tests/unit/meson.build: header_names lists '{name}', which does "
                         f"not exist")
    return sorted(found)


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root, lib = os.path.abspath(argv[0]), argv[1]
    rules = [
        (f"files in src/ over {MAX_FILE_LINES} lines", long_files(root)),
        (f"functions in src/ over {MAX_FUNCTION_LINES} lines", long_functions(root)),
        ("core .c files that call each other", mutual_calls(root, lib)),
        ("src/<layer>/*.c without include/outboxd/<layer>/*.h", missing_headers(root)),
        ("public headers the headers suite does not compile alone", untested_headers(root)),
        ("folder calls against FOLDERS (one way, peers apart, main headers)",
         folder_rules(root, lib)),
        ("broker clients used past the sink seam", seam_rules(root)),
    ]
    total = 0
    for title, found in rules:
        print(f"{title}: {len(found) or 'none'}")
        for f in found:
            print(f"  {f}")
        total += len(found)
    print(f"structure: {total} finding{'s' if total != 1 else ''}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
