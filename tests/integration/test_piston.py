"""The Piston-compatible API, field by field as docs/API.md's table says:
Piston's request and answer shapes, requests shaped as Piston's own
documentation shapes them, and the npm piston-client (installed into a
temporary directory), with the default settings and with
piston.acceptTextPlain."""
import base64
import json
import os
import re
import signal
import subprocess

import pytest

import language_programs
from conftest import URL, pool_master, raw_request, request, wait_until
from metrics_util import ConfEdit

STAGE_KEYS = ["signal", "stdout", "stderr", "code", "output", "memory", "message", "status",
              "cpu_time", "wall_time"]


def piston(body, headers=None):
    status, _, got = request("POST", "/api/v2/execute", body, headers=headers)
    return status, got


def stage(got, name="run"):
    """A stage of a 200 answer, checked for Piston's keys, in its order."""
    s = got[name]
    assert list(s) == STAGE_KEYS, list(s)
    # Measured by the host (the sandbox's cgroup), as Piston measures its own.
    assert isinstance(s["memory"], int) and s["memory"] > 0, s
    assert isinstance(s["cpu_time"], int) and s["cpu_time"] >= 0, s
    assert isinstance(s["wall_time"], int) and s["wall_time"] >= 0
    assert s["output"] == s["stdout"] + s["stderr"]
    return s


def ran(body):
    """Run a Piston request that must be answered 200; its run stage."""
    status, got = piston(body)
    assert status == 200, got
    return stage(got)


def refused(body, status, code, message):
    got_status, got = piston(body)
    assert (got_status, got["error"]["code"], got["message"]) == (status, code, message), got


def runtime_version(language):
    """The highest version listed: what "*" (or no version) runs."""
    status, _, got = request("GET", "/api/v2/runtimes")
    assert status == 200
    return max((r["version"] for r in got if r["language"] == language),
               key=lambda v: [int(p) for p in v.split(".")])


# --- the answer's shape ------------------------------------------------------

def test_piston_execute_shape():
    status, got = piston({"language": "python", "version": "*",
                          "files": [{"name": "main.py", "content": "import sys\nprint(input())\nsys.exit(2)"}],
                          "stdin": "hello", "args": [], "run_timeout": 3000,
                          "compile_memory_limit": -1, "run_memory_limit": -1})
    assert status == 200, got
    assert list(got) == ["run", "language", "version"], "Piston's order; no compile for python"
    assert got["language"] == "python" and got["version"] == runtime_version("python")
    run = stage(got)
    assert {k: v for k, v in run.items() if k not in ("wall_time", "memory", "cpu_time")} == {
        "signal": None, "stdout": "hello\n", "stderr": "", "code": 2, "output": "hello\n",
        "message": "Exited with error status 2", "status": "RE"}


def test_piston_success_has_no_status():
    run = ran({"language": "python", "version": "3", "files": [{"content": "print('ok')"}]})
    assert (run["code"], run["signal"], run["status"], run["message"]) == (0, None, None, None)


def test_piston_output_is_stdout_then_stderr():
    """The sandbox keeps no common order of the two pipes: output is stdout,
    then stderr, whatever the order written (docs/API.md)."""
    run = ran({"language": "python", "version": "*", "files": [{"content":
               "import sys\nprint('e1', file=sys.stderr, flush=True)\nprint('o1', flush=True)\n"
               "print('e2', file=sys.stderr, flush=True)"}]})
    assert run["stdout"] == "o1\n" and run["stderr"] == "e1\ne2\n"
    assert run["output"] == "o1\ne1\ne2\n"


# --- requests shaped as Piston's documentation shapes them -----------------------

