"""Faults around the sandbox: dockerd stopped and back, the pool saturated.
Runs near the end (conftest.py's LAST): it restarts dockerd."""
import concurrent.futures
import os
import pwd
import signal
import subprocess
import time

import pytest

from conftest import POOL, alive, containers, execute, healthy, request, run_ok, set_warm, wait_until
from metrics_util import scrape, value

pytestmark = pytest.mark.alone("it stops and restarts dockerd, under every isobox on the host")  # shards.py

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def docker_up():
    return subprocess.run(["docker", "info"], capture_output=True).returncode == 0


def test_pool_saturated_requests_wait_their_turn():
    """POOL slow runs take every worker; one more request waits in the
    socket's queue and is served when a worker frees up, not dropped."""
    slow = {"language": "python", "code": "import time\ntime.sleep(3)\nprint('slow')"}

    def timed(body):
        status, result = execute(body)
        return status, result, time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(POOL + 1) as ex:
        busy = [ex.submit(timed, slow) for _ in range(POOL)]
        # Every worker runs a slow one before the extra request is sent (the
        # status worker answers /metrics): waited for, not guessed.
        assert wait_until(lambda: value(scrape()[1], "isobox_workers_busy") == POOL, 30), \
            "the slow runs did not take every worker"
        start = time.monotonic()
        extra = ex.submit(timed, {"language": "python", "code": "print('extra')"})
        status, result, ended = extra.result(timeout=60)
        waited = time.monotonic() - start
        slow_results = [f.result() for f in busy]
    assert all(s == 200 and r["run"]["stdout"] == "slow\n" for s, r, _ in slow_results), slow_results
    assert status == 200 and result["run"]["stdout"] == "extra\n"
    # It waited for a worker: it ended after the first slow run had ended.
    assert ended > min(t for _, _, t in slow_results), (ended, slow_results)
    assert waited < 3 + 10, waited  # the slow runs' wall time plus a margin


def test_dockerd_down_is_a_clear_503_and_recovers():
    pid = int(open("/var/run/docker.pid").read())
    os.kill(pid, signal.SIGTERM)
    try:
        assert wait_until(lambda: not alive(pid), 60), "dockerd did not stop"
        assert not docker_up()
        start = time.monotonic()
        status, result = execute({"language": "python", "code": "print(1)"}, timeout=60)
        assert time.monotonic() - start < 15, "no hang while docker is away"
        assert status == 503 and result["error"]["code"] == "docker_unavailable", result
        # The pool answers /healthz, and says it is down for runs: a load
        # balancer takes the host out until dockerd is back.
        status, _, health = request("GET", "/healthz")
        assert status == 503 and health["status"] == "down", health
        assert health["checks"]["dockerd"]["ok"] is False and "docker.sock" in health["checks"]["dockerd"]["error"]
    finally:
        subprocess.run(["bash", os.path.join(REPO, "deploy", "setup.sh")], check=True,
                       capture_output=True)
    assert wait_until(docker_up, 60)
    assert wait_until(healthy, 30), "healthz did not come back to 200 with dockerd"
    assert request("GET", "/healthz")[2]["status"] == "ok"
    assert run_ok("print('back')")["stdout"] == "back\n"
    # The egress firewall lives in the kernel, not in dockerd: it outlives
    # the restart, and egress runs go on (test_egress probes the rules).
    assert request("GET", "/runtimes")[2]["network"]["available"] is True
    assert subprocess.run(["iptables", "-C", "DOCKER-USER", "-i", "isobox-eg0", "-j", "ISOBOX-EGRESS"],
                          capture_output=True).returncode == 0
    assert run_ok("print('net')", network=True)["stdout"] == "net\n"
    assert wait_until(lambda: containers() == [], 10), containers()  # removed just after the answer


def test_full_work_dir_disk_is_a_clear_503_and_leaves_nothing():
    """The host disk under the work dir is full: the code cannot be written.
    (A 64 KiB tmpfs over the work dir stands in for a full disk.)"""
    work = "/var/lib/isobox/work"
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0711", "tmpfs", work], check=True)
    try:
        user = pwd.getpwnam("isobox")
        os.chown(work, user.pw_uid, user.pw_gid)
        status, result = execute({"language": "python", "code": "#" * 200000 + "\nprint(1)"})
        assert status == 503 and result["error"]["code"] == "sandbox_unavailable", result
        assert "cannot write the code" in result["error"]["message"]
        assert os.listdir(work) == [], "a half-written work dir was left"
        assert containers() == []
    finally:
        subprocess.run(["umount", work], check=True)
    assert run_ok("print('ok')")["stdout"] == "ok\n"


def test_dockerd_restarted_the_warm_pool_refills():
    """dockerd goes away with the warm sandboxes: a request meanwhile gets
    the clear 503 (a dead warm sandbox is never an answer), and once docker
    is back the master refills the pool without a request to prompt it."""
    def ready():
        return value(scrape()[1], "isobox_warm_ready", language="python")
    set_warm("{python: 2}")
    try:
        assert wait_until(lambda: ready() == 2, 60), "the warm pool did not fill"
        pid = int(open("/var/run/docker.pid").read())
        os.kill(pid, signal.SIGTERM)
        try:
            assert wait_until(lambda: not alive(pid), 60), "dockerd did not stop"
            start = time.monotonic()
            status, result = execute({"language": "python", "code": "print(1)"}, timeout=60)
            assert time.monotonic() - start < 15, "no hang while docker is away"
            assert status == 503 and result["error"]["code"] == "docker_unavailable", result
        finally:
            subprocess.run(["bash", os.path.join(REPO, "deploy", "setup.sh")], check=True,
                           capture_output=True)
        assert wait_until(docker_up, 60)
        assert wait_until(lambda: ready() == 2, 90), "the warm pool did not refill"
        status, result = execute({"language": "python", "code": "print('back')"})
        assert status == 200 and result["warm"] and result["run"]["stdout"] == "back\n", result
    finally:
        set_warm()


def test_dockerd_restarted_sessions_are_reported_gone():
    """dockerd takes the sessions' sandboxes with it: each is then reported
    gone (410 with why), never half-alive, and nothing of it is left."""
    from sessions_util import create, gone_without_trace, step, step_ok
    sid = create()["id"]
    step_ok(sid, "print(1)")
    pid = int(open("/var/run/docker.pid").read())
    os.kill(pid, signal.SIGTERM)
    try:
        assert wait_until(lambda: not alive(pid), 60), "dockerd did not stop"
        status, result = step(sid, "print(2)", timeout=60)
        assert status in (410, 503), result
    finally:
        subprocess.run(["bash", os.path.join(REPO, "deploy", "setup.sh")], check=True,
                       capture_output=True)
    assert wait_until(docker_up, 60)
    status, _, err = request("GET", f"/v1/sessions/{sid}")
    if status == 200:  # not yet noticed: the next step or the master's duty does
        status = step(sid, "print(3)")[0]
    assert status == 410, err
    assert gone_without_trace(sid, timeout=30)
