"""Attacks on what bounds a session step: the session's maxLifetimeMs,
however busy it is kept, and the processes a stopped step started, however
they left its process group. Each asserts the specific safe outcome."""
import concurrent.futures
import os
import signal
import time

import pytest

from conftest import pool_master, request, workers
from sessions_util import SESSIONS_DIR, create, delete, gone_without_trace, session_containers, step, step_ok

attack = pytest.mark.attack

# Every process of the sandbox as "pid argv...", from /proc (no ps in the
# images); the step itself and its shell are left out.
PROCS = ("for p in /proc/[0-9]*; do a=$(tr '\\0' ' ' < $p/cmdline 2>/dev/null) && "
         "echo \"${p#/proc/} $a\"; done | grep -v -e 'for p in' -e '^[0-9]* $' || true")


def processes(sid):
    out = step_ok(sid, PROCS, limits={"wallTimeMs": 10000})["run"]["stdout"]
    return [line.split(" ", 1)[1] for line in out.splitlines() if " " in line]


def sleeps(sid, *marks):
    return [p for p in processes(sid) if p.startswith("sleep ") and p.split()[1] in marks]


def over_by_lifetime(status, body):
    """A step that met the session's end: refused (410) or cut there."""
    if status == 410:
        return body["error"]["code"] == "session_expired" and "maxLifetimeMs" in body["error"]["message"]
    return (status == 200 and "maxLifetimeMs" in body["session"].get("ended", "")
            and (body["run"]["timedOut"] or body["run"]["exitCode"] == 0))


@attack("session: steps kept running back to back past maxLifetimeMs (1 s)",
        "no step runs past the session's end: each is cut there (timedOut, session.ended) or refused (410); "
        "the session is gone by its end")
def test_back_to_back_steps_do_not_outlive_the_session():
    t0 = time.monotonic()
    sid = create(language="bash", maxLifetimeMs=1000)["id"]
    answers = []
    for n in range(3):
        status, body = step(sid, f"sleep 20; echo step{n}", limits={"wallTimeMs": 30000})
        answers.append((status, body, time.monotonic() - t0))
    try:
        for status, body, at in answers:
            assert over_by_lifetime(status, body), (status, body)
            # The end, plus the create's and the answer's own time (5 s
            # on a loaded host): well before a step's 20 s.
            assert at < 1 + 15, answers
            if status == 200:
                assert "step" not in body["run"]["stdout"], body
        status, _, body = request("GET", f"/v1/sessions/{sid}")
        assert status == 410 and "maxLifetimeMs" in body["error"]["message"], body
        assert gone_without_trace(sid, timeout=5)
    finally:
        delete(sid)


@attack("session: one long step past maxLifetimeMs (5 s) with a 20 s wallTimeMs",
        "cut at the session's end: timedOut, session.ended says maxLifetimeMs, output so far kept; "
        "the next step is 410 and never starts")
def test_a_long_step_is_cut_at_the_session_end():
    sid = create(language="bash", maxLifetimeMs=5000)["id"]
    created = time.monotonic()
    try:
        status, r = step(sid, "echo before; sleep 30; echo after", limits={"wallTimeMs": 20000})
        took = time.monotonic() - created
        assert status == 200, r
        assert r["run"]["timedOut"] and r["run"]["stdout"] == "before\n", r
        assert "maxLifetimeMs (5000)" in r["session"]["ended"], r
        assert took < 5 + 10, took  # the end plus the answer's time, not the 20 s wall
        status, r = step(sid, "touch /workspace/never")
        assert status == 410 and r["error"]["code"] == "session_expired", r
        assert gone_without_trace(sid, timeout=5)
    finally:
        delete(sid)


def holder(sid):
    """The worker that has the session's agent pipe open (runs its step)."""
    pipe = os.path.join(SESSIONS_DIR, sid, "in")
    for pid in workers():
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == pipe:
                    return pid
            except OSError:
                pass
    return None


@attack("session: the request holding a session stalls (its worker SIGSTOPped) past maxLifetimeMs",
        "the master ends the session at its end all the same (sandbox removed while the lock is held); "
        "the request, resumed, answers with session.ended")
def test_the_master_ends_a_held_session_at_its_end():
    sid = create(language="bash", maxLifetimeMs=6000)["id"]
    created = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        running = ex.submit(step, sid, "sleep 60", limits={"wallTimeMs": 20000})
        pid = None
        deadline = time.monotonic() + 5
        while pid is None and time.monotonic() < deadline:
            pid = holder(sid)
            time.sleep(0.05)
        assert pid, "no worker holds the session"
        os.kill(pid, signal.SIGSTOP)
        try:
            # Its end, the master's next expiry round and the removal
            # (loaded: the master's loop also reaps and refills).
            assert gone_without_trace(sid, timeout=6 + 20 - (time.monotonic() - created))
            assert sid not in session_containers()
        finally:
            os.kill(pid, signal.SIGCONT)
        status, r = running.result(timeout=30)
    assert status == 200 and "maxLifetimeMs" in r["session"]["ended"] and r["run"]["timedOut"], r
    assert pool_master()  # the pool is still there
    assert delete(sid) == 410  # ended, with why