def test_piston_readme_example():
    """Piston's README request, its version adapted to the node we have."""
    body = {"language": "js", "version": runtime_version("javascript"),
            "files": [{"name": "my_cool_code.js", "content": "console.log(process.argv)"}],
            "stdin": "", "args": ["1", "2", "3"],
            "compile_timeout": 10000, "run_timeout": 3000, "compile_cpu_time": 10000, "run_cpu_time": 3000,
            "compile_memory_limit": -1, "run_memory_limit": -1}
    status, got = piston(body)
    assert status == 200 and got["language"] == "javascript", got
    run = stage(got)
    assert run["code"] == 0 and run["stderr"] == "", run
    # node prints the array on one line or several, by its length.
    assert re.search(r"my_cool_code\.js',\s+'1',\s+'2',\s+'3'\s+\]\n$", run["stdout"]), run["stdout"]
    # The README's own version: a runtime we do not have, in Piston's words.
    refused(dict(body, version="15.10.0"), 400, "unknown_version", "js-15.10.0 runtime is unknown")


def test_piston_docs_example_with_a_range():
    status, got = piston({"language": "js", "version": "20.x",
                          "files": [{"name": "my_cool_code.js", "content": "console.log(process.argv.slice(2))"}],
                          "stdin": "", "args": ["1", "2", "3"], "compile_timeout": 10000, "run_timeout": 3000,
                          "compile_memory_limit": -1, "run_memory_limit": -1})
    assert status == 200, got
    assert stage(got)["stdout"] == "[ '1', '2', '3' ]\n"


# --- version: npm semver ranges ---------------------------------------------------

def test_piston_version_ranges_select_our_version():
    # Every form of range is the semver matcher's (tests/unit/test_piston.c,
    # versions(), and its fuzzer); here a few against the live versions.
    full = runtime_version("python")            # "3.14.8", the highest of three
    major, minor, _ = full.split(".")
    for version in ["*", f"{major}.x", f">={major} <{int(major) + 1}", f"v{full}", f"2.7 || {major}.{minor}.x"]:
        status, got = piston({"language": "python", "version": version, "files": [{"content": "print(1)"}]})
        assert status == 200 and got["version"] == full and got["run"]["stdout"] == "1\n", (version, got)
    # Absent or null: any (Piston requires a version; piston-client leaves it out for an alias).
    for body in ({"language": "python"}, {"language": "python", "version": None}):
        status, got = piston(dict(body, files=[{"content": "print(1)"}]))
        assert status == 200 and got["version"] == full, got


@pytest.mark.parametrize("version", ["2.7", "latest", "^99", "3.11.2.1", "3.11.2-1", "abc", "03", ">3 <3"])
def test_piston_unmatched_version_is_piston_400(version):
    refused({"language": "python", "version": version, "files": [{"content": "print(1)"}]},
            400, "unknown_version", f"python-{version} runtime is unknown")


def test_piston_unknown_language_is_piston_400():
    refused({"language": "intercal", "version": "*", "files": [{"content": "x"}]},
            400, "unknown_language", "intercal-* runtime is unknown")
    refused({"language": "intercal", "version": "1.0.0", "files": [{"content": "x"}]},
            400, "unknown_language", "intercal-1.0.0 runtime is unknown")


# --- names and aliases --------------------------------------------------------

HELLO = {
    "python": "print('ok')", "javascript": "console.log('ok')",
    "typescript": "const s: string = 'ok'\nconsole.log(s)", "ruby": "puts 'ok'", "bash": "echo ok",
    "perl": "print \"ok\\n\";", "c": "#include <stdio.h>\nint main(void) { puts(\"ok\"); return 0; }",
    "c++": "#include <iostream>\nint main() { std::cout << \"ok\\n\"; }",
    "go": "package main\nimport \"fmt\"\nfunc main() { fmt.Println(\"ok\") }",
    "rust": "fn main() { println!(\"ok\"); }",
}


# Which language each alias names is the request parser's (tests/unit/
# test_piston.c, names(): every alias of the registry). Here, one of each
# kind runs end to end: a Piston-only alias, one of ours, one whose answer
# carries Piston's name for ours (cpp is "c++").
@pytest.mark.parametrize("sent,language", [("node-js", "javascript"), ("python3", "python"), ("g++", "c++")])
def test_piston_aliases(sent, language):
    status, got = piston({"language": sent, "version": "*", "files": [{"content": HELLO[language]}]})
    assert status == 200 and got["language"] == language, got   # Piston's name, not the alias
    assert stage(got)["stdout"] == "ok\n", got


