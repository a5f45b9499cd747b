"""What every language whose programs are files (language_programs.py)
must show besides its contract (test_languages) and its live lines
(test_runtime_behaviour): a runtime error through Piston's route by
Piston's name for it; a session of it (hello world from the registry's
sample, a compile error or a runtime error, a program that the step's wall
time stops, and the session still answering after); and its memory limit,
holding against a program that takes memory until it is stopped.

Each check is one sandbox per language (the session one boot for its three
steps): with some thirty languages a boot is the unit of this module's time."""
import pytest

import language_programs
from conftest import execute, request
from sessions_util import create, delete, step_ok

LANGUAGES = language_programs.LANGUAGES
_RUNTIMES = {}


def runtimes():
    """GET /runtimes by language (the defaults), and Piston's by our names."""
    if not _RUNTIMES:
        status, _, body = request("GET", "/runtimes")
        assert status == 200, body
        _RUNTIMES["ours"] = {r["language"]: r for r in body["runtimes"] if r["default"]}
        status, _, body = request("GET", "/api/v2/runtimes")
        assert status == 200, body
        _RUNTIMES["piston"] = {name: r["language"] for r in body for name in [r["language"], *r["aliases"]]}
    return _RUNTIMES


def assert_runtime_error(language, code, signal, err):
    """A phase's exit code, signal and stderr, as checks.json says: a
    non-zero exit (or the one it names) and the error on stderr, or a signal."""
    want = language_programs.checks(language)
    if "errorSignal" in want:
        assert signal == want["errorSignal"], (language, code, signal, err)
        return
    assert code == want.get("errorExit", code) and (code != 0 or "errorExit" in want), (language, code, err)
    assert want["error"] in err, (language, err)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_runtime_error_through_piston_by_pistons_name(language):
    """Piston's own name for the language (`sqlite3`, `lisp`, `nasm64`,
    `rscript`...) finds it; the error's stderr and exit come back as
    Piston's client reads them."""
    name = runtimes()["piston"][language]
    code = language_programs.program(language, "error")
    status, _, got = request("POST", "/api/v2/execute",
                             {"language": name, "version": "*", "files": [{"content": code}]})
    assert status == 200, got
    assert got["language"] == name, got
    assert "compile" not in got or got["compile"]["code"] == 0, got
    assert_runtime_error(language, got["run"]["code"], got["run"]["signal"], got["run"]["stderr"])


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_session_runs_hello_an_error_and_a_stopped_loop(language):
    sample = runtimes()["ours"][language]["sample"]
    s = create(language=language)
    try:
        hello = step_ok(s["id"], sample, limits={"wallTimeMs": 60000})
        assert hello["run"]["exitCode"] == 0 and hello["run"]["stdout"].startswith("hello from"), hello
        if language in language_programs.COMPILED:
            broken = step_ok(s["id"], language_programs.program(language, "compile_error"))
            assert "run" not in broken and broken["compile"]["exitCode"] != 0, broken
            out = broken["compile"]["stdout"] + broken["compile"]["stderr"]
            assert language_programs.checks(language)["compileError"] in out, out
        else:
            failed = step_ok(s["id"], language_programs.program(language, "error"))
            assert_runtime_error(language, failed["run"]["exitCode"], failed["run"]["signal"],
                                 failed["run"]["stderr"])
        looped = step_ok(s["id"], language_programs.program(language, "loop"), limits={"wallTimeMs": 2000})
        assert looped["run"]["timedOut"] is True and looped["run"]["exitCode"] == 137, looped
        # The session lives on after its step was stopped.
        status, _, got = request("GET", f"/v1/sessions/{s['id']}")
        assert status == 200 and got["steps"] == 3, got
    finally:
        delete(s["id"])


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_memory_limit_holds(language):
    """A program that takes memory until it is stopped is killed at the
    limit (oomKilled), or its runtime stops it at a ceiling of its own
    that fits in the limit (the JVM's heap, SBCL's dynamic space): either
    way the run ends, non-zero, within its wall time."""
    least = runtimes()["ours"][language].get("minMemoryBytes", 0)
    status, result = execute({"language": language, "code": language_programs.program(language, "hog"),
                              "limits": {"memoryBytes": max(least, 128 << 20), "wallTimeMs": 20000}},
                             timeout=120)
    assert status == 200, result
    run = result["run"]
    assert run["timedOut"] is False and run["exitCode"] != 0, (language, run)
    memory_error = language_programs.checks(language).get("memoryError")
    assert run["oomKilled"] or (memory_error and memory_error in run["stderr"]), (language, run)
