"""Shared helpers for the integration tests.

They run against the real stack that `make run` starts: Caddy on
ISOBOX_URL (default http://127.0.0.1:8090), the spawn-fcgi pool, dockerd
with runsc. They run as root (as `make test` does) so that they can look at
the host: containers, cgroups, worker processes.
"""
import contextlib
import fcntl
import http.client
import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

import audit_table
import docker_api
import shards

URL = os.environ.get("ISOBOX_URL", f"http://127.0.0.1:{os.environ.get('PORT', '8090')}")
PREFIX = os.environ.get("PREFIX", "/opt/isobox")
INSTANCE = os.environ.get("ISOBOX_INSTANCE", "main")   # conf `instance:` of the pool under test
POOL = int(os.environ.get("POOL", "4"))
WORK_DIR = os.environ.get("ISOBOX_WORK", "/var/lib/isobox/work")
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
    note_request(path, body)
    try:
        answer = json.loads(raw)
    except ValueError:
        return status, rheaders, raw.decode(errors="replace")
    note_result(answer)
    return status, rheaders, answer


def raw_request(method, path, body=None, headers=None, url=URL, timeout=60):
    """One exchange with raw bytes both ways: (status, headers, body bytes)."""
    note_request(path, body)
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        status, headers, raw = resp.status, resp.headers, resp.read()
        note_result(json_or_none(raw))
        return status, headers, raw
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


# The versions besides each language's default (registry.yaml's versions).
# test_languages runs every program on each, and its
# test_every_version_is_tested fails when the registry gains one that is
# not here; each_version() runs a family's attacks on them too.
OTHER_VERSIONS = [("python", "3.11"), ("python", "3.14"), ("javascript", "24"), ("java", "25")]


def each_version(language, name, outcome):
    """An attack on the language's default version and, pinned, on each of
    its OTHER_VERSIONS: the test takes `version` (None: the default), and
    each version is a row of docs/AUDIT.md of its own."""
    params = [pytest.param(None, id="default", marks=pytest.mark.attack(name, outcome))]
    params += [pytest.param(v, id=v, marks=pytest.mark.attack(f"{name}, {language} {v}", outcome))
               for lang, v in OTHER_VERSIONS if lang == language]
    return pytest.mark.parametrize("version", params)


def pinned(version):
    """The request fields that pin a version (none for the default)."""
    return {"version": version} if version else {}


def containers(instance=INSTANCE):
    """IDs of isobox containers of an instance, running or not. On the warm
    path (--sandbox-path=warm) the pool's ready and booting sandboxes are not
    counted: they are the master's, waiting for a request. The rest of the
    warm ones (taken by a run, or done and not yet removed) are, oldest
    first: a take dequeues the oldest ready one."""
    if SUITE["path"] == "cold" or instance != INSTANCE:
        return [c["id"] for c in docker_api.containers(f"isobox.instance={instance}")]
    listed = docker_containers(instance)  # before the counts: see warm_waiting
    warm = [cid for cid, kind in listed if kind == "warm"]
    return ([cid for cid, kind in listed if kind != "warm"] +
            warm[:max(0, len(warm) - warm_waiting())])


def docker_containers(instance=INSTANCE):
    """(ID, isobox.kind) of an instance's containers, oldest first."""
    return [(c["id"], c["labels"].get("isobox.kind", ""))
            for c in reversed(docker_api.containers(f"isobox.instance={instance}"))]


def running_owners(instance=INSTANCE):
    """The pids of the workers whose cold run's container is running now,
    from its isobox.owner label ("PID.STARTTIME"): a run in progress, and
    who runs it (its container goes through dockerd's API: the worker has
    no docker child to see)."""
    owners = [c["labels"].get("isobox.owner", "").split(".")[0]
              for c in docker_api.containers(f"isobox.instance={instance}", "isobox.kind=cold", running=True)]
    return [int(pid) for pid in owners if pid.isdigit()]


def warm_waiting():
    """Warm sandboxes ready or booting, from /metrics. Read after listing the
    containers, so that one which booted in between is not taken for a run's."""
    _, _, text = request("GET", "/metrics", timeout=10)
    return sum(int(float(line.rsplit(" ", 1)[1])) for line in text.splitlines()
               if line.startswith(("isobox_warm_ready{", "isobox_warm_starting{")))


