"""Sessions on the real stack: /v1/sessions through Caddy, the FastCGI pool,
dockerd and runsc. State across steps (files, and a live kernel's
variables), one request at a time, any worker serves any step, files in and
out byte-exact, expiry by idle time and lifetime with nothing left, a
runaway cell interrupted, an OOM kill, a pool restart."""
import concurrent.futures
import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import (CONF, INSTANCE, LOG_DIR, PREFIX, REPO, RUN_DIR, URL, reload_pool, request, restart_pool,
                      wait_until, workers)
from sessions_util import (create, delete, get, gone_without_trace, put, raw, session_containers,
                           session_dirs, step, step_ok)
from streaming import chunk_bytes, events, open_stream


@pytest.fixture
def shell():
    s = create()
    yield s["id"]
    delete(s["id"])


@pytest.fixture
def kernel():
    s = create(type="kernel")
    yield s["id"]
    delete(s["id"])


def test_create_get_list_delete():
    s = create(limits={"memoryBytes": 200 * 2**20, "cpus": 0.5, "pids": 64}, idleTimeoutMs=60000)
    sid = s["id"]
    assert re.fullmatch(INSTANCE + r"-[0-9a-f]{32}", sid)  # its host, then 128 random bits
    assert s["language"] == "python" and s["version"].startswith("3.13") and s["type"] == "shell"
    assert s["limits"] == {"memoryBytes": 200 * 2**20, "cpus": 0.5, "pids": 64}
    assert s["network"] is False and s["state"] == "idle" and s["steps"] == 0
    assert s["idleTimeoutMs"] == 60000 and s["createdAt"].endswith("Z")
    assert sid in session_containers() and sid in session_dirs()
    status, _, got = request("GET", f"/v1/sessions/{sid}")
    assert status == 200 and got["id"] == sid and got["expiresAt"] > got["createdAt"]
    assert 5 * 2**20 < got["memoryUsedBytes"] < 200 * 2**20, got  # its cgroup, read now
    status, _, listed = request("GET", "/v1/sessions")
    assert status == 200 and sid in [x["id"] for x in listed["sessions"]]
    # Its sandbox has the hardening of /execute: the same user, no network.
    run = step_ok(sid, "import os, socket\nprint(os.getuid(), os.getgid(), socket.if_nameindex())")["run"]
    assert run["stdout"] == "65534 65534 [(1, 'lo')]\n", run
    assert delete(sid) == 204
    assert gone_without_trace(sid, timeout=5)
    status, _, err = request("GET", f"/v1/sessions/{sid}")
    assert status == 404 and err["error"]["code"] == "session_not_found", err
    assert step(sid, "print(1)")[0] == 404
    assert delete(sid) == 404


def test_bad_requests_are_clear_errors():
    before = (session_dirs(), session_containers())
    cases = [
        ({"language": "python", "limits": {"wallTimeMs": 1000}}, 400, "invalid_request"),
        ({"language": "python", "type": "repl"}, 400, "invalid_value"),
        ({"language": "bash", "type": "kernel"}, 400, "invalid_value"),
        ({"language": "intercal"}, 404, "unknown_language"),
        ({"language": "python", "idleTimeoutMs": 10}, 400, "invalid_value"),
        ({"language": "python", "maxLifetimeMs": 10**12}, 400, "invalid_value"),
        ({"language": "python", "secret": 1}, 400, "unknown_field"),
    ]
    for body, want, code in cases:
        status, _, err = request("POST", "/v1/sessions", body)
        assert (status, err["error"]["code"]) == (want, code), (body, err)
    for path in ["/v1/sessions/nope", "/v1/sessions/" + "0" * 32, "/v1/sessions/../../etc"]:
        status, _, err = request("GET", path)
        assert status == 404, (path, err)
    status, headers, err = request("PATCH", "/v1/sessions")
    assert status == 405 and headers["Allow"] == "POST, GET", err
    assert (session_dirs(), session_containers()) == before  # nothing made


def test_memory_is_clamped_to_the_session_ceiling():
    s = create(limits={"memoryBytes": 8 * 2**30})
    try:
        assert s["limits"]["memoryBytes"] == 512 * 2**20  # sessions.memoryBytes
    finally:
        delete(s["id"])


