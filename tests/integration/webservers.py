"""Real web servers from Debian in front of isobox, each run from the config
shipped in deploy/ (not a copy of its text), on its own port, from a
directory of its own that is removed when it stops.

Used by test_webservers.py (every server, FastCGI and CGI), test_cgi.py,
test_slow_clients.py, test_web_errors.py, test_logs.py, test_status_socket.py
and test_demo.py (the public demo's Caddy and nginx, over TLS).

Two things a test may change, each the way an operator would: the sockets
(a pool that is down, or only one of its two: the main socket and the
status socket of /healthz and /metrics) and how long the server waits for
the pool's answer (read_timeout, seconds: Caddy's and Apache's are
parameters of the shipped files; nginx's and lighttpd's are set in the
rendered copy, and the text replaced must be there).
"""
import contextlib
import http.client
import io
import json
import os
import select
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse

from conftest import PREFIX, RUN_DIR, healthy, wait_until

DEPLOY = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "deploy")
SOCKET = os.path.join(RUN_DIR, "isobox.sock")
STATUS_SOCKET = os.path.join(RUN_DIR, "status", "isobox.sock")  # /healthz, /metrics
# deploy/pool.sh gives the pool's socket to group caddy (mode 0660): the
# servers in front of it run their workers as caddy. CGI mode runs the
# binary itself, so that server runs as isobox.
FCGI_USER = "caddy"
CGI_USER = "isobox"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, name, url, root, log):
        self.name, self.url, self.root, self.log = name, url, root, log
        self.kind = name  # start() names the mode too (apache-cgi, ...)

    def log_text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()[-4000:]
        except OSError as err:
            return f"(no log: {err})"


class _Recorded:
    def __init__(self, data):
        self.data = data

    def makefile(self, *args, **kwargs):
        return io.BytesIO(self.data)


def exchange(url, data, timeout=30):
    """Send raw request bytes while reading the answer, as a client that
    goes on sending after an early error does (the request should say
    Connection: close). Returns (status, headers, body) with the body
    de-chunked, or (None, None, b"") when the server closed without an
    answer."""
    u = urllib.parse.urlparse(url)
    got, rest = bytearray(), memoryview(data)
    deadline = time.monotonic() + timeout
    with socket.create_connection((u.hostname, u.port), timeout=timeout) as s:
        s.setblocking(False)
        while True:
            assert time.monotonic() < deadline, f"no end to the answer in {timeout} s: {bytes(got[:200])!r}"
            readable, writable, _ = select.select([s], [s] if rest else [], [], 0.5)
            if readable:
                try:
                    chunk = s.recv(65536)
                except ConnectionResetError:
                    chunk = b""
                if not chunk:
                    break
                got += chunk
            if writable:
                try:
                    rest = rest[s.send(rest[:65536]):]
                except (BrokenPipeError, ConnectionResetError):
                    rest = memoryview(b"")  # it stopped reading: keep listening
    return exchange_parse(bytes(got))


def exchange_parse(raw):
    """(status, headers, de-chunked body) of a recorded HTTP answer, or
    (None, None, b"") for none."""
    if not raw:
        return None, None, b""
    resp = http.client.HTTPResponse(_Recorded(raw))
    resp.begin()
    return resp.status, resp.headers, resp.read()


def json_error(status, headers, body):
    """The worker's error shape: the (code, message) of a JSON error answer.
    The worker's own carry the request's id too (as its X-Request-Id
    header); the web server's own error pages, which it makes without the
    worker, do not."""
    assert status is not None, "the server closed without an answer"
    assert headers.get_content_type() == "application/json", (status, dict(headers), body[:300])
    err = json.loads(body)["error"]
    assert isinstance(err["message"], str) and err["message"], err
    assert set(err) in ({"code", "message"}, {"code", "message", "requestId"}), err
    if "requestId" in err:
        assert err["requestId"] == headers["X-Request-Id"], (err, dict(headers))
    return err["code"]


