"""isobox client: run untrusted code through an isobox server.

Standard library only (Python 3.8+). Install: pip install clients/python

    from isobox import Isobox, succeeded
    box = Isobox("http://127.0.0.1:8090")
    result = box.execute("python", "print(40 + 2)")
    print(result["run"]["stdout"], succeeded(result))                  # 42, True

    for event in box.stream("python", "print(1)"):
        print(event["event"], event["data"])

Sessions keep a sandbox between steps: its /workspace, and for a "kernel"
session (python) a live interpreter whose variables survive:

    with box.session("python", "kernel") as s:
        s.exec("x = 41")
        print(s.exec("x + 1")["kernel"]["value"])                       # 42
        s.upload("data/in.bin", b"\\x00\\xff")
        print(s.download("data/in.bin"), s.files("data"))

A session's background commands answer at once and run on beside its
steps (a pip install, a server); read their output from an offset:

        c = s.start_command("pip install --user tqdm 2>&1")
        out = s.command_output(c["id"])            # stdout, stdoutNext, running, exitCode
        more = s.command_output(c["id"], stdout_from=out["stdoutNext"])

The tenant's memory (values under keys, across runs) and volumes
(filesystems that outlive runs, mounted at /memory):

    box.memory.put("notes/plan", {"step": 2})
    print(box.memory.get("notes/plan")["value"])                       # b'{"step": 2}'
    vol = box.create_volume("data", 16 << 20)
    vol.upload("in.csv", "a,b\n1,2\n")
    box.execute("python", "print(open('/memory/in.csv').read())", volume="data")
    vol.delete()

One call with other options: box.with_options(timeout=600).execute(...).

For an agent: box.tools() gives isobox's tools as function-calling
definitions to hand a model, and box.call_tool(name, arguments) runs the
call it makes (MCP's tools/call). Sessions also answer to E2B's names:
s.run_code(code) is s.exec(code), s.kill() is s.close().

Typed (py.typed): results are TypedDicts (Result, SessionInfo, MemoryItem,
VolumeInfo, ...), plain dicts at run time that a type checker follows.

AsyncIsobox has the same methods as coroutines (asyncio, no dependency).

Errors raise IsoboxError with .status, .code, .message and .retry_after:
the server's (e.g. 409 session_busy, 404 session_not_found, 410
session_expired), or status 0 with code "connection_failed" or "timeout"
when the server could not be reached. A request refused before it ran (429,
503 busy) is sent again after the server's Retry-After, a bounded number of
times (retries=, max_retry_wait=; retries=0 turns it off).
"""
from ._async import AsyncIsobox, AsyncMemory, AsyncSession, AsyncVolume
from ._core import IsoboxError, succeeded
from ._sync import Isobox, Memory, Session, Volume
from ._types import (AppliedLimits, CommandInfo, CommandOutput, CommandWrite, FileEntry, FileWritten, KernelResult, MemoryItem, MemoryPage,
                     MemoryValue, OutputFile, Phase, Result, Runtime, Runtimes, SessionInfo,
                     StreamEvent, ToolDefinition, ToolResult, VolumeInfo)

__version__ = "0.1.0"
__all__ = ["Isobox", "Session", "Memory", "Volume", "AsyncIsobox", "AsyncSession", "AsyncMemory",
           "AsyncVolume", "IsoboxError", "succeeded",
           # the answers' shapes (TypedDicts: plain dicts at run time)
           "AppliedLimits", "CommandInfo", "CommandOutput", "CommandWrite", "FileEntry", "FileWritten", "KernelResult", "MemoryItem", "MemoryPage",
           "MemoryValue", "OutputFile", "Phase", "Result", "Runtime", "Runtimes", "SessionInfo",
           "StreamEvent", "ToolDefinition", "ToolResult", "VolumeInfo"]
