"""Queue mode on this machine (deploy/cluster.sh with CLUSTER_RUNNERS): two
front hosts behind the balancer put each /execute on a Redis stream; two
runner hosts take the jobs. Answers and streams are the ones a host that
runs programs itself gives; a runner SIGKILLed mid-job loses it to the
other, which runs it again; a full queue answers 503 busy at once."""
import concurrent.futures
import json
import os
import signal
import subprocess
import time
import urllib.request

import pytest

from conftest import PREFIX, REPO, wait_until
from tenants_util import call

pytestmark = pytest.mark.same_for_every_sandbox("the store's queue and its claims, the same whatever runs the sandboxes")  # conftest.py

CLUSTER = os.path.join(REPO, "deploy", "cluster.sh")
RUN = "/run/isobox-cluster"
REDIS_SOCKET = f"{RUN}/redis/redis.sock"
ENV = dict(os.environ, PREFIX=PREFIX, CLUSTER_HOSTS="2", CLUSTER_RUNNERS="2", CLUSTER_QUEUE_MAX="2")
attack = pytest.mark.attack


def cluster_sh(*args):
    return subprocess.run(["bash", CLUSTER, *args], env=ENV, check=True, capture_output=True, text=True)


def redis(*args):
    return subprocess.run(["redis-cli", "-s", REDIS_SOCKET, *args], capture_output=True, text=True,
                          timeout=10).stdout.strip()


def master(host):
    with open(f"{RUN}/{host}/pool.pid") as f:
        return int(f.read())


def pending_consumers():
    """The consumers (runner-pid) holding jobs now."""
    out = redis("XPENDING", "isobox:jobs", "runners", "-", "+", "10").split()
    return out[1::4]


@pytest.fixture(scope="module")
def queue():
    out = cluster_sh("start")
    url = out.stdout.strip().splitlines()[-1]
    try:
        alive = lambda: all(redis("EXISTS", f"isobox:host:{h}") == "1" for h in ("h1", "h2", "r1", "r2"))
        assert wait_until(alive, 20), "a host never said it lives"
        yield url
    finally:
        cluster_sh("stop")
    for h in ("h1", "h2", "r1", "r2"):
        left = subprocess.run(["docker", "ps", "-aq", f"--filter=label=isobox.instance={h}"],
                              capture_output=True, text=True).stdout
        assert not left.strip(), f"{h} left containers: {left}"
    assert not os.path.exists(REDIS_SOCKET)


