"""/v1/memory on the real stack: a key-value store per tenant in SQLite,
shared by every worker; binary values, Content-Type, ETags and
conditional writes, prefix listing with pages, TTLs, quotas, and no
acknowledged write lost when a worker is SIGKILLed in the middle of
writes."""
import concurrent.futures
import os
import signal
import subprocess
import time
import urllib.parse
import uuid

import pytest

from conftest import wait_until, workers
from tenants_util import call, new_key, reload_pool, tenants_file

pytestmark = pytest.mark.same_for_every_sandbox("the memory store, which no sandbox reaches")  # conftest.py

attack = pytest.mark.attack

LOCAL = "127.0.0.1"   # the anonymous tenant "local"
STORE = "/var/lib/isobox/store/isobox.db"


def quoted(key):
    """A key as a path: each segment percent-encoded."""
    return "/".join(urllib.parse.quote(p, safe="") for p in key.split("/"))


@pytest.fixture
def prefix():
    """A fresh prefix of local's keys, emptied afterwards."""
    p = f"t-{uuid.uuid4().hex[:8]}/"
    yield p
    while True:
        status, _, page = call("GET", f"/v1/memory?prefix={p}&limit=1000", source=LOCAL)
        for k in page["keys"]:
            call("DELETE", "/v1/memory/" + quoted(k["key"]), source=LOCAL)
        if not page["cursor"]:
            break


def put(key, value, headers=None, query=""):
    return call("PUT", f"/v1/memory/{key}{query}", value, headers=headers, source=LOCAL)


def get(key, headers=None):
    return call("GET", f"/v1/memory/{key}", headers=headers, source=LOCAL)


def test_put_get_delete_binary_exact(prefix):
    value = bytes(range(256)) * 40
    status, headers, body = put(prefix + "blob", value, {"Content-Type": "application/x-thing"})
    assert status == 201, body
    assert body["size"] == len(value) and body["contentType"] == "application/x-thing"
    assert headers["ETag"] == f'"{body["etag"]}"' and body["expiresAt"] is None
    status, headers, got = get(prefix + "blob")
    assert status == 200 and got == value
    assert headers["Content-Type"] == "application/x-thing" and headers["ETag"] == f'"{body["etag"]}"'
    status, headers, got = call("HEAD", f"/v1/memory/{prefix}blob", source=LOCAL)
    assert status == 200 and got == b"" and headers["Content-Length"] == str(len(value))
    status, _, again = put(prefix + "blob", b"")
    assert status == 200 and again["size"] == 0 and again["etag"] != body["etag"]
    assert get(prefix + "blob")[2] == b""
    assert call("DELETE", f"/v1/memory/{prefix}blob", source=LOCAL)[0] == 204
    status, _, err = get(prefix + "blob")
    assert status == 404 and err["error"]["code"] == "key_not_found"


def test_keys_with_slashes_spaces_and_unicode(prefix):
    for key in ("a/b/c", "with space", "ünï/ç😀", "x%2Fy"):
        path = quoted(prefix + key)
        assert call("PUT", f"/v1/memory/{path}", key.encode(), source=LOCAL)[0] == 201, key
        assert call("GET", f"/v1/memory/{path}", source=LOCAL)[2] == key.encode(), key
    listed = [k["key"] for k in call("GET", f"/v1/memory?prefix={prefix}", source=LOCAL)[2]["keys"]]
    assert sorted(listed) == sorted(prefix + k for k in ("a/b/c", "with space", "ünï/ç😀", "x%2Fy"))


def test_compare_and_set(prefix):
    key = prefix + "counter"
    status, _, first = put(key, b"1", {"If-None-Match": "*"})
    assert status == 201
    status, _, err = put(key, b"1", {"If-None-Match": "*"})
    assert status == 412 and err["error"]["code"] == "precondition_failed", err
    status, _, second = put(key, b"2", {"If-Match": f'"{first["etag"]}"'})
    assert status == 200
    # A writer with the old etag loses, and is told to read again.
    status, _, err = put(key, b"3", {"If-Match": f'"{first["etag"]}"'})
    assert status == 412 and second["etag"] in err["error"]["message"]
    assert get(key)[2] == b"2"
    status, _, err = call("DELETE", f"/v1/memory/{key}", headers={"If-Match": f'"{first["etag"]}"'}, source=LOCAL)
    assert status == 412
    assert put(prefix + "absent", b"x", {"If-Match": "*"})[0] == 412
    assert put(key, b"x", {"If-Match": "not-quoted"})[0] == 400


@attack("memory: 8 clients read-modify-write one key with If-Match", "no lost update: 80 increments give 80")
def test_two_agents_incrementing_lose_no_update(prefix):
    """Eight clients add 1 each, ten times, with If-Match retries: 80."""
    key = prefix + "n"
    put(key, b"0")

    def add_one():
        while True:
            status, headers, value = get(key)
            status, _, _ = put(key, str(int(value) + 1).encode(), {"If-Match": headers["ETag"]})
            if status == 200:
                return
            assert status == 412

    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        list(ex.map(lambda _: add_one(), range(80)))
    assert get(key)[2] == b"80"


