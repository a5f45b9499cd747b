"""/v1/volumes on the real stack: ext4 images made and loop-mounted by
isobox-volumed, bound at /memory in gVisor sandboxes; the size held by the
kernel (ENOSPC inside, the host's disk untouched), files that outlive runs
and reach sessions, read-only mounts, tenants kept apart, shares, deletion
that leaves nothing."""
import collections
import concurrent.futures
import json
import os
import signal
import subprocess
import time
import uuid

import pytest

from conftest import SUITE, backend_switched, execute, request, running_owners, wait_until
from sessions_util import (MAKE_SPECIALS, create as create_session, delete as delete_session, raw,
                           special_files_refused, step_ok)
from tenants_util import call, new_key, reload_pool, tenants_file

attack = pytest.mark.attack

VOLUMES = "/var/lib/isobox/volumes"
MIB = 1 << 20


def made():
    """What is in the volumes directory: images and mount points."""
    return set(os.listdir(VOLUMES)) if os.path.isdir(VOLUMES) else set()


def mounts():
    with open("/proc/self/mountinfo") as f:
        return [line for line in f if f" {VOLUMES}/" in line]


@pytest.fixture
def volume():
    name = "v-" + uuid.uuid4().hex[:8]
    status, _, v = request("POST", "/v1/volumes", {"name": name, "sizeBytes": 16 * MIB})
    assert status == 201, v
    yield name
    request("DELETE", f"/v1/volumes/{name}")


def run(code, **extra):
    status, result = execute(dict({"language": "python", "code": code}, **extra))
    assert status == 200, result
    return result["run"]


@attack("volumes: deletion", "every byte: image and mount point gone")
def test_create_list_get_delete_leaves_nothing():
    before, before_mounts = made(), mounts()
    name = "data-" + uuid.uuid4().hex[:6]
    status, _, v = request("POST", "/v1/volumes", {"name": name, "sizeBytes": 16 * MIB})
    assert status == 201, v
    assert v["name"] == name and v["sizeBytes"] == 16 * MIB and v["state"] == "ready"
    assert isinstance(v["usedBytes"], int) and 0 <= v["usedBytes"] < MIB and v["createdAt"].endswith("Z")
    assert len(made() - before) == 2 and len(mounts()) == len(before_mounts) + 1   # image + mount point
    listed = request("GET", "/v1/volumes")[2]["volumes"]
    assert name in [x["name"] for x in listed]
    status, _, one = request("GET", f"/v1/volumes/{name}")
    assert status == 200 and one["name"] == name
    status, _, err = request("POST", "/v1/volumes", {"name": name, "sizeBytes": 16 * MIB})
    assert status == 409 and err["error"]["code"] == "volume_exists", err
    assert request("DELETE", f"/v1/volumes/{name}")[0] == 204
    status, _, err = request("GET", f"/v1/volumes/{name}")
    assert status == 404 and err["error"]["code"] == "volume_not_found"
    assert made() == before and len(mounts()) == len(before_mounts), "an image or a mount was left"


@pytest.mark.parametrize("body,code", [
    ({"name": "Bad Name", "sizeBytes": 16 * MIB}, "invalid_value"),
    ({"name": "small", "sizeBytes": MIB}, "invalid_value"),
    ({"name": "huge", "sizeBytes": 1 << 40}, "invalid_value"),
    ({"name": "x"}, "missing_field"),
    ({"name": "x", "sizeBytes": 16 * MIB, "mount": "/"}, "unknown_field"),
])
def test_bad_volume_requests(body, code):
    status, _, err = request("POST", "/v1/volumes", body)
    assert status == 400 and err["error"]["code"] == code, err


def test_unknown_or_misused_volume_in_a_run():
    status, r = execute({"language": "python", "code": "1", "volume": "nope-" + uuid.uuid4().hex[:6]})
    assert status == 404 and r["error"]["code"] == "volume_not_found", r
    status, r = execute({"language": "python", "code": "1", "volumeReadOnly": True})
    assert status == 400 and r["error"]["code"] == "invalid_request", r