def events(url, body, on_line=None, timeout=90):
    """POST /execute as a stream: [(seconds since start, event, data)]."""
    req = urllib.request.Request(url + "/execute", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Accept": "text/event-stream"})
    t0 = time.monotonic()
    got, name = [], None
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        assert resp.status == 200 and resp.headers["Content-Type"] == "text/event-stream"
        for raw in resp:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                got.append((time.monotonic() - t0, name, json.loads(line[6:])))
                if on_line:
                    on_line(got[-1])
    return got


def test_a_run_through_the_queue_answers_as_a_run_here(queue):
    url = queue
    status, _, r = call("POST", "/execute", {"language": "python", "code": "print(6 * 7)", "stdin": ""},
                        url=url, source=None)
    assert status == 200 and r["run"]["stdout"] == "42\n" and r["run"]["exitCode"] == 0, r
    status, _, err = call("POST", "/execute", {"language": "python", "code": ""}, url=url, source=None)
    assert status == 400 and err["error"]["code"] == "empty_code", err  # checked by the front
    status, _, r = call("POST", "/execute", {"language": "c", "code": "int main(void) { return 3 }"},
                        url=url, source=None)
    assert status == 200 and r["compile"]["exitCode"] != 0 and "run" not in r, r
    status, _, r = call("POST", "/api/v2/execute", {"language": "python", "version": "*",
                                                    "files": [{"content": "print('piston')"}]},
                        url=url, source=None)
    assert status == 200 and r["run"]["stdout"] == "piston\n" and r["run"]["code"] == 0, r
    assert wait_until(lambda: redis("XLEN", "isobox:jobs") == "0", 5), "done jobs left on the stream"


def test_a_stream_through_the_queue_arrives_as_it_is_written(queue):
    code = "import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(1)\n"
    got = events(queue, {"language": "python", "code": code})
    out = [(t, d["data"]) for t, name, d in got if name == "stdout"]
    assert [d for _, d in out] == ["0\n", "1\n", "2\n"], got
    gaps = [b[0] - a[0] for a, b in zip(out, out[1:])]
    assert all(0.6 < g < 2.0 for g in gaps), gaps
    assert got[-1][1] == "result" and got[-1][2]["run"]["stdout"] == "0\n1\n2\n"


@attack("queue: the runner of a job is SIGKILLed mid-run",
        "another runner takes the job after claimAfterMs and runs it again; the stream says restart, "
        "and the client gets the whole result")
def test_a_runner_killed_mid_job_loses_it_to_another(queue):
    code = "import time\nprint('begin', flush=True)\ntime.sleep(3)\nprint('end')\n"
    killed = []

    def on_line(ev):
        if ev[1] == "stdout" and ev[2]["data"] == "begin\n" and not killed:
            holders = pending_consumers()
            assert len(holders) == 1, holders
            runner = holders[0].split("-")[0]
            os.killpg(master(runner), signal.SIGKILL)
            killed.append(runner)

    got = events(queue, {"language": "python", "code": code, "limits": {"memoryBytes": 128 << 20, "pids": 64}},
                 on_line=on_line)
    names = [name for _, name, _ in got]
    assert killed and "restart" in names, got
    after = names[names.index("restart"):]
    assert got[-1][1] == "result" and got[-1][2]["run"]["stdout"] == "begin\nend\n", got[-1]
    assert [d["data"] for _, n, d in got[names.index("restart"):] if n == "stdout"] == ["begin\n", "end\n"], after
    # The dead runner comes back.
    cluster_sh("start")
    assert wait_until(lambda: redis("EXISTS", f"isobox:host:{killed[0]}") == "1", 15)


@attack("queue: the runner of a job is stopped (SIGSTOP) mid-run past claimAfterMs, and resumes while "
        "another runs the job again",
        "the resumed runner writes nothing and leaves the job alone: the client gets the new run's whole "
        "result, once, and the job leaves the queue")
def test_a_runner_that_was_only_slow_gives_the_job_up(queue):
    code = "import time\nprint('begin', flush=True)\ntime.sleep(4)\nprint('end')\n"
    stopped, resumed = [], []

    def on_line(ev):
        if ev[1] == "stdout" and ev[2]["data"] == "begin\n" and not stopped:
            holders = pending_consumers()
            assert len(holders) == 1, holders
            stopped.append(master(holders[0].split("-")[0]))
            os.killpg(stopped[0], signal.SIGSTOP)
        elif ev[1] == "restart" and stopped and not resumed:
            # The other runner has begun it again: the first wakes with
            # its own run over, its end to tell, while the new one runs.
            os.killpg(stopped[0], signal.SIGCONT)
            resumed.append(time.monotonic())

    try:
        got = events(queue, {"language": "python", "code": code, "limits": {"memoryBytes": 128 << 20, "pids": 64}},
                     on_line=on_line)
    finally:
        if stopped and not resumed:
            os.killpg(stopped[0], signal.SIGCONT)
    names = [name for _, name, _ in got]
    assert resumed and names.count("restart") == 1 and names.count("result") == 1, got
    after = got[names.index("restart"):]
    assert [d["data"] for _, n, d in after if n == "stdout"] == ["begin\n", "end\n"], got
    assert got[-1][1] == "result" and got[-1][2]["run"]["stdout"] == "begin\nend\n", got[-1]
    assert wait_until(lambda: redis("XLEN", "isobox:jobs") == "0" and redis("XPENDING", "isobox:jobs", "runners")
                      .split()[:1] == ["0"], 10), "the job is left on the queue"


@attack("queue: more jobs than the queue holds (runners stopped)",
        "503 busy with Retry-After at once; the queued ones run when runners come back")
def test_a_full_queue_answers_busy(queue):
    url = queue
    # The runners are up and the front reports them, before they stop: a
    # stopped runner's lease lapses STORE_LEASE_MS (10 s) after its last
    # renewal, and this test must not race that clock.
    status, _, text = call("GET", "/hosts/h1/metrics", url=url, source=None)
    assert status == 200 and b'isobox_store_up{backend="redis"} 1' in text, text
    for r in ("r1", "r2"):
        assert f'isobox_cluster_host_up{{host="{r}"}} 1'.encode() in text, text
    stopped = [master(r) for r in ("r1", "r2")]
    for pid in stopped:
        os.killpg(pid, signal.SIGSTOP)
    try:
        slow = {"language": "python", "code": "print('queued')"}
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            waiting = [ex.submit(call, "POST", "/execute", slow, None, None, None, 90, url) for _ in range(2)]
            assert wait_until(lambda: redis("XLEN", "isobox:jobs") == "2", 10)
            status, _, text = call("GET", "/hosts/h1/metrics", url=url, source=None)
            assert status == 200 and b"isobox_queue_jobs 2\n" in text and b"isobox_queue_pending" in text, text
            assert b'isobox_store_up{backend="redis"} 1' in text, text
            t0 = time.monotonic()
            status, headers, err = call("POST", "/execute", slow, url=url, source=None)
            assert status == 503 and err["error"]["code"] == "busy" and headers["Retry-After"] == "1", err
            assert "queue.maxLength" in err["error"]["message"] and time.monotonic() - t0 < 3
            for pid in stopped:
                os.killpg(pid, signal.SIGCONT)
            stopped = []
            for fut in waiting:
                status, _, r = fut.result(timeout=60)
                assert status == 200 and r["run"]["stdout"] == "queued\n", r
        # Back, they renew their leases: the front reports them up again.
        def both_up():
            text = call("GET", "/hosts/h1/metrics", url=url, source=None)[2]
            return all(f'isobox_cluster_host_up{{host="{r}"}} 1'.encode() in text for r in ("r1", "r2"))
        assert wait_until(both_up, 15), "a runner that came back is not reported up"
    finally:
        for pid in stopped:
            os.killpg(pid, signal.SIGCONT)
