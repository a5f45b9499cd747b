"""Logs (issue 10, item 17): isobox.log lines carry a timestamp, a request
with huge headers or a huge URI adds a bounded, small entry to each web
server's logs, and the shipped rotation works while the pool writes."""
import concurrent.futures
import datetime
import http.client
import json
import os
import re
import subprocess
import tempfile
import time
from urllib.parse import urlparse

import pytest

import webservers
from conftest import LOG_DIR, URL, execute, wait_until
from webservers import DEPLOY, exchange

pytestmark = pytest.mark.same_for_every_sandbox("the web servers' and the pool's logs")  # conftest.py

ISOBOX_LOG = os.path.join(LOG_DIR, "isobox.log")
LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) isobox\[\d+\]: \S")
# What one request may add to all of a server's logs together, whatever
# the client sends (docs/DEPLOY.md, "Logs"): entries with the request line,
# Referer and User-Agent cut to 1000 characters, plus nginx's error log
# line (cut at 2 KiB by nginx) when the pool is down. Apache has no access
# log here, but an error line (pool down; in CGI mode a path too long for a
# file name) quotes the request line and the Referer, up to 8 KiB a line.
LOG_MAX_BYTES = {"apache": 16 << 10, "apache-cgi": 16 << 10}
LOG_MAX_BYTES_DEFAULT = 6 << 10
# Headers that no server logs: whatever their size, a few hundred bytes.
HEADER_LOG_MAX_BYTES = 1024


def log_size():
    return os.path.getsize(ISOBOX_LOG)


def lines_since(offset):
    with open(ISOBOX_LOG, "rb") as f:
        f.seek(offset)
        return f.read().decode(errors="replace").splitlines()


def test_isobox_log_lines_start_with_a_timestamp():
    offset = log_size()
    status, result = execute({"language": "python", "code": "print(1)"})
    assert status == 200, result
    assert wait_until(lambda: log_size() > offset, 5), "the run logged nothing"
    new = lines_since(offset)
    now = datetime.datetime.now(datetime.timezone.utc)
    for line in new:
        m = LINE.match(line)
        assert m, f"no timestamp: {line!r}"
        stamp = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f%z")
        assert abs((now - stamp).total_seconds()) < 60, line


def huge_requests(url):
    """Requests whose headers or target are huge: each server answers them
    (a 404 from the worker, or its own 4xx), and logs something."""
    path = urlparse(url).path
    lines = "Host: localhost\r\nConnection: close\r\n"
    return {
        "256 KiB header": f"GET {path}/nope HTTP/1.1\r\n{lines}X-Big: {'a' * (256 << 10)}\r\n\r\n",
        # Under nginx's 8 KiB line limit, so that it logs them.
        "7 KB User-Agent and Referer": (f"GET {path}/nope HTTP/1.1\r\n{lines}User-Agent: {'u' * 7000}"
                                        f"\r\nReferer: {'r' * 7000}\r\n\r\n"),
        "7 KB URI": f"GET {path}/{'p' * 7000} HTTP/1.1\r\n{lines}\r\n",
        "100 KB URI": f"GET {path}/{'p' * 100000} HTTP/1.1\r\n{lines}\r\n",
    }


def sizes(paths):
    return sum(os.path.getsize(p) for p in paths if os.path.exists(p))


def assert_bounded(url, log_files, bound):
    for name, raw in huge_requests(url).items():
        before = sizes(log_files())
        status, _, _ = exchange(url, raw.encode())
        assert status is not None and status >= 400, (name, status)
        time.sleep(0.3)  # loggers write after the answer
        grew = sizes(log_files()) - before
        limit = HEADER_LOG_MAX_BYTES if name == "256 KiB header" else bound
        assert 0 <= grew <= limit, f"{name}: the logs grew by {grew} bytes"


# Each server, and each FastCGI one in front of a pool that is down (the
# servers log more about failures).
FRONTS = [(kind, True) for kind in webservers.KINDS] + [(kind, False) for kind in webservers.FCGI_KINDS]


