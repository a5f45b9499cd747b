"""Helpers for test_clients.py: the clients installed as their users
install them (pip into a venv, npm from a packed tarball), a way to call
each flavour (blocking Python, asyncio Python, JavaScript) alike, and a
scripted HTTP server for the answers the real one gives only rarely."""
import asyncio
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY_CLIENT = os.path.join(REPO, "clients", "python")
JS_CLIENT = os.path.join(REPO, "clients", "js")
JS_SCRIPTS = os.path.join(REPO, "tests", "integration", "clients")
SYSTEM_PYTHON = "/usr/bin/python3"   # Debian's, as users have it


def run(cmd, timeout=300, **kw):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    assert out.returncode == 0, f"{cmd} failed:\n{out.stdout}\n{out.stderr}"
    return out


# -- Python -----------------------------------------------------------------------

def make_venv(path):
    """A venv of the system's Python; returns its python."""
    run([SYSTEM_PYTHON, "-m", "venv", str(path)])
    return os.path.join(str(path), "bin", "python")


def pip_install(python, *what):
    """pip install with no index at all: installing must need no download
    (the build backend is in the tree)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return run([python, "-m", "pip", "install", "--no-index", "--disable-pip-version-check",
                *what], env=env, cwd=os.path.dirname(python))


def site_of(python):
    """Where the venv's python finds isobox (run outside the source tree)."""
    out = run([python, "-B", "-c", "import isobox, os; print(os.path.dirname(isobox.__file__))"],
              cwd=os.path.dirname(python), env={"PATH": os.environ["PATH"]})
    return out.stdout.strip()


def import_installed(package_dir):
    """Import the isobox package at package_dir (an installed copy) as
    `isobox`, without putting the venv's site-packages on sys.path."""
    for name in [n for n in sys.modules if n == "isobox" or n.startswith("isobox.")]:
        del sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        "isobox", os.path.join(package_dir, "__init__.py"), submodule_search_locations=[package_dir])
    module = importlib.util.module_from_spec(spec)
    sys.modules["isobox"] = module
    spec.loader.exec_module(module)
    return module


def forget_installed():
    for name in [n for n in sys.modules if n == "isobox" or n.startswith("isobox.")]:
        del sys.modules[name]


# -- JavaScript ---------------------------------------------------------------------

def npm_env(tmp):
    env = dict(os.environ)
    env["npm_config_cache"] = os.path.join(str(tmp), ".npm-cache")   # nothing left in ~/.npm
    env["npm_config_update_notifier"] = "false"
    return env


def npm_project(tmp):
    """A Node project in tmp with the client installed from the tarball
    `npm pack` makes of clients/js (what a registry would serve), offline,
    and the test scripts of tests/integration/clients copied in; they
    import the package by its name."""
    tmp = str(tmp)
    env = npm_env(tmp)
    with open(os.path.join(tmp, "package.json"), "w") as f:
        json.dump({"name": "isobox-client-test", "private": True, "type": "module"}, f)
    packed = run(["npm", "pack", JS_CLIENT, "--pack-destination", tmp, "--json"], env=env, cwd=tmp)
    tarball = json.loads(packed.stdout)[0]["filename"]
    run(["npm", "install", "--offline", "--no-audit", "--no-fund", "./" + tarball], env=env, cwd=tmp)
    for name in os.listdir(JS_SCRIPTS):
        if name.endswith((".mjs", ".mts")):
            shutil.copy(os.path.join(JS_SCRIPTS, name), tmp)
    return tmp


def node(project, script, *args, timeout=120):
    """Run a script of the project; its stdout as JSON."""
    out = subprocess.run(["node", script, *args], cwd=project, capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout)


# -- one call, in each flavour ----------------------------------------------------------

JS_OPTION = {"api_key": ("apiKey", 1), "timeout": ("timeoutMs", 1000), "retries": ("retries", 1),
             "max_retry_wait": ("maxRetryWaitMs", 1000)}


