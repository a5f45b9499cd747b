"""Real web servers from Debian in front of isobox, each run from the config
shipped in deploy/ (not a copy of its text), on its own port, from a
directory of its own that is removed when it stops.

Used by test_webservers.py (every server, FastCGI and CGI) and test_cgi.py.
"""
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile

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

    def log_text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()[-4000:]
        except OSError as err:
            return f"(no log: {err})"


def _make_root(name, user):
    # Not under pytest's tmp dir: that is 0700 root, and the servers open
    # files there after dropping to their user.
    root = tempfile.mkdtemp(prefix=f"isobox-{name}-", dir="/tmp")
    os.chmod(root, 0o755)
    shutil.chown(root, user, user)
    return root


@contextlib.contextmanager
def _running(name, user, url_path, make, port=None):
    """make(root, port) -> (check argv, run argv, env, log path). The check
    (the server's own syntax check) must pass before the server starts; the
    server is stopped and its directory removed whatever happens."""
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
        up = wait_until(lambda: proc.poll() is not None or healthy(server.url), 15)
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


def caddy(**extra_env):
    def make(root, port):
        conf = os.path.join(DEPLOY, "caddy", "Caddyfile")
        env = _env(ISOBOX_BIND="127.0.0.1", ISOBOX_PORT=port, ISOBOX_SOCKET=SOCKET,
                   ISOBOX_STATUS_SOCKET=STATUS_SOCKET,
                   ISOBOX_LOG=root, HOME=root, XDG_DATA_HOME=root, XDG_CONFIG_HOME=root,
                   **extra_env)
        # As deploy/pool.sh runs it: Caddy itself drops no privileges.
        as_user = ["setpriv", f"--reuid={FCGI_USER}", f"--regid={FCGI_USER}", "--init-groups", "--"]
        args = ["--adapter", "caddyfile", "--config", conf]
        return (as_user + ["caddy", "validate"] + args, as_user + ["caddy", "run"] + args,
                env, os.path.join(root, "console.log"))
    return _running("caddy", FCGI_USER, "", make)


def nginx():
    def make(root, port):
        env = _env(ISOBOX_SERVER_USER=FCGI_USER, ISOBOX_BIND="127.0.0.1", ISOBOX_PORT=port,
                   ISOBOX_SOCKET=SOCKET)
        # As deploy/nginx/*.conf tell an operator to render them.
        for name, names in (("nginx.conf", "${ISOBOX_SERVER_USER}"),
                            ("isobox.conf", "${ISOBOX_BIND} ${ISOBOX_PORT} ${ISOBOX_SOCKET}")):
            with open(os.path.join(DEPLOY, "nginx", name)) as src, \
                    open(os.path.join(root, name), "w") as dst:
                subprocess.run(["envsubst", names], stdin=src, stdout=dst, env=env, check=True)
        base = ["nginx", "-p", root + "/", "-c", os.path.join(root, "nginx.conf")]
        return base + ["-t"], base + ["-g", "daemon off;"], env, os.path.join(root, "error.log")
    return _running("nginx", FCGI_USER, "", make)


def apache(site, user, url_path="", **defines):
    def make(root, port):
        base = ["apache2", "-f", os.path.join(DEPLOY, "apache", "httpd.conf")]
        defines.update(ISOBOX_DIR=root, ISOBOX_SITE=os.path.join(DEPLOY, "apache", site),
                       ISOBOX_BIND="127.0.0.1", ISOBOX_PORT=port, ISOBOX_SERVER_USER=user)
        for name, value in defines.items():
            base += ["-C", f"Define {name} {value}"]
        return base + ["-t"], base + ["-DFOREGROUND"], _env(), os.path.join(root, "error.log")
    return _running("apache", user, url_path, make)


def lighttpd(site, user, url_path="", port=None, **extra_env):
    def make(root, port):
        conf = os.path.join(DEPLOY, "lighttpd", "lighttpd.conf")
        env = _env(ISOBOX_DIR=root, ISOBOX_BIND="127.0.0.1", ISOBOX_PORT=port,
                   ISOBOX_SERVER_USER=user, ISOBOX_SITE=os.path.join(DEPLOY, "lighttpd", site),
                   **extra_env)
        run = ["lighttpd", "-D", "-f", conf]
        return ["lighttpd", "-tt", "-f", conf], run, env, os.path.join(root, "error.log")
    return _running("lighttpd", user, url_path, make, port)


def start(kind, port=None):
    """A context manager for one of KINDS."""
    if kind == "caddy":
        return caddy()
    if kind == "nginx":
        return nginx()
    if kind == "apache":
        return apache("isobox-fcgi.conf", FCGI_USER, ISOBOX_SOCKET=SOCKET)
    if kind == "apache-cgi":
        return apache("isobox-cgi.conf", CGI_USER, "/isobox", ISOBOX_PREFIX=PREFIX)
    if kind == "lighttpd":
        return lighttpd("isobox-fcgi.conf", FCGI_USER, ISOBOX_SOCKET=SOCKET)
    if kind == "lighttpd-cgi":
        return lighttpd("isobox-cgi.conf", CGI_USER, "/isobox", port=port, ISOBOX_PREFIX=PREFIX)
    raise ValueError(kind)


KINDS = ["caddy", "nginx", "apache", "lighttpd", "apache-cgi", "lighttpd-cgi"]