def _make_root(name, user):
    # Not under pytest's tmp dir: that is 0700 root, and the servers open
    # files there after dropping to their user.
    root = tempfile.mkdtemp(prefix=f"isobox-{name}-", dir="/tmp")
    os.chmod(root, 0o755)
    shutil.chown(root, user, user)
    return root


def listening(url):
    u = urllib.parse.urlparse(url)
    try:
        with socket.create_connection((u.hostname, u.port), timeout=2):
            return True
    except OSError:
        return False


def _replace(text, old, new):
    assert old in text, f"{old!r} is not in the shipped config any more"
    return text.replace(old, new)


@contextlib.contextmanager
def _running(name, user, url_path, make, port=None, pool_up=True):
    """make(root, port) -> (check argv, run argv, env, log path). The check
    (the server's own syntax check) must pass before the server starts; the
    server is stopped and its directory removed whatever happens. It is up
    when /healthz answers through it (or, in front of a pool that is down,
    when it listens)."""
    root = _make_root(name, user)
    port = port or free_port()
    proc = None
    try:
        check, run, env, log = make(root, port)
        out = subprocess.run(check, env=env, capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, f"{name} config check failed: {out.stdout}{out.stderr}"
        server = Server(name, f"http://127.0.0.1:{port}{url_path}", root, log)
        with open(os.path.join(root, "console.log"), "wb") as console:
            proc = subprocess.Popen(run, env=env, stdin=subprocess.DEVNULL,
                                    stdout=console, stderr=subprocess.STDOUT)
        ready = healthy if pool_up else listening
        up = wait_until(lambda: proc.poll() is not None or ready(server.url), 15)
        assert up and proc.poll() is None, f"{name} did not come up: {server.log_text()}"
        yield server
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        shutil.rmtree(root, ignore_errors=True)


def _env(**extra):
    env = dict(os.environ)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def caddy(socket_path=SOCKET, read_timeout=None, status_socket=STATUS_SOCKET, **extra_env):
    def make(root, port):
        conf = os.path.join(DEPLOY, "caddy", "Caddyfile")
        if read_timeout is not None:
            extra_env["ISOBOX_READ_TIMEOUT"] = f"{read_timeout}s"
        env = _env(ISOBOX_BIND="127.0.0.1", ISOBOX_PORT=port, ISOBOX_SOCKET=socket_path,
                   ISOBOX_STATUS_SOCKET=status_socket,
                   ISOBOX_LOG=root, HOME=root, XDG_DATA_HOME=root, XDG_CONFIG_HOME=root,
                   **extra_env)
        return (*_caddy_commands(conf), env, os.path.join(root, "console.log"))
    return _running("caddy", FCGI_USER, "", make, pool_up=status_socket == STATUS_SOCKET)


def _caddy_commands(conf):
    """Caddy's check and run of this Caddyfile, as deploy/pool.sh runs it:
    as FCGI_USER (Caddy itself drops no privileges)."""
    as_user = ["setpriv", f"--reuid={FCGI_USER}", f"--regid={FCGI_USER}", "--init-groups", "--"]
    args = ["--adapter", "caddyfile", "--config", conf]
    return as_user + ["caddy", "validate"] + args, as_user + ["caddy", "run"] + args


def _nginx_rendered(name, names, env):
    """deploy/nginx/NAME with the placeholders `names` filled in from env,
    as the files tell an operator to render them (envsubst)."""
    with open(os.path.join(DEPLOY, "nginx", name)) as src:
        return subprocess.run(["envsubst", names], stdin=src, env=env, check=True,
                              capture_output=True, text=True).stdout


def nginx(socket_path=SOCKET, read_timeout=None, status_socket=STATUS_SOCKET):
    def make(root, port):
        env = _env(ISOBOX_SERVER_USER=FCGI_USER, ISOBOX_BIND="127.0.0.1", ISOBOX_PORT=port,
                   ISOBOX_SOCKET=socket_path, ISOBOX_STATUS_SOCKET=status_socket)
        # As deploy/nginx/*.conf tell an operator to render them.
        for name, names in (("nginx.conf", "${ISOBOX_SERVER_USER}"),
                            ("isobox.conf", "${ISOBOX_BIND} ${ISOBOX_PORT} ${ISOBOX_SOCKET} "
                                            "${ISOBOX_STATUS_SOCKET}")):
            text = _nginx_rendered(name, names, env)
            if name == "isobox.conf" and read_timeout is not None:
                text = _replace(text, "fastcgi_read_timeout 480s;",
                                f"fastcgi_read_timeout {read_timeout}s;")
            with open(os.path.join(root, name), "w") as dst:
                dst.write(text)
        base = ["nginx", "-p", root + "/", "-c", os.path.join(root, "nginx.conf")]
        return base + ["-t"], base + ["-g", "daemon off;"], env, os.path.join(root, "error.log")
    return _running("nginx", FCGI_USER, "", make, pool_up=status_socket == STATUS_SOCKET)


def apache(site, user, url_path="", pool_up=True, **defines):
    def make(root, port):
        base = ["apache2", "-f", os.path.join(DEPLOY, "apache", "httpd.conf")]
        defines.update(ISOBOX_DIR=root, ISOBOX_SITE=os.path.join(DEPLOY, "apache", site),
                       ISOBOX_BIND="127.0.0.1", ISOBOX_PORT=port, ISOBOX_SERVER_USER=user,
                       ISOBOX_PREFIX=PREFIX)
        for name, value in defines.items():
            base += ["-C", f"Define {name} {value}"]
        return base + ["-t"], base + ["-DFOREGROUND"], _env(), os.path.join(root, "error.log")
    return _running("apache", user, url_path, make, pool_up=pool_up)


def lighttpd(site, user, url_path="", port=None, read_timeout=None, pool_up=True, **extra_env):
    def make(root, port):
        conf = os.path.join(DEPLOY, "lighttpd", "lighttpd.conf")
        site_path = os.path.join(DEPLOY, "lighttpd", site)
        if read_timeout is not None:
            with open(site_path) as f:
                text = _replace(f.read(), '"read-timeout" => 480,',
                                f'"read-timeout" => {read_timeout},')
            site_path = os.path.join(root, site)
            with open(site_path, "w") as f:
                f.write(text)
        env = _env(ISOBOX_DIR=root, ISOBOX_BIND="127.0.0.1", ISOBOX_PORT=port,
                   ISOBOX_SERVER_USER=user, ISOBOX_SITE=site_path, ISOBOX_PREFIX=PREFIX,
                   **extra_env)
        run = ["lighttpd", "-D", "-f", conf]
        return ["lighttpd", "-tt", "-f", conf], run, env, os.path.join(root, "error.log")
    return _running("lighttpd", user, url_path, make, port, pool_up=pool_up)


@contextlib.contextmanager
def demo_server(kind, make_pki):
    """The public demo's config (caddy/Caddyfile.demo, nginx/isobox-demo.conf
    beside isobox.conf) in front of the pool, over TLS with Authenticated
    Origin Pull: make_pki(root) writes server.pem/.key (the origin's) and
    ca.pem (the client CA it trusts). Yields (port, root)."""
    def tls(root, port):
        make_pki(root)
        return dict(ISOBOX_DEMO_HOST="demo.example.org", ISOBOX_BIND="127.0.0.1", ISOBOX_PORT=port,
                    ISOBOX_SOCKET=SOCKET, ISOBOX_TLS_CERT=os.path.join(root, "server.pem"),
                    ISOBOX_TLS_KEY=os.path.join(root, "server.key"),
                    ISOBOX_ORIGIN_PULL_CA=os.path.join(root, "ca.pem"))

    def make_caddy(root, port):
        os.makedirs(os.path.join(root, "caddy"))
        shutil.chown(os.path.join(root, "caddy"), FCGI_USER, FCGI_USER)
        env = _env(**tls(root, port), ISOBOX_LOG=root, HOME=root, XDG_DATA_HOME=root, XDG_CONFIG_HOME=root)
        return (*_caddy_commands(os.path.join(DEPLOY, "caddy", "Caddyfile.demo")), env,
                os.path.join(root, "console.log"))

    def make_nginx(root, port):
        # isobox.conf on a port of its own, the demo beside it: their names
        # do not collide.
        env = _env(**tls(root, port), ISOBOX_SERVER_USER=FCGI_USER, ISOBOX_STATUS_SOCKET=STATUS_SOCKET,
                   ISOBOX_DEMO_LOG=os.path.join(root, "demo-access.log"))
        plain = dict(env, ISOBOX_PORT=str(free_port()))
        for name, names, values in (
                ("nginx.conf", "${ISOBOX_SERVER_USER}", env),
                ("isobox.conf", "${ISOBOX_BIND} ${ISOBOX_PORT} ${ISOBOX_SOCKET} ${ISOBOX_STATUS_SOCKET}", plain),
                ("isobox-demo.conf", "${ISOBOX_DEMO_HOST} ${ISOBOX_BIND} ${ISOBOX_PORT} ${ISOBOX_SOCKET} "
                 "${ISOBOX_TLS_CERT} ${ISOBOX_TLS_KEY} ${ISOBOX_ORIGIN_PULL_CA} ${ISOBOX_DEMO_LOG}", env)):
            text = _nginx_rendered(name, names, values)
            if name == "nginx.conf":
                text = _replace(text, "include isobox.conf;", "include isobox.conf;\n    include isobox-demo.conf;")
            with open(os.path.join(root, name), "w") as dst:
                dst.write(text)
        base = ["nginx", "-p", root + "/", "-c", os.path.join(root, "nginx.conf")]
        return base + ["-t"], base + ["-g", "daemon off;"], env, os.path.join(root, "error.log")

    make = {"caddy": make_caddy, "nginx": make_nginx}[kind]
    port = free_port()
    with _running(f"{kind}-demo", FCGI_USER, "", make, port, pool_up=False) as server:
        yield port, server.root


@contextlib.contextmanager
def start(kind, port=None, socket_path=SOCKET, read_timeout=None, status_socket=None):
    """One of KINDS, running (a Server with .kind). For the FastCGI kinds
    only: socket_path, status_socket (by default the pool's, or socket_path
    when that is not the pool's: a pool that is down has neither) and
    read_timeout (seconds). The server is up when /healthz answers through
    it, or, in front of another status socket, when it listens."""
    if status_socket is None:
        status_socket = STATUS_SOCKET if socket_path == SOCKET else socket_path
    with _start(kind, port, socket_path, status_socket, read_timeout) as server:
        server.kind = kind
        yield server


def _start(kind, port, socket_path, status_socket, read_timeout):
    up = status_socket == STATUS_SOCKET
    if kind == "caddy":
        return caddy(socket_path, read_timeout, status_socket)
    if kind == "nginx":
        return nginx(socket_path, read_timeout, status_socket)
    if kind == "apache":
        defines = {"ISOBOX_SOCKET": socket_path, "ISOBOX_STATUS_SOCKET": status_socket}
        if read_timeout is not None:
            defines["ISOBOX_READ_TIMEOUT"] = read_timeout
        return apache("isobox-fcgi.conf", FCGI_USER, pool_up=up, **defines)
    if kind == "apache-cgi":
        return apache("isobox-cgi.conf", CGI_USER, "/isobox")
    if kind == "lighttpd":
        return lighttpd("isobox-fcgi.conf", FCGI_USER, read_timeout=read_timeout, pool_up=up,
                        ISOBOX_SOCKET=socket_path, ISOBOX_STATUS_SOCKET=status_socket)
    if kind == "lighttpd-cgi":
        return lighttpd("isobox-cgi.conf", CGI_USER, "/isobox", port=port)
    raise ValueError(kind)


KINDS = ["caddy", "nginx", "apache", "lighttpd", "apache-cgi", "lighttpd-cgi"]
FCGI_KINDS = ["caddy", "nginx", "apache", "lighttpd"]
