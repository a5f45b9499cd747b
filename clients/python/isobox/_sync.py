"""The blocking client (urllib)."""
import http.client
import json
import socket
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, Iterator, List, Optional

from ._core import (DEFAULT_MAX_RETRY_WAIT, DEFAULT_RETRIES, DEFAULT_TIMEOUT, IsoboxError,
                    CLOSE_BACKOFF, CLOSE_TRIES, ClientBase, RetryBudget, SessionBase, SSEParser,
                    VolumeBase, close_is_done, error_from_answer, execute_body, file_body, memory_list_path,
                    memory_body, memory_path, memory_put_parts, memory_value, quote, quote_etag,
                    request_parts, session_body, step_body, command_body, command_output_path, tool_call_body, tool_result, volume_path)
from ._types import (CommandInfo, CommandOutput, CommandWrite, Data, FileEntry, FileWritten, MemoryItem, MemoryPage, MemoryValue, Result,
                     Runtimes, SessionInfo, StreamEvent, ToolDefinition, ToolResult, VolumeInfo)


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

    def __init__(self, url: str, api_key: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT,
                 retries: int = DEFAULT_RETRIES, max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT) -> None:
        super().__init__(url, api_key, timeout, retries, max_retry_wait)

    # -- public API ---------------------------------------------------------

    def execute(self, language: str, code: Optional[str] = None, *,
                files: Optional[List[Dict[str, Any]]] = None, stdin: Optional[str] = None,
                args: Optional[List[str]] = None, limits: Optional[Dict[str, Any]] = None,
                network: Optional[bool] = None, version: Optional[str] = None,
                outputs: Optional[List[str]] = None, volume: Optional[str] = None,
                volume_read_only: Optional[bool] = None) -> Result:
        """Run code (or files) and return the result dict ({"run": {...}, ...});
        succeeded(result) says whether the run went well."""
        return self._json("POST", "/execute", execute_body(
            language, code, files, stdin, args, limits, network, version, outputs, volume,
            volume_read_only))

    def stream(self, language: str, code: Optional[str] = None, *,
               files: Optional[List[Dict[str, Any]]] = None, stdin: Optional[str] = None,
               args: Optional[List[str]] = None, limits: Optional[Dict[str, Any]] = None,
               network: Optional[bool] = None, version: Optional[str] = None,
               outputs: Optional[List[str]] = None, volume: Optional[str] = None,
               volume_read_only: Optional[bool] = None) -> Iterator[StreamEvent]:
        """Run code, yielding events as they happen:
        {"event": "stdout" | "stderr", "data": bytes},
        {"event": "compile", "data": {...}}, and last
        {"event": "result", "data": {...}} (or "error")."""
        return self._stream("/execute", execute_body(
            language, code, files, stdin, args, limits, network, version, outputs, volume,
            volume_read_only))

    def runtimes(self) -> Runtimes:
        """The languages, versions and aliases the server offers."""
        return self._json("GET", "/runtimes")

    def session(self, language: str, type: str = "shell", *, version: Optional[str] = None,
                limits: Optional[Dict[str, Any]] = None, network: Optional[bool] = None,
                idle_timeout_ms: Optional[int] = None, max_lifetime_ms: Optional[int] = None,
                volume: Optional[str] = None, volume_read_only: Optional[bool] = None) -> "Session":
        """Create a session (POST /v1/sessions) and return it as a Session.
        type "kernel" (python only) keeps a live interpreter between steps;
        "shell" runs each step as a new program in the same /workspace.
        limits: memoryBytes, cpus, pids (the per-step ones go to exec)."""
        return Session(self, self._json("POST", "/v1/sessions", session_body(
            language, type, version, limits, network, idle_timeout_ms, max_lifetime_ms, volume,
            volume_read_only)))

    def attach(self, session_id: str) -> "Session":
        """The Session of an existing session id (GET /v1/sessions/{id})."""
        return Session(self, self._json("GET", "/v1/sessions/" + quote(session_id)))

    def sessions(self) -> List[SessionInfo]:
        """The live sessions, as Session JSON dicts."""
        return self._json("GET", "/v1/sessions")["sessions"]

    @property
    def memory(self) -> "Memory":
        """The tenant's key-value memory (/v1/memory): get, put, delete,
        list, keys."""
        return Memory(self)

    def create_volume(self, name: str, size_bytes: int) -> "Volume":
        """Make a volume (POST /v1/volumes) and return it as a Volume."""
        return Volume(self, self._json("POST", "/v1/volumes", {"name": name, "sizeBytes": size_bytes}))

    def volume(self, name: str) -> "Volume":
        """The Volume of an existing volume (GET /v1/volumes/{name}, with usedBytes)."""
        return Volume(self, self._json("GET", volume_path(name)))

    def volumes(self) -> List[VolumeInfo]:
        """The tenant's volumes, as JSON dicts, by name."""
        return self._json("GET", "/v1/volumes")["volumes"]

    def tools(self) -> List[ToolDefinition]:
        """isobox's tools as function-calling definitions, in the shape
        OpenAI-style chat APIs take (GET /v1/tools): hand them to a model,
        then pass its call's name and arguments to call_tool()."""
        return self._json("GET", "/v1/tools")["tools"]

    def call_tool(self, name: str, arguments: Optional[Dict[str, Any]] = None) -> ToolResult:
        """Call one of isobox's tools by name (MCP tools/call on POST /mcp):
        {"content": [...], "structuredContent": {...}, "isError": bool}, as
        an MCP client gets it; isError is a run that went wrong, a refused
        call (an unknown tool, bad arguments) raises IsoboxError."""
        return tool_result(self._json("POST", "/mcp", tool_call_body(name, arguments)))

    # -- plumbing -------------------------------------------------------------

    def _json(self, method, path, body=None, *, headers=None):
        return json.loads(self._call(method, path, body, headers=headers))

    def _call(self, method, path, body=None, *, data=None, content_type=None,
              accept="application/json", headers=None):
        """The body of a 2xx answer, as bytes; else IsoboxError."""
        resp = self._open(method, path, body, data=data, content_type=content_type, accept=accept,
                          headers=headers)
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
              accept="application/json", headers=None):
        """The response of a 2xx answer (sent again on a refusal the retry
        rule allows); else IsoboxError. body: JSON to send; data: raw bytes."""
        data, headers = request_parts(self.api_key, body, data, content_type, accept, headers)
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


