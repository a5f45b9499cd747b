"""The public demo (isobox.yaml demo:, docs/DEPLOY.md "A public demo"),
on the real pool: a caller with no key and no anonymous address runs a
program for a Cloudflare Turnstile token, and gets nothing else.

This host cannot reach Cloudflare: siteverify is a stand-in on loopback
that speaks its documented API (a form POST of secret, response and
remoteip; a JSON answer of success, hostname and error-codes). Its tokens
say what it answers: "good-*" once (then timeout-or-duplicate), "bad-*"
refused, "elsewhere-*" solved on another site, "slow-*" after the
worker's timeout, "garbage-*" an HTML page. Authenticated Origin Pull is
tested with the shipped Caddy and nginx demo configs and a CA made here
in Cloudflare's place."""
import contextlib
import http.client
import http.server
import json
import os
import random
import re
import shutil
import socket
import ssl
import subprocess
import threading
import time
import urllib.parse

import pytest

import webservers
from conftest import CONF, LOG_DIR, URL, reload_pool, wait_until
from test_playground import drive
from tenants_util import CONF_DIR, call

SECRET = "0x4AAAAAAAtest-secret-of-the-demo"
HOST = "demo.example.org"
# Loopback, not in auth.anonymous; of this run only (the demo's rate per
# address remembers an earlier run's calls for a minute).
_NET = f"127.{random.randrange(1, 255)}.{random.randrange(256)}"
VISITOR, NEIGHBOUR = f"{_NET}.2", f"{_NET}.3"
PY = {"language": "python", "code": "print(6 * 7)"}


class SiteVerify(http.server.ThreadingHTTPServer):
    """Cloudflare's siteverify, as documented, on 127.0.0.1."""
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.asked = []           # (response token, remoteip), in order
        self.used = set()
        self.lock = threading.Lock()

    def tokens_from(self, ip):
        with self.lock:
            return [t for t, addr in self.asked if addr == ip]


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        form = urllib.parse.parse_qs(self.rfile.read(length).decode(), keep_blank_values=True)
        token = form.get("response", [""])[0]
        server = self.server
        with server.lock:
            server.asked.append((token, form.get("remoteip", [""])[0]))
        if self.path != "/siteverify" or form.get("secret") != [SECRET]:
            return self.answer({"success": False, "error-codes": ["invalid-input-secret"]})
        kind = token.split("-", 1)[0]
        if kind == "slow":
            time.sleep(4)
        if kind == "garbage":
            return self.answer(b"<html>Bad gateway</html>", 502)
        if kind == "elsewhere":
            return self.answer({"success": True, "hostname": "other.example.org", "error-codes": []})
        if kind != "good":
            return self.answer({"success": False, "error-codes": ["invalid-input-response"]})
        with server.lock:
            again = token in server.used
            server.used.add(token)
        if again:
            return self.answer({"success": False, "error-codes": ["timeout-or-duplicate"]})
        self.answer({"success": True, "hostname": HOST, "challenge_ts": "2026-12-06T10:00:00Z",
                     "error-codes": [], "action": ""})

    def answer(self, body, status=200):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if status == 200 else "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


_tokens = iter(range(1, 1 << 30))


def token(kind="good"):
    return f"{kind}-{next(_tokens)}-{os.getpid()}"


def demo_conf(shipped, port):
    new, n = re.subn(r"(?m)^demo:\n  enabled: false\n", f"""demo:
  enabled: true
  turnstile:
    siteKey: 1x00000000000000000000AA
    secretFile: turnstile.secret
    hostname: {HOST}
    verifyUrl: http://127.0.0.1:{port}/siteverify
    timeoutMs: 1500
  concurrentExecutions: 1
  runsPerMinutePerAddress: 30
  ceilings: {{wallTimeMs: 2000, memoryBytes: 268435456}}
""", shipped)
    assert n == 1, "the shipped conf has no `demo:\\n  enabled: false` any more"
    new, n = re.subn(r'(?m)^  hosts: \["localhost", ', f'  hosts: ["{HOST}", "localhost", ', new)
    assert n == 1
    return new