def test_shell_state_lives_in_workspace(shell):
    r1 = step_ok(shell, "import os\nopen('notes.txt', 'w').write('step one')\nprint(os.getcwd(), os.environ['HOME'])")
    assert r1["run"]["stdout"] == "/workspace /workspace\n" and r1["session"]["id"] == shell
    step_ok(shell, "open('other.txt', 'w').write('two')")
    r3 = step_ok(shell, "print(open('notes.txt').read(), open('other.txt').read())")
    assert r3["run"]["stdout"] == "step one two\n"
    # A step's files and args, and its stdin, as /execute takes them.
    status, r4 = step(shell, files=[{"name": "main.py", "content": "import sys, lib\nprint(lib.X, sys.argv[1:], sys.stdin.read())"},
                                    {"name": "lib.py", "content": "X = 7"}], args=["a b"], stdin="in")
    assert status == 200 and r4["run"]["stdout"] == "7 ['a b'] in\n", r4
    r5 = step_ok(shell, "import sys; sys.exit(3)")
    assert r5["run"]["exitCode"] == 3
    status, _, got = request("GET", f"/v1/sessions/{shell}")
    assert got["steps"] == 5 and got["lastUsedAt"] > got["createdAt"]


def test_other_languages_have_shell_sessions():
    for language, code, want in [("bash", "echo $((6 * 7)) > n; cat n", "42\n"),
                                 ("c", '#include <stdio.h>\nint main(void){puts("hi from c");}', "hi from c\n")]:
        s = create(language=language)
        try:
            result = step_ok(s["id"], code)
            assert result["run"]["stdout"] == want, result
            if language == "c":
                assert result["compile"]["exitCode"] == 0
            broken = step_ok(s["id"], "int main(void) { return }") if language == "c" else None
            if broken:
                assert broken["compile"]["exitCode"] != 0 and "run" not in broken
        finally:
            delete(s["id"])


def test_kernel_keeps_variables_imports_and_objects(kernel):
    r = step_ok(kernel, "x = 41\nimport pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3]})", limits={"wallTimeMs": 60000})
    assert r["kernel"] == {"value": None, "error": None, "images": [], "outputs": [], "restarted": False}, r
    r = step_ok(kernel, "x += 1\nx")
    assert r["kernel"]["value"] == "42" and r["run"]["exitCode"] == 0
    r = step_ok(kernel, "print(df.a.sum())\ndf['b'] = df.a * x\ndf.b.tolist()")
    assert r["run"]["stdout"] == "6\n" and r["kernel"]["value"] == "[42, 84, 126]"
    r = step_ok(kernel, "def f():\n    return undefined_name\nf()")
    err = r["kernel"]["error"]
    assert r["run"]["exitCode"] == 1 and err["name"] == "NameError" and "undefined_name" in err["value"]
    assert "return undefined_name" in err["traceback"] and "kernel.py" not in err["traceback"], err
    r = step_ok(kernel, "import sys\nprint('out'); print('err', file=sys.stderr)\nsys.stdin.read()", stdin="given")
    assert r["run"]["stdout"] == "out\n" and r["run"]["stderr"] == "err\n" and r["kernel"]["value"] == "'given'"
    assert step_ok(kernel, "x")["kernel"]["value"] == "42"


def test_matplotlib_figure_comes_back_as_png(kernel):
    r = step_ok(kernel, "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.title('t')",
                limits={"wallTimeMs": 60000})  # matplotlib's font cache is built first
    images = r["kernel"]["images"]
    assert len(images) == 1 and images[0]["type"] == "image/png", r
    import base64
    assert base64.b64decode(images[0]["data"]).startswith(b"\x89PNG\r\n\x1a\n")
    assert step_ok(kernel, "1")["kernel"]["images"] == []  # shown once, then closed