def run_containers(instance=INSTANCE):
    """containers() but the warm pool's and the sessions' (isobox.kind=warm,
    session), which stay on purpose."""
    return [cid for cid, kind in docker_containers(instance) if kind not in ("warm", "session")]


@pytest.fixture(autouse=True)
def quiet_host():
    """Start each test after the last one's sandboxes are gone: the answer
    goes out just before `docker rm` (sandbox_settle), so a test that looks
    at once may still see the container of the request before it."""
    wait_until(lambda: not run_containers(), 10, step=0.05)
    if SUITE["path"] == "warm":  # and for the pool to refill: each run warm
        wait_until(lambda: not containers() and warm_full(), 30, step=0.05)


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


def alive(pid):
    """Is it running? A process that has ended but is not yet reaped (a
    zombie) holds nothing any more; pid 1 on some hosts takes seconds to
    reap what it inherits, and kill(pid, 0) would wait for that too."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


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
    comm="isobox-status", its status socket's worker. Read twice, 0.1 s
    apart: a child that the master has forked to exec a docker client (a
    warm sandbox, a removal) has the master's name for a moment, and is no
    worker."""
    def once():
        out = set()
        for pid in children(pool_master()):
            try:
                with open(f"/proc/{pid}/comm") as f:
                    if f.read().strip() == comm:
                        out.add(pid)
            except OSError:
                pass
        return out
    first = once()
    time.sleep(0.1)
    return sorted(first & once())


def reload_pool(then_healthy=True):
    """SIGHUP to the master, as an operator sends it: it signals every
    worker, then loads the files itself and logs "reloaded" (or "reload
    failed"). That line is waited for, not a guess at how long the master
    takes to get to the signal (it may be reaping, or starting a warm
    sandbox): once it is there, every worker reloads before its next
    request, so that request is served with the new files, whichever worker
    takes it. (A worker serving a request holds the signal until the
    request ends: serve.c.) then_healthy: wait for /healthz to answer 200
    (not when the new settings refuse it)."""
    log = os.path.join(LOG_DIR, "isobox.log")
    master = pool_master()
    start = os.path.getsize(log)
    done = re.compile(rf"isobox\[{master}\]: (reloaded |reload failed)".encode())

    def reloaded():
        with open(log, "rb") as f:
            f.seek(start if os.fstat(f.fileno()).st_size >= start else 0)  # rotated meanwhile
            return done.search(f.read()) is not None
    os.kill(master, signal.SIGHUP)
    assert wait_until(reloaded, 60, step=0.05), f"the master ({master}) logged no reload in {log}"
    if then_healthy:
        assert wait_until(healthy, 10)


def healthy(url=URL):
    try:
        return request("GET", "/healthz", url=url, timeout=5)[0] == 200
    except OSError:
        return False


# The audit: every test marked @pytest.mark.attack(name, outcome) is listed
# in bin/AUDIT.md with the result of this run (audit_table.py; git ignores
# bin/, so a run changes no tracked file). `make audit` copies it to
# docs/AUDIT.md, and `make test` ends by checking that docs/AUDIT.md is
# current (tests/audit.py). The attacks live in the test_attacks*.py files
# (and test_egress.py, and the tenant, memory and volume files). `make
# test` runs them three times, each pass in shards (shards.py):
#  - cold (the default): the whole suite with the warm pool off. It records
#    each attack's result and whether it sent a run that a warm sandbox
#    could take (can_be_warm);
#  - --sandbox-path=warm: those attacks again, with python and javascript
#    sandboxes started ahead so that each such run takes one. It adds the
#    warm column, with how many of each attack's runs were warm;
#  - --backend=runc: every attack again, cold, on the runc backend (conf
#    backend: runc; docs/BACKENDS.md). It adds the runc column.
# An attack marked @pytest.mark.same_for_every_sandbox(why) is on a part
# of isobox that neither the warm path nor the backend changes (the web
# servers, the request parser, the store, the deploy scripts): it runs on
# the cold pass only, and the table's warm and runc cells give the reason.
# Only a run of the whole of tests/integration (one shard of it, or all),
# without -k, -m, --deselect or --lf, in which every attack selected was
# reported, keeps a record (full_run).
AUDIT = []
SELECTED = set()  # audit_key of the attacks this session selected to run
# Tests deselected by anything but the pass's own choice (warm, runc, shard).
PASS_CHOICE = {"now": False, "others": 0}
HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = {"path": "cold", "backend": "gvisor", "shard": "all"}  # --sandbox-path, --backend, --shard
WARM_SUITE = "{python: 2, javascript: 2}"  # warm.sandboxes of the warm pass
WARM_LANGUAGES = {"python", "py", "py3", "python3", "javascript", "js", "node", "nodejs"}
RUNS = {"can_be_warm": 0, "seen": 0, "warm": 0}  # this test's runs, counted by the helpers