@pytest.fixture(scope="module")
def siteverify():
    server = SiteVerify()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    secret = os.path.join(CONF_DIR, "turnstile.secret")
    fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
    with os.fdopen(fd, "w") as f:
        f.write(SECRET + "\n")
    shutil.chown(secret, "root", "isobox")
    with open(CONF) as f:
        shipped = f.read()
    with open(CONF, "w") as f:
        f.write(demo_conf(shipped, server.server_address[1]))
    try:
        reload_pool()
        yield server
    finally:
        with open(CONF, "w") as f:
            f.write(shipped)
        os.unlink(secret)
        reload_pool()
        server.shutdown()


def run(body, tok=None, source=VISITOR, path="/execute", headers=None):
    hdrs = dict(headers or {})
    if tok:
        hdrs["X-Turnstile-Token"] = tok
    return call("POST", path, body, headers=hdrs, source=source)


def test_a_run_needs_a_token_and_nothing_else_is_open(siteverify):
    status, headers, body = run(PY)
    assert status == 401 and body["error"]["code"] == "unauthorized", body
    assert "Turnstile" in body["error"]["message"] and headers["WWW-Authenticate"].startswith("Bearer"), body
    status, _, body = run({"language": "python", "version": "*", "files": [{"content": "print(1)"}]},
                          path="/api/v2/execute")
    assert status == 401 and "Turnstile" in body["message"], body
    # The runtimes, for the playground: the widget's key and the demo's ceilings.
    status, _, body = call("GET", "/runtimes", source=VISITOR)
    assert status == 200 and body["demo"]["turnstileSiteKey"] == "1x00000000000000000000AA", body
    assert body["demo"]["ceilings"]["wallTimeMs"] == 2000, body
    assert call("GET", "/api/v2/runtimes", source=VISITOR)[0] == 200
    # Everything else needs a key, token or not; siteverify is not asked.
    asked = len(siteverify.asked)
    for method, path in (("GET", "/v1/sessions"), ("POST", "/v1/sessions"), ("GET", "/v1/memory"),
                         ("PUT", "/v1/memory/k"), ("POST", "/v1/volumes"), ("POST", "/mcp")):
        status, _, body = call(method, path, {"language": "python"}, source=VISITOR,
                               headers={"X-Turnstile-Token": token()})
        assert status == 401 and body["error"]["code"] == "unauthorized", (path, body)
    assert len(siteverify.asked) == asked
    # The page asks for the widget's script and frame from Cloudflare only.
    status, headers, _ = call("GET", "/", source=VISITOR)
    csp = headers["Content-Security-Policy"]
    assert status == 200 and "frame-src https://challenges.cloudflare.com;" in csp, csp
    assert "script-src 'unsafe-inline' https://challenges.cloudflare.com;" in csp, csp


def test_a_good_token_runs_one_program_once(siteverify):
    tok = token()
    status, _, body = run(PY, tok)
    assert status == 200 and body["run"]["stdout"] == "42\n", body
    assert (tok, VISITOR) in siteverify.asked    # with the secret, and the caller's address
    status, _, body = run(PY, tok)
    assert status == 403 and body["error"]["code"] == "turnstile_failed", body
    assert "timeout-or-duplicate" in body["error"]["message"], body
    # Piston's route, Piston's shapes.
    status, _, body = run({"language": "python", "version": "3.13", "files": [{"content": "print(6 * 7)"}]},
                          token(), path="/api/v2/execute")
    assert status == 200 and body["run"]["stdout"] == "42\n", body
    # The token is the caller's: never written to the log.
    with open(os.path.join(LOG_DIR, "isobox.log"), errors="replace") as f:
        assert tok not in f.read()


@pytest.mark.parametrize("kind, status, code, says", [
    ("bad", 403, "turnstile_failed", "invalid-input-response"),
    ("elsewhere", 403, "turnstile_failed", "other.example.org"),
    ("slow", 503, "turnstile_unavailable", "did not answer"),
    ("garbage", 503, "turnstile_unavailable", "502"),
])
def test_tokens_that_siteverify_does_not_pass_run_nothing(siteverify, kind, status, code, says):
    started = time.monotonic()
    got, headers, body = run(PY, token(kind))
    assert got == status and body["error"]["code"] == code and says in body["error"]["message"], body
    if status == 503:
        assert headers["Retry-After"] == "5", dict(headers)
    # demo.turnstile.timeoutMs (1.5 s) bounds the wait, not siteverify (4 s).
    assert time.monotonic() - started < 3.8


