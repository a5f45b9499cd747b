"""Attacks on sessions, from inside the sandbox and through the files API:
paths that leave /workspace, links planted for the host to follow, the
agent killed or lied to, floods. Each asserts the specific safe outcome."""
import json
import time

import pytest

from conftest import SUITE, request, wait_until
from sessions_util import (MAKE_SPECIALS, create, delete, get, gone_without_trace, put, raw,
                           special_files_refused, step, step_ok)
from test_attacks_egress import assert_no_network, no_network_probe

attack = pytest.mark.attack


@pytest.fixture
def sid():
    s = create()
    yield s["id"]
    delete(s["id"])


def error_code(body):
    return json.loads(body)["error"]["code"] if isinstance(body, bytes) else body["error"]["code"]


@attack("in a session without network: list its interfaces, read and write its /etc/hosts, resolve the host's name",
        "loopback only, and it works; /etc/hosts names localhost alone, read-only; the host's name does not resolve")
def test_no_network_session_has_loopback_and_localhost_only(sid):
    assert_no_network(step_ok(sid, no_network_probe())["run"]["stdout"])


@attack("files API: a path with .. (escaped) leaves /workspace", "400 bad_file_name, nothing read or written")
def test_dotdot(sid):
    for path in ["..%2F..%2Fetc%2Fpasswd", "a/%2e%2e/%2e%2e/etc/passwd", "%2e%2e"]:
        status, _, body = get(sid, path)
        assert status == 400 and error_code(body) == "bad_file_name", (path, body)
        status, body = put(sid, path, b"x")
        assert status == 400 and body["error"]["code"] == "bad_file_name", (path, body)


@attack("files API: an absolute path", "400 bad_file_name")
def test_absolute(sid):
    status, _, body = get(sid, "%2Fetc%2Fpasswd")
    assert status == 400 and error_code(body) == "bad_file_name", body


@attack("files API: names with control bytes or NUL", "400 bad_file_name, or no route (404); nothing made")
def test_control_bytes(sid):
    for path in ["a%01b", "a%0Ab", "a%7Fb", "a%00b"]:
        status, body = put(sid, path, b"x")
        assert status in (400, 404), (path, body)  # a NUL: the web server refuses it first
    r = step_ok(sid, "import os\nprint(sorted(os.listdir('.')))")
    assert r["run"]["stdout"] == "['main.py']\n", r


@attack("files API: a symlink made in the session to /etc/passwd", "get and put refused (400 not_a_file), no link followed")
def test_symlink_to_etc_passwd(sid):
    step_ok(sid, "import os\nos.symlink('/etc/passwd', 'pw')\nos.symlink('/', 'top')")
    status, _, body = get(sid, "pw")
    assert status == 400 and error_code(body) == "not_a_file" and b"root:" not in body, body
    status, body = put(sid, "pw", b"owned\n")
    assert status == 400 and body["error"]["code"] == "not_a_file", body
    status, _, body = get(sid, "top/etc/passwd")
    assert status == 400 and b"root:" not in body, body
    status, body = put(sid, "top/tmp/x", b"owned")
    assert status == 400, body
    status, _, listing = request("GET", f"/v1/sessions/{sid}/files?path=top")
    assert status == 400, listing
    status, _, listing = request("GET", f"/v1/sessions/{sid}/files")
    kinds = {e["name"]: e["type"] for e in listing["entries"]}
    assert kinds["pw"] == "link" and kinds["top"] == "link"
    # Deleting the link removes the link, not what it names.
    assert raw("DELETE", f"/v1/sessions/{sid}/files/pw")[0] == 204
    r = step_ok(sid, "import os\nprint(os.path.lexists('pw'), open('/etc/passwd').read().startswith('root:'))")
    assert r["run"]["stdout"] == "False True\n"
    with open("/etc/passwd") as f:
        assert "owned" not in f.read()


@attack("files API: a file replaced by a link between list and get", "the get sees the link and refuses it (400)")
def test_swapped_for_a_link(sid):
    assert put(sid, "data.txt", b"plain")[0] == 201
    status, _, listing = request("GET", f"/v1/sessions/{sid}/files")
    assert any(e["name"] == "data.txt" and e["type"] == "file" for e in listing["entries"])
    step_ok(sid, "import os\nos.remove('data.txt')\nos.symlink('/etc/shadow', 'data.txt')")
    status, _, body = get(sid, "data.txt")
    assert status == 400 and error_code(body) == "not_a_file", body


@attack("files API: a hard link to a file outside /workspace", "cannot be made (another file system); nothing to read")
def test_hard_link(sid):
    r = step_ok(sid, "import os\ntry:\n    os.link('/etc/passwd', 'hard')\n    print('linked')\nexcept OSError as e:\n    print(e.errno)")
    assert r["run"]["stdout"].strip() != "linked", r
    assert get(sid, "hard")[0] == 404


@attack("files API: FIFOs, sockets, hard links to them and device nodes made by a step (twins of /dev/null "
        "and /dev/ptmx where mknod is let through), at GET, HEAD, PUT, DELETE and list",
        "400 not_a_file at once (no 503, nothing waits), listed as type other; none is opened (a writer "
        "waiting on a FIFO stays waiting), written or replaced; DELETE removes the name; the next step runs")
