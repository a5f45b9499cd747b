"""Where the host's CPU goes during a benchmark phase, by component.

    a = cpu.snapshot(); ...phase...; b = cpu.snapshot()
    split = cpu.between(a, b)   # {"dockerd": seconds, ..., "total": seconds}

The host total is /proc/stat's busy time (everything but idle and iowait).
It is split by who spent it, from /proc/PID/stat of every process:

- a live process's own user+system time goes to its component (by name);
- a child that was born and reaped within the phase shows only in its
  parent's cutime+cstime, so a parent's growth there goes to the component
  its children belong to (the bench's and isobox's children are docker CLI
  processes; the children of PID 1, containerd-shim and runsc are runsc's;
  dockerd's are dockerd itself, re-executed for each container's netns);
- a process that was alive at the start and gone at the end has its whole
  life counted in its reaper's cutime: what it had spent before the phase is
  taken back from that same component.

What no process accounts for (kernel threads, interrupts, processes whose
reaper never waits) is "other". A boundary error of one process's CPU at
each end remains; over dozens of runs it is small.
"""
import os

HZ = os.sysconf("SC_CLK_TCK")

# Components, in the order the report lists them.
COMPONENTS = ["runsc and shims", "dockerd", "containerd", "docker CLI", "isobox", "caddy",
              "bench client", "other processes", "other"]


def own_component(comm, pid):
    """The component a process's own CPU belongs to."""
    if pid == os.getpid():
        return "bench client"
    if comm == "docker":
        return "docker CLI"
    if comm in ("dockerd", "containerd", "caddy"):
        return comm
    if comm.startswith("containerd-shim") or comm in ("exe", "runsc", "runsc-gofer", "runsc-sandbox"):
        return "runsc and shims"
    if comm.startswith("isobox"):
        return "isobox"
    return "other processes"


def children_component(comm, pid):
    """The component of the children a process reaps."""
    if pid == 1 or comm.startswith("containerd") or own_component(comm, pid) == "runsc and shims":
        return "runsc and shims"  # shims, runsc create/start/delete, the sandbox
    if pid == os.getpid() or comm.startswith("isobox"):
        return "docker CLI"  # bare `docker run`s; the workers' `docker run`s
    if comm == "dockerd":
        return "dockerd"  # it re-executes itself (set-ipv6) for each container's netns
    return "other processes"


def _read_stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            raw = f.read()
    except OSError:
        return None
    # comm is in brackets and may hold spaces or brackets itself.
    comm = raw[raw.index("(") + 1:raw.rindex(")")]
    rest = raw[raw.rindex(")") + 2:].split()
    # rest[0] is field 3 (state): utime is field 14, cstime field 17,
    # starttime field 22.
    ppid = int(rest[1])
    utime, stime, cutime, cstime = (int(x) for x in rest[11:15])
    start = int(rest[19])
    return comm, ppid, utime + stime, cutime + cstime, start


def _busy():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal (guest is in user)
    return sum(v[:3]) + sum(v[5:8])


def snapshot():
    procs = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        st = _read_stat(pid)
        if st:
            comm, ppid, own, kids, start = st
            procs[(pid, start)] = (comm, pid, ppid, own, kids)
    return {"busy": _busy(), "procs": procs}


def between(a, b):
    """CPU seconds by component from snapshot a to snapshot b, and "total"."""
    out = dict.fromkeys(COMPONENTS, 0)
    comm_of = {pid: comm for (pid, _), (comm, *_rest) in b["procs"].items()}
    comm_of.update({pid: comm for (pid, _), (comm, *_rest) in a["procs"].items() if pid not in comm_of})
    for key, (comm, pid, _ppid, own, kids) in b["procs"].items():
        own0, kids0 = 0, 0
        if key in a["procs"]:
            own0, kids0 = a["procs"][key][3], a["procs"][key][4]
        out[own_component(comm, pid)] += own - own0
        out[children_component(comm, pid)] += kids - kids0
    for key, (comm, pid, ppid, own, kids) in a["procs"].items():
        if key in b["procs"]:
            continue
        # Its whole life lands in its reaper's cutime: take back what
        # was spent before the phase. Its reaper is its parent if that
        # still lives, else PID 1.
        reaper = ppid if ppid in comm_of else 1
        out[children_component(comm_of.get(reaper, ""), reaper)] -= own + kids
    total = b["busy"] - a["busy"]
    out["other"] = total - sum(out[c] for c in COMPONENTS if c != "other")
    out = {k: v / HZ for k, v in out.items()}
    out["total"] = total / HZ
    return out
