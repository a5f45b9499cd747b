#!/usr/bin/env python3
"""Which part of a cold run through isobox costs CPU inside runsc? Bare
python hellos (bench/warm.py's `docker run` with isobox's flags) at
concurrency 4, in variants that each add one thing the worker does,
interleaved in the order given: phases as bench/warm.py's sustained ones
(each waits for a full, quiet pool; the output checked; the host's CPU per
run split by component, bench/cpu.py).

    bench/bare_variants.py [--seconds S] [--order ACCA]

Variants:
  A  bare: sh -c 'python3 main.py' in /src, --rm
  C  the worker's own entry script (sandbox/spec.c: the copy to /box, the
     records, ulimit -p) in /box, --interactive, stdin from a pipe
  M  a memory limit one page below the default (bench/warm.py forces a
     cold run that way)
  D  no --rm: removed after exit by the API's DELETE ?force=1, as the
     worker does
  I  --interactive, stdin from a pipe (closed at once), nothing else
  S  a cold run through the service (the warm pool's limits less one
     page of memory), to set against C

The gauge printed is runsc's CPU per run over the docker CLI's: the CLI
does the same work in every variant, so the ratio takes out this host's
drift in speed between phases (not across C and I: with stdin attached
the CLI carries more). Run as root with the service up (the
limits are read from one result). Containers are named
variantbench-<pid>-<n>.
"""
import argparse
import itertools
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu  # noqa: E402
import latency  # noqa: E402
import warm  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def entry_script():
    """The cold run's entry script, as isobox renders it (--print-spec)."""
    argv = latency.spec_argv("cold", "python")
    return argv[argv.index("--entrypoint=") + 4]  # the image, /bin/sh, -c, the script


def delete(name):
    with socket.socket(socket.AF_UNIX) as s:
        s.connect("/var/run/docker.sock")
        s.sendall(f"DELETE /containers/{name}?force=1 HTTP/1.0\r\nHost: docker\r\n\r\n".encode())
        status = s.recv(4096).split(b"\r\n")[0]
    if b" 204 " not in status:
        raise RuntimeError(f"DELETE {name}: {status!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=40, help="per phase")
    ap.add_argument("--order", default="ACMDDMCA")
    ap.add_argument("--url", default="http://127.0.0.1:8090")
    args = ap.parse_args()
    if set(args.order) - set("ACMDIS"):
        ap.error("--order: variants are A, C, M, D, I, S")
    # What warm.phase reads: one phase of --seconds, no cap on runs.
    args.pool_wait, args.sustain_seconds, args.sustain_rounds, args.sustain_max = 60, args.seconds, 1, 10**9
    args.sustain_settle = 0
    bare = warm.Bare()
    bare.limits["python"] = warm.execute(args, "python", latency.HELLO["python"][2]).limits
    entry = entry_script()
    seq = itertools.count()
    _, file, code, command = latency.HELLO["python"]

    def run(v):
        if v == "S":
            s = warm.execute(args, "python", code, warm.COLD_LIMITS, patient=False)
            if s.warm is not False:
                raise RuntimeError("S: the run was warm")
            return s
        name = f"variantbench-{os.getpid()}-{next(seq)}"
        with latency.code_dir(file, code) as src:
            argv = bare.argv("python", name, src, command)
            if v == "C":
                i = argv.index("--entrypoint=")
                argv = [a if a != "--workdir=/src" else "--workdir=/box" for a in argv[:i + 2]]
                argv[2:2] = ["--interactive"]
                # The nonce of the reporter's end marks first (sandbox/spec.c's push_command).
                argv += ["/bin/sh", "-c", entry, "isobox", "0" * 16, str(bare.limits["python"]["pids"]), "0",
                         "python3", file]
            if v == "M":
                m = bare.limits["python"]["memoryBytes"] - 4096
                argv = [f"--memory={m}" if a.startswith("--memory=") else
                        f"--memory-swap={m}" if a.startswith("--memory-swap=") else a for a in argv]
            if v == "D":
                argv.remove("--rm")
            if v == "I":
                argv[2:2] = ["--interactive"]
            wall0, t0 = time.time(), time.monotonic()
            try:
                out = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                                     input="" if v in "CI" else None)
            finally:
                if v == "D":
                    delete(name)
        return warm.Sample(time.monotonic() - t0, wall0, time.time(), out.stdout, out.stderr, out.returncode)

    total = {}
    for v in args.order:
        ph = warm.phase(args, f"variant {v}", lambda: run(v), 4)
        if ph["errors"]:
            sys.exit(f"variant {v}: {ph['errors'][0]}")
        n = len(ph["done"])
        t = total.setdefault(v, {"runs": 0, "seconds": 0.0, "cpu": {}})
        t["runs"] += n
        t["seconds"] += ph["seconds"]
        for k, x in ph["cpu"].items():
            t["cpu"][k] = t["cpu"].get(k, 0.0) + x
        print(f"{v}: {n} runs, {n / ph['seconds']:.2f}/s", flush=True)
    print("\n| variant | runs | per second | CPU-s per run | runsc and shims | docker CLI | gauge |")
    print("|---|---|---|---|---|---|---|")
    for v, t in total.items():
        n, c = t["runs"], t["cpu"]
        print(f"| {v} | {n} | {n / t['seconds']:.2f} | {c['total'] / n:.3f} | {c['runsc and shims'] / n:.3f} "
              f"| {c['docker CLI'] / n:.3f} | {c['runsc and shims'] / c['docker CLI']:.2f} |")


if __name__ == "__main__":
    main()
