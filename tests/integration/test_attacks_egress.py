"""Attacks on what a run can reach beyond its own memory and namespaces:
host kernel socket memory (egress runs use the host's network stack),
user namespaces (which would give back raw sockets, AF_PACKET and TUN),
docker's embedded DNS server inside an egress run's network namespace,
and the host's resolvers. Each asserts the specific safe outcome, measured
from the host where the promise is about the host.

These run with the installed conf as `make run` leaves it (network.enabled,
the firewall and the runsc-egress wrapper installed by deploy/egress.sh).
"""
import json
import os
import re
import socket
import subprocess
import threading
import tempfile
import time
import uuid

import pytest

from conftest import INSTANCE, SUITE, containers, execute, healthy, request, run_ok, wait_until

attack = pytest.mark.attack
MIB = 1 << 20


def sh(*argv, check=True):
    return subprocess.run(argv, check=check, capture_output=True, text=True)


def egress_available():
    net = request("GET", "/runtimes")[2]["network"]
    assert net["available"], f"egress is not available, these attacks would prove nothing: {net}"
    return net


def cgroup_v2():
    return os.path.exists("/sys/fs/cgroup/cgroup.controllers")


def job_container(marker, timeout=25):
    """The id of this instance's container whose code dir holds a file named
    `marker`, and that code dir on the host; waits for it to exist."""
    found = {}

    def look():
        for cid in containers():
            out = sh("docker", "inspect", "-f", "{{json .Mounts}}", cid, check=False).stdout
            for m in json.loads(out.strip() or "[]"):  # "": removed meanwhile
                if m.get("Type") == "bind" and os.path.exists(os.path.join(m["Source"], marker)):
                    found.update(id=cid, src=m["Source"])
                    return True
        return False

    assert wait_until(look, timeout, step=0.1), f"no running container has {marker}"
    return found["id"], found["src"]


def sandbox_pid(cid):
    """The runsc sandbox process of a container (docker's State.Pid)."""
    pid = int(sh("docker", "inspect", "-f", "{{.State.Pid}}", cid).stdout)
    assert pid > 0, cid
    return pid


def in_background(body):
    """Run execute(body) in a thread; returns (thread, result dict)."""
    result = {}
    t = threading.Thread(target=lambda: result.update(r=execute(body, timeout=120)))
    t.start()
    return t, result


# --- socket memory (issue 10, item 2) ----------------------------------------

FILL = {
    # 40 loopback TCP pairs with 4 MiB buffers, written and never read: the
    # attack that pinned 427 MiB of host TCP memory in a 32 MiB run.
    "tcp": r'''
import socket, time
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(64)
pairs, total = [], 0
for i in range(40):
    c = socket.socket(); c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    c.connect(srv.getsockname())
    s, _ = srv.accept(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    c.setblocking(False)
    while True:
        try:
            total += c.send(b"x" * 65536)
        except BlockingIOError:
            break
    pairs.append((c, s))
print(total, flush=True)
time.sleep(4)
''',
    # 40 UDP sockets with 4 MiB receive buffers, flooded over loopback.
    "udp": r'''
import socket, time
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); tx.setblocking(False)
rx, total = [], 0
for i in range(40):
    r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    r.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    r.bind(("127.0.0.1", 0)); rx.append(r)
    for _ in range(200):
        try:
            total += tx.sendto(b"x" * 60000, r.getsockname())
        except OSError:
            time.sleep(0.001)
print(total, flush=True)
time.sleep(4)
''',
}


def sockstat_pages(proto):
    """Host-wide socket memory of a protocol, in pages (/proc/net/sockstat)."""
    with open("/proc/net/sockstat") as f:
        for line in f:
            if line.startswith(proto.upper() + ":"):
                fields = line.split()
                return int(fields[fields.index("mem") + 1])
    raise AssertionError(f"no {proto} line in /proc/net/sockstat")


def socket_charge(cid):
    """A function giving (limit, max usage) of the container's socket memory
    in bytes: cgroup v1 memory.kmem.tcp.* (TCP and UDP both count there);
    v2: memory.max and the sock line of memory.stat (sampled peak)."""
    path = [l.split(":", 2)[2].strip() for l in open(f"/proc/{sandbox_pid(cid)}/cgroup")
            if re.match(r"^\d+:(([^:]*,)?memory(,[^:]*)?)?:", l)][0]
    if cgroup_v2():
        base = "/sys/fs/cgroup" + path
        return lambda: (int(open(base + "/memory.max").read()),
                        int(dict(l.split() for l in open(base + "/memory.stat"))["sock"]))
    base = "/sys/fs/cgroup/memory" + path
    return lambda: (int(open(base + "/memory.kmem.tcp.limit_in_bytes").read()),
                    int(open(base + "/memory.kmem.tcp.max_usage_in_bytes").read()))


