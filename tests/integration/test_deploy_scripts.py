"""The deploy scripts' sharp parts, run for real: which processes they kill,
and the root wrapper that docker runs as the egress runtime.

- No script kills by a pattern that could match someone else's process
  (issue 10, item 16): the tree is searched, and the two places that must
  kill leftovers (setup.sh's platform probe, egress.sh's network mode probe)
  are run against decoys and a real sandbox.
- runsc-egress (written by deploy/egress.sh) passes every runsc command
  through unchanged, refuses a `create` it cannot place, and fails closed:
  when its limits cannot be set it deletes the sandbox and fails the create.
"""
import json
import os
import re
import signal
import subprocess
import time
import uuid

import pytest

from conftest import PREFIX, alive, run_ok
from test_attacks_egress import in_background, job_container, sandbox_pid

pytestmark = [
    pytest.mark.alone("it runs setup.sh's and egress.sh's probes, which kill their leftovers on the host"),  # shards.py
    pytest.mark.same_for_every_sandbox("the deploy scripts' probes, which the conf's backend does not change"),  # conftest.py
]

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SETUP = os.path.join(REPO, "deploy", "setup.sh")
EGRESS = os.path.join(REPO, "deploy", "egress.sh")


def bash(script, env=None, timeout=60):
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})), timeout=timeout)


@pytest.mark.attack("a host with other gVisor sandboxes and look-alike processes: does any script kill by pattern?",
                    "no pkill, killall or kill by a command-line match in any script")
def test_no_script_kills_by_pattern():
    files = subprocess.run(["git", "-C", REPO, "ls-files"], check=True, capture_output=True,
                           text=True).stdout.split()
    broad = re.compile(r"\b(pkill|killall)\b|pgrep[^\n]*\|\s*xargs\s+kill|kill[^\n]*\$\(pgrep")
    hits = []
    for name in files:
        if name.endswith((".md", ".txt", ".yaml", ".json")) or name == "tests/integration/test_deploy_scripts.py":
            continue  # prose and data; this file names the patterns
        path = os.path.join(REPO, name)
        try:
            text = open(path, errors="replace").read()
        except (IsADirectoryError, FileNotFoundError):
            continue
        hits += [f"{name}: {m.group(0)}" for m in broad.finditer(text)]
    assert not hits, hits


FAKE_RUNSC = """#!/bin/bash
# A platform probe that hangs, with a child in a session of its own (as
# runsc's sandbox is): exactly what setup.sh must clean up, and only that.
setsid sleep 311 &
echo $! >{pids}/child
echo $$ >{pids}/self
sleep 312
"""


@pytest.mark.attack("re-running setup.sh's platform probe while another gVisor sandbox and a decoy run the same runsc",
                    "the hung probe's own process tree is killed; the sandbox and the decoy survive")
