#!/usr/bin/env python3
"""Scale-out on this one machine (deploy/cluster.sh), measured through the
cluster's balancer:

  hosts     executions per second of python `print(1)` from 6 clients at
            once for --seconds, all sent to one host (X-Isobox-Host: h1),
            then spread over three (round-robin): the same CPUs either way,
            so this shows the cost of the cluster's parts, not the gain of
            more machines
  store     what one execution with an API key costs the store: Redis
            commands (INFO commandstats, before and after) per execution
  redis     redis-benchmark on the cluster's socket: SET, GET, INCR, EVAL
            of a script like the rate limiter's, XADD: operations per second
  queue     median latency of one execution run directly by a host and
            through the queue (two fronts, two runners)

    bench/cluster.py [--seconds S] [--write docs/SCALING.md]

Run as root after `make run` (the cluster is started and stopped here; the
main pool is left alone). Prints Markdown; with --write, replaces the text
between <!-- CLUSTER BENCH --> and <!-- /CLUSTER BENCH -->.
"""
import argparse
import concurrent.futures
import http.client
import json
import os
import platform
import re
import subprocess
import time

from report import median_ms, p90_ms, write_section

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PREFIX = os.environ.get("PREFIX", "/opt/isobox")
CLUSTER = os.path.join(REPO, "deploy", "cluster.sh")
FCGI = os.path.join(PREFIX, "bin", "isobox-fcgi")
CONF = os.path.join(PREFIX, "conf", "isobox.yaml")
SOCKET = "/run/isobox-cluster/redis/redis.sock"
PY = {"language": "python", "code": "print(1)"}


def cluster(*args, runners=0):
    env = dict(os.environ, PREFIX=PREFIX, CLUSTER_HOSTS="3" if not runners else "2",
               CLUSTER_RUNNERS=str(runners))
    out = subprocess.run(["bash", CLUSTER, *args], env=env, check=True, capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""


def execute(port, headers=None, key=None):
    h = {"Content-Type": "application/json"} | (headers or {})
    if key:
        h["Authorization"] = "Bearer " + key
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60,
                                      source_address=("127.0.0.2", 0) if key else None)
    t0 = time.monotonic()
    conn.request("POST", "/execute", body=json.dumps(PY), headers=h)
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    assert resp.status == 200, (resp.status, body[:300])
    return time.monotonic() - t0


def throughput(port, seconds, headers_for):
    """Executions per second from 6 clients for `seconds`."""
    deadline = time.monotonic() + seconds
    def client(i):
        n = 0
        while time.monotonic() < deadline:
            execute(port, headers_for(i * 1000 + n))
            n += 1
        return n
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(6) as ex:
        total = sum(ex.map(client, range(6)))
    return total / (time.monotonic() - t0)


def commandstats():
    out = subprocess.run(["redis-cli", "-s", SOCKET, "INFO", "commandstats"], capture_output=True,
                         text=True, check=True).stdout
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"cmdstat_(\w+):calls=(\d+)", out)}


def redis_benchmark():
    rate = ("local t = tonumber(redis.call('GET', KEYS[1]) or ARGV[1]); "
            "redis.call('SET', KEYS[1], t + 1, 'PX', 60000); return 0")
    runs = {
        "SET": ["-t", "set"], "GET": ["-t", "get"], "INCR": ["-t", "incr"],
        "EVAL (a rate-limit script)": ["EVAL", rate, "1", "bench:rate:__rand_int__", "1"],
        "XADD (a job's event)": ["XADD", "bench:stream", "MAXLEN", "~", "10000", "*", "t", "stdout", "d", "hello"],
    }
    out = {}
    for name, args in runs.items():
        res = subprocess.run(["redis-benchmark", "-s", SOCKET, "-n", "50000", "-c", "8", "-r", "1000", "-q"]
                             + args, capture_output=True, text=True, check=True).stdout
        m = re.search(r"([\d.]+) requests per second", res.replace("\r", "\n"))
        out[name] = float(m.group(1)) if m else 0.0
    subprocess.run(["redis-cli", "-s", SOCKET, "DEL", "bench:stream"], capture_output=True)
    subprocess.run(["redis-cli", "-s", SOCKET, "EVAL",
                    "for _, k in ipairs(redis.call('KEYS', 'bench:*')) do redis.call('DEL', k) end", "0"],
                   capture_output=True)
    return out


def new_key(tenant):
    return subprocess.run([FCGI, "--conf", CONF, "--new-key", tenant], check=True, capture_output=True,
                          text=True).stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--write")
    args = ap.parse_args()
    key = new_key("bench-cluster")
    rows = []
    try:
        port = int(cluster("start").rsplit(":", 1)[1])
        for h in ("h1", "h2", "h3"):  # each host's warm sandbox taken once
            execute(port, {"X-Isobox-Host": h})
        one = throughput(port, args.seconds, lambda i: {"X-Isobox-Host": "h1"})
        three = throughput(port, args.seconds, lambda i: {})
        # The hosts' upkeep calls Redis too (every 2 s each): count it over
        # an idle stretch as long as the executions take, and take it off.
        n = 20
        before = commandstats()
        t0 = time.monotonic()
        for _ in range(n):
            execute(port, key=key)
        busy_s = time.monotonic() - t0
        after = commandstats()
        time.sleep(busy_s)
        idle = commandstats()
        calls = {c: (after.get(c, 0) - before.get(c, 0)) - (idle.get(c, 0) - after.get(c, 0) - (c == "info"))
                 for c in after}
        calls = {c: v for c, v in calls.items() if v > 0 and c != "info"}
        trips = calls.pop("eval", 0) / n
        direct = [execute(port) for _ in range(15)]
        bench = redis_benchmark()
        cluster("stop")
        port = int(cluster("start", runners=2).rsplit(":", 1)[1])
        execute(port)
        queued = [execute(port) for _ in range(15)]
    finally:
        cluster("stop", runners=2)
        key_id = key[4:12]
        subprocess.run([FCGI, "--conf", CONF, "--revoke-key", key_id], capture_output=True)
    cores = os.cpu_count()
    rows.append(f"Measured {time.strftime('%Y-%m-%d')} on this host ({cores} cores, "
                f"{platform.machine()}, `bench/cluster.py --seconds {args.seconds:g}`): three isobox hosts "
                "of 2 workers each, Redis 7.0 on a unix socket (AOF, fsync always), Caddy balancing.")
    rows.append("")
    rows.append("| measure | result |")
    rows.append("|---|---|")
    rows.append(f"| executions/s, 6 clients, all to one host (2 workers) | {one:.1f} ({one / cores:.1f} per core) |")
    rows.append(f"| executions/s, 6 clients, round-robin over three hosts (6 workers) | {three:.1f} |")
    rows.append(f"| round trips to Redis per execution with an API key (scripts; the hosts' upkeep "
                f"taken off) | {trips:.1f} |")
    rows.append(f"| commands those scripts ran, per execution | "
                f"{', '.join(f'{c} {v / n:.1f}' for c, v in sorted(calls.items()))} |")
    for name, ops in bench.items():
        rows.append(f"| redis-benchmark {name}, 8 clients | {ops:,.0f}/s |")
    rows.append(f"| one execution, run by the host (median, p90) | {median_ms(direct):.0f} ms, {p90_ms(direct):.0f} ms |")
    rows.append(f"| one execution, through the queue (median, p90) | {median_ms(queued):.0f} ms, {p90_ms(queued):.0f} ms |")
    text = "\n".join(rows)
    print(text)
    if args.write:
        write_section(args.write, "CLUSTER", text)


if __name__ == "__main__":
    main()
