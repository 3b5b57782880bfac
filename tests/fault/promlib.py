# SPDX-License-Identifier: Apache-2.0
"""
A real Prometheus (Debian's prometheus package) for the fault suite: started on a free port,
scraping outboxd processes every second as job "outboxd", evaluating the shipped alert rules
every second, and asked through its HTTP API. Standard library only.

The rules are loaded with every `for:` set to 0s: the durations are promtool's to test
(deploy/prometheus/outboxd-alerts.test.yml); here the expressions meet real series.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

SOURCE = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
RULES = os.path.join(SOURCE, "deploy", "prometheus", "outboxd-alerts.yml")
DASHBOARD = os.path.join(SOURCE, "deploy", "grafana", "outboxd-dashboard.json")

sys.path.insert(0, os.path.join(SOURCE, "tests"))
from freeport import free_port  # noqa: E402


class PromFail(Exception):
    pass


def dashboard_expressions():
    """[(panel title, expr)] of the shipped dashboard, Grafana's variables replaced, and the
    instance variable's own query."""
    with open(DASHBOARD) as f:
        d = json.load(f)
    out = [(p["title"], t["expr"].replace("$__rate_interval", "1m").replace("$instance", ".*"))
           for p in d["panels"] for t in p["targets"]]
    for v in d["templating"]["list"]:
        if v["type"] == "query":
            m = re.match(r"label_values\((\w+), *\w+\)", v["query"]["query"])
            out.append((f"variable {v['name']}", m.group(1)))
    return out


def series_names(expr):
    """The metric names an expression reads (outboxd's, process_* and up)."""
    names = set(re.findall(r"\b((?:outboxd|process)_[a-z0-9_]+|up)\b(?!\s*\()", expr))
    return names


class Prometheus:
    def __init__(self, workdir, ports):
        if not shutil.which("prometheus"):
            raise PromFail("prometheus not found (scripts/install-deps installs Debian's)")
        self.dir = os.path.join(workdir, "prometheus")
        os.makedirs(self.dir, exist_ok=True)
        with open(RULES) as f:
            rules = re.sub(r"(?m)^(\s+)for: \S+$", r"\1for: 0s", f.read())
        with open(os.path.join(self.dir, "rules.yml"), "w") as f:
            f.write(rules)
        targets = ", ".join(f"'127.0.0.1:{p}'" for p in ports)
        with open(os.path.join(self.dir, "prometheus.yml"), "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [rules.yml]
scrape_configs:
  - job_name: outboxd
    static_configs:
      - targets: [{targets}]
""")
        self.port = free_port()
        self.log = open(os.path.join(self.dir, "prometheus.log"), "wb")
        self.proc = subprocess.Popen(
            ["prometheus", f"--config.file={self.dir}/prometheus.yml",
             f"--storage.tsdb.path={self.dir}/data", f"--web.listen-address=127.0.0.1:{self.port}",
             "--log.level=warn"],
            cwd=self.dir, stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise PromFail(f"prometheus exited with {self.proc.returncode}: {self.log_text()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.2)
        raise PromFail("prometheus was not ready within 30 s: " + self.log_text())

    def log_text(self):
        with open(os.path.join(self.dir, "prometheus.log"), errors="replace") as f:
            return f.read()[-2000:]

    def api(self, path, **params):
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                doc = json.loads(r.read())
        except urllib.error.HTTPError as e:
            doc = json.loads(e.read() or b"{}")
        if doc.get("status") != "success":
            raise PromFail(f"{path} {params}: {doc.get('error', doc)}")
        return doc["data"]

    def query(self, expr):
        """The instant vector (or scalar) @expr evaluates to now: a list of results."""
        d = self.api("query", query=expr)
        return d["result"] if d["resultType"] in ("vector", "matrix") else [d["result"]]

    def rules(self):
        """[(name, type, query)] of every loaded rule."""
        return [(r["name"], r["type"], r["query"]) for g in self.api("rules")["groups"]
                for r in g["rules"]]

    def firing(self):
        """[(alertname, instance)] of the alerts firing now."""
        return sorted((a["labels"]["alertname"], a["labels"].get("instance", ""))
                      for a in self.api("alerts")["alerts"] if a["state"] == "firing")

    def wait(self, what, fn, timeout):
        """Waits up to @timeout s for @fn() to be true; False when it never was."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if fn():
                return True
            time.sleep(0.5)
        return False

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