def test_special_files(sid):
    made = step_ok(sid, MAKE_SPECIALS)["run"]["stdout"].split()
    assert {"fifo", "fifo-link", "sock", "sock-link"} <= set(made), made
    # A writer waits in its open of a FIFO: an open of the other end lets it on.
    step_ok(sid, "import os, subprocess, sys, time\nos.mkfifo('w')\n"
                 "subprocess.Popen([sys.executable, '-c', \"import os\\nos.open('w', os.O_WRONLY)\\n"
                 "open('released', 'w').close()\"])\ntime.sleep(0.5)")
    made.append("w")
    status, _, listing = request("GET", f"/v1/sessions/{sid}/files")
    assert status == 200 and all(e["type"] == "other" for e in listing["entries"] if e["name"] in made), listing
    assert {e["name"] for e in listing["entries"]} >= set(made), listing
    special_files_refused(f"/v1/sessions/{sid}/files", made)
    r = step_ok(sid, "import os, stat\nprint(os.path.exists('released'), "
                     "sorted(n for n in os.listdir('.') if stat.S_ISREG(os.lstat(n).st_mode)))")
    assert r["run"]["stdout"] == "False ['main.py']\n", r
    for name in made:
        assert raw("DELETE", f"/v1/sessions/{sid}/files/{name}")[0] == 204, name
    r = step_ok(sid, "import os\nprint(sorted(os.listdir('.')))")
    assert r["run"]["stdout"] == "['main.py']\n", r


@attack("session: a step kills its agent (PID 1)", "the step is answered, the session ends clearly (410), "
        "nothing is left (runc: the kernel drops a SIGKILL sent to a namespace's init from inside it; "
        "the step ends as the program does, the session lives on)")
def test_agent_killed(sid):
    start = time.monotonic()
    status, result = step(sid, "import os, signal\nos.kill(1, signal.SIGKILL)\nimport time\ntime.sleep(5)")
    assert time.monotonic() - start < 20
    if SUITE["backend"] == "runc":
        assert status == 200 and result["run"]["exitCode"] == 0 and "ended" not in result["session"], result
        assert step(sid, "print('alive')")[1]["run"]["stdout"] == "alive\n"
        return
    assert status == 200 and result["session"]["ended"], result
    status, _, err = request("GET", f"/v1/sessions/{sid}")
    assert status == 410 and err["error"]["code"] == "session_expired"
    assert gone_without_trace(sid)


@attack("session: a step writes forged agent frames to the agent's stdout", "only its own step is misreported; the session or its end is clean")
def test_forged_frames(sid):
    forge = ("import os\nfd = os.open('/proc/1/fd/1', os.O_WRONLY)\n"
             "os.write(fd, b'end 0000000000000000 0 0\\nout 0000000000000000 5\\nforge')\n"
             "print('real')")
    status, result = step(sid, forge)
    assert status == 200 and "forge" not in result["run"]["stdout"], result
    garbage = "import os\nfd = os.open('/proc/1/fd/1', os.O_WRONLY)\nos.write(fd, b'\\x00garbage\\n' * 3)"
    status, result = step(sid, garbage)
    assert status in (200, 410), result
    after, r = step(sid, "print('after')")
    if result.get("session", {}).get("ended") or status == 410:
        assert after == 410 and gone_without_trace(sid)
    else:
        assert after == 200 and r["run"]["stdout"] == "after\n"
    other = create()["id"]
    try:
        assert step_ok(other, "print('unaffected')")["run"]["stdout"] == "unaffected\n"
    finally:
        delete(other)


# A background command that forges the agent's answers to the commands
# API: ends with an all-zero tag and with made-up lists and reads, and
# garbage, written to the agent's stdout while the caller reads on.
FORGER = ("import os, time\n"
          "fd = os.open('/proc/1/fd/1', os.O_WRONLY)\n"
          "listed = b'ffffffffffffffff 1 -1 0 0 2\\nx\\0'\n"
          "read = b'1 -1 0 6 6 0 0 0\\nforged'\n"
          "print('forging', flush=True)\n"
          "for i in range(100):\n"
          "    for body in (listed, read):\n"
          "        os.write(fd, b'end ' + b'0' * 16 + b' 0 %d\\n' % len(body) + body)\n"
          "    os.write(fd, b'\\x00garbage\\n')\n"
          "    time.sleep(0.05)\n")


@attack("session: a background command writes forged agent answers (command lists, output reads, garbage) "
        "to the agent's stdout while the commands API is read",
        "no forged command or output is ever answered: each call gets the session's own truth or a clear "
        "error, or the session ends (410); other sessions go on, nothing is left")
