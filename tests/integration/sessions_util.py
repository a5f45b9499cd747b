"""Helpers for the session tests: create, step, files, and what a session
leaves on the host."""
import json
import os
import subprocess

from conftest import INSTANCE, raw_request, request, wait_until

SESSIONS_DIR = "/var/lib/isobox/sessions"


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
    out = subprocess.run(
        ["docker", "ps", "-a", "--filter", f"label=isobox.instance={INSTANCE}",
         "--filter", "label=isobox.kind=session", "--format", '{{.Names}} {{.Label "isobox.session"}}'],
        check=True, capture_output=True, text=True).stdout
    return dict(reversed(line.split()) for line in out.splitlines() if len(line.split()) == 2)


def session_dirs():
    return sorted(d for d in os.listdir(SESSIONS_DIR) if not d.startswith(".") and not d.endswith(".gone"))


def gone_without_trace(sid, timeout=15):
    """Its container and its directory are gone."""
    return wait_until(lambda: sid not in session_containers() and sid not in session_dirs(), timeout)
