"""The pool over time: killed workers, config reloads, pinned images, stop.
Nothing may be left behind: no container, no work dir, no process."""
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time

import pytest

from conftest import (LOG_DIR, POOL, PREFIX, RUN_DIR, URL, alive, containers, execute, pool_master, reload_pool,
                      request, run_ok, wait_until, work_dirs, workers)
from metrics_util import deltas, scrape
from streaming import events, open_stream

pytestmark = pytest.mark.alone("it rewrites the images lock and the registry that every pool reads")  # shards.py

REGISTRY = os.path.join(PREFIX, "registry", "registry.yaml")
LOCK = "/var/lib/isobox/images.lock"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def in_background(body, out):
    def go():
        out.append(execute(body))
    t = threading.Thread(target=go)
    t.start()
    return t


def owner_of(cid):
    return subprocess.run(["docker", "inspect", "-f", '{{index .Config.Labels "isobox.owner"}}', cid],
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def restore(tmp_path):
    """Put back the registry and the image lock, whatever the test did."""
    saved = {}
    for path in (REGISTRY, LOCK):
        saved[path] = tmp_path / os.path.basename(path)
        shutil.copy2(path, saved[path])
    yield
    for path, copy in saved.items():
        shutil.copy2(copy, path)
    reload_pool()


def test_killed_worker_leaves_nothing_behind():
    out = []
    t = in_background({"language": "python", "code": "import time\ntime.sleep(30)"}, out)
    assert wait_until(lambda: containers(), 20), "the run never started"
    cid = containers()[0]
    pid = int(owner_of(cid).split(".")[0])
    assert pid in workers()
    os.kill(pid, signal.SIGKILL)
    # The master sees the worker die and removes its container and work dir.
    assert wait_until(lambda: containers() == [], 15), "container of the killed worker remains"
    assert wait_until(lambda: not any(d.split(".")[1] == str(pid) for d in work_dirs()), 5)
    t.join(30)
    assert out and out[0][0] in (502, 503), out  # the web server reports the lost backend
    assert wait_until(lambda: len(workers()) == POOL, 10), "the pool was not refilled"
    assert run_ok("print('still serving')")["stdout"] == "still serving\n"
    # The docker client of the dead worker died with it (PDEATHSIG).
    ps = subprocess.run(["pgrep", "-f", f"isobox.owner={pid}\\."], capture_output=True, text=True)
    assert ps.stdout.strip() == ""


def test_sighup_reloads_the_registry_between_requests(restore):
    text = open(REGISTRY).read()
    assert "aliases: [py, py3, python3]" in text
    # A run in flight when the reload happens finishes normally.
    out = []
    t = in_background({"language": "python", "code": "import time\ntime.sleep(2)\nprint('kept')"}, out)
    assert wait_until(lambda: containers(), 20)
    with open(REGISTRY, "w") as f:
        f.write(text.replace("aliases: [py, py3, python3]", "aliases: [py, py3, python3, snake]"))
    reload_pool()
    t.join(30)
    assert out[0][0] == 200 and out[0][1]["run"]["stdout"] == "kept\n"
    # Every worker took the new alias (each reloads before its next request).
    for _ in range(POOL * 2):
        status, result = execute({"language": "snake", "code": "print('hiss')"})
        assert status == 200 and result["run"]["stdout"] == "hiss\n", result


def test_broken_registry_is_reported_and_the_old_one_kept(restore):
    with open(REGISTRY, "w") as f:
        f.write("languages:\n  - name: [broken\n")
    reload_pool()
    for _ in range(POOL * 2):
        assert run_ok("print(5)")["stdout"] == "5\n"
    status, _, health = request("GET", "/healthz")
    assert status == 200 and "registry.yaml" in health.get("reloadError", ""), health
    log = open(os.path.join(LOG_DIR, "isobox.log")).read()
    assert "reload failed, keeping the previous config" in log


def test_image_with_another_id_is_refused(restore):
    lock = open(LOCK).read()
    fake = "sha256:" + "0" * 64
    lines = [line if not line.startswith("  python-slim:") else
             f'  python-slim: {{id: "{fake}", version: "3.11.2"}}' for line in lock.splitlines()]
    with open(LOCK, "w") as f:
        f.write("\n".join(lines) + "\n")
    reload_pool()
    for _ in range(POOL):
        status, result = execute({"language": "python-slim", "code": "print(1)"})
        assert status == 503, result
        assert result["error"]["code"] == "image_missing"
    assert containers() == [] and work_dirs() == []


def test_language_without_a_built_image_is_unavailable(restore):
    lock = open(LOCK).read()
    with open(LOCK, "w") as f:
        f.write("\n".join(line for line in lock.splitlines()
                          if not line.startswith("  python-slim:")) + "\n")
    reload_pool()
    status, _, body = request("GET", "/runtimes")
    slim = [r for r in body["runtimes"] if r["language"] == "python-slim"][0]
    assert slim["available"] is False
    status, result = execute({"language": "python-slim", "code": "print(1)"})
    assert status == 503 and result["error"]["code"] == "image_not_built"


def test_a_version_built_later_is_503_with_retry_after_then_taken_in(restore):
    """`make run` builds the versions beside the defaults in the background
    (deploy/images/later.sh): until one is in the lock, a request for it is
    503 image_not_built with Retry-After and the recipe's name, and nothing
    hangs; when the build writes the lock, the pool reloads by itself."""
    lock = open(LOCK).read()
    with open(LOCK, "w") as f:
        f.write("\n".join(line for line in lock.splitlines() if not line.startswith("  python-3.14:")) + "\n")
    reload_pool()
    status, _, body = request("GET", "/runtimes")
    entry = [r for r in body["runtimes"] if r["id"] == "python@3.14"][0]
    assert entry["available"] is False
    started = time.monotonic()
    status, headers, result = request("POST", "/execute", {"language": "python", "version": "3.14",
                                                           "code": "print(1)"})
    assert status == 503 and result["error"]["code"] == "image_not_built", result
    assert headers["Retry-After"] == "60", headers
    assert "python-3.14" in result["error"]["message"] and time.monotonic() - started < 5, result
    status, headers, result = request("POST", "/v1/sessions", {"language": "python", "version": "3.14"})
    assert status == 503 and headers["Retry-After"] == "60", result
    # The default version is served meanwhile.
    assert run_ok("import sys\nprint(sys.version_info[:2])")["stdout"] == "(3, 13)\n"
    # The background build: the image is there (a build of its tag is a
    # lookup), the lock gains its line, the master gets a SIGHUP.
    env = dict(os.environ, ISOBOX_RUN=RUN_DIR)
    out = subprocess.run(["bash", os.path.join(REPO, "deploy", "images", "later.sh"), "python-3.14"],
                         env=env, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "background" in out.stdout, out

    def available():
        return [r for r in request("GET", "/runtimes")[2]["runtimes"] if r["id"] == "python@3.14"][0]["available"]
    assert wait_until(available, 60), open("/var/lib/isobox/build/later.log").read()
    names = re.findall(r"(?m)^  ([a-z0-9.-]+): \{id:", open(LOCK).read())
    assert "python-3.14" in names and len(names) == len(set(names)), names  # the pool refuses a name twice
    log = open("/var/lib/isobox/build/later.log").read()
    assert "the pool (" in log and "reloads" in log, log
    status, result = execute({"language": "python", "version": "3.14", "code": "import sys\nprint(sys.version_info[:2])"})
    assert status == 200 and result["run"]["stdout"] == "(3, 14)\n", result


def test_stopping_the_pool_kills_runs_in_flight():
    out = []
    t = in_background({"language": "python", "code": "import time\ntime.sleep(30)"}, out)
    assert wait_until(lambda: containers(), 20)
    env = dict(os.environ, PREFIX=PREFIX)
    pool = [pool_master()] + workers()
    start = time.monotonic()
    try:
        subprocess.run(["bash", os.path.join(REPO, "deploy", "pool.sh"), "stop"], check=True, env=env)
        assert time.monotonic() - start < 15
        assert containers() == [] and work_dirs() == []
        # Ended; a zombie that pid 1 has not reaped yet holds nothing.
        survivors = [pid for pid in pool if alive(pid)]
        assert survivors == [], f"the pool's processes survived: {survivors}"
    finally:  # the next tests need it, whatever this one found
        subprocess.run(["bash", os.path.join(REPO, "deploy", "pool.sh"), "start"], check=True, env=env)
    t.join(30)
    assert out and out[0][0] in (502, 503), out
    assert run_ok("print('back')")["stdout"] == "back\n"


def test_a_worker_stopped_mid_stream_ends_the_stream_with_an_error():
    # SIGTERM to one worker (what a pool stop sends) while it streams: the
    # run is killed at once, the stream ends with an `error` event, and
    # /metrics counts the request under the 200 the client got, the failure
    # under its own code.
    before = scrape()[1]
    code = "import time\nprint('up', flush=True)\ntime.sleep(30)"
    conn, resp = open_stream({"language": "python", "code": code}, URL)
    try:
        assert resp.status == 200
        evs = events(resp)
        assert next(e for e in evs if e[1] == "stdout")[2] == '{"data":"up\\n"}'
        pid = int(owner_of(containers()[0]).split(".")[0])
        t0 = time.monotonic()
        os.kill(pid, signal.SIGTERM)
        rest = list(evs)
        assert time.monotonic() - t0 < 10, "the run was not killed at once"
    finally:
        conn.close()
    assert rest and rest[-1][1] == "error", rest
    assert json.loads(rest[-1][2])["error"]["code"] == "worker_stopping"
    assert wait_until(lambda: not containers() and not work_dirs(), 15)
    assert wait_until(lambda: len(workers()) == POOL, 15), "the stopped worker is replaced"
    delta = deltas(before, scrape()[1])
    assert delta("isobox_http_requests_total", route="/execute", status="200") == 1
    assert delta("isobox_http_requests_total", route="/execute", status="503") == 0
    assert delta("isobox_sandbox_failures_total", code="worker_stopping", status="503") == 1


# The shipped web servers read a whole body before they dial the pool
# (buffer_requests and the like: test_slow_clients.py), so through them no
# worker ever reads a body that is still arriving. A server that streams
# bodies to FastCGI would make one do so; these tests talk FastCGI to the
# pool's socket themselves, with libfcgi's own client (cgi-fcgi), which
# passes its stdin on as it comes.
def start_slow_body(body):
    """Start POST /execute on the pool's socket and send half of its body
    (a worker is reading it now). Returns (the client process, the other
    half)."""
    data = json.dumps(body).encode()
    env = {"PATH": "/usr/bin:/bin", "REQUEST_METHOD": "POST", "REQUEST_URI": "/execute",
           "SCRIPT_NAME": "/execute", "SERVER_PROTOCOL": "HTTP/1.1", "HTTP_HOST": "localhost",
           "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(data)),
           "REMOTE_ADDR": "127.0.0.1"}
    client = subprocess.Popen(["cgi-fcgi", "-bind", "-connect", os.path.join(RUN_DIR, "isobox.sock")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env=env)
    client.stdin.write(data[:len(data) // 2])
    client.stdin.flush()
    return client, data[len(data) // 2:]


def finish_slow_body(client, rest):
    """Send the rest (None: nothing more, end the body short); return
    (status, body text) of the answer."""
    out, _ = client.communicate(rest or b"", timeout=60)
    head, _, payload = out.partition(b"\r\n\r\n")
    status = 200
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"status:"):
            status = int(line.split()[1])
    return status, payload.decode(errors="replace")


def serving():
    """The workers serving a request now: from accepting it to its end a
    worker holds SIGHUP blocked (serve.c), whether it is reading the body,
    running the program or writing the answer."""
    return [pid for pid in workers() if sighup_in(pid, "SigBlk")]


def sighup_in(pid, field):
    """Is SIGHUP in the signal mask `field` of /proc/PID/status?"""
    try:
        with open(f"/proc/{pid}/status") as f:
            masks = dict(line.split(":\t", 1) for line in f if ":\t" in line)
    except OSError:
        return False
    return bool(int(masks[field], 16) & (1 << (signal.SIGHUP - 1)))


def test_reload_while_a_body_is_being_read_does_not_break_the_request():
    client, rest = start_slow_body({"language": "python", "code": "print('whole')"})
    try:
        assert wait_until(lambda: len(serving()) == 1, 10), "no worker took the request"
        reader = serving()[0]
        os.kill(pool_master(), signal.SIGHUP)  # forwarded to every worker
        # It reaches the worker reading the body, which holds it until the
        # request ends (SigBlk): pending there, not acted on mid-read.
        assert wait_until(lambda: sighup_in(reader, "ShdPnd"), 30), "the master did not forward SIGHUP"
        assert reader in serving()
        status, text = finish_slow_body(client, rest)
    finally:
        client.kill()
        client.wait()
    assert status == 200 and '"stdout":"whole\\n"' in text, text
    # The reload came right after the request: the next one is whole too.
    assert run_ok("print('after')")["stdout"] == "after\n"


def test_bodies_that_stop_arriving_free_their_workers():
    """POOL clients stop sending their bodies half-way: each worker gives up
    after its read timeout (10 s) instead of waiting for the hang backstop,
    so a new request is served while they still stall."""
    stalled = [start_slow_body({"language": "python", "code": "print(1)"}) for _ in range(POOL)]
    try:
        assert wait_until(lambda: len(serving()) == POOL, 10), "the stalled bodies do not hold the workers"
        # Freed at the read timeout (10 s), long before the hang backstop
        # (minutes: admin_hang_bound_ms).
        assert wait_until(lambda: not serving(), 10 + 15), "the workers are still held by stalled bodies"
        start = time.monotonic()
        assert run_ok("print('served')", limits={"wallTimeMs": 5000})["stdout"] == "served\n"
        assert time.monotonic() - start < 8, "a stalled body still holds the pool"
        for client, _ in stalled:  # each was answered: an error, not a run
            status, text = finish_slow_body(client, None)
            assert status >= 400 and '"error"' in text, (status, text)
    finally:
        for client, _ in stalled:
            client.kill()
            client.wait()