# Each way a process can leave its step's process group, session or
# parent; each is marked by its own sleep length.
#
# The stopped one is a job of its own (set -m gives it its own process
# group): gVisor sends SIGHUP and SIGCONT to an orphaned group that holds a
# stopped process whenever any member exits (Linux only when the group
# becomes orphaned), and a step's group is orphaned (the agent makes it a
# session). In the step's own group, a subshell above that exits after the
# STOP, as happens on a loaded host, would hang the step up (exit 129, not
# timedOut).
ESCAPES = {
    "setsid": "(setsid sleep 400 >/dev/null 2>&1 &)",
    "subshell orphan": "(sleep 401 &)",
    "nohup": "nohup sleep 402 >/dev/null 2>&1 &",
    "disown": "sleep 403 & disown",
    "a new session leader that forks again": "setsid sh -c 'sleep 404 & sleep 405 & wait' >/dev/null 2>&1 &",
    "double fork through setsid": "(setsid sh -c '(sleep 406 &)' &)",
    "stopped": "set -m; sleep 407 & set +m; sleep 0.3; kill -STOP $!",
}
MARKS = [str(n) for n in range(400, 408)]


@attack("session: a timed-out step's daemons escape its process group (setsid, double fork, nohup, disown, "
        "a session leader that forks, a stopped one)",
        "every process the step started is gone before the timedOut answer; the session goes on")
def test_a_timed_out_step_takes_every_process_it_started():
    sid = create(language="bash")["id"]
    try:
        # Every escape is made before the deadline (the mark says so): a
        # slow host must not make this a test of fewer of them.
        status, r = step(sid, "\n".join(ESCAPES.values()) + "\necho made\nsleep 60", limits={"wallTimeMs": 6000})
        assert status == 200 and r["run"]["timedOut"] and r["run"]["stdout"] == "made\n", r
        assert "ended" not in r["session"], r
        assert sleeps(sid, *MARKS) == [], processes(sid)
    finally:
        delete(sid)


@attack("session: the review's case: (setsid sleep 400 &); (sleep 401 &); sleep 60 with wallTimeMs 1500",
        "timedOut, and the next step sees neither sleep")
def test_setsid_daemon_of_a_timed_out_step():
    sid = create(language="bash")["id"]
    try:
        status, r = step(sid, "(setsid sleep 400 >/dev/null 2>&1 &); (sleep 401 &); sleep 60",
                         limits={"wallTimeMs": 1500})
        assert status == 200 and r["run"]["timedOut"], r
        assert sleeps(sid, "400", "401") == [], processes(sid)
    finally:
        delete(sid)


def test_a_step_that_ends_by_itself_keeps_its_daemons():
    """API.md: background processes live on after a step that answered by
    itself, also when a later step is stopped."""
    sid = create(language="bash")["id"]
    try:
        r = step_ok(sid, ESCAPES["setsid"] + "\n" + ESCAPES["nohup"] + "\necho done")
        assert r["run"]["stdout"] == "done\n"
        assert len(sleeps(sid, "400", "402")) == 2, processes(sid)
        status, r = step(sid, "sleep 60", limits={"wallTimeMs": 1000})
        assert status == 200 and r["run"]["timedOut"], r
        assert len(sleeps(sid, "400", "402")) == 2, processes(sid)
    finally:
        delete(sid)


@attack("kernel session: a cell starts daemons (start_new_session, setsid) and is interrupted",
        "they are gone before the KeyboardInterrupt answer; the kernel keeps its state")
def test_an_interrupted_cell_takes_what_it_started():
    sid = create(language="python", type="kernel")["id"]
    try:
        step_ok(sid, "kept = 1")
        code = ("import subprocess, time\n"
                "subprocess.Popen(['sleep', '410'], start_new_session=True)\n"
                "subprocess.Popen(['bash', '-c', '(setsid sleep 411 >/dev/null 2>&1 &)'])\n"
                "while True: time.sleep(0.01)")
        status, r = step(sid, code, limits={"wallTimeMs": 2000})
        assert status == 200 and r["run"]["timedOut"], r
        assert r["kernel"]["error"]["name"] == "KeyboardInterrupt", r
        left = step_ok(sid, "import os\n[open(f'/proc/{p}/cmdline').read().split('\\0')[:2] for p in os.listdir('/proc') "
                            "if p.isdigit() and open(f'/proc/{p}/cmdline').read().startswith('sleep')]")
        assert left["kernel"]["value"] == "[]", left
        assert step_ok(sid, "kept")["kernel"]["value"] == "1"
    finally:
        delete(sid)
