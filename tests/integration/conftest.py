"""Shared helpers for the integration tests.

They run against the real stack that `make run` starts: Caddy on
ISOBOX_URL (default http://127.0.0.1:8090), the spawn-fcgi pool, dockerd
with runsc. They run as root (as `make test` does) so that they can look at
the host: containers, cgroups, worker processes.
"""
import fcntl
import http.client
import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

URL = os.environ.get("ISOBOX_URL", f"http://127.0.0.1:{os.environ.get('PORT', '8090')}")
PREFIX = os.environ.get("PREFIX", "/opt/isobox")
INSTANCE = os.environ.get("ISOBOX_INSTANCE", "main")   # conf `instance:` of the pool under test
POOL = int(os.environ.get("POOL", "4"))
WORK_DIR = "/var/lib/isobox/work"
RUN_DIR = os.environ.get("ISOBOX_RUN", "/run/isobox")
LOG_DIR = os.environ.get("ISOBOX_LOG", "/var/log/isobox")
CONF = os.path.join(PREFIX, "conf", "isobox.yaml")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def request(method, path, body=None, headers=None, url=URL, timeout=60):
    """Send one request; return (status, headers, parsed JSON or raw text)."""
    data = body
    if isinstance(body, (dict, list)):
        data = json.dumps(body).encode()
    elif isinstance(body, str):
        data = body.encode()
    hdrs = {"Content-Type": "application/json"}
    hdrs.update(headers or {})
    req = urllib.request.Request(url + path, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            status, rheaders, raw = resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as err:
        status, rheaders, raw = err.code, err.headers, err.read()
    try:
        return status, rheaders, json.loads(raw)
    except ValueError:
        return status, rheaders, raw.decode(errors="replace")


def raw_request(method, path, body=None, headers=None, url=URL, timeout=60):
    """One exchange with raw bytes both ways: (status, headers, body bytes)."""
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.headers, resp.read()
    finally:
        conn.close()


def abandon(url, path, body, after):
    """POST and hang up after `after` seconds without an answer, as a client
    that gave up does. Returns whether an answer came first."""
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=after)
    try:
        conn.request("POST", u.path + path, body=json.dumps(body),
                     headers={"Content-Type": "application/json"})
        conn.getresponse()
        return True
    except TimeoutError:
        return False
    finally:
        conn.close()


def execute(body, url=URL, timeout=90):
    """POST /execute; return (status, result)."""
    status, _, result = request("POST", "/execute", body, url=url, timeout=timeout)
    return status, result


def run_ok(code, language="python", **extra):
    """Execute and expect HTTP 200; return the run object."""
    body = {"language": language, "code": code}
    body.update(extra)
    status, result = execute(body)
    assert status == 200, result
    return result["run"]


def containers(instance=INSTANCE):
    """IDs of isobox containers of an instance, running or not."""
    out = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=isobox.instance={instance}"],
        check=True, capture_output=True, text=True).stdout
    return out.split()


def run_containers(instance=INSTANCE):
    """containers() but the warm pool's and the sessions' (isobox.kind=warm,
    session), which stay on purpose."""
    out = subprocess.run(
        ["docker", "ps", "-a", "--filter", f"label=isobox.instance={instance}",
         "--format", '{{.ID}} {{.Label "isobox.kind"}}'],
        check=True, capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines()
            if not line.endswith(" warm") and not line.endswith(" session")]


@pytest.fixture(autouse=True)
def quiet_host():
    """Start each test after the last one's sandboxes are gone: the answer
    goes out just before `docker rm` (sandbox_settle), so a test that looks
    at once may still see the container of the request before it."""
    wait_until(lambda: not run_containers(), 10, step=0.05)


def work_dirs(instance=INSTANCE):
    return [d for d in os.listdir(WORK_DIR) if d.startswith(instance + ".")]


