"""Helpers for the tenant tests: a client on a second loopback address
(127.0.0.2, not in auth.anonymous), keys made and revoked with the real
command, and the tenants file, each put back as it was."""
import contextlib
import grp
import http.client
import json
import os
import subprocess
import urllib.parse

from conftest import CONF, PREFIX, URL, reload_pool  # noqa: F401 (reload_pool: the tenant tests' import)

CONF_DIR = os.path.dirname(CONF)
KEYS = os.path.join(CONF_DIR, "keys")
SECRET = os.path.join(CONF_DIR, "keys.secret")
TENANTS = os.path.join(CONF_DIR, "tenants.yaml")
FCGI = os.path.join(PREFIX, "bin", "isobox-fcgi")
STRANGER = "127.0.0.2"   # loopback, but not in auth.anonymous (127.0.0.1, ::1)


def call(method, path, body=None, key=None, headers=None, source=STRANGER, timeout=90, url=URL):
    """One exchange from `source` with the server at url: (status,
    headers, JSON or bytes)."""
    u = urllib.parse.urlparse(url)
    hdrs = dict(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    if key:
        hdrs["Authorization"] = f"Bearer {key}"
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout,
                                      source_address=(source, 0) if source else None)
    try:
        conn.request(method, path, body=body, headers=hdrs)
        resp = conn.getresponse()
        raw = resp.read()
    finally:
        conn.close()
    if resp.headers.get("Content-Type", "").startswith("application/json"):
        return resp.status, resp.headers, json.loads(raw)
    return resp.status, resp.headers, raw


def new_key(tenant):
    """Run `isobox-fcgi --new-key`; return (key, id)."""
    out = subprocess.run([FCGI, "--conf", CONF, "--new-key", tenant], check=True,
                         capture_output=True, text=True)
    key = out.stdout.strip()
    return key, key[4:12]


def revoke_key(key_id):
    subprocess.run([FCGI, "--conf", CONF, "--revoke-key", key_id], check=True, capture_output=True)


@contextlib.contextmanager
def tenants_file(text):
    """tenants.yaml with this text (reloaded), and the keys file and secret
    as they were afterwards."""
    saved = {}
    for path in (KEYS, SECRET, TENANTS):
        if os.path.exists(path):
            with open(path, "rb") as f:
                saved[path] = f.read()
    with open(TENANTS, "w") as f:
        f.write(text)
    os.chmod(TENANTS, 0o644)
    reload_pool()
    try:
        yield
    finally:
        for path in (KEYS, SECRET, TENANTS):
            if path in saved:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
                with os.fdopen(fd, "wb") as f:
                    f.write(saved[path])
                os.chmod(path, 0o640)
                os.chown(path, 0, grp.getgrnam("isobox").gr_gid)
            elif os.path.exists(path):
                os.unlink(path)
        reload_pool()