def test_files_outlive_runs_and_reach_sessions(volume):
    out = run("open('/memory/note.txt', 'w').write('kept')\nimport os; print(os.getuid())", volume=volume)
    assert out["stdout"] == "65534\n"
    assert run("print(open('/memory/note.txt').read())", volume=volume)["stdout"] == "kept\n"
    # Without the volume, nothing of it is there.
    assert run("import os; print(os.path.exists('/memory'))")["stdout"] == "False\n"
    s = create_session(volume=volume)
    try:
        r = step_ok(s["id"], "print(open('/memory/note.txt').read())\nopen('/memory/from-session', 'w').write('s')")
        assert r["run"]["stdout"] == "kept\n"
    finally:
        delete_session(s["id"])
    assert run("print(open('/memory/from-session').read())", volume=volume)["stdout"] == "s\n"


@attack("volumes: write to a volume mounted read-only", "EROFS; reads work")
def test_read_only_mount(volume):
    run("open('/memory/a', 'w').write('a')", volume=volume)
    out = run("print(open('/memory/a').read())\ntry:\n    open('/memory/b', 'w')\nexcept OSError as e:\n"
              "    print(e.errno)", volume=volume, volumeReadOnly=True)
    assert out["stdout"] == "a\n30\n", out   # EROFS


@attack("volumes: write past a volume's size from inside gVisor", "ENOSPC inside; the host's free space unchanged (reserved at creation)")
def test_size_is_enforced_by_the_kernel_and_the_host_disk_is_untouched(volume):
    st = os.statvfs(VOLUMES)
    free_before = st.f_bavail * st.f_frsize
    code = ("import errno\nn = 0\ntry:\n    with open('/memory/fill', 'wb') as f:\n"
            "        while True:\n            f.write(b'x' * (1 << 20))\n            f.flush()\n            n += 1\n"
            "except OSError as e:\n    print(errno.errorcode[e.errno], n)")
    out = run(code, volume=volume, limits={"wallTimeMs": 20000})
    word, n = out["stdout"].split()
    assert word == "ENOSPC" and 8 <= int(n) < 16, out
    st = os.statvfs(VOLUMES)
    # The image's room was taken when the volume was made, not by the run.
    assert abs(free_before - st.f_bavail * st.f_frsize) < 4 * MIB
    status, _, v = request("GET", f"/v1/volumes/{volume}")
    assert v["usedBytes"] > 8 * MIB
    # Full, and still a working filesystem: a file deleted frees its room.
    assert run("import os; os.remove('/memory/fill'); open('/memory/ok', 'w').write('1'); print('ok')",
               volume=volume)["stdout"] == "ok\n"


def test_two_runs_mount_one_volume_at_once(volume):
    """Both write at the same time, each to its own file: a later run sees
    both whole. (Two runs writing one file: no order between them, as two
    programs on one disk.)"""
    code = "import time\nfor i in range(50):\n    open('/memory/{0}', 'a').write(f'{{i}}\\n')\n    time.sleep(0.01)"
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        list(ex.map(lambda who: run(code.format(who), volume=volume), ["a", "b"]))
    out = run("print(len(open('/memory/a').readlines()), len(open('/memory/b').readlines()))", volume=volume)
    assert out["stdout"] == "50 50\n"


@attack("volumes: delete a volume a session has mounted", "409 volume_busy; the session keeps it whole")
def test_a_mounted_volume_is_not_deleted(volume):
    s = create_session(volume=volume)
    try:
        status, _, err = request("DELETE", f"/v1/volumes/{volume}")
        assert status == 409 and err["error"]["code"] == "volume_busy", err
        assert step_ok(s["id"], "print(1)")["run"]["stdout"] == "1\n"   # still there, whole
    finally:
        delete_session(s["id"])
    assert request("DELETE", f"/v1/volumes/{volume}")[0] == 204