def wait_until(predicate, timeout, step=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def pool_master():
    with open(os.path.join(RUN_DIR, "pool.pid")) as f:
        return int(f.read())


def children(pid):
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid:
            kids.append(int(entry))
    return kids


def workers(comm="isobox-fcgi"):
    """The pool's worker pids (isobox-fcgi children of the master); with
    comm="isobox-status", its status socket's worker."""
    out = []
    for pid in children(pool_master()):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == comm:
                    out.append(pid)
        except OSError:
            pass
    return out


def healthy(url=URL):
    try:
        return request("GET", "/healthz", url=url, timeout=5)[0] == 200
    except OSError:
        return False


# The audit: every test marked @pytest.mark.attack(name, outcome) is listed
# in docs/AUDIT.md with the result of this run (written by the suite). The
# attacks live in the test_attacks*.py files (and test_egress.py, and the
# tenant, memory and volume files); the table
# is rewritten only by a run that includes all the test_attacks*.py files,
# without -k.
AUDIT = []
HERE = os.path.dirname(os.path.abspath(__file__))
AUDIT_PATH = os.path.join(os.path.dirname(os.path.dirname(HERE)), "docs", "AUDIT.md")


# Modules that must run last, in this order (the rest keep pytest's order):
# test_faults restarts dockerd, and test_nothing_left checks the host after
# everything else.
LAST = ["test_faults.py", "test_nothing_left.py"]


def pytest_collection_modifyitems(session, config, items):
    def rank(item):
        name = item.path.name
        return LAST.index(name) + 1 if name in LAST else 0
    items.sort(key=rank)  # stable: the others keep their order


def pytest_configure(config):
    config.addinivalue_line("markers", "attack(name, outcome): an attack listed in docs/AUDIT.md")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    marker = item.get_closest_marker("attack")
    if marker and (report.when == "call" or (report.when == "setup" and report.outcome != "passed")):
        result = report.outcome
        if hasattr(report, "wasxfail"):  # a known weakness: the test says what fails
            result = "xfail: " + report.wasxfail
        AUDIT.append((marker.args[0], marker.args[1], result, item.name, item.path.name))


def pytest_sessionfinish(session, exitstatus):
    files = sorted(f for f in os.listdir(HERE) if f.startswith("test_attacks") and f.endswith(".py"))
    ran = sorted({a[4] for a in AUDIT})
    if not AUDIT or session.config.getoption("-k") or not set(files) <= set(ran):
        return  # only a full run of every attack file rewrites the audit
    passed = sum(1 for a in AUDIT if a[2] == "passed")
    lines = ["# Audit: attacks run against isobox", "",
             "Generated by `make test` (tests/integration/" + ", ".join(ran) + "); do not edit.",
             f"Last run: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
             f"{passed} of {len(AUDIT)} attacks held.", "",
             "| # | attack | outcome asserted | result |", "|---|---|---|---|"]
    def cell(text):
        return text.replace("|", "\\|")

    for i, (name, want, result, test, path) in enumerate(AUDIT, 1):
        mark = "held" if result == "passed" else f"**{result.upper()}**"
        if result.startswith("xfail: "):
            mark = "**DOES NOT HOLD** (known, " + cell(result) + ")"
        lines.append(f"| {i} | {cell(name)} | {cell(want)} | {mark} (`{path}::{test}`) |")
    with open(AUDIT_PATH, "w") as f:
        f.write("\n".join(lines) + "\n")


def pool_env(pool):
    env = dict(os.environ)
    env.update(PREFIX=PREFIX, ISOBOX_RUN=RUN_DIR, ISOBOX_LOG=LOG_DIR, POOL=str(pool))
    return env


def restart_pool(pool=POOL):
    subprocess.run(["bash", os.path.join(REPO, "deploy", "pool.sh"), "restart"],
                   env=pool_env(pool), check=True, capture_output=True)
    assert wait_until(healthy, 30), "the pool did not come back"


def set_warm(sandboxes):
    """Restart the pool with warm.sandboxes set to this YAML map ("{}": none)."""
    with open(CONF) as f:
        text = f.read()
    new, n = re.subn(r"(?m)^(warm:\n(?:  #.*\n)*)  sandboxes: \{[^}\n]*\}",
                     lambda m: m.group(1) + "  sandboxes: " + sandboxes, text, count=1)
    assert n == 1, f"no warm.sandboxes in {CONF}"
    with open(CONF, "w") as f:
        f.write(new)
    restart_pool()


# One suite at a time on a host: each restarts the pool and rewrites its
# conf, so a second one would pull the service from under the first.
SUITE_LOCK = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"isobox-suite-{INSTANCE}.lock")
SUITE_LOCK_WAIT_S = 3600


def one_suite_at_a_time():
    fd = os.open(SUITE_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    deadline = time.monotonic() + SUITE_LOCK_WAIT_S
    said = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                pytest.exit(f"another test suite has held {SUITE_LOCK} for an hour", returncode=3)
            if not said:
                print(f"\nwaiting for the test suite that holds {SUITE_LOCK}", flush=True)
                said = True
            time.sleep(1)


@pytest.fixture(scope="session", autouse=True)
def service_up():
    lock = one_suite_at_a_time()
    ok = wait_until(healthy, 30)
    assert ok, f"isobox is not answering on {URL}: run `make run` first"
    # The suite counts the containers of runs, so it runs cold; the warm
    # pool's tests (test_warm*.py, test_attacks_warm.py) turn it on.
    with open(CONF) as f:
        shipped = f.read()
    set_warm("{}")
    yield
    with open(CONF, "w") as f:
        f.write(shipped)
    restart_pool()
    os.close(lock)
