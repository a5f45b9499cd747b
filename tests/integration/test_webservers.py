"""isobox behind each web server it ships a config for (deploy/caddy,
deploy/nginx, deploy/apache, deploy/lighttpd), FastCGI pool and CGI mode:
each real server from Debian, started from the shipped file on its own
port, must pass the calls through whole, route on the path, and stream
Server-Sent Events as the program writes (not buffered until the end)."""
import http.client
import json
from urllib.parse import urlparse

import pytest

import webservers
from conftest import request
from streaming import SPACED_CODE, collect, gaps, stdout_arrivals


@pytest.fixture(scope="module", params=webservers.KINDS)
def server(request):
    with webservers.start(request.param) as s:
        yield s


def post_chunked(url, path, pieces, content_type="application/json"):
    """POST a body with Transfer-Encoding: chunked (no Content-Length)."""
    u = urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    try:
        conn.request("POST", u.path + path, body=iter(pieces), encode_chunked=True,
                     headers={"Content-Type": content_type, "Transfer-Encoding": "chunked"})
        resp = conn.getresponse()
        raw = resp.read()
        try:
            return resp.status, json.loads(raw)
        except ValueError:
            return resp.status, raw.decode(errors="replace")
    finally:
        conn.close()


def test_healthz(server):
    status, _, body = request("GET", "/healthz", url=server.url)
    assert status == 200, (body, server.log_text())
    assert body["status"] == "ok" and body["languages"] > 0


def test_no_cgi_status_header_reaches_the_client(server):
    """CGI's Status line sets the response's status, and is not a header of
    it (Caddy 2.6 passed it on as one, on every response)."""
    for method, path in (("GET", "/healthz"), ("GET", "/runtimes"), ("GET", "/nope")):
        status, headers, _ = request(method, path, url=server.url)
        assert status in (200, 404) and "Status" not in headers, (path, dict(headers))
    status, headers, _ = request("POST", "/execute", {"language": "python", "code": "print(1)"}, url=server.url)
    assert status == 200 and "Status" not in headers, dict(headers)


def test_routes_on_the_path(server):
    status, _, body = request("GET", "/runtimes", url=server.url)
    assert status == 200 and any(r["language"] == "python" for r in body["runtimes"]), body
    status, _, body = request("GET", "/nope", url=server.url)
    assert status == 404 and body["error"]["code"] == "not_found", body
    status, headers, body = request("GET", "/execute", url=server.url)
    assert status == 405 and body["error"]["code"] == "method_not_allowed", body
    assert headers["Allow"] == "POST"


def test_answer_without_reading_the_body(server):
    # Refused before the body is read: the server must still pass the
    # answer on (Apache's CGI writes the whole body first).
    junk = b"x" * (1 << 20)
    status, _, body = request("POST", "/nope", junk, url=server.url)
    assert status == 404 and body["error"]["code"] == "not_found", body
    status, _, body = request("POST", "/execute", junk, url=server.url,
                              headers={"Content-Type": "text/plain"})
    assert status == 415 and body["error"]["code"] == "unsupported_media_type", body


def test_the_api_key_reaches_isobox(server):
    """The Authorization header is passed on: a wrong key is refused even
    from loopback (had the server dropped it, the call would pass as the
    anonymous tenant)."""
    status, headers, body = request("GET", "/runtimes", url=server.url,
                                    headers={"Authorization": "Bearer ibx_00000000_" + "0" * 64})
    assert status == 401 and body["error"]["code"] == "unauthorized", (body, server.log_text())
    assert headers["WWW-Authenticate"].startswith("Bearer")


def test_sync_execute(server):
    status, headers, body = request("POST", "/execute", {"language": "python", "code": "print(1)"},
                                    url=server.url)
    assert status == 200, (body, server.log_text())
    assert headers["Content-Type"] == "application/json"
    assert body["run"]["stdout"] == "1\n" and body["run"]["exitCode"] == 0


def test_stream_is_not_buffered(server):
    resp, evs = collect({"language": "python", "code": SPACED_CODE}, server.url)
    assert resp.getheader("Content-Type") == "text/event-stream"
    out = stdout_arrivals(evs)
    assert [text for _, text in out] == ["line 0\n", "line 1\n", "line 2\n"]
    # A second apart as written; a buffering server delivers them together.
    assert all(g >= 0.6 for g in gaps(out)), gaps(out)
    assert evs[-1][1] == "result"
    assert json.loads(evs[-1][2])["run"]["stdout"] == "line 0\nline 1\nline 2\n"


# Apache in front of the pool refuses a body without a length: it spools
# each body before the pool sees it, and cannot cap a spool whose size it
# learns only at the end (docs/DEPLOY.md, deploy/apache/isobox-fcgi.conf).
REFUSES_CHUNKED = {"apache"}


def test_chunked_request_body(server):
    status, body = post_chunked(server.url, "/execute",
                                [b'{"language": "python", ', b'"code": "print(6 * 7)"}'])
    if server.kind in REFUSES_CHUNKED:
        assert status == 411 and body["error"]["code"] == "length_required", body
        return
    assert status == 200, (body, server.log_text())
    assert body["run"]["stdout"] == "42\n"


def test_oversized_body_gets_isobox_json_413(server):
    # Over the worker's 4 MiB request.maxBodyBytes, under every server's own
    # 8 MiB cap: the worker's JSON error reaches the client.
    big = b'{"language": "python", "code": "print(1)", "stdin": "' + b"a" * (5 << 20) + b'"}'
    status, _, body = request("POST", "/execute", big, url=server.url)
    assert status == 413 and body["error"]["code"] == "body_too_large", body
    pieces = [big[i:i + 65536] for i in range(0, len(big), 65536)]
    status, body = post_chunked(server.url, "/execute", pieces)
    if server.kind in REFUSES_CHUNKED:
        assert status == 411 and body["error"]["code"] == "length_required", body
        return
    assert status == 413 and body["error"]["code"] == "body_too_large", body
