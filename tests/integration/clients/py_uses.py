# Type-checked (mypy --strict, not run) by test_clients.py against the
# package pip installed in a venv: the documented uses must check clean.
from typing import List, Optional

from isobox import (AsyncIsobox, CommandInfo, CommandOutput, CommandWrite, FileEntry, Isobox, IsoboxError, Memory, MemoryItem, MemoryPage,
                    MemoryValue, Result, Runtimes, Session, SessionInfo, StreamEvent, ToolDefinition,
                    ToolResult, Volume, VolumeInfo, succeeded)


def uses(url: str) -> None:
    box = Isobox(url, api_key="ibx_x", timeout=5, retries=0, max_retry_wait=1)
    r: Result = box.execute("python", "print(1)", stdin="x", limits={"wallTimeMs": 1000})
    ok: bool = succeeded(r)
    out: str = r["run"]["stdout"]
    code: int = r["run"]["exitCode"]
    for ev in box.stream("python", "print(1)", network=False):
        e: StreamEvent = ev
    rt: Runtimes = box.runtimes()
    names: List[str] = [x["language"] for x in rt["runtimes"]]
    with box.session("python", "kernel", idle_timeout_ms=60000) as s:
        k: Result = s.exec("1 + 1")
        value: Optional[str] = k["kernel"]["value"]
        written = s.upload("a.bin", b"\x01")
        size: int = written["size"]
        back: bytes = s.download("a.bin")
        entries: List[FileEntry] = s.files()
        info: SessionInfo = s.refresh()
        s.remove("a.bin")
        c: CommandInfo = s.start_command("pip install x", stdin="y")
        cid: str = c["id"]
        o: CommandOutput = s.command_output(cid, stdout_from=0, max_bytes=4096, encoding="base64")
        nxt: int = o["stdoutNext"]
        ended: Optional[int] = o["exitCode"]
        w: CommandWrite = s.write_command_stdin(cid, "data", close=True)
        s.signal_command(cid, "SIGINT")
        listed: List[CommandInfo] = s.commands()
        s.delete_command(cid)
    same: Session = box.attach(s.id)
    mem: Memory = box.memory
    item: MemoryItem = mem.put("notes/plan", {"step": 2}, ttl_seconds=60, if_none_match=True)
    got: MemoryValue = mem.get("notes/plan")
    raw: bytes = got["value"]
    mem.put("notes/plan", "text", if_match=got["etag"], content_type="text/plain")
    page: MemoryPage = mem.list("notes/", limit=10)
    cursor: Optional[str] = page["cursor"]
    for i in mem.keys("notes/"):
        expires: Optional[str] = i["expiresAt"]
    mem.delete("notes/plan", if_match=item["etag"])
    vol: Volume = box.create_volume("data", 1 << 24)
    vinfo: VolumeInfo = vol.refresh()
    vols: List[VolumeInfo] = box.volumes()
    vol.upload("a.csv", "a,b")
    vbytes: bytes = vol.download("a.csv")
    vol.delete()
    slow: Isobox = box.with_options(timeout=600)
    try:
        box.runtimes()
    except IsoboxError as err:
        fields = (err.status, err.code, err.message, err.retry_after)


async def uses_async(url: str) -> None:
    box = AsyncIsobox(url)
    r: Result = await box.execute("python", "print(1)")
    async for ev in box.stream("python", "print(1)"):
        e: StreamEvent = ev
    async with box.session("python") as s:
        listing: List[FileEntry] = await s.files()
        ac: CommandInfo = await s.start_command(args=["sleep", "1"], stdin_open=True)
        ao: CommandOutput = await s.command_output(ac["id"], stderr_from=3)
        aw: CommandWrite = await s.write_command_stdin(ac["id"], "x")
        await s.signal_command(ac["id"])
        acs: List[CommandInfo] = await s.commands()
        await s.delete_command(ac["id"])
    got: MemoryValue = await box.memory.get("k")
    vols: List[VolumeInfo] = await box.volumes()
    slow: AsyncIsobox = box.with_options(timeout=600)
    tools: List[ToolDefinition] = await box.tools()
    called: ToolResult = await box.call_tool(tools[0]["function"]["name"], {"code": "1"})
    failed_call: bool = called["isError"]
    async with box.session("python", "kernel") as ks:
        ran: Result = await ks.run_code("1 + 1")
        await ks.kill()
