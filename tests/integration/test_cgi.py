"""CGI mode: the same binary, run by a real web server's CGI support
(lighttpd mod_cgi, from deploy/lighttpd/), answers one request per process."""
import os

import pytest

import webservers
from conftest import containers, execute, request, wait_until, work_dirs

PORT = int(os.environ.get("ISOBOX_CGI_PORT", "8091"))


@pytest.fixture(scope="module")
def cgi_server():
    # deploy/lighttpd/lighttpd.conf with isobox-cgi.conf, run as isobox.
    with webservers.start("lighttpd-cgi", port=PORT) as server:
        yield server.url


def test_cgi_execute(cgi_server):
    status, result = execute({"language": "python", "code": "print(sum(range(100)))"},
                             url=cgi_server)
    assert status == 200, result
    assert result["run"]["stdout"] == "4950\n" and result["backend"] == "gvisor"


def test_cgi_stdin_and_args(cgi_server):
    status, result = execute({"language": "python", "stdin": "abc", "args": ["x y"],
                              "code": "import sys\nprint(sys.stdin.read(), sys.argv[1:])"},
                             url=cgi_server)
    assert status == 200 and result["run"]["stdout"] == "abc ['x y']\n"


def test_cgi_errors_are_json(cgi_server):
    status, _, body = request("POST", "/execute", "{nope", url=cgi_server)
    assert status == 400 and body["error"]["code"] == "bad_json"
    status, _, body = request("GET", "/execute", url=cgi_server)
    assert status == 405 and body["error"]["code"] == "method_not_allowed"
    status, _, body = request("GET", "/runtimes", url=cgi_server)
    assert status == 200 and any(r["language"] == "python" for r in body["runtimes"])


def test_cgi_timeout_leaves_nothing(cgi_server):
    status, result = execute({"language": "python", "code": "while True: pass",
                              "limits": {"wallTimeMs": 1000}}, url=cgi_server)
    assert status == 200 and result["run"]["timedOut"] is True
    assert wait_until(lambda: containers() == [] and work_dirs() == [], 5)
