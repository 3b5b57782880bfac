#!/usr/bin/env python3
"""Secured connections end to end (TAP), against the stack's TLS PostgreSQL and its broker's
SASL_SSL (SCRAM-SHA-512) and SSL-with-client-auth listeners (scripts/stack).

- PostgreSQL: `sslmode=verify-full` with the stack's CA, the role outboxd_cert signed in by its
  client certificate alone (pg_hba `cert`), rows relayed; a CA that did not sign the server's
  certificate is exit 2 naming database.sslrootcert.
- Kafka mTLS with the settings a Debezium user has (`security.protocol=SSL`, PEM trust and key
  stores, `ssl.key.password`), the passphrase and PostgreSQL's password read through
  `${file:...}`: rows relayed, `outboxd check` says how each connection is secured.
- SCRAM-SHA-512 over SASL_SSL with a wrong password: exit 2 naming the broker and the mechanism.
  With the right one, a librdkafka before 2.6.1 (Debian 12's 2.0.2) cannot log in to Kafka 4
  (librdkafka#4895): exit 2 saying so; with 2.6.1 or later (the pinned 2.14.2 scripts/test builds
  with) it relays.
- OAUTHBEARER with OIDC (client credentials) from a token endpoint the test serves
  (tests/oidclib.py), with a librdkafka built with libcurl (the pinned one): a wrong client
  secret is exit 2 with the fix, the right one relays; without libcurl (Debian 12's), exit 2
  saying so.
- A broker certificate from another CA, and no client certificate on the mTLS listener: exit 2
  with the fix.
- No secret anywhere: every secret value is looked for in every log line, /metrics, /health,
  `outboxd check` and every error message of these runs.

On the majors after 15 (CK_EXCLUDE_TAGS=pg-independent) only the PostgreSQL part runs.
"""
import atexit
import os
import re
import secrets
import signal
import socket
import ssl
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from taplib import BIN, env, finish, free_port, note, tap, wait_for  # noqa: E402
from oidclib import TokenEndpoint  # noqa: E402

PGPORT = env("OUTBOXD_TEST_PG_PORT")
PASSWORD = env("OUTBOXD_TEST_PG_SUPERUSER_PASSWORD")
PG_CA = env("OUTBOXD_TEST_PG_SSLROOTCERT")
STACK_DIR = env("OUTBOXD_TEST_STACK_DIR")
BOOT = env("OUTBOXD_TEST_KAFKA_BOOTSTRAP")
SASL_BOOT = env("OUTBOXD_TEST_KAFKA_SASL_SSL_BOOTSTRAP")
SSL_BOOT = env("OUTBOXD_TEST_KAFKA_SSL_BOOTSTRAP")
KAFKA_CA = env("OUTBOXD_TEST_KAFKA_CA")
CLIENT_PEM = env("OUTBOXD_TEST_KAFKA_CLIENT_PEM")
KEY_PASSWORD = env("OUTBOXD_TEST_KAFKA_KEY_PASSWORD")
SCRAM_USER = env("OUTBOXD_TEST_KAFKA_SCRAM_USER")
SCRAM_PASSWORD = env("OUTBOXD_TEST_KAFKA_SCRAM_PASSWORD")
PG_ONLY = "pg-independent" in os.environ.get("CK_EXCLUDE_TAGS", "")
CERT_DIR = os.path.join(STACK_DIR, "pg", "tls")
SECRETS = {"PostgreSQL password": PASSWORD, "key passphrase": KEY_PASSWORD,
           "SCRAM password": SCRAM_PASSWORD, "wrong SCRAM password": "not-the-scram-secret",
           "OIDC client secret": "outboxd-oidc-client-secret",
           "wrong OIDC client secret": "not-the-oidc-secret"}
seen = []  # every output of every run: the secret grep reads them all


