"""isobox client: run untrusted code through an isobox server.

Standard library only (Python 3.8+).

    from isobox import Isobox
    box = Isobox("http://127.0.0.1:8090")
    print(box.execute("python", code="print(40 + 2)")["run"]["stdout"])   # 42

    for event in box.stream("python", code="print(1)"):
        print(event["event"], event["data"])

Sessions keep a sandbox between steps: its /workspace, and for a "kernel"
session (python) a live interpreter whose variables survive:

    with box.session("python", type="kernel") as s:
        s.exec("x = 41")
        print(s.exec("x + 1")["kernel"]["value"])                       # 42
        s.upload("data/in.bin", b"\\x00\\xff")
        print(s.download("data/in.bin"), s.files("data"))

Errors from the server raise IsoboxError with .status, .code and .message
(e.g. 409 session_busy, 404 session_not_found, 410 session_expired).
"""
import base64
import json
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["Isobox", "IsoboxError", "Session"]


class IsoboxError(Exception):
    """The server refused or could not run the request."""

    def __init__(self, status, code, message):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class Isobox:
    def __init__(self, url, api_key=None, timeout=120):
        self.url = url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout

    # -- public API ---------------------------------------------------------

    def execute(self, language, code=None, *, files=None, stdin=None, args=None,
                limits=None, network=None, version=None):
        """Run code and return the result dict ({"run": {...}, ...})."""
        body = self._body(language, code, files, stdin, args, limits, network, version)
        with self._open("POST", "/execute", body) as resp:
            return json.load(resp)

    def stream(self, language, code=None, *, files=None, stdin=None, args=None,
               limits=None, network=None, version=None):
        """Run code, yielding events as they happen:
        {"event": "stdout" | "stderr", "data": bytes},
        {"event": "compile", "data": {...}}, and last
        {"event": "result", "data": {...}} (or "error")."""
        body = self._body(language, code, files, stdin, args, limits, network, version)
        yield from self._stream("/execute", body)

    def runtimes(self):
        """The languages, versions and aliases the server offers."""
        with self._open("GET", "/runtimes") as resp:
            return json.load(resp)

    def session(self, language, type="shell", *, version=None, limits=None, network=None,
                idle_timeout_ms=None, max_lifetime_ms=None):
        """Create a session (POST /v1/sessions) and return it as a Session.
        type "kernel" (python only) keeps a live interpreter between steps;
        "shell" runs each step as a new program in the same /workspace.
        limits: memoryBytes, cpus, pids (the per-step ones go to exec)."""
        body = {"language": language, "type": type}
        for key, value in (("version", version), ("limits", limits), ("network", network),
                           ("idleTimeoutMs", idle_timeout_ms), ("maxLifetimeMs", max_lifetime_ms)):
            if value is not None:
                body[key] = value
        with self._open("POST", "/v1/sessions", body) as resp:
            return Session(self, json.load(resp))

    def attach(self, session_id):
        """The Session of an existing session id (GET /v1/sessions/{id})."""
        with self._open("GET", "/v1/sessions/" + _quote(session_id)) as resp:
            return Session(self, json.load(resp))

    def sessions(self):
        """The live sessions, as Session JSON dicts."""
        with self._open("GET", "/v1/sessions") as resp:
            return json.load(resp)["sessions"]

    # -- plumbing -------------------------------------------------------------

    @staticmethod
    def _body(language, code, files, stdin, args, limits, network, version):
        body = {"language": language}
        for key, value in (("code", code), ("files", files), ("stdin", stdin), ("args", args),
                           ("limits", limits), ("network", network), ("version", version)):
            if value is not None:
                body[key] = value
        return body

    def _stream(self, path, body):
        with self._open("POST", path, body, accept="text/event-stream") as resp:
            for name, data in _sse_events(resp):
                value = json.loads(data)
                if name in ("stdout", "stderr"):
                    value = value["data"].encode() if "data" in value else base64.b64decode(value["base64"])
                yield {"event": name, "data": value}

    def _open(self, method, path, body=None, accept="application/json", data=None,
              content_type=None):
        """body: JSON to send; data: raw bytes to send instead."""
        headers = {"Accept": accept}
        if body is not None:
            data = json.dumps(body).encode()
            content_type = "application/json"
        if content_type:
            headers["Content-Type"] = content_type
        if self.api_key:
            headers["Authorization"] = "Bearer " + self.api_key
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            return urllib.request.urlopen(req, timeout=self.timeout)
        except urllib.error.HTTPError as err:
            raw = err.read()
            try:
                e = json.loads(raw)["error"]
                raise IsoboxError(err.code, e.get("code", "error"), e.get("message", "")) from None
            except (ValueError, KeyError, TypeError):
                raise IsoboxError(err.code, "http_error", raw.decode(errors="replace")[:200]) from None


