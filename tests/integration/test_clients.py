"""The dependency-free clients (clients/python, clients/js) against the
live service, streaming included."""
import json
import os
import subprocess
import sys
import time

import pytest

from conftest import URL

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "clients", "python"))

from isobox import Isobox, IsoboxError  # noqa: E402


def test_python_execute():
    box = Isobox(URL)
    r = box.execute("python", code="import sys\nprint(sys.stdin.read(), sys.argv[1:])",
                    stdin="in", args=["a b"], limits={"wallTimeMs": 5000})
    assert r["run"]["stdout"] == "in ['a b']\n" and r["limits"]["wallTimeMs"] == 5000


def test_python_files_and_runtimes():
    box = Isobox(URL, api_key="ignored-for-now")
    r = box.execute("ruby", files=[{"name": "main.rb", "content": "require_relative 'l'\nputs X"},
                                   {"name": "l.rb", "content": "X = 9"}])
    assert r["run"]["stdout"] == "9\n"
    names = {x["language"] for x in box.runtimes()["runtimes"]}
    assert {"python", "go", "java"} <= names


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
