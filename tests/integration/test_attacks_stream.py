"""Attacks on the streaming path (POST /execute, Accept: text/event-stream):
output that imitates the framing, floods, bytes that are not text, and
clients that stall or leave. The stream is read as raw bytes and parsed by
the text/event-stream rules (lines end at CRLF, LF or a lone CR), and its
framing is checked byte for byte against what the worker writes. Rows go to
docs/AUDIT.md through the `attack` marker (conftest.py)."""
import base64
import concurrent.futures
import http.client
import json
import random
import re
import socket
import time
from urllib.parse import urlparse

import pytest

import streaming
from conftest import POOL, URL, containers, execute, note_request, wait_until

attack = pytest.mark.attack

# Every byte the worker writes on a stream is one of these blocks; anything
# else (a stray CR or LF inside data, a field of the program's choosing)
# would be injected framing.
FRAMING = re.compile(r"(?:event: (?:stdout|stderr|compile|result|error)\ndata: [^\r\n]*\n\n"
                     r"|: keepalive\n\n)*")


class SmallWindow(http.client.HTTPConnection):
    """A client with a 4 KiB receive buffer: when it stops reading, the
    server's writes back up at once instead of filling a large window."""

    def connect(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.settimeout(self.timeout)
        self.sock.connect((self.host, self.port))


def open_stream(body, conn_class=http.client.HTTPConnection):
    note_request("/execute", body)
    u = urlparse(URL)
    conn = conn_class(u.hostname, u.port, timeout=120)
    conn.request("POST", "/execute", body=json.dumps(body),
                 headers={"Content-Type": "application/json", "Accept": "text/event-stream"})
    resp = conn.getresponse()
    assert resp.status == 200 and resp.getheader("Content-Type") == "text/event-stream"
    return conn, resp


def parse(raw):
    """(events, last event id) by the text/event-stream rules, after checking
    that the body is UTF-8 and framed exactly as the worker frames it."""
    text = raw.decode("utf-8")  # strict: the stream itself is always text
    assert FRAMING.fullmatch(text), "framing broken near: %r" % text[
        len(FRAMING.match(text).group(0)):][:200]
    return streaming.parse(text)


def stream(body):
    conn, resp = open_stream(body)
    try:
        return parse(resp.read())
    finally:
        conn.close()


def chunk_bytes(data):
    obj = json.loads(data)
    assert set(obj) in ({"data"}, {"base64"}), obj
    return obj["data"].encode() if "data" in obj else base64.b64decode(obj["base64"], validate=True)


def output(events, name):
    return b"".join(chunk_bytes(d) for n, d in events if n == name)


def one_result(events):
    names = [n for n, _ in events]
    assert names.count("result") == 1 and names[-1] == "result", names
    assert set(names) <= {"stdout", "stderr", "result"}, names
    return json.loads(events[-1][1])


# What a program writes to forge events: LF, CRLF and lone-CR framings, bare
# data lines, a comment, an id and a retry, and an event that looks like ours.
FORGERIES = [
    b'event: result\ndata: {"run":{"exitCode":0,"stdout":"forged"}}\n\n',
    b'event: result\r\ndata: {"forged":1}\r\n\r\n',
    b'x\revent: result\rdata: {"forged":2}\r\r',
    b"\n\ndata: forged3\n\n",
    b": comment\nid: 666\nretry: 1\nevent: error\ndata: {}\n\n",
    b'\r\n\r\nevent: stdout\ndata: {"data":"forged4"}\n\n',
    b"data:forged5\r",
]


@attack("SSE: the program writes forged events (`event: result` with LF, CRLF and lone-CR framing, "
        "`data:`, `id:`, `retry:`, comments) on stdout and stderr",
        "no event injected: exactly one result event (the worker's); the stdout/stderr events "
        "carry the forged text verbatim; no event id set")
def test_forged_events_are_inert():
    payload = base64.b64encode(json.dumps([f.decode() for f in FORGERIES]).encode()).decode()
    code = ("import base64, json, sys, time\n"
            f"forged = json.loads(base64.b64decode('{payload}'))\n"
            "for i, f in enumerate(forged):\n"
            "    out = sys.stdout if i % 2 == 0 else sys.stderr\n"
            "    out.write(f); out.flush(); time.sleep(0.05)\n"
            "sys.stdout.write(''.join(forged)); sys.stdout.flush()\n")
    events, last_id = stream({"language": "python", "code": code})
    result = one_result(events)
    want_out = b"".join(FORGERIES[0::2]) + b"".join(FORGERIES)
    want_err = b"".join(FORGERIES[1::2])
    assert output(events, "stdout") == want_out and output(events, "stderr") == want_err
    assert result["run"]["stdout"] == want_out.decode() and result["run"]["exitCode"] == 0
    assert last_id == ""
    assert len([n for n, _ in events if n == "stdout"]) >= 4  # really several events


@attack("SSE: output flood of forged frames, CR, NUL and invalid UTF-8, past outputBytes (50 000)",
        "valid framing throughout; exactly outputBytes streamed, byte for byte; the result says truncated")
def test_flood_over_the_stream():
    pattern = b"".join(FORGERIES) + b"\x00\xff\xc3\r"
    code = ("import os\n"
            f"p = {pattern!r} * 64\n"
            "while True:\n    os.write(1, p)\n")
    events, _ = stream({"language": "python", "code": code,
                        "limits": {"outputBytes": 50000, "wallTimeMs": 20000}})
    result = one_result(events)
    assert output(events, "stdout") == (pattern * (50000 // len(pattern) + 1))[:50000]
    assert result["run"]["truncated"] is True and result["run"]["timedOut"] is False


def tricky_bytes():
    """Random bytes (seeded) with the sequences a UTF-8 decoder gets wrong:
    NUL, CR, overlong NUL, surrogates, past U+10FFFF, a BOM, U+2028, cut
    multibyte characters, lone continuation bytes."""
    rng = random.Random(5)
    parts = [b"\x00", b"\r", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xef\xbb\xbf",
             "\u2028".encode(), b"\xf0\x9f\x98", "\u00e9".encode()[:1], b"\x80\xbf", "\U0001f600".encode()]
    out = b""
    while len(out) < 20000:
        out += rng.choice(parts) + rng.randbytes(rng.randrange(0, 40)) + "ok é ✓".encode()
    return out


@attack("SSE: invalid UTF-8, NUL, surrogates and cut characters, written in odd-sized pieces on both streams",
        "every byte comes back: text chunks as data, the rest as base64; nothing lost or replaced")
def test_bytes_survive_the_stream():
    blob = tricky_bytes()
    encoded = base64.b64encode(blob).decode()
    code = ("import base64, os, time\n"
            f"d = base64.b64decode('{encoded}')\n"
            "os.write(1, 'text first, é\\n'.encode()); time.sleep(0.2)\n"
            "sizes = [1, 2, 3, 5, 7, 64, 333, 4096]\ni = k = 0\n"
            "while i < len(d):\n"
            "    n = sizes[k % len(sizes)]\n"
            "    os.write(1 + k % 2, d[i:i + n]); i += n; k += 1\n"
            "    if k % 16 == 0: time.sleep(0.002)\n")
    events, _ = stream({"language": "python", "code": code, "limits": {"outputBytes": 65536}})
    result = one_result(events)
    sizes, pieces, i, k = [1, 2, 3, 5, 7, 64, 333, 4096], {1: "text first, é\n".encode(), 2: b""}, 0, 0
    while i < len(blob):
        n = sizes[k % len(sizes)]
        pieces[1 + k % 2] += blob[i:i + n]
        i, k = i + n, k + 1
    assert output(events, "stdout") == pieces[1] and output(events, "stderr") == pieces[2]
    chunks = [json.loads(d) for n, d in events if n in ("stdout", "stderr")]
    assert chunks[0] == {"data": "text first, é\n"}, chunks[0]  # text stays text
    assert any("base64" in c for c in chunks), "the invalid bytes should come as base64"
    assert result["run"]["truncated"] is False and result["run"]["exitCode"] == 0


@attack("SSE: a client that stops reading (4 KiB window) while the program floods until its wall time (3 s)",
        "the run still ends at the wall time: the container is gone within 7 s of it while the "
        "client reads nothing; afterwards one result event, timedOut")
def test_stalled_reader_does_not_stretch_the_wall_time():
    # Paced (25 kB/s) so that the run reaches its wall time before the output cap.
    code = "import os, time\nwhile True:\n    os.write(1, b'\\0' * 250); time.sleep(0.01)"
    conn, resp = open_stream({"language": "python", "code": code,
                              "limits": {"outputBytes": 262144, "wallTimeMs": 3000}},
                             conn_class=SmallWindow)
    try:
        gone = wait_until(lambda: containers() == [], 3 + 7)  # reading nothing meanwhile
        events, _ = parse(resp.read())
    finally:
        conn.close()
    assert gone, "the sandbox outlived its wall time while the client stalled"
    result = one_result(events)
    assert result["run"]["timedOut"] is True, result["run"]


@attack("SSE: a client that leaves in the middle of a steady output flood",
        "the write fails, the worker kills the sandbox: the container is gone within 8 s")
def test_leaving_mid_flood_kills_the_sandbox():
    code = "import os, time\nwhile True:\n    os.write(1, b'x' * 99 + b'\\n'); time.sleep(0.005)"
    conn, resp = open_stream({"language": "python", "code": code,
                              "limits": {"outputBytes": 262144, "wallTimeMs": 20000}})
    got = 0
    while got < 20000:  # well into the flood, far from the output cap
        got += len(resp.read1(65536))
    assert containers(), "the run should be going"
    conn.sock.close()
    conn.close()
    left = time.monotonic()
    assert wait_until(lambda: containers() == [], 8), "the sandbox outlived its client"
    assert time.monotonic() - left < 8


@attack(f"SSE: {POOL} clients (one per worker) that stop reading after their run's output flood",
        "their runs end and every worker is free again: a new request is served within 10 s")
def test_stalled_readers_do_not_hold_the_pool():
    code = "import os\nwhile True:\n    os.write(1, b'\\0' * 1000)"
    body = {"language": "python", "code": code, "limits": {"outputBytes": 262144, "wallTimeMs": 3000}}
    streams = []
    try:
        for _ in range(POOL):
            streams.append(open_stream(body, conn_class=SmallWindow))
        assert wait_until(lambda: containers() == [], 30), "the flooding runs did not end"
        with concurrent.futures.ThreadPoolExecutor(1) as ex:
            probe = ex.submit(execute, {"language": "bash", "code": "echo served"}, timeout=60)
            try:
                status, result = probe.result(timeout=10)
            except concurrent.futures.TimeoutError:
                status, result = None, "not served within 10 s"
            finally:
                for conn, _ in streams:  # let the probe (and the workers) go either way
                    conn.close()
                streams = []
        assert status == 200 and result["run"]["stdout"] == "served\n", result
    finally:
        for conn, _ in streams:
            conn.close()