def test_piston_runtimes_shape():
    status, _, got = request("GET", "/api/v2/runtimes")
    assert status == 200 and isinstance(got, list)
    by = {r["language"]: r for r in got}
    for r in got:
        assert list(r)[:3] == ["language", "version", "aliases"] and set(r) <= {"language", "version",
                                                                             "aliases", "runtime"}, r
    assert set(by["python"]) == {"language", "version", "aliases"} and "py" in by["python"]["aliases"]
    assert by["javascript"]["runtime"] == "node" and {"node-js", "node-javascript"} <= set(by["javascript"]["aliases"])
    assert by["c"]["runtime"] == "gcc" and by["c++"]["runtime"] == "gcc" and "cpp" in by["c++"]["aliases"]
    assert "cpp" not in by, "Piston's name is c++"
    assert {"tsc", "node-ts"} <= set(by["typescript"]["aliases"]) and "runtime" not in by["typescript"]
    assert "ruby3" in by["ruby"]["aliases"]


# --- compiled languages -------------------------------------------------------

def test_piston_compiled_language_and_base64_files():
    src = base64.b64encode(b'#include <stdio.h>\nint main(void) { puts("b64"); return 0; }').decode()
    status, got = piston({"language": "c", "version": "14", "files": [{"content": src, "encoding": "base64"}]})
    assert status == 200, got
    assert list(got) == ["compile", "run", "language", "version"]
    compile_ = stage(got, "compile")
    assert (compile_["code"], compile_["status"], compile_["signal"]) == (0, None, None)
    assert stage(got)["stdout"] == "b64\n"


def test_piston_failed_compile_run_is_the_compile():
    """r.run.output must work in Piston client code after a failed compile."""
    status, got = piston({"language": "c", "version": "*", "files": [{"content": "int main(void) { return x; }"}]})
    assert status == 200, got
    compile_ = stage(got, "compile")
    assert compile_["code"] != 0 and compile_["status"] == "RE", compile_
    assert compile_["message"] == f"Exited with error status {compile_['code']}"
    assert "x" in compile_["stderr"] and compile_["output"] == compile_["stderr"]
    assert got["run"] == got["compile"], "Piston's run is the compile's result"


# --- signals, limits: status and message ---------------------------------------

SEGFAULT = "int main(int argc, char **argv) {\n  (void)argv;\n  int *p = (int *)(long)(argc - 1);\n" \
           "  *p = 1;  /* argc is 1: a store to address 0, which the compiler cannot see */\n  return 0;\n}\n"


def test_piston_segfault_is_sigsegv():
    status, got = piston({"language": "c", "version": "*", "files": [{"content": SEGFAULT}]})
    assert status == 200, got
    run = stage(got)
    assert (run["code"], run["signal"], run["status"], run["message"]) == \
        (None, "SIGSEGV", "SG", "Caught fatal signal 11"), run


@pytest.mark.parametrize("name,number", [("ABRT", 6), ("TERM", 15), ("HUP", 1)])
def test_piston_death_by_signal_is_named(name, number):
    """The program kills itself: its signal, read from its wait status (the
    program is not the sandbox's first process, which a kernel shields
    from its own signals). A shell that passes a child's 128 + N on as its
    own exit status exits, as in Piston."""
    run = ran({"language": "bash", "version": "*", "files": [{"content": f"kill -{name} $$\necho lived"}]})
    assert (run["code"], run["signal"], run["status"], run["message"], run["stdout"]) == \
        (None, f"SIG{name}", "SG", f"Caught fatal signal {number}", ""), run
    run = ran({"language": "bash", "version": "*", "files": [{"content": f"sh -c 'kill -{name} $$'\nexit $?"}]})
    assert (run["code"], run["signal"], run["status"]) == (128 + number, None, "RE"), run


