"""The warm pool (sandbox/warm.c): sandboxes started ahead by the master,
taken by one request each and removed after it.

The rest of the suite runs with the warm pool off (conftest.service_up);
this module turns it on (two python sandboxes) and off again."""
import concurrent.futures
import os
import re
import signal
import subprocess

import pytest

import docker_api
from conftest import (INSTANCE, LOG_DIR, alive, execute, pool_master, restart_pool, run_ok, set_warm,
                      wait_until, workers)
from metrics_util import deltas, scrape, value

WARM = 2     # python
WARM_JS = 1
# One process under python's default pids: a request that must run cold
# (RLIMIT_NPROC is set when a warm sandbox starts) and that no program here
# can tell from a default one.
COLD = {"limits": {"pids": 127}}


def warm_containers(state=None):
    """Names of this instance's warm containers (state: "running", ...)."""
    return sorted(c["name"] for c in docker_api.containers(f"isobox.instance={INSTANCE}", "isobox.kind=warm")
                  if state is None or c["state"] == state)


def ready(language="python"):
    return value(scrape()[1], "isobox_warm_ready", language=language)


def full():
    return wait_until(lambda: ready() == WARM and ready("javascript") == WARM_JS, 60)


@pytest.fixture(scope="module", autouse=True)
def warm_pool():
    set_warm("{python: %d, javascript: %d}" % (WARM, WARM_JS))
    assert full(), "the warm pool did not fill"
    yield
    set_warm()


def both(code, language="python", **extra):
    """Run the same request warm, then cold; return both results."""
    assert full()
    status, warm = execute(dict({"language": language, "code": code}, **extra))
    assert status == 200 and warm["warm"] is True, warm
    body = dict({"language": language, "code": code}, **extra)
    body["limits"] = dict(extra.get("limits", {}), **COLD["limits"])
    status, cold = execute(body)
    assert status == 200 and cold["warm"] is False, cold
    return warm, cold


# What a program can look at, warm against cold. The ones that run to their
# end share one program (a boot is what the suite's time is made of; the
# assertion names the key that differs); those that end otherwise
# (raise, exit, a syntax error) or read stdin another way have one each.
TO_ITS_END = "argv, name and file, main module, stdin, fork, files, environment, atexit and threads"
SAME = {
    TO_ITS_END: (
        "import atexit, os, sys, threading, time\n"
        "print(sys.argv, sys.orig_argv[1:])\n"
        "print(__name__, __file__, sys.path[0], os.getcwd(), os.getpid())\n"
        "x = 1\nprint(sys.modules['__main__'].x, __doc__, __package__, __spec__, type(__loader__).__name__,"
        " sorted(globals()))\n"
        "data = sys.stdin.read(); print(repr(data), sys.stdin.isatty())\n"
        "sys.stdout.flush()  # the child's flush must not print the parent's lines again\n"
        "pid = os.fork()\nif pid == 0:\n    print('child', flush=True); os._exit(4)\n"
        "_, st = os.waitpid(pid, 0); print('parent', os.WEXITSTATUS(st))\n"
        "open('out.txt', 'w').write('x')\nos.makedirs('d/e')\n"
        "print(sorted(os.listdir('.')), oct(os.stat('main.py').st_mode), oct(os.stat('d').st_mode))\n"
        "print(sorted(os.environ.items()))\n"
        "atexit.register(lambda: print('atexit'))\n"
        "t = threading.Thread(target=lambda: (time.sleep(0.2), print('thread')))\n"
        "t.start(); print('main')",
        {"args": ["a b", "-x", ""], "stdin": "line one\nline two\n\tend"}),
    "stdin by fd": ("import os; print(os.read(0, 100), os.read(0, 100))", {"stdin": "abc"}),
    "raise": ("def f():\n    raise ValueError('bad')\nf()", {}),
    "sys.exit(3)": ("import sys; print('bye'); sys.exit(3)", {}),
    "sys.exit(text)": ("import sys; sys.exit('a message')", {}),
    "exit 256 and os._exit": ("import os, sys; sys.stdout.flush(); os._exit(7)", {}),
    "syntax error": ("print('x'\n", {}),
    "several files": ("import helper; print(helper.X)",
                      {"files": [{"name": "helper.py", "content": "X = 42"}]}),
    "excepthook": ("import sys\nsys.excepthook = lambda *a: print('hooked', a[0].__name__)\n1/0", {}),
}


@pytest.mark.parametrize("case", SAME)
def test_a_program_cannot_tell_warm_from_cold(case):
    code, extra = SAME[case]
    if "files" in extra:
        extra = {"files": [{"name": "main.py", "content": code}] + extra["files"]}
        code = None
    body = {k: v for k, v in extra.items()}
    warm, cold = both(code, **body) if code else both_files(body)
    for key in ("stdout", "stderr", "exitCode", "timedOut", "oomKilled"):
        assert warm["run"][key] == cold["run"][key], (key, warm["run"], cold["run"])
    if case == TO_ITS_END:  # the shared program ran to its end on both
        assert cold["run"]["exitCode"] == 0 and cold["run"]["stdout"].endswith("main\nthread\natexit\n"), cold


