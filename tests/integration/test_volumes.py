"""/v1/volumes on the real stack: ext4 images made and loop-mounted by
isobox-volumed, bound at /memory in gVisor sandboxes; the size held by the
kernel (ENOSPC inside, the host's disk untouched), files that outlive runs
and reach sessions, read-only mounts, tenants kept apart, shares, deletion
that leaves nothing."""
import concurrent.futures
import os
import uuid

import pytest

from conftest import execute, request
from sessions_util import create as create_session, delete as delete_session, step_ok
from tenants_util import call, new_key, reload_pool, tenants_file

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


def test_read_only_mount(volume):
    run("open('/memory/a', 'w').write('a')", volume=volume)
    out = run("print(open('/memory/a').read())\ntry:\n    open('/memory/b', 'w')\nexcept OSError as e:\n"
              "    print(e.errno)", volume=volume, volumeReadOnly=True)
    assert out["stdout"] == "a\n30\n", out   # EROFS


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


def test_a_mounted_volume_is_not_deleted(volume):
    s = create_session(volume=volume)
    try:
        status, _, err = request("DELETE", f"/v1/volumes/{volume}")
        assert status == 409 and err["error"]["code"] == "volume_busy", err
        assert step_ok(s["id"], "print(1)")["run"]["stdout"] == "1\n"   # still there, whole
    finally:
        delete_session(s["id"])
    assert request("DELETE", f"/v1/volumes/{volume}")[0] == 204


def test_tenants_cannot_see_or_mount_each_others_volumes():
    with tenants_file("tenants:\n  va:\n    volumes: 1\n    volumeBytes: 33554432\n  vb: {}\n"):
        a, _ = new_key("va")
        b, _ = new_key("vb")
        reload_pool()
        status, _, v = call("POST", "/v1/volumes", {"name": "secret", "sizeBytes": 16 * MIB}, key=a)
        assert status == 201, v
        try:
            assert call("POST", "/execute", {"language": "python", "code": "open('/memory/s', 'w').write('a')",
                                             "volume": "secret"}, key=a)[0] == 200
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