def test_piston_exit_statuses_that_look_like_signals():
    """exit(137) is an exit with status 137, as Piston reports it: the
    signal comes from the wait status, not from the number."""
    run = ran({"language": "python", "version": "*", "files": [{"content": "import sys\nsys.exit(137)"}]})
    assert (run["code"], run["signal"], run["status"], run["message"]) == \
        (137, None, "RE", "Exited with error status 137"), run
    run = ran({"language": "python", "version": "*", "files": [{"content": "import sys\nsys.exit(145)"}]})
    assert (run["code"], run["signal"], run["status"], run["message"]) == \
        (145, None, "RE", "Exited with error status 145"), run


def test_piston_timeout_memory_and_output_cap_are_told_apart():
    timeout = ran({"language": "python", "version": "*", "files": [{"content": "while True: pass"}],
                   "run_timeout": 1000})
    assert (timeout["code"], timeout["signal"], timeout["status"], timeout["message"]) == \
        (None, "SIGKILL", "TO", "Time limit exceeded (wall clock)"), timeout
    assert 900 <= timeout["wall_time"] <= 3000, timeout
    oom = ran({"language": "python", "version": "*", "files": [{"content": "a = bytearray(200 * 1024 * 1024)"}],
               "run_memory_limit": 64 * 1024 * 1024})
    assert (oom["code"], oom["signal"], oom["status"]) == (None, "SIGKILL", "SG"), oom
    assert oom["message"] == "Memory limit exceeded (67108864 bytes): caught fatal signal 9", oom
    flood = ran({"language": "python", "version": "*", "files": [{"content":
                 "import sys\nwhile True:\n    sys.stdout.write('x' * 4096)"}]})
    assert (flood["code"], flood["signal"], flood["status"]) == (None, "SIGKILL", "OL"), flood["message"]
    assert flood["message"] == "stdout length exceeded (65536 bytes of stdout and stderr together)"
    assert flood["stdout"] == "x" * 65536
    errflood = ran({"language": "python", "version": "*", "files": [{"content":
                    "import sys\nwhile True:\n    sys.stderr.write('e' * 4096)"}]})
    assert (errflood["status"], errflood["signal"]) == ("EL", "SIGKILL"), errflood["message"]
    assert errflood["message"].startswith("stderr length exceeded")
    assert len({timeout["message"], oom["message"], flood["message"]}) == 3


def test_piston_zero_timeout_is_the_default_and_big_ones_are_clamped():
    """Piston reads 0 as no limit; here every run keeps a limit: 0 (and -1)
    is the language's default (10 s), more than the ceiling is clamped."""
    run = ran({"language": "python", "version": "*", "run_timeout": 0, "compile_timeout": 0,
               "files": [{"content": "import time\ntime.sleep(2)\nprint('slept')"}]})
    assert run["stdout"] == "slept\n" and run["status"] is None, run
    run = ran({"language": "python", "version": "*", "run_timeout": -1, "files": [{"content": "print(1)"}]})
    assert run["stdout"] == "1\n"
    run = ran({"language": "python", "version": "*", "run_timeout": 10 ** 9, "run_memory_limit": 10 ** 15,
               "files": [{"content": "print(1)"}]})
    assert run["stdout"] == "1\n", "clamped, never refused"


# --- files, encodings, stdin ----------------------------------------------------

def test_piston_nameless_files_get_pistons_names():
    run = ran({"language": "python", "version": "*", "files": [
        {"content": "import os\nprint(sorted(n for n in os.listdir('.') if not n.startswith('.')))"},
        {"content": "x"}, {"name": "lib.py", "content": ""}, {"name": "", "content": "y"}]})
    assert run["stdout"] == "['file1.code', 'file3.code', 'lib.py', 'main.py']\n", run


def test_piston_entry_is_the_first_utf8_file():
    run = ran({"language": "python", "version": "*", "files": [
        {"name": "data.bin", "content": base64.b64encode(b"\0\1\2").decode(), "encoding": "base64"},
        {"content": "import sys\nprint(open('data.bin', 'rb').read(), sys.argv[0])", "encoding": "utf8"}]})
    assert run["stdout"] == "b'\\x00\\x01\\x02' main.py\n", run