def can_be_warm(path, body):
    """Whether a request is one a warm sandbox could serve (sandbox/warm.c
    warm_take): a run of a language the warm pass keeps, with no network,
    outputs or volume, and no pids of its own (a warm sandbox's process
    limit is set when it starts; memory and cpus are set when it is taken),
    and no version pin (the warm pass keeps the default versions only)."""
    limits = body.get("limits") if isinstance(body, dict) else None
    return (isinstance(body, dict) and path.split("?")[0] in ("/execute", "/api/v2/piston/execute",
                                                              "/api/v2/execute")
            and body.get("language") in WARM_LANGUAGES and not body.get("version")
            and not body.get("network") and not body.get("outputs") and not body.get("volume")
            and not (isinstance(limits, dict) and "pids" in limits))


# On the runc backend the kernel's mount table (/proc/*/mountinfo,
# /proc/mounts) names the host paths of the sandbox's own mounts: its image
# layers (the overlay's options), its code dir, resolv.conf, docker's
# hostname files. Nothing can hide them there (gVisor shows a table of its
# own). own_mounts_removed() takes those lines out of a text; the rest must
# still show nothing of the host.
RUNC_MOUNT_SOURCES = (WORK_DIR.rstrip("/") + "/", "/var/lib/isobox/sandbox/", "/var/lib/docker/")


def own_mounts_removed(text):
    if SUITE["backend"] != "runc":
        return text
    return "\n".join(line for line in text.split("\n")
                     if not any(src in line for src in RUNC_MOUNT_SOURCES) and " overlay " not in line)