def test_platform_probe_kills_only_its_own_processes(tmp_path):
    """A hung `runsc do` probe is killed with its whole tree, and a sandbox
    running the same runsc next to it is left alone."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "runsc").write_text(FAKE_RUNSC.replace("{pids}", str(tmp_path)))
    (fake / "runsc").chmod(0o755)
    # A real sandbox runs (the old probe's pkill -f matched every sandbox)
    # next to a decoy whose command line looks like a probe's; then the
    # probe, whose timeout is cut to 2 s, hangs and is killed while both
    # still run.
    decoy = subprocess.Popen(["bash", "-c", "exec -a 'runsc-sandbox --platform=ptrace --network=none do' sleep 313"])
    marker = f"marker-{uuid.uuid4().hex}.txt"
    # Pids of its own: a cold run, whose code dir the marker finds (a warm
    # sandbox, which takes any memory, has none), on the warm pass too.
    t, result = in_background({"language": "python", "limits": {"wallTimeMs": 20000, "memoryBytes": 200 << 20,
                                                            "pids": 64},
                               "files": [{"name": "main.py", "content": "import time\ntime.sleep(17)\nprint('done')\n"},
                                         {"name": marker, "content": ""}]})
    probe = None
    try:
        sandbox = sandbox_pid(job_container(marker)[0])
        probe = subprocess.Popen(["bash", "-c", f"source {SETUP}; PLATFORM_TRY_S=2; PATH={fake}:$PATH; "
                                  "platform_try ptrace >/dev/null && echo works || echo fails"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = probe.communicate(timeout=60)
        assert out.strip() == "fails", (out, err)
        assert t.is_alive(), "the run ended before the probe's kill: nothing was tested"
        child, fake_pid = int((tmp_path / "child").read_text()), int((tmp_path / "self").read_text())
        assert not alive(child) and not alive(fake_pid), "the probe's own processes survived"
        assert alive(decoy.pid), "a process that only looks like a probe was killed"
        assert alive(sandbox), "a sandbox was killed by the platform probe"
    finally:
        if probe:
            probe.kill()
        decoy.kill()
        decoy.wait()
        t.join(60)
    status, body = result["r"]
    assert status == 200 and body["run"]["stdout"] == "done\n" and body["run"]["exitCode"] == 0, body


@pytest.mark.attack("an aborted egress probe next to processes whose command lines contain or resemble its container id",
                    "only the processes naming its exact 64-hex container id are killed")
def test_mode_probe_kills_only_processes_naming_its_container():
    """egress.sh kills what an aborted egress probe left by its container id:
    an argv element that is the id or has it as a path component, nothing
    that merely contains or resembles it."""
    cid = uuid.uuid4().hex + uuid.uuid4().hex
    others = [cid[:-1] + ("0" if cid[-1] != "0" else "1"), "x" + cid, cid + "x"]
    def sleeper(arg):  # a process with arg as one element of its argv
        return subprocess.Popen(["/usr/bin/python3", "-c", "import time; time.sleep(300)", arg])
    mine = [sleeper(cid), sleeper(f"--log=/run/x/{cid}/log.json")]
    theirs = [sleeper(o) for o in others]
    try:
        time.sleep(0.3)
        r = bash(f"source {EGRESS}; kill_container_processes {cid}")
        assert r.returncode == 0, r.stderr
        for p in mine:
            assert p.wait(5) == -signal.SIGKILL
        assert all(p.poll() is None for p in theirs), "a process not naming the container was killed"
    finally:
        for p in mine + theirs:
            p.kill()
            p.wait()


# --- the runsc-egress wrapper ---------------------------------------------

RECORDER = """#!/bin/bash
# Stands in for runsc: records its argv; `create ... --pid-file P ID`
# writes the pid file as runsc does.
printf '%s\\n' "$*" >>{log}
if [ $# -ge 3 ] && [ "${{@: -3:1}}" = --pid-file ]; then
	echo {pid} >"${{@: -2:1}}"
fi
exit {rc}
"""


@pytest.fixture
def wrapper(tmp_path):
    """The wrapper as egress.sh writes it, around a recording fake runsc."""
    def make(pid=1, rc=0):
        log = tmp_path / "argv.log"
        fake = tmp_path / "runsc"
        fake.write_text(RECORDER.format(log=log, pid=pid, rc=rc))
        fake.chmod(0o755)
        text = bash(f"source {EGRESS}; wrapper_text").stdout
        assert "@RUNSC@" in text
        path = tmp_path / "runsc-egress"
        path.write_text(text.replace("@RUNSC@", str(fake)))
        path.chmod(0o755)
        return path, log
    return make


def test_wrapper_passes_other_commands_through(wrapper):
    path, log = wrapper()
    argv = ["--platform=ptrace", "--root", "/run/r", "--log", "/run/l.json", "--log-format", "json",
            "start", "abc"]
    r = subprocess.run([str(path)] + argv, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert log.read_text() == " ".join(argv) + "\n"


def test_wrapper_refuses_a_create_it_cannot_place(wrapper, tmp_path):
    path, log = wrapper()
    # "create" as a flag's value, or after an unknown flag with a value:
    # the wrapper cannot tell which word is the command, so it refuses.
    r = subprocess.run([str(path), "--root", "create", "--log", str(tmp_path / "l.json"), "state", "x"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "cannot tell the command" in r.stderr, r.stderr
    assert not log.exists(), "runsc ran"
    r = subprocess.run([str(path), "--root", "/r", "create", "--bundle", "/b", "abc"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "without --pid-file" in r.stderr, r.stderr
    assert not log.exists(), "runsc ran"


def test_wrapper_fails_closed(wrapper, tmp_path):
    """runsc create succeeds, but the pid it names is not this container's
    sandbox (here: init): no limit can be set, so the sandbox is deleted,
    create fails, and containerd's log says why."""
    path, log = wrapper(pid=1)
    cid = "c" + uuid.uuid4().hex
    runlog = tmp_path / "log.json"
    r = subprocess.run([str(path), "--platform=ptrace", "--root", "/r", "--log", str(runlog), "--log-format",
                        "json", "create", "--bundle", "/b", "--pid-file", str(tmp_path / "init.pid"), cid],
                       capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    assert "no sandbox process (1)" in r.stderr and "the sandbox is deleted" in r.stderr, r.stderr
    calls = log.read_text().splitlines()
    assert calls[0].split()[-1] == cid and " create " in calls[0]
    assert calls[1] == f"--platform=ptrace --root /r --log {runlog} --log-format json delete --force {cid}", calls
    assert '"level":"error","msg":"runsc-egress: no sandbox process (1)' in runlog.read_text()


def test_egress_runs_use_the_wrapper():
    """The installed egress runtime is the wrapper (and so has its limits)."""
    runtimes = json.loads(subprocess.run(["docker", "info", "--format", "{{json .Runtimes}}"],
                                         check=True, capture_output=True, text=True).stdout)
    conf = subprocess.run([os.path.join(PREFIX, "bin", "isobox-fcgi"), "--conf",
                           os.path.join(PREFIX, "conf", "isobox.yaml"), "--egress", "plan"],
                          check=True, capture_output=True, text=True).stdout
    name = re.search(r"^runtime=(\S+)$", conf, re.M).group(1)
    assert runtimes[name]["path"] == "/usr/local/lib/isobox/runsc-egress", runtimes[name]
    assert run_ok("print('ok')", network=True)["stdout"] == "ok\n"


def test_setup_says_which_backends_this_host_can_run():
    """setup.sh detects KVM by making a VM, as Firecracker would need to;
    the test asks the kernel the same question itself."""
    import fcntl
    out = bash(f"source {SETUP}; backends ptrace").stdout
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert set(lines) == {"gvisor", "runc", "firecracker"}, out
    assert lines["gvisor"] == "yes (runsc, platform ptrace)", out
    assert lines["runc"].startswith("yes (conf backend: runc"), out  # runc comes with docker.io
    try:
        fd = os.open("/dev/kvm", os.O_RDWR)
        try:
            kvm = fcntl.ioctl(fd, 0xAE00) == 12      # KVM_GET_API_VERSION
            os.close(fcntl.ioctl(fd, 0xAE01, 0))     # KVM_CREATE_VM
        finally:
            os.close(fd)
    except OSError:
        kvm = False
    assert lines["firecracker"].startswith("KVM works here" if kvm else "no (KVM does not work here"), out


def test_setup_registers_the_runc_backends_runtime():
    """The runc backend's runtime is there whichever backend runs (switching
    is a conf change); the sandbox user's host id is isobox-runc's own
    (sandbox/uids.h), so that volumes made for runc are that id's."""
    with open("/etc/docker/daemon.json") as f:
        entry = json.load(f)["runtimes"]["isobox-runc"]
    assert entry == {"path": os.path.join(PREFIX, "bin", "isobox-runc"),
                     "runtimeArgs": ["--isobox-runc=/usr/sbin/runc"]}, entry
    runtimes = json.loads(subprocess.run(["docker", "info", "--format", "{{json .Runtimes}}"],
                                         check=True, capture_output=True, text=True).stdout)
    assert runtimes["isobox-runc"]["path"] == entry["path"], runtimes


def test_setup_installs_the_2024_runsc_and_nothing_else_from_backports():
    """runsc is bookworm-backports' 2024-07-29 snapshot, installed by
    version; every other package of that suite stays at priority 1, so
    that nothing else comes from it."""
    setup = open(SETUP).read()
    version = re.search(r"(?m)^RUNSC_VERSION=(\S+)$", setup).group(1)
    installed = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "runsc"], capture_output=True, text=True).stdout
    assert installed == version and version.startswith("0.0~20240729"), (installed, version)
    assert subprocess.run(["runsc", "--version"], capture_output=True, text=True).stdout.startswith(
        "runsc version 0.0~20240729")
    # An upgrade of everything takes nothing from backports, though it has
    # newer versions of installed packages (systemd, qemu, ...): they are
    # pinned to 1, runsc (and only runsc) to its version.
    upgrade = subprocess.run(["apt-get", "-s", "-o", "Debug::NoLocking=1", "dist-upgrade"],
                             capture_output=True, text=True)
    assert upgrade.returncode == 0 and "bookworm-backports" not in upgrade.stdout, upgrade.stdout
    policy = subprocess.run(["apt-cache", "policy", "systemd", "runsc"], capture_output=True, text=True).stdout
    assert re.search(r"(?m)^ +1 http://deb.debian.org/debian bookworm-backports", policy), policy
    assert re.search(r"(?m)^ \*\*\* " + re.escape(version) + " 990$", policy), policy
    daemon = json.load(open("/etc/docker/daemon.json"))["runtimes"]["runsc-untrusted"]
    assert daemon["path"] == "/usr/bin/runsc", daemon