class Session:
    """A session on the server: one sandbox kept between steps. Made by
    Isobox.session(); close() (or leaving a `with` block) deletes it."""

    def __init__(self, client, info):
        self._client = client
        self.info = info
        self.id = info["id"]
        self._path = "/v1/sessions/" + _quote(self.id)

    def __repr__(self):
        return f"<isobox.Session {self.id} {self.info.get('language')} {self.info.get('type')}>"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def exec(self, code=None, *, files=None, stdin=None, args=None, limits=None):
        """Run one step; return the result dict ({"run", "session", and for a
        kernel "kernel": {"value", "error", "images", "restarted"}}).
        limits: wallTimeMs, outputBytes. A kernel step takes code only."""
        with self._client._open("POST", self._path + "/exec",
                                self._body(code, files, stdin, args, limits)) as resp:
            return json.load(resp)

    def stream(self, code=None, *, files=None, stdin=None, args=None, limits=None):
        """Run one step, yielding events as Isobox.stream does."""
        yield from self._client._stream(self._path + "/exec",
                                        self._body(code, files, stdin, args, limits))

    def upload(self, path, data):
        """Write a file (bytes, or str as UTF-8) at path under /workspace,
        making its directories; returns {"path", "size"}."""
        if isinstance(data, str):
            data = data.encode()
        with self._client._open("PUT", self._file(path), data=bytes(data),
                                content_type="application/octet-stream") as resp:
            return json.load(resp)

    def download(self, path):
        """The bytes of the file at path under /workspace."""
        with self._client._open("GET", self._file(path), accept="application/octet-stream") as resp:
            return resp.read()

    def files(self, path=None):
        """The entries of a directory under /workspace (default: itself):
        [{"name", "type": "file"|"directory"|"link"|"other", "size", "mtime"}]."""
        query = "" if path is None else "?" + urllib.parse.urlencode({"path": path})
        with self._client._open("GET", self._path + "/files" + query) as resp:
            return json.load(resp)["entries"]

    def remove(self, path):
        """Delete a file, a link, or a directory with all it holds."""
        self._client._open("DELETE", self._file(path)).close()

    def refresh(self):
        """Fetch the session's state again (GET); returns and keeps .info."""
        with self._client._open("GET", self._path) as resp:
            self.info = json.load(resp)
        return self.info

    def close(self):
        """Delete the session and its sandbox. A session already gone (404,
        410) is not an error: closing twice is fine. A passing failure (no
        answer, 502, 503, 504) is tried again twice before it raises."""
        for attempt in range(3):
            try:
                self._client._open("DELETE", self._path).close()
                return
            except IsoboxError as err:
                if err.status in (404, 410):
                    return
                if err.status not in (502, 503, 504) or attempt == 2:
                    raise
            except urllib.error.URLError:
                if attempt == 2:
                    raise
            time.sleep(0.5 * (attempt + 1))

    @staticmethod
    def _body(code, files, stdin, args, limits):
        body = {}
        for key, value in (("code", code), ("files", files), ("stdin", stdin), ("args", args),
                           ("limits", limits)):
            if value is not None:
                body[key] = value
        return body

    def _file(self, path):
        return self._path + "/files/" + _quote(path)


def _quote(path):
    """Percent-encode each segment of a path, keeping the "/" between them."""
    return urllib.parse.quote(path, safe="/")


def _sse_events(resp):
    """(event name, data) pairs from a text/event-stream response."""
    name, data = "message", []
    for raw in resp:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data:
                yield name, "\n".join(data)
            name, data = "message", []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
