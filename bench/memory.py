#!/usr/bin/env python3
"""The memory store and the cost of a key, measured end to end through the
web server:

  put / get     PUT and GET of a 1 KiB value in /v1/memory, one client:
                median and p90 latency
  put4 / get4   the same from 4 clients at once: requests per second
  runtimes      GET /runtimes anonymously (127.0.0.1, tenant local: no
                share to count) and with a key from 127.0.0.2 (the key's
                hash, the tenant's rate taken and its running claim in the
                store): the cheapest route, so the key's cost shows
  execute       POST /execute of python `pass`, the same two ways, in turn
  volume        POST /v1/volumes of 16 MiB and of 256 MiB (fallocate, mkfs,
                loop mount), and a run of `pass` with the volume at /memory
                next to one without (the mount's cost; a run with a volume
                is always cold)

    bench/memory.py [--runs N] [--url URL] [--write docs/PERFORMANCE.md]

Run as root where the service is up (make run): it makes a key for the
tenant "bench" with isobox-fcgi --new-key and revokes it at the end; every
memory key it writes is deleted. Prints Markdown; with --write, replaces
the text between <!-- MEMORY BENCH --> and <!-- /MEMORY BENCH -->.
"""
import argparse
import concurrent.futures
import http.client
import json
import os
import platform
import signal
import subprocess
import time
import urllib.parse

import latency
from report import median_ms, p90_ms, write_section

PREFIX = os.environ.get("PREFIX", "/opt/isobox")
CONF = os.path.join(PREFIX, "conf", "isobox.yaml")
FCGI = os.path.join(PREFIX, "bin", "isobox-fcgi")
RUN = os.environ.get("ISOBOX_RUN", "/run/isobox")


def call(url, method, path, body=None, key=None, source="127.0.0.1"):
    u = urllib.parse.urlparse(url)
    headers = {"Content-Type": "application/json" if isinstance(body, dict) else "application/octet-stream"}
    if key:
        headers["Authorization"] = "Bearer " + key
    if isinstance(body, dict):
        body = json.dumps(body).encode()
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120, source_address=(source, 0))
    try:
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def timed(fn):
    start = time.monotonic()
    status, _ = fn()
    assert status < 300, status
    return time.monotonic() - start


def reload_pool():
    with open(os.path.join(RUN, "pool.pid")) as f:
        os.kill(int(f.read()), signal.SIGHUP)
    time.sleep(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--url", default=f"http://127.0.0.1:{os.environ.get('PORT', '8090')}")
    ap.add_argument("--write")
    args = ap.parse_args()
    url, n = args.url, args.runs
    value = os.urandom(1024)
    key = subprocess.run([FCGI, "--conf", CONF, "--new-key", "bench"], check=True,
                         capture_output=True, text=True).stdout.strip()
    reload_pool()
    r = {}
    try:
        r["put"] = [timed(lambda i=i: call(url, "PUT", f"/v1/memory/bench/k{i % 50}", value)) for i in range(n)]
        r["get"] = [timed(lambda i=i: call(url, "GET", f"/v1/memory/bench/k{i % 50}")) for i in range(n)]
        for kind in ("put", "get"):
            start = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(4) as ex:
                list(ex.map(lambda i: timed(lambda: call(url, kind.upper(), f"/v1/memory/bench/k{i % 50}",
                                                         value if kind == "put" else None)), range(n)))
            r[kind + "4"] = n / (time.monotonic() - start)
        small = min(n, 60)   # the key's tenant has the default share: 600 requests a minute
        anon, keyed = [], []
        for _ in range(small):
            anon.append(timed(lambda: call(url, "GET", "/runtimes")))
            keyed.append(timed(lambda: call(url, "GET", "/runtimes", key=key, source="127.0.0.2")))
        r["runtimes"] = (anon, keyed)
        anon, keyed = [], []
        for _ in range(min(n, 20)):
            code = {"language": "python", "code": "pass"}
            anon.append(timed(lambda: call(url, "POST", "/execute", code)))
            keyed.append(timed(lambda: call(url, "POST", "/execute", code, key=key, source="127.0.0.2")))
        r["execute"] = (anon, keyed)
        for size in (16, 256):
            made = []
            for i in range(5):
                name = f"bench-{size}-{i}"
                call(url, "DELETE", f"/v1/volumes/{name}")
                made.append(timed(lambda: call(url, "POST", "/v1/volumes",
                                               {"name": name, "sizeBytes": size << 20})))
            r[f"volume{size}"] = made
        plain, mounted = [], []
        for _ in range(min(n, 10)):
            code = {"language": "python", "code": "pass", "limits": latency.FORCE_COLD}
            plain.append(timed(lambda: call(url, "POST", "/execute", code)))
            mounted.append(timed(lambda: call(url, "POST", "/execute", dict(code, volume="bench-16-0"))))
        r["mount"] = (plain, mounted)
    finally:
        for size in (16, 256):
            for i in range(5):
                call(url, "DELETE", f"/v1/volumes/bench-{size}-{i}")
        for i in range(50):
            call(url, "DELETE", f"/v1/memory/bench/k{i}")
        subprocess.run([FCGI, "--conf", CONF, "--revoke-key", key[4:12]], check=True, capture_output=True)
        reload_pool()

    lines = [f"{n} runs, {time.strftime('%Y-%m-%d')}, {platform.node()}, through Caddy and the pool:", "",
             "| what | median | p90 |", "|---|---|---|",
             f"| memory PUT 1 KiB, 1 client | {median_ms(r['put']):.2f} ms | {p90_ms(r['put']):.2f} ms |",
             f"| memory GET 1 KiB, 1 client | {median_ms(r['get']):.2f} ms | {p90_ms(r['get']):.2f} ms |", "",
             f"4 clients at once: PUT {r['put4']:.0f}/s, GET {r['get4']:.0f}/s.", "",
             "| route | anonymous (local) | with a key | added |", "|---|---|---|---|"]
    for route in ("runtimes", "execute"):
        a, k = r[route]
        lines.append(f"| `{'GET /runtimes' if route == 'runtimes' else 'POST /execute'}` ({len(a)} each, in turn) | "
                     f"{median_ms(a):.2f} ms | {median_ms(k):.2f} ms | {median_ms(k) - median_ms(a):+.2f} ms |")
    lines += ["", "| volumes | median | p90 |", "|---|---|---|",
              f"| create 16 MiB (5) | {median_ms(r['volume16']):.0f} ms | {p90_ms(r['volume16']):.0f} ms |",
              f"| create 256 MiB (5) | {median_ms(r['volume256']):.0f} ms | {p90_ms(r['volume256']):.0f} ms |"]
    plain, mounted = r["mount"]
    lines += ["", f"A cold run of `pass` ({len(plain)} each, in turn): {median_ms(plain):.0f} ms without a volume, "
              f"{median_ms(mounted):.0f} ms with one at /memory ({median_ms(mounted) - median_ms(plain):+.0f} ms)."]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section(args.write, "MEMORY", text)


if __name__ == "__main__":
    main()
