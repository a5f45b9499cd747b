"""The dependency-free clients (clients/python, clients/js) against the
live service, streaming and sessions included. Every session a test creates
is deleted, whatever the test's outcome (context managers, finally)."""
import json
import os
import re
import subprocess
import sys
import time

import pytest

from conftest import URL, request
from tenants_util import new_key, reload_pool, tenants_file

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "clients", "python"))

from isobox import Isobox, IsoboxError  # noqa: E402


def test_python_execute():
    box = Isobox(URL)
    r = box.execute("python", code="import sys\nprint(sys.stdin.read(), sys.argv[1:])",
                    stdin="in", args=["a b"], limits={"wallTimeMs": 5000})
    assert r["run"]["stdout"] == "in ['a b']\n" and r["limits"]["wallTimeMs"] == 5000


def test_python_files_and_runtimes_with_a_key():
    with tenants_file("tenants: {}\n"):
        key, _ = new_key("clients")
        reload_pool()
        box = Isobox(URL, api_key=key)
        r = box.execute("ruby", files=[{"name": "main.rb", "content": "require_relative 'l'\nputs X"},
                                       {"name": "l.rb", "content": "X = 9"}])
        assert r["run"]["stdout"] == "9\n"
        names = {x["language"] for x in box.runtimes()["runtimes"]}
        assert {"python", "go", "java"} <= names
        # The key is sent: a wrong one is refused, even from loopback.
        with pytest.raises(IsoboxError) as err:
            Isobox(URL, api_key=key[:-1] + ("0" if key[-1] != "0" else "1")).runtimes()
        assert err.value.status == 401 and err.value.code == "unauthorized"


def test_python_stream_yields_events_as_they_happen():
    box = Isobox(URL)
    seen = []
    start = time.monotonic()
    for ev in box.stream("python", code="import time, sys\nfor i in range(2):\n"
                                        "    print(i, flush=True); time.sleep(1)\n"
                                        "sys.stdout.buffer.write(b'\\xff')"):
        seen.append((time.monotonic() - start, ev["event"], ev["data"]))
    outs = [(t, d) for t, e, d in seen if e == "stdout"]
    assert [d for _, d in outs] == [b"0\n", b"1\n", b"\xff"]
    assert 0.7 <= outs[1][0] - outs[0][0] <= 1.6
    assert seen[-1][1] == "result" and seen[-1][2]["run"]["exitCode"] == 0


def test_python_typed_errors():
    box = Isobox(URL)
    with pytest.raises(IsoboxError) as err:
        box.execute("nope", code="1")
    assert err.value.status == 404 and err.value.code == "unknown_language"
    with pytest.raises(IsoboxError) as err:
        list(box.stream("python", code=""))
    assert err.value.status == 400 and err.value.code == "empty_code"