def both_files(body):
    assert full()
    status, warm = execute(dict({"language": "python"}, **body))
    assert status == 200 and warm["warm"] is True, warm
    status, cold = execute(dict({"language": "python", **COLD}, **body))
    assert status == 200 and cold["warm"] is False, cold
    return warm, cold


SAME_JS = {
    "argv and main, files, environment, stdin": (
        "console.log(process.argv.slice(1), require.main === module, __filename, process.cwd(), process.pid)\n"
        "const fs = require('fs'); fs.writeFileSync('o.txt', 'x');\n"
        "console.log(fs.readdirSync('.').sort(), (fs.statSync('main.js').mode & 0o777).toString(8))\n"
        "console.log(Object.keys(process.env).sort().map(k => k + '=' + process.env[k]))\n"
        "let d = ''; process.stdin.on('data', c => d += c).on('end', () => console.log(JSON.stringify(d)))",
        {"args": ["a b", "-x"], "stdin": "one\ntwo"}),
    "exit code": ("console.log('bye'); process.exit(3)", {}),
    # alone: when a timer fires against setImmediate depends on what else runs
    "timers": ("setImmediate(() => console.log('immediate')); setTimeout(() => console.log('timeout'), 0); "
               "Promise.resolve().then(() => console.log('promise')); process.nextTick(() => console.log('tick'))", {}),
}


@pytest.mark.parametrize("case", SAME_JS)
def test_a_javascript_program_cannot_tell_warm_from_cold(case):
    code, extra = SAME_JS[case]
    warm, cold = both(code, language="javascript", **extra)
    for key in ("stdout", "stderr", "exitCode"):
        assert warm["run"][key] == cold["run"][key], (key, warm["run"], cold["run"])


def test_a_javascript_throw_reads_the_same_but_for_the_last_frame():
    # Known difference (sandbox/agent/node.js): the warm stack ends one frame
    # early, at Module.runMain.
    warm, cold = both("function f() { throw new Error('bad') }\nf()", language="javascript")
    assert warm["run"]["exitCode"] == cold["run"]["exitCode"] == 1
    w, c = warm["run"]["stderr"].splitlines(), cold["run"]["stderr"].splitlines()
    assert any("run_main_module" in line for line in c), c
    assert w == [line for line in c if "run_main_module" not in line], (w, c)


def test_preloaded_modules_are_there_and_the_run_is_fresh():
    assert full()
    status, r = execute({"language": "python", "code":
                         "import sys; print('pandas' in sys.modules)\nimport pandas as pd\n"
                         "print(pd.DataFrame({'a': [1, 2]}).sum().to_dict())"})
    assert status == 200 and r["warm"] and r["run"]["stdout"] == "True\n{'a': 3}\n", r


def test_per_request_limits_hold_on_the_warm_path():
    assert full()
    status, r = execute({"language": "python", "code": "import time; time.sleep(5)",
                         "limits": {"wallTimeMs": 500}})
    assert status == 200 and r["warm"] and r["run"]["timedOut"] and r["run"]["durationMs"] < 2500, r
    assert full()
    status, r = execute({"language": "python", "code": "print('x' * 5000)",
                         "limits": {"outputBytes": 100}})
    assert status == 200 and r["warm"] and r["run"]["truncated"] and len(r["run"]["stdout"]) == 100, r
    assert full()
    status, r = execute({"language": "python", "code": "b = bytearray(400 << 20); print('no')"})
    assert status == 200 and r["warm"] and r["run"]["oomKilled"] and r["run"]["stdout"] == "", r
    assert full()
    # The process limit is the sandbox's RLIMIT_NPROC, the request's default,
    # as a cold run's. (A fork loop is bounded here too, but by memory first:
    # each child of an interpreter that imported pandas ahead costs more
    # than a cold one's.)
    code = "import resource; print(resource.getrlimit(resource.RLIMIT_NPROC))"
    status, r = execute({"language": "python", "code": code})
    assert status == 200 and r["warm"] and r["run"]["stdout"] == "(128, 128)\n", r
    status, r = execute({"language": "python", "code": code, "limits": {"pids": 64}})
    assert status == 200 and not r["warm"] and r["run"]["stdout"] == "(64, 64)\n", r