def test_listing_by_prefix_in_pages(prefix):
    names = [f"{prefix}k{i:03d}" for i in range(25)] + [prefix + "other/x"]
    for n in names:
        put(n, b"v")
    seen, cursor = [], None
    while True:
        q = f"/v1/memory?prefix={prefix}k&limit=10" + (f"&cursor={urllib.parse.quote(cursor)}" if cursor else "")
        status, _, page = call("GET", q, source=LOCAL)
        assert status == 200 and len(page["keys"]) <= 10
        seen += [k["key"] for k in page["keys"]]
        cursor = page["cursor"]
        if not cursor:
            break
    assert seen == names[:25]
    k = call("GET", f"/v1/memory?prefix={prefix}other/", source=LOCAL)[2]["keys"][0]
    assert k["key"] == prefix + "other/x" and k["size"] == 1 and k["updatedAt"].endswith("Z")
    for bad in ("limit=0", "limit=100000", "limit=x"):
        status, _, err = call("GET", f"/v1/memory?{bad}", source=LOCAL)
        assert status == 400 and err["error"]["code"] == "invalid_value", bad


def test_ttl_expiry(prefix):
    status, _, body = put(prefix + "brief", b"soon gone", query="?ttlSeconds=1")
    assert status == 201 and body["expiresAt"]
    assert get(prefix + "brief")[0] == 200
    time.sleep(1.2)
    assert get(prefix + "brief")[0] == 404
    assert prefix + "brief" not in str(call("GET", f"/v1/memory?prefix={prefix}", source=LOCAL)[2])
    # And the master's duty removes it from the file.
    out = lambda: subprocess.run(["runuser", "-u", "isobox", "--", "sqlite3", STORE, f"SELECT count(*) FROM memory WHERE key = CAST('{prefix}brief' AS BLOB)"],
                                 capture_output=True, text=True).stdout.strip()
    assert wait_until(lambda: out() == "0", 10)
    for bad in ("?ttlSeconds=0", "?ttlSeconds=-1", "?ttlSeconds=1.5", "?ttlSeconds="):
        assert put(prefix + "x", b"x", query=bad)[0] == 400, bad


def test_bad_requests_are_clear_errors(prefix):
    status, _, err = put(prefix + "big", b"x" * (1024 * 1024 + 1))
    assert status == 413 and err["error"]["code"] == "body_too_large", err
    status, _, err = put("k" * 513, b"x")
    assert status == 400 and "maxKeyBytes" in err["error"]["message"]
    status, _, err = call("POST", "/v1/memory/x", b"x", source=LOCAL)
    assert status == 405
    status, _, err = put(prefix + "x", b"x", {"If-Match": "*", "If-None-Match": "*"})
    assert status == 400


def test_quotas_of_a_tenant():
    with tenants_file("tenants:\n  small:\n    memoryKeys: 3\n    memoryBytes: 100\n"):
        key, _ = new_key("small")
        reload_pool()
        for i in range(3):
            assert call("PUT", f"/v1/memory/k{i}", b"v", key=key)[0] == 201
        status, _, err = call("PUT", "/v1/memory/k3", b"v", key=key)
        assert status == 403 and err["error"]["code"] == "quota_exceeded" and "memoryKeys" in err["error"]["message"]
        assert call("PUT", "/v1/memory/k0", b"x" * 80, key=key)[0] == 200     # replacing is fine
        status, _, err = call("PUT", "/v1/memory/k1", b"x" * 20, key=key)     # 80+20+keys > 100
        assert status == 403 and "memoryBytes" in err["error"]["message"]
        for i in range(3):
            call("DELETE", f"/v1/memory/k{i}", key=key)


@attack("memory: workers SIGKILLed during a stream of writes", "every acknowledged write reads back exactly; integrity_check ok")
def test_no_acknowledged_write_is_lost_when_a_worker_is_killed(prefix):
    """Four clients write as fast as they can while the workers serving them
    are SIGKILLed one after another: every write answered 200/201 reads
    back exactly, and the file passes SQLite's integrity check."""
    acked, stop = {}, time.monotonic() + 6

    def writer(n):
        i = 0
        while time.monotonic() < stop:
            key, value = f"{prefix}w{n}-{i}", os.urandom(2000)
            try:
                status = put(key, value)[0]
            except (ConnectionError, OSError):
                status = None
            if status in (200, 201):
                acked[key] = value
            i += 1

    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        futures = [ex.submit(writer, n) for n in range(4)]
        for _ in range(4):
            time.sleep(1)
            pids = workers()
            if pids:
                os.kill(pids[0], signal.SIGKILL)
        for f in futures:
            f.result()
    assert len(acked) > 50, len(acked)
    for key, value in acked.items():
        status, _, got = get(key)
        assert status == 200 and got == value, key
    out = subprocess.run(["runuser", "-u", "isobox", "--", "sqlite3", STORE, "PRAGMA integrity_check"], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out
