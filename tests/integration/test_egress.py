"""Opt-in egress ("network": true): the firewall verified, not asserted.

Every address probed here belongs to a test host that this module makes in
a network namespace on this machine, with a listener on the probed port, so
that no packet leaves the host even if a rule were wrong, and a failed
connect proves the firewall, not an empty port. Each block is shown to be
the firewall's doing twice: the sandbox's connect fails with EHOSTUNREACH
(the firewall's icmp-admin-prohibited; an empty port would say ECONNREFUSED)
and the same connect from the host side succeeds.

"The public internet" is TEST-NET-2, 198.51.100.0/24, which the default
deny list closes like every range that is not globally reachable: the
module takes exactly that range off it with network.allow in the installed
conf, points the resolvers at a test DNS server in it, reinstalls the
firewall (deploy/egress.sh), restarts the pool, and puts everything back
after. Test links have private addresses (10.250.0.0/16) and /32 routes.
203.0.113.0/24 is never used: on our build machines the package mirror
answers there.
"""
import errno
import os
import re
import shutil
import socket
import subprocess
import threading

import pytest

from conftest import LOG_DIR, POOL, PREFIX, execute, reload_pool, request, run_ok, wait_until
from metrics_util import restart_pool

pytestmark = pytest.mark.alone("it reinstalls the egress firewall that every pool's networked runs go through")  # shards.py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CONF = os.path.join(PREFIX, "conf", "isobox.yaml")
EGRESS = ["bash", os.path.join(REPO, "deploy", "egress.sh")]
ENV = dict(os.environ, PREFIX=PREFIX)

ALLOWED = "198.51.100.0/24"    # network.allow in this module's conf
PUBLIC = "198.51.100.10"       # the "public internet" host
PUBLIC6 = "2001:db8:100::10"
DNS = "198.51.100.53"
SMTP_PROBE = "198.51.100.25"   # deploy/egress.sh check's SMTP probe
HOST_ALLOWED = "198.51.100.1"  # one of the host's own addresses, inside network.allow
BLOCKED = ["169.254.169.254", "10.0.0.1", "172.16.0.1", "192.168.0.1", "100.64.0.1"]
# One address in each other range that is not globally reachable (IANA
# special-purpose registry) and can be a host here; never 203.0.113.0/24.
SPECIAL = ["192.0.0.10", "192.0.2.10", "192.88.99.10", "198.18.0.10", "240.0.0.10"]
LINK_PUB = ("10.250.0.1", "10.250.0.2")    # host side, netns side
LINK_PRIV = ("10.250.1.1", "10.250.1.2")
HOST_PORT = 18099
attack = pytest.mark.attack
NAMES = {"public.isobox.test": PUBLIC, "meta.isobox.test": "169.254.169.254",
         "private.isobox.test": "10.0.0.1"}
EHOSTUNREACH = errno.EHOSTUNREACH


def sh(*argv, check=True):
    return subprocess.run(argv, check=check, capture_output=True, text=True)


def gateway():
    out = sh(PREFIX + "/bin/isobox-fcgi", "--conf", CONF, "--egress", "plan").stdout
    return re.search(r"^gateway=(\S+)$", out, re.M).group(1)


def uplink_address():
    """The host's own address on its main interface (not one we made)."""
    out = sh("ip", "-4", "-o", "addr", "show", "scope", "global").stdout
    for line in out.splitlines():
        dev, addr = line.split()[1], line.split()[3].split("/")[0]
        if not dev.startswith(("isob-", "docker", "isobox", "br-", "veth")):
            return addr
    pytest.fail("no uplink address found:\n" + out)


def start_server(netns, *args):
    """Start netns_server.py (in netns, or on the host if None); wait for it."""
    argv = ["/usr/bin/python3", os.path.join(HERE, "netns_server.py"), *args]
    if netns:
        argv = ["ip", "netns", "exec", netns] + argv
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.strip() == "ready", f"{argv}: {line!r}"
    return p


def remove_hosts():
    for ns in ("isob-pub", "isob-priv"):
        sh("ip", "netns", "del", ns, check=False)   # takes its veth pair along