def test_a_cell_shows_what_a_notebook_shows(kernel):
    """display(), rich MIME bundles (a DataFrame's HTML), IPython.display's
    objects without IPython, print in order with them, a top-level await."""
    r = step_ok(kernel, "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})\nprint('first')\ndisplay(df)\n"
                        "from IPython.display import Markdown\ndisplay(Markdown('**b**'))\nprint('last')\ndf.a.sum()")
    kinds = [(o["output_type"], o.get("name") or sorted(o["data"])) for o in r["kernel"]["outputs"]]
    assert kinds == [("stream", "stdout"), ("display_data", ["text/html", "text/plain"]),
                     ("display_data", ["text/markdown", "text/plain"]), ("stream", "stdout"),
                     ("execute_result", ["text/plain"])], kinds
    table, markdown = r["kernel"]["outputs"][1]["data"], r["kernel"]["outputs"][2]["data"]
    assert "<table" in table["text/html"] and "a" in table["text/plain"], table
    assert markdown["text/markdown"] == "**b**", markdown
    assert r["kernel"]["value"] in ("3", "np.int64(3)"), r["kernel"]  # numpy 2 reprs its integers so
    assert r["run"]["stdout"] == "first\nlast\n"
    r = step_ok(kernel, "import asyncio\nasync def twice(x):\n    await asyncio.sleep(0.01)\n    return 2 * x\n"
                        "await twice(21)")
    assert r["kernel"]["value"] == "42" and r["kernel"]["error"] is None, r
    # matplotlib after the stand-in IPython is imported, in the same cell.
    r = step_ok(kernel, "from IPython.display import display\nimport matplotlib.pyplot as plt\n_ = plt.plot([1, 2])")
    [figure] = r["kernel"]["outputs"]
    assert figure["output_type"] == "display_data" and figure["data"]["image/png"] == r["kernel"]["images"][0]["data"]


def test_runaway_cell_is_interrupted_and_the_kernel_keeps_its_state(kernel):
    step_ok(kernel, "kept = 'still here'")
    start = time.monotonic()
    r = step_ok(kernel, "while True:\n    pass", limits={"wallTimeMs": 1000})
    assert time.monotonic() - start < 5
    assert r["run"]["timedOut"] and r["kernel"]["error"]["name"] == "KeyboardInterrupt", r
    assert r["kernel"]["restarted"] is False
    assert step_ok(kernel, "kept")["kernel"]["value"] == "'still here'"


def test_a_cell_that_ignores_the_interrupt_restarts_the_kernel(kernel):
    step_ok(kernel, "lost = 1")
    start = time.monotonic()
    r = step_ok(kernel, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass",
                limits={"wallTimeMs": 1000})
    assert time.monotonic() - start < 8
    assert r["run"]["timedOut"] and r["kernel"]["restarted"] is True, r
    assert r["kernel"]["error"]["name"] == "KernelRestarted" and "lost" in r["kernel"]["error"]["value"]
    r = step_ok(kernel, "'lost' in globals()")
    assert r["kernel"]["value"] == "False" and r["session"].get("ended") is None


def test_memory_bomb_in_a_kernel_ends_the_session_clearly():
    s = create(type="kernel", limits={"memoryBytes": 128 * 2**20})
    sid = s["id"]
    step_ok(sid, "x = 1")
    r = step_ok(sid, "a = []\nwhile True:\n    a.append(bytearray(8 * 2**20))")
    assert r["run"]["oomKilled"] is True, r
    assert "memory" in r["session"]["ended"], r
    status, _, err = request("GET", f"/v1/sessions/{sid}")
    assert status == 410 and err["error"]["code"] == "session_expired" and "memory" in err["error"]["message"]
    assert step(sid, "x")[0] == 410
    assert gone_without_trace(sid)


def test_one_step_at_a_time(shell):
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        slow = ex.submit(step, shell, "import time\ntime.sleep(3)\nprint('slow')")
        # The first step holds the session (its state says so): not a guess
        # at how long it takes to get there.
        assert wait_until(lambda: request("GET", f"/v1/sessions/{shell}")[2]["state"] == "busy", 10, step=0.05)
        status, err = step(shell, "print('second')")
        assert status == 409 and err["error"]["code"] == "session_busy", err
        status, _, got = request("GET", f"/v1/sessions/{shell}")
        assert got["state"] == "busy"
        status, result = slow.result(timeout=30)
    assert status == 200 and result["run"]["stdout"] == "slow\n"
    assert put(shell, "x", b"1")[0] == 201  # free again


