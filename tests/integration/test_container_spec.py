"""One container spec (issue 29, item 3): every kind of sandbox's create
body, as isobox sends it to dockerd's API, is the body that the installed
docker CLI sends for the argv isobox renders from the same spec (the CLI
path, where the API cannot be reached). The CLI talks to a fake dockerd on
a socket of the test's own, which keeps the body and refuses the create:
no container is made. Both come from `isobox-fcgi --print-spec`, on the
installed conf and images, and on the runc backend's conf."""
import http.server
import json
import os
import socketserver
import subprocess
import tempfile
import threading

import pytest

from conftest import CONF, PREFIX

FCGI = os.path.join(PREFIX, "bin", "isobox-fcgi")
KINDS = ("cold", "network", "warm", "session", "kernel", "volume", "outputs")


def print_spec(what, kind, language, conf=CONF):
    done = subprocess.run([FCGI, "--conf", conf, "--print-spec", what, kind, language],
                          capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


class FakeDockerd(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path):
        self.bodies = []
        super().__init__(path, Handler)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def address_string(self):
        return "fake-dockerd"

    def answer(self, status, body, content_type="application/json"):
        self.send_response(status)
        self.send_header("Api-Version", "1.41")
        self.send_header("Ostype", "linux")
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                chunk = self.rfile.read(size)
                self.rfile.readline()
                if size == 0:
                    return body
                body += chunk
        return self.rfile.read(int(self.headers.get("Content-Length", 0)))

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        if self.path.endswith("/_ping"):
            self.answer(200, b"OK", "text/plain")
        else:
            self.answer(404, b'{"message":"not in the fake dockerd"}')

    def do_POST(self):
        body = self.read_body()
        if "/containers/create" in self.path:
            self.server.bodies.append(json.loads(body))
            self.answer(500, b'{"message":"the body was kept by the test"}')
        else:
            self.answer(404, b'{"message":"not in the fake dockerd"}')


def cli_body(argv):
    """The create body that the docker CLI of argv[0] sends for argv."""
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, "docker.sock")
        server = FakeDockerd(sock)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            env = dict(os.environ, DOCKER_HOST="unix://" + sock, DOCKER_CONFIG=d)
            done = subprocess.run(argv, env=env, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        finally:
            server.shutdown()
            server.server_close()
        assert done.returncode != 0 and b"the body was kept by the test" in done.stderr, done.stderr.decode()
        assert len(server.bodies) == 1, server.bodies
        return server.bodies[0]


def normal(body):
    """A body without the CLI's spellings of "not set", in one order where
    the CLI's is a map's, the seccomp profile parsed."""
    def clean(v):
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                x = clean(x)
                if x in (False, None, 0, "", [], {}) or (k == "MemorySwappiness" and x == -1) or \
                        (k == "ConsoleSize" and x == [0, 0]):
                    continue
                out[k] = x
            return out
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v
    b = clean(body)
    b["Env"] = sorted(b.get("Env", []))
    host = b.get("HostConfig", {})
    host["Ulimits"] = sorted(host.get("Ulimits", []), key=lambda u: u["Name"])
    opts = []
    for o in host.get("SecurityOpt", []):
        if o.startswith("seccomp="):
            o = ("seccomp", json.loads(o[len("seccomp="):]))
        opts.append(o)
    host["SecurityOpt"] = opts
    return b


def differences(a, b, at=""):
    """Where two JSON values differ, as paths with both sides."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in differences(a.get(k), b.get(k), f"{at}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{at}[{i}]")]
    return [] if a == b else [f"{at}: ours {json.dumps(a)[:300]}, the CLI's {json.dumps(b)[:300]}"]


def compare(argv, ours):
    # The one member the CLI cannot send: a run without network has dockerd
    # set up none at all (spec_render.c); one with network keeps docker's.
    disabled = ours.pop("NetworkDisabled", False)
    assert disabled is (ours["HostConfig"]["NetworkMode"] == "none"), ours["HostConfig"]["NetworkMode"]
    theirs = normal(cli_body(argv))
    mine = normal(ours)
    assert mine == theirs, "\n".join(differences(mine, theirs))
    return mine


@pytest.mark.parametrize("kind", KINDS)
def test_the_api_body_is_the_clis_for_every_kind(kind):
    argv = print_spec("argv", kind, "python").split(b"\0")[:-1]
    ours = json.loads(print_spec("body", kind, "python"))
    body = compare(argv, ours)
    host = body["HostConfig"]
    # What the comparison stands on: the hardening is there in both.
    assert host["ReadonlyRootfs"] is True and host["CapDrop"] == ["ALL"], host
    assert "no-new-privileges" in host["SecurityOpt"] and any(
        isinstance(o, tuple) and o[0] == "seccomp" for o in host["SecurityOpt"]), host
    assert body["User"] == "65534:65534" and body["Labels"]["isobox.kind"] in ("cold", "warm", "session")
    assert host["NetworkMode"] == ("none" if kind != "network" else host["NetworkMode"])
    assert kind != "network" or host["NetworkMode"] != "none"


def test_the_runc_backends_body_is_the_clis(tmp_path):
    text = open(CONF).read()
    assert "\nbackend: gvisor\n" in text
    conf = tmp_path / "isobox.yaml"
    registry = os.path.join(os.path.dirname(CONF), "..", "registry", "registry.yaml")
    text = text.replace("\nregistry: ../registry/registry.yaml\n", f"\nregistry: {registry}\n")
    conf.write_text(text.replace("\nbackend: gvisor\n", "\nbackend: runc\n"))
    for kind in ("cold", "network", "session"):
        argv = print_spec("argv", kind, "python", str(conf)).split(b"\0")[:-1]
        ours = json.loads(print_spec("body", kind, "python", str(conf)))
        host = compare(argv, ours)["HostConfig"]
        assert host["CgroupnsMode"] == "private" and host["Runtime"] == "isobox-runc", host


def test_a_compiled_language_and_an_unknown_kind():
    argv = print_spec("argv", "cold", "c").split(b"\0")[:-1]
    compare(argv, json.loads(print_spec("body", "cold", "c")))
    done = subprocess.run([FCGI, "--conf", CONF, "--print-spec", "argv", "bogus", "python"],
                          capture_output=True, timeout=30)
    assert done.returncode != 0 and b"no bogus sandbox" in done.stderr and not done.stdout
