#!/usr/bin/env python3
"""The Kubernetes manifests (TAP): deploy/kubernetes/outboxd.yaml (run: one replica, Recreate)
and outboxd-poll.yaml (poll: several replicas) parse, and each keeps what docs/installing.md
("Kubernetes") promises: the probes on /health/live and /health/ready at the port the
ConfigMap's outboxd.http.port opens, the image's uid 10001, a read-only root file system without
capabilities, the configuration and the secret mounted where the arguments and ${file:...} read
them, a grace period longer than the flush, resources, and a Service and a PodDisruptionBudget
that select the pods.
The image suite runs the run manifest's ConfigMap in the image itself."""
import os
import re
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from taplib import finish, tap  # noqa: E402

root = sys.argv[1]
FLUSH_S = 10  # outboxd.shutdown.flush.ms's default


def props(text):
    return dict(l.split("=", 1) for l in text.splitlines() if "=" in l and not l.startswith("#"))


def check(name, command, one_replica):
    docs = {d["kind"]: d for d in yaml.safe_load_all(open(os.path.join(root, name)))}
    tap(set(docs) == {"ConfigMap", "Deployment", "Service", "PodDisruptionBudget"},
        f"{name}: a ConfigMap, a Deployment, a Service and a PodDisruptionBudget", str(set(docs)))
    dep, cm = docs["Deployment"], docs["ConfigMap"]
    spec, pod = dep["spec"], dep["spec"]["template"]["spec"]
    c = pod["containers"][0]
    worker = props(cm["data"]["connect-worker.properties"])
    conn = props(cm["data"]["connector.properties"])
    if one_replica:
        tap(spec["replicas"] == 1 and spec["strategy"]["type"] == "Recreate",
            f"{name}: one replica, strategy Recreate (a second pod would fight for the slot)",
            str(spec.get("strategy")))
    else:
        tap(spec["replicas"] > 1, f"{name}: {spec['replicas']} replicas share the partitions")
    tap(c["args"][0] == command, f"{name}: the container runs `outboxd {command}`", str(c["args"]))
    port = int(worker.get("outboxd.http.port", "8080"))
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    live, ready = c["livenessProbe"]["httpGet"], c["readinessProbe"]["httpGet"]
    tap(live["path"] == "/health/live" and ready["path"] == "/health/ready" and
        ports.get(live["port"]) == port == ports.get(ready["port"]),
        f"{name}: liveness on /health/live, readiness on /health/ready, port {port}",
        f"{live} {ready} {ports}")
    bind = worker.get("outboxd.http.bind", conn.get("outboxd.http.bind"))
    tap(bind == "::", f"{name}: outboxd.http.bind set explicitly to :: (the probes and "
        "Prometheus reach the pod in IPv4, IPv6 and dual-stack clusters)", str(bind))
    psc, csc = pod["securityContext"], c["securityContext"]
    tap(psc.get("runAsNonRoot") and psc.get("runAsUser") == 10001 and
        csc.get("readOnlyRootFilesystem") and csc.get("allowPrivilegeEscalation") is False and
        csc.get("capabilities", {}).get("drop") == ["ALL"],
        f"{name}: uid 10001, read-only root file system, no capabilities", f"{psc} {csc}")
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    vols = {v["name"]: v for v in pod["volumes"]}
    files = c["args"][1:]
    tap(all(os.path.dirname(f) == mounts[n] for n, v in vols.items() if "configMap" in v
            for f in files) and all(os.path.basename(f) in cm["data"] for f in files),
        f"{name}: the arguments name the ConfigMap's files where it is mounted", str(files))
    m = re.match(r"\$\{file:(.*):password\}", conn.get("database.password", ""))
    secret = next((v for v in vols.values() if "secret" in v), None)
    tap(m and secret and os.path.dirname(m.group(1)) == mounts[secret["name"]] and
        secret["secret"].get("defaultMode") == 0o400 and worker.get("config.providers") == "file",
        f"{name}: database.password comes from the secret's file (mode 0400) via ${{file:...}}",
        f"{conn.get('database.password')} {secret}")
    tap(pod["terminationGracePeriodSeconds"] > FLUSH_S,
        f"{name}: the grace period ({pod['terminationGracePeriodSeconds']} s) is longer than the "
        f"flush ({FLUSH_S} s)")
    res = c.get("resources", {})
    tap(res.get("requests", {}).get("memory") and res.get("limits", {}).get("memory"),
        f"{name}: memory requests and limits", str(res))
    labels = dep["spec"]["template"]["metadata"]["labels"]
    svc, pdb = docs["Service"], docs["PodDisruptionBudget"]
    tap(svc["spec"]["selector"].items() <= labels.items() and
        pdb["spec"]["selector"]["matchLabels"].items() <= labels.items() and
        svc["spec"]["ports"][0]["targetPort"] in ports,
        f"{name}: the Service and the PodDisruptionBudget select the pods", f"{svc} {pdb}")


check("outboxd.yaml", "run", True)
check("outboxd-poll.yaml", "poll", False)
sys.exit(finish())
