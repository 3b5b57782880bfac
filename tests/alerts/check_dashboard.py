#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""
The shipped Grafana dashboard (deploy/grafana/outboxd-dashboard.json) is valid JSON, every
panel reads the dashboard's Prometheus data source, and every expression is PromQL that
Prometheus accepts: they become recording rules in a temporary file that `promtool check
rules` parses (Grafana's $__rate_interval and $instance replaced as Grafana would). The fault
suite's prometheus_alerts_broker_frozen scenario evaluates the same expressions against a real
Prometheus scraping outboxd.

  check_dashboard.py DASHBOARD PROMTOOL
"""
import json
import os
import subprocess
import sys
import tempfile


def expressions(path):
    """[(panel title, expr with Grafana's variables replaced)] of the dashboard at @path."""
    with open(path) as f:
        d = json.load(f)
    out = []
    for p in d["panels"]:
        assert p["datasource"]["uid"] == "${datasource}", f"panel {p['title']}: data source"
        assert p["targets"], f"panel {p['title']}: no query"
        for t in p["targets"]:
            e = t["expr"].replace("$__rate_interval", "1m").replace("$instance", ".*")
            out.append((p["title"], e))
    return out


def main():
    dash, promtool = sys.argv[1], sys.argv[2]
    exprs = expressions(dash)
    with tempfile.TemporaryDirectory() as tmp:
        rules = os.path.join(tmp, "dashboard.rules.json")  # JSON is YAML
        with open(rules, "w") as f:
            json.dump({"groups": [{"name": "dashboard", "rules": [
                {"record": f"dashboard:panel{i}", "expr": e} for i, (_, e) in enumerate(exprs)]}]},
                f)
        r = subprocess.run([promtool, "check", "rules", rules], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        print(f"FAIL: the dashboard's expressions do not all parse ({dash})")
        return 1
    print(f"ok: {len(exprs)} expressions of {dash} parse")
    return 0


if __name__ == "__main__":
    sys.exit(main())