@attack("volumes: another tenant gets, deletes, lists or mounts (run, session) a tenant's volume", "404 volume_not_found everywhere; its own volume of that name is empty")
@pytest.mark.same_for_every_sandbox("tenants and volume names, decided before any sandbox starts")  # conftest.py
def test_tenants_cannot_see_or_mount_each_others_volumes():
    with tenants_file("tenants:\n  va:\n    volumes: 1\n    volumeBytes: 33554432\n  vb: {}\n"):
        a, _ = new_key("va")
        b, _ = new_key("vb")
        reload_pool()
        status, _, v = call("POST", "/v1/volumes", {"name": "secret", "sizeBytes": 16 * MIB}, key=a)
        assert status == 201, v
        try:
            assert call("POST", "/execute", {"language": "python", "volume": "secret",
                                             "code": "open('/memory/s', 'w').write('a')"}, key=a)[0] == 200
            for who, key, source in (("vb", b, "127.0.0.2"), ("local", None, "127.0.0.1")):
                for method, path in (("GET", "/v1/volumes/secret"), ("DELETE", "/v1/volumes/secret")):
                    status, _, err = call(method, path, key=key, source=source)
                    assert status == 404 and err["error"]["code"] == "volume_not_found", (who, method, err)
                assert "secret" not in str(call("GET", "/v1/volumes", key=key, source=source)[2])
                status, _, err = call("POST", "/execute", {"language": "python", "code": "1", "volume": "secret"},
                                      key=key, source=source)
                assert status == 404 and err["error"]["code"] == "volume_not_found", (who, err)
                status, _, err = call("POST", "/v1/sessions", {"language": "python", "volume": "secret"},
                                      key=key, source=source)
                assert status == 404 and err["error"]["code"] == "volume_not_found", (who, err)
            # vb's own "secret" is another volume: it does not see a's file.
            assert call("POST", "/v1/volumes", {"name": "secret", "sizeBytes": 16 * MIB}, key=b)[0] == 201
            status, _, r = call("POST", "/execute", {"language": "python", "volume": "secret",
                                                     "code": "import os; print(os.listdir('/memory'))"}, key=b)
            assert r["run"]["stdout"] == "[]\n", r
            assert call("DELETE", "/v1/volumes/secret", key=b)[0] == 204
            # va's share: one volume.
            status, _, err = call("POST", "/v1/volumes", {"name": "second", "sizeBytes": 16 * MIB}, key=a)
            assert status == 403 and err["error"]["code"] == "quota_exceeded", err
        finally:
            assert call("DELETE", "/v1/volumes/secret", key=a)[0] == 204


# The sandbox user's host id on each backend (sandbox/uids.h).
HOST_ID = {"gvisor": 65534, "runc": 165534}


@attack("volumes: who owns what a program writes to a volume, seen from the host",
        "the backend's sandbox user: host uid and gid 65534 on gVisor, 165534 on runc (no host user's); "
        "never root, never another id")
def test_a_volumes_files_are_the_backends_sandbox_users():
    before = made()
    name = "own-" + uuid.uuid4().hex[:6]
    status, _, v = request("POST", "/v1/volumes", {"name": name, "sizeBytes": 16 * MIB})
    assert status == 201, v
    try:
        (vid,) = {e for e in made() - before if not e.endswith(".img")}
        run("import os\nos.mkdir('/memory/d')\nopen('/memory/d/f', 'w').write('x')", volume=name)
        want = HOST_ID[SUITE["backend"]]
        for path in ("", "d", "d/f"):
            st = os.lstat(os.path.join(VOLUMES, vid, path))
            assert (st.st_uid, st.st_gid) == (want, want), (path, st.st_uid, st.st_gid)
    finally:
        assert request("DELETE", f"/v1/volumes/{name}")[0] == 204


@attack("volumes: mount a volume made on the other backend (its files are the other sandbox user's)",
        "409 volume_other_backend for a run, a session and the files routes, naming both backends; "
        "it is still listed, and mounts again on its own backend")
def test_a_volume_serves_only_the_backend_that_made_it(volume):
    run("open('/memory/a', 'w').write('a')", volume=volume)
    other = "gvisor" if SUITE["backend"] == "runc" else "runc"
    with backend_switched(other):
        for path, body in (("/execute", {"language": "python", "code": "1", "volume": volume}),
                           ("/v1/sessions", {"language": "python", "volume": volume}),
                           (f"/v1/volumes/{volume}/files?path=", None)):
            status, _, err = request("POST" if body else "GET", path, body)
            assert status == 409 and err["error"]["code"] == "volume_other_backend", (path, err)
            assert f"made for the {SUITE['backend']} backend" in err["error"]["message"], err
        status, _, v = request("GET", f"/v1/volumes/{volume}")
        assert status == 200 and v["state"] == "ready", v
    assert run("print(open('/memory/a').read())", volume=volume)["stdout"] == "a\n"


