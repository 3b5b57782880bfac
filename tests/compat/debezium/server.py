# SPDX-License-Identifier: Apache-2.0
"""
The real Debezium Server 3.6.1.Final for compat.py (its Debezium Server flavour).

The distribution (io.debezium:debezium-server-dist:3.6.1.Final:tar.gz, about 780 MB) is resolved
by Maven like the Connect jars (pom.xml pins the dependency plugin), unpacked once into the cache
folder scripts/librdkafka uses ($OUTBOXD_CACHE, else /var/cache/outboxd as root, else
$XDG_CACHE_HOME or ~/.cache, then /outboxd) and reused by every later run. Each configuration
runs the distribution's own run.sh from a folder of its own: symbolic links to the distribution
plus config/application.properties, which is where Debezium Server (Quarkus) reads it from its
working directory. Debezium Server 3.6 needs Java 21+: the newest JDK under /usr/lib/jvm is used,
and without one Server() fails naming the fix (the suite never skips).

This module knows nothing of compat.py's globals: compat.py writes the properties and decides
when a process has done its work.
"""

import os
import re
import shutil
import signal
import subprocess
import tempfile

VERSION = "3.6.1.Final"
ARTIFACT = "io.debezium:debezium-server-dist:%s:tar.gz" % VERSION
MIN_JAVA = 21
HERE = os.path.dirname(os.path.abspath(__file__))

# Environment variables run.sh or SmallRye Config would act on (config overrides, JMX, metrics
# agents, extra connectors): a developer's shell must not change what the reference does.
_ENV_DROP_PREFIXES = ("QUARKUS_", "DEBEZIUM_", "SMALLRYE_", "MP_", "JMX_", "OTEL_", "ENABLE_")
_ENV_DROP = ("EXTRA_CONNECTOR", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS")


def find_jdk(minimum):
    """(java home, major version, `java -version` line) of the newest JDK under /usr/lib/jvm
    whose major version is at least minimum, or (None, None, why not)."""
    cands = []
    root = "/usr/lib/jvm"
    for d in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        home = os.path.join(root, d)
        rel, jb = os.path.join(home, "release"), os.path.join(home, "bin", "java")
        if not os.path.isfile(rel) or not os.access(jb, os.X_OK):
            continue
        with open(rel, errors="replace") as f:
            m = re.search(r'^JAVA_VERSION="(\d+)', f.read(), re.M)
        if m and int(m.group(1)) >= minimum:
            cands.append((int(m.group(1)), home))
    if not cands:
        return None, None, "no Java %d+ runtime under %s" % (minimum, root)
    major, home = max(cands)
    p = subprocess.run([os.path.join(home, "bin", "java"), "-version"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    text = p.stdout.decode(errors="replace").splitlines()
    return home, major, text[1].strip() if p.returncode == 0 and len(text) > 1 else "Java %d" % major


def cache_dir():
    """The cache folder of scripts/librdkafka (the same rule, so one place holds both)."""
    if os.environ.get("OUTBOXD_CACHE"):
        return os.environ["OUTBOXD_CACHE"]
    if os.geteuid() == 0:
        return "/var/cache/outboxd"
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "outboxd")


def _mvn_copy(dest):
    """Copies the distribution's tar.gz into dest with Maven: the local repository first
    (offline), then the remote repositories of Maven's own settings."""
    base = ["mvn", "-q", "-B", "-f", os.path.join(HERE, "pom.xml"), "dependency:copy",
            "-Dartifact=" + ARTIFACT, "-DoutputDirectory=" + dest, "-Dmdep.overWriteReleases=true"]
    p = subprocess.run(base[:1] + ["-o"] + base[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        p = subprocess.run(base, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        raise RuntimeError("Maven could not resolve %s (mvn dependency:copy):\n%s"
                           % (ARTIFACT, p.stdout.decode(errors="replace")[-3000:]))
    tars = [f for f in os.listdir(dest) if f.endswith(".tar.gz")]
    if len(tars) != 1:
        raise RuntimeError("mvn dependency:copy left %r in %s" % (tars, dest))
    return os.path.join(dest, tars[0])


def dist(log):
    """The unpacked distribution (the folder holding run.sh), unpacked on first use. It is
    unpacked into a temporary folder and renamed into place, so a run that is interrupted, or
    two runs at once, never leave a half-unpacked one behind."""
    cache = cache_dir()
    home = os.path.join(cache, "debezium-server-" + VERSION)
    if os.path.isfile(os.path.join(home, "run.sh")):
        return home
    os.makedirs(cache, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".debezium-server-", dir=cache)
    try:
        log("Debezium Server %s: resolving %s with Maven and unpacking it into %s" % (VERSION, ARTIFACT, home))
        tar = _mvn_copy(tmp)
        p = subprocess.run(["tar", "-xzf", tar, "-C", tmp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            raise RuntimeError("tar -xzf %s failed: %s" % (tar, p.stdout.decode(errors="replace")[-2000:]))
        os.unlink(tar)
        top = os.path.join(tmp, "debezium-server")
        if not os.path.isfile(os.path.join(top, "run.sh")):
            raise RuntimeError("%s has no debezium-server/run.sh" % ARTIFACT)
        try:
            os.rename(top, home)
        except OSError:
            if not os.path.isfile(os.path.join(home, "run.sh")):   # not another run's, then
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return home


class Server:
    """One Debezium Server process (it runs one connector) from run_dir, started by the
    distribution's run.sh with the application.properties written by write(path)."""

    def __init__(self, home, jdk, major, run_dir, write):
        os.makedirs(os.path.join(run_dir, "config"))
        for name in os.listdir(home):
            if name != "config":
                os.symlink(os.path.join(home, name), os.path.join(run_dir, name))
        # config/lib is on run.sh's classpath; config/application.properties is ours
        os.symlink(os.path.join(home, "config", "lib"), os.path.join(run_dir, "config", "lib"))
        self.props = os.path.join(run_dir, "config", "application.properties")
        write(self.props)
        self.log_path = os.path.join(run_dir, "server.log")
        # A small heap: the suite runs JVMs side by side on 2 cores. Java 24+ needs java.lang
        # opened for the libraries of the distribution that reach into it. Quarkus's HTTP server
        # (health checks) on a free port, not 8080: other processes may hold that one. The log
        # as text, not the distribution's JSON lines: compat.py prints its tail on a failure.
        opts = ("-Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true"
                " -Dquarkus.http.port=0 -Dquarkus.log.console.json=false")
        if major >= 24:
            opts += " --add-opens java.base/java.lang=ALL-UNNAMED"
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(_ENV_DROP_PREFIXES) and k not in _ENV_DROP}
        env.update(JAVA_HOME=jdk, JAVA_OPTS=opts)
        with open(self.log_path, "w") as out:
            # run.sh ends in exec java: the process is the JVM itself (kill() stops it)
            self.proc = subprocess.Popen(["bash", "run.sh"], cwd=run_dir, env=env, stdout=out,
                                         stderr=subprocess.STDOUT)

    def exited(self):
        return self.proc.poll() is not None

    def tail(self, n=40):
        with open(self.log_path, errors="replace") as f:
            return "\n".join(f.read().splitlines()[-n:])

    def stop(self, timeout=30):
        """SIGTERM (Quarkus stops the engine, which flushes its offsets), then SIGKILL after
        timeout seconds. Returns the exit status, or None when it had to be killed."""
        if self.proc.poll() is not None:
            return self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None
