#!/usr/bin/env python3
"""Sessions, measured end to end through the web server (medians of --runs):

  create     POST /v1/sessions (shell, python) until it answers 201
  shell      a shell step running `print('x')` (python3 starts each time)
  kernel     a kernel step `x += 1` (the interpreter is already up)
  upload     PUT of 1 MiB into /workspace
  download   GET of the same 1 MiB
  cold       POST /execute of the same `x = 0; x += 1`, cold: it asks for
             one process fewer than python's default pids, so no warm
             sandbox takes it (latency.FORCE_COLD, as bench/warm.py does)

and the goal of the issue: a kernel step under 0.1x a cold /execute.

    bench/sessions.py [--runs N] [--url URL] [--write docs/PERFORMANCE.md]

Run where the service is up (make run). Every session it makes is deleted,
also when interrupted. Prints Markdown; with --write, replaces the text
between <!-- SESSIONS BENCH --> and <!-- /SESSIONS BENCH -->.
"""
import argparse
import json
import os
import platform
import time
import urllib.error
import urllib.request

import latency
from report import median_ms, p90_ms, write_section


def call(url, method, path, body=None, raw=False):
    data = body if isinstance(body, bytes) else json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method,
                                 headers={"Content-Type": "application/octet-stream" if raw else "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            status, payload = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, payload = e.code, e.read()
    return status, payload


def timed(fn):
    start = time.monotonic()
    out = fn()
    return time.monotonic() - start, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--url", default=f"http://127.0.0.1:{os.environ.get('PORT', '8090')}")
    ap.add_argument("--write")
    args = ap.parse_args()
    url, n = args.url, args.runs
    made = []
    results = {}
    try:
        def create(kind="shell"):
            status, body = call(url, "POST", "/v1/sessions", {"language": "python", "type": kind})
            assert status == 201, body
            sid = json.loads(body)["id"]
            made.append(sid)
            return sid

        samples = []
        for _ in range(n):
            t, sid = timed(create)
            samples.append(t)
            call(url, "DELETE", f"/v1/sessions/{sid}")
            made.remove(sid)
        results["create"] = samples

        shell, kernel = create(), create("kernel")
        step = lambda sid, code: call(url, "POST", f"/v1/sessions/{sid}/exec", {"code": code})  # noqa: E731
        step(kernel, "x = 0")
        step(shell, "print('x')")
        results["shell"] = [timed(lambda: step(shell, "print('x')"))[0] for _ in range(n)]
        results["kernel"] = [timed(lambda: step(kernel, "x += 1"))[0] for _ in range(n)]
        mib = os.urandom(2**20)
        results["upload"] = [timed(lambda: call(url, "PUT", f"/v1/sessions/{shell}/files/one.bin", mib, raw=True))[0]
                             for _ in range(n)]
        results["download"] = [timed(lambda: call(url, "GET", f"/v1/sessions/{shell}/files/one.bin"))[0]
                               for _ in range(n)]
        cold, warm = [], 0
        for _ in range(n):
            t, (status, body) = timed(lambda: call(url, "POST", "/execute",
                                                   {"language": "python", "code": "x = 0\nx += 1",
                                                    "limits": latency.FORCE_COLD}))
            cold.append(t)
            warm += json.loads(body).get("warm", False)
        results["cold"] = cold
    finally:
        for sid in made:
            call(url, "DELETE", f"/v1/sessions/{sid}")

    ratio = median_ms(results["kernel"]) / median_ms(results["cold"])
    rows = [("session create (shell, python)", "create"), ("shell step: `print('x')`", "shell"),
            ("kernel step: `x += 1`", "kernel"), ("upload 1 MiB (PUT)", "upload"),
            ("download 1 MiB (GET)", "download"),
            (f"cold `/execute` of `x = 0; x += 1` ({warm} of {n} warm)", "cold")]
    lines = [f"{n} runs each, {time.strftime('%Y-%m-%d')}, {platform.node()}, through Caddy and the pool:", "",
             "| what | median | p90 |", "|---|---|---|"]
    for label, key in rows:
        lines.append(f"| {label} | {median_ms(results[key]):.1f} ms | {p90_ms(results[key]):.1f} ms |")
    lines += ["", f"A kernel step takes {ratio:.3f}x an `/execute` of the same code "
              f"(goal: under 0.1x): {'met' if ratio < 0.1 else 'NOT met'}."]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section(args.write, "SESSIONS", text)


if __name__ == "__main__":
    main()
