#!/usr/bin/env python3
"""End-to-end latency of a hello world per language: through the web server
(Caddy -> FastCGI pool -> docker run under gVisor) next to a bare
`docker run` of the same image and program, with the same runtime.

    bench/latency.py [--runs N] [--url URL] [--runc] [--write docs/PERFORMANCE.md] [LANG[@VERSION]...]
    bench/latency.py --egress [--runs N] [--write docs/PERFORMANCE.md]

--runc adds two columns: the same through the service on the runc backend
(docs/BACKENDS.md; the installed conf is switched, the pool restarted, and
both put back afterwards) and a bare `docker run` with that backend's
runtime and seccomp profile.

--egress compares python with and without "network": true, both through
the service (the egress firewall must be installed: make run does it).

Run as root on a host where `make run` is up. Prints a Markdown table; with
--write, replaces the table between the BENCH markers in that file.
"""
import argparse
import contextlib
import functools
import json
import os
import re
import statistics
import subprocess
import tempfile
import time
import urllib.request

import report

# A python request that no warm sandbox takes: one process fewer than the
# default pids (a warm sandbox's RLIMIT_NPROC is fixed when it starts;
# memory and cpus are set when one is taken, so they no longer force cold).
FORCE_COLD = {"pids": 128 - 1}
LOCK = "/var/lib/isobox/images.lock"
PREFIX = os.environ.get("PREFIX", "/opt/isobox")


def conf_value(key):
    """A setting of the installed conf, as isobox-fcgi --print-conf says it."""
    out = subprocess.run([f"{PREFIX}/bin/isobox-fcgi", "--conf", f"{PREFIX}/conf/isobox.yaml",
                          "--print-conf"], check=True, capture_output=True, text=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines())[key]


@functools.lru_cache(maxsize=None)
def spec_argv(kind="cold", language="python"):
    """The `docker run` argv that isobox renders for a sandbox of kind for
    language, at its default limits (isobox-fcgi --print-spec; sandbox/spec.c
    is the one source of its hardening), asked once a run: a process per
    sample would be CPU counted against the bare runs (bench/cpu.py). A
    tuple: the cache's, not to be changed."""
    out = subprocess.run([f"{PREFIX}/bin/isobox-fcgi", "--conf", f"{PREFIX}/conf/isobox.yaml",
                          "--print-spec", "argv", kind, language], check=True, capture_output=True).stdout
    return tuple(a.decode() for a in out.split(b"\0")[:-1])


def hardening(kind="cold", language="python", **values):
    """spec_argv's flags without what names, labels or feeds one sandbox
    (--name, --label, --interactive, the code mount /src): what a bare
    `docker run` of the benches takes, adding its own. values replace a
    flag's value by its name: memory="1000" makes --memory=1000."""
    argv = spec_argv(kind, language)
    flags = []
    for a in argv[2:argv.index("--entrypoint=")]:
        if a.startswith(("--name=", "--label=")) or a == "--interactive" or ",dst=/src," in a:
            continue
        name = a[2:].split("=", 1)[0].replace("-", "_")
        if name == "ulimit":
            name = "ulimit_" + a.split("=")[1]
        flags.append(a if name not in values else a.split("=", 1)[0] + "=" + (
            f"{a.split('=')[1]}={values[name]}:{values[name]}" if name.startswith("ulimit_") else values[name]))
    return flags