def ask_volumed(line, uid=None):
    """One request to isobox-volumed's socket, as root or as another user."""
    script = ("import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect('/run/isobox/volumes.sock')\n"
              "s.sendall(sys.argv[1].encode())\nprint(s.recv(300).decode(), end='')")
    cmd = ["python3", "-c", script, line]
    if uid is not None:
        cmd = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"] + cmd
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    return out.stdout, out.returncode


@attack("volumes: paths, options and other users at isobox-volumed's socket",
        "refused: no path, option or user but the workers' reaches a mount")
@pytest.mark.same_for_every_sandbox("isobox-volumed's socket, which no sandbox reaches")  # conftest.py
def test_volumed_takes_ids_only_and_only_from_the_workers():
    before = made()
    for line in ("create ../../etc 16777216\n", "create 0123456789abcdef0123456789abcde/ 16777216\n",
                 "create 0123456789ABCDEF0123456789ABCDEF 16777216\n", "remove /\n", "usage ..\n",
                 "create 0123456789abcdef0123456789abcdef 4096 gvisor\n", "mount x y\n", "\n",
                 # an owner is one of the backends' sandbox users, never one named
                 "create 0123456789abcdef0123456789abcdef 16777216\n",
                 "create 0123456789abcdef0123456789abcdef 16777216 root\n",
                 "create 0123456789abcdef0123456789abcdef 16777216 0:0\n"):
        reply, _ = ask_volumed(line)
        assert reply.startswith("err "), (line, reply)
    assert made() == before
    # nobody (the sandboxes' uid on the host) is not the workers' user: no answer at all.
    reply, rc = ask_volumed("usage 0123456789abcdef0123456789abcdef\n", uid=65534)
    assert reply == "", reply


def vraw(method, volume, path, body=None):
    return raw(method, f"/v1/volumes/{volume}/files{path}", body,
               {"Content-Type": "application/octet-stream"} if body is not None else {})


def test_files_api_in_and_out_byte_exact(volume):
    data = bytes(range(256)) * 100
    status, _, body = vraw("PUT", volume, "/dir/data.bin", data)
    assert status == 201 and json.loads(body) == {"path": "dir/data.bin", "size": len(data)}, body
    status, headers, got = vraw("GET", volume, "/dir/data.bin")
    assert status == 200 and got == data and headers["Content-Type"] == "application/octet-stream"
    # A run sees what the API put, and the API what a run wrote.
    out = run("import hashlib; print(hashlib.sha256(open('/memory/dir/data.bin','rb').read()).hexdigest())\n"
              "open('/memory/dir/made.txt', 'w').write('by a run')", volume=volume)
    assert out["stdout"].strip() == __import__("hashlib").sha256(data).hexdigest()
    status, _, listing = vraw("GET", volume, "?path=dir")
    entries = {e["name"]: e for e in json.loads(listing)["entries"]}
    assert set(entries) == {"data.bin", "made.txt"} and entries["data.bin"]["size"] == len(data)
    assert vraw("GET", volume, "/dir/made.txt")[2] == b"by a run"
    assert vraw("DELETE", volume, "/dir/made.txt")[0] == 204
    status, _, err = vraw("GET", volume, "/dir/made.txt")
    assert status == 404 and json.loads(err)["error"]["code"] == "file_not_found"


@attack("volumes: links planted by a run at host paths, then read, written and listed through the files API",
        "400 not_a_file: the agent never follows a link; the host's files untouched"
        "")