def test_piston_hex_files():
    run = ran({"language": "python", "version": "*",
               "files": [{"content": "print('hex')".encode().hex(), "encoding": "hex"}]})
    assert run["stdout"] == "hex\n"
    for content in ("7", "7g", "70 72"):
        status, got = piston({"language": "python", "version": "*",
                              "files": [{"content": content, "encoding": "hex"}]})
        assert status == 400 and got["error"]["code"] == "invalid_value" and "hex" in got["message"], got


@pytest.mark.parametrize("stdin,seen", [("a", "a\n"), ("a\n", "a\n"), ("", "\n"), (None, "\n"), ("x\ny", "x\ny\n")])
def test_piston_stdin_ends_with_a_newline(stdin, seen):
    body = {"language": "python", "version": "*", "files": [{"content": "import sys\nprint(repr(sys.stdin.read()))"}]}
    if stdin is not None:
        body["stdin"] = stdin
    assert ran(body)["stdout"] == repr(seen) + "\n"


# --- refusals, in Piston's words ------------------------------------------------

def test_piston_errors_carry_message():
    refused({"version": "*", "files": [{"content": "x"}]}, 400, "missing_field", "language is required as a string")
    refused({"language": 7, "files": []}, 400, "invalid_type", "language is required as a string")
    refused({"language": "python", "version": 3, "files": []}, 400, "invalid_type", "version is required as a string")
    refused({"language": "python", "version": "*", "files": "nope"}, 400, "invalid_type",
            "files is required as an array")
    refused({"language": "python", "version": "*", "files": [{"name": "a.py"}]}, 400, "invalid_type",
            "files[0].content is required as a string")
    refused({"language": "python", "version": "*", "files": []}, 400, "empty_code",
            "files must include at least one utf8 encoded file")
    refused({"language": "python", "version": "*", "files": [{"content": "1"}], "run_timeout": "1s"}, 400,
            "invalid_type", "If specified, run_timeout must be a number")
    refused({"language": "python", "version": "*", "files": [{"content": "1"}], "run_memory_limit": -5}, 400,
            "invalid_value", "run_memory_limit must be non-negative")
    status, got = piston({"language": "python", "version": "*", "files": [{"content": "1", "encoding": "latin1"}]})
    assert status == 400 and got["error"]["code"] == "invalid_value" and "encoding" in got["message"], got
    status, got = piston({"language": "python", "version": "*", "files": [{"content": "1"}], "run_timeuot": 1})
    assert status == 400 and got["error"]["code"] == "unknown_field", got


# --- routes Piston has and isobox does not offer ---------------------------------

@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
def test_piston_packages_say_what_to_use_instead(method):
    body = {"language": "python", "version": "3.11.2"} if method != "GET" else None
    status, _, got = request(method, "/api/v2/packages", body)
    assert status == 404 and got["error"]["code"] == "not_supported", got
    assert "package manager" in got["message"] and "POST /v1/sessions" in got["message"]
    status, headers, got = request("PUT", "/api/v2/packages", {})
    assert status == 405 and set(headers["Allow"].split(", ")) == {"GET", "POST", "DELETE"}, got


def test_piston_websocket_connect_says_what_to_use_instead():
    handshake = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                 "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    for headers in (handshake, {}):
        status, h, raw = raw_request("GET", "/api/v2/connect", headers=headers)
        assert status == 404 and h["Content-Type"].startswith("application/json"), (status, raw[:300])
        got = json.loads(raw)
        assert got["error"]["code"] == "not_supported", got
        assert "WebSocket" in got["message"] and "text/event-stream" in got["message"] and \
            "/v1/sessions" in got["message"], got


# --- the npm piston-client ------------------------------------------------------