def test_looking_at_a_session_never_makes_a_step_busy(shell):
    """GET /v1/sessions(/{id}) says whether a request holds the session; the
    look must not hold it itself, or a step arriving at that instant gets a
    409 it did not earn (seen once in CI). Steps here are file uploads, the
    fastest kind, one after another while three clients keep looking."""
    stop = time.monotonic() + 8
    def look():
        n = 0
        while time.monotonic() < stop:
            request("GET", f"/v1/sessions/{shell}" if n % 2 else "/v1/sessions")
            n += 1
        return n
    with concurrent.futures.ThreadPoolExecutor(3) as ex:
        lookers = [ex.submit(look) for _ in range(3)]
        statuses = []
        while time.monotonic() < stop:
            statuses.append(put(shell, f"f{len(statuses) % 10}", b"x")[0])
        looks = sum(f.result() for f in lookers)
    assert looks > 100 and len(statuses) > 50, (looks, len(statuses))
    assert set(statuses) == {201}, [s for s in statuses if s != 201][:5]


def test_sessions_do_not_see_each_other(shell):
    other = create()["id"]
    try:
        step_ok(shell, "open('mine.txt', 'w').write('secret')")
        r = step_ok(other, "import os\nprint(sorted(os.listdir('.')), os.path.exists('/workspace/mine.txt'))")
        assert r["run"]["stdout"] == "['main.py'] False\n", r
        assert get(other, "mine.txt")[0] == 404
    finally:
        delete(other)


def test_any_worker_serves_any_step(shell):
    """The worker that served a step dies; the next step is served by
    another process and finds the session as it was."""
    def served():
        log = open(os.path.join(LOG_DIR, "isobox.log")).read()
        return [int(p) for p in re.findall(r"isobox\[(\d+)\]: request .* route=/v1/sessions/\*/exec .*"
                                           r"session=" + shell + r"\b", log)]
    step_ok(shell, "open('kept', 'w').write('yes')")
    # A step is logged just after its answer is sent: wait for the line.
    assert wait_until(lambda: len(served()) == 1, 10), "the step was not logged"
    pid = served()[-1]
    os.kill(pid, signal.SIGKILL)
    assert wait_until(lambda: pid not in workers(), 10)
    r = step_ok(shell, "print(open('kept').read())")
    assert r["run"]["stdout"] == "yes\n"
    assert wait_until(lambda: len(served()) == 2, 10), "the second step was not logged"
    assert served()[-1] != pid


def test_files_in_and_out_byte_exact(shell):
    every = bytes(range(256)) * 4
    assert put(shell, "bin/all.bin", every) == (201, {"path": "bin/all.bin", "size": 1024})
    status, headers, body = get(shell, "bin/all.bin")
    assert status == 200 and body == every
    assert headers["Content-Type"] == "application/octet-stream" and headers["Content-Length"] == "1024"
    r = step_ok(shell, "import hashlib\nprint(hashlib.sha256(open('bin/all.bin','rb').read()).hexdigest())")
    import hashlib
    assert r["run"]["stdout"].strip() == hashlib.sha256(every).hexdigest()
    big = os.urandom(10 * 2**20)
    assert put(shell, "big.bin", big)[0] == 201
    status, _, back = get(shell, "big.bin")
    assert status == 200 and back == big
    step_ok(shell, "open('made.bin', 'wb').write(bytes(range(256)))")
    assert get(shell, "made.bin")[2] == bytes(range(256))
    status, _, listing = request("GET", f"/v1/sessions/{shell}/files")
    names = {e["name"]: e for e in listing["entries"]}
    assert names["big.bin"]["size"] == 10 * 2**20 and names["big.bin"]["type"] == "file"
    assert names["bin"]["type"] == "directory" and names["made.bin"]["mtime"].endswith("Z")
    status, _, listing = request("GET", f"/v1/sessions/{shell}/files?path=bin")
    assert [e["name"] for e in listing["entries"]] == ["all.bin"]
    assert raw("DELETE", f"/v1/sessions/{shell}/files/bin")[0] == 204
    assert get(shell, "bin/all.bin")[0] == 404
    assert raw("HEAD", f"/v1/sessions/{shell}/files/made.bin")[1]["Content-Length"] == "256"
    # A name with % and a space: decoded once, whatever the web server does.
    assert put(shell, "100%25%20sure.txt", b"pct") == (201, {"path": "100% sure.txt", "size": 3})
    assert get(shell, "100%25%20sure.txt")[2] == b"pct"
    assert step_ok(shell, "print(open('100% sure.txt').read())")["run"]["stdout"] == "pct\n"