# language: (image, file, program, bare command run in the sandbox). The
# bare command mirrors registry/registry.yaml: compile (if any) and run.
HELLO = {
    "python": ("python", "main.py", 'print("hello")', "python3 main.py"),
    "python-slim": ("python-slim", "main.py", 'print("hello")', "python3 main.py"),
    "javascript": ("node", "main.js", 'console.log("hello")', "node main.js"),
    "typescript": ("typescript", "main.ts", 'const s: string = "hello"; console.log(s)',
                   "tsc --pretty false --noEmitOnError --skipLibCheck --target es2022 --lib es2022 --module commonjs "
                   "--esModuleInterop --typeRoots /usr/share/nodejs/@types --types node --rootDir . "
                   "--outDir /box/o main.ts && node /box/o/main.js"),
    "ruby": ("ruby", "main.rb", 'puts "hello"', "ruby main.rb"),
    "bash": ("bash", "main.sh", "echo hello", "bash main.sh"),
    "php": ("php", "main.php", '<?php echo "hello\\n";', "php main.php"),
    "lua": ("lua", "main.lua", 'print("hello")', "lua5.4 main.lua"),
    "perl": ("perl", "main.pl", 'print "hello\\n";', "perl main.pl"),
    "c": ("gcc", "main.c", '#include <stdio.h>\nint main(void) { puts("hello"); }',
          "gcc -O2 -std=gnu17 -o /box/a main.c -lm && /box/a"),
    "cpp": ("gcc", "main.cpp", '#include <iostream>\nint main() { std::cout << "hello\\n"; }',
            "g++ -O2 -std=gnu++17 -o /box/a main.cpp && /box/a"),
    "go": ("go", "main.go", 'package main\nimport "fmt"\nfunc main() { fmt.Println("hello") }',
           "GOCACHE=/usr/local/lib/go-cache GOPATH=/tmp/g GOPROXY=off go build -o /box/a main.go && /box/a"),
    "rust": ("rust", "main.rs", 'fn main() { println!("hello"); }',
             "rustc --edition=2021 -o /box/a main.rs && /box/a"),
    "java": ("java", "Main.java",
             'public class Main { public static void main(String[] a) { System.out.println("hello"); } }',
             "javac -J-XX:+UseSerialGC -J-XX:TieredStopAtLevel=1 -d /box/c Main.java && "
             "java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp /box/c Main"),
}

# The other versions side by side (registry.yaml's versions:), as
# LANG@VERSION: the image each runs in; the hello world is the language's.
VERSIONS = {"python@3.14": "python-3.14", "python@3.11": "python-3.11",
            "javascript@24": "node-24", "java@25": "java-25"}


def hello(row):
    """HELLO's (image, file, program, bare command) for a language or a
    LANG@VERSION row; with the language and the version to ask for."""
    lang, _, version = row.partition("@")
    image, file, code, command = HELLO[lang]
    return (VERSIONS[row] if version else image), file, code, command, lang, version or None


def image_ids():
    ids = {}
    for line in open(LOCK):
        line = line.strip()
        if ": {id:" in line:
            name, rest = line.split(":", 1)
            ids[name] = rest.split('"')[1]
    return ids


def through_service(url, lang, code, network=False, version=None):
    ask = {"language": lang, "code": code, "network": network}
    if version:
        ask["version"] = version
    body = json.dumps(ask).encode()
    req = urllib.request.Request(url + "/execute", data=body,
                                 headers={"Content-Type": "application/json"})
    start = time.monotonic()
    with urllib.request.urlopen(req, timeout=120) as resp:
        result = json.load(resp)
    elapsed = time.monotonic() - start
    assert result["run"]["stdout"] == "hello\n", result
    return elapsed, result


@contextlib.contextmanager
def code_dir(file, code):
    """A temporary dir holding `file` (mode 0644) with `code`, as the
    worker's code dir would; yields its path."""
    with tempfile.TemporaryDirectory() as src:
        os.chmod(src, 0o755)
        path = os.path.join(src, file)
        with open(path, "w") as f:
            f.write(code)
        os.chmod(path, 0o644)
        yield src


def bare_docker(image_id, file, code, command, runc=False):
    """A bare run with gVisor, or (runc) with the runc backend's runtime,
    profile and a memory limit, which that runtime insists on."""
    if runc:
        backend = ["--runtime=" + conf_value("runc_runtime"),
                   f"--security-opt=seccomp={conf_value('runc_seccomp_profile')}", "--memory=268435456"]
    else:
        # The runtime applies a seccomp profile (--oci-seccomp): ours, as the
        # worker passes it (docker's default breaks threads).
        backend = ["--runtime=runsc-untrusted", f"--security-opt=seccomp={conf_value('seccomp_profile')}"]
    with code_dir(file, code) as src:
        start = time.monotonic()
        out = subprocess.run(
            ["docker", "run", "--rm", "--network=none", *backend,
             "--user=65534:65534", "--tmpfs=/box:exec,mode=1777", "--tmpfs=/tmp:mode=1777",
             f"--volume={src}:/src:ro", "--workdir=/src", image_id, "sh", "-c", command],
            capture_output=True, text=True)
        elapsed = time.monotonic() - start
    assert out.stdout == "hello\n", (out.stdout, out.stderr)
    return elapsed


def stats(samples):
    s = sorted(samples)
    p90 = s[min(len(s) - 1, int(round(0.9 * (len(s) - 1))))]
    return statistics.median(s), p90


