#!/usr/bin/env python3
"""A cold hello world in every language the registry has, through the
service's `/execute`: the wall time the client sees, the compile and run
phases, the sandbox's CPU and memory peak, and the image's size.

    bench/languages.py [--runs N] [--live] [--url URL] [--write docs/PERFORMANCE.md] [LANG...]

The languages are the service's (GET /runtimes, the default version of
each): a language the registry gains is measured without editing this
file. The program is bench/latency.py's hello where it has one (its
samples are more than a hello for the languages it knows), else the
registry's sample, which must print a line that starts with "hello".
Each run asks for one process fewer than the language's default, which no
warm sandbox takes (bench/latency.py's FORCE_COLD says why), so every run
is cold. Medians over --runs (3 by default), one language after another.

--live adds a column: the same program as a step of a session, a sandbox
already booted: what a warm pool without an agent (which only saves the
boot) could give the language at best; the difference from the cold wall
is what its boot costs.

Run as root on a host where `make run` is up with every image built (the
image sizes come from the images lock). Prints a Markdown table; with
--write, replaces the one between the LANGUAGES BENCH markers in that
file.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import latency  # noqa: E402 (bench/ is not a package)
import report  # noqa: E402

REGISTRY = os.environ.get("ISOBOX_REGISTRY", f"{latency.PREFIX}/registry/registry.yaml")


def get(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.load(r)


def run(url, body, path="/execute"):
    req = urllib.request.Request(url + path, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    start = time.monotonic()
    with urllib.request.urlopen(req, timeout=300) as r:
        result = json.load(r)
    return time.monotonic() - start, result


def check_hello(lang, result):
    out = result.get("run", {})
    if not out.get("stdout", "").startswith("hello") or out.get("exitCode") != 0:
        sys.exit(f"{lang}: not a hello: {json.dumps(result)[:400]}")
    return out


def hello_code(runtime):
    lang = runtime["language"]
    return latency.HELLO[lang][2] if lang in latency.HELLO else runtime["sample"]


def image_sizes():
    """{image name: size in MB} of the images the lock names."""
    sizes = {}
    for name, image_id in latency.image_ids().items():
        out = subprocess.run(["docker", "image", "inspect", "-f", "{{.Size}}", image_id],
                             capture_output=True, text=True)
        if out.returncode == 0:
            sizes[name] = int(out.stdout) // 1000000
    return sizes


def measure(url, runtime, runs):
    """Medians of (wall s, compile ms or None, run ms, CPU ms, peak MB)."""
    lang = runtime["language"]
    body = {"language": lang, "code": hello_code(runtime), "limits": {"pids": runtime["limits"]["pids"] - 1}}
    rows = []
    for _ in range(runs):
        wall, result = run(url, body)
        out = check_hello(lang, result)
        phases = [p for p in (result.get("compile"), out) if p]
        rows.append((wall, (result.get("compile") or {}).get("durationMs"), out["durationMs"],
                     sum(p.get("cpuTimeMs") or 0 for p in phases),
                     max(p.get("peakMemoryBytes") or 0 for p in phases) >> 20))
    compiled = [r[1] for r in rows if r[1] is not None]
    return (statistics.median(r[0] for r in rows), statistics.median(compiled) if compiled else None,
            *(statistics.median(r[i] for r in rows) for i in (2, 3, 4)))


def live(url, runtime, runs):
    """The median wall of the hello as a step of one session."""
    lang = runtime["language"]
    _, session = run(url, {"language": lang}, "/v1/sessions")
    try:
        walls = []
        for _ in range(runs):
            wall, result = run(url, {"code": hello_code(runtime)}, f"/v1/sessions/{session['id']}/exec")
            check_hello(lang, result)
            walls.append(wall)
        return statistics.median(walls)
    finally:
        urllib.request.urlopen(urllib.request.Request(f"{url}/v1/sessions/{session['id']}", method="DELETE"),
                               timeout=60).close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--url", default="http://127.0.0.1:8090")
    ap.add_argument("--live", action="store_true", help="add a column: the hello as a session's step")
    ap.add_argument("--write")
    ap.add_argument("languages", nargs="*")
    args = ap.parse_args()
    with open(REGISTRY) as f:
        images = {entry["name"]: entry["image"] for entry in yaml.safe_load(f)["languages"]}
    runtimes = [r for r in get(args.url + "/runtimes")["runtimes"]
                if r["default"] and (not args.languages or r["language"] in args.languages)]
    sizes = image_sizes()
    table = ["| language | image | size | hello, wall | compile | run | CPU | peak |"
             + (" in a live session |" if args.live else ""),
             "|---|---|---|---|---|---|---|---|" + ("---|" if args.live else "")]
    for r in runtimes:
        wall, compile_ms, run_ms, cpu_ms, peak = measure(args.url, r, args.runs)
        image = images[r["language"]]
        row = (f"| {r['language']} | {image} | {sizes.get(image, '?')} MB | {wall:.1f} s "
               f"| {'' if compile_ms is None else f'{compile_ms:.0f} ms'} | {run_ms:.0f} ms "
               f"| {cpu_ms:.0f} ms | {peak} MB |")
        if args.live:
            row += f" {live(args.url, r, args.runs):.1f} s |"
        print(row, flush=True)
        table.append(row)
    note = (f"\n{len(runtimes)} languages, median of {args.runs} cold runs each, "
            f"{time.strftime('%Y-%m-%d')}, {report.host()}.\n")
    text = "\n".join(table) + "\n" + note
    print(text)
    if args.write:
        report.write_section(args.write, "LANGUAGES", text)


if __name__ == "__main__":
    main()
