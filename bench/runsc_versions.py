#!/usr/bin/env python3
"""Debian 12's runsc (2022-12-19) against the one deploy/setup.sh installs
(bookworm-backports, 2024-07-29), on each platform the newer one has here,
in one run: the same workloads, interleaved round by round, medians.

    bench/runsc_versions.py [--rounds N] [--old PATH] [--new PATH]

Each workload runs in a fresh `runsc do` sandbox (the host's root file
system through a gofer, no network), so that only runsc and its platform
differ between rows; a run through docker adds the same costs to both.
The old runsc is taken from Debian's package (apt-get download, then
dpkg-deb -x into a temporary directory) unless --old names one. Run as
root; it starts nothing that outlives it.

Workloads:
  hello   python3 -c 'print(1)'
  forks   sh: 200 fork+exec of /bin/true
  stat    python3: 20,000 os.stat of one file
  gcc     gcc -O0 a hello world, then run it
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

OLD_VERSION = "0.0~20221219.0-2+b3"
WORKLOADS = {
    "hello": ["python3", "-c", "print(1)"],
    "forks": ["sh", "-c", "i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i+1)); done"],
    "stat": ["python3", "-c", "import os\nfor _ in range(20000): os.stat('/etc/passwd')"],
    "gcc": ["sh", "-c", "cd /tmp && printf 'int main(void){return 0;}' > b.c && gcc -O0 b.c -o b && ./b"],
}
TIMEOUT_S = 120


def old_runsc(workdir):
    subprocess.run(["apt-get", "download", f"runsc={OLD_VERSION}"], cwd=workdir, check=True,
                   capture_output=True)
    deb = next(f for f in os.listdir(workdir) if f.endswith(".deb"))
    subprocess.run(["dpkg-deb", "-x", deb, "root"], cwd=workdir, check=True)
    return os.path.join(workdir, "root", "usr", "bin", "runsc")


def platforms_of(runsc):
    text = open(runsc, "rb").read()
    return ["ptrace"] + (["systrap"] if b"systrap" in text else [])


def once(runsc, platform, argv):
    """Seconds for one sandbox to run argv, or None if it failed."""
    t0 = time.monotonic()
    p = subprocess.run([runsc, f"--platform={platform}", "--network=none", "do", *argv], cwd="/",
                       capture_output=True, timeout=TIMEOUT_S)
    took = time.monotonic() - t0
    return took if p.returncode == 0 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--old", help="the old runsc (default: Debian 12's, downloaded)")
    ap.add_argument("--new", default="/usr/bin/runsc")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="runsc-versions-") as workdir:
        old = args.old or old_runsc(workdir)
        rows = [("2022 ptrace", old, "ptrace")] + [(f"2024 {p}", args.new, p) for p in platforms_of(args.new)]
        for name, runsc, _ in rows:
            version = subprocess.run([runsc, "--version"], capture_output=True, text=True).stdout.split("\n")[0]
            print(f"# {name}: {version}", flush=True)
        took = {(row[0], w): [] for row in rows for w in WORKLOADS}
        for r in range(args.rounds):
            for w, argv in WORKLOADS.items():
                for name, runsc, platform in rows:
                    t = once(runsc, platform, argv)
                    if t is None:
                        sys.exit(f"{name} failed on {w}")
                    took[(name, w)].append(t)
            print(f"# round {r + 1} of {args.rounds}", file=sys.stderr, flush=True)
    base = rows[0][0]
    print("| workload | " + " | ".join(name for name, _, _ in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for w in WORKLOADS:
        cells = []
        for name, _, _ in rows:
            m = statistics.median(took[(name, w)])
            ratio = m / statistics.median(took[(base, w)])
            cells.append(f"{m:.2f} s" + ("" if name == base else f" ({ratio:.2f}x)"))
        print(f"| {w} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