def test_files_api_never_follows_a_planted_link(volume):
    run("import os\nos.symlink('/etc/passwd', '/memory/pw')\nos.symlink('/', '/memory/root')\n"
        "os.symlink('/var/lib/isobox', '/memory/state')", volume=volume)
    for path in ("/pw", "/root/etc/passwd", "/state/store/isobox.db"):
        status, _, err = vraw("GET", volume, path)
        assert status == 400 and json.loads(err)["error"]["code"] == "not_a_file", (path, err)
    before = os.stat("/etc/passwd").st_mtime
    for path in ("/pw", "/root/tmp/x", "/state/x"):
        status, _, err = vraw("PUT", volume, path, b"owned")
        assert status == 400 and json.loads(err)["error"]["code"] == "not_a_file", (path, err)
    assert os.stat("/etc/passwd").st_mtime == before and not os.path.exists("/var/lib/isobox/x")
    status, _, err = vraw("GET", volume, "?path=root")
    assert status == 400, err
    entries = {e["name"]: e["type"] for e in json.loads(vraw("GET", volume, "?path=")[2])["entries"]}
    assert entries == {"pw": "link", "root": "link", "state": "link"}, entries
    assert vraw("DELETE", volume, "/pw")[0] == 204      # the link itself goes, not its target
    assert os.path.exists("/etc/passwd")


@attack("volumes: FIFOs, sockets and device nodes made in a volume by a run, then got, put, listed and "
        "deleted through the files API",
        "400 not_a_file where the volume keeps them (runc), 404 where it does not (gVisor keeps them in the "
        "run's memory, not on the host); never a 5xx, nothing waits; DELETE removes a name")
def test_files_api_refuses_special_files(volume):
    made = run("import os\nos.chdir('/memory')\n" + MAKE_SPECIALS, volume=volume)["stdout"].split()
    assert {"fifo", "sock"} <= set(made), made
    entries = {e["name"]: e["type"] for e in json.loads(vraw("GET", volume, "?path=")[2])["entries"]}
    kept = [name for name in made if name in entries]
    assert all(entries[name] == "other" for name in kept), entries
    special_files_refused(f"/v1/volumes/{volume}/files", kept)
    for name in made:
        status, _, err = vraw("GET", volume, f"/{name}")
        assert status == (400 if name in kept else 404), (name, err)
        assert vraw("DELETE", volume, f"/{name}")[0] == (204 if name in kept else 404), name
    assert vraw("PUT", volume, "/fifo", b"a file now")[0] == 201
    assert vraw("GET", volume, "/fifo")[2] == b"a file now"


def test_files_api_of_another_tenants_volume_is_not_found():
    with tenants_file("tenants:\n  fa: {}\n  fb: {}\n"):
        a, _ = new_key("fa")
        b, _ = new_key("fb")
        reload_pool()
        assert call("POST", "/v1/volumes", {"name": "mine", "sizeBytes": 16 * MIB}, key=a)[0] == 201
        try:
            assert call("PUT", "/v1/volumes/mine/files/s.txt", b"a's", key=a,
                        headers={"Content-Type": "application/octet-stream"})[0] == 201
            for method, path, body in (("GET", "/v1/volumes/mine/files/s.txt", None),
                                       ("PUT", "/v1/volumes/mine/files/s.txt", b"b"),
                                       ("DELETE", "/v1/volumes/mine/files/s.txt", None),
                                       ("GET", "/v1/volumes/mine/files?path=", None)):
                status, _, err = call(method, path, body, key=b)
                assert status == 404 and err["error"]["code"] == "volume_not_found", (method, path, err)
            assert call("GET", "/v1/volumes/mine/files/s.txt", key=a)[2] == b"a's"
        finally:
            assert call("DELETE", "/v1/volumes/mine", key=a)[0] == 204


def test_a_name_too_long_is_not_cut_to_another_volume():
    """The files routes take the name as it is: a name one character past
    the longest (63) is not found, never read as the volume it begins with."""
    name = ("n-" + uuid.uuid4().hex * 2)[:63]
    assert request("POST", "/v1/volumes", {"name": name, "sizeBytes": 16 * MIB})[0] == 201
    try:
        assert vraw("PUT", name, "/f", b"x")[0] == 201
        status, _, err = vraw("GET", name + "y", "/f")
        assert status == 404 and json.loads(err)["error"]["code"] == "volume_not_found", err
    finally:
        request("DELETE", f"/v1/volumes/{name}")