def _plain(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def call(flavour, isobox, project, url, method, *args, **options):
    """Isobox(url, **options).method(*args) in one flavour ("sync",
    "async", "js"): {"value": ... or "error": {...}, "elapsed": s}. A
    stream's value is its events, [event, data] (bytes as text)."""
    start = time.monotonic()
    out = {}
    if flavour == "js":
        js_options = {JS_OPTION[k][0]: v * JS_OPTION[k][1] if isinstance(v, (int, float)) else v
                      for k, v in options.items()}
        got = node(project, "js_call.mjs", json.dumps({"url": url, "options": js_options,
                                                       "call": method, "args": list(args)}))
        if "error" in got:                      # elapsed: as node measured it, start-up left out
            assert got["error"].pop("isIsoboxError"), got
        return got
    try:
        if flavour == "sync":
            box = isobox.Isobox(url, **options)
            value = getattr(box, method)(*args)
            if method == "stream":
                value = [[e["event"], _plain(e["data"])] for e in value]
        else:
            async def go():
                box = isobox.AsyncIsobox(url, **options)
                if method == "stream":
                    return [[e["event"], _plain(e["data"])] async for e in box.stream(*args)]
                return await getattr(box, method)(*args)
            value = asyncio.run(go())
        out["value"] = value
    except isobox.IsoboxError as err:
        out["error"] = {"name": "IsoboxError", "status": err.status, "code": err.code,
                        "message": err.message, "retryAfter": err.retry_after}
    out["elapsed"] = time.monotonic() - start
    return out


# -- a scripted server ----------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answer(status, body=None, headers=None):
    """An answer of FakeServer: JSON (a dict) or raw bytes."""
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", **(headers or {})}
    return {"status": status, "body": body or b"", "headers": headers or {}}


def error(status, code, retry_after=None):
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    return answer(status, {"error": {"code": code, "message": f"scripted {code}"}}, headers)


RESULT = {"language": "python", "version": "3.11.2", "backend": "gvisor",
          "run": {"stdout": "ok\n", "stderr": "", "exitCode": 0, "signal": None, "timedOut": False,
                  "oomKilled": False, "truncated": False, "durationMs": 1}}


def sse(*events, cut=False):
    """An event-stream answer, chunked; cut: the connection closes in the
    middle of it (no last chunk)."""
    text = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
    return {"status": 200, "headers": {"Content-Type": "text/event-stream"},
            "chunks": [text.encode()], "cut": cut}


class FakeServer:
    """An HTTP/1.1 server on 127.0.0.1 that answers each request with the
    next of its answers (the last one again when they run out) and keeps
    what it was sent: .requests, [(method, path, headers, body)]. An answer
    {"hang": True} accepts and never answers."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests = []
        self._stop = threading.Event()
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._threads = []

    def __enter__(self):
        t = threading.Thread(target=self._serve, daemon=True)
        t.start()
        self._threads.append(t)
        return self

    def __exit__(self, *exc):
        self._stop.set()
        for t in self._threads:
            t.join(5)
        self._sock.close()

    def _serve(self):
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            t = threading.Thread(target=self._one, args=(conn,), daemon=True)
            t.start()
            self._threads.append(t)

    def _one(self, conn):
        with conn:
            conn.settimeout(5)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0"))
            while len(body) < length:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                body += chunk
            self.requests.append((method, path, headers, body))
            ans = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
            if ans.get("hang"):
                self._stop.wait(30)
                return
            out = [f"HTTP/1.1 {ans['status']} X", "Connection: close"]
            out += [f"{k}: {v}" for k, v in ans["headers"].items()]
            if "chunks" in ans:
                out.append("Transfer-Encoding: chunked")
                payload = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in ans["chunks"])
                if not ans.get("cut"):
                    payload += b"0\r\n\r\n"
            else:
                out.append(f"Content-Length: {len(ans['body'])}")
                payload = ans["body"]
            conn.sendall(("\r\n".join(out) + "\r\n\r\n").encode() + payload)