def link(ns, addrs):
    """A netns with a veth link to the host (private /32s at both ends) and
    a /32 route on the host for each of its addresses."""
    host_if, ns_if = ns + "-h", ns + "-n"
    sh("ip", "netns", "add", ns)
    sh("ip", "link", "add", host_if, "type", "veth", "peer", "name", ns_if)
    sh("ip", "link", "set", ns_if, "netns", ns)
    sh("ip", "link", "set", host_if, "up")
    sh("ip", "-n", ns, "link", "set", "lo", "up")
    sh("ip", "-n", ns, "link", "set", ns_if, "up")
    for a in addrs:
        sh("ip", "-n", ns, "addr", "add", a + "/32", "dev", ns_if)
        sh("ip", "route", "add", a + "/32", "dev", host_if)
    sh("ip", "-n", ns, "route", "add", "default", "dev", ns_if)


def make_hosts():
    remove_hosts()
    # The public host: in 198.51.100.0/24 (TEST-NET-2), and a v6 address.
    link("isob-pub", [LINK_PUB[1], PUBLIC, DNS, SMTP_PROBE])
    sh("ip", "addr", "add", LINK_PUB[0] + "/32", "dev", "isob-pub-h")
    sh("ip", "-n", "isob-pub", "addr", "add", PUBLIC6 + "/64", "dev", "isob-pub-n", "nodad")
    sh("ip", "addr", "add", "2001:db8:100::1/64", "dev", "isob-pub-h", "nodad")
    # The private host: one address in each range that must stay closed.
    link("isob-priv", [LINK_PRIV[1]] + BLOCKED + SPECIAL)
    sh("ip", "addr", "add", LINK_PRIV[0] + "/32", "dev", "isob-priv-h")