@attack("egress: 40 loopback TCP pairs / 40 flooded UDP sockets with 4 MiB buffers, never read, in a 32 MiB run",
        "host socket memory grows by at most the run's limit (32 MiB) + slack, charged to the run's own cgroup")
@pytest.mark.parametrize("proto", ["tcp", "udp"])
def test_socket_buffers_are_charged_and_bounded(proto):
    egress_available()
    marker = f"marker-{uuid.uuid4().hex}.txt"
    limit = 32 * MIB
    base = sockstat_pages(proto)
    t, result = in_background({"language": "python", "network": True,
                               "files": [{"name": "main.py", "content": FILL[proto]},
                                         {"name": marker, "content": ""}],
                               "limits": {"memoryBytes": limit, "wallTimeMs": 15000}})
    peak = base
    charge = (0, 0)
    try:
        cid, _ = job_container(marker)
        read_charge = socket_charge(cid)
        while t.is_alive():
            peak = max(peak, sockstat_pages(proto))
            try:
                charge = max(charge, read_charge(), key=lambda c: c[1])
            except (OSError, ValueError):
                pass  # the container is going away
            time.sleep(0.1)
    finally:
        t.join(60)
    status, body = result["r"]
    assert status == 200, body
    written = int(body["run"]["stdout"] or 0)
    grown = (peak - base) * os.sysconf("SC_PAGE_SIZE")
    print(f"{proto}: the run wrote {written / MIB:.0f} MiB; host {proto} memory grew "
          f"{grown / MIB:.1f} MiB; charged to the run: {charge[1] / MIB:.1f} MiB of {charge[0] / MIB:.0f} MiB")
    # The run's own cgroup carries the limit and was charged with the buffers.
    assert charge[0] == limit, charge
    assert charge[1] >= limit // 2, charge
    # The host: bounded by the limit (unbounded, this attack pinned 427 MiB).
    assert grown <= limit + 16 * MIB, f"host {proto} socket memory grew by {grown / MIB:.0f} MiB"
    assert healthy()


# --- user namespaces (issue 10, item 3) --------------------------------------

