"""The sandbox seen from inside: each hardening promise, checked by code
running in it, and the host side checked from the host."""
import json
import os
import subprocess
import threading
import time

import docker_api
from conftest import INSTANCE, containers, execute, run_ok, wait_until

PROBE = r'''
import ctypes, errno, json, os, socket
libc = ctypes.CDLL(None, use_errno=True)
PR_GET_NO_NEW_PRIVS = 39
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)

def write_errno(path):
    try:
        with open(path, "w") as f:
            f.write("x")
        return 0
    except OSError as e:
        return e.errno

root_opts = [l.split()[3] for l in open("/proc/mounts") if l.split()[1] == "/"]
print(json.dumps({
    "uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(),
    "groups": os.getgroups(),
    "capeff": status["CapEff"].strip(), "capprm": status["CapPrm"].strip(),
    "capbnd": status["CapBnd"].strip(),
    "nnp": libc.prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0),
    "root_mount": root_opts,
    "write_var_tmp": write_errno("/var/tmp/probe"),
    "write_etc": write_errno("/etc/probe"),
    "write_tmp": write_errno("/tmp/probe"),
    "write_src": write_errno("/src/probe"),
    "interfaces": sorted(name for _, name in socket.if_nameindex()),
    "environ": dict(os.environ),
    "hostname": socket.gethostname(),
}))
'''


def probe():
    run = run_ok(PROBE)
    assert run["exitCode"] == 0, run
    return json.loads(run["stdout"])


def test_runs_as_nobody():
    p = probe()
    assert (p["uid"], p["euid"], p["gid"]) == (65534, 65534, 65534)
    assert p["groups"] in ([], [65534])


def test_no_capabilities():
    p = probe()
    assert int(p["capeff"], 16) == 0
    assert int(p["capprm"], 16) == 0
    assert int(p["capbnd"], 16) == 0


def test_no_new_privileges():
    assert probe()["nnp"] == 1


def test_root_filesystem_is_read_only():
    p = probe()
    assert "ro" in p["root_mount"][0].split(","), p["root_mount"]
    # /var/tmp is world-writable on Debian: only the read-only mount stops it.
    assert p["write_var_tmp"] == 30  # EROFS
    assert p["write_etc"] in (13, 30)  # EACCES or EROFS: never written
    assert p["write_src"] in (13, 30), "the code mount is read-only"
    assert p["write_tmp"] == 0, "/tmp is a writable tmpfs"


def test_only_loopback():
    assert probe()["interfaces"] == ["lo"]


def test_no_network_even_to_the_host():
    code = ("import socket\n"
            "for host in ['127.0.0.1', '10.0.0.1', '198.51.100.1']:\n"
            "    s = socket.socket(); s.settimeout(2)\n"
            "    try:\n"
            "        s.connect((host, 8090)); print(host, 'connected')\n"
            "    except OSError as e:\n"
            "        print(host, type(e).__name__)\n")
    run = run_ok(code)
    assert "connected" not in run["stdout"], run["stdout"]


def test_environment_is_scrubbed():
    """Exactly the variables isobox sets, none of the worker's."""
    env = probe()["environ"]
    assert env == {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/box", "LANG": "C.UTF-8",
                   "TMPDIR": "/tmp", "HOSTNAME": "isobox", "PWD": "/box",
                   # the registry's env for python (registry.yaml): pip's settings
                   "PYTHONDONTWRITEBYTECODE": "1", "PIP_USER": "1", "PIP_BREAK_SYSTEM_PACKAGES": "1",
                   "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_CACHE_DIR": "1"}
    from conftest import workers
    worker_env = open(f"/proc/{workers()[0]}/environ", "rb").read().split(b"\0")
    worker_keys = {kv.split(b"=", 1)[0].decode() for kv in worker_env if b"=" in kv}
    assert worker_keys - set(env), "the worker has variables of its own"


def test_hostname_is_not_the_hosts():
    assert probe()["hostname"] == "isobox"


def test_tmp_is_small_and_fills_up():
    code = ("import errno\nn = 0\n"
            "try:\n"
            "    with open('/tmp/fill', 'wb') as f:\n"
            "        while n < 200:\n"
            "            f.write(b'\\0' * (1 << 20)); f.flush(); n += 1\n"
            "except OSError as e:\n"
            "    print(n, e.errno)\n")
    run = run_ok(code, limits={"memoryBytes": 256 << 20})
    mib, err = run["stdout"].split()
    assert err == "28", run  # ENOSPC
    assert int(mib) <= 64