class _Files:
    """The files of a session's /workspace or of a volume (PlaceBase's
    paths), for Session and Volume."""

    _client: Isobox
    _file: Callable[[str], str]
    _listing: Callable[[Optional[str]], str]

    def upload(self, path: str, data: Data) -> FileWritten:
        """Write a file (bytes, or str as UTF-8) at path, making its
        directories; returns {"path", "size"}."""
        return json.loads(self._client._call("PUT", self._file(path), data=file_body(data),
                                             content_type="application/octet-stream"))

    def download(self, path: str) -> bytes:
        """The bytes of the file at path."""
        return self._client._call("GET", self._file(path), accept="application/octet-stream")

    def files(self, path: Optional[str] = None) -> List[FileEntry]:
        """The entries of a directory (default: the top):
        [{"name", "type": "file"|"directory"|"link"|"other", "size", "mtime"}]."""
        return self._client._json("GET", self._listing(path))["entries"]

    def remove(self, path: str) -> None:
        """Delete a file, a link, or a directory with all it holds."""
        self._client._call("DELETE", self._file(path))


class Session(SessionBase, _Files):
    """A session on the server: one sandbox kept between steps. Made by
    Isobox.session(); close() (or leaving a `with` block) deletes it. Its
    files (upload, download, files, remove) are under /workspace."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def exec(self, code: Optional[str] = None, *, files: Optional[List[Dict[str, Any]]] = None,
             stdin: Optional[str] = None, args: Optional[List[str]] = None,
             limits: Optional[Dict[str, Any]] = None) -> Result:
        """Run one step; return the result dict ({"run", "session", and for a
        kernel "kernel": {"value", "error", "images", "outputs", "restarted"}}).
        limits: wallTimeMs, outputBytes. A kernel step takes code only."""
        return self._client._json("POST", self._path + "/exec",
                                  step_body(code, files, stdin, args, limits))

    # The names other sandboxes' SDKs use (E2B's run_code, kill), for code
    # written against them: the same calls.
    def run_code(self, code: str, **options: Any) -> Result:
        """exec(code, ...), by the name E2B's SDK gives it."""
        return self.exec(code, **options)

    def kill(self) -> None:
        """close(), by the name E2B's SDK gives it."""
        self.close()

    def stream(self, code: Optional[str] = None, *, files: Optional[List[Dict[str, Any]]] = None,
               stdin: Optional[str] = None, args: Optional[List[str]] = None,
               limits: Optional[Dict[str, Any]] = None) -> Iterator[StreamEvent]:
        """Run one step, yielding events as Isobox.stream does; a kernel
        cell's displays and last value come as they happen, each
        {"event": "display", "data": {"output_type", "data", "metadata"}}."""
        return self._client._stream(self._path + "/exec", step_body(code, files, stdin, args, limits))

    # Background commands: they answer at once and run on in the session.
    def start_command(self, command: Optional[str] = None, *, args: Optional[List[str]] = None,
                      stdin: Optional[str] = None, stdin_open: bool = False) -> CommandInfo:
        """Start command (a line for the sandbox's sh -c) or args (a program
        and its arguments) in /workspace, in the background: {"id", "args",
        "running", ...} at once. stdin: given then closed; stdin_open: a pipe
        for write_command_stdin."""
        return self._client._json("POST", self._path + "/commands",
                                  command_body(command, args, stdin, stdin_open))

    def commands(self) -> List[CommandInfo]:
        """The session's commands, running or ended."""
        return self._client._json("GET", self._path + "/commands")["commands"]

    def command_output(self, command_id: str, *, stdout_from: int = 0, stderr_from: int = 0,
                       max_bytes: Optional[int] = None, encoding: Optional[str] = None) -> CommandOutput:
        """What it wrote from those byte offsets ({"stdout", "stdoutNext", ...,
        "running", "exitCode"}); read again from the Next offsets."""
        return self._client._json("GET", command_output_path(self._command(command_id), stdout_from,
                                                             stderr_from, max_bytes, encoding))

    def write_command_stdin(self, command_id: str, data: str = "", *, close: bool = False) -> CommandWrite:
        """Write to its stdin (started with stdin_open): {"written", "closed"};
        send what was not written again."""
        return self._client._json("POST", self._command(command_id) + "/stdin",
                                  {"data": data, "close": close})

    def signal_command(self, command_id: str, signal: str = "SIGTERM") -> None:
        """Signal its process group (SIGTERM, SIGINT, SIGKILL, ...)."""
        self._client._call("POST", self._command(command_id) + "/signal", body={"signal": signal})

    def delete_command(self, command_id: str) -> None:
        """Kill it if it runs, and forget it with its output."""
        self._client._call("DELETE", self._command(command_id))

    def refresh(self) -> SessionInfo:
        """Fetch the session's state again (GET); returns and keeps .info."""
        self.info = self._client._json("GET", self._path)
        return self.info

    def close(self) -> None:
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