USERNS = r'''
import ctypes, errno, os, socket, struct, threading
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER, CLONE_NEWNET, SIGCHLD = 0x10000000, 0x40000000, 17
out = {}

def result(r):
    return "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))

def child_call(name, f):
    """Run f in a forked child (a namespace it enters must not stay with us)."""
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(wr, f().encode())
        os._exit(0)
    os.close(wr)
    out[name] = os.read(rd, 100).decode()
    os.waitpid(pid, 0)

def sock(family, kind, proto=0):
    try:
        socket.socket(family, kind, proto).close()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))

def userns_then_raw():
    r = libc.unshare(CLONE_NEWUSER)
    if r < 0:
        return "unshare " + result(r)
    return "raw " + sock(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)

def clone_flags(flags):
    r = libc.syscall(56, flags | SIGCHLD, 0, 0, 0, 0)  # clone(2), fork-like
    if r == 0:
        os._exit(0)
    if r > 0:
        os.waitpid(r, 0)
    return result(r)

def clone3_userns():
    args = struct.pack("QQQQQQQQQQQ", CLONE_NEWUSER, 0, 0, 0, SIGCHLD, 0, 0, 0, 0, 0, 0)
    buf = ctypes.create_string_buffer(args, len(args))
    r = libc.syscall(435, buf, len(args))
    if r == 0:
        os._exit(0)
    if r > 0:
        os.waitpid(r, 0)
    return result(r)

def clone3_traced(options):
    """clone3(CLONE_NEWUSER) in a child that we trace with options: a
    tracer asking for seccomp events (PTRACE_O_TRACESECCOMP) would be asked
    about a clone3 that the profile traces, and could let it through."""
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    pid = os.fork()
    if pid == 0:
        if libc.ptrace(0, 0, None, None) != 0:  # PTRACE_TRACEME
            os._exit(99)
        os.kill(os.getpid(), 19)  # SIGSTOP: the tracer sets its options
        args = ctypes.create_string_buffer(struct.pack("8Q", CLONE_NEWUSER, 0, 0, 0, SIGCHLD, 0, 0, 0), 64)
        r = libc.syscall(435, args, 64)
        if r == 0:
            os._exit(0)
        os._exit(100 if r > 0 else ctypes.get_errno())
    _, st = os.waitpid(pid, 0)
    if os.WIFEXITED(st):  # PTRACE_TRACEME refused: nothing to trace with
        return "no ptrace", "not tried"
    r = libc.ptrace(0x4200, pid, None, ctypes.c_void_p(options | 0x100000))  # SETOPTIONS, EXITKILL
    setopts = result(r)
    while True:
        libc.ptrace(7, pid, None, None)  # PTRACE_CONT
        _, st = os.waitpid(pid, 0)
        if os.WIFEXITED(st):
            code = os.WEXITSTATUS(st)
            return setopts, "ok" if code == 100 else errno.errorcode.get(code, str(code))

out["setoptions(TRACESECCOMP)"], out["clone3(CLONE_NEWUSER) traced for seccomp"] = clone3_traced(0x80)
out["setoptions(TRACECLONE)"], out["clone3(CLONE_NEWUSER) traced"] = clone3_traced(0x8)
child_call("unshare(CLONE_NEWUSER)", lambda: result(libc.unshare(CLONE_NEWUSER)))
child_call("unshare(CLONE_NEWUSER|CLONE_NEWNET)", lambda: result(libc.unshare(CLONE_NEWUSER | CLONE_NEWNET)))
child_call("unshare then raw socket", userns_then_raw)
out["clone(CLONE_NEWUSER)"] = clone_flags(CLONE_NEWUSER)
out["clone3(CLONE_NEWUSER)"] = clone3_userns()
fd = os.open("/proc/self/ns/net", os.O_RDONLY)
out["setns(net)"] = result(libc.setns(fd, 0))
out["raw socket"] = sock(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
out["packet socket"] = sock(17, socket.SOCK_RAW)
try:  # opening is allowed; making an interface (TUNSETIFF) needs CAP_NET_ADMIN
    import fcntl
    tun = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(tun, 0x400454CA, struct.pack("16sH", b"isobox0", 0x0001 | 0x1000))
    out["TUN interface"] = "ok"
except OSError as e:
    out["TUN interface"] = errno.errorcode.get(e.errno, str(e.errno))
box = []
t = threading.Thread(target=lambda: box.append("ok")); t.start(); t.join()
out["thread"] = box[0] if box else "failed"
out["fork"] = clone_flags(0)
print(__import__("json").dumps(out))
'''


@attack("unshare/clone/clone3 with CLONE_NEWUSER (clone3 also under a tracer asking for seccomp events), setns, "
        "then raw/packet sockets and a TUN interface",
        "EPERM from the seccomp profile (clone3: ENOSYS, traced or not; a tracer cannot ask for seccomp events); "
        "raw, packet, TUN refused; threads, fork and plain ptrace work")
@pytest.mark.parametrize("network", [False, True])
def test_no_user_namespaces(network):
    if network:
        egress_available()
    run = run_ok(USERNS, network=network)
    assert run["stdout"].startswith("{"), run
    out = json.loads(run["stdout"])
    for call in ("unshare(CLONE_NEWUSER)", "unshare(CLONE_NEWUSER|CLONE_NEWNET)", "clone(CLONE_NEWUSER)",
                 "setns(net)"):
        assert out[call] == "EPERM", (call, out)
    assert out["unshare then raw socket"] == "unshare EPERM", out
    # ENOSYS exactly: glibc falls back from clone3 to clone on ENOSYS only
    # (threads below), and the clone rule judges that. The runsc of 2024
    # implements clone3, so the profile traces it (deploy/seccomp.json):
    # with no tracer asking for seccomp events that is ENOSYS, and no
    # tracer may ask (gVisor); runc's profile answers ENOSYS outright.
    assert out["clone3(CLONE_NEWUSER)"] == "ENOSYS", out
    if SUITE["backend"] == "runc":  # its profile may refuse ptrace altogether
        assert out["clone3(CLONE_NEWUSER) traced for seccomp"] in ("ENOSYS", "not tried"), out
    else:
        assert out["setoptions(TRACESECCOMP)"] == "EPERM", out
        assert out["clone3(CLONE_NEWUSER) traced for seccomp"] == "ENOSYS", out
        assert out["setoptions(TRACECLONE)"] == "ok" and out["clone3(CLONE_NEWUSER) traced"] == "ENOSYS", out
    for what in ("raw socket", "packet socket", "TUN interface"):
        assert out[what] != "ok", (what, out)
    assert out["thread"] == "ok" and out["fork"] == "ok", out


