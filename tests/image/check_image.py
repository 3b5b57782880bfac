#!/usr/bin/env python3
"""The container image, run as users run it (TAP).

scripts/image build made the image (scripts/test does it before this suite). The container runs
as uid 10001 with a read-only root file system, every capability dropped, no-new-privileges and
the host's network (to reach the test stack on loopback); its configuration and the database
password are mounted read-only, the password read through ${file:...}. It relays rows end to
end, answers /health/live, /health/ready and /metrics, and exits 0 on SIGTERM within the flush
bound; its log holds no password. A second container relays over the broker's SASL_SSL listener
with SCRAM-SHA-512 and the settings a Debezium user has (security.protocol, sasl.mechanism,
sasl.jaas.config with the SCRAM login module, a PEM trust store), the SCRAM password read
through ${file:...} (the image's librdkafka, the pinned one, can: Debian 12's 2.0.2 cannot log
in to Kafka 4, see tests/integration/check_security.py); a wrong SCRAM password is exit 2 naming
the broker and the mechanism, and neither log holds a secret. A third relays over the broker's
OAUTHBEARER listener with tokens from an OIDC token endpoint the test serves (client
credentials grant, RS256 tokens the broker checks against its JWKS), configured as the Java
client is (OAuthBearerLoginCallbackHandler, sasl.oauthbearer.token.endpoint.url, clientId and
clientSecret in OAuthBearerLoginModule's options); a wrong client secret is exit 2. Its
configuration is the ConfigMap of
deploy/kubernetes/outboxd.yaml (the stack's addresses put in), mounted where that Deployment
mounts it, so the manifest's files are proven here too.

The image's librdkafka is scripts/librdkafka's pinned one, linked statically: `outboxd version`
in the image names scripts/librdkafka's version, as the host build (OUTBOXD_BIN, a
-Drdkafka=pinned build) does, and its dpkg record (var/lib/dpkg/status.d/librdkafka, for image
scanners) names Debian's source package and version it is built from.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from oidclib import TokenEndpoint  # noqa: E402
from taplib import BIN, SOURCE, env, finish, free_port, note, tap, wait_for  # noqa: E402

IMAGE = os.environ.get("OUTBOXD_IMAGE", "localhost/outboxd:dev")
PG_PORT = env("OUTBOXD_TEST_PG_PORT")
PASSWORD = env("OUTBOXD_TEST_PG_SUPERUSER_PASSWORD")
BOOT = env("OUTBOXD_TEST_KAFKA_BOOTSTRAP")
SASL_BOOT = env("OUTBOXD_TEST_KAFKA_SASL_SSL_BOOTSTRAP")
KAFKA_CA = env("OUTBOXD_TEST_KAFKA_CA")
SCRAM_USER = env("OUTBOXD_TEST_KAFKA_SCRAM_USER")
SCRAM_PASSWORD = env("OUTBOXD_TEST_KAFKA_SCRAM_PASSWORD")
OAUTH_BOOT = env("OUTBOXD_TEST_KAFKA_OAUTH_BOOTSTRAP")
OAUTH_KEY = env("OUTBOXD_TEST_KAFKA_OAUTH_KEY")
OIDC_SECRET = "outboxd-oidc-secret"
IMAGE_SH = os.path.join(SOURCE, "scripts", "image")
PIN_SH = os.path.join(SOURCE, "scripts", "librdkafka")
MANIFEST = os.path.join(SOURCE, "deploy", "kubernetes", "outboxd.yaml")
UID = 10001
FLUSH_MS = 5000


def podman(*args, check=False, timeout=120):
    return subprocess.run([IMAGE_SH, "podman"] + list(args), capture_output=True, text=True,
                          timeout=timeout, check=check)


def librdkafka_of(version_output):
    """The librdkafka version that `outboxd version` output names, or None."""
    for line in version_output.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "librdkafka":
            return words[1]
    return None


def pinned(what):
    """scripts/librdkafka's @what: version (upstream) or debian-version."""
    return subprocess.run([PIN_SH, what], capture_output=True, text=True, timeout=30,
                          check=True).stdout.strip()