# A DELETE of a volume races its users: a run, a session being made, a
# file put (the bug: a run whose container was still starting was not seen
# by dockerd's list, and wrote into a volume already deleted). Each user
# marks the volume in use in the store before any sandbox mounts it
# (conf/store/store.h), so one of the two is refused, whoever comes
# first; never both answered as done.
STORE = "/var/lib/isobox/store/isobox.db"
WRITE_LATE = ("import os, time\ntime.sleep(1)\nopen('/memory/result.txt', 'w').write('done')\n"
              "print(sorted(os.listdir('/memory')))")
REFUSED = {(404, "volume_not_found"), (409, "volume_busy")}


def new_volume():
    name = "race-" + uuid.uuid4().hex[:8]
    status, _, v = request("POST", "/v1/volumes", {"name": name, "sizeBytes": 16 * MIB})
    assert status == 201, v
    return name


def race(use, delay):
    """use(name) on a new volume, and a DELETE of it delay s after (before,
    if delay < 0): the volume's name, use's answer, the DELETE's, and
    whether use had been answered before the DELETE was sent (then there
    was no race: a fast PUT may finish within the delay)."""
    name = new_volume()
    at = {}

    def later(s, key, f, *args):
        time.sleep(s)
        at[key + " sent"] = time.monotonic()
        answer = f(*args)
        at[key + " answered"] = time.monotonic()
        return answer

    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        used = ex.submit(later, max(0, -delay), "use", use, name)
        deleted = ex.submit(later, max(0, delay), "delete", request, "DELETE", f"/v1/volumes/{name}")
        used, deleted = used.result(timeout=120), deleted.result(timeout=120)
    return name, used, deleted, at["use answered"] < at["delete sent"]


# From a DELETE sent just before to one sent well after: each side wins some.
DELAYS = (-0.05, -0.02, -0.01, 0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5)


def error_of(body):
    body = json.loads(body) if isinstance(body, bytes) else body
    return body.get("error", {}).get("code") if isinstance(body, dict) else None


def busy(deleted):
    status, _, err = deleted
    return status == 409 and error_of(err) == "volume_busy"


def gone(name):
    status, _, err = request("GET", f"/v1/volumes/{name}")
    return status == 404 and error_of(err) == "volume_not_found"


