#!/usr/bin/env python3
"""What dockerd's network set-up costs a sandbox without network: the same
container (bash's pinned image, `true`) made through dockerd's API with
network "none", as the docker CLI makes it, and with NetworkDisabled, as
isobox does (sandbox/spec_render.c), in interleaved rounds; create, start,
wait and delete each time. Prints, per runtime, the host's busy CPU and the
wall time per container (medians over rounds) and the ratio of the two ways
(docs/PERFORMANCE.md, "No network set up for runs without network").

    bench/network_disabled.py [--rounds R] [--per N]

Run as root on a host where `make run` was done (the images lock and
runtimes are setup's). Containers are named netbench-<pid>-<n>.
"""
import argparse
import http.client
import json
import os
import socket
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import latency  # noqa: E402


class DockerSocket(http.client.HTTPConnection):
    def __init__(self):
        super().__init__("docker")

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect("/var/run/docker.sock")


def call(method, path, body=None):
    c = DockerSocket()
    c.request(method, path, json.dumps(body) if body is not None else None,
              {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def busy_seconds():
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq = map(int, f.readline().split()[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


COUNT = [0]


def one(image, runtime, disabled):
    COUNT[0] += 1
    name = f"netbench-{os.getpid()}-{COUNT[0]}"
    body = {"Image": image, "Cmd": ["true"], "NetworkDisabled": disabled,
            "HostConfig": {"Runtime": runtime, "NetworkMode": "none", "ReadonlyRootfs": True}}
    status, data = call("POST", f"/containers/create?name={name}", body)
    assert status == 201, data
    try:
        assert call("POST", f"/containers/{name}/start")[0] == 204
        status, data = call("POST", f"/containers/{name}/wait")
        assert status == 200 and json.loads(data)["StatusCode"] == 0, data
    finally:
        call("DELETE", f"/containers/{name}?force=1")


def phase(image, runtime, disabled, per):
    """CPU-s and seconds per container over per containers in turn."""
    cpu, start = busy_seconds(), time.monotonic()
    for _ in range(per):
        one(image, runtime, disabled)
    return (busy_seconds() - cpu) / per, (time.monotonic() - start) / per


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--per", type=int, default=10, help="containers per phase")
    args = p.parse_args()
    image = latency.image_ids()["bash"]
    for runtime in ("runsc-untrusted", "runc"):
        got = {False: [], True: []}
        one(image, runtime, False)  # the image's layers warm
        for _ in range(args.rounds):
            for disabled in (False, True):
                got[disabled].append(phase(image, runtime, disabled, args.per))
        (none_cpu, none_s), (off_cpu, off_s) = [
            (statistics.median(c for c, _ in got[d]), statistics.median(s for _, s in got[d]))
            for d in (False, True)]
        print(f"{runtime}: network none {none_cpu:.3f} CPU-s {none_s:.3f} s; "
              f"NetworkDisabled {off_cpu:.3f} CPU-s {off_s:.3f} s; "
              f"ratio {off_cpu / none_cpu:.2f}x CPU, {off_s / none_s:.2f}x time")


if __name__ == "__main__":
    main()