def test_setup_keeps_working_when_backports_cannot_be_reached(tmp_path):
    """No backports (a fake apt-get that cannot fetch runsc's version): a
    warning, the sources and pin taken away again, and Debian 12's runsc
    installed instead of nothing."""
    fake = tmp_path / "bin"
    fake.mkdir()
    calls = tmp_path / "apt-calls"
    (fake / "apt-get").write_text(f"""#!/bin/sh
echo "$*" >> {calls}
case "$*" in *runsc=*) echo "E: Version not found" >&2; exit 100 ;; esac
exit 0
""")
    (fake / "dpkg-query").write_text("#!/bin/sh\nexit 1\n")  # nothing installed
    for f in ("apt-get", "dpkg-query"):
        (fake / f).chmod(0o755)
    r = bash(f"source {SETUP}; BACKPORTS_SOURCES={tmp_path}/bp.sources BACKPORTS_PIN={tmp_path}/bp.pin; "
             f"PATH={fake}:$PATH; install_runsc && echo finished")
    assert r.returncode == 0 and r.stdout.strip() == "finished", (r.stdout, r.stderr)
    assert "warning: runsc 0.0~20240729" in r.stderr and "Debian 12's runsc" in r.stderr, r.stderr
    assert not (tmp_path / "bp.sources").exists() and not (tmp_path / "bp.pin").exists()
    installs = [line for line in calls.read_text().splitlines() if line.startswith("install")]
    assert len(installs) == 2 and "runsc=0.0~20240729" in installs[0], installs
    assert installs[1].split()[-1] == "runsc", installs  # bookworm's, by name