class Memory:
    """The tenant's memory (/v1/memory): values (bytes) under keys, kept
    across runs, sessions and restarts. Made by Isobox.memory."""

    def __init__(self, client):
        self._client = client

    def get(self, key: str) -> MemoryValue:
        """{"key", "value": bytes, "contentType", "etag"}; IsoboxError 404
        key_not_found when it is not there (or expired)."""
        resp = self._client._open("GET", memory_path(key), accept="*/*")
        with resp:
            try:
                data = resp.read()
            except Exception as err:
                raise self._client._unreachable(err, "while reading the answer") from err
            return memory_value(key, data, {k.lower(): v for k, v in resp.headers.items()})

    def put(self, key: str, value: Any, *, content_type: Optional[str] = None,
            ttl_seconds: Optional[int] = None, if_match: Optional[str] = None,
            if_none_match: bool = False) -> MemoryItem:
        """Store value (bytes; str as UTF-8 text/plain; anything else as
        JSON) under key; the item {"key", "size", "contentType", "etag",
        "updatedAt", "expiresAt"}. if_match: an etag read before (or "*":
        only over a key that is there); if_none_match=True: only a new key.
        A condition that does not hold is IsoboxError 412 precondition_failed."""
        data, kind = memory_body(value, content_type)
        path, headers = memory_put_parts(key, ttl_seconds, if_match, if_none_match)
        return json.loads(self._client._call("PUT", path, data=data, content_type=kind,
                                             headers=headers))

    def delete(self, key: str, *, if_match: Optional[str] = None) -> None:
        """Delete key (IsoboxError 404 key_not_found if it is not there)."""
        headers = {"If-Match": quote_etag(if_match)} if if_match else None
        self._client._call("DELETE", memory_path(key), headers=headers)

    def list(self, prefix: Optional[str] = None, *, limit: Optional[int] = None,
             cursor: Optional[str] = None) -> MemoryPage:
        """One page of the keys that start with prefix, in byte order:
        {"keys": [item, ...], "cursor": the last key, or None on the last page}."""
        return self._client._json("GET", memory_list_path(prefix, limit, cursor))

    def keys(self, prefix: Optional[str] = None) -> Iterator[MemoryItem]:
        """Every item whose key starts with prefix, page after page."""
        cursor = None
        while True:
            page = self.list(prefix, cursor=cursor)
            yield from page["keys"]
            cursor = page.get("cursor")
            if not cursor:
                return


class Volume(VolumeBase, _Files):
    """A volume on the server: a filesystem of the tenant's that outlives
    runs; a run or a session given volume=its name finds it at /memory.
    Made by Isobox.create_volume() or Isobox.volume(); its files (upload,
    download, files, remove) are under its top."""

    def refresh(self) -> VolumeInfo:
        """Fetch the volume's record again (with usedBytes); returns and keeps .info."""
        self.info = self._client._json("GET", self._path)
        return self.info

    def delete(self) -> None:
        """Delete the volume and every file in it (IsoboxError 409
        volume_busy while a run, a session or a files call uses it)."""
        self._client._call("DELETE", self._path)
