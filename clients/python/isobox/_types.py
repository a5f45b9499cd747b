"""The shapes of what the server answers (docs/openapi.yaml), as TypedDicts:
plain dicts at run time, read like the JSON (result["run"]["stdout"]), and
checked by a type checker. total=False where the API leaves a field out."""
from typing import Any, Dict, List, Literal, Optional, TypedDict, Union


class Phase(TypedDict):
    """One phase of a run (compile or run)."""
    stdout: str
    stderr: str
    exitCode: int
    signal: Optional[str]  # "SIGSEGV": from the wait status; None for an exit (exit(139) too)
    timedOut: bool
    oomKilled: bool
    truncated: bool
    durationMs: int
    cpuTimeMs: Optional[int]        # the host's count for the sandbox; None where not measured
    peakMemoryBytes: Optional[int]  # high-water mark, at most memoryBytes; None in a session step


class AppliedLimits(TypedDict, total=False):
    memoryBytes: int
    cpus: float
    pids: int
    outputBytes: int
    wallTimeMs: int
    compileTimeMs: int


class OutputFile(TypedDict):
    """A file a run left in its work dir (outputs=)."""
    name: str
    size: int
    encoding: Literal["utf-8", "base64"]
    content: str


class KernelError(TypedDict):
    name: str
    value: str
    traceback: List[str]


class Image(TypedDict):
    type: str
    data: str


class KernelResult(TypedDict, total=False):
    """A kernel step's cell: its value, error, figures and outputs."""
    value: Optional[str]
    error: Optional[KernelError]
    images: List[Image]
    outputs: List[Dict[str, Any]]
    restarted: bool


class StepSession(TypedDict, total=False):
    id: str
    type: Literal["shell", "kernel"]
    ended: str


class Result(TypedDict, total=False):
    """What execute() and a session step return. run is absent only when a
    compile failed; session and kernel only on a session's step."""
    language: str
    version: str
    backend: Literal["gvisor", "runc"]
    warm: bool
    coldReason: str
    compile: Phase
    run: Phase
    limits: AppliedLimits
    outputs: List[OutputFile]
    outputsTruncated: bool
    session: StepSession
    kernel: KernelResult


class Runtime(TypedDict, total=False):
    language: str
    version: str
    aliases: List[str]
    default: bool


class Runtimes(TypedDict):
    runtimes: List[Runtime]


class SessionInfo(TypedDict, total=False):
    """A session's record (GET /v1/sessions/{id})."""
    id: str
    language: str
    version: str
    type: Literal["shell", "kernel"]
    limits: AppliedLimits
    network: bool
    volume: Optional[str]
    volumeReadOnly: bool
    state: str
    memoryUsedBytes: Optional[int]
    steps: int
    idleTimeoutMs: int
    maxLifetimeMs: int
    createdAt: str
    lastUsedAt: str
    expiresAt: str


class CommandInfo(TypedDict, total=False):
    """A background command of a session (start_command, commands())."""
    id: str
    args: List[str]
    running: bool
    exitCode: Optional[int]
    signal: Optional[str]
    stdinOpen: bool
    stdoutBytes: int
    stderrBytes: int


class CommandOutput(TypedDict):
    """What a command wrote from the offsets asked for (command_output)."""
    id: str
    running: bool
    exitCode: Optional[int]
    signal: Optional[str]
    encoding: Literal["utf-8", "base64"]
    stdout: str
    stdoutFrom: int
    stdoutNext: int
    stderr: str
    stderrFrom: int
    stderrNext: int


class CommandWrite(TypedDict):
    written: int
    closed: bool


class FileEntry(TypedDict):
    name: str
    type: Literal["file", "directory", "link", "other"]
    size: int
    mtime: str


class FileWritten(TypedDict):
    path: str
    size: int


class MemoryItem(TypedDict):
    """A value's record in the tenant's memory."""
    key: str
    size: int
    contentType: str
    etag: str
    updatedAt: str
    expiresAt: Optional[str]


class MemoryValue(TypedDict):
    """What Memory.get returns: the bytes and what the server said of them."""
    key: str
    value: bytes
    contentType: str
    etag: str


class MemoryPage(TypedDict):
    keys: List[MemoryItem]
    cursor: Optional[str]


class VolumeInfo(TypedDict, total=False):
    """A volume's record; usedBytes only from GET /v1/volumes/{name}."""
    name: str
    sizeBytes: int
    state: Literal["creating", "ready", "deleting"]
    createdAt: str
    host: str
    usedBytes: Optional[int]


class StreamEvent(TypedDict):
    """One event of a stream: "stdout"/"stderr" with bytes, "compile" with
    a Phase, "display" with a kernel cell's output as it happens (a
    KernelOutput), and last "result" with a Result (or "error")."""
    event: str
    data: Union[bytes, Phase, Result, Dict[str, Any]]


class ToolFunction(TypedDict):
    name: str
    description: str
    parameters: Dict[str, Any]  # the tool's input schema (JSON Schema)


class ToolDefinition(TypedDict):
    """A tool as function-calling APIs take it (GET /v1/tools)."""
    type: Literal["function"]
    function: ToolFunction


class ToolResult(TypedDict, total=False):
    """What a tool call gives, as MCP's tools/call result: content items
    ({"type": "text", "text"} or {"type": "image", "data", "mimeType"}),
    the API's result (or error) object, and whether it went wrong."""
    content: List[Dict[str, Any]]
    structuredContent: Dict[str, Any]
    isError: bool


# What a file's or a value's content may be given as.
Data = Union[bytes, bytearray, memoryview, str]
