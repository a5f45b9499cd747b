"""Helpers for the session tests: create, step, files, and what a session
leaves on the host."""
import json
import os
import time

import docker_api
from conftest import INSTANCE, raw_request, request, wait_until

SESSIONS_DIR = os.environ.get("ISOBOX_SESSIONS", "/var/lib/isobox/sessions")


def create(**body):
    body.setdefault("language", "python")
    status, _, s = request("POST", "/v1/sessions", body)
    assert status == 201, s
    return s


def step(sid, code=None, timeout=90, **extra):
    body = dict(extra)
    if code is not None:
        body["code"] = code
    status, _, result = request("POST", f"/v1/sessions/{sid}/exec", body, timeout=timeout)
    return status, result


def step_ok(sid, code, **extra):
    status, result = step(sid, code, **extra)
    assert status == 200, result
    return result


def delete(sid):
    return request("DELETE", f"/v1/sessions/{sid}")[0]


def raw(method, path, body=None, headers=None, timeout=60):
    """One request with raw bytes both ways: (status, headers, bytes)."""
    return raw_request(method, path, body, headers, timeout=timeout)


def put(sid, path, data):
    status, _, body = raw("PUT", f"/v1/sessions/{sid}/files/{path}", data,
                          {"Content-Type": "application/octet-stream"})
    return status, json.loads(body) if body else None


def get(sid, path):
    return raw("GET", f"/v1/sessions/{sid}/files/{path}")


def session_containers():
    return {c["labels"]["isobox.session"]: c["name"]
            for c in docker_api.containers(f"isobox.instance={INSTANCE}", "isobox.kind=session")
            if c["labels"].get("isobox.session")}


def session_dirs():
    return sorted(d for d in os.listdir(SESSIONS_DIR) if not d.startswith(".") and not d.endswith(".gone"))


def gone_without_trace(sid, timeout=15):
    """Its container and its directory are gone."""
    return wait_until(lambda: sid not in session_containers() and sid not in session_dirs(), timeout)


# Special files a program can make: FIFOs, sockets and hard links to them, and
# device nodes where mknod is let through (gVisor's tmpfs: attack
# test_devices; never on runc): twins of /dev/null and /dev/ptmx, and a block
# device of no driver. It prints what it made.
MAKE_SPECIALS = """import os, socket, stat
def make(name, f):
    try:
        f()
        print(name)
    except OSError:
        pass
make('fifo', lambda: os.mkfifo('fifo'))
make('fifo-link', lambda: os.link('fifo', 'fifo-link'))
make('sock', lambda: socket.socket(socket.AF_UNIX).bind('sock'))
make('sock-link', lambda: os.link('sock', 'sock-link'))
make('null', lambda: os.mknod('null', stat.S_IFCHR | 0o666, os.makedev(1, 3)))
make('ptmx', lambda: os.mknod('ptmx', stat.S_IFCHR | 0o666, os.makedev(5, 2)))
make('blk', lambda: os.mknod('blk', stat.S_IFBLK | 0o666, os.makedev(0, 0)))
"""


REFUSED_WITHIN_S = 20


def special_files_refused(base, made):
    """Every way of the files API at each special file under base
    (/v1/sessions/{id}/files or /v1/volumes/{name}/files): 400 not_a_file,
    and none waits on the file (an open of a FIFO with no writer would
    block: each answer must come within REFUSED_WITHIN_S, which a loaded
    host's volume mount and worker queue stay far below; it was 8 answers
    in 20 s, which five shards at once on two cores once missed). HEAD's
    answer has no body."""
    for name in made:
        for method, path, body in (("GET", f"/{name}", None), ("HEAD", f"/{name}", None),
                                   ("PUT", f"/{name}", b"x"), ("PUT", f"/{name}", b""),
                                   ("PUT", f"/{name}/x", b"x"), ("GET", f"/{name}/x", None),
                                   ("DELETE", f"/{name}/x", None), ("GET", f"?path={name}", None)):
            start = time.monotonic()
            status, _, answer = raw(method, base + path, body,
                                    {"Content-Type": "application/octet-stream"} if body is not None else None,
                                    timeout=REFUSED_WITHIN_S)
            assert time.monotonic() - start < REFUSED_WITHIN_S, (method, name, path)
            assert status == 400, (method, name, path, status, answer)
            assert method == "HEAD" or json.loads(answer)["error"]["code"] == "not_a_file", (method, path, answer)
