"""The asyncio client: HTTP/1.1 over asyncio.open_connection (standard
library only), one connection per request."""
import asyncio
import json
import ssl
import urllib.parse
from typing import Any, AsyncIterator, Callable, Dict, List, Optional

from ._core import (DEFAULT_MAX_RETRY_WAIT, DEFAULT_RETRIES, DEFAULT_TIMEOUT, IsoboxError,
                    CLOSE_BACKOFF, CLOSE_TRIES, ClientBase, RetryBudget, SessionBase, SSEParser,
                    VolumeBase, close_is_done, error_from_answer, execute_body, file_body, memory_list_path,
                    memory_body, memory_path, memory_put_parts, memory_value, quote, quote_etag,
                    request_parts, session_body, step_body, command_body, command_output_path, tool_call_body, tool_result, volume_path)
from ._types import (CommandInfo, CommandOutput, CommandWrite, Data, FileEntry, FileWritten, MemoryItem, MemoryPage, MemoryValue, Result,
                     Runtimes, SessionInfo, StreamEvent, ToolDefinition, ToolResult, VolumeInfo)

_LINE_LIMIT = 1 << 20   # a header line at most (asyncio's default is 64 KiB)


class AsyncIsobox(ClientBase):
    """The asyncio flavour of Isobox: the same methods, options and errors,
    as coroutines (stream: an async generator):

        box = AsyncIsobox("http://127.0.0.1:8090")
        result = await box.execute("python", "print(1)")
        async for event in box.stream("python", "print(1)"):
            ...
        async with box.session("python", "kernel") as s:
            await s.exec("x = 1")

    http:// and https:// URLs (TLS with the system's certificates, or the
    ssl.SSLContext given as ssl_context); no HTTP proxy."""

    def __init__(self, url: str, api_key: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT,
                 retries: int = DEFAULT_RETRIES, max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
                 ssl_context: Optional[ssl.SSLContext] = None) -> None:
        super().__init__(url, api_key, timeout, retries, max_retry_wait)
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url must be http:// or https:// with a host, not {url!r}")
        self._tls = parts.scheme == "https"
        self._ssl = (ssl_context or ssl.create_default_context()) if self._tls else None
        self._host = parts.hostname
        self._port = parts.port or (443 if self._tls else 80)
        self._authority = parts.netloc.rpartition("@")[2]
        self._prefix = parts.path

    # -- public API ---------------------------------------------------------

    async def execute(self, language: str, code: Optional[str] = None, *,
                      files: Optional[List[Dict[str, Any]]] = None, stdin: Optional[str] = None,
                      args: Optional[List[str]] = None, limits: Optional[Dict[str, Any]] = None,
                      network: Optional[bool] = None, version: Optional[str] = None,
                      outputs: Optional[List[str]] = None, volume: Optional[str] = None,
                      volume_read_only: Optional[bool] = None) -> Result:
        """Run code (or files); the result dict ({"run": {...}, ...})."""
        return await self._json("POST", "/execute", execute_body(
            language, code, files, stdin, args, limits, network, version, outputs, volume,
            volume_read_only))

    def stream(self, language: str, code: Optional[str] = None, *,
               files: Optional[List[Dict[str, Any]]] = None, stdin: Optional[str] = None,
               args: Optional[List[str]] = None, limits: Optional[Dict[str, Any]] = None,
               network: Optional[bool] = None, version: Optional[str] = None,
               outputs: Optional[List[str]] = None, volume: Optional[str] = None,
               volume_read_only: Optional[bool] = None) -> AsyncIterator[StreamEvent]:
        """Run code; an async generator of events as they happen, as
        Isobox.stream yields them."""
        return self._stream("/execute", execute_body(
            language, code, files, stdin, args, limits, network, version, outputs, volume,
            volume_read_only))

    async def runtimes(self) -> Runtimes:
        """The languages, versions and aliases the server offers."""
        return await self._json("GET", "/runtimes")

    def session(self, language: str, type: str = "shell", *, version: Optional[str] = None,
                limits: Optional[Dict[str, Any]] = None, network: Optional[bool] = None,
                idle_timeout_ms: Optional[int] = None, max_lifetime_ms: Optional[int] = None,
                volume: Optional[str] = None,
                volume_read_only: Optional[bool] = None) -> "_SessionStart":
        """Create a session: `await box.session(...)` gives an AsyncSession,
        and `async with box.session(...) as s:` deletes it at the end."""
        body = session_body(language, type, version, limits, network, idle_timeout_ms,
                            max_lifetime_ms, volume, volume_read_only)

        async def start():
            return AsyncSession(self, await self._json("POST", "/v1/sessions", body))
        return _SessionStart(start())

    async def attach(self, session_id: str) -> "AsyncSession":
        """The AsyncSession of an existing session id."""
        return AsyncSession(self, await self._json("GET", "/v1/sessions/" + quote(session_id)))

    async def sessions(self) -> List[SessionInfo]:
        """The live sessions, as Session JSON dicts."""
        return (await self._json("GET", "/v1/sessions"))["sessions"]

    @property
    def memory(self) -> "AsyncMemory":
        """The tenant's memory (/v1/memory), as Isobox.memory, with coroutines."""
        return AsyncMemory(self)

    async def create_volume(self, name: str, size_bytes: int) -> "AsyncVolume":
        """Make a volume (POST /v1/volumes); an AsyncVolume."""
        return AsyncVolume(self, await self._json("POST", "/v1/volumes",
                                                  {"name": name, "sizeBytes": size_bytes}))

    async def volume(self, name: str) -> "AsyncVolume":
        """The AsyncVolume of an existing volume (GET /v1/volumes/{name})."""
        return AsyncVolume(self, await self._json("GET", volume_path(name)))

    async def volumes(self) -> List[VolumeInfo]:
        """The tenant's volumes, as JSON dicts, by name."""
        return (await self._json("GET", "/v1/volumes"))["volumes"]

    # -- plumbing -------------------------------------------------------------

    async def tools(self) -> List[ToolDefinition]:
        """isobox's tools as function-calling definitions, in the shape
        OpenAI-style chat APIs take (GET /v1/tools): hand them to a model,
        then pass its call's name and arguments to call_tool()."""
        return (await self._json("GET", "/v1/tools"))["tools"]

    async def call_tool(self, name: str, arguments: Optional[Dict[str, Any]] = None) -> ToolResult:
        """Call one of isobox's tools by name (MCP tools/call on POST /mcp):
        {"content": [...], "structuredContent": {...}, "isError": bool}, as
        an MCP client gets it; isError is a run that went wrong, a refused
        call (an unknown tool, bad arguments) raises IsoboxError."""
        return tool_result(await self._json("POST", "/mcp", tool_call_body(name, arguments)))

    async def _json(self, method, path, body=None, *, headers=None):
        return json.loads(await self._call(method, path, body, headers=headers))

    async def _call(self, method, path, body=None, *, data=None, content_type=None,
                    accept="application/json", headers=None):
        """The body of a 2xx answer, as bytes; else IsoboxError."""
        answer = await self._open(method, path, body, data=data, content_type=content_type,
                                  accept=accept, headers=headers)
        try:
            return b"".join([chunk async for chunk in answer.chunks()])
        finally:
            await answer.close()

    async def _stream(self, path, body):
        answer = await self._open("POST", path, body, accept="text/event-stream")
        try:
            parser = SSEParser()
            buffer = b""
            async for chunk in answer.chunks():
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    event = parser.line(line.decode("utf-8"))
                    if event is not None:
                        yield event
            if buffer:
                event = parser.line(buffer.decode("utf-8"))
                if event is not None:
                    yield event
            if not parser.ended:
                raise IsoboxError(0, "connection_failed", f"the connection to {self.url} broke during "
                                  "the stream: it ended before its result")
        finally:
            await answer.close()

    async def _open(self, method, path, body=None, *, data=None, content_type=None,
                    accept="application/json", headers=None):
        """The _Answer of a 2xx answer (sent again on a refusal the retry rule
        allows); else IsoboxError. body: JSON to send; data: raw bytes."""
        data, headers = request_parts(self.api_key, body, data, content_type, accept, headers)
        budget = RetryBudget(self.retries, self.max_retry_wait)
        while True:
            answer = await self._exchange(method, path, data, headers)
            if 200 <= answer.status < 300:
                return answer
            try:
                raw = b"".join([chunk async for chunk in answer.chunks()])
            except IsoboxError:
                raw = b""
            finally:
                await answer.close()
            error = error_from_answer(answer.status, raw, answer.headers.get("retry-after"))
            delay = budget.delay(error)
            if delay is None:
                raise error
            await asyncio.sleep(delay)

    async def _exchange(self, method, path, data, headers):
        """Send one request; the _Answer once its status and headers came."""
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(
                self._host, self._port, ssl=self._ssl, limit=_LINE_LIMIT,
                server_hostname=self._host if self._tls else None), self.timeout)
        except Exception as err:
            raise self._unreachable(err) from err
        answer = _Answer(self, method, reader, writer)
        try:
            lines = [f"{method} {self._prefix}{path} HTTP/1.1", f"Host: {self._authority}",
                     "Connection: close", "User-Agent: isobox-python-asyncio"]
            lines += [f"{name}: {value}" for name, value in headers.items()]
            if data is not None:
                lines.append(f"Content-Length: {len(data)}")
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (data or b""))
            await self._wait(writer.drain())
            await answer.read_head()
        except BaseException as err:
            await answer.close()
            if isinstance(err, IsoboxError) or not isinstance(err, Exception):
                raise
            raise self._unreachable(err) from err
        return answer

    async def _wait(self, awaitable):
        try:
            return await asyncio.wait_for(awaitable, self.timeout)
        except asyncio.TimeoutError:
            raise IsoboxError(0, "timeout", f"no answer from {self.url} within {self.timeout} s") from None

    def _unreachable(self, err, when=""):
        when = " " + when if when else ""
        if isinstance(err, IsoboxError):
            return err
        if isinstance(err, asyncio.TimeoutError):
            return IsoboxError(0, "timeout", f"no answer from {self.url} within {self.timeout} s{when}")
        if isinstance(err, (OSError, EOFError, ValueError, asyncio.LimitOverrunError)):
            what = f"the connection to {self.url} broke{when}" if when else f"cannot reach {self.url}"
            return IsoboxError(0, "connection_failed", f"{what}: {err or type(err).__name__}")
        return err