@pytest.mark.attack("a 256 KiB header, huge User-Agent/Referer and URIs to fill the web server's logs",
                    "each request adds a bounded, small entry to the logs")
@pytest.mark.parametrize("kind,pool_up", FRONTS,
                         ids=[k if up else k + "-pool-down" for k, up in FRONTS])
def test_huge_requests_add_bounded_log_entries(kind, pool_up):
    socket_path = webservers.SOCKET if pool_up else os.path.join(LOG_DIR, "nobody-here.sock")
    with webservers.start(kind, socket_path=socket_path) as server:
        # Every log the server writes lives in its directory (the Caddy
        # access log too: ISOBOX_LOG), and the pool's own log.
        def log_files():
            return [os.path.join(server.root, f) for f in os.listdir(server.root)
                    if f.endswith(".log")] + [ISOBOX_LOG]
        assert_bounded(server.url, log_files, LOG_MAX_BYTES.get(kind, LOG_MAX_BYTES_DEFAULT))
        # Each keeps an access log (deploy/): it was written to.
        access = "caddy/access.log" if kind == "caddy" else "access.log"
        assert os.path.getsize(os.path.join(server.root, access)) > 0


DEPLOYED_ACCESS_LOG = os.path.join(LOG_DIR, "caddy", "access.log")


def test_deployed_caddy_access_log_is_bounded():
    # The Caddy that deploy/pool.sh runs, logging to ISOBOX_LOG.
    access = DEPLOYED_ACCESS_LOG
    assert os.path.exists(access)
    assert_bounded(URL, lambda: [access, ISOBOX_LOG, os.path.join(LOG_DIR, "caddy.log")],
                   LOG_MAX_BYTES_DEFAULT)


def test_caddy_rolls_its_own_access_log():
    # Caddy's file writer rolls the access log itself; logrotate must leave
    # that file alone (two rotations of one file lose lines).
    env = dict(os.environ, ISOBOX_PORT="1", ISOBOX_BIND="127.0.0.1", ISOBOX_SOCKET="/x",
               ISOBOX_LOG="/var/log/isobox")
    out = subprocess.run(["caddy", "adapt", "--adapter", "caddyfile", "--config",
                          os.path.join(DEPLOY, "caddy", "Caddyfile")],
                         env=env, check=True, capture_output=True, text=True).stdout
    logs = json.loads(out)["logging"]["logs"]
    writers = [log["writer"] for log in logs.values() if "writer" in log]
    assert writers and all(w["filename"] == "/var/log/isobox/caddy/access.log" for w in writers)
    assert all(w.get("roll", True) is not False and w["roll_size_mb"] > 0 and w["roll_keep"] > 0
               for w in writers), writers
    with open(os.path.join(DEPLOY, "logrotate", "isobox")) as f:
        assert "access" not in re.sub(r"#.*", "", f.read())


def test_deployed_caddy_rolls_its_access_log():
    """The Caddy deploy/pool.sh runs rolls its access log at roll_size (10
    MiB) where pool.sh puts it: Caddy renames the file, so it needs a
    directory it may write (it could not in ISOBOX_LOG, root's: every entry
    past 10 MiB was lost, and logged as an error)."""
    folder = os.path.dirname(DEPLOYED_ACCESS_LOG)
    def rolled():
        return {f for f in os.listdir(folder) if f.startswith("access-")}
    before = rolled()
    # Entries of about 2.4 KB (URI and Host cut at 1000): about 4400 of
    # them, on 4 connections.
    u = urlparse(URL)
    def send(n):
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        try:
            for _ in range(n):
                conn.request("GET", "/" + "r" * 1100, headers={"Host": "h" * 1100})
                conn.getresponse().read()
        finally:
            conn.close()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for _ in range(12):  # up to 24000 requests, about 55 MiB of entries
            list(pool.map(send, [500] * 4))
            if rolled() - before:
                break
    assert rolled() - before, f"no rolled file in {folder}: {sorted(os.listdir(folder))}"
    assert os.path.getsize(DEPLOYED_ACCESS_LOG) < 10 << 20
    # roll_keep 5: older ones are removed (by Caddy, in the background).
    assert wait_until(lambda: len(rolled()) <= 5, 10), sorted(rolled())