def test_js_client():
    out = subprocess.run(["node", os.path.join(REPO, "tests", "integration", "clients", "js_check.mjs"), URL],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["execute"] == "in ['a b']\n"
    stdout = [e for e in got["events"] if e["event"] == "stdout"]
    assert [e["data"] for e in stdout] == [[48, 10], [49, 10], [255]]
    assert 700 <= stdout[1]["at"] - stdout[0]["at"] <= 1600
    assert got["events"][-1]["event"] == "result"
    assert "python" in got["runtimes"]
    assert got["error"] == [404, "unknown_language"]
    assert got["files"] == "7\n"


# -- sessions -----------------------------------------------------------------

# Every test deletes its sessions; should the service be unable to take the
# DELETE (restarting), they still end soon: idle for two minutes.
IDLE = 120000


def test_python_kernel_session_keeps_variables():
    box = Isobox(URL)
    with box.session("python", type="kernel", idle_timeout_ms=IDLE) as s:
        assert re.fullmatch(r"main-[0-9a-f]{32}", s.id) and s.info["type"] == "kernel" and s.info["state"] == "idle"
        first = s.exec("x = 41\nprint('set')")
        assert first["run"]["stdout"] == "set\n" and first["kernel"]["value"] is None
        second = s.exec("x + 1")
        assert second["kernel"]["value"] == "42" and second["session"]["id"] == s.id
        failed = s.exec("y")
        assert failed["run"]["exitCode"] == 1 and failed["kernel"]["error"]["name"] == "NameError"
        assert s.refresh()["steps"] == 3 and s.info["steps"] == 3
        with pytest.raises(IsoboxError) as err:
            s.exec(files=[{"name": "main.py", "content": "1"}])
        assert err.value.status == 400 and err.value.code == "invalid_request"


def test_python_shell_session_files_are_byte_exact():
    box = Isobox(URL)
    data = bytes(range(256))
    name = "data/all bytes #?ü.bin"          # each needs percent-encoding
    with box.session("python", idle_timeout_ms=IDLE) as s:
        assert s.upload(name, data) == {"path": name, "size": 256}
        assert s.upload("data/text.txt", "héllo\n")["size"] == 7
        assert s.download(name) == data
        assert s.download("data/text.txt") == "héllo\n".encode()
        entries = {e["name"]: e for e in s.files("data")}
        assert set(entries) == {"all bytes #?ü.bin", "text.txt"}
        assert entries["all bytes #?ü.bin"]["type"] == "file" and entries["all bytes #?ü.bin"]["size"] == 256
        assert [(e["name"], e["type"]) for e in s.files()] == [("data", "directory")]
        # The step sees the same bytes, and what it writes comes back out.
        r = s.exec(f"d = open({name!r}, 'rb').read()\nprint(d == bytes(range(256)))\n"
                   "open('out.bin', 'wb').write(d[::-1])")
        assert r["run"]["stdout"] == "True\n", r
        assert s.download("out.bin") == data[::-1]
        s.remove("data/text.txt")
        assert [e["name"] for e in s.files("data")] == ["all bytes #?ü.bin"]
        with pytest.raises(IsoboxError) as err:
            s.download("data/text.txt")
        assert err.value.status == 404 and err.value.code == "file_not_found"
        s.remove("data")
        assert sorted(e["name"] for e in s.files()) == ["main.py", "out.bin"]


def test_python_session_stream_yields_stdout_then_result():
    box = Isobox(URL)
    with box.session("python", type="kernel", idle_timeout_ms=IDLE) as s:
        s.exec("n = 5")
        seen = []
        start = time.monotonic()
        for ev in s.stream("import time\nprint('a', flush=True)\ntime.sleep(1)\nprint('b')\nn * 2"):
            seen.append((time.monotonic() - start, ev["event"], ev["data"]))
        assert [e for _, e, _ in seen] == ["stdout", "stdout", "result"], seen
        assert [d for _, e, d in seen if e == "stdout"] == [b"a\n", b"b\n"]
        assert seen[1][0] - seen[0][0] >= 0.7        # the first came before the sleep
        result = seen[-1][2]
        assert result["kernel"]["value"] == "10" and result["session"]["id"] == s.id


def test_python_session_context_manager_deletes_it():
    box = Isobox(URL)
    with box.session("python", idle_timeout_ms=60000, limits={"memoryBytes": 128 << 20}) as s:
        sid = s.id
        assert s.info["idleTimeoutMs"] == 60000 and s.info["limits"]["memoryBytes"] == 128 << 20
        assert sid in {x["id"] for x in box.sessions()}
        assert box.attach(sid).info["id"] == sid
    status, _, body = request("GET", f"/v1/sessions/{sid}")
    assert status == 404 and body["error"]["code"] == "session_not_found"
    # ...even when the block raises.
    with pytest.raises(ZeroDivisionError):
        with box.session("python", idle_timeout_ms=IDLE) as s:
            sid = s.id
            1 / 0
    assert request("GET", f"/v1/sessions/{sid}")[0] == 404


def test_python_session_errors_are_typed():
    box = Isobox(URL)
    s = box.session("python", idle_timeout_ms=IDLE)
    try:
        # One request at a time: a second one while a step runs is refused at once.
        events = s.stream("import time\nprint('go', flush=True)\ntime.sleep(2)")
        assert next(events)["event"] == "stdout"
        with pytest.raises(IsoboxError) as err:
            s.exec("print(1)")
        assert err.value.status == 409 and err.value.code == "session_busy"
        assert [e["event"] for e in events] == ["result"]
    finally:
        s.close()
    s.close()                                   # closing twice is fine
    with pytest.raises(IsoboxError) as err:
        s.exec("print(1)")
    assert err.value.status == 404 and err.value.code == "session_not_found"
    with pytest.raises(IsoboxError) as err:
        s.upload("a", b"x")
    assert err.value.status == 404
    with pytest.raises(IsoboxError) as err:
        box.session("ruby", type="kernel").close()           # close: should it exist
    assert err.value.status == 400 and err.value.code == "invalid_value"
    with pytest.raises(IsoboxError) as err:
        box.session("python", limits={"wallTimeMs": 1000}).close()
    assert err.value.status == 400 and err.value.code == "invalid_request"


def test_js_client_sessions():
    proc = subprocess.Popen(["node", os.path.join(REPO, "tests", "integration", "clients", "js_sessions.mjs"), URL],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout = stderr = ""
    try:
        try:
            stdout, stderr = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        assert proc.returncode == 0, stdout + stderr
        ids = [line.split()[1] for line in stderr.splitlines() if line.startswith("session ")]
        got = json.loads(stdout)
        assert got["kernelInfo"]["type"] == "kernel" and got["kernelInfo"]["isSession"]
        assert got["kernel"] == {"stdout": "set\n", "value": "42", "session": got["kernelInfo"]["id"]}
        assert got["kernelError"] == "NameError"
        assert got["stream"] == ["stdout", "result"] and got["streamStdout"] == "a\n"
        assert got["streamValue"] == "82"
        assert got["runningFirst"] == "stdout" and got["busy"] == [409, "session_busy"]
        assert got["runningLast"] == "result"
        assert got["upload"] == {"path": "data/all bytes #?.bin", "size": 256}
        assert got["download"] == {"isUint8Array": True, "exact": True}
        assert got["text"] == "héllo\n"
        assert got["files"] == [["all bytes #?.bin", "file", 256], ["text.txt", "file", 7]]
        assert got["top"] == [["data", "directory"]]
        assert got["seenInside"] == "True ['a']\n"
        assert got["afterRemove"] == ["all bytes #?.bin"]
        assert got["missing"] == [404, "file_not_found"]
        assert got["info"] == 1
        assert got["afterDispose"] == [404, "session_not_found"]
        assert got["execClosed"] == [404, "session_not_found"]
        assert got["closeTwice"] == "none"
        assert got["badKernel"] == [400, "invalid_value"]
        assert len(ids) == 2
        for sid in ids:
            assert request("GET", f"/v1/sessions/{sid}")[0] == 404, sid
    finally:
        # If the script died before its own clean-up: the ids it announced.
        for line in stderr.splitlines():
            if line.startswith("session "):
                request("DELETE", f"/v1/sessions/{line.split()[1]}")