def json_or_none(raw):
    """raw parsed, or None for what is not JSON (or too deep for json: what
    bad-input tests send): the audit's counting never fails a test."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def note_request(path, body):
    if isinstance(body, (bytes, str)):
        body = json_or_none(body)
    RUNS["can_be_warm"] += can_be_warm(path, body)


def note_result(answer):
    """Count a run's result (of /execute, or a stream's result event)."""
    if isinstance(answer, dict) and isinstance(answer.get("warm"), bool):
        RUNS["seen"] += 1
        RUNS["warm"] += answer["warm"]


def warm_full():
    _, _, text = request("GET", "/metrics", timeout=10)
    values = dict(line.rsplit(" ", 1) for line in text.splitlines()
                  if line.startswith(("isobox_warm_ready{", "isobox_warm_target{")))
    return all(float(values.get(k.replace("target", "ready"), 0)) >= float(v)
               for k, v in values.items() if k.startswith("isobox_warm_target{"))


# Modules that must run last, in this order (the rest keep pytest's order):
# test_faults restarts dockerd, and test_nothing_left checks the host after
# everything else.
LAST = ["test_faults.py", "test_nothing_left.py"]


def pytest_addoption(parser):
    parser.addoption("--sandbox-path", choices=("cold", "warm"), default="cold",
                     help="warm: run the attacks whose runs a warm sandbox can take, "
                          "with the warm pool on (after a cold run: see AUDIT_RECORD)")
    parser.addoption("--backend", choices=("gvisor", "runc"), default="gvisor",
                     help="runc: run the attacks on the sandbox again on the runc backend (after a cold run)")
    parser.addoption("--shard", choices=shards.CHOICES, default="all",
                     help="run one shard of the pass (shards.py; tests/passes.sh runs them all)")


def pytest_collection_modifyitems(session, config, items):
    unplaced = shards.unplaced(items)
    if unplaced:
        raise pytest.UsageError(f"{', '.join(unplaced)}: in no shard; add to SHARDS in "
                                "tests/integration/shards.py")

    def rank(item):
        name = item.path.name
        return LAST.index(name) + 1 if name in LAST else 0
    items.sort(key=rank)  # stable: the others keep their order
    keep = shards.select(items, SUITE["shard"])
    if SUITE["path"] == "warm":
        record = audit_table.read_pass("cold")
        keep = [i for i in keep if sandbox_attack(i) and
                (record is None or audit_table.warm_candidate(record.get(audit_key(i))))]
    elif SUITE["backend"] == "runc":
        keep = [i for i in keep if sandbox_attack(i)]
    PASS_CHOICE["now"] = True
    try:
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
    finally:
        PASS_CHOICE["now"] = False
    items[:] = keep


def sandbox_attack(item):
    """An attack whose outcome the sandbox path or the backend could change:
    one the warm and runc passes run again."""
    return bool(item.get_closest_marker("attack")) and not item.get_closest_marker("same_for_every_sandbox")


def pytest_configure(config):
    config.addinivalue_line("markers", "attack(name, outcome): an attack listed in docs/AUDIT.md")
    config.addinivalue_line("markers", "same_for_every_sandbox(why): an attack on what no sandbox path or "
                            "backend changes; the cold pass alone runs it")
    config.addinivalue_line("markers", "alone(why): runs with no other isobox testing beside it (shards.py)")
    SUITE["shard"] = config.getoption("--shard")
    SUITE["path"] = config.getoption("--sandbox-path")
    SUITE["backend"] = config.getoption("--backend")
    if SUITE["path"] == "warm" and SUITE["backend"] != "gvisor":
        raise pytest.UsageError("the warm pass runs on the gVisor backend")


def audit_key(item):
    return item.path.name + "::" + item.name


@pytest.fixture(autouse=True)
def count_runs():
    RUNS.update(can_be_warm=0, seen=0, warm=0)


# Every test's time, phase by phase, written at the end of the session to
# $ISOBOX_DURATIONS (the Makefile's passes: bin/durations-PASS.txt),
# slowest first, after each module's total: what `--durations=0` prints,
# kept where the slowest tests can be studied. Then the host's CPU time
# (busy, every core) while each test ran, setup to teardown: what a test
# costs where the host is the bound (docs/PERFORMANCE.md), exact only for
# a shard run alone (tests/passes.sh runs A, B and C at once).
DURATIONS = []
CPU_SECONDS = {}  # nodeid -> the host's busy CPU-s during the test


def host_busy_seconds():
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq = map(int, f.readline().split()[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before = host_busy_seconds()
    yield
    CPU_SECONDS[item.nodeid] = host_busy_seconds() - before


def pytest_runtest_logreport(report):
    DURATIONS.append((report.duration, report.when, report.nodeid))


def write_durations(path, exitstatus):
    modules = {}
    for secs, _, nodeid in DURATIONS:
        module = nodeid.split("::")[0]
        modules[module] = modules.get(module, 0.0) + secs
    total = sum(modules.values())
    this = "runc" if SUITE["backend"] == "runc" else SUITE["path"]
    lines = [f"# {this} pass: {len(DURATIONS)} phases, {total:.0f} s in tests "
             f"(exit status {exitstatus}); modules, then every phase, slowest first", ""]
    lines += [f"{secs:9.2f}s  {module}" for module, secs in
              sorted(modules.items(), key=lambda m: -m[1])]
    lines.append("")
    lines += [f"{secs:9.2f}s {when:<8} {nodeid}" for secs, when, nodeid in
              sorted(DURATIONS, key=lambda d: -d[0])]
    cpu = {}
    for nodeid, secs in CPU_SECONDS.items():
        module = nodeid.split("::")[0]
        cpu[module] = cpu.get(module, 0.0) + secs
    lines += ["", f"# the host's busy CPU time while the tests ran: {sum(cpu.values()):.0f} CPU-s "
              "(every core; exact only for a shard run alone); modules, then every test, most first", ""]
    lines += [f"{secs:9.1f}  {module}" for module, secs in sorted(cpu.items(), key=lambda m: -m[1])]
    lines.append("")
    lines += [f"{secs:9.1f}  {nodeid}" for nodeid, secs in sorted(CPU_SECONDS.items(), key=lambda c: -c[1])]
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    marker = item.get_closest_marker("attack")
    if marker and (report.when == "call" or (report.when == "setup" and report.outcome != "passed")):
        result = report.outcome
        if hasattr(report, "wasxfail"):  # a known weakness: the test says what fails
            result = "xfail: " + report.wasxfail
        same = item.get_closest_marker("same_for_every_sandbox")
        AUDIT.append({"name": marker.args[0], "outcome": marker.args[1], "result": result,
                      "test": item.name, "file": item.path.name, "line": item.location[1], "key": audit_key(item),
                      "same_for_every_sandbox": same.args[0] if same else None, **RUNS})


def pytest_collection_finish(session):
    SELECTED.update(audit_key(i) for i in session.items if i.get_closest_marker("attack"))


def pytest_deselected(items):
    if not PASS_CHOICE["now"]:
        PASS_CHOICE["others"] += len(items)


def full_run(config):
    """Was every test of this directory selected (the pass's own choice
    aside), and did every selected attack report? A partial run (a module
    or a test named, -k, -m, --deselect, --lf, or -x stopping early) writes
    no audit."""
    start = str(config.invocation_params.dir)
    args = [os.path.realpath(os.path.join(start, a)) for a in config.args]
    return (args == [os.path.realpath(HERE)] and not PASS_CHOICE["others"] and bool(SELECTED)
            and {a["key"] for a in AUDIT} == SELECTED)


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("ISOBOX_DURATIONS"):
        write_durations(os.environ["ISOBOX_DURATIONS"], exitstatus)
    if not AUDIT or not full_run(session.config):
        return
    this = "runc" if SUITE["backend"] == "runc" else SUITE["path"]
    if this == "cold" and SUITE["shard"] == "all":
        audit_table.forget_records()
    audit_table.write_record(this, SUITE["shard"], AUDIT)
    if SUITE["shard"] == "all":  # a shard's: tests/passes.sh writes it once every shard is in
        audit_table.write_table()


def pool_env(pool):
    env = dict(os.environ)
    env.update(PREFIX=PREFIX, ISOBOX_RUN=RUN_DIR, ISOBOX_LOG=LOG_DIR, POOL=str(pool))
    return env


def restart_pool(pool=POOL):
    subprocess.run(["bash", os.path.join(REPO, "deploy", "pool.sh"), "restart"],
                   env=pool_env(pool), check=True, capture_output=True)
    assert wait_until(healthy, 30), "the pool did not come back"


def set_warm(sandboxes=None):
    """Restart the pool with warm.sandboxes set to this YAML map ("{}": none;
    None: the suite's own, which is none but on the warm pass)."""
    if sandboxes is None:
        sandboxes = WARM_SUITE if SUITE["path"] == "warm" else "{}"
    with open(CONF) as f:
        text = f.read()
    new, n = re.subn(r"(?m)^(warm:\n(?:  #.*\n)*)  sandboxes: \{[^}\n]*\}",
                     lambda m: m.group(1) + "  sandboxes: " + sandboxes, text, count=1)
    assert n == 1, f"no warm.sandboxes in {CONF}"
    if new == text and healthy():
        return  # as it is: no restart
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


def with_backend(text, backend):
    """The conf text with its `backend:` line set to backend."""
    new, n = re.subn(r"(?m)^backend: \w+$", "backend: " + backend, text, count=1)
    assert n == 1, f"no backend in {CONF}"
    return new


@contextlib.contextmanager
def backend_switched(backend):
    """The pool restarted on the other backend for a while, then back."""
    with open(CONF) as f:
        text = f.read()
    with open(CONF, "w") as f:
        f.write(with_backend(text, backend))
    restart_pool()
    try:
        yield
    finally:
        with open(CONF, "w") as f:
            f.write(text)
        restart_pool()


@pytest.fixture(scope="session", autouse=True)
def service_up():
    lock = one_suite_at_a_time()
    ok = wait_until(healthy, 30)
    assert ok, f"isobox is not answering on {URL}: run `make run` first"
    # The suite runs cold but on the warm pass; the warm pool's own tests
    # (test_warm*.py, test_attacks_warm.py) turn it on.
    with open(CONF) as f:
        shipped = f.read()
    backend = with_backend(shipped, SUITE["backend"])
    if backend != shipped:
        with open(CONF, "w") as f:
            f.write(backend)
        restart_pool()
    set_warm()
    if SUITE["path"] == "warm":
        assert wait_until(warm_full, 60), "the warm pool did not fill"
    yield
    with open(CONF, "w") as f:
        f.write(shipped)
    restart_pool()
    os.close(lock)
