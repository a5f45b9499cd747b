"""POST /execute with Accept: text/event-stream, through Caddy."""
import json
import os
import subprocess
import time

import streaming
from conftest import URL, containers, wait_until
from streaming import SPACED_CODE, chunk_bytes, events, gaps, stdout_arrivals


def open_stream(body):
    return streaming.open_stream(body, URL)


def collect(body):
    return streaming.collect(body, URL)


def test_events_arrive_as_they_happen():
    resp, evs = collect({"language": "python", "code": SPACED_CODE})
    assert resp.getheader("Content-Type") == "text/event-stream"
    assert resp.getheader("Cache-Control") == "no-cache"
    assert resp.getheader("X-Accel-Buffering") == "no"
    out = stdout_arrivals(evs)
    assert [text for _, text in out] == ["line 0\n", "line 1\n", "line 2\n"]
    assert all(0.7 <= g <= 1.6 for g in gaps(out)), gaps(out)
    assert evs[-1][1] == "result"
    result = json.loads(evs[-1][2])
    assert result["run"]["stdout"] == "line 0\nline 1\nline 2\n"
    assert result["run"]["exitCode"] == 0 and result["backend"] == "gvisor"
    assert set(result["run"]) == {"stdout", "stderr", "exitCode", "signal", "timedOut", "oomKilled",
                                  "truncated", "durationMs", "cpuTimeMs", "peakMemoryBytes"}


def test_stdout_and_stderr_are_separate_events():
    code = "import sys\nprint('o', flush=True)\nprint('e', file=sys.stderr, flush=True)\nsys.exit(4)"
    _, evs = collect({"language": "python", "code": code})
    names = [(n, json.loads(d).get("data")) for _, n, d in evs if n in ("stdout", "stderr")]
    assert ("stdout", "o\n") in names and ("stderr", "e\n") in names
    assert json.loads(evs[-1][2])["run"]["exitCode"] == 4


def test_bytes_survive_losslessly():
    code = ("import sys, time\nw = sys.stdout.buffer\n"
            "w.write(b'a\\x00b\\nc'); w.flush(); time.sleep(0.3)\n"
            "w.write(b'\\xff\\xfe raw'); w.flush(); time.sleep(0.3)\n"
            "w.write(b'\\xc3'); w.flush(); time.sleep(0.3)\n"   # half of 'é'
            "w.write(b'\\xa9!'); w.flush()\n")
    _, evs = collect({"language": "python", "code": code})
    chunks = [d for _, n, d in evs if n == "stdout"]
    data = b"".join(chunk_bytes(d) for d in chunks)
    assert data == b"a\x00b\nc\xff\xfe raw\xc3\xa9!"
    assert {"data": "a\u0000b\nc"} in [json.loads(d) for d in chunks]
    # The cut 'é' is held back and sent whole, as text.
    assert any(json.loads(d).get("data", "").startswith("\u00e9") for d in chunks), chunks


def test_output_cap_counts_streamed_bytes():
    code = "import sys\nwhile True:\n    sys.stdout.write('z' * 1000); sys.stdout.flush()"
    _, evs = collect({"language": "python", "code": code,
                      "limits": {"outputBytes": 5000, "wallTimeMs": 10000}})
    streamed = sum(len(chunk_bytes(d)) for _, n, d in evs if n in ("stdout", "stderr"))
    result = json.loads(evs[-1][2])
    assert streamed <= 5000 and result["run"]["truncated"] is True
    assert result["run"]["timedOut"] is False


def test_wall_time_applies_to_streams():
    _, evs = collect({"language": "python", "code": "import time\ntime.sleep(30)",
                      "limits": {"wallTimeMs": 1500}})
    result = json.loads(evs[-1][2])
    assert evs[-1][1] == "result" and result["run"]["timedOut"] is True


def test_errors_before_the_run_are_plain_json():
    conn, resp = open_stream({"language": "nope", "code": "1"})
    try:
        assert resp.status == 404
        assert resp.getheader("Content-Type") == "application/json"
        assert json.loads(resp.read())["error"]["code"] == "unknown_language"
    finally:
        conn.close()


def test_client_that_leaves_gets_its_sandbox_killed():
    conn, resp = open_stream({"language": "python", "limits": {"wallTimeMs": 20000},
                              "code": "import time\nprint('hi', flush=True)\ntime.sleep(20)"})
    first = next(events(resp))
    assert first[1] == "stdout"
    assert containers(), "the run should be going"
    conn.sock.close()
    conn.close()
    left = time.monotonic()
    assert wait_until(lambda: containers() == [], 10), "the sandbox outlived its client"
    assert time.monotonic() - left < 10


def test_compiled_language_streams_a_compile_event_first():
    code = ('#include <stdio.h>\n#include <unistd.h>\n'
            'int main(void) { puts("one"); fflush(stdout); sleep(1); puts("two"); return 0; }')
    _, evs = collect({"language": "c", "code": code})
    names = [n for _, n, _ in evs]
    assert names[0] == "compile", names
    compile = json.loads(evs[0][2])
    assert compile["exitCode"] == 0 and set(compile) >= {"stdout", "stderr", "durationMs"}
    outs = [json.loads(d)["data"] for _, n, d in evs if n == "stdout"]
    assert outs == ["one\n", "two\n"]
    result = json.loads(evs[-1][2])
    assert evs[-1][1] == "result" and result["compile"]["exitCode"] == 0
    assert result["run"]["stdout"] == "one\ntwo\n"


def test_failed_compile_streams_diagnostics_and_no_run():
    _, evs = collect({"language": "c", "code": "int main(void) { return nope; }"})
    assert [n for _, n, _ in evs] == ["compile", "result"]
    assert "nope" in json.loads(evs[0][2])["stderr"]
    assert "run" not in json.loads(evs[1][2])


def test_a_parser_no_one_here_wrote_reads_the_stream():
    """The npm package eventsource-parser (installed by `make test`) parses
    the stream as a browser's EventSource would."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sse")
    code = ("import sys, time\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(1)\n"
            "sys.stderr.write('multi\\nline\\n')\nsys.stdout.buffer.write(b'\\x00\\xff')")
    body = json.dumps({"language": "python", "code": code})
    out = subprocess.run(["node", os.path.join(here, "parse.mjs"), URL, body],
                         capture_output=True, text=True, timeout=60, cwd=here)
    assert out.returncode == 0, out.stderr
    parsed = json.loads(out.stdout)
    assert parsed["status"] == 200 and parsed["type"] == "text/event-stream"
    evs = parsed["events"]
    ticks = [e for e in evs if e["event"] == "stdout" and "tick" in e["data"]]
    assert [json.loads(e["data"])["data"] for e in ticks] == ["tick 0\n", "tick 1\n", "tick 2\n"]
    gaps = [b["at"] - a["at"] for a, b in zip(ticks, ticks[1:])]
    assert all(700 <= g <= 1600 for g in gaps), gaps
    err = [json.loads(e["data"]) for e in evs if e["event"] == "stderr"]
    assert err == [{"data": "multi\nline\n"}]
    raw = [json.loads(e["data"]) for e in evs if e["event"] == "stdout" and "tick" not in e["data"]]
    assert raw == [{"base64": "AP8="}]
    assert evs[-1]["event"] == "result"
    assert json.loads(evs[-1]["data"])["run"]["stdout"] == "tick 0\ntick 1\ntick 2\n\u0000\ufffd"
