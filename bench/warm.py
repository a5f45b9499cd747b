#!/usr/bin/env python3
"""The warm pool, measured side by side in one run: isobox warm (a sandbox
the pool master started ahead), isobox cold (forced by asking for one page
less memory than the default: no warm sandbox fits), and a bare
`docker run` of the same image with isobox's flags (isobox-fcgi --print-spec), interleaved,
medians.

    bench/warm.py [--runs N] [--url URL] [--only SECTION,...] [--note TEXT]
                  [--write docs/PERFORMANCE.md] [--strict]

Sections (default: all, in this order):
  hello      python hello world: bare, cold, warm; warm/bare and cold/bare
  pandas     import pandas, print a small DataFrame: bare, cold, warm; warm/cold
  burst      as many python hellos at once as the pool keeps (from /metrics),
             with the pool full, vs the same number of bare runs at once
  sustained  python hellos at concurrency 4 for --sustain-seconds (at most
             --sustain-max runs) each: isobox (default limits, warm pool on),
             isobox all cold (no refills beside the runs), bare; and the
             host's CPU per run in each, split by component (bench/cpu.py)
  javascript javascript hello world: bare, cold, warm
  where      where the time of a python hello goes, warm, cold and bare

Before every sample (warm, cold or bare alike) the script waits until the
warm pool is full and nothing boots (isobox_warm_ready == isobox_warm_target,
isobox_warm_starting == 0 for every language in /metrics), so that each warm
sample is really warm and no refill runs beside a measurement. Each result's
"warm" flag is checked: a sample that is not what was asked for (someone
else took the warm sandbox, the pool was restarted) is reported and taken
again (--strict: stop). If the pool stays off for --pool-wait seconds the
warm samples of that section are skipped and the output says so.

The bare run is bench/latency.py's (its images, hello worlds and commands,
`sh -c` on the code mounted read-only at /src), with all of isobox's
hardening flags and the limits isobox applied (read from a result): the
same image by ID, runtime, seccomp profile, memory, cpus, ulimits, tmpfs,
cgroup parent, --read-only, --cap-drop=ALL. It differs from a cold isobox
run only by isobox's own work: no entry script copying the code, --rm
instead of the worker's clean-up (docker rm, docker inspect when the exit
status is ambiguous), no HTTP. Its containers are named
warmbench-<pid>-<n>; an interrupted run removes the ones still there.

Run as root on a host where the service is up (make run) with a warm pool
(warm.sandboxes in the installed conf). Prints Markdown; with --write,
replaces the text between <!-- WARM BENCH --> and <!-- /WARM BENCH -->.
"""
import argparse
import itertools
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from report import write_section

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu  # noqa: E402  (where the host's CPU goes, by component)
import latency  # noqa: E402  (its images, hello worlds, conf reader and stats)

COLD_LIMITS = latency.FORCE_COLD
PANDAS = ('import pandas as pd\n'
          'df = pd.DataFrame({"x": [1, 2, 3], "y": [0.5, 1.5, 2.5]})\n'
          'print(df)\n')
# The python hello world with time stamps on stderr: the program's first
# line and its atexit hook, on the sandbox's clock (gVisor's, which follows
# the host's: the ordering is checked).
PROBE = ('import atexit, sys, time\n'
         't0 = time.time()\n'
         'atexit.register(lambda: sys.stderr.write("T1 %.6f\\n" % time.time()))\n'
         'print("hello")\n'
         'sys.stderr.write("T0 %.6f\\n" % t0)\n')
# What the python agent's exit does besides the program's own atexit: a
# full collection, over everything it preloaded (numpy, pandas, requests).
GC_PROBE = ('import gc, time\n'
            't = time.perf_counter()\n'
            'gc.collect()\n'
            'print("%.6f %d" % (time.perf_counter() - t, len(gc.get_objects())))\n')
SECTIONS = ["hello", "pandas", "burst", "sustained", "javascript", "where"]

NOTES = []       # what the output must say besides the numbers
MISMATCH = []    # samples whose "warm" flag was not what was asked for
POOL_GONE = set()  # sections whose warm pool did not come back in --pool-wait: no more warm samples


def note(text):
    NOTES.append(text)
    print("  note:", text, flush=True)


