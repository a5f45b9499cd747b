#!/usr/bin/env python3
"""End-to-end latency of a hello world per language: through the web server
(Caddy -> FastCGI pool -> docker run under gVisor) next to a bare
`docker run` of the same image and program, with the same runtime.

    bench/latency.py [--runs N] [--url URL] [--write docs/PERFORMANCE.md] [LANG...]
    bench/latency.py --egress [--runs N] [--write docs/PERFORMANCE.md]

--egress compares python with and without "network": true, both through
the service (the egress firewall must be installed: make run does it).

Run as root on a host where `make run` is up. Prints a Markdown table; with
--write, replaces the table between the BENCH markers in that file.
"""
import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time
import urllib.request

LOCK = "/var/lib/isobox/images.lock"
PREFIX = os.environ.get("PREFIX", "/opt/isobox")


def conf_value(key):
    """A setting of the installed conf, as isobox-fcgi --print-conf says it."""
    out = subprocess.run([f"{PREFIX}/bin/isobox-fcgi", "--conf", f"{PREFIX}/conf/isobox.yaml",
                          "--print-conf"], check=True, capture_output=True, text=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines())[key]

# language: (image, file, program, bare command run in the sandbox). The
# bare command mirrors registry/registry.yaml: compile (if any) and run.
HELLO = {
    "python": ("python", "main.py", 'print("hello")', "python3 main.py"),
    "python-slim": ("python-slim", "main.py", 'print("hello")', "python3 main.py"),
    "javascript": ("node", "main.js", 'console.log("hello")', "node main.js"),
    "typescript": ("typescript", "main.ts", 'const s: string = "hello"; console.log(s)',
                   "esbuild main.ts --bundle --platform=node --log-level=warning "
                   "--outfile=/box/.m.js && node /box/.m.js"),
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
           "GOCACHE=/tmp/c GOPATH=/tmp/g GOPROXY=off go build -o /box/a main.go && /box/a"),
    "rust": ("rust", "main.rs", 'fn main() { println!("hello"); }',
             "rustc --edition=2021 -o /box/a main.rs && /box/a"),
    "java": ("java", "Main.java",
             'public class Main { public static void main(String[] a) { System.out.println("hello"); } }',
             "javac -J-XX:+UseSerialGC -J-XX:TieredStopAtLevel=1 -d /box/c Main.java && "
             "java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp /box/c Main"),
}


def image_ids():
    ids = {}
    for line in open(LOCK):
        line = line.strip()
        if ": {id:" in line:
            name, rest = line.split(":", 1)
            ids[name] = rest.split('"')[1]
    return ids


def through_service(url, lang, code, network=False):
    body = json.dumps({"language": lang, "code": code, "network": network}).encode()
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


def bare_docker(image_id, file, code, command):
    with code_dir(file, code) as src:
        start = time.monotonic()
        out = subprocess.run(
            ["docker", "run", "--rm", "--runtime=runsc-untrusted", "--network=none",
             # The runtime applies a seccomp profile (--oci-seccomp): ours,
             # as the worker passes it (docker's default breaks threads).
             f"--security-opt=seccomp={conf_value('seccomp_profile')}",
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--url", default="http://127.0.0.1:8090")
    ap.add_argument("--write")
    ap.add_argument("--egress", action="store_true")
    ap.add_argument("languages", nargs="*")
    args = ap.parse_args()
    if args.egress:
        return egress(args)
    ids = image_ids()
    rows = []
    for lang in args.languages or list(HELLO):
        image, file, code, command = HELLO[lang]
        through_service(args.url, lang, code)  # warm the page cache
        bare_docker(ids[image], file, code, command)
        svc, bare, phases = [], [], []
        for _ in range(args.runs):
            t, result = through_service(args.url, lang, code)
            svc.append(t)
            phases.append(result.get("compile", {}).get("durationMs", 0) + result["run"]["durationMs"])
            bare.append(bare_docker(ids[image], file, code, command))
        (sm, sp), (bm, bp) = stats(svc), stats(bare)
        rows.append((lang, sm, sp, bm, bp, statistics.median(phases) / 1000))
        print(f"{lang:12} isobox {sm:.2f}/{sp:.2f}s  bare {bm:.2f}/{bp:.2f}s", flush=True)

    table = ["| language | isobox median | isobox p90 | bare docker run median | bare p90 "
             "| overhead (median) | program time inside (compile+run, median) |",
             "|---|---|---|---|---|---|---|"]
    for lang, sm, sp, bm, bp, ph in rows:
        table.append(f"| {lang} | {sm:.2f} s | {sp:.2f} s | {bm:.2f} s | {bp:.2f} s "
                     f"| {sm - bm:+.2f} s | {ph:.2f} s |")
    note = (f"\n{args.runs} runs each, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, "
            f"{platform.machine()}, runsc platform "
            f"{open('/var/lib/isobox/platform').readline().strip()}.\n")
    text = "\n".join(table) + "\n" + note
    print(text)
    if args.write:
        replace_between(args.write, "BENCH", text)


if __name__ == "__main__":
    main()