def test_what_a_warm_sandbox_cannot_serve_runs_cold_and_is_counted():
    before = scrape()[1]
    assert full()
    status, r = execute({"language": "python", "code": "print(1)", "limits": {"pids": 64}})
    assert status == 200 and r["warm"] is False and r["coldReason"] == "limits", r
    status, r = execute({"language": "python", "code": "print(1)"})
    assert status == 200 and r["warm"] is True and "coldReason" not in r, r
    status, r = execute({"language": "bash", "code": "echo 1"})
    assert status == 200 and r["warm"] is False and "coldReason" not in r, r  # no pool for bash
    d = deltas(before, scrape()[1])
    assert d("isobox_warm_misses_total", language="python", reason="limits") == 1
    assert d("isobox_warm_hits_total", language="python") == 1
    assert d("isobox_warm_misses_total", language="bash", reason="empty") == 0, "bash has no pool"
    _, now = scrape()
    assert value(now, "isobox_warm_target", language="python") == WARM
    assert value(now, "isobox_warm_refills_total", language="python") >= WARM


def test_each_sandbox_serves_one_request_and_is_removed():
    assert full()
    before = set(warm_containers())
    status, r = execute({"language": "python", "code": "print(1)"})
    assert status == 200 and r["warm"], r
    # The used one is removed by the master; a new one takes its place.
    assert wait_until(lambda: len(set(warm_containers()) - before) == 1
                      and len(before - set(warm_containers())) == 1, 30), warm_containers()
    assert full()


def test_a_burst_larger_than_the_pool_goes_cold_without_waiting():
    assert full()
    before = scrape()[1]
    code = "import time; time.sleep(1); print('ok')"
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        results = list(ex.map(lambda _: execute({"language": "python", "code": code}), range(4)))
    assert all(s == 200 and r["run"]["stdout"] == "ok\n" for s, r in results), results
    warm = sum(r["warm"] for _, r in results)
    assert 1 <= warm <= WARM, results
    d = deltas(before, scrape()[1])
    assert d("isobox_warm_misses_total", language="python", reason="empty") == 4 - warm
    assert full()


def own_cgroups():
    """The warm sandboxes' own cgroups (sandbox/cgroup.h): name -> (memory
    limit, cpu quota)."""
    mem, cpu = "/sys/fs/cgroup/memory/isobox.slice", "/sys/fs/cgroup/cpu/isobox.slice"
    found = {}
    for name in os.listdir(mem):
        if name.startswith(f"isobox-{INSTANCE}-"):
            try:
                with open(f"{mem}/{name}/memory.limit_in_bytes") as m, open(f"{cpu}/{name}/cpu.cfs_quota_us") as q:
                    found[name] = (int(m.read()), int(q.read()))
            except OSError:
                pass
    return found


def test_the_master_killed_leaves_no_warm_sandbox_running():
    assert full()
    names = warm_containers()
    assert len(names) == WARM + WARM_JS
    master = pool_master()
    pool = workers() + workers("isobox-status")
    assert pool
    os.kill(master, signal.SIGKILL)
    # Its workers stop with it (PR_SET_PDEATHSIG): no orphan keeps serving.
    assert wait_until(lambda: not [p for p in pool if alive(p)], 20), pool
    # Its docker clients die with it; the agents see end of file and exit.
    assert wait_until(lambda: not set(names) & set(warm_containers("running")), 30), warm_containers()
    restart_pool()
    # The next master reaps what the dead one owned: its containers, and
    # the cgroups they ran in (the CI run on bb96ec6 found one of a killed
    # cluster host's left: only those older than a start were reaped then).
    assert wait_until(lambda: not set(names) & set(warm_containers()), 30), warm_containers()
    assert wait_until(lambda: not set(names) & set(own_cgroups()), 15), own_cgroups()
    assert full()
    assert run_ok("print('back')")["stdout"] == "back\n"


@pytest.mark.alone("it rewrites the images lock that every pool reads")  # shards.py
def test_a_rebuilt_image_replaces_the_warm_sandboxes():
    lock_path = "/var/lib/isobox/images.lock"
    with open(lock_path) as f:
        lock = f.read()
    old_id = re.search(r'(?m)^  python: \{id: "(sha256:[0-9a-f]{64})"', lock).group(1)
    # A derived image stands for a rebuild: same content, a new ID.
    build = subprocess.run(["docker", "build", "-q", "--label", "isobox.test=rebuilt", "-"],
                           input=f"FROM {old_id}\n", capture_output=True, text=True, check=True)
    new_id = build.stdout.strip()
    assert new_id.startswith("sha256:") and new_id != old_id
    try:
        with open(lock_path, "w") as f:
            f.write(lock.replace(old_id, new_id))
        os.kill(pool_master(), signal.SIGHUP)

        def images():
            names = warm_containers("running")
            if not names:
                return set()
            out = subprocess.run(["docker", "inspect", "--format", "{{.Image}}"] + names,
                                 capture_output=True, text=True).stdout
            return set(out.split())
        assert wait_until(lambda: new_id in images() and old_id not in images() and full(), 60), images()
        status, r = execute({"language": "python", "code": "print(1)"})
        assert status == 200 and r["warm"], r
    finally:
        with open(lock_path, "w") as f:
            f.write(lock)
        os.kill(pool_master(), signal.SIGHUP)
        assert wait_until(lambda: old_id in images() and new_id not in images() and full(), 60), images()
        subprocess.run(["docker", "rmi", new_id], capture_output=True)


