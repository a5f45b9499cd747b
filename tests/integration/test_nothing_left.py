"""Runs last (conftest.py's LAST): after everything the suite
did, including timeouts, OOM kills, floods and killed workers, nothing of
isobox's may be left on the host."""
import os
import subprocess

import pytest

from conftest import containers, healthy, wait_until, work_dirs

pytestmark = pytest.mark.alone("it looks for what is left on the whole host: sandbox processes, cgroups")  # shards.py


def leftover_cgroups():
    roots = ["/sys/fs/cgroup/isobox.slice"] if os.path.exists("/sys/fs/cgroup/cgroup.controllers") \
        else [f"/sys/fs/cgroup/{c}/isobox.slice" for c in ("memory", "pids", "cpu")]
    return [os.path.join(r, d) for r in roots if os.path.isdir(r)
            for d in os.listdir(r) if os.path.isdir(os.path.join(r, d))]


def sandbox_processes():
    out = subprocess.run(["pgrep", "-f", "runsc-sandbox|runsc-gofer"], capture_output=True, text=True)
    return out.stdout.split()


def docker_clients():
    """The clients that hold a sandbox's pipes: `docker run` where dockerd's
    API could not be reached, else the worker's binary again, `--attach
    SOCKET NAME DEADLINE` (sandbox/launch.h)."""
    out = subprocess.run(["pgrep", "-f", "docker run .*isobox.instance|^/proc/self/exe --attach "],
                         capture_output=True, text=True)
    return out.stdout.split()


def test_no_container_left():
    assert wait_until(lambda: containers() == [], 15), containers()


def test_no_work_dir_left():
    assert wait_until(lambda: work_dirs() == [], 5), work_dirs()


def test_no_sandbox_process_left():
    assert wait_until(lambda: sandbox_processes() == [], 10), sandbox_processes()
    assert docker_clients() == []


def test_no_cgroup_left():
    assert wait_until(lambda: leftover_cgroups() == [], 10), leftover_cgroups()


def test_no_session_left():
    """Every test ends the sessions it made: no record, no pipes, no
    detached docker client (test_no_sandbox_process_left)."""
    left = [d for d in os.listdir("/var/lib/isobox/sessions") if not d.endswith(".gone") and d != ".admit"]
    assert left == []


def test_service_still_answers():
    assert healthy()