def test_setup_chose_the_platform_by_measuring_it():
    """The platform in runsc's runtime is the one setup measured fastest
    here, and the cache says what each one took (or why it did not run)."""
    platform, version, why, wanted = open("/var/lib/isobox/platform").read().splitlines()[:4]
    assert version.startswith("runsc version 0.0~20240729") and wanted == "auto", (version, wanted)
    took = {p: int(ms) for p, ms in re.findall(r"(\w+): (\d+)ms", why)}
    assert "ptrace" in took and platform == min(took, key=took.get), why
    assert "kvm:" in why and "systrap:" in why, why  # each one was at least considered
    daemon = json.load(open("/etc/docker/daemon.json"))["runtimes"]["runsc-untrusted"]
    assert f"--platform={platform}" in daemon["runtimeArgs"], daemon


def isobox_runc(tmp_path, spec, *argv):
    """isobox-runc with a fake runc that records its argv and the spec it
    was given; returns (process, runc's argv or None, the spec runc saw)."""
    bundle = tmp_path / "bundle"
    bundle.mkdir(exist_ok=True)
    (bundle / "config.json").write_text(json.dumps(spec))
    record = tmp_path / "runc-argv"
    fake = tmp_path / "runc"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}\ncp config.json {tmp_path}/seen.json 2>/dev/null\n')
    fake.chmod(0o755)
    p = subprocess.run([os.path.join(PREFIX, "bin", "isobox-runc"), f"--isobox-runc={fake}", *[a.replace("BUNDLE", str(bundle)) for a in argv]],
                       capture_output=True, text=True, cwd=bundle)
    called = record.read_text().splitlines() if record.exists() else None
    seen = json.loads((bundle / "config.json").read_text())
    return p, called, seen


SANDBOX_SPEC = {"ociVersion": "1.0.2", "process": {"user": {"uid": 65534, "gid": 65534}},
                "linux": {"resources": {"memory": {"limit": 1 << 28}},
                          "namespaces": [{"type": "mount"}, {"type": "network"}, {"type": "pid"}]}}