def settled(path, quiet_s=1.0, timeout=10):
    """Wait until the file has not grown for quiet_s."""
    deadline = time.monotonic() + timeout
    size, since = os.path.getsize(path), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = os.path.getsize(path)
        if now != size:
            size, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return
    raise AssertionError(f"{path} kept growing")


def installed_logrotate():
    """The file `make install` put in /etc/logrotate.d for this pool's log
    dir, checked against deploy/logrotate/isobox rendered the same way."""
    path = os.path.join("/etc/logrotate.d", os.path.basename(LOG_DIR))
    assert os.path.exists(path), f"{path} missing: run make install"
    with open(os.path.join(DEPLOY, "logrotate", "isobox")) as f:
        want = re.sub(r"^/var/log/isobox/", LOG_DIR + "/", f.read(), flags=re.M)
    with open(path) as f:
        assert f.read() == want, f"{path} is not deploy/logrotate/isobox"
    return path


def test_logrotate_rotates_isobox_log_while_the_pool_writes():
    conf = installed_logrotate()
    subprocess.run(["logrotate", "--debug", conf], check=True, capture_output=True)
    status, result = execute({"language": "python", "code": "print('before')"})
    assert status == 200, result
    settled(ISOBOX_LOG)  # the worker logs a run after its answer
    with open(ISOBOX_LOG, "rb") as f:
        last_before = f.read().splitlines()[-1]
    with tempfile.TemporaryDirectory() as tmp:
        # Its own state file: -f rotates now whatever the host's state says.
        out = subprocess.run(["logrotate", "-f", "-s", os.path.join(tmp, "state"), conf],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
    rotated = ISOBOX_LOG + ".1"
    with open(rotated, "rb") as f:
        assert f.read().splitlines()[-1] == last_before, "the rotated file lacks the last line"
    # The pool keeps its file open: it goes on writing to the truncated
    # file, at its new end (O_APPEND), not at the old offset (a sparse file
    # of zeros).
    size = log_size()
    assert size < len(last_before) + 4096
    status, result = execute({"language": "python", "code": "print('after')"})
    assert status == 200, result
    assert wait_until(lambda: log_size() > size, 5), "the pool stopped logging after rotation"
    with open(ISOBOX_LOG, "rb") as f:
        text = f.read()
    assert b"\0" not in text, "the pool wrote at its old offset"
    assert LINE.match(text.decode().splitlines()[0]), text[:300]


def test_pool_runs_logrotate_where_nothing_else_does():
    """On a host with neither cron nor systemd (like our build machines)
    pool.sh runs logrotate itself, at start and hourly, and stops it; where
    either runs, it leaves logrotate to them."""
    from conftest import REPO, RUN_DIR, pool_env, POOL
    comms = set()
    for c in os.listdir("/proc"):
        if c.isdigit():
            try:
                comms.add(open(f"/proc/{c}/comm").read().strip())
            except OSError:
                pass
    status = subprocess.run(["bash", os.path.join(REPO, "deploy", "pool.sh"), "status"],
                            env=pool_env(POOL), capture_output=True, text=True).stdout
    if comms & {"cron", "crond", "anacron"} or open("/proc/1/comm").read().strip() == "systemd":
        assert "log keeper: not running" in status, status
        return
    assert re.search(r"^log keeper: running \(\d+\)$", status, re.M), status
    with open(os.path.join(RUN_DIR, "logrotate.state")) as f:
        state = f.read()
    # logrotate wrote down the files it looked after: it ran.
    assert f'"{LOG_DIR}/isobox.log"' in state and f'"{LOG_DIR}/volumed.log"' in state, state