class _Answer:
    """One HTTP/1.1 answer: status, headers (lowercase names), chunks()."""

    def __init__(self, client, method, reader, writer):
        self._client = client
        self._method = method
        self._reader = reader
        self._writer = writer
        self.status = 0
        self.headers = {}

    async def read_head(self):
        wait = self._client._wait
        while True:
            line = await wait(self._reader.readline())
            parts = line.decode("latin-1").split(None, 2)
            if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
                raise ConnectionError(f"not an HTTP answer: {line[:80]!r}")
            self.status = int(parts[1])
            headers = {}
            while True:
                line = await wait(self._reader.readline())
                if not line.endswith(b"\n"):
                    raise ConnectionError("the connection closed in the answer's headers")
                line = line.decode("latin-1").rstrip("\r\n")
                if not line:
                    break
                name, _, value = line.partition(":")
                name = name.strip().lower()
                value = value.strip()
                headers[name] = headers[name] + ", " + value if name in headers else value
            self.headers = headers
            if self.status >= 200 or self.status == 101:
                return
            # 1xx (100 Continue, 103 Early Hints): the answer is still to come.

    async def chunks(self):
        """The body's bytes as they come (chunked, Content-Length, or to the end)."""
        client = self._client
        wait, reader = client._wait, self._reader
        try:
            if self._method == "HEAD" or self.status in (204, 304):
                return
            if "chunked" in self.headers.get("transfer-encoding", "").lower():
                while True:
                    line = await wait(reader.readline())
                    if not line.endswith(b"\n"):
                        raise ConnectionError("the connection closed in the answer")
                    size = int(line.split(b";")[0].strip(), 16)
                    if size == 0:
                        while (await wait(reader.readline())).strip():
                            pass                                # trailers
                        return
                    yield await wait(reader.readexactly(size))
                    await wait(reader.readexactly(2))
            elif "content-length" in self.headers:
                left = int(self.headers["content-length"])
                while left > 0:
                    chunk = await wait(reader.read(min(left, 1 << 16)))
                    if not chunk:
                        raise ConnectionError(f"the connection closed {left} bytes before the answer's end")
                    left -= len(chunk)
                    yield chunk
            else:
                while True:
                    chunk = await wait(reader.read(1 << 16))
                    if not chunk:
                        return
                    yield chunk
        except IsoboxError:
            raise
        except Exception as err:
            raise client._unreachable(err, "while reading the answer") from err

    async def close(self):
        self._writer.close()
        try:
            await asyncio.wait_for(self._writer.wait_closed(), 5)
        except Exception:
            pass