def test_isobox_runc_gives_each_sandbox_a_user_namespace_then_runs_runc(tmp_path):
    log = tmp_path / "log.json"
    p, called, spec = isobox_runc(tmp_path, SANDBOX_SPEC, "--root", "/r", "--log", str(log), "--log-format",
                                  "json", "create", "--bundle", "BUNDLE", "--pid-file", "/p", "cid1")
    assert p.returncode == 0, p.stderr
    # runc gets its own argv, without isobox-runc's flags, and the changed spec.
    assert called == ["--root", "/r", "--log", str(log), "--log-format", "json", "create", "--bundle",
                      str(tmp_path / "bundle"), "--pid-file", "/p", "cid1"], called
    assert {"type": "user"} in spec["linux"]["namespaces"], spec
    assert spec["linux"]["uidMappings"] == [{"containerID": 0, "hostID": 0, "size": 1},
                                            {"containerID": 65534, "hostID": 165534, "size": 1}], spec
    assert spec["hooks"]["prestart"] == [{"path": os.path.join(PREFIX, "bin", "isobox-runc"),
                                          "args": ["isobox-runc", "--isobox-hook=prestart"]}], spec
    # Any other command goes to runc untouched, and the spec too.
    (tmp_path / "runc-argv").unlink()
    p, called, spec = isobox_runc(tmp_path, SANDBOX_SPEC, "--root", "/r", "state", "cid1")
    assert p.returncode == 0 and called == ["--root", "/r", "state", "cid1"], (p.stderr, called)
    assert spec == SANDBOX_SPEC


def test_isobox_runc_refuses_what_is_not_a_sandbox(tmp_path):
    """A container as root, or a create it cannot recognise, never reaches
    runc; the reason goes to runc's log, where docker reads it."""
    log = tmp_path / "log.json"
    root = json.loads(json.dumps(SANDBOX_SPEC))
    root["process"]["user"] = {"uid": 0, "gid": 0}
    p, called, spec = isobox_runc(tmp_path, root, "--log", str(log), "create", "--bundle", "BUNDLE", "c2")
    assert p.returncode == 1 and called is None and spec == root, (p.stderr, called)
    line = json.loads(log.read_text().splitlines()[-1])
    assert line["level"] == "error" and "not a sandbox" in line["msg"], line
    p, called, _ = isobox_runc(tmp_path, SANDBOX_SPEC, "--unknown-flag", "value", "create", "c3")
    assert p.returncode == 1 and called is None and "cannot tell the command" in p.stderr, p.stderr


def setup_lists():
    """setup.sh's package sets, as it reads them (sourced: functions and
    variables only)."""
    names = ["BUILD_PACKAGES", "SERVE_PACKAGES", "CLUSTER_PACKAGES", "TEST_PACKAGES", "PACKAGED_SERVICES"]
    out = subprocess.run(["bash", "-c", f"source {SETUP} && " + " && ".join(f'echo "${n}" | xargs' for n in names)],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    return {n: line.split() for n, line in zip(names, out)}


def test_serving_installs_only_what_serves():
    """`make run` (setup.sh without options) installs what serving needs:
    no second web server, browser, test runner, compiler for fuzzers,
    systemd or Redis; `make test` adds those, and each has its reason
    written beside it."""
    sets = setup_lists()
    serve, test = set(sets["SERVE_PACKAGES"]), set(sets["TEST_PACKAGES"])
    assert set(sets["BUILD_PACKAGES"]) <= serve
    assert not serve & {"apache2", "nginx-light", "lighttpd", "chromium", "prometheus", "clang", "python3-pytest",
                        "systemd", "redis-server", "nodejs", "npm", "node-typescript", "libfcgi-bin"}, serve
    assert set(sets["CLUSTER_PACKAGES"]) <= test and "redis-server" in sets["CLUSTER_PACKAGES"]
    text = open(SETUP).read()
    comments = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    for p in sorted((serve - set(sets["BUILD_PACKAGES"])) | test):  # the build set: one comment
        assert re.search(rf"(?<![\w.-]){re.escape(p)}(?![\w.-])", comments), f"setup.sh says not why it installs {p}"
    # A service that a test package would start is stopped and disabled.
    for entry in sets["PACKAGED_SERVICES"]:
        assert entry.split(":")[0] in test | {"valkey-server"}, entry  # Valkey: install_valkey, pinned
    for server in ("apache2", "nginx-light", "lighttpd", "redis-server", "prometheus"):
        assert any(e.startswith(server + ":") for e in sets["PACKAGED_SERVICES"]), server
    make = subprocess.run(["make", "-n", "-C", REPO, "setup"], capture_output=True, text=True, check=True).stdout
    assert "deploy/setup.sh \n" in make or make.rstrip().endswith("deploy/setup.sh"), make
    make = subprocess.run(["make", "-n", "-C", REPO, "setup", "SETUP_OPTIONS=--test"], capture_output=True,
                          text=True, check=True).stdout
    assert "deploy/setup.sh --test" in make, make
