"""Attacks on request handling: what a hostile caller (or a hostile web
page in a victim's browser) can send, through the real web server."""
import json
import socket
import urllib.parse

import pytest

import webservers
from conftest import URL, containers, request, workers

pytestmark = pytest.mark.same_for_every_sandbox("the request parser, which refuses these before any sandbox starts")  # conftest.py

attack = pytest.mark.attack


def post_raw(path, body, content_type="application/json", headers=None):
    hdrs = {"Content-Type": content_type}
    hdrs.update(headers or {})
    return request("POST", path, body.encode() if isinstance(body, str) else body, headers=hdrs)


def high_water_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


@attack("duplicate keys: {\"network\": true, \"network\": false}",
        "400 duplicate_key on /execute and the Piston route; nothing runs")
def test_duplicate_keys_are_refused():
    status, _, body = post_raw("/execute", '{"language": "python", "network": true, '
                               '"network": false, "code": "print(1)"}')
    assert status == 400 and body["error"]["code"] == "duplicate_key", body
    status, _, body = post_raw("/api/v2/execute", '{"language": "python", "version": "*", '
                               '"files": [{"content": "print(1)", "content": "print(2)"}]}')
    assert status == 400 and body["error"]["code"] == "duplicate_key" and "message" in body, body
    assert containers() == []


@attack("DNS rebinding: a page served as evil.example re-points its name at isobox",
        "421 misdirected_request for every route; the service's own names still work")
def test_foreign_host_header_is_misdirected():
    evil = {"Host": "evil.example:8090"}
    for method, path, body in (("GET", "/runtimes", None), ("GET", "/metrics", None),
                               ("POST", "/execute", {"language": "python", "code": "print(1)",
                                                     "network": True})):
        status, _, answer = request(method, path, body, headers=evil)
        assert status == 421 and answer["error"]["code"] == "misdirected_request", (path, answer)
    host = urllib.parse.urlparse(URL).netloc
    assert request("GET", "/runtimes", headers={"Host": host})[0] == 200
    assert request("GET", "/runtimes", headers={"Host": "localhost"})[0] == 200
    assert containers() == []


@attack("cross-site form: a page posts code to the Piston route as text/plain, a form or multipart",
        "415 before anything runs (a browser sends these without a CORS preflight)")
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", ""])
def test_piston_refuses_what_a_browser_sends_cross_site(content_type):
    body = json.dumps({"language": "python", "version": "*", "files": [{"content": "print(1)"}]})
    if content_type.startswith("multipart"):
        body = f"--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n{body}\r\n--x--\r\n"
    for path in ("/api/v2/execute", "/execute"):
        status, _, answer = post_raw(path, body, content_type)
        assert status == 415 and answer["error"]["code"] == "unsupported_media_type", answer
    status, _, answer = post_raw("/api/v2/execute", body, content_type)
    assert answer["message"] == "requests must be of type application/json"  # Piston's words
    assert containers() == []


@attack("Piston body with data after the JSON value", "400 bad_json")
def test_piston_trailing_data():
    status, _, answer = post_raw("/api/v2/execute", '{"language": "python", "version": "*", '
                                 '"files": [{"content": "print(1)"}]} trailing')
    assert status == 400 and answer["error"]["code"] == "bad_json", answer
    assert containers() == []


@attack("Piston base64 file that goes on after '=' (it used to be cut there and run)",
        "400 invalid_value; nothing runs")
@pytest.mark.parametrize("content", ["cHJpbnQoMSk=cHJpbnQoMik=", "cHJpbnQoMSk=!!", "cHJpbnQoMSl="])
def test_piston_base64_must_be_exact(content):
    status, _, answer = post_raw("/api/v2/execute", json.dumps({
        "language": "python", "version": "*", "files": [{"content": content, "encoding": "base64"}]}))
    assert status == 400 and answer["error"]["code"] == "invalid_value", answer
    assert containers() == []


@attack("a 3.6 MiB body of \"args\": [0,0,...] (it grew a worker by 162 MiB, 319 MiB via Piston)",
        "400 too_many before parsing; no worker grows by more than 32 MiB")
@pytest.mark.parametrize("path", ["/execute", "/api/v2/execute"])
def test_many_small_values_cost_the_worker_little(path):
    before = {pid: high_water_kib(pid) for pid in workers()}
    args = ",".join(["0"] * (1800 * 1024))
    if path == "/execute":
        body = '{"language": "python", "code": "print(1)", "args": [' + args + ']}'
    else:
        body = '{"language": "python", "version": "*", "files": [{"content": "1"}], "args": [' + args + ']}'
    status, _, answer = post_raw(path, body)
    # Refused by the count taken before cJSON builds anything (the old
    # code refused too, but only after building the whole tree).
    assert status == 400 and answer["error"]["code"] == "too_many", answer
    assert "JSON values" in answer["error"]["message"], answer
    grown = {pid: high_water_kib(pid) - kib for pid, kib in before.items()
             if high_water_kib(pid)}
    assert max(grown.values()) < 32 * 1024, f"a worker's peak memory grew by {grown} KiB"


@attack("a body cut off before its Content-Length that is still valid JSON (Caddy hands on "
        "what came by its read_body deadline)", "400 bad_request; the cut request never runs")
def test_body_shorter_than_its_length_never_runs():
    with webservers.caddy(ISOBOX_READ_BODY="3s") as caddy:  # the shipped 30 s, made short
        u = urllib.parse.urlparse(caddy.url)
        body = b'{"language": "python", "code": "print(1)"}'
        with socket.create_connection((u.hostname, u.port), timeout=60) as s:
            s.sendall(b"POST /execute HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                      b"Content-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n%s" % (len(body) + 20, body))
            answer = b""
            while True:  # until Caddy's read_body deadline
                chunk = s.recv(65536)
                if not chunk:
                    break
                answer += chunk
    head, _, rest = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), answer
    assert json.loads(rest)["error"]["code"] == "bad_request", answer
    assert containers() == []
