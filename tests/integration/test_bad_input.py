"""Bad input: a clear JSON error with the right status, through the real
server; nothing left behind; the workers keep serving."""
import concurrent.futures
import http.client
import json
from urllib.parse import urlparse

import pytest

from conftest import POOL, URL, containers, execute, request, run_ok, wait_until

OK = {"language": "python", "code": "print(1)"}


def error_of(status, body, want_status, want_code):
    assert status == want_status, body
    assert isinstance(body, dict) and set(body) == {"error"}, body
    assert body["error"]["code"] == want_code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]


CASES = [
    # (name, body (str = raw), status, code)
    ("malformed JSON", '{"language": "python", "code": ', 400, "bad_json"),
    ("not JSON at all", "print(1)", 400, "bad_json"),
    ("empty body", "", 400, "bad_json"),
    ("JSON array", "[]", 400, "invalid_type"),
    ("language is a number", {"language": 3, "code": "1"}, 400, "invalid_type"),
    ("code is a list", {"language": "python", "code": ["1"]}, 400, "invalid_type"),
    ("stdin is an object", dict(OK, stdin={}), 400, "invalid_type"),
    ("args of numbers", dict(OK, args=[1, 2]), 400, "invalid_type"),
    ("limits is a string", dict(OK, limits="big"), 400, "invalid_type"),
    ("limit is a string", dict(OK, limits={"memoryBytes": "1G"}), 400, "invalid_type"),
    ("negative limit", dict(OK, limits={"wallTimeMs": -5}), 400, "invalid_value"),
    ("zero limit", dict(OK, limits={"memoryBytes": 0}), 400, "invalid_value"),
    ("unknown field", dict(OK, timeout=5), 400, "unknown_field"),
    ("unknown limit", dict(OK, limits={"memory": 5}), 400, "unknown_field"),
    ("network a string", dict(OK, network="no"), 400, "invalid_type"),
    ("no language", {"code": "1"}, 400, "missing_field"),
    ("no code", {"language": "python"}, 400, "missing_field"),
    ("unknown language", {"language": "brainfuck", "code": "+"}, 404, "unknown_language"),
    ("unknown version", dict(OK, version="2.7"), 404, "unknown_version"),
    ("empty code", {"language": "python", "code": ""}, 400, "empty_code"),
    ("empty files", {"language": "python", "files": []}, 400, "empty_code"),
    ("code and files", dict(OK, files=[{"name": "a.py", "content": "1"}]), 400, "invalid_request"),
    ("absolute file name", {"language": "python",
                            "files": [{"name": "/etc/passwd", "content": "1"}]}, 400, "bad_file_name"),
    ("dot-dot file name", {"language": "python",
                           "files": [{"name": "../../x.py", "content": "1"}]}, 400, "bad_file_name"),
    ("NUL in file name", {"language": "python",
                          "files": [{"name": "a\u0000.py", "content": "1"}]}, 400, "invalid_value"),
    ("control byte in name", {"language": "python",
                              "files": [{"name": "a\u0001.py", "content": "1"}]}, 400, "bad_file_name"),
    ("file name too long", {"language": "python",
                            "files": [{"name": "a" * 300, "content": "1"}]}, 400, "bad_file_name"),
    ("duplicate file names", {"language": "python",
                              "files": [{"name": "a.py", "content": "1"},
                                        {"name": "a.py", "content": "2"}]}, 400, "bad_file_name"),
    ("too many files", {"language": "python",
                        "files": [{"name": f"f{i}.py", "content": "1"} for i in range(101)]},
     400, "too_many_files"),
    ("file too large", {"language": "python",
                        "files": [{"name": "a.py", "content": "#" * (1 << 20 | 1)}]},
     413, "file_too_large"),
    ("deep nesting", '{"language":"python","code":"1","limits":' + "[" * 5000, 400, "bad_json"),
]


@pytest.mark.parametrize("name,body,status,code", CASES, ids=[c[0] for c in CASES])
def test_bad_request_gets_a_json_error(name, body, status, code):
    got_status, _, got = request("POST", "/execute", body)
    error_of(got_status, got, status, code)


def test_body_over_the_limit_is_413():
    body = json.dumps({"language": "python", "code": "#" * (5 << 20)})
    status, _, got = request("POST", "/execute", body)
    error_of(status, got, 413, "body_too_large")


def chunked(parts, path="/execute"):
    u = urlparse(URL)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.request("POST", path, body=iter(parts), encode_chunked=True,
                 headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
    resp = conn.getresponse()
    return resp.status, json.loads(resp.read())


def test_body_without_content_length_is_read():
    body = json.dumps({"language": "python", "code": "print(6 * 7)"}).encode()
    status, got = chunked([body[:7], body[7:]])
    assert status == 200 and got["run"]["stdout"] == "42\n"


def test_body_without_content_length_is_still_capped():
    parts = [b'{"language":"python","code":"'] + [b"#" * 100000] * 50 + [b'"}']
    status, got = chunked(parts)
    error_of(status, got, 413, "body_too_large")


def test_huge_content_length_does_not_hold_a_worker():
    """A client that announces 100 MiB and stalls: the worker refuses it
    from the header alone, so every worker is still free for others."""
    u = urlparse(URL)
    stalled = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    stalled.putrequest("POST", "/execute")
    stalled.putheader("Content-Type", "application/json")
    stalled.putheader("Content-Length", str(100 << 20))
    stalled.endheaders()
    stalled.send(b'{"language":"python"')
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=POOL) as ex:
            results = list(ex.map(lambda i: execute(OK, timeout=30), range(POOL)))
        assert all(status == 200 for status, _ in results), results
    finally:
        stalled.close()


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_wrong_content_type_is_415(ctype):
    status, _, got = request("POST", "/execute", OK, headers={"Content-Type": ctype})
    error_of(status, got, 415, "unsupported_media_type")


def test_content_type_with_charset_is_fine():
    status, _, got = request("POST", "/execute", OK,
                             headers={"Content-Type": "application/json; charset=utf-8"})
    assert status == 200 and got["run"]["stdout"] == "1\n"


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH"])
def test_wrong_method_on_execute_is_405(method):
    status, headers, got = request(method, "/execute", OK if method != "GET" else None)
    error_of(status, got, 405, "method_not_allowed")
    assert headers["Allow"] == "POST"


def test_wrong_method_on_runtimes_is_405():
    status, headers, got = request("POST", "/runtimes", OK)
    error_of(status, got, 405, "method_not_allowed")
    assert headers["Allow"] == "GET"


def test_unknown_path_is_404():
    status, _, got = request("GET", "/nope")
    error_of(status, got, 404, "not_found")


def test_error_messages_with_invalid_utf8_stay_valid_json():
    raw = b'{"language": "\xff\xfe", "code": "1"}'
    status, _, got = request("POST", "/execute", raw)
    error_of(status, got, 404, "unknown_language")


def test_workers_still_serve_and_nothing_is_left():
    for name, body, _, _ in CASES:
        request("POST", "/execute", body)
    assert run_ok("print('alive')")["stdout"] == "alive\n"
    # removed just after the answer (sandbox_settle)
    assert wait_until(lambda: containers() == [], 10), containers()