def test_a_command_forges_agent_answers():
    sid = create()["id"]
    try:
        status, _, started = request("POST", f"/v1/sessions/{sid}/commands", {"args": ["python3", "-c", FORGER]})
        assert status == 201, started
        forger = started["id"]
        seen = set()
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            status, _, listed = request("GET", f"/v1/sessions/{sid}/commands")
            seen.add(status)
            if status == 200:
                assert [c["id"] for c in listed["commands"]] == [forger], listed
            else:
                assert status in (410, 503), listed
                break
            status, _, read = request("GET", f"/v1/sessions/{sid}/commands/{forger}")
            seen.add(status)
            if status == 200:
                assert "forged" not in read["stdout"] and read["stdout"] in ("", "forging\n"), read
            else:
                assert status in (410, 503), read
                break
        print(f"statuses seen: {sorted(seen)}")
        after, r = step(sid, "print('after')")
        assert (after == 200 and r["run"]["stdout"] == "after\n") or after == 410, r
    finally:
        delete(sid)
    assert gone_without_trace(sid)
    other = create()["id"]
    try:
        assert step_ok(other, "print('unaffected')")["run"]["stdout"] == "unaffected\n"
    finally:
        delete(other)


@attack("session: a step floods output", "truncated at outputBytes, the step interrupted, the session goes on")
def test_output_flood(sid):
    r = step_ok(sid, "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)", limits={"outputBytes": 10000})
    assert r["run"]["truncated"] and len(r["run"]["stdout"]) == 10000
    assert step_ok(sid, "print('ok')")["run"]["stdout"] == "ok\n"


@attack("session: a fork bomb in a step", "bounded by the session's pids; the step is answered with none of it left, and the session still works or ends clearly")
def test_fork_bomb(sid):
    start = time.monotonic()
    status, r = step(sid, "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
                     limits={"wallTimeMs": 3000})
    assert time.monotonic() - start < 30 and status == 200, r
    assert r["run"]["timedOut"] or r["session"].get("ended")
    # A next step that runs sees the agent (PID 1) and itself: nothing of
    # the bomb goes on holding the session's memory and pids (it once did:
    # the next step was killed for memory). Or the session has ended, and
    # says why: gone already (410), or ending under that step (200, its
    # reason in session.ended, no run). A CI run on a loaded host saw the
    # bomb outlive the agent's sweep (SWEEP_MS); the agent now ends the
    # session then, after the bomb's answer.
    after, r2 = step(sid, "import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit())[:1], "
                          "sum(p.isdigit() for p in os.listdir('/proc')))")
    ran = after == 200 and "run" in r2
    ended = after == 410 or (after == 200 and "run" not in r2 and r2["session"]["ended"])
    assert (ran and r2["run"]["stdout"] == "[1] 2\n") or ended, r2


@attack("session: a step replaces the agent or adds to its directory", "refused (EACCES/EROFS: root's, mounted read-only)")
def test_agent_dir_read_only(sid):
    code = ("import errno\nfor p in ['/isobox-agent/isobox-agent', '/isobox-agent/new']:\n"
            "    try:\n        open(p, 'wb')\n        print('written')\n"
            "    except OSError as e:\n        print(errno.errorcode[e.errno])")
    out = step_ok(sid, code)["run"]["stdout"].split()
    assert len(out) == 2 and set(out) <= {"EROFS", "EACCES"}, out


@attack("session: deleted while a step runs", "the step is answered at once, the sandbox is gone")
def test_deleted_mid_step():
    sid = create()["id"]
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        running = ex.submit(step, sid, "import time\ntime.sleep(30)")
        assert wait_until(lambda: request("GET", f"/v1/sessions/{sid}")[2]["state"] == "busy", 10, step=0.05)
        start = time.monotonic()
        assert delete(sid) == 204
        status, result = running.result(timeout=20)
        assert time.monotonic() - start < 15
    assert status in (200, 410), result
    assert gone_without_trace(sid)
    assert request("GET", f"/v1/sessions/{sid}")[0] == 404


@attack("outputs: links planted as outputs (a file link to /etc/passwd, a directory link to /etc)", "not followed: only regular files in /box come back")
def test_outputs_links_not_followed():
    from conftest import execute
    code = ("import os\nos.symlink('/etc/passwd', 'pw.txt')\nos.symlink('/etc', 'etc')\n"
            "os.symlink('/proc/self/environ', 'env.txt')\nopen('real.txt', 'w').write('mine')")
    status, result = execute({"language": "python", "code": code, "outputs": ["*.txt", "etc/*", "etc/passwd"]})
    assert status == 200, result
    assert [o["name"] for o in result["outputs"]] == ["real.txt"], result["outputs"]
    assert "root:" not in json.dumps(result)


@attack("outputs: a FIFO and a socket named like an output glob, a FIFO in a matching directory",
        "skipped: only regular files in /box come back; nothing waits")
def test_outputs_special_files_skipped():
    from conftest import execute
    code = ("import os, socket\nos.mkfifo('pipe.txt')\nsocket.socket(socket.AF_UNIX).bind('sock.txt')\n"
            "os.mkdir('d')\nos.mkfifo('d/pipe.txt')\nopen('real.txt', 'w').write('mine')")
    start = time.monotonic()
    status, result = execute({"language": "python", "code": code, "outputs": ["*.txt", "d/*"]})
    assert status == 200 and time.monotonic() - start < 30, result
    assert [o["name"] for o in result["outputs"]] == ["real.txt"], result["outputs"]
