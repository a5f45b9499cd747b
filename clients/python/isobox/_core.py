"""What the blocking and the asyncio clients share: the error type, request
bodies, the retry rule, Server-Sent Events, and succeeded()."""
import base64
import copy
import email.utils
import json
import time
import urllib.parse
from typing import Any, Optional, TypeVar

Client = TypeVar("Client", bound="ClientBase")

DEFAULT_TIMEOUT = 120.0        # seconds without an answer (or a stream event)
DEFAULT_RETRIES = 3            # retries of a refused request, at most
DEFAULT_MAX_RETRY_WAIT = 30.0  # seconds of waiting between retries, at most, in all
DEFAULT_RETRY_DELAY = 1.0      # when a retried answer has no Retry-After


class IsoboxError(Exception):
    """The server refused or could not run the request: .status (the HTTP
    status), .code (the API's stable error code) and .message, as the
    server said them; .retry_after, the seconds its Retry-After header
    asked for (None without one).

    The server could not be reached at all: .status 0 and .code
    "connection_failed" (refused, reset, no such host, TLS, a stream cut
    short) or "timeout" (no answer within the client's timeout)."""

    def __init__(self, status: int, code: str, message: str, retry_after: Optional[float] = None) -> None:
        super().__init__(f"{status} {code}: {message}" if status else f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after


def succeeded(result: Any) -> bool:
    """Whether a result (of execute(), a session step, or the data of a
    stream's "result" event) is a run that went well: the program ran (so a
    compile, if any, succeeded), exited 0, and was not stopped at a limit
    (timedOut, oomKilled, truncated: its output was cut); for a kernel step,
    the cell raised no exception as well. docs/API.md: "A run succeeded when
    run is present, its exitCode is 0 and no flag is set". outputsTruncated
    (files asked for with outputs= left out) does not count: the run itself
    went well."""
    if not isinstance(result, dict):
        return False
    run = result.get("run")
    if not isinstance(run, dict):
        return False
    if run.get("exitCode") != 0 or run.get("timedOut") or run.get("oomKilled") or run.get("truncated"):
        return False
    kernel = result.get("kernel")
    return not (isinstance(kernel, dict) and kernel.get("error"))


def fields(**pairs):
    """A JSON object of the pairs whose value is not None."""
    return {key: value for key, value in pairs.items() if value is not None}


def execute_body(language, code, files, stdin, args, limits, network, version, outputs, volume,
                 volume_read_only):
    return fields(language=language, version=version, code=code, files=files, stdin=stdin,
                  args=args, limits=limits, network=network, outputs=outputs, volume=volume,
                  volumeReadOnly=volume_read_only)


def session_body(language, type, version, limits, network, idle_timeout_ms, max_lifetime_ms,
                 volume, volume_read_only):
    return fields(language=language, type=type, version=version, limits=limits, network=network,
                  idleTimeoutMs=idle_timeout_ms, maxLifetimeMs=max_lifetime_ms, volume=volume,
                  volumeReadOnly=volume_read_only)


def step_body(code, files, stdin, args, limits):
    return fields(code=code, files=files, stdin=stdin, args=args, limits=limits)


def command_body(command, args, stdin, stdin_open):
    """POST /v1/sessions/{id}/commands: command (a shell line) or args."""
    if (command is None) == (args is None):
        raise ValueError("give command (a shell line) or args (a program and its arguments), one of them")
    return fields(command=command, args=args, stdin=stdin, stdinOpen=stdin_open or None)


def command_output_path(path, stdout_from, stderr_from, max_bytes, encoding):
    """GET /v1/sessions/{id}/commands/{commandId} with its query."""
    query = urllib.parse.urlencode(fields(stdoutFrom=stdout_from or None, stderrFrom=stderr_from or None,
                                          maxBytes=max_bytes, encoding=encoding))
    return path + ("?" + query if query else "")


def memory_path(key):
    """/v1/memory/{key}: the key's bytes percent-encoded, its slashes kept."""
    if not isinstance(key, str) or not key:
        raise ValueError(f"a memory key is a non-empty string, not {key!r}")
    return "/v1/memory/" + urllib.parse.quote(key, safe="/")


def memory_put_parts(key, ttl_seconds, if_match, if_none_match):
    """(path, headers) of a PUT /v1/memory/{key}."""
    path = memory_path(key)
    if ttl_seconds is not None:
        path += "?" + urllib.parse.urlencode({"ttlSeconds": int(ttl_seconds)})
    headers = {}
    if if_match is not None:
        headers["If-Match"] = if_match if if_match == "*" else quote_etag(if_match)
    if if_none_match:
        headers["If-None-Match"] = "*"
    return path, headers


def memory_body(value, content_type):
    """(bytes, Content-Type) of a value to put: bytes as they are, a str as
    UTF-8 text, anything else as JSON; content_type overrides the kind."""
    if isinstance(value, str):
        data, kind = value.encode(), "text/plain; charset=utf-8"
    elif isinstance(value, (bytes, bytearray, memoryview)):
        data, kind = bytes(value), "application/octet-stream"
    else:
        data, kind = json.dumps(value).encode(), "application/json"
    return data, content_type or kind


def file_body(data):
    """A file's bytes to upload: bytes, or a str as UTF-8."""
    return bytes(data.encode() if isinstance(data, str) else data)


def quote_etag(etag):
    """An etag as the items carry it ("5f0c...") or as ETag headers do
    (quoted): quoted, as If-Match wants it."""
    return etag if etag.startswith('"') else f'"{etag}"'


def memory_list_path(prefix, limit, cursor):
    return "/v1/memory?" + urllib.parse.urlencode(fields(prefix=prefix, limit=limit, cursor=cursor))


def memory_value(key, data, headers):
    """What get() returns: the bytes and what the server said of them."""
    etag = headers.get("etag") or ""
    return {"key": key, "value": data,
            "contentType": headers.get("content-type") or "application/octet-stream",
            "etag": etag.strip('"')}


def volume_path(name):
    if not isinstance(name, str) or not name:
        raise ValueError(f"a volume name is a non-empty string, not {name!r}")
    return "/v1/volumes/" + quote(name)


class ClientBase:
    """What both clients keep: the server, the key and the retry settings
    (checked here once)."""

    def __init__(self, url, api_key, timeout, retries, max_retry_wait):
        check_options(timeout, retries, max_retry_wait)
        self.url = url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.retries = retries
        self.max_retry_wait = max_retry_wait

    def __repr__(self):
        return f"<isobox.{type(self).__name__} {self.url}>"

    def with_options(self: Client, *, timeout: Optional[float] = None, retries: Optional[int] = None,
                     max_retry_wait: Optional[float] = None) -> Client:
        """A copy of this client with other options, for one call or a few:
        box.with_options(timeout=600).execute(...). The original is unchanged."""
        other = copy.copy(self)
        other.timeout = self.timeout if timeout is None else timeout
        other.retries = self.retries if retries is None else retries
        other.max_retry_wait = self.max_retry_wait if max_retry_wait is None else max_retry_wait
        check_options(other.timeout, other.retries, other.max_retry_wait)
        return other


class PlaceBase:
    """What has files on the server (a session's /workspace, a volume):
    the paths of its files and listings."""

    _path = ""

    def _file(self, path):
        return self._path + "/files/" + quote(path)

    def _listing(self, path):
        query = "" if path is None else "?" + urllib.parse.urlencode({"path": path})
        return self._path + "/files" + query

    def _command(self, command_id):
        return self._path + "/commands/" + quote(command_id)


class SessionBase(PlaceBase):
    """What both clients' sessions keep: the server's record and the paths."""

    def __init__(self, client, info):
        self._client = client
        self.info = info
        self.id = info["id"]
        self._path = "/v1/sessions/" + quote(self.id)

    def __repr__(self):
        return f"<isobox.{type(self).__name__} {self.id} {self.info.get('language')} {self.info.get('type')}>"


class VolumeBase(PlaceBase):
    """What both clients' volumes keep: the server's record and the paths."""

    def __init__(self, client, info):
        self._client = client
        self.info = info
        self.name = info["name"]
        self._path = volume_path(self.name)

    def __repr__(self):
        return f"<isobox.{type(self).__name__} {self.name} {self.info.get('sizeBytes')} bytes>"


# Closing a session: a passing failure (no answer, 502, 503, 504) is tried
# again, CLOSE_TRIES in all, CLOSE_BACKOFF * the try's number apart.
CLOSE_TRIES = 3
CLOSE_BACKOFF = 0.5


def close_is_done(err, attempt):
    """After try `attempt` (from 0) of a session's DELETE failed with err:
    True if the session is gone anyway (404, 410: closing twice is fine),
    False to try again; err is raised when it will not pass or no try is
    left."""
    if err.status in (404, 410):
        return True
    if err.status not in (0, 502, 503, 504) or attempt == CLOSE_TRIES - 1:
        raise err
    return False


def request_parts(api_key, body, data, content_type, accept, extra=None):
    """(bytes to send, headers) of one request. body: JSON to send; data:
    raw bytes; extra: more headers (If-Match)."""
    headers = {"Accept": accept, **(extra or {})}
    if body is not None:
        data = json.dumps(body).encode()
        content_type = "application/json"
    if content_type:
        headers["Content-Type"] = content_type
    if api_key:
        headers["Authorization"] = "Bearer " + api_key
    return data, headers


def quote(path):
    """Percent-encode each segment of a path, keeping the "/" between them."""
    return urllib.parse.quote(path, safe="/")


def check_options(timeout, retries, max_retry_wait):
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise ValueError(f"timeout must be a number of seconds above 0, not {timeout!r}")
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise ValueError(f"retries must be a whole number from 0, not {retries!r}")
    if not isinstance(max_retry_wait, (int, float)) or isinstance(max_retry_wait, bool) or max_retry_wait < 0:
        raise ValueError(f"max_retry_wait must be a number of seconds from 0, not {max_retry_wait!r}")


def parse_retry_after(value):
    """Retry-After as seconds from now (delta-seconds or an HTTP date), or None."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - time.time()
    if seconds != seconds:          # NaN
        return None
    return max(0.0, seconds)


def tool_call_body(name, arguments):
    """The JSON-RPC request of an MCP tools/call (POST /mcp; the server
    keeps no MCP session, so no initialize is needed first)."""
    if not isinstance(name, str) or not name:
        raise TypeError("name: a tool's name (str), as tools() lists them")
    if arguments is not None and not isinstance(arguments, dict):
        raise TypeError("arguments: a dict of the tool's input")
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments or {}}}


def tool_result(answer):
    """The result of a tools/call answer ({"content", "structuredContent",
    "isError"}); a JSON-RPC error (an unknown tool, bad arguments) raises
    IsoboxError 400 with code "tool_call_refused"."""
    error = answer.get("error") if isinstance(answer, dict) else None
    if error is not None or not isinstance(answer, dict) or "result" not in answer:
        message = error.get("message", "") if isinstance(error, dict) else "no result in the answer"
        rpc = error.get("code") if isinstance(error, dict) else None
        raise IsoboxError(400, "tool_call_refused", f"{message} (JSON-RPC {rpc})")
    return answer["result"]


def error_from_answer(status, raw, retry_after_header):
    """The IsoboxError of a non-2xx answer: its JSON error, or its text."""
    retry_after = parse_retry_after(retry_after_header)
    try:
        err = json.loads(raw)["error"]
        return IsoboxError(status, err.get("code", "error"), err.get("message", ""), retry_after)
    except (ValueError, KeyError, TypeError, AttributeError):
        text = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
        return IsoboxError(status, "http_error", text[:200], retry_after)


def retryable(err):
    """Answers that say the request was refused before anything ran, and
    that a later try may pass: 429 (the tenant's rate or its running
    programs; not too_many_sessions, which waits on a session's end), and
    503 busy (every worker is running a program). Nothing else is retried:
    another error may come after the program ran, or will not pass by
    waiting."""
    if err.status == 429:
        return err.code != "too_many_sessions"
    return err.status == 503 and err.code == "busy"


class RetryBudget:
    """How long to wait before the next try, or None for no more tries."""

    def __init__(self, retries, max_wait):
        self.left = retries
        self.wait_left = max_wait

    def delay(self, err):
        if self.left <= 0 or not retryable(err):
            return None
        delay = err.retry_after if err.retry_after is not None else DEFAULT_RETRY_DELAY
        delay = max(delay, 0.05)
        if delay > self.wait_left:
            return None
        self.left -= 1
        self.wait_left -= delay
        return delay


class SSEParser:
    """Server-Sent Events, a line at a time: line() returns the event a
    blank line completes, as {"event": name, "data": value}, else None.
    stdout and stderr data come out as bytes (lossless: text or base64).
    A stream that stops before its "result" (or "error") event was cut
    short: the clients raise connection_failed then."""

    def __init__(self):
        self.name, self.data = "message", []
        self.ended = False      # the last event came: "result" or "error"

    def line(self, line):
        line = line.rstrip("\r\n")
        if not line:
            name, data = self.name, self.data
            self.name, self.data = "message", []
            if not data:
                return None
            self.ended = name in ("result", "error")
            return decode_event(name, "\n".join(data))
        if not line.startswith(":"):
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                self.name = value
            elif field == "data":
                self.data.append(value)
        return None


def decode_event(name, data):
    value = json.loads(data)
    if name in ("stdout", "stderr"):
        value = value["data"].encode() if "data" in value else base64.b64decode(value["base64"])
    return {"event": name, "data": value}
