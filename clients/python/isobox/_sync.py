"""The blocking client (urllib)."""
import http.client
import json
import socket
import time
import urllib.error
import urllib.request

from ._core import (DEFAULT_MAX_RETRY_WAIT, DEFAULT_RETRIES, DEFAULT_TIMEOUT, IsoboxError,
                    CLOSE_BACKOFF, CLOSE_TRIES, ClientBase, RetryBudget, SessionBase, SSEParser,
                    close_is_done, error_from_answer, execute_body, quote, request_parts,
                    session_body, step_body)


class Isobox(ClientBase):
    """A client of one isobox server.

    url: where it answers (with any path prefix), e.g. "http://127.0.0.1:8090".
    api_key: sent as "Authorization: Bearer ..." (none needed from loopback).
    timeout: seconds to wait for the server: to connect, for an answer, and
    between the events of a stream.
    retries, max_retry_wait: a request refused before it ran (429 but
    too_many_sessions, 503 busy) is sent again after the Retry-After the
    server asks for (1 s without one), at most `retries` times and at most
    `max_retry_wait` seconds of waiting in all; past either, or when the
    server asks for longer than is left, the refusal raises. retries=0:
    never."""

    def __init__(self, url, api_key=None, timeout=DEFAULT_TIMEOUT, retries=DEFAULT_RETRIES,
                 max_retry_wait=DEFAULT_MAX_RETRY_WAIT):
        super().__init__(url, api_key, timeout, retries, max_retry_wait)

    # -- public API ---------------------------------------------------------

    def execute(self, language, code=None, *, files=None, stdin=None, args=None, limits=None,
                network=None, version=None, outputs=None, volume=None, volume_read_only=None):
        """Run code (or files) and return the result dict ({"run": {...}, ...});
        succeeded(result) says whether the run went well."""
        return self._json("POST", "/execute", execute_body(
            language, code, files, stdin, args, limits, network, version, outputs, volume,
            volume_read_only))

    def stream(self, language, code=None, *, files=None, stdin=None, args=None, limits=None,
               network=None, version=None, outputs=None, volume=None, volume_read_only=None):
        """Run code, yielding events as they happen:
        {"event": "stdout" | "stderr", "data": bytes},
        {"event": "compile", "data": {...}}, and last
        {"event": "result", "data": {...}} (or "error")."""
        return self._stream("/execute", execute_body(
            language, code, files, stdin, args, limits, network, version, outputs, volume,
            volume_read_only))

    def runtimes(self):
        """The languages, versions and aliases the server offers."""
        return self._json("GET", "/runtimes")

    def session(self, language, type="shell", *, version=None, limits=None, network=None,
                idle_timeout_ms=None, max_lifetime_ms=None, volume=None, volume_read_only=None):
        """Create a session (POST /v1/sessions) and return it as a Session.
        type "kernel" (python only) keeps a live interpreter between steps;
        "shell" runs each step as a new program in the same /workspace.
        limits: memoryBytes, cpus, pids (the per-step ones go to exec)."""
        return Session(self, self._json("POST", "/v1/sessions", session_body(
            language, type, version, limits, network, idle_timeout_ms, max_lifetime_ms, volume,
            volume_read_only)))

    def attach(self, session_id):
        """The Session of an existing session id (GET /v1/sessions/{id})."""
        return Session(self, self._json("GET", "/v1/sessions/" + quote(session_id)))

    def sessions(self):
        """The live sessions, as Session JSON dicts."""
        return self._json("GET", "/v1/sessions")["sessions"]

    # -- plumbing -------------------------------------------------------------

    def _json(self, method, path, body=None):
        return json.loads(self._call(method, path, body))

    def _call(self, method, path, body=None, *, data=None, content_type=None,
              accept="application/json"):
        """The body of a 2xx answer, as bytes; else IsoboxError."""
        resp = self._open(method, path, body, data=data, content_type=content_type, accept=accept)
        with resp:
            try:
                return resp.read()
            except Exception as err:
                raise self._unreachable(err, "while reading the answer") from err

    def _stream(self, path, body):
        resp = self._open("POST", path, body, accept="text/event-stream")
        with resp:
            parser = SSEParser()
            while True:
                try:
                    raw = resp.readline()
                except Exception as err:
                    raise self._unreachable(err, "during the stream") from err
                if not raw:
                    break
                event = parser.line(raw.decode("utf-8"))
                if event is not None:
                    yield event
            if not parser.ended:
                raise IsoboxError(0, "connection_failed", f"the connection to {self.url} broke during "
                                  "the stream: it ended before its result")

    def _open(self, method, path, body=None, *, data=None, content_type=None,
              accept="application/json"):
        """The response of a 2xx answer (sent again on a refusal the retry
        rule allows); else IsoboxError. body: JSON to send; data: raw bytes."""
        data, headers = request_parts(self.api_key, body, data, content_type, accept)
        budget = RetryBudget(self.retries, self.max_retry_wait)
        while True:
            req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
            try:
                return urllib.request.urlopen(req, timeout=self.timeout)
            except urllib.error.HTTPError as err:
                with err:
                    try:
                        raw = err.read()
                    except Exception:
                        raw = b""
                    error = error_from_answer(err.code, raw, err.headers.get("Retry-After"))
            except Exception as err:
                raise self._unreachable(err) from err
            delay = budget.delay(error)
            if delay is None:
                raise error
            time.sleep(delay)

    def _unreachable(self, err, when=""):
        """The IsoboxError (status 0) of a failure to talk to the server."""
        reason = err.reason if isinstance(err, urllib.error.URLError) else err
        when = " " + when if when else ""
        if isinstance(reason, (socket.timeout, TimeoutError)):
            return IsoboxError(0, "timeout", f"no answer from {self.url} within {self.timeout} s{when}")
        if isinstance(reason, (OSError, http.client.HTTPException, urllib.error.URLError)):
            what = f"the connection to {self.url} broke{when}" if when else f"cannot reach {self.url}"
            return IsoboxError(0, "connection_failed", f"{what}: {reason or type(reason).__name__}")
        raise err