class _SessionStart:
    """What AsyncIsobox.session() returns: await it for the AsyncSession, or
    use it in `async with` to have the session deleted at the end."""

    def __init__(self, coro):
        self._coro = coro
        self._session = None

    def __await__(self):
        return self._coro.__await__()

    async def __aenter__(self):
        self._session = await self._coro
        return self._session

    async def __aexit__(self, *exc):
        await self._session.close()


class _AsyncFiles:
    """The files of a session's /workspace or of a volume, for the asyncio
    client: _Files's methods as coroutines."""

    _client: AsyncIsobox
    _file: Callable[[str], str]
    _listing: Callable[[Optional[str]], str]

    async def upload(self, path: str, data: Data) -> FileWritten:
        """Write a file (bytes, or str as UTF-8); {"path", "size"}."""
        return json.loads(await self._client._call("PUT", self._file(path), data=file_body(data),
                                                   content_type="application/octet-stream"))

    async def download(self, path: str) -> bytes:
        """The bytes of the file at path."""
        return await self._client._call("GET", self._file(path), accept="application/octet-stream")

    async def files(self, path: Optional[str] = None) -> List[FileEntry]:
        """The entries of a directory (default: the top)."""
        return (await self._client._json("GET", self._listing(path)))["entries"]

    async def remove(self, path: str) -> None:
        """Delete a file, a link, or a directory with all it holds."""
        await self._client._call("DELETE", self._file(path))