def psql(sql):
    r = subprocess.run(["psql", f"host=127.0.0.1 port={PGPORT} user=postgres dbname=outboxd",
                        "-X", "-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True,
                       text=True, env=dict(os.environ, PGPASSWORD=PASSWORD), timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"psql: {r.stderr.strip()}\n  SQL: {sql[:200]}")
    return r.stdout.strip()


def outboxd(args, cfg, timeout=60):
    e = {k: v for k, v in os.environ.items() if not k.startswith("OUTBOXD_")}
    r = subprocess.run([BIN] + args + cfg, capture_output=True, text=True, timeout=timeout,
                       env=e)
    seen.append((f"outboxd {' '.join(args)}", r.stdout + r.stderr))
    return r.returncode, r.stdout + r.stderr


def get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.read().decode()
    except urllib.error.HTTPError as e:
        return e.read().decode()
    except OSError:
        return ""


def records(topic):
    r = subprocess.run(["kcat", "-C", "-b", BOOT, "-t", topic, "-o", "beginning", "-e", "-q",
                        "-f", "%k|%s|%h\\n"], capture_output=True, text=True, timeout=60)
    return [line for line in r.stdout.splitlines() if line]


class Setup:
    """A schema with an outbox, its publication, a file of secrets for ${file:...}, and the
    connector and worker files, with the PostgreSQL and Kafka settings of one case."""

    def __init__(self, d, tag):
        self.d, self.tag = d, tag
        self.secrets = os.path.join(d, "secrets.properties")
        with open(self.secrets, "w") as f:
            f.write(f"pg.password={PASSWORD}\nkafka.key.password={KEY_PASSWORD}\n"
                    f"kafka.scram.password={SCRAM_PASSWORD}\n")
        os.chmod(self.secrets, 0o600)

    def files(self, pg, kafka, extra="", rootcert=PG_CA, port=0):
        w, c = os.path.join(self.d, "worker.properties"), os.path.join(self.d, "connector.properties")
        with open(w, "w") as f:
            f.write("key.converter=org.apache.kafka.connect.storage.StringConverter\n"
                    "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
                    "config.providers=file\n"
                    "config.providers.file.class=org.apache.kafka.common.config.provider."
                    f"FileConfigProvider\noutboxd.http.port={port}\n" + kafka + extra)
        with open(c, "w") as f:
            f.write(f"""name=sec
connector.class=io.debezium.connector.postgresql.PostgresConnector
database.hostname=localhost
database.port={PGPORT}
database.dbname=outboxd
database.sslmode=verify-full
database.sslrootcert={rootcert}
topic.prefix={self.tag}
slot.name={self.tag}_slot
publication.name={self.tag}_pub
table.include.list={self.tag}.outbox
transforms=outbox
transforms.outbox.type=io.debezium.transforms.outbox.EventRouter
transforms.outbox.route.topic.replacement={self.tag}_events
""" + pg)
        return [w, c]


PG_PASSWORD = "database.user=postgres\ndatabase.password=${file:%s:pg.password}\n"
PG_CERT = (f"database.user=outboxd_cert\ndatabase.sslcert={CERT_DIR}/cert.crt\n"
           f"database.sslkey={CERT_DIR}/cert.key\n")
K_PLAIN = f"bootstrap.servers={BOOT}\n"
K_MTLS = (f"bootstrap.servers={SSL_BOOT}\nproducer.security.protocol=SSL\n"
          f"producer.ssl.truststore.type=PEM\nproducer.ssl.truststore.location={KAFKA_CA}\n"
          f"producer.ssl.keystore.type=PEM\nproducer.ssl.keystore.location={CLIENT_PEM}\n"
          "producer.ssl.key.password=${file:%s:kafka.key.password}\n")


def k_scram(password):
    return (f"bootstrap.servers={SASL_BOOT}\nproducer.security.protocol=SASL_SSL\n"
            "producer.sasl.mechanism=SCRAM-SHA-512\n"
            "producer.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule "
            f"required username=\"{SCRAM_USER}\" password=\"{password}\";\n"
            f"producer.ssl.truststore.type=PEM\nproducer.ssl.truststore.location={KAFKA_CA}\n")


def k_oidc(url, secret):
    """OAUTHBEARER with OIDC over SASL_SSL, as a Debezium user writes it (client credentials)."""
    return (f"bootstrap.servers={env('OUTBOXD_TEST_KAFKA_OAUTH_BOOTSTRAP')}\n"
            "producer.security.protocol=SASL_SSL\nproducer.sasl.mechanism=OAUTHBEARER\n"
            "producer.sasl.login.callback.handler.class=org.apache.kafka.common.security."
            "oauthbearer.OAuthBearerLoginCallbackHandler\n"
            f"producer.sasl.oauthbearer.token.endpoint.url={url}\n"
            "producer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer."
            f"OAuthBearerLoginModule required clientId=\"outboxd\" clientSecret=\"{secret}\" "
            "scope=\"kafka\";\n"
            f"producer.ssl.truststore.type=PEM\nproducer.ssl.truststore.location={KAFKA_CA}\n")


def oidc_relay(s, pw):
    """This librdkafka has OIDC: a wrong client secret is exit 2 with the fix, the right one
    relays, each token signed by the test's endpoint and checked by the broker."""
    ep = TokenEndpoint(env("OUTBOXD_TEST_KAFKA_OAUTH_KEY"), "outboxd",
                       SECRETS["OIDC client secret"])
    try:
        rc, out = outboxd(["run"], s.files(pw, k_oidc(ep.url, SECRETS["wrong OIDC client secret"]),
                                           NO_GRACE), timeout=90)
        tap(rc == 2 and ep.refused > 0 and "the token endpoint refused the client" in out,
            f"OIDC with a wrong client secret: exit {rc} ({ep.refused} token requests refused) "
            "with the fix", out)
        relay(s, lambda port: s.files(pw, k_oidc(ep.url, SECRETS["OIDC client secret"]),
                                      port=port), 221, 20, "Kafka SASL_SSL OAUTHBEARER with OIDC")
        tap(ep.issued > 0, f"the broker took tokens from the OIDC endpoint ({ep.issued} issued)")
    finally:
        ep.close()


def insert(tag, first, n):
    psql(f"INSERT INTO {tag}.outbox SELECT ('00000000-0000-0000-0000-' || lpad(i::text, 12, "
         f"'0'))::uuid, 'A', 'agg-' || (i % 3), 'T', json_build_object('i', i) FROM "
         f"generate_series({first}, {first + n - 1}) i")


def relay(s, files, first, n, what, probe=False):
    """outboxd run with the files of files(port): n rows inserted once it streams, all on the
    topic with their ids; /metrics and /health read meanwhile; SIGTERM, exit 0."""
    port = free_port()
    cfg = files(port)
    logpath = os.path.join(s.d, f"run{first}.log")
    e = {k: v for k, v in os.environ.items() if not k.startswith("OUTBOXD_")}
    with open(logpath, "w") as log:
        p = subprocess.Popen([BIN, "run"] + cfg, stdout=log, stderr=subprocess.STDOUT, env=e)
        streaming = wait_for(lambda: "streaming slot" in open(logpath).read(), 30)
        insert(s.tag, first, n)
        want = {f"00000000-0000-0000-0000-{i:012d}" for i in range(first, first + n)}

        def arrived():
            got = {m.group(1) for m in (re.search(r"id=([0-9a-f-]+)", r)
                                        for r in records(f"{s.tag}_events")) if m}
            return want <= got
        ok = streaming and wait_for(arrived, 60)
        if probe:
            wait_for(lambda: "outboxd_records_acknowledged_total" in get(port, "/metrics"), 10)
            seen.append(("/metrics", get(port, "/metrics")))
            seen.append(("/health", get(port, "/health")))
        p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = -9
    out = open(logpath).read()
    seen.append((f"outboxd run ({what})", out))
    tap(ok and rc == 0, f"{what}: {n} rows relayed, exit 0 on SIGTERM", out)
    return out


class RefusingProxy:
    """A bootstrap address in front of the mTLS listener whose first @refusals connections
    (None: all) meet a certificate no CA of outboxd's signed, as after a broker's certificate
    rotation: librdkafka's "certificate verify failed", a refusal kafkasec_fix() knows. Later
    connections go through to the listener; the brokers it names are reached directly."""

    def __init__(self, d, refusals):
        self.refusals, self.accepted = refusals, 0
        key, crt = os.path.join(d, "rogue.key"), os.path.join(d, "rogue.crt")
        subprocess.run(["openssl", "req", "-x509", "-nodes", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-keyout", key, "-out", crt, "-days",
                        "1", "-subj", "/CN=localhost"], check=True, capture_output=True)
        self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.tls.load_cert_chain(crt, key)
        self.host, port = SSL_BOOT.rsplit(":", 1)
        self.target = (self.host, int(port))
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.boot = f"{self.host}:{self.sock.getsockname()[1]}"
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            if self.refusals is None or self.accepted <= self.refusals:
                threading.Thread(target=self.refuse, args=(c,), daemon=True).start()
            else:
                u = socket.create_connection(self.target, timeout=10)
                for a, b in ((c, u), (u, c)):
                    threading.Thread(target=self.pump, args=(a, b), daemon=True).start()

    def refuse(self, c):
        try:
            c.settimeout(10)
            self.tls.wrap_socket(c, server_side=True).close()
        except (OSError, ssl.SSLError):
            c.close()

    @staticmethod
    def pump(a, b):
        try:
            while (data := a.recv(65536)):
                b.sendall(data)
        except OSError:
            pass
        for x in (a, b):
            try:
                x.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.sock.close()


def refusal_grace(s, pg_mtls):
    """Issue 34 item 9: a refusal that ends within outboxd.kafka.auth.grace.ms is retried (a
    stall meanwhile), one that persists past it is exit 2 with the refusal's fix."""
    proxy = RefusingProxy(s.d, 2)
    out = relay(s, lambda port: s.files(pg_mtls, (K_MTLS % s.secrets).replace(SSL_BOOT,
                                                                              proxy.boot),
                                        port=port),
                301, 10, "Kafka mTLS whose first two connections are refused (a rotation), "
                "within the grace")
    proxy.close()
    tap(proxy.accepted > 2 and re.search(r"warn.*certificate did not verify.*exit 2 once "
                                         r"refused past outboxd\.kafka\.auth\.grace\.ms=60000"
                                         r"\); retrying$", out, re.M),
        "the refusals were met and retried within the grace (a warning saying so)", out)
    proxy = RefusingProxy(s.d, None)
    start = time.monotonic()
    rc, out = outboxd(["run"], s.files(pg_mtls, (K_MTLS % s.secrets).replace(SSL_BOOT,
                                                                             proxy.boot),
                                       "outboxd.kafka.auth.grace.ms=3000\n"), timeout=120)
    took = time.monotonic() - start
    proxy.close()
    tap(rc == 2 and "certificate did not verify" in out and proxy.boot in out and took >= 3,
        f"a refusal persisting past a 3 s grace: exit 2 with the fix after {took:.1f} s", out)

# a refusal that persists: exit 2 at the first, as before outboxd.kafka.auth.grace.ms
NO_GRACE = "outboxd.kafka.auth.grace.ms=0\n"


def main():
    print("TAP version 13")
    tag = f"sec_{secrets.token_hex(4)}"
    d = tempfile.mkdtemp(prefix="outboxd-security-")
    # the test CA's keys and the secrets' files: gone with the test, whatever its end
    atexit.register(shutil.rmtree, d, True)
    s = Setup(d, tag)
    psql(f"CREATE SCHEMA {tag}; CREATE TABLE {tag}.outbox (id uuid PRIMARY KEY, aggregatetype "
         "text NOT NULL, aggregateid text NOT NULL, type text NOT NULL, payload jsonb); "
         f"CREATE PUBLICATION {tag}_pub FOR TABLE {tag}.outbox WITH (publish = 'insert'); "
         "DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'outboxd_cert') THEN "
         "CREATE ROLE outboxd_cert LOGIN REPLICATION; END IF; END$$; "
         f"GRANT USAGE ON SCHEMA {tag} TO outboxd_cert; "
         f"GRANT SELECT ON {tag}.outbox TO outboxd_cert")
    pw = PG_PASSWORD % s.secrets

    # PostgreSQL: verify-full, the role signed in by its certificate alone
    cfg = s.files(PG_CERT, K_PLAIN)
    rc, out = outboxd(["slot", "create"], cfg)
    tap(rc == 0, "outboxd slot create as outboxd_cert, by its certificate", out)
    rc, out = outboxd(["check"], cfg)
    tls_line = next((line for line in out.splitlines() if "postgres tls" in line), "")
    tap(rc == 0 and re.search(r"^ok\s+postgres tls\s+TLSv1\.[23] ", tls_line) and
        "the server's certificate and host name verified, client certificate" in tls_line and
        "password" not in tls_line,
        "check, verify-full and a client certificate (pg_hba cert): TLS version, verified", out)
    relay(s, lambda port: s.files(PG_CERT, K_PLAIN, port=port), 1, 10,
          "PostgreSQL as outboxd_cert by its certificate, verify-full")
    bad = s.files(PG_CERT.replace(CERT_DIR + "/cert", CERT_DIR + "/client"), K_PLAIN)
    rc, out = outboxd(["run"], bad)
    tap(rc == 2 and "outboxd_cert" in out and "certificate" in out,
        "a client certificate for another user is exit 2 naming the role", out)
    other_ca = s.files(PG_CERT, K_PLAIN, rootcert=KAFKA_CA)
    rc, out = outboxd(["run"], other_ca)
    tap(rc == 2 and "database.sslrootcert" in out,
        "a root certificate that did not sign the server's is exit 2 naming "
        "database.sslrootcert", out)
    plain = s.files(pw + "database.sslmode=disable\n", K_PLAIN)
    rc, out = outboxd(["check"], plain)
    tap(re.search(r"^warn\s+postgres tls\s+no TLS .*password was sent without TLS", out, re.M),
        "check warns that a password travelled without TLS (sslmode=disable)", out)

    if PG_ONLY:
        note("the Kafka cases run on PostgreSQL 15 only (they do not depend on its version)")
    else:
        # mTLS with a Debezium user's PEM stores; secrets through ${file:...}
        pg_mtls = pw + f"database.sslcert={CERT_DIR}/client.crt\n" \
            f"database.sslkey={CERT_DIR}/client.key\n"
        cfg = s.files(pg_mtls, K_MTLS % s.secrets)
        rc, out = outboxd(["check"], cfg)
        tap(rc == 0 and re.search(r"^ok\s+kafka tls\s+security.protocol SSL; TLS, the broker's "
                                  r"certificate verified against ssl.ca.location, host name "
                                  r"verified; client certificate \(key encrypted\)$", out, re.M)
            and re.search(r"^ok\s+postgres tls\s+TLSv1\.[23] .*verified, client certificate, "
                          r"password$", out, re.M),
            "check over mTLS: how each connection is secured", out)
        relay(s, lambda port: s.files(pg_mtls, K_MTLS % s.secrets, port=port), 101, 20,
              "Kafka mTLS (PEM key store, encrypted key)", probe=True)
        refusal_grace(s, pg_mtls)
        # no client certificate on the listener that wants one
        nocert = s.files(pw, f"bootstrap.servers={SSL_BOOT}\nproducer.security.protocol=SSL\n"
                         f"producer.ssl.truststore.location={KAFKA_CA}\n"
                         "producer.ssl.truststore.type=PEM\n", NO_GRACE)
        rc, out = outboxd(["run"], nocert)
        tap(rc == 2 and "refused outboxd's client certificate" in out and SSL_BOOT in out,
            "mTLS without a client certificate: exit 2 naming the broker, with the fix", out)
        # a broker certificate signed by another CA
        wrongca = s.files(pw, (K_MTLS % s.secrets).replace(KAFKA_CA, PG_CA), NO_GRACE)
        rc, out = outboxd(["run"], wrongca)
        tap(rc == 2 and "certificate did not verify" in out and SSL_BOOT in out,
            "a broker certificate from another CA: exit 2 naming the broker, with the fix", out)
        # SCRAM-SHA-512, a wrong password
        rc, out = outboxd(["run"], s.files(pw, k_scram("not-the-scram-secret"), NO_GRACE))
        tap(rc == 2 and "SCRAM-SHA-512" in out and SASL_BOOT in out and
            "sasl.jaas.config" in out,
            "SCRAM with a wrong password: exit 2 naming the broker and the mechanism", out)
        # OAUTHBEARER with OIDC: a librdkafka built with libcurl (the pinned one) relays with it;
        # one built without (Debian 12's) cannot, and says so at start-up
        oidc = s.files(pw, f"bootstrap.servers={env('OUTBOXD_TEST_KAFKA_OAUTH_BOOTSTRAP')}\n"
                       "producer.security.protocol=SASL_SSL\nproducer.sasl.mechanism=OAUTHBEARER\n"
                       "producer.sasl.oauthbearer.token.endpoint.url=http://127.0.0.1:9/token\n"
                       "producer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer."
                       "OAuthBearerLoginModule required clientId=\"outboxd\" "
                       f"clientSecret=\"{SECRETS['OIDC client secret']}\";\n"
                       f"producer.ssl.truststore.type=PEM\nproducer.ssl.truststore.location={KAFKA_CA}\n")
        rc, out = outboxd(["check"], oidc)
        if "not supported in this build" in out:
            rc, out = outboxd(["run"], oidc)
            tap(rc == 2 and "not supported in this build" in out and "has OIDC" in out,
                "OAUTHBEARER with OIDC and a librdkafka without libcurl: exit 2 with the fix", out)
        else:
            oidc_relay(s, pw)
        # SCRAM, the right password (through ${file:...})
        cfg = s.files(pw, k_scram("${file:%s:kafka.scram.password}" % s.secrets))
        rc, out = outboxd(["check"], cfg)
        ver = re.search(r"librdkafka (\d+)\.(\d+)\.(\d+)",
                        subprocess.run([BIN, "--version"], capture_output=True,
                                       text=True).stdout)
        old = ver and tuple(map(int, ver.groups())) < (2, 6, 1)
        note(f"librdkafka {'.'.join(ver.groups()) if ver else '?'}")
        if old:
            tap(rc != 0 and re.search(r"^warn\s+kafka tls\s+.*SASL SCRAM-SHA-512; warning: this "
                                      r"librdkafka cannot log in with SCRAM", out, re.M),
                "check warns that this librdkafka's SCRAM cannot log in to Kafka 4", out)
            rc, out = outboxd(["run"], s.files(pw, k_scram("${file:%s:kafka.scram.password}" %
                                                           s.secrets), NO_GRACE))
            tap(rc == 2 and "librdkafka#4895" in out and SASL_BOOT in out,
                "SCRAM with librdkafka before 2.6.1 against Kafka 4: exit 2 saying why", out)
        else:
            tap(rc == 0, "check over SASL_SSL with SCRAM-SHA-512", out)
            relay(s, lambda port: s.files(pw, k_scram("${file:%s:kafka.scram.password}" %
                                                      s.secrets), port=port),
                  201, 20, "Kafka SASL_SSL SCRAM-SHA-512")

    # no secret in anything these runs printed or served
    leaks = [f"{name} in {where}" for where, text in seen for name, v in SECRETS.items()
             if v in text]
    tap(not leaks and len(seen) >= 6,
        f"no secret in {len(seen)} outputs (logs, check, errors, /metrics, /health)",
        "\n".join(leaks))
    psql(f"SELECT pg_drop_replication_slot('{tag}_slot') FROM pg_replication_slots WHERE "
         f"slot_name = '{tag}_slot'")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
