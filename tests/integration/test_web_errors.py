"""Errors a web server answers itself, before or instead of the worker (a
body over its cap, huge headers, a malformed request, the pool down or too
slow), in the worker's JSON error shape: {"error": {"code", "message"}} with
Content-Type: application/json. Each is provoked for real against each
shipped config. Where a server cannot give JSON, the test asserts what it
does give instead: those are the limits listed in docs/DEPLOY.md."""
import os
from urllib.parse import urlparse

import pytest

import webservers
from conftest import RUN_DIR
from webservers import exchange, json_error

pytestmark = pytest.mark.same_for_every_sandbox("what the web servers answer themselves")  # conftest.py

# Go's HTTP server answers these itself, before any of Caddy's handlers (so
# before handle_errors): text/plain. The documented limit.
GO_PLAIN = "Caddy (Go's net/http) answers this itself, as text/plain"

# kind -> case -> (status, JSON error code), or (status, GO_PLAIN).
EXPECTED = {
    "caddy": {"nul": (400, "bad_request"),
              "body": (413, "body_too_large"),    # the worker's: Caddy passes the stated length on
              "chunked": (413, "body_too_large"),
              "headers": (431, GO_PLAIN),
              "request_line": (400, GO_PLAIN)},
    "nginx": {"nul": (400, "bad_request"),
              "body": (413, "body_too_large"),
              "chunked": (413, "body_too_large"),
              "headers": (431, "headers_too_large"),
              "request_line": (400, "bad_request")},
    # Apache: %00 in a path is a 404, an over-long header line a 400, and a
    # body without a length is refused (deploy/apache/isobox-fcgi.conf).
    "apache": {"nul": (404, "not_found"),
               "body": (413, "body_too_large"),
               "chunked": (411, "length_required"),
               "headers": (400, "bad_request"),
               "request_line": (400, "bad_request")},
    "lighttpd": {"nul": (400, "bad_request"),
                 "body": (413, "body_too_large"),
                 "chunked": (413, "body_too_large"),
                 "headers": (431, "headers_too_large"),
                 "request_line": (400, "bad_request")},
    "apache-cgi": {"nul": (404, "not_found"),
                   "body": (413, "body_too_large"),
                   "chunked": (413, "body_too_large"),
                   "headers": (400, "bad_request"),
                   "request_line": (400, "bad_request")},
    "lighttpd-cgi": {"nul": (400, "bad_request"),
                     "body": (413, "body_too_large"),
                     "chunked": (413, "body_too_large"),
                     "headers": (431, "headers_too_large"),
                     "request_line": (400, "bad_request")},
}

BIG = 9 << 20  # over every server's 8 MiB cap


def head(server, method, path, *lines):
    target = urlparse(server.url).path + path
    text = f"{method} {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
    return (text + "".join(line + "\r\n" for line in lines) + "\r\n").encode()


def requests(server):
    body = b"a" * BIG
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 65536]), body[i:i + 65536])
                       for i in range(0, len(body), 65536)) + b"0\r\n\r\n"
    post = ("Content-Type: application/json",)
    return {
        "nul": head(server, "GET", "/exec%00ute"),
        "body": head(server, "POST", "/execute", *post, f"Content-Length: {BIG}") + body,
        "chunked": head(server, "POST", "/execute", *post, "Transfer-Encoding: chunked") + chunked,
        "headers": head(server, "GET", "/healthz", "X-Big: " + "a" * (2 << 20)),
        "request_line": b"NOT AN HTTP REQUEST\r\n\r\n",
    }


@pytest.fixture(scope="module", params=webservers.KINDS)
def server(request):
    with webservers.start(request.param) as s:
        yield s


@pytest.mark.attack("errors the web server answers itself: body over its cap, huge headers, %00, malformed request",
                    "the JSON error shape (or the documented text/plain of Go's own 431/400 behind Caddy)")
@pytest.mark.parametrize("case", ["nul", "body", "chunked", "headers", "request_line"])
def test_own_errors_are_json(server, case):
    want_status, want = EXPECTED[server.kind][case]
    status, headers, body = exchange(server.url, requests(server)[case])
    assert status == want_status, (status, body[:300], server.log_text())
    if want == GO_PLAIN:
        assert headers.get_content_type() == "text/plain", dict(headers)
    else:
        assert json_error(status, headers, body) == want


@pytest.mark.parametrize("kind", webservers.FCGI_KINDS)
def test_pool_down_is_json(kind):
    # A socket nobody listens on: the pool is down (or not started yet).
    missing = os.path.join(RUN_DIR, "nobody-here.sock")
    assert not os.path.exists(missing)
    with webservers.start(kind, socket_path=missing) as s:
        status, headers, body = exchange(s.url, head(s, "GET", "/healthz"))
    assert status in (502, 503), (status, body)
    assert json_error(status, headers, body) == "service_unavailable"


@pytest.mark.parametrize("kind", webservers.FCGI_KINDS)
def test_pool_too_slow_is_json(kind):
    # The server's wait for an answer made 2 s; the run takes 6.
    with webservers.start(kind, read_timeout=2) as s:
        code = b'{"language": "python", "code": "import time; time.sleep(6)"}'
        status, headers, body = exchange(
            s.url, head(s, "POST", "/execute", "Content-Type: application/json",
                        f"Content-Length: {len(code)}") + code)
    assert status == 504, (status, body)
    assert json_error(status, headers, body) == "gateway_timeout"