class AsyncSession(SessionBase, _AsyncFiles):
    """A session on the server, for the asyncio client: the methods of
    Session, as coroutines (stream: an async generator)."""

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()

    async def exec(self, code: Optional[str] = None, *,
                   files: Optional[List[Dict[str, Any]]] = None, stdin: Optional[str] = None,
                   args: Optional[List[str]] = None,
                   limits: Optional[Dict[str, Any]] = None) -> Result:
        """Run one step; the result dict (as Session.exec)."""
        return await self._client._json("POST", self._path + "/exec",
                                        step_body(code, files, stdin, args, limits))

    async def run_code(self, code: str, **options: Any) -> Result:
        """exec(code, ...), by the name E2B's SDK gives it."""
        return await self.exec(code, **options)

    async def kill(self) -> None:
        """close(), by the name E2B's SDK gives it."""
        await self.close()

    def stream(self, code: Optional[str] = None, *, files: Optional[List[Dict[str, Any]]] = None,
               stdin: Optional[str] = None, args: Optional[List[str]] = None,
               limits: Optional[Dict[str, Any]] = None) -> AsyncIterator[StreamEvent]:
        """Run one step; an async generator of its events (a kernel cell's
        displays as {"event": "display", ...}, as they happen)."""
        return self._client._stream(self._path + "/exec", step_body(code, files, stdin, args, limits))

    async def start_command(self, command: Optional[str] = None, *, args: Optional[List[str]] = None,
                            stdin: Optional[str] = None, stdin_open: bool = False) -> CommandInfo:
        """Start a background command (as Session.start_command)."""
        return await self._client._json("POST", self._path + "/commands",
                                        command_body(command, args, stdin, stdin_open))

    async def commands(self) -> List[CommandInfo]:
        """The session's commands, running or ended."""
        return (await self._client._json("GET", self._path + "/commands"))["commands"]

    async def command_output(self, command_id: str, *, stdout_from: int = 0, stderr_from: int = 0,
                             max_bytes: Optional[int] = None, encoding: Optional[str] = None) -> CommandOutput:
        """What it wrote from those byte offsets (as Session.command_output)."""
        return await self._client._json("GET", command_output_path(self._command(command_id), stdout_from,
                                                                   stderr_from, max_bytes, encoding))

    async def write_command_stdin(self, command_id: str, data: str = "", *,
                                  close: bool = False) -> CommandWrite:
        """Write to its stdin: {"written", "closed"}."""
        return await self._client._json("POST", self._command(command_id) + "/stdin",
                                        {"data": data, "close": close})

    async def signal_command(self, command_id: str, signal: str = "SIGTERM") -> None:
        """Signal its process group."""
        await self._client._call("POST", self._command(command_id) + "/signal", body={"signal": signal})

    async def delete_command(self, command_id: str) -> None:
        """Kill it if it runs, and forget it."""
        await self._client._call("DELETE", self._command(command_id))

    async def refresh(self) -> SessionInfo:
        """Fetch the session's state again; returns and keeps .info."""
        self.info = await self._client._json("GET", self._path)
        return self.info

    async def close(self) -> None:
        """Delete the session (as Session.close: 404 and 410 are fine, a
        passing failure is tried again twice)."""
        for attempt in range(CLOSE_TRIES):
            try:
                await self._client._call("DELETE", self._path)
                return
            except IsoboxError as err:
                if close_is_done(err, attempt):
                    return
            await asyncio.sleep(CLOSE_BACKOFF * (attempt + 1))


