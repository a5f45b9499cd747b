"""isobox client: run untrusted code through an isobox server.

Standard library only (Python 3.8+).

    from isobox import Isobox
    box = Isobox("http://127.0.0.1:8090")
    print(box.execute("python", code="print(40 + 2)")["run"]["stdout"])   # 42

    for event in box.stream("python", code="print(1)"):
        print(event["event"], event["data"])

Errors from the server raise IsoboxError with .status, .code and .message.
"""
import base64
import json
import urllib.error
import urllib.request

__all__ = ["Isobox", "IsoboxError"]


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
        with self._open("POST", "/execute", body, accept="text/event-stream") as resp:
            for name, data in _sse_events(resp):
                value = json.loads(data)
                if name in ("stdout", "stderr"):
                    value = value["data"].encode() if "data" in value else base64.b64decode(value["base64"])
                yield {"event": name, "data": value}

    def runtimes(self):
        """The languages, versions and aliases the server offers."""
        with self._open("GET", "/runtimes") as resp:
            return json.load(resp)

    # -- plumbing -------------------------------------------------------------

    @staticmethod
    def _body(language, code, files, stdin, args, limits, network, version):
        body = {"language": language}
        for key, value in (("code", code), ("files", files), ("stdin", stdin), ("args", args),
                           ("limits", limits), ("network", network), ("version", version)):
            if value is not None:
                body[key] = value
        return body

    def _open(self, method, path, body=None, accept="application/json"):
        headers = {"Accept": accept}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
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
