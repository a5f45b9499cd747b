"""Attacks on the time limits: code that runs while a program compiles and
forges the entry script's records, and file names that compilers would read
as options. The sandbox's whole life is bounded by the worker from outside
(sandbox/deadline.c), whatever the sandbox writes.

Compile-time code: our own registry's compilers run no request code while
compiling (the @file route to `-wrapper` is closed: see the first attack),
so the module adds a language whose compile step is a bash script from the
request. That stands for any way code might run during a compile (a
compiler plugin, a build script), which is what the bound must survive.
"""
import os
import shutil
import time

import pytest

from conftest import PREFIX, containers, execute, reload_pool, run_ok, wait_until, work_dirs

attack = pytest.mark.attack
REGISTRY = os.path.join(PREFIX, "registry", "registry.yaml")

# A compiled language whose compile step is the request's own script.
FORGE = """
  - name: forge
    version: "5.2"
    image: bash
    file: main.sh
    compile: [bash, "{file}"]
    compileTimeMs: 1000
    run: ["true"]
    limits: {memoryBytes: 134217728, cpus: 1.0, pids: 64, outputBytes: 65536, wallTimeMs: 1000}
"""
LIMITS = {"compileTimeMs": 1000, "wallTimeMs": 1000}
# Boot, copy, teardown and a loaded host, on top of compile + wall + the
# 2 s start allowance; a forged record used to buy the 30 s start timeout.
BOUND_S = 1 + 1 + 2 + 15


@pytest.fixture(scope="module")
def forge_language(tmp_path_factory):
    saved = tmp_path_factory.mktemp("registry") / "registry.yaml"
    shutil.copy2(REGISTRY, saved)
    with open(REGISTRY, "a") as f:
        f.write(FORGE)
    reload_pool()
    yield
    shutil.copy2(saved, REGISTRY)
    reload_pool()


def timed(code):
    start = time.monotonic()
    status, result = execute({"language": "forge", "code": code, "limits": LIMITS})
    return status, result, time.monotonic() - start


@attack("file named @opts.c: gcc reads @file as more options (-DPWNED, -wrapper)",
        "400 bad_file_name before anything runs")
def test_at_file_names_are_refused():
    for name in ("@opts.c", "src/@opts.c"):
        status, result = execute({"language": "c", "files": [
            {"name": "main.c", "content": "int main(void){return PWNED;}"},
            {"name": name, "content": "-DPWNED=42"},
            {"name": "opts.c", "content": "-DPWNED=42"}]})
        assert status == 400 and result["error"]["code"] == "bad_file_name", result
    assert containers() == []


@attack("entry file named +v: `bash +v` would read the script from stdin, not the file",
        "400 bad_file_name before anything runs (+, - and @ starts are all refused)")
def test_plus_file_names_are_refused():
    for name in ("+v", "+O", "d/+x"):
        status, result = execute({"language": "bash", "files": [
            {"name": name, "content": "echo from-the-file"}], "stdin": "echo from-stdin"})
        assert status == 400 and result["error"]["code"] == "bad_file_name", (name, result)
    assert containers() == []


@attack("a source file named like an option still compiles as a file",
        "the compiler gets ./name: no option is read from a name")
def test_compilers_get_paths_not_names():
    run = run_ok("#include <stdio.h>\nint main(void){puts(\"ok\");return 0;}", language="c")
    assert run["stdout"] == "ok\n"
    status, result = execute({"language": "c", "files": [
        {"name": "main.c", "content": "#include <stdio.h>\nint main(void){puts(__FILE__);return 0;}"}]})
    assert status == 200 and result["run"]["stdout"] == "./main.c\n", result


@attack("compile-time code forges the compile result, then sleeps",
        "killed within compile + wall + 2 s of the start: compile timedOut, no run")
def test_forged_compile_result(forge_language):
    status, result, took = timed("printf '\\036%s\\n' '0 0 0' >/proc/1/fd/2\nsleep 30\n")
    assert status == 200, result
    assert result["compile"]["timedOut"] is True and "run" not in result, result
    assert took < BOUND_S, f"took {took:.1f} s"


@attack("compile-time code forges the compile result and the program's start",
        "the forged run gets the wall time, not more: run timedOut within the bound")
def test_forged_program_start(forge_language):
    status, result, took = timed("printf '\\036%s\\n\\036' '0 0 0' >/proc/1/fd/2\nsleep 30\n")
    assert status == 200, result
    assert result["run"]["timedOut"] is True, result
    assert result["compile"]["durationMs"] < 1000, result  # what the forgery claimed
    assert took < BOUND_S, f"took {took:.1f} s"


@attack("compile-time code forges records over and over while it runs on",
        "nothing printed extends the sandbox's life")
def test_forged_records_in_a_loop(forge_language):
    code = ("for i in $(seq 100); do printf '\\036%s\\n' '0 0 0' >/proc/1/fd/2; sleep 0.3;"
            " printf '\\036' >/proc/1/fd/2; done\n")
    status, result, took = timed(code)
    assert status == 200, result
    phase = result.get("run") or result["compile"]
    assert phase["timedOut"] is True, result
    assert took < BOUND_S, f"took {took:.1f} s"


@attack("compile-time code writes a garbled compile record",
        "the sandbox is stopped at once; the request ends, nothing left behind")
def test_garbled_record(forge_language):
    status, result, took = timed("printf '\\036%s\\n' 'not a record' >/proc/1/fd/2\nsleep 30\n")
    assert status == 200, result
    assert "run" not in result and result["compile"]["exitCode"] != 0, result
    assert took < BOUND_S, f"took {took:.1f} s"
    assert wait_until(lambda: not containers() and not work_dirs(), 10)