class AsyncMemory:
    """The tenant's memory, for the asyncio client: Memory's methods as
    coroutines (keys: an async generator)."""

    def __init__(self, client):
        self._client = client

    async def get(self, key: str) -> MemoryValue:
        """{"key", "value": bytes, "contentType", "etag"} (as Memory.get)."""
        answer = await self._client._open("GET", memory_path(key), accept="*/*")
        try:
            data = b"".join([chunk async for chunk in answer.chunks()])
        finally:
            await answer.close()
        return memory_value(key, data, answer.headers)

    async def put(self, key: str, value: Any, *, content_type: Optional[str] = None,
                  ttl_seconds: Optional[int] = None, if_match: Optional[str] = None,
                  if_none_match: bool = False) -> MemoryItem:
        """Store value under key; the item (as Memory.put)."""
        data, kind = memory_body(value, content_type)
        path, headers = memory_put_parts(key, ttl_seconds, if_match, if_none_match)
        return json.loads(await self._client._call("PUT", path, data=data,
                                                   content_type=kind, headers=headers))

    async def delete(self, key: str, *, if_match: Optional[str] = None) -> None:
        """Delete key (as Memory.delete)."""
        headers = {"If-Match": quote_etag(if_match)} if if_match else None
        await self._client._call("DELETE", memory_path(key), headers=headers)

    async def list(self, prefix: Optional[str] = None, *, limit: Optional[int] = None,
                   cursor: Optional[str] = None) -> MemoryPage:
        """One page of keys: {"keys", "cursor"} (as Memory.list)."""
        return await self._client._json("GET", memory_list_path(prefix, limit, cursor))

    async def keys(self, prefix: Optional[str] = None) -> AsyncIterator[MemoryItem]:
        """Every item whose key starts with prefix, page after page."""
        cursor = None
        while True:
            page = await self.list(prefix, cursor=cursor)
            for item in page["keys"]:
                yield item
            cursor = page.get("cursor")
            if not cursor:
                return


class AsyncVolume(VolumeBase, _AsyncFiles):
    """A volume, for the asyncio client: Volume's methods as coroutines."""

    async def refresh(self) -> VolumeInfo:
        """Fetch the volume's record again; returns and keeps .info."""
        self.info = await self._client._json("GET", self._path)
        return self.info

    async def delete(self) -> None:
        """Delete the volume and every file in it (as Volume.delete)."""
        await self._client._call("DELETE", self._path)