# --- docker's embedded DNS (issue 10, item 7) --------------------------------

DNS_PROBE = r'''
import json, os, socket, struct, sys, time

def ptr_query(ip):
    q = struct.pack("!HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
    for label in (".".join(reversed(ip.split("."))) + ".in-addr.arpa").split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack("!HH", 12, 1)

deadline = time.time() + 15
while not os.path.exists("/src/ports.json") and time.time() < deadline:
    time.sleep(0.05)
want = json.load(open("/src/ports.json"))
out = {"tcp": {}, "udp": {}, "tcp_answer": {}}
q = ptr_query(want["ptr"])
for port in want["tcp"]:
    s = socket.socket(); s.settimeout(3)
    try:
        s.connect(("127.0.0.11", port))
        s.sendall(struct.pack("!H", len(q)) + q)
        out["tcp"][port] = "connected"
        out["tcp_answer"][port] = s.recv(512).hex()
    except OSError as e:
        out["tcp"][port] = type(e).__name__
for port in want["udp"]:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(2)
    try:
        u.sendto(q, ("127.0.0.11", port))
        out["udp"][port] = "answer " + u.recv(512).hex()
    except OSError as e:
        out["udp"][port] = type(e).__name__
# The sandbox's own loopback still works.
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
c = socket.create_connection(srv.getsockname(), timeout=3)
a, _ = srv.accept(); c.sendall(b"own")
out["own loopback"] = a.recv(3).decode()
out["hostname"] = socket.gethostname()
print(json.dumps(out))
'''


@attack("egress: docker's embedded DNS (127.0.0.11:53 and its DNATed ports, TCP and UDP): PTR of a concurrent sandbox",
        "nothing connects or answers (the listeners exist: checked from the host); the sandbox's own 127.0.0.1 works; "
        "names carry no host pid (isobox-<instance>-<16 random hex>, hostname isobox)")
def test_embedded_dns_unreachable():
    egress_available()
    a_marker, b_marker = f"a-{uuid.uuid4().hex}.txt", f"b-{uuid.uuid4().hex}.txt"
    ta, ra = in_background({"language": "python", "network": True, "limits": {"wallTimeMs": 20000},
                            "files": [{"name": "main.py", "content": "import time\ntime.sleep(14)\n"},
                                      {"name": a_marker, "content": ""}]})
    tb = rb = None
    try:
        a_id, _ = job_container(a_marker)
        a_ip = sh("docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
                  a_id).stdout.strip()
        a_name = sh("docker", "inspect", "-f", "{{.Name}}", a_id).stdout.strip().lstrip("/")
        assert a_ip and a_name, (a_ip, a_name)
        # What a name could reveal, if anything ever resolved one: nothing
        # of the host (the owner's pid is in a label the sandbox cannot read).
        assert re.fullmatch(rf"isobox-{INSTANCE}-[0-9a-f]{{16}}", a_name), a_name
        tb, rb = in_background({"language": "python", "network": True, "limits": {"wallTimeMs": 20000},
                                "files": [{"name": "main.py", "content": DNS_PROBE},
                                          {"name": b_marker, "content": ""}]})
        b_id, b_src = job_container(b_marker)
        netns = f"--net=/proc/{sandbox_pid(b_id)}/ns/net"
        # From the host, in B's network namespace: docker's DNS is there.
        nat = sh("nsenter", netns, "iptables-save", "-t", "nat").stdout
        dnat = {proto: sorted({int(p) for p in re.findall(
            rf"-p {proto} .*--dport 53 -j DNAT --to-destination 127\.0\.0\.11:(\d+)", nat)})
            for proto in ("tcp", "udp")}
        listeners = sh("nsenter", netns, "ss", "-H", "-lntup").stdout
        for proto in ("tcp", "udp"):
            assert dnat[proto], f"no DNAT for {proto} 53 in the egress netns:\n{nat}"
            assert f"127.0.0.11:{dnat[proto][0]} " in listeners and "dockerd" in listeners, listeners
        ports = {"tcp": [53] + dnat["tcp"], "udp": [53] + dnat["udp"], "ptr": a_ip}
        # Written beside the code dir and renamed in, so the sandbox's copy of
        # /src never lists a file that is gone when it comes to copy it.
        fd, tmp = tempfile.mkstemp(prefix="test-ports-", dir=os.path.dirname(b_src))
        with os.fdopen(fd, "w") as f:
            json.dump(ports, f)
        os.chmod(tmp, 0o644)
        os.rename(tmp, os.path.join(b_src, "ports.json"))
        tb.join(60)
    finally:
        if tb:
            tb.join(60)
        ta.join(60)
    status, body = rb["r"]
    assert status == 200, body
    out = json.loads(body["run"]["stdout"])
    print("embedded DNS from an egress run:", out, "ports:", ports)
    assert set(out["tcp"]) == {str(p) for p in ports["tcp"]}, out
    assert all(v == "ConnectionRefusedError" for v in out["tcp"].values()), out
    assert all(v in ("PermissionError", "TimeoutError") for v in out["udp"].values()), out
    assert not out["tcp_answer"] and a_name not in body["run"]["stdout"], out
    assert out["own loopback"] == "own", out
    assert out["hostname"] == "isobox", out
    assert ra["r"][0] == 200, ra["r"]


