"""What every language whose programs are files (language_programs.py)
must show besides its contract (test_languages) and a runtime error through
Piston's route by Piston's name (test_piston): a session of it: hello world
from the registry's sample, a compile error or a runtime error, a program
that the step's wall time stops (the session answering after), its lines
as they are written (spaced.EXT, streamed: what test_runtime_behaviour
checks for the other languages through /execute), and last a program that
takes memory until the session's limit stops it.

Each test is one sandbox per language (the session one boot for its five
steps): with some thirty languages a boot is the unit of this module's time."""
import pytest

import language_programs
import streaming
from conftest import URL, request
from sessions_util import create, delete, step_ok

LANGUAGES = language_programs.LANGUAGES
runtimes, assert_runtime_error = language_programs.runtimes, language_programs.assert_runtime_error


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_session_runs_hello_an_error_a_stopped_loop_its_lines_live_and_a_memory_hog(language):
    """The hog goes last: killed at the session's memory (oomKilled), it
    ends the session, which says why; a runtime that stops itself at a
    ceiling of its own within that memory (the JVM's heap, SBCL's dynamic
    space) says so on stderr, and the session lives on."""
    lang = runtimes()["ours"][language]
    memory = max(lang.get("minMemoryBytes", 0), 256 << 20)
    s = create(language=language, limits={"memoryBytes": memory})
    try:
        hello = step_ok(s["id"], lang["sample"], limits={"wallTimeMs": 60000})
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
        steps = 3
        if "notSpaced" not in language_programs.checks(language):
            # 20 s: a JVM's start with three shards on two cores.
            body = {"code": language_programs.program(language, "spaced"), "limits": {"wallTimeMs": 20000}}
            streaming.assert_spaced(language, streaming.collect(body, URL, f"/v1/sessions/{s['id']}/exec")[1])
            steps += 1
        status, _, got = request("GET", f"/v1/sessions/{s['id']}")
        assert status == 200 and got["steps"] == steps, got

        # 60 s, though a hog ends in 2-5 s here alone: at the limit the host
        # reclaims the sandbox's file cache (runsc's own text among it)
        # before its OOM killer acts, and with the disk busy (the cold
        # pass's three shards) that once took a coffeescript hog past 20 s.
        hog = step_ok(s["id"], language_programs.program(language, "hog"), limits={"wallTimeMs": 60000})["run"]
        assert hog["timedOut"] is False and hog["exitCode"] != 0, (language, hog)
        status, _, got = request("GET", f"/v1/sessions/{s['id']}")
        if hog["oomKilled"]:
            assert status == 410 and "ran out of memory" in got["error"]["message"], got
        else:
            memory_error = language_programs.checks(language).get("memoryError")
            assert memory_error and memory_error in hog["stderr"], (language, hog)
            assert status == 200, got
    finally:
        delete(s["id"])