def marks(owner_like):
    """The store's marks in use whose owner is like this (SQL LIKE)."""
    out = subprocess.run(["runuser", "-u", "isobox", "--", "sqlite3", STORE,
                          f"SELECT count(*) FROM volume_uses WHERE owner LIKE '{owner_like}'"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return int(out.stdout)


@attack("volumes: DELETE a volume from 0.05 s before to 0.5 s after a run that writes to it was sent (its sandbox "
        "still starting)",
        "either the DELETE is 409 volume_busy and the run's file is there after it, or the run is refused "
        "(404 volume_not_found) and never runs; never a 200 whose write is lost, never a 503")
def test_a_volume_is_not_deleted_under_a_starting_run():
    outcomes = collections.Counter()
    for delay in DELAYS:
        name, (status, r), deleted, _ = race(
            lambda n: execute({"language": "python", "volume": n, "code": WRITE_LATE}), delay)
        try:
            if busy(deleted):
                assert status == 200 and r["run"]["stdout"] == "['result.txt']\n", (delay, status, r)
                assert vraw("GET", name, "/result.txt")[2] == b"done", delay
                # Its user gone, the volume is deletable at once.
                assert request("DELETE", f"/v1/volumes/{name}")[0] == 204, delay
            else:
                assert deleted[0] == 204, (delay, deleted)
                assert (status, error_of(r)) in REFUSED, (delay, status, r)
            assert gone(name), delay
            outcomes[deleted[0]] += 1
        finally:
            request("DELETE", f"/v1/volumes/{name}")
    print("DELETE answers:", dict(outcomes))


@attack("volumes: DELETE a volume from 0.05 s before to 0.5 s after a session that mounts it was asked for",
        "either the DELETE is 409 volume_busy and the session's writes are kept, or the session is refused "
        "(404 volume_not_found) and never starts; never a 201 on a deleted volume")
def test_a_volume_is_not_deleted_under_a_starting_session():
    outcomes = collections.Counter()
    for delay in (-0.05, -0.01, 0, 0.05, 0.1, 0.2, 0.35, 0.5):
        name, (status, _, s), deleted, _ = race(
            lambda n: request("POST", "/v1/sessions", {"language": "python", "volume": n}), delay)
        try:
            if busy(deleted):
                assert status == 201, (delay, status, s)
                try:
                    step_ok(s["id"], "open('/memory/s.bin', 'wb').write(b'x' * (1 << 20))")
                    # Held for the session's whole life, not only its start.
                    assert busy(request("DELETE", f"/v1/volumes/{name}")), delay
                finally:
                    assert delete_session(s["id"]) == 204
                assert len(vraw("GET", name, "/s.bin")[2]) == MIB, delay
                # The session's sandbox lets go of the volume as it is removed,
                # just after the session's DELETE answered (CI: 409 once).
                assert wait_until(lambda: request("DELETE", f"/v1/volumes/{name}")[0] == 204, 15), delay
            else:
                assert deleted[0] == 204, (delay, deleted)
                assert (status, error_of(s)) in REFUSED, (delay, status, s)
                assert not [x for x in request("GET", "/v1/sessions")[2]["sessions"] if x.get("volume") == name]
            assert gone(name), delay
            outcomes[deleted[0]] += 1
        finally:
            request("DELETE", f"/v1/volumes/{name}")
    print("DELETE answers:", dict(outcomes))


@attack("volumes: DELETE a volume while a file is being put into it through the files API",
        "either the DELETE is 409 volume_busy and the file is there after it, or the PUT is refused "
        "(404 volume_not_found); never a 201 whose file is gone")
@pytest.mark.same_for_every_sandbox("the files API and the volume's marks, on the host")  # conftest.py
def test_a_volume_is_not_deleted_under_a_file_put():
    data = os.urandom(64 << 10)
    for delay in (-0.02, 0, 0.05, 0.15, 0.3):
        name, (status, _, body), deleted, put_first = race(lambda n: vraw("PUT", n, "/f.bin", data), delay)
        try:
            if busy(deleted):
                assert status == 201, (delay, status, body)
                assert vraw("GET", name, "/f.bin")[2] == data, delay
                assert request("DELETE", f"/v1/volumes/{name}")[0] == 204, delay
            elif put_first:  # done before the DELETE was sent (the CI try on runc, at 0.3 s): no race
                assert status == 201 and deleted[0] == 204, (delay, status, deleted)
            else:
                assert deleted[0] == 204, (delay, deleted)
                assert (status, error_of(body)) in REFUSED, (delay, status, body)
            assert gone(name), delay
        finally:
            request("DELETE", f"/v1/volumes/{name}")


def test_two_deletes_at_once_one_deletes():
    """The second of two DELETEs at once waits for nothing and removes
    nothing: 409 while the first is under way (it holds the volume), 404
    once it is done; the first 204."""
    for _ in range(3):
        name = new_volume()
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            answers = list(ex.map(lambda _: request("DELETE", f"/v1/volumes/{name}"), range(2)))
        codes = sorted((a[0], error_of(a[2]) if a[0] != 204 else None) for a in answers)
        assert codes in ([(204, None), (404, "volume_not_found")], [(204, None), (409, "volume_busy")]), codes
        assert gone(name)


@attack("volumes: SIGKILL the worker whose run has a volume mounted",
        "409 volume_busy while its sandbox runs; then the master forgets the dead worker's mark and the "
        "reaper its sandbox: deletable within seconds, never busy for good")
def test_a_killed_workers_mark_is_forgotten(volume):
    slow = {"language": "python", "volume": volume, "code": "import time; time.sleep(30)",
            "limits": {"wallTimeMs": 20000}}
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        inflight = ex.submit(execute, slow)
        assert wait_until(lambda: running_owners(), 20), "the run never started"
        (pid,) = running_owners()
        assert marks(f"{pid}.%") == 1, "no mark in the store under the worker's PID.STARTTIME"
        assert busy(request("DELETE", f"/v1/volumes/{volume}"))
        os.kill(pid, signal.SIGKILL)
        inflight.result(timeout=60)   # 502: its worker is gone
    assert wait_until(lambda: marks(f"{pid}.%") == 0, 10), "the master kept the dead worker's mark"
    assert wait_until(lambda: request("DELETE", f"/v1/volumes/{volume}")[0] == 204, 20, step=1)
    assert gone(volume)