def test_demo_runs_are_small_and_offline(siteverify):
    status, _, body = run({"language": "python", "code": "import time; time.sleep(10)",
                           "limits": {"wallTimeMs": 20000, "memoryBytes": 1073741824}}, token())
    assert status == 200, body
    assert body["limits"]["wallTimeMs"] == 2000 and body["limits"]["memoryBytes"] == 268435456, body
    assert body["run"]["timedOut"], body
    status, _, body = run({**PY, "network": True}, token())
    assert status == 403 and body["error"]["code"] == "network_disabled", body
    status, _, body = run({**PY, "volume": "data"}, token())
    assert status == 403 and body["error"]["code"] == "forbidden" and "volumes" in body["error"]["message"], body


def test_one_demo_run_at_a_time_in_all(siteverify):
    """demo.concurrentExecutions: 1. The second run is sent while the first
    has printed and sleeps (read from its stream), from another address."""
    slow = {"language": "python", "code": "import time; print('up', flush=True); time.sleep(1.5)"}
    u = urllib.parse.urlparse(URL)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60, source_address=(VISITOR, 0))
    try:
        conn.request("POST", "/execute", body=json.dumps(slow), headers={
            "Content-Type": "application/json", "Accept": "text/event-stream", "X-Turnstile-Token": token()})
        resp = conn.getresponse()
        assert resp.status == 200, resp.read()[:300]
        seen = b""
        while b"up" not in seen:
            line = resp.readline()
            assert line, seen
            seen += line
        status, headers, body = run(PY, token(), source=NEIGHBOUR)
        assert status == 429 and body["error"]["code"] == "too_many_executions", body
        resp.read()
    finally:
        conn.close()
    status, _, body = run(PY, token(), source=NEIGHBOUR)
    assert status == 200 and body["run"]["stdout"] == "42\n", body


def test_the_rate_is_per_address_and_costs_siteverify_nothing(siteverify):
    """runsPerMinutePerAddress: 30 (then one each 2 s). The rate is taken
    before siteverify is asked: refused tokens count, and a caller past
    its rate costs Cloudflare no call."""
    source, other = f"{_NET}.7", f"{_NET}.8"
    answers = []
    for _ in range(45):
        status, headers, body = run(PY, token("bad"), source=source)
        answers.append(status)
        if status == 429:
            break
    assert answers[:30] == [403] * 30 and answers[-1] == 429, answers
    assert body["error"]["code"] == "rate_limited" and int(headers["Retry-After"]) >= 1, body
    assert "demo.runsPerMinutePerAddress" in body["error"]["message"], body
    assert len(siteverify.tokens_from(source)) == answers.count(403)
    # Another address has its own.
    assert run(PY, token("bad"), source=other)[0] == 403


def test_the_playground_asks_for_the_challenge_and_sends_its_token(siteverify):
    """In a real browser (test_playground's driver, mode "demo"), as a
    stranger: auth.anonymous is emptied for the test, so the page on
    127.0.0.1 is a demo caller. Turnstile's script is a stand-in that the
    driver serves for Cloudflare's URL; the worker asks this module's
    siteverify."""
    with open(CONF) as f:
        demo = f.read()
    stranger, n = re.subn(r"(?m)^  anonymous: \[.*\]$", "  anonymous: []", demo)
    assert n == 1
    tok = token()
    try:
        with open(CONF, "w") as f:
            f.write(stranger)
        reload_pool()
        report = drive("demo", env={"ISOBOX_SITE_KEY": "1x00000000000000000000AA", "ISOBOX_TOKEN": tok})
    finally:
        with open(CONF, "w") as f:
            f.write(demo)
        reload_pool()
    names = {c["name"] for c in report["checks"] if c["ok"]}
    assert {"a run before the challenge asks for it, and sends nothing", "a solved challenge runs the program once",
            "the next run asks again"} <= names, report
    assert siteverify.tokens_from("127.0.0.1") == [tok]


