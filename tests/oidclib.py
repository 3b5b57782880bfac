"""An OIDC token endpoint for the tests (client credentials grant), signing with the key of the
stack's OAUTHBEARER listener (scripts/stack: OUTBOXD_TEST_KAFKA_OAUTH_KEY, kid outboxd-test,
audience outboxd-test). RS256 signatures come from the openssl command, so no JWT library is
needed."""
import base64
import json
import subprocess
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def sign_jwt(key_path, claims, kid="outboxd-test"):
    head = _b64(json.dumps({"alg": "RS256", "typ": "JWT", "kid": kid}).encode())
    body = _b64(json.dumps(claims).encode())
    sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key_path],
                         input=f"{head}.{body}".encode(), capture_output=True, check=True).stdout
    return f"{head}.{body}.{_b64(sig)}"


class TokenEndpoint:
    """POST /token with HTTP Basic client_id:client_secret (or client_id and client_secret in
    the form) and grant_type=client_credentials: a one-hour access token whose sub is the
    client id. Wrong credentials: 401. Counts what it issued and refused."""

    def __init__(self, key_path, client_id, client_secret, audience="outboxd-test"):
        self.issued = 0
        self.refused = 0
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                form = urllib.parse.parse_qs(self.rfile.read(n).decode())
                cid = (form.get("client_id") or [""])[0]
                secret = (form.get("client_secret") or [""])[0]
                auth = self.headers.get("Authorization", "")
                if auth.startswith("Basic "):
                    cid, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
                    cid, secret = urllib.parse.unquote(cid), urllib.parse.unquote(secret)
                grant = (form.get("grant_type") or [""])[0]
                if grant != "client_credentials" or cid != client_id or secret != client_secret:
                    endpoint.refused += 1
                    self._send(401, {"error": "invalid_client"})
                    return
                now = int(time.time())
                claims = {"sub": cid, "aud": audience, "iat": now, "exp": now + 3600}
                if (form.get("scope") or [""])[0]:
                    claims["scope"] = form["scope"][0]
                token = sign_jwt(key_path, claims)
                endpoint.issued += 1
                self._send(200, {"access_token": token, "token_type": "Bearer",
                                 "expires_in": 3600})

            def _send(self, status, doc):
                data = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/token"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