def replace_between(path, name, text):
    doc = open(path).read()
    start, end = f"<!-- {name} START -->", f"<!-- {name} END -->"
    head, rest = doc.split(start, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(head + start + "\n" + text + end + tail)


def egress(args):
    code = HELLO["python"][2]
    rows = []
    for network in (False, True):
        through_service(args.url, "python", code, network)
        samples = [through_service(args.url, "python", code, network)[0] for _ in range(args.runs)]
        rows.append((network, *stats(samples)))
    table = ["| python hello world | median | p90 |", "|---|---|---|"]
    for network, med, p90 in rows:
        table.append(f"| `\"network\": {str(network).lower()}` | {med:.2f} s | {p90:.2f} s |")
    text = "\n".join(table) + f"\n\n{args.runs} runs each, {time.strftime('%Y-%m-%d')}.\n"
    print(text)
    if args.write:
        replace_between(args.write, "EGRESS", text)


def measure(args, lang, runc=False):
    """isobox and bare, interleaved: (isobox median, p90, bare median, p90,
    program time inside)."""
    ids = image_ids()
    image, file, code, command, name, version = hello(lang)
    through_service(args.url, name, code, version=version)  # warm the page cache
    bare_docker(ids[image], file, code, command, runc)
    svc, bare, phases = [], [], []
    for _ in range(args.runs):
        t, result = through_service(args.url, name, code, version=version)
        assert result["backend"] == ("runc" if runc else "gvisor"), result
        assert not version or result["version"].startswith(version), result["version"]
        svc.append(t)
        phases.append(result.get("compile", {}).get("durationMs", 0) + result["run"]["durationMs"])
        bare.append(bare_docker(ids[image], file, code, command, runc))
    (sm, sp), (bm, bp) = stats(svc), stats(bare)
    print(f"{lang:12} {'runc' if runc else 'gvisor':6} isobox {sm:.2f}/{sp:.2f}s  bare {bm:.2f}/{bp:.2f}s",
          flush=True)
    return sm, sp, bm, bp, statistics.median(phases) / 1000


@contextlib.contextmanager
def backend(args, name):
    """The installed service on another backend (conf backend:), restarted,
    then put back as it was."""
    conf = f"{PREFIX}/conf/isobox.yaml"
    with open(conf) as f:
        before = f.read()
    pool = ["bash", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                 "deploy", "pool.sh"), "restart"]

    def restart(want):
        subprocess.run(pool, check=True, capture_output=True)
        for _ in range(150):
            try:
                with urllib.request.urlopen(args.url + "/healthz", timeout=2) as r:
                    if json.load(r).get("backend") == want:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise SystemExit(f"the service did not come back on {want}")
    after, n = re.subn(r"(?m)^backend: \w+$", "backend: " + name, before, count=1)
    assert n == 1, f"no backend: in {conf}"
    was = re.search(r"(?m)^backend: (\w+)$", before).group(1)
    with open(conf, "w") as f:
        f.write(after)
    try:
        restart(name)
        yield
    finally:
        with open(conf, "w") as f:
            f.write(before)
        restart(was)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--url", default="http://127.0.0.1:8090")
    ap.add_argument("--write")
    ap.add_argument("--egress", action="store_true")
    ap.add_argument("--runc", action="store_true",
                    help="also on the runc backend (the service restarted with backend: runc, then back)")
    ap.add_argument("languages", nargs="*")
    args = ap.parse_args()
    if args.egress:
        return egress(args)
    langs = args.languages or [*HELLO, *VERSIONS]
    rows = {lang: measure(args, lang) for lang in langs}
    runc = {}
    if args.runc:
        with backend(args, "runc"):
            runc = {lang: measure(args, lang, runc=True) for lang in langs}

    table = ["| language | isobox median | isobox p90 | bare docker run median | bare p90 "
             "| overhead (median) | program time inside (compile+run, median) |"
             + (" isobox on runc median | bare runc median |" if runc else ""),
             "|---|---|---|---|---|---|---|" + ("---|---|" if runc else "")]
    for lang, (sm, sp, bm, bp, ph) in rows.items():
        row = (f"| {lang} | {sm:.2f} s | {sp:.2f} s | {bm:.2f} s | {bp:.2f} s "
               f"| {sm - bm:+.2f} s | {ph:.2f} s |")
        if runc:
            row += f" {runc[lang][0]:.2f} s | {runc[lang][2]:.2f} s |"
        table.append(row)
    note = f"\n{args.runs} runs each, {time.strftime('%Y-%m-%d')}, {report.host()}.\n"
    text = "\n".join(table) + "\n" + note
    print(text)
    if args.write:
        replace_between(args.write, "BENCH", text)


if __name__ == "__main__":
    main()