def test_file_errors_are_clear(shell):
    step_ok(shell, "import os\nos.makedirs('d/e')")
    status, _, body = get(shell, "missing.txt")
    assert status == 404 and json.loads(body)["error"]["code"] == "file_not_found"
    status, _, body = get(shell, "d")
    assert status == 400 and json.loads(body)["error"]["code"] == "not_a_file"
    status, _, body = raw("GET", f"/v1/sessions/{shell}/files?path=nope")
    assert status == 404
    status, body = put(shell, "huge.bin", b"\0" * (32 * 2**20 + 1))
    assert status == 413 and body["error"]["code"] == "file_too_large", body
    assert put("0" * 32, "x", b"1")[0] == 404


def test_idle_sessions_expire_with_nothing_left():
    sid = create(idleTimeoutMs=1000)["id"]
    assert wait_until(lambda: request("GET", f"/v1/sessions/{sid}")[0] == 410, 15)
    status, _, err = request("GET", f"/v1/sessions/{sid}")
    assert err["error"]["code"] == "session_expired" and "idle" in err["error"]["message"]
    assert gone_without_trace(sid)


def test_a_session_ends_at_its_lifetime_however_busy():
    # The lifetime counts from the session's making, inside the create
    # request: the clock starts before it (a slow host's create took 0.7 s).
    start = time.monotonic()
    sid = create(maxLifetimeMs=4000, idleTimeoutMs=60000)["id"]
    while time.monotonic() - start < 20:
        status, _ = step(sid, "print(1)")
        if status != 200:
            break
        time.sleep(0.3)
    assert status == 410 and 4 <= time.monotonic() - start < 15
    assert "maxLifetimeMs" in request("GET", f"/v1/sessions/{sid}")[2]["error"]["message"]
    assert gone_without_trace(sid)


def test_streamed_step(kernel):
    step_ok(kernel, "import time")
    conn, resp = open_stream({"code": "for i in range(3):\n    print(i, flush=True)\n    time.sleep(0.3)\n'done'"},
                             URL, path=f"/v1/sessions/{kernel}/exec")
    try:
        assert resp.status == 200 and resp.headers["Content-Type"] == "text/event-stream"
        evs = list(events(resp))
    finally:
        conn.close()
    out = b"".join(chunk_bytes(d) for _, name, d in evs if name == "stdout")
    assert out == b"0\n1\n2\n"
    assert evs[-1][1] == "result"
    result = json.loads(evs[-1][2])
    assert result["kernel"]["value"] == "'done'" and result["session"]["id"] == kernel


def test_a_streamed_cell_shows_each_display_as_it_happens(kernel):
    code = ("import time\nprint('a')\ndisplay({'text/html': '<b>1</b>', 'text/plain': '1'}, raw=True)\n"
            "time.sleep(1)\nprint('b')\ndisplay(2)\ntime.sleep(1)\n3")
    conn, resp = open_stream({"code": code}, URL, path=f"/v1/sessions/{kernel}/exec")
    try:
        assert resp.status == 200 and resp.headers["Content-Type"] == "text/event-stream"
        evs = list(events(resp))
    finally:
        conn.close()
    # In the order the cell made them: text, a display, text, a display, the value.
    told = [(name, chunk_bytes(d) if name == "stdout" else json.loads(d)) for _, name, d in evs
            if name in ("stdout", "display")]
    assert told == [("stdout", b"a\n"),
                    ("display", {"output_type": "display_data", "data": {"text/html": "<b>1</b>", "text/plain": "1"},
                                 "metadata": {}}),
                    ("stdout", b"b\n"),
                    ("display", {"output_type": "display_data", "data": {"text/plain": "2"}, "metadata": {}}),
                    ("display", {"output_type": "execute_result", "data": {"text/plain": "3"}, "metadata": {}})], evs
    # As they happen, not at the cell's end; and the result still holds them all.
    at = [t for t, name, _ in evs if name == "display"]
    assert at[1] - at[0] >= 0.8 and evs[-1][0] - at[0] >= 1.6, evs
    result = json.loads(evs[-1][2])
    assert [o for o in result["kernel"]["outputs"] if o["output_type"] != "stream"] == [d for n, d in told
                                                                                      if n == "display"], result


