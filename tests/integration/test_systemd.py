"""systemd units: they pass `systemd-analyze verify`, and the socket
activation path works (systemd is not PID 1 here, so
`systemd-socket-activate` hands the sockets over, as systemd would): the
main socket alone, or with the status socket (isobox-status.socket,
FileDescriptorName=status) in either order, since systemd promises none."""
import configparser
import contextlib
import json
import os
import pathlib
import shutil
import socket
import subprocess
import tempfile

import pytest

from conftest import PREFIX, containers, wait_until

pytestmark = pytest.mark.alone("it starts isobox from the systemd units, beside the pools")  # shards.py

REPO = pathlib.Path(__file__).resolve().parents[2]
UNITS = sorted(str(p) for p in (REPO / "deploy" / "systemd").iterdir())


def test_units_verify_clean():
    assert len(UNITS) == 6
    out = subprocess.run(["systemd-analyze", "verify", *UNITS], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == "" and out.stderr == "", out


def fcgi_request(sock, method, uri, body=b""):
    """One FastCGI request with libfcgi's own client, cgi-fcgi."""
    env = {"PATH": "/usr/bin:/bin", "REQUEST_METHOD": method, "REQUEST_URI": uri,
           "SCRIPT_NAME": uri, "SERVER_PROTOCOL": "HTTP/1.1",
           "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)),
           "REMOTE_ADDR": "127.0.0.1"}  # as a web server sets it: loopback needs no key
    out = subprocess.run(["cgi-fcgi", "-bind", "-connect", sock], input=body, env=env,
                         capture_output=True, timeout=60)
    head, _, payload = out.stdout.partition(b"\r\n\r\n")
    return head.decode(), json.loads(payload)


def unit(name):
    conf = configparser.ConfigParser(strict=False, interpolation=None)
    conf.optionxform = str
    conf.read(REPO / "deploy" / "systemd" / name)
    return conf


def test_status_socket_unit_matches_the_main_one():
    main, status = unit("isobox.socket"), unit("isobox-status.socket")
    for key in ("SocketUser", "SocketGroup", "SocketMode", "DirectoryMode"):
        assert status["Socket"][key] == main["Socket"][key], key
    # The name is how the pool tells it from the main socket; the service
    # it starts is the pool's.
    assert status["Socket"]["FileDescriptorName"] == "status"
    assert status["Socket"]["Service"] == "isobox.service"
    assert "FileDescriptorName" not in main["Socket"]
    service = unit("isobox.service")["Service"]
    assert service["Sockets"].split() == ["isobox.socket", "isobox-status.socket"]
    spawn = unit("isobox-spawn-fcgi.service")["Service"]["ExecStart"]
    assert spawn.endswith("--status-socket " + status["Socket"]["ListenStream"]), spawn


@contextlib.contextmanager
def activated(socks, names=None):
    """The pool under systemd-socket-activate on these sockets (their names
    in LISTEN_FDNAMES, as systemd sets it), as user isobox; on exit, stopped
    and nothing of it left. Yields the process."""
    tmp = os.path.dirname(socks[0])
    cmd = ["setpriv", "--reuid=isobox", "--regid=isobox", "--init-groups", "--",
           "systemd-socket-activate"]
    for sock in socks:
        cmd += ["-l", sock]
    if names:
        cmd.append("--fdname=" + ":".join(names))
    cmd += ["--", f"{PREFIX}/bin/isobox-fcgi", "--conf", f"{PREFIX}/conf/isobox.yaml",
            "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield proc
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(tmp)
    assert wait_until(lambda: containers() == [], 10)
    assert subprocess.run(["pgrep", "-f", "isobox-activate-"]).returncode == 1


def socket_dir():
    tmp = tempfile.mkdtemp(prefix="isobox-activate-")
    os.chmod(tmp, 0o755)
    shutil.chown(tmp, "isobox", "isobox")
    return tmp


def comm(pid):
    with open(f"/proc/{pid}/comm") as f:
        return f.read().strip()


RUN = json.dumps({"language": "python", "code": "print(sum(range(100)))"}).encode()


def test_socket_activation_serves():
    tmp = socket_dir()
    sock = os.path.join(tmp, "isobox.sock")
    with activated([sock]):
        assert wait_until(lambda: os.path.exists(sock), 10), "no socket"
        head, body = fcgi_request(sock, "GET", "/healthz")
        assert head.startswith("Status: 200") and body["status"] == "ok"
        head, body = fcgi_request(sock, "POST", "/execute", RUN)
        assert head.startswith("Status: 200") and body["run"]["stdout"] == "4950\n", body


# systemd names a socket by its unit unless FileDescriptorName= says otherwise.
@pytest.mark.parametrize("status_first", [False, True], ids=["main-first", "status-first"])
def test_socket_activation_with_the_status_socket(status_first):
    tmp = socket_dir()
    main = (os.path.join(tmp, "isobox.sock"), "isobox.socket")
    status = (os.path.join(tmp, "status.sock"), "status")
    order = [status, main] if status_first else [main, status]
    with activated([p for p, _ in order], [n for _, n in order]):
        assert wait_until(lambda: os.path.exists(main[0]) and os.path.exists(status[0]), 10)
        # /healthz on the status socket comes from the status worker, which
        # answers nothing else; the main socket's workers run programs.
        head, body = fcgi_request(status[0], "GET", "/healthz")
        assert head.startswith("Status: 200"), (head, body)
        assert comm(body["pid"]) == "isobox-status" and body["pool"]["workers"] == 2, body
        head, body = fcgi_request(status[0], "POST", "/execute", RUN)
        assert head.startswith("Status: 404") and body["error"]["code"] == "not_found", body
        head, body = fcgi_request(main[0], "GET", "/healthz")
        assert head.startswith("Status: 200") and comm(body["pid"]) == "isobox-fcgi", body
        head, body = fcgi_request(main[0], "POST", "/execute", RUN)
        assert head.startswith("Status: 200") and body["run"]["stdout"] == "4950\n", body


# The pool must not guess which socket is which: it refuses to start.
@pytest.mark.parametrize("names,why", [
    (["isobox.socket", "other.socket"], b'name exactly one of them "status"'),
    (["status", "status"], b'name exactly one of them "status"'),
    (["status"], b"only the status socket"),
], ids=["none-named-status", "both-named-status", "status-alone"])
def test_socket_activation_refuses_what_it_cannot_tell_apart(names, why):
    tmp = socket_dir()
    socks = [os.path.join(tmp, f"{i}.sock") for i in range(len(names))]
    with activated(socks, names) as proc:
        # systemd-socket-activate starts the program at the first connection.
        assert wait_until(lambda: os.path.exists(socks[0]), 10), "no socket"
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(socks[0])
        assert proc.wait(10) != 0
        assert why in proc.stderr.read()