# ---- Authenticated Origin Pull: the shipped demo configs of Caddy and
# nginx, with a CA made here in Cloudflare's place. ----

def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_pki(root):
    """ca.pem (Cloudflare's origin-pull CA here) signs cloudflare.pem; a
    CA of nobody's signs stranger.pem; server.pem is the origin's."""
    for ca in ("ca", "other-ca"):
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "1", "-subj", f"/CN=test {ca}", cwd=root)
    for name, ca in (("cloudflare", "ca"), ("stranger", "other-ca")):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=root)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
                "-CAcreateserial", "-out", f"{name}.pem", "-days", "1", cwd=root)
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", "server.key", "-out", "server.pem", "-days", "1", "-subj", f"/CN={HOST}",
            "-addext", f"subjectAltName=DNS:{HOST}", cwd=root)
    for name in os.listdir(root):
        shutil.chown(os.path.join(root, name), webservers.FCGI_USER, webservers.FCGI_USER)


class _Origin(http.client.HTTPSConnection):
    """To 127.0.0.1:port, as Cloudflare reaches the origin: SNI and Host
    are the demo's name."""

    def __init__(self, port, context):
        super().__init__(HOST, port, context=context, timeout=60)

    def connect(self):
        sock = socket.create_connection(("127.0.0.1", self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=HOST)


def origin(port, root, client, method, path, body=None, headers=None):
    ctx = ssl.create_default_context(cafile=os.path.join(root, "server.pem"))
    if client:
        ctx.load_cert_chain(os.path.join(root, f"{client}.pem"), os.path.join(root, f"{client}.key"))
    conn = _Origin(port, ctx)
    hdrs = {"Content-Type": "application/json", **(headers or {})}
    try:
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=hdrs)
        resp = conn.getresponse()
        return resp.status, resp.headers, resp.read()
    finally:
        conn.close()


def log_line(request_id):
    with open(os.path.join(LOG_DIR, "isobox.log"), errors="replace") as f:
        return next((line for line in f if f"id={request_id} " in line), "")


@pytest.mark.parametrize("kind", ["caddy", "nginx"])
def test_only_cloudflare_reaches_the_demo_and_the_visitor_is_its_address(siteverify, kind):
    with webservers.demo_server(kind, make_pki) as (port, root):
        # No client certificate, or one from another CA: refused by the
        # web server (Caddy in the handshake, nginx with a 403), never isobox.
        for client in (None, "stranger"):
            try:
                status, headers, _ = origin(port, root, client, "GET", "/runtimes")
            except (ssl.SSLError, ConnectionError) as err:
                status, headers = f"handshake refused: {err}", {}
            assert kind == "caddy" and str(status).startswith("handshake") or status == 403, (client, status)
            assert "X-Request-Id" not in headers
        # Cloudflare's: through, with the visitor's address from CF-Connecting-IP.
        rid = f"demo-{kind}-{os.getpid()}-{time.monotonic_ns()}"
        status, headers, raw = origin(port, root, "cloudflare", "GET", "/runtimes",
                                      headers={"CF-Connecting-IP": "192.0.2.77", "X-Request-Id": rid})
        assert status == 200 and json.loads(raw)["demo"]["turnstileSiteKey"], raw[:300]
        assert wait_until(lambda: log_line(rid), 5), rid
        assert " client=192.0.2.77 " in log_line(rid) and " tenant=demo " in log_line(rid), log_line(rid)
        tok = token()
        status, _, raw = origin(port, root, "cloudflare", "POST", "/execute", PY,
                                headers={"CF-Connecting-IP": "192.0.2.78", "X-Turnstile-Token": tok})
        assert status == 200 and json.loads(raw)["run"]["stdout"] == "42\n", raw[:300]
        assert (tok, "192.0.2.78") in siteverify.asked
        # What the demo does not need is not served at all.
        status, headers, raw = origin(port, root, "cloudflare", "GET", "/v1/sessions",
                                      headers={"CF-Connecting-IP": "192.0.2.77"})
        assert status == 404 and json.loads(raw)["error"]["code"] == "not_found", raw
        assert "X-Request-Id" not in headers

