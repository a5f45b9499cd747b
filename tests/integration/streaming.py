"""Reading a Server-Sent Events response as it arrives (shared by
test_stream.py, test_webservers.py, test_runtime_behaviour.py, test_warm.py
and test_language_checks.py)."""
import base64
import http.client
import json
import re
import time
from urllib.parse import urlparse

import conftest  # the audit counts the runs of streams too


def open_stream(body, url, path="/execute", timeout=60):
    """POST body as JSON with Accept: text/event-stream; return (connection,
    response) with the headers read and the body not yet."""
    conftest.note_request(path, body)
    u = urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    conn.request("POST", u.path.rstrip("/") + path, body=json.dumps(body),
                 headers={"Content-Type": "application/json", "Accept": "text/event-stream"})
    return conn, conn.getresponse()


class Parser:
    """The text/event-stream rules, one line at a time: fields up to a blank
    line make an event; comments skipped; the last `id` remembered."""

    def __init__(self):
        self.name, self.data, self.last_id = "", [], ""

    def feed(self, line):
        """(name, data) when this line ends an event, else None."""
        if line == "":
            event = (self.name or "message", "\n".join(self.data)) if self.data else None
            self.name, self.data = "", []
            return event
        if not line.startswith(":"):
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                self.name = value
            elif field == "data":
                self.data.append(value)
            elif field == "id":
                self.last_id = value
        return None


def events(resp):
    """Yield (arrival time, event name, data) as each event arrives."""
    parser = Parser()
    while True:
        line = resp.readline()
        if not line:
            return
        event = parser.feed(line.decode().rstrip("\r\n"))
        if event and event[0] == "result":
            conftest.note_result(conftest.json_or_none(event[1]))
        if event:
            yield (time.monotonic(), *event)


def parse(text):
    """A whole body (lines end at CRLF, LF or a lone CR):
    ([(name, data), ...], last event id)."""
    parser = Parser()
    out = [e for e in map(parser.feed, re.split(r"\r\n|\r|\n", text)) if e]
    for name, data in out:
        if name == "result":
            conftest.note_result(conftest.json_or_none(data))
    return out, parser.last_id


def collect(body, url, path="/execute"):
    """The whole stream: (response, [(arrival time, name, data), ...])."""
    conn, resp = open_stream(body, url, path)
    try:
        assert resp.status == 200, resp.read()
        return resp, list(events(resp))
    finally:
        conn.close()


def chunk_bytes(data):
    """The bytes an stdout/stderr event carries (text or base64)."""
    obj = json.loads(data)
    return obj["data"].encode() if "data" in obj else base64.b64decode(obj["base64"])


# Three lines, a second apart: if anything between the worker and the
# client buffers, they arrive together at the end.
SPACED_CODE = "import time\nfor i in range(3):\n    print('line', i, flush=True)\n    time.sleep(1)"


def stdout_arrivals(evs):
    """[(arrival time, text)] of the stdout events."""
    return [(t, json.loads(d)["data"]) for t, name, d in evs if name == "stdout"]


def gaps(arrivals):
    return [b[0] - a[0] for a, b in zip(arrivals, arrivals[1:])]


def arrivals(evs, name="stdout"):
    """[(arrival time, line)] of each line, as of the event that ended it
    (an unbuffered runtime may write a line in pieces: OCaml's)."""
    out, part = [], ""
    for t, n, d in evs:
        if n == name:
            *done, part = (part + chunk_bytes(d).decode()).split("\n")
            out += [(t, line) for line in done]
    return out + ([(evs[-1][0], part)] if part else [])


def assert_spaced(what, evs):
    """The stream of a program that writes "line 0".."line 2" a second
    apart, never flushed by hand: it ran well and each line came as it was
    written (buffered output would come as one event at the exit: gaps of
    ~0 s). The result."""
    result = json.loads(evs[-1][2]) if evs[-1][1] == "result" else evs[-1]
    assert "run" in result and result["run"]["exitCode"] == 0, (what, result)
    lines = arrivals(evs)
    assert [text for _, text in lines] == ["line 0", "line 1", "line 2"], (what, lines)
    assert all(0.6 <= g <= 2.0 for g in gaps(lines)), (what, gaps(lines))
    return result
