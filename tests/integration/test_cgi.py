"""CGI mode: the same binary, run by a real web server's CGI support
(lighttpd mod_cgi), answers one request per process."""
import os
import pathlib
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import PREFIX, containers, execute, healthy, request, wait_until, work_dirs

PORT = int(os.environ.get("ISOBOX_CGI_PORT", "8091"))
URL = f"http://127.0.0.1:{PORT}/isobox"

CONFIG = """
server.modules = ("mod_alias", "mod_cgi", "mod_setenv")
server.bind = "127.0.0.1"
server.port = {port}
server.username = "isobox"
server.groupname = "isobox"
server.document-root = "{root}"
server.errorlog = "{root}/error.log"
alias.url = ("/isobox" => "{binary}")
$HTTP["url"] =~ "^/isobox" {{
    cgi.assign = ("" => "")
}}
setenv.add-environment = ("ISOBOX_CONF" => "{conf}")
"""


@pytest.fixture(scope="module")
def cgi_server():
    # Not under pytest's tmp dir: that is 0700 root, and lighttpd opens its
    # log after dropping to the isobox user.
    root = pathlib.Path(tempfile.mkdtemp(prefix="isobox-lighttpd-"))
    os.chmod(root, 0o755)
    shutil.chown(root, "isobox")
    config = root / "lighttpd.conf"
    config.write_text(CONFIG.format(port=PORT, root=root, binary=f"{PREFIX}/bin/isobox-fcgi",
                                    conf=f"{PREFIX}/conf/isobox.yaml"))
    proc = subprocess.Popen(["lighttpd", "-D", "-f", str(config)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        up = wait_until(lambda: healthy(URL), 15)
        log = root / "error.log"
        assert up, f"lighttpd did not come up: {log.read_text() if log.exists() else proc.stderr}"
        yield URL
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(root)


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