def test_fresh_filesystem_per_run():
    run_ok("open('/tmp/leftover', 'w').write('secret')\nopen('left.txt', 'w').write('x')")
    run = run_ok("import os\nprint(os.path.exists('/tmp/leftover'), os.path.exists('left.txt'))")
    assert run["stdout"] == "False False\n"


def cgroup_dirs(cid):
    """Where a container's cgroups must be: under isobox.slice, in every
    controller that caps it (v1), or in the unified tree (v2)."""
    if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        return [f"/sys/fs/cgroup/isobox.slice/{cid}"]
    return [f"/sys/fs/cgroup/{c}/isobox.slice/{cid}" for c in ("memory", "pids", "cpu")]


def test_container_sits_under_the_isobox_cgroup_parent():
    """While a run is going, its container's cgroup is below isobox.slice."""
    seen = {}

    def look():
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not seen:
            for cid in containers():
                out = subprocess.run(
                    ["docker", "inspect", "-f", "{{.HostConfig.CgroupParent}} {{.Id}}", cid],
                    capture_output=True, text=True).stdout.split()
                if len(out) == 2 and all(os.path.isdir(d) for d in cgroup_dirs(out[1])):
                    seen["parent"], seen["id"] = out
                    return
            time.sleep(0.1)

    t = threading.Thread(target=look)
    t.start()
    run = run_ok("import time\ntime.sleep(3)\nprint('done')")
    t.join()
    assert run["stdout"] == "done\n"
    assert seen.get("parent") == "/isobox.slice", seen


def test_worker_runs_unprivileged():
    from conftest import pool_master, workers
    for pid in [pool_master()] + workers():
        status = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status").read().splitlines())
        uids = status["Uid"].split()
        assert "0" not in uids, (pid, uids)
        assert int(status["CapEff"].strip(), 16) == 0
        assert int(status["CapPrm"].strip(), 16) == 0
        assert status["NoNewPrivs"].strip() == "1"


def test_worker_fds_do_not_reach_the_docker_client():
    """libfcgi sets no close-on-exec: a docker client that a worker starts
    must get only 0, 1, 2. A cold run starts none (its container goes
    through dockerd's API), so a session's is looked at: the worker starts
    it, detached, and it lives as long as the session: `/proc/self/exe
    --attach SOCKET NAME DEADLINE`, the worker's binary again
    (sandbox/attach.c), or `docker run` where dockerd's API cannot be
    reached (sandbox/launch.h)."""
    from conftest import workers
    from sessions_util import create, delete
    seen = {}

    def look():
        names = {c["name"].encode() for c in docker_api.containers(f"isobox.instance={INSTANCE}",
                                                                  "isobox.kind=session")}
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
                if len(cmd) == 6 and cmd[1] == b"--attach" and cmd[3] in names:
                    fds = sorted(int(fd) for fd in os.listdir(f"/proc/{pid}/fd"))
                    seen["fds"] = fds
                    links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in fds[3:]]
                    seen["sockets"] = [x for x in links if x.startswith("socket:")]
                    return True
            except OSError:
                continue
        return False

    session = create()
    try:
        wait_until(look, 20)
    finally:
        assert delete(session["id"]) == 204
    assert "fds" in seen, "the sandbox's client was not seen"
    # The worker's own sockets: the FastCGI listener (fd 0) and connections.
    worker_sockets = set()
    for pid in workers():
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:"):
                worker_sockets.add(link)
    assert worker_sockets, "the workers' sockets were not seen"
    assert seen["fds"][:3] == [0, 1, 2]
    # Above 2, only what the client opened itself (its two docker.sock
    # connections: the stream and the wait); never a socket inherited
    # from the worker.
    assert not worker_sockets & set(seen["sockets"]), seen


def test_nothing_runs_with_a_shell_string_from_input():
    """Shell metacharacters in a file name are refused; in args, inert."""
    status, result = execute({"language": "python",
                              "files": [{"name": "$(touch x).py", "content": "print(1)"}]})
    # Legal (no slash, no control byte) and harmless: an argv element.
    assert status == 200 and result["run"]["stdout"] == "1\n"
