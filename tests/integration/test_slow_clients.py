"""Slow clients against each web server in front of the pool (issue 10,
item 4): 4x as many clients as workers announce a 100-byte body and then
send nothing, and as many again trickle it at a byte every 2 s. The shipped
configs read the whole body before the pool is dialled, so while they stall
no worker holds a connection, /healthz answers at once and a normal run
completes; and each server ends the slow clients in a bounded time.

(Before: four such clients held all four workers for the worker's own 10 s
body read timeout, /healthz took 11.9 s, and a trickle got no answer.)"""
import socket
import subprocess
import threading
import time
from urllib.parse import urlparse

import pytest

import webservers
from conftest import POOL, execute, request, wait_until
from webservers import SOCKET

pytestmark = pytest.mark.same_for_every_sandbox("the web servers and the pool's workers, before any sandbox")  # conftest.py

CLIENTS = 4 * POOL
TRICKLE_EVERY_S = 2

# How long each shipped config lets a slow client keep its connection, in
# seconds from its first byte (docs/DEPLOY.md, "Slow clients"). Headers and
# then silence: until the server's read timeout. A trickle: Caddy's
# read_body is one deadline for the whole request, and Apache's
# RequestReadTimeout body=20,MinRate=500 adds 1 s per 500 bytes (a trickle
# earns nothing); nginx and lighttpd time only the pauses between reads, so
# a trickle keeps its connection (never a worker) for as long as it goes on
# (None), and is cut the pause timeout after it stops. Caddy's read_body
# (shipped 30 s) is made 10 s here through ISOBOX_READ_BODY, to be quick.
SILENT_S = {"caddy": 10, "nginx": 10, "apache": 20, "lighttpd": 10}
TRICKLE_S = {"caddy": 10, "nginx": None, "apache": 20, "lighttpd": None}
START = {"caddy": lambda: webservers.caddy(ISOBOX_READ_BODY="10s")}
MARGIN_S = 8
# A run that waited behind the stalled clients would take the worker's own
# body read timeout (10 s) first; a free pool answers in about a second.
NOT_BLOCKED_S = 8


def pool_connections():
    """FastCGI connections the pool's workers hold now (their end of the
    socket: a worker has accepted a request and is serving it)."""
    out = subprocess.run(["ss", "-xHn", "state", "established", "src", SOCKET],
                         check=True, capture_output=True, text=True).stdout
    return len(out.splitlines())


class SlowClient:
    """POST /execute announcing a 100-byte body, then silence or a byte
    every TRICKLE_EVERY_S seconds; records when and how the server ended it."""

    def __init__(self, url, trickle):
        u = urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=5)
        self.sock.sendall(b"POST /execute HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                          b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n")
        self.sock.setblocking(False)
        self.trickle = trickle
        self.start = self.next_byte = time.monotonic()
        self.answer = b""
        self.ended = None  # seconds from start to the server's close

    def poll(self, now, trickling):
        if self.ended is not None:
            return
        if self.trickle and trickling and now >= self.next_byte:
            try:
                self.sock.send(b" ")
            except OSError:
                pass  # closed by the server: recv sees it
            self.next_byte = now + TRICKLE_EVERY_S
        try:
            data = self.sock.recv(65536)
        except BlockingIOError:
            return
        except ConnectionResetError:
            data = b""
        if data:
            self.answer += data
        else:
            self.ended = now - self.start

    def status(self):
        """The HTTP status the server answered with, or None (closed)."""
        if not self.answer:
            return None
        return int(self.answer.split(b" ", 2)[1])


class Crowd:
    """CLIENTS silent and CLIENTS trickling clients, driven by a thread
    until stop(); every connection is closed then."""

    def __init__(self, url):
        self.clients = []
        self.trickling = True
        self._stop = threading.Event()
        try:
            for trickle in (False, True):
                self.clients += [SlowClient(url, trickle) for _ in range(CLIENTS)]
        except BaseException:
            self.close()
            raise
        self._thread = threading.Thread(target=self._drive, daemon=True)
        self._thread.start()

    def _drive(self):
        while not self._stop.wait(0.1):
            now = time.monotonic()
            for c in self.clients:
                c.poll(now, self.trickling)

    def group(self, trickle):
        return [c for c in self.clients if c.trickle == trickle]

    def close(self):
        self._stop.set()
        if getattr(self, "_thread", None):
            self._thread.join(5)
        for c in self.clients:
            c.sock.close()


def assert_ended_well(clients, bound, what):
    late = [c.ended for c in clients if c.ended is None or c.ended > bound]
    assert not late, f"{what}: {len(late)} of {len(clients)} not ended within {bound} s: {late}"
    for c in clients:
        # A close, or an error answer (Caddy hands the worker the body it
        # got by its deadline, which the worker refuses).
        assert c.status() in (None, 400, 408), (what, c.answer[:400])
        if c.status() is not None:
            status, headers, body = webservers.exchange_parse(c.answer)
            webservers.json_error(status, headers, body)


@pytest.mark.attack("slow clients, 4x the pool: bodies that stall after the headers, and 1-byte trickles",
                    "no worker held, /healthz and a run answer at once, each slow client ended in bounded time")
@pytest.mark.parametrize("kind", webservers.FCGI_KINDS)
def test_slow_clients_hold_no_worker(kind):
    with START.get(kind, lambda: webservers.start(kind))() as server:
        assert pool_connections() == 0
        crowd = Crowd(server.url)
        try:
            time.sleep(1.5)  # every client has sent its headers, some a byte
            assert pool_connections() == 0, "a worker was handed a request still arriving"

            t0 = time.monotonic()
            status, _, body = request("GET", "/healthz", url=server.url, timeout=30)
            assert status == 200 and body["status"] == "ok", body
            assert time.monotonic() - t0 < 2, "/healthz waited behind the slow clients"

            t0 = time.monotonic()
            status, result = execute({"language": "python", "code": "print(1)"}, url=server.url)
            assert status == 200 and result["run"]["stdout"] == "1\n", result
            assert time.monotonic() - t0 < NOT_BLOCKED_S, "the run waited behind the slow clients"
            # The run's worker lets its connection go once the container is
            # removed, just after the answer (sandbox_settle).
            assert wait_until(lambda: pool_connections() == 0, 5), pool_connections()

            silent = crowd.group(trickle=False)
            bound = SILENT_S[kind] + MARGIN_S
            wait_until(lambda: all(c.ended is not None for c in silent), bound)
            assert_ended_well(silent, bound, "silent clients")

            trickling = crowd.group(trickle=True)
            if TRICKLE_S[kind] is not None:
                bound = TRICKLE_S[kind] + MARGIN_S
                wait_until(lambda: all(c.ended is not None for c in trickling), bound)
                assert_ended_well(trickling, bound, "trickling clients")
            else:
                # The documented limit: past the server's pause timeout a
                # trickle still has its connection, but no worker.
                first = min(c.start for c in trickling)
                time.sleep(max(0.0, first + SILENT_S[kind] + 4 - time.monotonic()))
                assert all(c.ended is None for c in trickling), \
                    [c.ended for c in trickling]
                assert pool_connections() == 0
                crowd.trickling = False  # now silent: cut after the pause timeout
                stopped = time.monotonic()
                bound = SILENT_S[kind] + MARGIN_S
                wait_until(lambda: all(c.ended is not None for c in trickling), bound)
                for c in trickling:
                    assert c.ended is not None and c.start + c.ended - stopped <= bound, \
                        "a trickle that stopped was not cut"
                assert_ended_well(trickling, float("inf"), "trickling clients")
        finally:
            crowd.close()
        assert pool_connections() == 0