# --- the host's resolvers (issue 10, item 9) ---------------------------------

@attack("read /etc/resolv.conf in a run without network", "names no resolver, none of the host's; read-only")
def test_no_network_run_sees_no_resolver():
    host = open("/etc/resolv.conf").read()
    host_servers = re.findall(r"^\s*nameserver\s+(\S+)", host, re.M)
    assert host_servers, "the host names no resolver: this test would prove nothing"
    run = run_ok("import errno\n"
                 "print(open('/etc/resolv.conf').read())\n"
                 "try:\n"
                 "    open('/etc/resolv.conf', 'a')\n"
                 "except OSError as e:\n"
                 "    print('write', errno.errorcode[e.errno])\n")
    text = run["stdout"]
    assert "nameserver" not in text, text
    for server in host_servers:
        assert server not in text, (server, text)
    assert text.rstrip().endswith(("write EROFS", "write EACCES")), text


# What docker writes as /etc/hosts for a container of network "none"; a run
# without network has dockerd set up no network at all, and gets this from
# sandbox.hostsFile (deploy/setup.sh writes it).
NO_NETWORK_HOSTS = ("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\n"
                    "ff00::0\tip6-mcastprefix\nff02::1\tip6-allnodes\nff02::2\tip6-allrouters\n")


def no_network_probe():
    """A python program that lists the interfaces, talks to itself on
    loopback, reads and writes /etc/hosts, resolves localhost and the
    host's own name; its JSON for assert_no_network."""
    return ("import errno, json, socket\n"
            "out = {'ifaces': [name for _, name in socket.if_nameindex()], 'hosts': open('/etc/hosts').read()}\n"
            "s = socket.socket()\n"
            "s.bind(('localhost', 0))\n"
            "s.listen()\n"
            "c = socket.create_connection(s.getsockname(), timeout=5)\n"
            "c.sendall(b'x')\n"
            "out['loopback'] = s.accept()[0].recv(1).decode()\n"
            f"for name in ('localhost', {socket.gethostname()!r}):\n"
            "    try:\n"
            "        out[name] = socket.gethostbyname(name)\n"
            "    except OSError as e:\n"
            "        out[name] = type(e).__name__\n"
            "try:\n"
            "    open('/etc/hosts', 'a')\n"
            "except OSError as e:\n"
            "    out['write'] = errno.errorcode[e.errno]\n"
            "print(json.dumps(out))\n")


def assert_no_network(stdout):
    out, host_name = json.loads(stdout), socket.gethostname()
    assert out["ifaces"] == ["lo"] and out["loopback"] == "x", out
    assert out["hosts"] == NO_NETWORK_HOSTS and out["localhost"] == "127.0.0.1", out
    assert host_name == "localhost" or out[host_name] == "gaierror", out
    assert out.get("write") in ("EROFS", "EACCES"), out


@attack("list a run without network's interfaces, read and write its /etc/hosts, resolve the host's own name",
        "loopback only, and it works; /etc/hosts names localhost alone, read-only; the host's name does not resolve")
def test_no_network_run_has_loopback_and_localhost_only():
    assert_no_network(run_ok(no_network_probe())["stdout"])
