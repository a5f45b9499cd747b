#!/usr/bin/python3
"""What runsc --oci-seccomp with isobox's profile costs (docs/PERFORMANCE.md).

    sudo tests/bench_seccomp.py [--runs 15] [--with RUNTIME] [--without RUNTIME]

Runs the same `docker run` (a cold python sandbox's flags as isobox renders
them, isobox-fcgi --print-spec: the image by ID, the installed seccomp
profile, the default limits) under two runtimes
that differ only in --oci-seccomp, interleaved: a python hello world (wall
time of the whole docker run) and a syscall-heavy loop (200k getppid()
and 50k stat() calls, timed inside the sandbox). Prints medians and p90.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import latency  # noqa: E402

LOOP = r'''
import os, time
t = time.perf_counter()
for _ in range(200000):
    os.getppid()
a = time.perf_counter() - t
t = time.perf_counter()
for _ in range(50000):
    os.stat("/")
print(a, time.perf_counter() - t)
'''


def run(runtime, code):
    """One run with isobox's flags but the runtime: (seconds, stdout)."""
    spec = latency.spec_argv("cold", "python")
    image = spec[spec.index("--entrypoint=") + 1]
    argv = [spec[0], "run", "--rm", *latency.hardening(runtime=runtime), "--entrypoint=", image,
            "python3", "-c", code]
    t = time.monotonic()
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return time.monotonic() - t, out


def summary(values, unit=""):
    values = sorted(values)
    return f"median {statistics.median(values):.3f}{unit}, p90 {values[int(len(values) * 0.9) - 1]:.3f}{unit}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--with", dest="on", default="runsc-untrusted")
    ap.add_argument("--without", dest="off", required=True,
                    help="the same runtime without --oci-seccomp (add one to daemon.json)")
    args = ap.parse_args()
    hello = {args.on: [], args.off: []}
    getppid = {args.on: [], args.off: []}
    stat = {args.on: [], args.off: []}
    for _ in range(args.runs):
        for rt in hello:
            hello[rt].append(run(rt, "print(1)")[0])
            a, b = run(rt, LOOP)[1].split()
            getppid[rt].append(float(a) / 200000 * 1e6)
            stat[rt].append(float(b) / 50000 * 1e6)
    for rt, label in ((args.off, "without --oci-seccomp"), (args.on, "with --oci-seccomp")):
        print(f"{label} ({rt}): hello {summary(hello[rt], ' s')}; getppid {summary(getppid[rt], ' us')}; "
              f"stat {summary(stat[rt], ' us')}")


if __name__ == "__main__":
    main()