class Session(SessionBase):
    """A session on the server: one sandbox kept between steps. Made by
    Isobox.session(); close() (or leaving a `with` block) deletes it."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def exec(self, code=None, *, files=None, stdin=None, args=None, limits=None):
        """Run one step; return the result dict ({"run", "session", and for a
        kernel "kernel": {"value", "error", "images", "outputs", "restarted"}}).
        limits: wallTimeMs, outputBytes. A kernel step takes code only."""
        return self._client._json("POST", self._path + "/exec",
                                  step_body(code, files, stdin, args, limits))

    def stream(self, code=None, *, files=None, stdin=None, args=None, limits=None):
        """Run one step, yielding events as Isobox.stream does."""
        return self._client._stream(self._path + "/exec", step_body(code, files, stdin, args, limits))

    def upload(self, path, data):
        """Write a file (bytes, or str as UTF-8) at path under /workspace,
        making its directories; returns {"path", "size"}."""
        if isinstance(data, str):
            data = data.encode()
        return json.loads(self._client._call("PUT", self._file(path), data=bytes(data),
                                             content_type="application/octet-stream"))

    def download(self, path):
        """The bytes of the file at path under /workspace."""
        return self._client._call("GET", self._file(path), accept="application/octet-stream")

    def files(self, path=None):
        """The entries of a directory under /workspace (default: itself):
        [{"name", "type": "file"|"directory"|"link"|"other", "size", "mtime"}]."""
        return self._client._json("GET", self._listing(path))["entries"]

    def remove(self, path):
        """Delete a file, a link, or a directory with all it holds."""
        self._client._call("DELETE", self._file(path))

    def refresh(self):
        """Fetch the session's state again (GET); returns and keeps .info."""
        self.info = self._client._json("GET", self._path)
        return self.info

    def close(self):
        """Delete the session and its sandbox. A session already gone (404,
        410) is not an error: closing twice is fine. A passing failure (no
        answer, 502, 503, 504) is tried again twice before it raises."""
        for attempt in range(CLOSE_TRIES):
            try:
                self._client._call("DELETE", self._path)
                return
            except IsoboxError as err:
                if close_is_done(err, attempt):
                    return
            time.sleep(CLOSE_BACKOFF * (attempt + 1))