def egress_install():
    r = subprocess.run(EGRESS + ["install"], env=ENV, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def network_state():
    return request("GET", "/runtimes")[2]["network"]


def set_conf(text):
    with open(CONF, "w") as f:
        f.write(text)


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    saved = tmp_path_factory.mktemp("egress") / "isobox.yaml"
    shutil.copy2(CONF, saved)
    servers = []
    state = {}
    try:
        make_hosts()
        # A host address inside the range that network.allow will open.
        sh("ip", "addr", "add", HOST_ALLOWED + "/32", "dev", "isob-pub-h")
        text = open(CONF).read()
        assert "\n  dns: []\n" in text and "\n  allow: []\n" in text
        set_conf(text.replace("\n  dns: []\n", f"\n  dns: [{DNS}]\n")
                 .replace("\n  allow: []\n", f"\n  allow: [{ALLOWED}]\n"))
        reload_pool()
        # The settings changed: egress must refuse until reinstalled.
        state["before_install"] = execute({"language": "python", "code": "print(1)",
                                           "network": True})
        r = subprocess.run(EGRESS + ["install"], env=ENV, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        state["install_log"] = r.stderr
        restart_pool(POOL)   # the pool logs network.allow at start
        assert wait_until(lambda: network_state()["available"], 10), network_state()
        gw, up = gateway(), uplink_address()
        dns_args = [a for name, ip in NAMES.items() for a in ("--dns", f"{name}={ip}")]
        # One socket per address: a UDP answer must come from the address asked.
        servers.append(start_server("isob-pub", "--addr", PUBLIC, "--addr", DNS, "--addr", SMTP_PROBE,
                                    "--tcp", "25", "--tcp", "465", "--tcp", "587", "--http", "80",
                                    *dns_args))
        servers.append(start_server("isob-pub", "--addr", PUBLIC6, "--http", "80"))
        servers.append(start_server("isob-priv", "--http", "80"))
        servers.append(start_server(None, "--addr", gw, "--addr", up, "--addr", HOST_ALLOWED,
                                    "--tcp", "53", "--tcp", str(HOST_PORT)))
        state.update(gateway=gw, uplink=up)
        yield state
    finally:
        for p in servers:
            p.kill()
            p.wait()
        remove_hosts()
        shutil.copy2(saved, CONF)
        egress_install()
        restart_pool(POOL)
        assert wait_until(lambda: network_state()["available"], 10), network_state()


PROBE = r'''
import socket, sys
family = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(family)
s.settimeout(5)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    if sys.argv[2] == "80":
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
    print("connected", s.recv(64).decode(errors="replace").split("\n")[0])
except socket.timeout:
    print("error timeout")
except OSError as e:
    print("error", e.errno)
'''


def sandbox_connect(addr, port, network=True):
    """Connect from inside an egress sandbox; ("connected", first line) or ("error", errno)."""
    run = run_ok(PROBE, args=[addr, str(port)], network=network)
    kind, _, rest = run["stdout"].strip().partition(" ")
    return kind, (int(rest) if rest.isdigit() else rest)


def host_connect(addr, port):
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    with socket.socket(family) as s:
        s.settimeout(5)
        s.connect((addr, port))
        if port == 80:
            s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        return s.recv(64).decode()


def assert_blocked(addr, port):
    assert sandbox_connect(addr, port) == ("error", EHOSTUNREACH), f"{addr}:{port} from a sandbox"
    assert host_connect(addr, port), f"{addr}:{port} has no listener: the test proves nothing"


def test_refused_until_the_firewall_matches_the_settings(hosts):
    status, body = hosts["before_install"]
    assert status == 503 and body["error"]["code"] == "network_unavailable", body


def test_refused_while_the_host_has_an_address_the_firewall_does_not_know(hosts):
    """A new host address inside network.allow changes the rules (the host
    itself stays closed whatever allow says): refused until it is gone."""
    sh("ip", "addr", "add", "198.51.100.2/32", "dev", "isob-pub-h")
    try:
        assert wait_until(lambda: not network_state()["available"], 5), network_state()
        status, body = execute({"language": "python", "code": "print(1)", "network": True})
        assert status == 503 and body["error"]["code"] == "network_unavailable", body
    finally:
        sh("ip", "addr", "del", "198.51.100.2/32", "dev", "isob-pub-h")
    assert wait_until(lambda: network_state()["available"], 5), network_state()


def test_allow_is_logged(hosts):
    line = f"network.allow: {ALLOWED} is taken off the"
    assert line in hosts["install_log"], hosts["install_log"]
    with open(os.path.join(LOG_DIR, "isobox.log"), errors="replace") as f:
        assert line in f.read()


def test_runtimes_says_which_network_stack(hosts):
    net = network_state()
    mode = open("/var/lib/isobox/egress/mode").read().strip()
    assert net == {"enabled": True, "available": True, "mode": mode}, net
    assert mode in ("sandbox", "host")


def test_public_host_reachable_with_requests(hosts):
    code = ("import requests\n"
            f"r = requests.get('http://{PUBLIC}/', timeout=10)\n"
            "print(r.status_code, r.text.strip())\n"
            "r = requests.get('http://public.isobox.test/', timeout=10)\n"
            "print(r.status_code, r.text.strip())\n")
    run = run_ok(code, network=True)
    assert run["stdout"] == "200 isobox-public\n200 isobox-public\n", run


@attack('egress: connect to a public host without `"network": true`', 'fails (no network stack); the host side reaches it')
def test_public_host_unreachable_without_network(hosts):
    kind, err = sandbox_connect(PUBLIC, 80, network=False)
    assert kind == "error" and err in (errno.ENETUNREACH, EHOSTUNREACH), err
    assert host_connect(PUBLIC, 80).startswith("HTTP/1.0 200")


@attack('egress: connect to 169.254.169.254, 10/8, 172.16/12, 192.168/16, 100.64/10 test hosts', 'EHOSTUNREACH from the firewall; the host side connects')
@pytest.mark.parametrize("addr", BLOCKED)
def test_private_metadata_and_cgnat_ranges_blocked(hosts, addr):
    assert_blocked(addr, 80)


@attack('egress: SMTP 25/465/587 on a public host inside network.allow', 'EHOSTUNREACH; port 80 of the same host connects')
@pytest.mark.parametrize("port", [25, 465, 587])
def test_mail_ports_blocked_on_a_public_host(hosts, port):
    assert_blocked(PUBLIC, port)
    assert sandbox_connect(PUBLIC, 80)[0] == "connected"


@attack('egress: 192.0.0/24, TEST-NET-1, 6to4 relay, 198.18/15, 240/4 test hosts (not globally reachable)', 'EHOSTUNREACH from the default deny list; the host side connects')
@pytest.mark.parametrize("addr", SPECIAL)
def test_special_purpose_ranges_blocked(hosts, addr):
    assert_blocked(addr, 80)


@attack("egress: the host's own addresses, the bridge gateway, a host address inside network.allow", 'EHOSTUNREACH; the host side connects')
def test_host_itself_blocked(hosts):
    for addr in (hosts["gateway"], hosts["uplink"], HOST_ALLOWED):
        for port in (53, HOST_PORT):
            assert_blocked(addr, port)


@attack('egress: DNS name resolving to metadata/private addresses (rebinding)', 'resolves, then EHOSTUNREACH')
def test_name_resolving_to_a_blocked_address_stays_blocked(hosts):
    code = ("import socket\n"
            "for name in ['meta.isobox.test', 'private.isobox.test']:\n"
            "    ip = socket.gethostbyname(name)\n"
            "    s = socket.socket(); s.settimeout(5)\n"
            "    print(name, ip, s.connect_ex((name, 80)))\n")
    run = run_ok(code, network=True)
    assert run["stdout"] == (f"meta.isobox.test 169.254.169.254 {EHOSTUNREACH}\n"
                             f"private.isobox.test 10.0.0.1 {EHOSTUNREACH}\n"), run
    assert host_connect("169.254.169.254", 80).startswith("HTTP/1.0 200")


@attack('egress: IPv6 to a public host', 'fails; the host side connects')
def test_ipv6_is_off(hosts):
    kind, err = sandbox_connect(PUBLIC6, 80)
    assert kind == "error", "IPv6 reached the public host"
    assert host_connect(PUBLIC6, 80).startswith("HTTP/1.0 200")


@attack('egress: connect to another running egress sandbox', 'EHOSTUNREACH; the host side connects')
def test_another_sandbox_is_blocked(hosts):
    """A listens on the egress network; the host reaches it, B does not."""
    server = ("import socket, time\n"
              "s = socket.socket(); s.bind(('0.0.0.0', 8080)); s.listen(4)\n"
              "s.settimeout(12)\n"
              "try:\n"
              "    while True:\n"
              "        c, _ = s.accept(); c.sendall(b'hello sandbox\\n'); c.close()\n"
              "except OSError:\n"
              "    print('done')\n")
    result = {}
    t = threading.Thread(target=lambda: result.update(
        a=execute({"language": "python", "code": server, "network": True,
                   "limits": {"wallTimeMs": 15000}})))
    t.start()
    try:
        def a_address():
            ids = sh("docker", "ps", "-q", "--filter", "network=isobox-egress").stdout.split()
            for cid in ids:
                ip = sh("docker", "inspect", "-f",
                        "{{with index .NetworkSettings.Networks \"isobox-egress\"}}{{.IPAddress}}{{end}}",
                        cid).stdout.strip()
                if ip:
                    try:
                        host_connect(ip, 8080)
                        return ip
                    except OSError:
                        pass
            return None
        assert wait_until(lambda: a_address() is not None, 20), "sandbox A never listened"
        ip = a_address()
        assert host_connect(ip, 8080).startswith("hello sandbox")
        assert sandbox_connect(ip, 8080) == ("error", EHOSTUNREACH)
    finally:
        t.join(30)
    assert result["a"][0] == 200, result


@attack('egress: privileges and root fs in an egress run', 'uid 65534, no caps, no-new-privileges, read-only /etc')
def test_other_hardening_stays_on_for_egress_runs(hosts):
    code = ("import ctypes, os\n"
            "print(os.getuid(), os.getgid())\n"
            "status = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
            "print(status['CapEff'].strip(), ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))\n"
            "try:\n"
            "    open('/etc/x', 'w')\n"
            "except OSError as e:\n"
            "    print(e.errno)\n"
            "print(open('/etc/resolv.conf').read().split())\n")
    run = run_ok(code, network=True)
    lines = run["stdout"].splitlines()
    assert lines[0] == "65534 65534"
    assert lines[1] == "0000000000000000 1"
    assert lines[2] in ("13", "30")
    assert f"'{DNS}'" in lines[3], lines[3]


def test_self_check_passes(hosts):
    r = subprocess.run(EGRESS + ["check"], capture_output=True, text=True,
                       env=dict(ENV, ISOBOX_EGRESS_PUBLIC=f"{PUBLIC}:80"))
    assert r.returncode == 0, r.stderr
    assert r.stderr.count(" blocked\n") == 7 and f"ok: {PUBLIC}:80 reachable" in r.stderr, r.stderr
    assert "ok: 127.0.0.11:53 (docker's DNS) refused" in r.stderr, r.stderr


@attack('egress: firewall hook removed', 'deploy/egress.sh check fails and names the hole')
def test_self_check_catches_a_hole(hosts):
    """Take the firewall's hook away: the check must fail, loudly."""
    gw = hosts["gateway"]
    sh("iptables", "-D", "DOCKER-USER", "-i", "isobox-eg0", "-j", "ISOBOX-EGRESS")
    try:
        r = subprocess.run(EGRESS + ["check"], capture_output=True, text=True,
                           env=dict(ENV, ISOBOX_EGRESS_PROBES="10.0.0.1:80 GATEWAY:53"))
        assert r.returncode == 1, r.stderr
        assert "FAIL: iptables DOCKER-USER does not jump to ISOBOX-EGRESS" in r.stderr
        assert "FAIL: 10.0.0.1:80 from a sandbox: connected" in r.stderr, r.stderr
        assert f"ok: {gw}:53 blocked" in r.stderr, r.stderr  # INPUT still holds
    finally:
        egress_install()
    assert sandbox_connect("10.0.0.1", 80) == ("error", EHOSTUNREACH)


@attack('egress: the "public" test host in TEST-NET-2 with the default deny list', 'EHOSTUNREACH until network.allow takes 198.51.100.0/24 off the list; the host side connects')
def test_documentation_range_closed_without_allow(hosts):
    """The red team reached a real server in a documentation range: by
    default those ranges are closed; only this module's allow opens one."""
    text = open(CONF).read()
    try:
        set_conf(text.replace(f"\n  allow: [{ALLOWED}]\n", "\n  allow: []\n"))
        egress_install()
        reload_pool()
        assert wait_until(lambda: network_state()["available"], 10), network_state()
        assert_blocked(PUBLIC, 80)
    finally:
        set_conf(text)
        egress_install()
        reload_pool()
    assert wait_until(lambda: network_state()["available"], 10), network_state()
    assert sandbox_connect(PUBLIC, 80)[0] == "connected"


def test_operator_can_turn_egress_off_and_back_on(hosts):
    """network.enabled: false: requests get 403, and the install step takes
    the network, the chains and the record away; true puts them back."""
    text = open(CONF).read()
    assert "\n  enabled: true " in text
    try:
        with open(CONF, "w") as f:
            f.write(text.replace("\n  enabled: true ", "\n  enabled: false ", 1))
        egress_install()
        reload_pool()
        assert wait_until(lambda: not network_state()["enabled"], 10), network_state()
        status, body = execute({"language": "python", "code": "print(1)", "network": True})
        assert status == 403 and body["error"]["code"] == "network_disabled", body
        for chain in ("ISOBOX-EGRESS", "ISOBOX-EGRESS-DENY", "ISOBOX-EGRESS-IN"):
            assert sh("iptables", "-S", chain, check=False).returncode != 0, chain
        assert sh("iptables", "-C", "INPUT", "-i", "isobox-eg0", "-j", "ISOBOX-EGRESS-IN",
                  check=False).returncode != 0
        assert sh("docker", "network", "inspect", "isobox-egress", check=False).returncode != 0
        assert not os.path.exists("/var/lib/isobox/egress/rules.v4")
        assert run_ok("print(2)")["stdout"] == "2\n"  # runs without network go on
    finally:
        with open(CONF, "w") as f:
            f.write(text)
        egress_install()
        reload_pool()
    assert wait_until(lambda: network_state()["available"], 10), network_state()
    assert run_ok("print(3)", network=True)["stdout"] == "3\n"


def package_index(root):
    """A PEP 503 index with one wheel (isoboxdemo 1.0), built here."""
    import base64
    import hashlib
    import zipfile
    files = {"isoboxdemo/__init__.py": b"VALUE = 42\n",
             "isoboxdemo-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: isoboxdemo\nVersion: 1.0\n",
             "isoboxdemo-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: isobox-test\n"
                                               b"Root-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
                     f"{len(data)}\n" for name, data in files.items())
    files["isoboxdemo-1.0.dist-info/RECORD"] = (record + "isoboxdemo-1.0.dist-info/RECORD,,\n").encode()
    wheel = root / "isoboxdemo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    (root / "simple" / "isoboxdemo").mkdir(parents=True)
    (root / "simple" / "isoboxdemo" / "index.html").write_text(
        f'<a href="../../{wheel.name}#sha256={digest}">{wheel.name}</a>\n')
    os.chmod(root, 0o755)


def npm_registry(root, url):
    """A registry (the npm protocol's two GETs) with one package, built here:
    GET /isoboxdemo (its metadata; a directory index, as http.server serves
    it) and the tarball it names."""
    import hashlib
    import io
    import json as jsonlib
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in [("package/package.json", b'{"name": "isoboxdemo", "version": "1.0.0", "main": "index.js"}'),
                           ("package/index.js", b"module.exports = { value: 42 };\n")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            t.addfile(info, io.BytesIO(data))
    tgz = buf.getvalue()
    (root / "tarballs").mkdir()
    (root / "tarballs" / "isoboxdemo-1.0.0.tgz").write_bytes(tgz)
    meta = {"name": "isoboxdemo", "dist-tags": {"latest": "1.0.0"},
            "versions": {"1.0.0": {"name": "isoboxdemo", "version": "1.0.0", "main": "index.js",
                                   "dist": {"tarball": f"{url}/tarballs/isoboxdemo-1.0.0.tgz",
                                            "shasum": hashlib.sha1(tgz).hexdigest()}}}}
    (root / "isoboxdemo").mkdir()
    (root / "isoboxdemo" / "index.html").write_text(jsonlib.dumps(meta))


def test_session_npm_packages_from_a_registry(hosts, tmp_path):
    """npm in a javascript session with network installs into /workspace;
    a later step requires it. The registry is a test host here."""
    from sessions_util import create, delete, step_ok
    url = f"http://{PUBLIC}:8081"
    npm_registry(tmp_path, url)
    os.chmod(tmp_path, 0o755)
    server = subprocess.Popen(["ip", "netns", "exec", "isob-pub", "/usr/bin/python3", "-m", "http.server",
                               "8081", "--bind", PUBLIC, "--directory", str(tmp_path)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sid = None
    try:
        assert wait_until(lambda: sh("ip", "netns", "exec", "isob-pub", "curl", "-sf", f"{url}/isoboxdemo/",
                                     check=False).returncode == 0, 10)
        sid = create(language="javascript", network=True)["id"]
        r = step_ok(sid, "const { execFileSync } = require('child_process');\n"
                    f"execFileSync('npm', ['install', '--registry', '{url}/', 'isoboxdemo'], {{stdio: 'inherit'}});",
                    limits={"wallTimeMs": 20000})
        assert r["run"]["exitCode"] == 0, r
        r = step_ok(sid, "console.log(require('isoboxdemo').value, require.resolve('isoboxdemo'))")
        assert r["run"]["stdout"] == "42 /workspace/node_modules/isoboxdemo/index.js\n", r
    finally:
        if sid:
            delete(sid)
        server.kill()
        server.wait()


def test_session_packages_from_an_index(hosts, tmp_path):
    """pip in a session with network installs into its /workspace, and later
    steps (kernel cells too) import it; the index is a test host here."""
    from sessions_util import create, delete, step_ok
    package_index(tmp_path)
    server = subprocess.Popen(["ip", "netns", "exec", "isob-pub", "/usr/bin/python3", "-m", "http.server",
                               "8080", "--bind", PUBLIC, "--directory", str(tmp_path)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    index = f"--index-url http://{PUBLIC}:8080/simple/ --trusted-host {PUBLIC}"
    kernel = shell = offline = None
    try:
        assert wait_until(lambda: sh("ip", "netns", "exec", "isob-pub", "curl", "-sf",
                                     f"http://{PUBLIC}:8080/simple/isoboxdemo/", check=False).returncode == 0, 10)
        kernel = create(type="kernel", network=True)["id"]
        r = step_ok(kernel, f"%pip install {index} isoboxdemo", limits={"wallTimeMs": 20000})
        assert "Successfully installed isoboxdemo-1.0" in r["run"]["stdout"], r
        r = step_ok(kernel, "import isoboxdemo\nisoboxdemo.VALUE")
        assert r["kernel"]["value"] == "42", r
        r = step_ok(kernel, "isoboxdemo.__file__")
        assert r["kernel"]["value"].startswith("'/workspace/.local/lib/python3"), r
        shell = create(network=True)["id"]
        r = step_ok(shell, "import subprocess, sys\nsubprocess.run([sys.executable, '-m', 'pip', 'install', "
                    + ", ".join(repr(a) for a in index.split()) + ", 'isoboxdemo'], check=True)",
                    limits={"wallTimeMs": 20000})
        assert r["run"]["exitCode"] == 0, r
        assert step_ok(shell, "import isoboxdemo\nprint(isoboxdemo.VALUE)")["run"]["stdout"] == "42\n"
        offline = create(type="kernel")["id"]
        r = step_ok(offline, f"%pip install {index} isoboxdemo")
        assert "no network" in r["run"]["stderr"] and '"network": true' in r["run"]["stderr"], r
    finally:
        for sid in (kernel, shell, offline):
            if sid:
                delete(sid)
        server.kill()
        server.wait()
