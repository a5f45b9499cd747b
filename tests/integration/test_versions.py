"""Several versions of a language side by side (registry.yaml's versions):
Python 3.11 (Debian 12), 3.13 (Debian 13, the default) and 3.14 (forky),
each with its own image. A pin picks the highest version it matches, in
/execute, sessions and Piston's semver ranges; /runtimes and Piston's
runtimes list each; the warm pool, metrics and logs tell them apart."""
import re

from conftest import LOG_DIR, execute, request, set_warm, wait_until
from metrics_util import deltas, scrape, value
from sessions_util import create, delete, step_ok

WHICH = "import platform, sys\nprint(platform.python_version(), sys.executable)"


def python_runtimes():
    status, _, body = request("GET", "/runtimes")
    assert status == 200
    return {r["id"]: r for r in body["runtimes"] if r["language"] == "python"}


def ran(version=None, code=WHICH, **extra):
    body = {"language": "python", "code": code, **extra}
    if version is not None:
        body["version"] = version
    status, result = execute(body)
    assert status == 200, result
    return result


def test_each_version_reports_itself_and_runs_its_own_interpreter():
    have = python_runtimes()
    assert set(have) == {"python@3.13", "python@3.14", "python@3.11"}, have
    assert [i for i, r in have.items() if r["default"]] == ["python@3.13"]
    assert all(r["available"] for r in have.values())
    for pin, id_ in [("3.11", "python@3.11"), ("3.13", "python@3.13"), ("3.14", "python@3.14")]:
        result = ran(pin)
        full = have[id_]["version"]
        assert full.startswith(pin + "."), (pin, full)
        assert result["version"] == full, result
        assert result["run"]["stdout"] == f"{full} /usr/bin/python3\n", result


def test_no_pin_is_the_default_and_a_short_pin_the_highest_match():
    have = python_runtimes()
    assert ran()["version"] == have["python@3.13"]["version"]
    assert ran("3")["version"] == have["python@3.14"]["version"]
    assert ran(have["python@3.11"]["version"])["version"] == have["python@3.11"]["version"]


def test_an_unknown_version_names_the_ones_there_are():
    status, result = execute({"language": "python", "version": "3.12", "code": "print(1)"})
    assert status == 404 and result["error"]["code"] == "unknown_version", result
    for r in python_runtimes().values():
        assert r["version"] in result["error"]["message"], result


def test_the_versions_have_the_same_batteries():
    code = ("import numpy, pandas, scipy, sklearn, matplotlib, requests\n"
            "print(int(numpy.arange(4).sum()), len(pandas.DataFrame({'a': [1, 2]})))")
    # What is asserted is that they import, not how fast: cold imports of
    # all six took over 10 s, then over the run's ceiling (20 s), on a loaded
    # 2-core host (CI runs), so each version's in a session step, whose
    # wall time may be longer (sessions.maxStepMs).
    for pin in ("3.11", "3.13", "3.14"):
        s = create(version=pin)
        try:
            result = step_ok(s["id"], code, limits={"wallTimeMs": 60000})
            assert result["run"]["stdout"] == "6 2\n", (pin, result["run"])
            assert result["version"].startswith(pin + "."), (pin, result)
        finally:
            delete(s["id"])


def test_piston_lists_each_version_and_picks_by_semver():
    status, _, runtimes = request("GET", "/api/v2/runtimes")
    assert status == 200
    have = python_runtimes()
    listed = sorted(r["version"] for r in runtimes if r["language"] == "python")
    assert listed == sorted(r["version"] for r in have.values()), runtimes
    for rng, id_ in [("3.11.x", "python@3.11"), ("^3.12", "python@3.14"), ("~3.13", "python@3.13"),
                     (">=3.12 <3.14", "python@3.13"), ("*", "python@3.14")]:
        status, _, got = request("POST", "/api/v2/execute", {
            "language": "python", "version": rng, "files": [{"content": WHICH}]})
        assert status == 200, got
        assert got["version"] == have[id_]["version"], (rng, got)
        assert got["run"]["stdout"].split()[0] == have[id_]["version"], (rng, got)
    status, _, got = request("POST", "/api/v2/execute", {
        "language": "python", "version": "3.12", "files": [{"content": "print(1)"}]})
    assert status == 400 and got["message"] == "python-3.12 runtime is unknown", got


def test_a_session_keeps_its_version():
    full = python_runtimes()["python@3.11"]["version"]
    for kind in ("shell", "kernel"):
        s = create(version="3.11", type=kind)
        try:
            assert s["version"] == full, s
            status, _, got = request("GET", f"/v1/sessions/{s['id']}")
            assert status == 200 and got["version"] == full, got
            code = WHICH if kind == "shell" else "import platform\nprint(platform.python_version())"
            out = step_ok(s["id"], code)["run"]["stdout"]
            assert out.split()[0] == full, (kind, out)
        finally:
            delete(s["id"])


def test_metrics_and_the_log_carry_the_version():
    before = scrape()[1]
    ran("3.14")
    ran("3.11", "import sys\nsys.exit(3)")
    after = scrape()[1]
    d = deltas(before, after)
    assert d("isobox_executions_total", language="python", version="3.14", outcome="ok") == 1
    assert d("isobox_executions_total", language="python", version="3.11", outcome="error") == 1
    assert d("isobox_execution_duration_seconds_count", language="python", version="3.14") == 1
    with open(f"{LOG_DIR}/isobox.log", errors="replace") as f:
        tail = f.read()[-200000:]
    # The request's line (fcgi/reqlog.c) says the full version, as the result does.
    assert re.search(r"request id=\S+ .*language=python version=3\.11\.\d+ sandbox=cold phase=run exit=3 ",
                     tail), tail[-2000:]


def test_the_warm_pool_keeps_sandboxes_per_version():
    set_warm('{python: 1, "python@3.14": 1}')
    try:
        def ready(version):
            return value(scrape()[1], "isobox_warm_ready", language="python", version=version)
        assert wait_until(lambda: ready("3.13") == 1 and ready("3.14") == 1, 90), scrape()[0]
        have = python_runtimes()
        for pin, id_ in [("3.14", "python@3.14"), (None, "python@3.13")]:
            result = ran(pin)
            assert result["warm"] is True and result["version"] == have[id_]["version"], result
            assert result["run"]["stdout"].split()[0] == have[id_]["version"], result
        # 3.11 has no warm sandbox: it runs cold, the others' stay for them
        result = ran("3.11")
        assert result["warm"] is False and result["version"] == have["python@3.11"]["version"], result
    finally:
        set_warm()
