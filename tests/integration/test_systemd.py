"""systemd units: they pass `systemd-analyze verify`, and the socket
activation path works (systemd is not PID 1 here, so
`systemd-socket-activate` hands the socket over, as systemd would)."""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

from conftest import PREFIX, containers, wait_until

REPO = pathlib.Path(__file__).resolve().parents[2]
UNITS = sorted(str(p) for p in (REPO / "deploy" / "systemd").iterdir())


def test_units_verify_clean():
    assert len(UNITS) == 4
    out = subprocess.run(["systemd-analyze", "verify", *UNITS], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == "" and out.stderr == "", out


def fcgi_request(sock, method, uri, body=b""):
    """One FastCGI request with libfcgi's own client, cgi-fcgi."""
    env = {"PATH": "/usr/bin:/bin", "REQUEST_METHOD": method, "REQUEST_URI": uri,
           "SCRIPT_NAME": uri, "SERVER_PROTOCOL": "HTTP/1.1",
           "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body))}
    out = subprocess.run(["cgi-fcgi", "-bind", "-connect", sock], input=body, env=env,
                         capture_output=True, timeout=60)
    head, _, payload = out.stdout.partition(b"\r\n\r\n")
    return head.decode(), json.loads(payload)


def test_socket_activation_serves():
    tmp = tempfile.mkdtemp(prefix="isobox-activate-")
    os.chmod(tmp, 0o755)
    shutil.chown(tmp, "isobox", "isobox")
    sock = os.path.join(tmp, "isobox.sock")
    proc = subprocess.Popen(
        ["setpriv", "--reuid=isobox", "--regid=isobox", "--init-groups", "--",
         "systemd-socket-activate", "-l", sock, "--",
         f"{PREFIX}/bin/isobox-fcgi", "--conf", f"{PREFIX}/conf/isobox.yaml", "--workers", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert wait_until(lambda: os.path.exists(sock), 10), "no socket"
        head, body = fcgi_request(sock, "GET", "/healthz")
        assert head.startswith("Status: 200") and body["status"] == "ok"
        req = json.dumps({"language": "python", "code": "print(sum(range(100)))"}).encode()
        head, body = fcgi_request(sock, "POST", "/execute", req)
        assert head.startswith("Status: 200") and body["run"]["stdout"] == "4950\n", body
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(tmp)
    assert wait_until(lambda: containers() == [], 10)
    assert subprocess.run(["pgrep", "-f", "isobox-activate-"]).returncode == 1
