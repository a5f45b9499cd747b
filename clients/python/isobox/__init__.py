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

AsyncIsobox has the same methods as coroutines (asyncio, no dependency).

Errors raise IsoboxError with .status, .code, .message and .retry_after:
the server's (e.g. 409 session_busy, 404 session_not_found, 410
session_expired), or status 0 with code "connection_failed" or "timeout"
when the server could not be reached. A request refused before it ran (429,
503 busy) is sent again after the server's Retry-After, a bounded number of
times (retries=, max_retry_wait=; retries=0 turns it off).
"""
from ._async import AsyncIsobox, AsyncSession
from ._core import IsoboxError, succeeded
from ._sync import Isobox, Session

__version__ = "0.1.0"
__all__ = ["Isobox", "Session", "AsyncIsobox", "AsyncSession", "IsoboxError", "succeeded"]
