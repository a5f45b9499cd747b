"""The status socket (issue 10, item 5) behind each web server in front of
the pool. Every shipped FastCGI config sends the exact paths /healthz and
/metrics to the pool's status socket, whose worker never runs a program,
and everything else to the main socket. So a load balancer's probe answers
at once while every worker runs a program and more requests wait (before:
32 one-second runs made /healthz take 14 s), and nothing but those two
paths can reach the status worker.

The routing is proved without timing: each server is also started with
one of its two sockets pointing at a socket nobody listens on, and exactly
the status paths (or exactly the others) must fail. A 404 from the status
worker and one from the pool would look the same."""
import concurrent.futures
import os
import subprocess
import time

import pytest

import webservers
from conftest import POOL, RUN_DIR, containers, execute, request, wait_until, workers
from webservers import SOCKET, STATUS_SOCKET

pytestmark = pytest.mark.same_for_every_sandbox("the status socket and the pool's workers, beside the sandboxes")  # conftest.py

SLOW = {"language": "python", "code": "import time; time.sleep(4)"}
# Every worker busy and as many runs again waiting: two rounds. Each run is
# a sandbox boot (about 3 CPU-s here), so the rounds are long rather than
# many: sleeping costs the host nothing.
RUNS = 2 * POOL
# What a status request may take while every worker is busy: one queued
# behind the runs would wait for the next round of them (4 s or more);
# below that, /healthz's own ping of a busy dockerd is room enough on a
# loaded host.
FAST_S = 3.0
POLLS = 5
# What the configs send to the status socket: the two paths, whatever the
# method (the worker there answers the others with a 405 at once).
STATUS = [("GET", "/healthz"), ("HEAD", "/healthz"), ("GET", "/metrics"),
          ("HEAD", "/metrics"), ("POST", "/healthz")]
# Near misses, and the routes the status worker must never see.
NOT_STATUS_404 = ["/healthzx", "/healthz/", "/metricsx", "/metrics/", "/x/healthz"]
NOT_STATUS_OK = ["/runtimes", "/"]
RUN = {"language": "python", "code": "print(6 * 7)"}
MISSING = os.path.join(RUN_DIR, "nobody-here.sock")


def status_worker():
    pids = workers("isobox-status")
    assert len(pids) == 1, f"the pool has no status worker: {pids}"
    return pids[0]


def unavailable(status, headers, body):
    """The server's own JSON answer for a socket nobody listens on."""
    if status not in (502, 503):
        return False
    return body == "" or (headers.get_content_type() == "application/json"
                          and body["error"]["code"] == "service_unavailable")


@pytest.mark.attack("every worker busy and as many runs again waiting, through each web server: "
                    "does /healthz (what a load balancer probes) still answer?",
                    "/healthz and /metrics answer 200 in under 3 s (queued behind the runs, 4 s or "
                    "more) from the status socket's worker, /healthz with every worker busy and "
                    "requests queued")
@pytest.mark.parametrize("kind", webservers.FCGI_KINDS)
def test_status_answers_while_every_worker_runs(kind):
    pid = status_worker()
    with webservers.start(kind) as server, \
            concurrent.futures.ThreadPoolExecutor(RUNS) as ex:
        runs = [ex.submit(execute, SLOW, url=server.url, timeout=120) for _ in range(RUNS)]
        assert wait_until(lambda: len(containers()) >= POOL, 30), "the runs did not start"
        seen, took = [], []
        for _ in range(POLLS):
            for method, path in (("GET", "/healthz"), ("HEAD", "/healthz"), ("GET", "/metrics")):
                t0 = time.monotonic()
                status, _, body = request(method, path, url=server.url, timeout=10)
                took.append(time.monotonic() - t0)
                assert status == 200, (method, path, status, body, server.log_text())
                if (method, path) == ("GET", "/healthz"):
                    assert body["pid"] == pid, body  # the status worker answered
                    seen.append(body["pool"])
                elif method == "GET":
                    assert "isobox_workers_busy" in body, body[:300]
            time.sleep(0.2)
        results = [r.result() for r in runs]
    print(f"\n{kind}: {len(took)} status requests while busy: worst {max(took) * 1000:.0f} ms, "
          f"median {sorted(took)[len(took) // 2] * 1000:.0f} ms; pool seen {seen}")
    assert max(took) < FAST_S, f"a status request through {kind} took {max(took):.2f} s"
    assert any(p["busy"] == POOL and p["queued"] > 0 for p in seen), seen
    assert all(p["workers"] == POOL for p in seen), seen
    assert all(status == 200 and r["run"]["exitCode"] == 0 for status, r in results), results


@pytest.mark.parametrize("kind", webservers.FCGI_KINDS)
def test_only_the_status_paths_go_to_the_status_socket(kind):
    # The status socket goes nowhere: exactly the status paths fail.
    assert not os.path.exists(MISSING)
    with webservers.start(kind, status_socket=MISSING) as server:
        for method, path in STATUS:
            answer = request(method, path, "" if method == "POST" else None, url=server.url)
            assert unavailable(*answer), (method, path, answer)
        for path in NOT_STATUS_404:
            status, _, body = request("GET", path, url=server.url)
            assert status == 404 and body["error"]["code"] == "not_found", (path, status, body)
        for path in NOT_STATUS_OK:
            status, _, body = request("GET", path, url=server.url)
            assert status == 200, (path, status, body)
        status, result = execute(RUN, url=server.url)
        assert status == 200 and result["run"]["stdout"] == "42\n", result


@pytest.mark.parametrize("kind", webservers.FCGI_KINDS)
def test_the_status_paths_need_only_the_status_socket(kind):
    # The main socket goes nowhere: the status paths still answer, from the
    # status worker, and nothing else does.
    assert not os.path.exists(MISSING)
    pid = status_worker()
    with webservers.start(kind, socket_path=MISSING, status_socket=STATUS_SOCKET) as server:
        status, _, body = request("GET", "/healthz", url=server.url)
        assert status == 200 and body["pid"] == pid, body
        for method, path in STATUS[1:]:
            status, _, body = request(method, path, "" if method == "POST" else None,
                                      url=server.url)
            assert status == (405 if method == "POST" else 200), (method, path, status, body)
        for path in NOT_STATUS_404 + NOT_STATUS_OK:
            answer = request("GET", path, url=server.url)
            assert unavailable(*answer), (path, answer)
        answer = request("POST", "/execute", RUN, url=server.url)
        assert unavailable(*answer), answer


@pytest.mark.parametrize("sock", [SOCKET, STATUS_SOCKET], ids=["main", "status"])
def test_only_the_web_servers_group_reaches_the_sockets(sock):
    # /metrics trusts REMOTE_ADDR, which whoever talks FastCGI to the
    # socket sets: a local user outside the web server's group must not.
    def connects(user, group):
        probe = ("import socket, sys\n"
                 "s = socket.socket(socket.AF_UNIX)\n"
                 "try:\n    s.connect(sys.argv[1])\nexcept PermissionError:\n    sys.exit(13)\n")
        out = subprocess.run(["setpriv", f"--reuid={user}", f"--regid={group}", "--init-groups",
                              "--", "/usr/bin/python3", "-c", probe, sock],
                             capture_output=True, text=True, timeout=10)
        assert out.returncode in (0, 13), out
        return out.returncode == 0
    assert connects(webservers.FCGI_USER, webservers.FCGI_USER)
    assert not connects("nobody", "nogroup")
    st = os.stat(sock)
    assert st.st_mode & 0o777 == 0o660, oct(st.st_mode)