def status_record(name):
    """The image's dpkg record var/lib/dpkg/status.d/@name as a dict of its fields (continuation
    lines joined to the field), None when it has none; and the image's file list."""
    ctr = podman("create", IMAGE, "version", check=True).stdout.strip()
    try:
        listing = subprocess.run(f"'{IMAGE_SH}' podman export {ctr} | tar -tf -", shell=True,
                                 capture_output=True, text=True, timeout=120).stdout.split()
        r = subprocess.run(f"'{IMAGE_SH}' podman export {ctr} | tar -xOf - "
                           f"var/lib/dpkg/status.d/{name}", shell=True, capture_output=True,
                           text=True, timeout=120)
    finally:
        podman("rm", ctr)
    if r.returncode != 0:
        return None, listing
    fields, key = {}, None
    for line in r.stdout.splitlines():
        if line[:1] in (" ", "\t") and key:
            fields[key] += "\n" + line.strip()
        elif ":" in line:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields, listing


def psql(sql):
    r = subprocess.run(["psql", f"host=127.0.0.1 port={PG_PORT} user=postgres dbname=outboxd",
                        "-X", "-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True,
                       text=True, env=dict(os.environ, PGPASSWORD=PASSWORD), timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"psql: {r.stderr.strip()}\n  SQL: {sql[:200]}")
    return r.stdout.strip()


def http_get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return None, str(e)


def read_topic(topic):
    r = subprocess.run(["kcat", "-C", "-b", BOOT, "-t", topic, "-o", "beginning", "-e", "-q",
                        "-f", "%k\t%s\\n"], capture_output=True, text=True, timeout=60)
    return [l.split("\t", 1) for l in r.stdout.splitlines() if "\t" in l]


def substitute(text, subs):
    """@text with each (old, new) of @subs replaced; each old must be there."""
    for old, new in subs:
        if old not in text:
            raise RuntimeError(f"the manifest lacks {old!r}")
        text = text.replace(old, new)
    return text


def kafka_settings(scram=None, oidc=None):
    """The worker's Kafka lines: plaintext; SCRAM over SASL_SSL (@scram: the password); or
    OAUTHBEARER over SASL_SSL (@oidc: (token endpoint URL, client secret)), as a Debezium user
    writes them, the CA beside the secret."""
    # a refused login is exit 2 at once, as the wrong-credential cases wait for (the grace of
    # outboxd.kafka.auth.grace.ms is the integration suite's security test's)
    tls = ("producer.ssl.truststore.type=PEM\n"
           "producer.ssl.truststore.location=/run/secrets/outboxd/kafka-ca.crt\n"
           "outboxd.kafka.auth.grace.ms=0")
    if scram is not None:
        return (f"bootstrap.servers={SASL_BOOT}\nproducer.security.protocol=SASL_SSL\n"
                "producer.sasl.mechanism=SCRAM-SHA-512\n"
                "producer.sasl.jaas.config=org.apache.kafka.common.security.scram."
                f"ScramLoginModule required username=\"{SCRAM_USER}\" password=\"{scram}\";\n"
                + tls)
    if oidc is not None:
        return (f"bootstrap.servers={OAUTH_BOOT}\nproducer.security.protocol=SASL_SSL\n"
                "producer.sasl.mechanism=OAUTHBEARER\n"
                "producer.sasl.login.callback.handler.class=org.apache.kafka.common.security."
                "oauthbearer.OAuthBearerLoginCallbackHandler\n"
                f"producer.sasl.oauthbearer.token.endpoint.url={oidc[0]}\n"
                "producer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer."
                "OAuthBearerLoginModule required clientId=\"outboxd\" "
                f"clientSecret=\"{oidc[1]}\" scope=\"kafka\";\n" + tls)
    return f"bootstrap.servers={BOOT}"


def write_files(d, tag, http_port, scram=None, oidc=None):
    """The ConfigMap of deploy/kubernetes/outboxd.yaml, mounted where the Deployment mounts it,
    with the addresses, names and role of the test stack put in; the secret's key file where the
    Deployment's secret volume puts it."""
    docs = list(yaml.safe_load_all(open(MANIFEST)))
    cm = next(x for x in docs if x["kind"] == "ConfigMap")["data"]
    conf = os.path.join(d, "config")
    os.mkdir(conf)
    kafka = kafka_settings(scram, oidc)
    worker = substitute(cm["connect-worker.properties"], [
        ("bootstrap.servers=my-cluster-kafka-bootstrap:9092", kafka),
        ("outboxd.http.port=8080", f"outboxd.http.port={http_port}\n"
         f"outboxd.shutdown.flush.ms={FLUSH_MS}")])
    conn = substitute(cm["connector.properties"], [
        ("database.hostname=postgres", "database.hostname=127.0.0.1"),
        ("database.port=5432", f"database.port={PG_PORT}"),
        ("database.user=outboxd", "database.user=postgres"),
        ("database.dbname=app", "database.dbname=outboxd"),
        ("slot.name=debezium", f"slot.name={tag}_slot"),
        ("publication.name=dbz_publication", f"publication.name={tag}_pub"),
        ("table.include.list=public.outbox", f"table.include.list={tag}.outbox\n"
         f"transforms.outbox.route.topic.replacement={tag}_events")])
    with open(os.path.join(conf, "connect-worker.properties"), "w") as f:
        f.write(worker)
    with open(os.path.join(conf, "connector.properties"), "w") as f:
        f.write(conn)
    secrets_dir = os.path.join(d, "secrets")
    os.mkdir(secrets_dir)
    secret = os.path.join(secrets_dir, "outboxd-pg")
    with open(secret, "w") as f:
        f.write(f"password={PASSWORD}\nscram={SCRAM_PASSWORD}\n")
    with open(os.path.join(secrets_dir, "kafka-ca.crt"), "w") as f:
        f.write(open(KAFKA_CA).read())
    # the container's user owns its secret, readable by nobody else (as the Deployment's
    # defaultMode 0400 with fsGroup, or systemd's LoadCredential, give it)
    os.chown(secret, UID, UID)
    os.chmod(secret, 0o400)
    for x in (d, conf, secrets_dir):
        os.chmod(x, 0o755)
    for name in os.listdir(conf):
        os.chmod(os.path.join(conf, name), 0o444)
    return conf, secrets_dir


def unwrap(v):
    """A JsonConverter value ({"schema": ..., "payload": ...}) as its payload, JSON text parsed."""
    try:
        v = json.loads(v)
    except ValueError:
        return v
    if isinstance(v, dict) and set(v) == {"schema", "payload"}:
        v = v["payload"]
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            pass
    return json.dumps(v, sort_keys=True)


def run_container(d, tag, name, scram, http_port, oidc=None):
    os.makedirs(os.path.join(d, name))
    conf, secrets_dir = write_files(os.path.join(d, name), tag, http_port, scram, oidc)
    return podman("run", "-d", "--name", name, "--user", f"{UID}:{UID}", "--read-only",
                  "--cap-drop", "all", "--security-opt", "no-new-privileges", "--network",
                  "host", "--ulimit", "nofile=20000:20000", "--ulimit", "nproc=32768:32768",
                  "-v", f"{conf}:/etc/outboxd:ro", "-v", f"{secrets_dir}:/run/secrets/outboxd:ro",
                  IMAGE)


def relay_through(tag, name, prefix, n=20):
    """The started container @name relays @n new rows (aggregates @prefix-0..2) once it streams,
    then gets SIGTERM. Returns (streamed, all arrived, exit code, its log)."""
    def log():
        r = podman("logs", name)
        return r.stdout + r.stderr
    streaming = wait_for(lambda: "streaming slot" in log(), 60)
    psql(f"INSERT INTO {tag}.outbox VALUES " + ", ".join(
        f"('{uuid.uuid4()}', 'T', '{prefix}-{i % 3}', 'E', '{{\"n\": {i}}}')" for i in range(n)))
    got = wait_for(lambda: sum(1 for k, _ in read_topic(f"{tag}_events") if f"{prefix}-" in k)
                   >= n, 60)
    podman("kill", "--signal", "TERM", name)
    code = podman("wait", name, timeout=60).stdout.strip()
    return streaming, got, code, log()


def scram_relay(d, tag, base, rdkafka):
    """The image's librdkafka over SASL_SSL with SCRAM-SHA-512: a wrong password is exit 2,
    the right one (through ${file:...}) relays."""
    bad, good = f"{base}-scram-bad", f"{base}-scram"
    try:
        r = run_container(d, tag, bad, "not-the-scram-secret", free_port())
        r = podman("wait", bad, timeout=90)
        out = podman("logs", bad).stdout + podman("logs", bad).stderr
        tap(r.stdout.strip() == "2" and "SCRAM-SHA-512" in out and SASL_BOOT in out and
            "not-the-scram-secret" not in out,
            f"a wrong SCRAM password: exit {r.stdout.strip()} naming the broker and the "
            "mechanism, not the password", out)
        r = run_container(d, tag, good, "${file:/run/secrets/outboxd/outboxd-pg:scram}",
                          free_port())
        streaming, got, code, out = relay_through(tag, good, "scram")
        tap(streaming and got and code == "0",
            f"SASL_SSL with SCRAM-SHA-512 (librdkafka {rdkafka}): 20 rows relayed, "
            f"exit {code} on SIGTERM", out)
        tap(SCRAM_PASSWORD not in out and PASSWORD not in out and
            SCRAM_PASSWORD not in podman("inspect", good).stdout,
            "the SCRAM container's log and inspect output hold no secret")
    finally:
        podman("rm", "-f", bad)
        podman("rm", "-f", good)


def oidc_relay(d, tag, base, rdkafka):
    """The image's librdkafka over OAUTHBEARER with OIDC: a wrong client secret is exit 2, the
    right one relays, each token signed by the test's endpoint and checked by the broker."""
    bad, good = f"{base}-oidc-bad", f"{base}-oidc"
    ep = TokenEndpoint(OAUTH_KEY, "outboxd", OIDC_SECRET)
    try:
        run_container(d, tag, bad, None, free_port(), (ep.url, "not-the-oidc-secret"))
        r = podman("wait", bad, timeout=90)
        out = podman("logs", bad).stdout + podman("logs", bad).stderr
        tap(r.stdout.strip() == "2" and ep.refused > 0 and "not-the-oidc-secret" not in out
            and "the token endpoint refused the client" in out,
            f"a wrong OIDC client secret: exit {r.stdout.strip()} ({ep.refused} token "
            "requests refused) with the fix, the secret not in the log", out)
        # an identity provider that cannot be reached is an outage, not a configuration error
        down = f"{base}-oidc-down"
        run_container(d, tag, down, None, free_port(),
                      (f"http://127.0.0.1:{free_port()}/token", OIDC_SECRET))
        failed = wait_for(lambda: "Failed to acquire SASL OAUTHBEARER token" in
                          podman("logs", down).stderr, 60)
        time.sleep(2)
        state = podman("inspect", "--format", "{{.State.Status}}", down).stdout.strip()
        out = podman("logs", down).stderr
        podman("rm", "-f", down)
        tap(failed and state == "running",
            f"an unreachable token endpoint: the container keeps retrying ({state})", out)
        run_container(d, tag, good, None, free_port(), (ep.url, OIDC_SECRET))
        streaming, got, code, out = relay_through(tag, good, "oidc")
        tap(streaming and got and code == "0" and ep.issued > 0,
            f"OAUTHBEARER with OIDC (librdkafka {rdkafka}, {ep.issued} token(s) issued): "
            f"20 rows relayed, exit {code} on SIGTERM", out)
        tap(OIDC_SECRET not in out and OIDC_SECRET not in podman("inspect", good).stdout,
            "the OIDC container's log and inspect output hold no secret")
    finally:
        ep.close()
        podman("rm", "-f", bad)
        podman("rm", "-f", good)


def main():
    r = podman("image", "exists", IMAGE)
    if r.returncode != 0:
        print(f"Bail out! the image {IMAGE} is missing: run scripts/image build")
        return 1
    tag = f"img_{uuid.uuid4().hex[:8]}"
    d = tempfile.mkdtemp(prefix="outboxd-image-", dir="/tmp")
    http_port = free_port()
    name = f"outboxd-test-{tag}"
    psql(f"CREATE SCHEMA {tag}; CREATE TABLE {tag}.outbox (id uuid PRIMARY KEY, "
         "aggregatetype varchar(255) NOT NULL, aggregateid varchar(255) NOT NULL, type "
         "varchar(255) NOT NULL, payload jsonb); "
         f"CREATE PUBLICATION {tag}_pub FOR TABLE {tag}.outbox WITH (publish = 'insert')")
    psql(f"SELECT pg_create_logical_replication_slot('{tag}_slot', 'pgoutput')")
    conf, secrets_dir = write_files(d, tag, http_port)
    try:
        r = podman("image", "inspect", "--format", "{{.Config.User}} {{.Size}}", IMAGE)
        user, size = (r.stdout.split() + ["", ""])[:2]
        tap(user == f"{UID}:{UID}", f"the image runs as {UID}:{UID} by default", r.stdout)
        note(f"image {IMAGE}: {int(size or 0)} bytes")
        tap(0 < int(size or 0) < 100 * 1000 * 1000, "the runtime image is under 100 MB",
            r.stdout)

        r = podman("run", "--rm", "--network", "none", "--ulimit", "nofile=20000:20000",
                   "--ulimit", "nproc=32768:32768", IMAGE, "version")
        rdkafka = librdkafka_of(r.stdout) if r.returncode == 0 else None
        pin, pin_debian = pinned("version"), pinned("debian-version")
        tap(rdkafka == pin and "libpq 17" in r.stdout,
            f"outboxd version in the image: librdkafka {rdkafka}, scripts/librdkafka's pinned "
            f"{pin}; libpq 17", r.stdout + r.stderr)
        note(" / ".join(r.stdout.split("\n")[:3]))
        try:
            host_out = subprocess.run([BIN, "version"], capture_output=True, text=True,
                                      timeout=30).stdout
        except OSError as e:
            host_out = str(e)
        host = librdkafka_of(host_out)
        tap(host == rdkafka, f"the host build ({BIN}, -Drdkafka=pinned) and the image name "
            f"the same librdkafka: {host} and {rdkafka}", host_out)
        record, listing = status_record("librdkafka")
        record = record or {}
        shared = [f for f in listing if os.path.basename(f).startswith("librdkafka")
                  and not f.startswith("var/lib/dpkg/")]
        tap(record.get("Package") == "librdkafka" and record.get("Source") == "librdkafka"
            and record.get("Version") == pin_debian
            and record.get("Version", "").startswith(f"{rdkafka}-")
            and record.get("Status") == "install ok installed"
            and "/usr/local/bin/outboxd" in record.get("Description", "") and not shared,
            f"var/lib/dpkg/status.d/librdkafka: source package librdkafka "
            f"{record.get('Version')} (scripts/librdkafka's {pin_debian}), linked into "
            "outboxd; no librdkafka file in the image",
            "\n".join(f"{k}: {v}" for k, v in record.items()) + "\n" + "\n".join(shared))

        r = podman("run", "-d", "--name", name, "--user", f"{UID}:{UID}", "--read-only",
                   "--cap-drop", "all", "--security-opt", "no-new-privileges", "--network",
                   "host", "--ulimit", "nofile=20000:20000", "--ulimit", "nproc=32768:32768",
                   "-v", f"{conf}:/etc/outboxd:ro", "-v", f"{secrets_dir}:/run/secrets/outboxd:ro",
                   IMAGE)
        tap(r.returncode == 0, "the container starts with deploy/kubernetes/outboxd.yaml's "
            "ConfigMap and secret mounts (uid 10001, read-only root, no capabilities, "
            "no-new-privileges, host network)", r.stdout + r.stderr)

        def logs():
            return podman("logs", name).stdout + podman("logs", name).stderr

        streaming = wait_for(lambda: "streaming slot" in logs(), 60)
        tap(streaming, "outboxd in the container streams the slot", logs())
        st, body = wait_for(lambda: (lambda s, b: (s, b) if s == 200 else None)(
            *http_get(http_port, "/health/ready")), 30) or http_get(http_port, "/health/ready")
        tap(st == 200, "/health/ready answers 200", body)
        st, body = http_get(http_port, "/health/live")
        tap(st == 200, "/health/live answers 200", body)

        rows = []
        for i in range(50):
            rid = str(uuid.uuid4())
            rows.append((rid, f"agg-{i % 5}", json.dumps({"n": i})))
        psql(f"INSERT INTO {tag}.outbox VALUES " + ", ".join(
            f"('{rid}', 'T', '{agg}', 'E', '{p}')" for rid, agg, p in rows))
        lsn = psql("SELECT pg_current_wal_lsn()")
        got = wait_for(lambda: (lambda recs: recs if len(recs) >= len(rows) else None)(
            read_topic(f"{tag}_events")), 60) or read_topic(f"{tag}_events")
        want = sorted((agg, unwrap(p)) for _, agg, p in rows)
        have = sorted((json.loads(unwrap(k)), unwrap(v)) for k, v in got)
        tap(have == want, f"the {len(rows)} rows reach {tag}_events with their keys and "
            "payloads", f"{len(got)} records; first: {got[:3]}")

        st, body = http_get(http_port, "/metrics")
        delivered = [l for l in body.splitlines() if l.startswith("outboxd_records_acknowledged_total")]
        tap(st == 200 and delivered and float(delivered[0].split()[-1]) >= len(rows),
            "/metrics counts the delivered records", "\n".join(delivered) or body[:500])
        confirmed = wait_for(lambda: psql(
            f"SELECT confirmed_flush_lsn >= '{lsn}' FROM pg_replication_slots WHERE "
            f"slot_name = '{tag}_slot'") == "t", 30)
        tap(confirmed, "the container confirms the slot past the rows' commit")

        t0 = time.time()
        podman("kill", "--signal", "TERM", name)
        r = podman("wait", name, timeout=FLUSH_MS / 1000 + 30)
        took = time.time() - t0
        code = r.stdout.strip()
        tap(code == "0" and took < FLUSH_MS / 1000 + 5, f"SIGTERM: exit {code} after "
            f"{took:.1f} s (bound: the flush, {FLUSH_MS} ms, plus 5 s)", logs())
        out = logs()
        tap(PASSWORD not in out and PASSWORD not in podman("inspect", name).stdout,
            "the container's log and its inspect output hold no password")
        podman("rm", "-f", name)
        scram_relay(d, tag, name, rdkafka)
        oidc_relay(d, tag, name, rdkafka)
    finally:
        podman("rm", "-f", name)
        psql(f"SELECT pg_drop_replication_slot('{tag}_slot') FROM pg_replication_slots WHERE "
             f"slot_name = '{tag}_slot' AND NOT active")
        psql(f"DROP SCHEMA {tag} CASCADE; DROP PUBLICATION IF EXISTS {tag}_pub")
        subprocess.run(["rm", "-rf", d])
    return finish()


if __name__ == "__main__":
    sys.exit(main())