def test_a_background_process_lives_in_the_session_and_dies_with_it():
    sid = create()["id"]
    r = step_ok(sid, "import subprocess\np = subprocess.Popen(['sleep', '300'])\nprint(p.pid)")
    pid = r["run"]["stdout"].strip()
    r = step_ok(sid, f"import os\nprint(os.path.exists('/proc/{pid}'))")
    assert r["run"]["stdout"] == "True\n", r
    assert delete(sid) == 204
    assert gone_without_trace(sid)


def test_sessions_outlive_a_pool_restart(shell, kernel):
    step_ok(shell, "open('f', 'w').write('kept')")
    step_ok(kernel, "v = 'alive'")
    restart_pool()
    assert step_ok(shell, "print(open('f').read())")["run"]["stdout"] == "kept\n"
    assert step_ok(kernel, "v")["kernel"]["value"] == "'alive'"


def test_ceilings_on_sessions():
    with open(CONF) as f:
        shipped = f.read()
    try:
        with open(CONF, "w") as f:
            f.write(shipped.replace("  max: 16 ", "  max: 2 "))
        reload_pool()
        a, b = create()["id"], create()["id"]
        status, _, err = request("POST", "/v1/sessions", {"language": "python"})
        assert status == 429 and err["error"]["code"] == "too_many_sessions", err
        delete(a)
        status, _, err = request("POST", "/v1/sessions",
                                 {"language": "python", "limits": {"memoryBytes": 512 * 2**20}})
        assert status == 201, err
        delete(err["id"])
        delete(b)
    finally:
        with open(CONF, "w") as f:
            f.write(shipped)
        reload_pool()