class PoolUnavailable(Exception):
    pass


class Sample:
    """One run as the client saw it: seconds (monotonic), the wall clock at
    send and receive, output, and for isobox the result's warm flag and
    run.durationMs."""

    def __init__(self, seconds, wall0, wall1, stdout, stderr, code, warm=None, duration_ms=None,
                 limits=None):
        self.seconds, self.wall0, self.wall1 = seconds, wall0, wall1
        self.stdout, self.stderr, self.code = stdout, stderr, code
        self.warm, self.duration_ms, self.limits = warm, duration_ms, limits


# ---- the installed service ----

def metrics(url):
    """The warm pool per language from /metrics:
    {lang: {target, ready, starting, refills, refill_seconds}}."""
    with urllib.request.urlopen(url + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    pool = {}
    names = {"target": "target", "ready": "ready", "starting": "starting",
             "refills_total": "refills", "refill_seconds_total": "refill_seconds"}
    for m in re.finditer(r'^isobox_warm_(\w+)\{language="([^"]+)"(?:,version="[^"]*")?\} (\S+)$', text, re.M):
        if m.group(1) in names:
            p = pool.setdefault(m.group(2), dict.fromkeys(names.values(), 0))
            p[names[m.group(1)]] = float(m.group(3))
    return pool


def wait_pool(args, need=None, settle=0.3):
    """Until every language's warm pool is full and nothing boots; with
    need, that language must have a pool. Then settle a little (the master
    removes a used sandbox in the background). PoolUnavailable after
    --pool-wait seconds."""
    start = time.monotonic()
    said = start
    while True:
        try:
            pool = metrics(args.url)
        except (OSError, ValueError) as e:
            pool, why = None, f"/metrics: {e}"
        if pool is not None:
            has = not need or pool.get(need, {}).get("target", 0) > 0
            if has and all(p["ready"] >= p["target"] and p["starting"] == 0 for p in pool.values()):
                if time.monotonic() - start > 5:
                    print(f"  (waited {time.monotonic() - start:.0f} s for the pool)", flush=True)
                time.sleep(settle)
                return pool
            why = "no warm pool for " + need if not has else "pool " + json.dumps(pool)
        now = time.monotonic()
        if now - start > args.pool_wait:
            raise PoolUnavailable(f"the warm pool was not full for {args.pool_wait:.0f} s ({why})")
        if now - said > 30:
            print(f"  waiting for the warm pool ({now - start:.0f} s): {why}", flush=True)
            said = now
        time.sleep(0.1)


def execute(args, lang, code, limits=None, patient=True):
    """One POST /execute; retried while the service is restarting (patient)."""
    body = {"language": lang, "code": code}
    if limits:
        body["limits"] = limits
    data = json.dumps(body).encode()
    give_up = time.monotonic() + args.pool_wait
    while True:
        req = urllib.request.Request(args.url + "/execute", data=data,
                                     headers={"Content-Type": "application/json"})
        wall0, t0 = time.time(), time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                raw = resp.read()
        except (urllib.error.HTTPError, urllib.error.URLError, ConnectionError) as e:
            status = getattr(e, "code", None)
            if patient and (status is None or status >= 500) and time.monotonic() < give_up:
                print(f"  /execute failed ({e}); retrying", flush=True)
                time.sleep(1)
                continue
            raise
        t1, wall1 = time.monotonic(), time.time()
        r = json.loads(raw)
        run = r.get("run", {})
        return Sample(t1 - t0, wall0, wall1, run.get("stdout"), run.get("stderr"), run.get("exitCode"),
                      r.get("warm"), run.get("durationMs"), r.get("limits"))


def isobox(args, lang, code, want_warm, expect=None, section=None):
    """A sample through the service, warm or forced cold, taken with the
    pool full; its warm flag checked (retaken, up to 3 times, if wrong).
    None: no warm pool to be had (then none for the rest of the section)."""
    if want_warm and section in POOL_GONE:
        return None
    for attempt in range(3):
        try:
            wait_pool(args, need=lang if want_warm else None)
        except PoolUnavailable as e:
            if want_warm:
                note(f"{section}: warm samples skipped from here on: {e}")
                POOL_GONE.add(section)
                return None
            note(f"cold sample taken with the pool not full: {e}")
        s = execute(args, lang, code, None if want_warm else COLD_LIMITS)
        check_output(s, expect, f"isobox {lang} {'warm' if want_warm else 'cold'}")
        if s.warm is want_warm:
            return s
        MISMATCH.append(f"{lang}: asked {'warm' if want_warm else 'cold'}, got warm={s.warm}")
        print(f"  UNEXPECTED: {MISMATCH[-1]} (attempt {attempt + 1})", flush=True)
        if args.strict:
            sys.exit("stopped (--strict): a sample's warm flag was not what was asked for")
    note(f"{lang}: no {'warm' if want_warm else 'cold'} sample after 3 attempts")
    return None


def check_output(s, expect, what):
    if s.code != 0 or (expect is not None and s.stdout != expect):
        raise SystemExit(f"{what}: unexpected result: exit {s.code}, stdout {s.stdout!r}, "
                         f"stderr {(s.stderr or '')[-500:]!r}")


# ---- the bare docker run ----

class Bare:
    """`docker run --rm` of a language's image with isobox's flags."""

    def __init__(self):
        self.docker = latency.spec_argv()[0]
        self.ids = latency.image_ids()
        self.limits = {}  # language: what isobox applied (set from a result)
        self.live = set()
        self.lock = threading.Lock()
        self.seq = itertools.count()

    def argv(self, lang, name, src, command):
        """A cold sandbox's flags as isobox renders them, with the limits
        isobox applied, the code at /src, and the bare command."""
        lim = self.limits[lang]
        image, _, _, _ = latency.HELLO[lang]
        m, pids = lim["memoryBytes"], lim["pids"]
        flags = latency.hardening("cold", lang, memory=str(m), memory_swap=str(m), cpus=f"{lim['cpus']:.3f}",
                                  ulimit_nproc=str(pids), workdir="/src")
        return [self.docker, "run", "--rm", f"--name={name}", *flags,
                f"--mount=type=bind,src={src},dst=/src,readonly",
                "--entrypoint=", self.ids[image], "sh", "-c", command]

    def run(self, lang, code, expect=None):
        _, file, _, command = latency.HELLO[lang]
        name = f"warmbench-{os.getpid()}-{next(self.seq)}"
        with latency.code_dir(file, code) as src:
            argv = self.argv(lang, name, src, command)
            with self.lock:
                self.live.add(name)
            wall0, t0 = time.time(), time.monotonic()
            out = subprocess.run(argv, capture_output=True, text=True, timeout=120)
            t1, wall1 = time.monotonic(), time.time()
            with self.lock:
                self.live.discard(name)
        s = Sample(t1 - t0, wall0, wall1, out.stdout, out.stderr, out.returncode)
        check_output(s, expect, f"bare {lang}")
        return s

    def sample(self, args, lang, code, expect=None):
        """A bare run taken with the pool full and quiet, as the others."""
        try:
            wait_pool(args)
        except PoolUnavailable as e:
            note(f"bare sample taken with the pool not full: {e}")
        return self.run(lang, code, expect)

    def cleanup(self):
        with self.lock:
            names = sorted(self.live)
        if names:  # only ours, by name
            subprocess.run([self.docker, "rm", "--force", *names], capture_output=True)


# ---- statistics and formatting ----

def med(samples):
    xs = [s.seconds if isinstance(s, Sample) else s for s in samples if s is not None]
    return statistics.median(xs) if xs else None


def p90(samples):
    xs = [s.seconds if isinstance(s, Sample) else s for s in samples if s is not None]
    return latency.stats(xs)[1] if xs else None


def sec(x):
    return "–" if x is None else f"{x:.2f} s"


def ms(x):
    return "–" if x is None else f"{x * 1000:.0f} ms"


def ratio(a, b):
    return "–" if a is None or b is None else f"{a / b:.2f}"


def concurrently(n, fn):
    """Start n calls of fn() at once; (time to all done, results)."""
    barrier = threading.Barrier(n)
    starts, ends, results, errors = [None] * n, [None] * n, [None] * n, []

    def one(i):
        barrier.wait()
        starts[i] = time.monotonic()
        try:
            results[i] = fn()
        except BaseException as e:  # noqa: B902 (reported below)
            errors.append(e)
        ends[i] = time.monotonic()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return max(ends) - min(starts), results


# ---- the sections ----

def compare(args, bare, lang, code, expect, label):
    """Interleaved rounds of bare, cold and warm (the order rotates)."""
    modes = {"bare": lambda: bare.sample(args, lang, code, expect),
             "cold": lambda: isobox(args, lang, code, False, expect, label),
             "warm": lambda: isobox(args, lang, code, True, expect, label)}
    got = {m: [] for m in modes}
    for m in modes:  # once each first: page cache, and the check of the output
        modes[m]()
    order = list(modes)
    for r in range(args.runs):
        for m in order[r % 3:] + order[:r % 3]:
            got[m].append(modes[m]())
    warm = [s for s in got["warm"] if s is not None]
    row = {m: (med(v), p90(v)) for m, v in got.items()}
    print(f"{label:28} bare {sec(row['bare'][0])}  cold {sec(row['cold'][0])}  warm {sec(row['warm'][0])}"
          f"  ({len(warm)} warm samples)", flush=True)
    return {"label": label, "n": args.runs, "n_warm": len(warm), **row}


def burst(args, bare):
    pool = wait_pool(args, need="python")
    n = int(pool["python"]["target"])
    print(f"burst: {n} python hellos at once (the pool's python target)", flush=True)
    hello = latency.HELLO["python"][2]
    iso, bar, cold_in_burst = [], [], 0
    for r in range(args.burst_rounds):
        wait_pool(args, need="python")
        t, results = concurrently(n, lambda: execute(args, "python", hello))
        for s in results:
            check_output(s, "hello\n", "isobox burst")
        cold = sum(1 for s in results if not s.warm)
        if cold:
            cold_in_burst += cold
            MISMATCH.append(f"burst round {r + 1}: {cold} of {n} ran cold")
            print(f"  UNEXPECTED: {MISMATCH[-1]}", flush=True)
            if args.strict:
                sys.exit("stopped (--strict)")
        iso.append(t)
        wait_pool(args)
        t, _ = concurrently(n, lambda: bare.run("python", hello, "hello\n"))
        bar.append(t)
    print(f"burst of {n}: isobox {sec(med(iso))}  bare {sec(med(bar))}", flush=True)
    return {"n": n, "rounds": args.burst_rounds, "isobox": med(iso), "bare": med(bar),
            "isobox_p90": p90(iso), "bare_p90": p90(bar), "cold": cold_in_burst}


def sustained(args, bare):
    """Python hellos at concurrency 4, three ways: isobox with the warm
    pool on (default limits: warm while the pool lasts, then cold, and the
    master boots replacements beside the runs), isobox forced cold (the
    pool stays full and idle: no refills), bare. --sustain-rounds phases
    each, in the order A B C, C B A, A B C...: this host's speed drifts by
    more than what is being measured (a bare phase gave 0.79 runs/s and,
    minutes later, 0.98), so many short phases, and each round's isobox /
    bare ratio is kept to show the spread."""
    hello = latency.HELLO["python"][2]
    conc = min(args.concurrency, 4)
    runs = {"isobox": lambda: execute(args, "python", hello, patient=False),
            "cold": lambda: execute(args, "python", hello, COLD_LIMITS, patient=False),
            "bare": lambda: bare.run("python", hello, "hello\n")}
    out = {who: {"runs": 0, "seconds": 0.0, "lat": [], "warm": 0, "refills": 0.0,
                 "refill_seconds": 0.0, "cpu": dict.fromkeys(cpu.COMPONENTS + ["total"], 0.0)}
           for who in runs}
    order = []
    for r in range(args.sustain_rounds):
        order += list(runs) if r % 2 == 0 else list(runs)[::-1]
    rate = {}  # (round, who): runs per second
    for i, who in enumerate(order):
        for _ in range(3):
            ph = phase(args, who, runs[who], conc)
            if not ph["errors"]:
                break
            # The service restarted under it (the tests do that): the phase
            # is not what it claims to be. Taken again.
            note(f"sustained {who}: a phase with {len(ph['errors'])} failed runs was taken again "
                 f"({ph['errors'][0][:160]})")
        else:
            sys.exit(f"sustained {who}: three phases in a row had failed runs")
        o = out[who]
        rate[(i // len(runs), who)] = len(ph["done"]) / ph["seconds"] if ph["seconds"] else 0.0
        o["runs"] += len(ph["done"])
        o["seconds"] += ph["seconds"]
        o["lat"] += [s.seconds for s in ph["done"]]
        warm = sum(1 for s in ph["done"] if s.warm)
        o["warm"] += warm
        if who == "cold" and warm:
            MISMATCH.append(f"sustained cold: {warm} ran warm")
        o["refills"] += ph["refills"]
        o["refill_seconds"] += ph["refill_seconds"]
        for k, v in ph["cpu"].items():
            o["cpu"][k] += v
        print(f"sustained {who}: {len(ph['done'])} runs in {ph['seconds']:.1f} s"
              + (f", {warm} warm" if who != "bare" else ""), flush=True)
    for who, o in out.items():
        o["rate"] = o["runs"] / o["seconds"] if o["seconds"] else 0.0
        o["median"], o["p90"] = med(o["lat"]), p90(o["lat"])
        print(f"sustained {who}: {o['runs']} runs, {o['rate']:.2f}/s, {o['warm']} warm, "
              f"{o['refills']:.0f} refills", flush=True)
    out["concurrency"] = conc
    out["rounds"] = args.sustain_rounds
    out["round_ratios"] = {who: sorted(rate[(r, who)] / rate[(r, "bare")]
                                       for r in range(args.sustain_rounds) if rate[(r, "bare")])
                           for who in ("isobox", "cold")}
    return out


def phase(args, who, run, conc):
    """One sustained phase: conc threads calling run() until
    --sustain-seconds / --sustain-rounds (or that share of --sustain-max
    runs) is used, counted after --sustain-settle seconds of the same load:
    the warm pool's head start (a full pool when the phase begins) is then
    spent before the count starts, and what is counted is the steady
    state."""
    try:
        wait_pool(args, need="python" if who == "isobox" else None)
    except PoolUnavailable as e:
        note(f"sustained {who} started with the pool not full: {e}")
    tickets = itertools.count()
    lock = threading.Lock()
    done, errors = [], []
    window = {"stop_at": float("inf")}  # set when the count starts

    def loop():
        while time.monotonic() < window["stop_at"] and \
                next(tickets) < args.sustain_max // args.sustain_rounds:
            try:
                s = run()
                check_output(s, "hello\n", f"sustained {who}")
            except BaseException as e:  # noqa: B902 (counted)
                with lock:
                    errors.append(repr(e))
                time.sleep(0.5)
                continue
            with lock:
                done.append((time.monotonic(), s))

    threads = [threading.Thread(target=loop) for _ in range(conc)]
    for t in threads:
        t.start()
    time.sleep(args.sustain_settle)
    # The snapshots before the clock: reading /proc is not the phase's time.
    before, cpu0 = pool_metrics(args), cpu.snapshot()
    start = time.monotonic()
    window["stop_at"] = start + args.sustain_seconds / args.sustain_rounds
    for t in threads:
        t.join()
    # Taken when the last run is answered: the warm master's refills after
    # it (or the reaper's removals) are not this phase's.
    used = cpu.between(cpu0, cpu.snapshot())
    after = pool_metrics(args)
    counted = [(t, s) for t, s in done if t >= start]
    last = max((t for t, _ in counted), default=start)
    ph = {"done": [s for _, s in counted], "seconds": last - start, "errors": errors,
          "refills": 0.0, "refill_seconds": 0.0, "cpu": used}
    if before and after and after["refills"] >= before["refills"]:  # else the pool restarted
        ph["refills"] = after["refills"] - before["refills"]
        ph["refill_seconds"] = after["refill_seconds"] - before["refill_seconds"]
    return ph


def pool_metrics(args):
    """The python pool's counters from /metrics; {} if it cannot be read."""
    try:
        return metrics(args.url).get("python", {})
    except OSError:
        return {}


def stamps(s):
    """(first line, atexit) on the sandbox's clock, from the probe's stderr."""
    t = dict(re.findall(r"^(T[01]) (\d+\.\d+)$", s.stderr or "", re.M))
    if "T0" not in t or "T1" not in t:
        raise SystemExit(f"the probe's stamps are missing: stderr {s.stderr!r}")
    return float(t["T0"]), float(t["T1"])


def where(args, bare):
    """Where a python hello's time goes, from four instants: request sent
    (S), the program's first line (F) and its atexit hook (A), answer
    received (V); plus the server's durationMs (D): from the program-start
    record to the end of the sandbox's output."""
    modes = {"warm": lambda: isobox(args, "python", PROBE, True, "hello\n", "where"),
             "cold": lambda: isobox(args, "python", PROBE, False, "hello\n", "where"),
             "bare": lambda: bare.sample(args, "python", PROBE, "hello\n")}
    rows = {m: [] for m in modes}
    order = list(modes)
    for m in order:
        modes[m]()
    bad_clock = 0
    for r in range(args.runs):
        for m in order[r % 3:] + order[:r % 3]:
            s = modes[m]()
            if s is None:
                continue
            f, a = stamps(s)
            if not (s.wall0 <= f <= a <= s.wall1):
                bad_clock += 1
            rows[m].append({"e2e": s.seconds, "before": f - s.wall0, "program": a - f,
                            "after": s.wall1 - a,
                            "d": None if s.duration_ms is None else s.duration_ms / 1000})
    if bad_clock:
        note(f"where: {bad_clock} samples whose sandbox stamps fall outside the client's "
             "send..receive (clock skew): read that table with care")
    out = {}
    for m, rs in rows.items():
        if not rs:
            continue
        col = {k: statistics.median([x[k] for x in rs]) for k in ("e2e", "before", "program", "after")}
        if m != "bare":
            col["d"] = statistics.median([x["d"] for x in rs])
            col["outside"] = statistics.median([x["e2e"] - x["d"] for x in rs])
        if m == "warm":
            # D = (F - R) + (A - F) + (E - A), R the program-start record as
            # the worker reads it, E the end of the output. In a warm
            # sandbox F - R is the agent compiling a five-line file: counted
            # with the exit. (Cold, F - R is python's own start: no split.)
            col["exit"] = statistics.median([x["d"] - x["program"] for x in rs])
            col["answer"] = statistics.median([x["after"] - (x["d"] - x["program"]) for x in rs])
        col["n"] = len(rs)
        out[m] = col
    out["inspect"] = inspect_cost(bare)
    for m in ("warm", "cold"):
        gcs = [isobox(args, "python", GC_PROBE, m == "warm", None, "where") for _ in range(3)]
        gcs = [tuple(float(x) for x in g.stdout.split()) for g in gcs if g is not None]
        if gcs and m in out:
            out[m]["gc"] = statistics.median(g[0] for g in gcs)
            out[m]["objects"] = statistics.median(g[1] for g in gcs)
    return out


def inspect_cost(bare, n=5):
    """`docker inspect` of an exited container of ours: what the worker
    runs after every run (exit code, OOM flag). The container is removed."""
    name = f"warmbench-{os.getpid()}-inspect"
    d = bare.docker
    runtime = next(a for a in latency.hardening() if a.startswith("--runtime="))
    with bare.lock:
        bare.live.add(name)
    try:
        subprocess.run([d, "run", "--pull=never", f"--name={name}", runtime,
                        "--network=none", "--log-driver=none", "--entrypoint=",
                        bare.ids["python"], "true"], check=True, capture_output=True, timeout=120)
        times = []
        for _ in range(n):
            t0 = time.monotonic()
            subprocess.run([d, "inspect", "--format", "{{.State.ExitCode}} {{.State.OOMKilled}}", name],
                           check=True, capture_output=True)
            times.append(time.monotonic() - t0)
        return statistics.median(times)
    finally:
        subprocess.run([d, "rm", "--force", name], capture_output=True)
        with bare.lock:
            bare.live.discard(name)


# ---- the report ----

def report(args, res):
    lines = []
    rows = [res[k] for k in ("hello", "pandas", "javascript") if k in res]
    if rows:
        lines += ["| program (median, p90 in brackets) | bare `docker run` | isobox cold | isobox warm "
                  "| warm / bare | cold / bare | warm / cold |", "|---|---|---|---|---|---|---|"]
        for r in rows:
            cell = {m: f"{sec(r[m][0])} ({sec(r[m][1])})" for m in ("bare", "cold", "warm")}
            lines.append(f"| {r['label']} | {cell['bare']} | {cell['cold']} | {cell['warm']} "
                         f"| {ratio(r['warm'][0], r['bare'][0])} | {ratio(r['cold'][0], r['bare'][0])} "
                         f"| {ratio(r['warm'][0], r['cold'][0])} |")
        lines.append("")
    if "burst" in res:
        b = res["burst"]
        lines += [f"| {b['n']} python hellos at once, pool full (time to all done) | median | p90 |",
                  "|---|---|---|",
                  f"| isobox (warm pool) | {sec(b['isobox'])} | {sec(b['isobox_p90'])} |",
                  f"| bare `docker run` | {sec(b['bare'])} | {sec(b['bare_p90'])} |",
                  f"| isobox / bare | {ratio(b['isobox'], b['bare'])} | |", ""]
    if "sustained" in res:
        s = res["sustained"]
        lines += [f"| python hellos, concurrency {s['concurrency']}, ~{args.sustain_seconds:.0f} s each "
                  f"({s['rounds']} phases, each counted after {args.sustain_settle:.0f} s of load) "
                  "| runs | per second | latency median | p90 | warm | refills done meanwhile (mean boot) |",
                  "|---|---|---|---|---|---|---|"]
        for who, label in (("isobox", "isobox, warm pool on (default limits)"),
                           ("cold", "isobox, all cold (one process fewer)"),
                           ("bare", "bare `docker run`")):
            x = s[who]
            warm = "–" if who == "bare" else f"{x['warm']} of {x['runs']}"
            boots = "–" if who == "bare" else (
                f"{x['refills']:.0f}" + (f" ({x['refill_seconds'] / x['refills']:.1f} s each)"
                                         if x["refills"] else ""))
            lines.append(f"| {label} | {x['runs']} | {x['rate']:.2f} | {sec(x['median'])} "
                         f"| {sec(x['p90'])} | {warm} | {boots} |")
        for who, label in (("isobox", "warm pool on"), ("cold", "all cold")):
            r = s["round_ratios"][who]
            if r:
                lines.append(f"\nisobox ({label}) / bare, runs per second: {ratio(s[who]['rate'], s['bare']['rate'])}"
                             f" over all; per round, median {statistics.median(r):.2f}, "
                             f"from {r[0]:.2f} to {r[-1]:.2f}.")
        lines += ["", "| host CPU per run in those phases (CPU-seconds) | isobox, warm pool on "
                  "| isobox, all cold | bare `docker run` | cold − bare |", "|---|---|---|---|---|"]
        per = {who: {k: v / s[who]["runs"] if s[who]["runs"] else 0.0 for k, v in s[who]["cpu"].items()}
               for who in ("isobox", "cold", "bare")}
        for k in cpu.COMPONENTS + ["total"]:
            label = {"other": "other (kernel threads, interrupts)",
                     "total": "**total** (/proc/stat busy)"}.get(k, k)
            lines.append(f"| {label} | {per['isobox'][k]:.3f} | {per['cold'][k]:.3f} "
                         f"| {per['bare'][k]:.3f} | {per['cold'][k] - per['bare'][k]:+.3f} |")
        lines.append("")
    if "where" in res:
        w = res["where"]
        cols = [m for m in ("warm", "cold", "bare") if m in w]
        lines += ["| python hello: where the time goes (medians) | " + " | ".join(cols) + " |",
                  "|---|" + "---|" * len(cols)]

        def row(label, key, modes=("warm", "cold", "bare")):
            cells = [ms(w[m].get(key)) if m in modes else "–" for m in cols]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")

        row("end to end, as the client sees it", "e2e")
        row("request sent → program's first line (HTTP, take/boot, hand-over, interpreter)", "before")
        row("first line → its atexit hook (the program)", "program")
        row("atexit → answer received (exit, then what comes before the answer)", "after")
        row("server `durationMs` (program-start record → end of output)", "d", ("warm", "cold"))
        row("outside durationMs (end to end − durationMs)", "outside", ("warm", "cold"))
        row("warm: the agent's exit steps until its end marks (durationMs − program)",
            "exit", ("warm",))
        row("warm: after the end marks: JSON, Caddy (atexit → answer − that)",
            "answer", ("warm",))
        row("a `gc.collect()` timed inside the sandbox (the warm agent's exit runs one)", "gc",
            ("warm", "cold"))
        if any("objects" in w.get(m, {}) for m in cols):
            lines.append("| … objects it walks | " + " | ".join(
                f"{w[m]['objects']:,.0f}" if "objects" in w.get(m, {}) else "–" for m in cols) + " |")
        lines.append(f"\n`docker inspect` of an exited container, alone: {ms(w['inspect'])} (median of 5). "
                     "A cold run's durationMs starts at the entry script's record, before "
                     "`exec python3`: it holds the interpreter's start, so it is not split.")
        lines.append("")
    plat = open("/var/lib/isobox/platform").readline().strip()
    foot = (f"{args.runs} interleaved rounds" + (f" (burst: {args.burst_rounds})" if "burst" in res else "")
            + ", "
            f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, {platform.machine()}, "
            f'runsc platform {plat}. Samples whose "warm" flag was not as asked: {len(MISMATCH)}'
            + (f" ({'; '.join(MISMATCH[:5])})" if MISMATCH else "") + ".")
    if args.note:
        foot += " " + args.note
    lines.append(foot)
    for n in dict.fromkeys(NOTES):
        times = NOTES.count(n)
        lines.append(f"\nNote: {n}" + (f" ({times} times)" if times > 1 else ""))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:8090")
    ap.add_argument("--runs", type=int, default=7, help="interleaved rounds per comparison")
    ap.add_argument("--burst-rounds", type=int, default=5)
    ap.add_argument("--sustain-seconds", type=float, default=30)
    ap.add_argument("--sustain-max", type=int, default=300, help="at most this many runs per side")
    ap.add_argument("--sustain-rounds", type=int, default=4, help="phases per side, interleaved")
    ap.add_argument("--sustain-settle", type=float, default=20,
                    help="seconds of each phase's load before its count starts (the pool's head start spent)")
    ap.add_argument("--concurrency", type=int, default=4, help="sustained; at most 4")
    ap.add_argument("--pool-wait", type=float, default=600,
                    help="seconds to wait for the warm pool to be full before giving up on a sample")
    ap.add_argument("--only", default=",".join(SECTIONS), help="comma-separated: " + ",".join(SECTIONS))
    ap.add_argument("--strict", action="store_true", help="stop at a sample that is not warm/cold as asked")
    ap.add_argument("--note", help="a sentence added under the tables (e.g. what else ran)")
    ap.add_argument("--write", metavar="FILE")
    args = ap.parse_args()
    only = [s for s in args.only.split(",") if s]
    for s in only:
        if s not in SECTIONS:
            ap.error(f"--only: no section {s}")
    if os.geteuid() != 0:
        print("warning: not root; docker may refuse", file=sys.stderr)

    bare = Bare()
    res = {}
    try:
        # The bare run gets the limits isobox applies by default (a warm
        # sandbox's profile), from a result.
        for lang in ("python", "javascript"):
            code = latency.HELLO[lang][2]
            bare.limits[lang] = execute(args, lang, code).limits
        hello = latency.HELLO["python"][2]
        if "hello" in only:
            res["hello"] = compare(args, bare, "python", hello, "hello\n", "python hello world")
        if "pandas" in only:
            expect = bare.run("python", PANDAS).stdout
            res["pandas"] = compare(args, bare, "python", PANDAS, expect, "python: pandas DataFrame")
        if "burst" in only:
            try:
                res["burst"] = burst(args, bare)
            except PoolUnavailable as e:
                note(f"burst skipped: {e}")
        if "sustained" in only:
            res["sustained"] = sustained(args, bare)
        if "javascript" in only:
            res["javascript"] = compare(args, bare, "javascript", latency.HELLO["javascript"][2],
                                        "hello\n", "javascript hello world")
        if "where" in only:
            res["where"] = where(args, bare)
    finally:
        bare.cleanup()
    text = report(args, res)
    print()
    print(text)
    if args.write:
        write_section(args.write, "WARM", text)


if __name__ == "__main__":
    main()