def test_pool_events_are_logged():
    with open(os.path.join(LOG_DIR, "isobox.log")) as f:
        log = f.read()
    assert "warm pool: 3 sandbox(es) in all" in log


def test_a_streamed_warm_run_is_a_proper_stream():
    """The stream's headers come first: a warm sandbox is up from the
    hand-over, and a heartbeat sent before the program started once went
    out ahead of them (the headers then landed in the body)."""
    from conftest import URL
    from streaming import chunk_bytes, events, open_stream
    assert full()
    conn, resp = open_stream({"language": "python", "code": "import time\ntime.sleep(1.5)\nprint('late')"}, URL)
    try:
        assert resp.status == 200 and resp.headers["Content-Type"] == "text/event-stream"
        evs = list(events(resp))
    finally:
        conn.close()
    assert b"".join(chunk_bytes(d) for _, n, d in evs if n == "stdout") == b"late\n"
    assert evs[-1][1] == "result" and '"warm":true' in evs[-1][2].replace(" ", "")


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_warm_lines_arrive_as_written_without_a_flush(language):
    """The warm agent runs the program in an interpreter started with the
    image's settings, so its lines stream as a cold run's do."""
    import streaming
    from conftest import URL
    from test_runtime_behaviour import SPACED
    assert full()
    resp, evs = streaming.collect({"language": language, "code": SPACED[language]}, URL)
    assert streaming.assert_spaced(language, evs)["warm"] is True, evs[-1]


# Allocate and touch N MiB, page by page.
TOUCH = "n = {mib} << 20\nb = bytearray(n)\nfor i in range(0, n, 4096):\n    b[i] = 1\nprint('ok')"


@pytest.mark.parametrize("memory_mib", [64, 256, 512])
def test_a_warm_run_gets_the_memory_it_asked_for(memory_mib):
    """Its memory less 40 MiB, allocated and touched: fine warm and cold
    (the preloads are charged beside the program, not against it)."""
    code = TOUCH.format(mib=memory_mib - 40)
    # Cold, touching 472 MiB takes 4 s on an idle 2-core host and went past
    # the default 10 s on a loaded one: the wall time is the ceiling's, as
    # this is about memory.
    warm, cold = both(code, limits={"memoryBytes": memory_mib << 20, "wallTimeMs": 20000})
    assert warm["run"]["stdout"] == "ok\n" and not warm["run"]["oomKilled"], str(warm["run"])
    assert cold["run"]["stdout"] == "ok\n" and not cold["run"]["oomKilled"], str(cold["run"])


READY = ((512 + 256) << 20, 200000)  # the ceilings + preloadBytes, and the cpu ceiling


def test_a_warm_run_has_its_own_memory_and_cpus_set_on_its_sandbox():
    assert full()
    # Start from a settled pool: the sandboxes earlier tests used are gone
    # (their cgroups go when their containers do), every one left is ready.
    assert wait_until(lambda: len(own_cgroups()) == WARM + WARM_JS and
                      all(v == READY for v in own_cgroups().values()), 30), own_cgroups()
    before = own_cgroups()
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        running = ex.submit(execute, {"language": "python", "code": "import time; time.sleep(3)",
                                      "limits": {"memoryBytes": 100 << 20, "cpus": 0.5}})
        assert wait_until(lambda: any(q == 50000 for _, q in own_cgroups().values()), 5), own_cgroups()
        during = own_cgroups()
        status, r = running.result(timeout=30)
    assert status == 200 and r["warm"] is True and r["limits"]["cpus"] == 0.5, r
    taken = [name for name, (_, q) in during.items() if q == 50000]
    assert len(taken) == 1 and taken[0] in before, (before, during)
    memory = during[taken[0]][0]
    # Its own 100 MiB above what the sandbox held (its preloads), no more.
    assert (100 << 20) < memory < (100 << 20) + (256 << 20), memory
    # The ready ones wait with room for any request (ceilings + preloadBytes),
    # the refill among them. One may be starting just then (one that aged
    # out at warm.maxAgeMs is replaced at any time), and its cgroup is made
    # before its limits are written: a whole run once saw one between the
    # two (no limit yet). So the state is waited for; a limit never
    # written fails.
    assert wait_until(lambda: all(v == READY for name, v in own_cgroups().items() if name != taken[0]), 10), \
        own_cgroups()
    assert wait_until(lambda: len(own_cgroups()) == WARM + WARM_JS, 30), own_cgroups()