def print_conf(conf=CONF):
    """What `isobox-fcgi --print-conf` says of a conf: {name: value}."""
    out = subprocess.run([os.path.join(PREFIX, "bin", "isobox-fcgi"), "--conf", conf, "--print-conf"],
                         check=True, capture_output=True, text=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def test_a_step_has_a_ceiling_of_its_own():
    """A step's wallTimeMs is clamped to sessions.maxStepMs, not to
    ceilings.wallTimeMs: here a run may take 2 s and a step 10 s. The
    bound the web server is given follows the conf."""
    with open(CONF) as f:
        shipped = f.read()
    changed, n = re.subn(r"(?m)^  wallTimeMs: 20000", "  wallTimeMs: 2000", shipped)
    changed, m = re.subn(r"(?m)^  maxStepMs: 300000", "  maxStepMs: 10000", changed)
    assert n == 1 and m == 1
    bound = int(print_conf()["answer_bound_ms"])
    try:
        with open(CONF, "w") as f:
            f.write(changed)
        reload_pool()
        # The step no longer bounds it (a volume's creation, 130 s, does now).
        assert int(print_conf()["answer_bound_ms"]) < bound - 250000
        status, _, r = request("POST", "/execute", {"language": "python", "code": "print(1)",
                                                    "limits": {"wallTimeMs": 4000}})
        assert status == 200 and r["limits"]["wallTimeMs"] == 2000, r
        s = create()
        try:
            # Longer than a run may take: it ends on its own (with room
            # for python's start on a loaded host).
            r = step_ok(s["id"], "import time; time.sleep(3); print('slept')", limits={"wallTimeMs": 10000})
            assert r["run"]["stdout"] == "slept\n" and not r["run"]["timedOut"], r
            assert r["limits"]["wallTimeMs"] == 10000 and r["run"]["durationMs"] >= 3000, r
            # Past the step's ceiling: clamped to it, and timed out there.
            r = step_ok(s["id"], "import time; time.sleep(30)", limits={"wallTimeMs": 60000})
            assert r["limits"]["wallTimeMs"] == 10000 and r["run"]["timedOut"], r
            assert 10000 <= r["run"]["durationMs"] < 20000, r
        finally:
            delete(s["id"])
    finally:
        with open(CONF, "w") as f:
            f.write(shipped)
        reload_pool()


def test_the_web_servers_wait_as_long_as_a_request_may_take():
    """The shipped configs' read timeouts cover the longest answer of the
    shipped conf (a session step), and pool.sh gives Caddy that bound:
    Caddy 2.6's read_timeout is one deadline for the whole answer."""
    bound_s = int(print_conf(os.path.join(REPO, "conf", "isobox.yaml"))["answer_bound_ms"]) / 1000
    assert bound_s > 300  # a step of maxStepMs (5 min) and its start
    deploy = os.path.join(REPO, "deploy")
    found = {}
    for path, pattern in [("caddy/Caddyfile", r"read_timeout \{\$ISOBOX_READ_TIMEOUT:(\d+)s\}"),
                          ("caddy/Caddyfile.cluster", r"(?m)^\t\tread_timeout (\d+)s$"),
                          ("nginx/isobox.conf", r"fastcgi_read_timeout (\d+)s;"),
                          ("apache/httpd.conf", r"(?m)^Timeout (\d+)$"),
                          ("apache/isobox-fcgi.conf", r"Define ISOBOX_READ_TIMEOUT (\d+)\n"),
                          ("apache/isobox-cgi.conf", r"CGIDScriptTimeout (\d+)"),
                          ("lighttpd/isobox-fcgi.conf", r'"read-timeout" => (\d+),'),
                          ("lighttpd/lighttpd.conf", r"server.max-write-idle = (\d+)")]:
        with open(os.path.join(deploy, path)) as f:
            found[path] = [int(v) for v in re.findall(pattern, f.read())]
    assert all(found.values()), found
    assert all(v >= bound_s for values in found.values() for v in values), (bound_s, found)
    # The running Caddy (deploy/pool.sh's) has the installed conf's bound.
    with open(os.path.join(RUN_DIR, "caddy.pid")) as f:
        pid = int(f.read())
    with open(f"/proc/{pid}/environ", "rb") as f:
        env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
    installed_s = -(-int(print_conf()["answer_bound_ms"]) // 1000)
    assert env.get(b"ISOBOX_READ_TIMEOUT") == f"{installed_s}s".encode(), env.get(b"ISOBOX_READ_TIMEOUT")


def command_output(sid, cid, **query):
    q = "&".join(f"{k}={v}" for k, v in query.items())
    status, _, r = request("GET", f"/v1/sessions/{sid}/commands/{cid}" + (f"?{q}" if q else ""))
    assert status == 200, r
    return r


def test_a_command_outlives_its_request_and_ends_with_the_session():
    """A background command answers at once, runs on beside steps (one
    that is interrupted does not take it), reads from an offset, and goes
    with its session."""
    s = create()
    sid = s["id"]
    try:
        t0 = time.monotonic()
        status, _, c = request("POST", f"/v1/sessions/{sid}/commands",
                               {"command": "echo started; i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.2; done"})
        assert status == 201 and c["running"] and time.monotonic() - t0 < 10, c
        cid = c["id"]
        assert wait_until(lambda: "tick 3" in command_output(sid, cid)["stdout"], 20)
        # The session takes steps meanwhile; a step stopped at its wall time takes only its own.
        assert step_ok(sid, "print('a step')")["run"]["stdout"] == "a step\n"
        r = step_ok(sid, "import time; time.sleep(30)", limits={"wallTimeMs": 1000})
        assert r["run"]["timedOut"], r
        first = command_output(sid, cid)
        assert first["running"] and first["exitCode"] is None and first["stdout"].startswith("started\ntick 1\n")
        assert wait_until(lambda: command_output(sid, cid, stdoutFrom=first["stdoutNext"])["stdout"], 10)
        later = command_output(sid, cid, stdoutFrom=first["stdoutNext"])
        assert later["stdoutFrom"] == first["stdoutNext"] and later["stdout"].startswith("tick "), later
        # Stopped by a signal: its end is read.
        assert request("POST", f"/v1/sessions/{sid}/commands/{cid}/signal", {"signal": "SIGTERM"})[0] == 204
        assert wait_until(lambda: not command_output(sid, cid)["running"], 10)
        ended = command_output(sid, cid)
        assert (ended["exitCode"], ended["signal"]) == (128 + signal.SIGTERM, "SIGTERM"), ended
        # One still running when the session is deleted goes with its sandbox.
        status, _, c2 = request("POST", f"/v1/sessions/{sid}/commands", {"args": ["sleep", "600"]})
        assert status == 201, c2
    finally:
        assert delete(sid) == 204
    assert gone_without_trace(sid)