CLIENT_SCRIPT = """
import piston from "piston-client";
const client = piston({server: process.argv[2]});
const out = {};
out.runtimes = (await client.runtimes()).map((r) => r.language);
out.execute = await client.execute("python", "import sys\\nprint(input(), sys.argv[1:])", {stdin: "hi"});
out.alias = await client.execute("py", "print(6 * 7)");
out.cpp = await client.execute("c++", "#include <cstdio>\\nint main() { std::puts(\\"c++\\"); }");
out.unknown = await client.execute("intercal", "PLEASE READ OUT #1");
console.log(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def piston_client(tmp_path_factory):
    """piston-client from the npm registry, and a script that drives it."""
    d = tmp_path_factory.mktemp("piston-client")
    out = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", "piston-client@1.0.2"],
                         cwd=d, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, f"npm install piston-client: {out.stderr}"
    (d / "check.mjs").write_text(CLIENT_SCRIPT)
    return d


def drive(client_dir):
    out = subprocess.run(["node", str(client_dir / "check.mjs"), URL], capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def text_plain_status():
    """What a text/plain body gets on the Piston route: 415, or (read as
    JSON) 400 for this one."""
    return raw_request("POST", "/api/v2/execute", b"{}", {"Content-Type": "text/plain;charset=UTF-8"})[0]


def reload_until(status):
    os.kill(pool_master(), signal.SIGHUP)
    # Each worker reloads before its next request: ask until all have.
    return wait_until(lambda: all(text_plain_status() == status for _ in range(8)), 20)


def test_piston_client_gets_pistons_own_415_by_default(piston_client):
    assert text_plain_status() == 415
    got = drive(piston_client)
    assert "python" in got["runtimes"] and "c++" in got["runtimes"]   # a GET: no body, no type
    for call in ("execute", "alias", "cpp", "unknown"):
        assert got[call]["message"] == "requests must be of type application/json", got[call]


@pytest.fixture
def text_plain_allowed():
    edit = ConfEdit()
    try:
        edit.apply(("acceptTextPlain: false", "acceptTextPlain: true"))
        assert reload_until(400), "the workers did not take piston.acceptTextPlain"
        yield
    finally:
        edit.restore()
        assert reload_until(415), "the workers did not go back to refusing text/plain"


def test_piston_client_runs_code_with_accept_text_plain(piston_client, text_plain_allowed):
    got = drive(piston_client)
    run = got["execute"]["run"]
    # piston-client sends args ["1", "2", "3"] unless told; stdin gets Piston's newline.
    assert run["stdout"] == "hi ['1', '2', '3']\n" and run["output"] == run["stdout"], got["execute"]
    assert run["code"] == 0 and run["status"] is None and got["execute"]["language"] == "python"
    # By alias it finds no runtime of that exact name and sends no version: any, here.
    assert got["alias"]["run"]["stdout"] == "42\n", got["alias"]
    assert got["cpp"]["language"] == "c++" and got["cpp"]["compile"]["code"] == 0, got["cpp"]
    assert got["cpp"]["run"]["stdout"] == "c++\n"
    assert got["unknown"]["message"] == "intercal-* runtime is unknown", got["unknown"]
    # Only the Piston route reads text/plain.
    status, _, raw = raw_request("POST", "/execute", json.dumps({"language": "python", "code": "print(1)"}).encode(),
                                 {"Content-Type": "text/plain"})
    assert status == 415, raw


# The compiled languages whose programs are files (language_programs.py), by
# Piston's name for each: their session (test_language_checks)
# shows a compile error, so a runtime error of theirs is shown here. An
# interpreted one's runtime error is shown by its session; what Piston adds
# (its name for the language, the response's shape) does not vary by
# language: every name is resolved in the request parser's unit test.
@pytest.mark.parametrize("language", sorted(language_programs.COMPILED))
def test_a_runtime_error_through_piston_by_pistons_name(language):
    """Piston's own name for the language (`nasm64`, `fpc`, `gnat`...) finds
    it; the compiled program's error, stderr and exit, come back as Piston's
    client reads them."""
    name = language_programs.runtimes()["piston"][language]
    code = language_programs.program(language, "error")
    status, _, got = request("POST", "/api/v2/execute",
                             {"language": name, "version": "*", "files": [{"content": code}]})
    assert status == 200, got
    assert got["language"] == name, got
    assert "compile" not in got or got["compile"]["code"] == 0, got
    language_programs.assert_runtime_error(language, got["run"]["code"], got["run"]["signal"], got["run"]["stderr"])
