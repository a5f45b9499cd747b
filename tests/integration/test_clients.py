"""The dependency-free clients (clients/python, clients/js), installed as
their users install them (pip into a venv, offline; npm from the tarball
`npm pack` makes), against the live service: streaming, sessions, the
asyncio flavour, typed errors, retries, succeeded(). Every session a test
creates is deleted, whatever the test's outcome (context managers,
finally); everything installed lives in pytest's tmp dirs.

The Python tests import the copy pip installed in the venv (not
clients/python); the JavaScript ones run scripts of tests/integration/clients
copied into a Node project that has the package installed, importing it by
its name."""
import asyncio
import email.utils
import json
import os
import re
import shutil
import subprocess
import threading
import time

import pytest

from clients_util import (JS_CLIENT, JS_SCRIPTS, PY_CLIENT, RESULT, FakeServer, answer, call, error,
                          forget_installed, free_port, import_installed, make_venv, node,
                          npm_env, npm_project, pip_install, run, site_of, sse)
from conftest import INSTANCE, URL, request, wait_until
from tenants_util import new_key, reload_pool, tenants_file

FLAVOURS = ["sync", "async", "js"]


def lines_when(seen):
    """(stdout bytes, [time each line was complete]) of [(time, event,
    data)]: how the output was cut into events is the server's business."""
    out, times = b"", []
    for t, event, data in seen:
        if event == "stdout":
            out += data
            times += [t] * data.count(b"\n")
    return out, times


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory):
    """A venv of Debian's python3 with `pip install clients/python` done in it."""
    python = make_venv(tmp_path_factory.mktemp("venv") / "v")
    pip_install(python, PY_CLIENT)
    return python


@pytest.fixture(scope="module")
def isobox(venv_python):
    """The isobox package as pip installed it in the venv."""
    package = site_of(venv_python)
    assert "site-packages" in package and not package.startswith(PY_CLIENT), package
    module = import_installed(package)
    assert module.__file__.startswith(package)
    yield module
    forget_installed()


@pytest.fixture(scope="module")
def js_project(tmp_path_factory):
    return npm_project(tmp_path_factory.mktemp("js"))


# -- installing -------------------------------------------------------------------------

def test_python_package_installs_offline_and_runs_on_its_own(venv_python, tmp_path):
    """pip installed it with --no-index (nothing downloaded, not even a
    build backend); the venv's python imports it by name from anywhere."""
    script = tmp_path / "use.py"
    script.write_text(
        "import json, sys, isobox\n"
        "from isobox import Isobox, AsyncIsobox, IsoboxError, Session, AsyncSession, succeeded\n"
        "r = Isobox(sys.argv[1]).execute('python', 'print(6 * 7)')\n"
        "print(json.dumps([isobox.__file__, isobox.__version__, r['run']['stdout'], succeeded(r)]))\n")
    out = run([venv_python, str(script), URL], cwd=str(tmp_path), env={"PATH": os.environ["PATH"]})
    path, version, stdout, ok = json.loads(out.stdout)
    assert "site-packages" in path and version == "0.1.0" and stdout == "42\n" and ok
    show = run([venv_python, "-m", "pip", "show", "isobox"]).stdout
    assert re.search(r"^Version: 0\.1\.0$", show, re.M) and re.search(r"^Requires: *$", show, re.M)
    assert re.search(r"^License: Apache-2.0$", show, re.M)


def test_python_sdist_and_editable_installs(tmp_path):
    """The in-tree backend's sdist installs on its own (offline), and an
    editable install points at the tree; its reader of pyproject.toml for
    Pythons before 3.11 reads what tomllib reads."""
    backend = ("import json, sys; sys.path.insert(0, '_build'); import isobox_build as b, tomllib\n"
               "text = open('pyproject.toml').read()\n"
               "same = b.read_project(text, use_tomllib=False) == tomllib.loads(text)['project']\n"
               "print(json.dumps([b.build_sdist(sys.argv[1]), same]))\n")
    out = run(["/usr/bin/python3", "-B", "-c", backend, str(tmp_path)], cwd=PY_CLIENT)
    sdist, same = json.loads(out.stdout)
    assert same and sdist == "isobox-0.1.0.tar.gz"
    python = make_venv(tmp_path / "v")
    pip_install(python, str(tmp_path / sdist))
    assert "site-packages" in site_of(python)
    pip_install(python, "-e", PY_CLIENT)
    assert site_of(python) == os.path.join(PY_CLIENT, "isobox")


def test_js_package_installs_by_name(tmp_path, js_project):
    """`npm install clients/js` (offline) gives `import ... from 'isobox'`;
    the packed tarball holds the module, its types and nothing else."""
    env = npm_env(tmp_path)
    (tmp_path / "package.json").write_text('{"name": "t", "private": true, "type": "module"}')
    run(["npm", "install", "--offline", "--no-audit", "--no-fund", JS_CLIENT], env=env, cwd=str(tmp_path))
    out = run(["node", "--input-type=module", "-e",
               "import * as m from 'isobox'; console.log(JSON.stringify(Object.keys(m).sort()))"],
              cwd=str(tmp_path))
    assert json.loads(out.stdout) == ["Isobox", "IsoboxError", "Memory", "Session", "Volume", "succeeded"]
    installed = os.path.join(js_project, "node_modules", "isobox")
    assert not os.path.islink(installed)
    assert sorted(os.listdir(installed)) == ["README.md", "isobox.d.ts", "isobox.mjs", "package.json"]


def test_js_types_check_with_tsc(js_project):
    """The declarations of the installed package: the documented uses
    compile under tsc --strict; each misuse in ts_misuse.mts is an error."""
    tsc = "/usr/bin/tsc"
    assert os.path.exists(tsc), "no tsc: apt-get install node-typescript (deploy/setup.sh)"
    flags = ["--strict", "--noEmit", "--module", "nodenext", "--moduleResolution", "nodenext",
             "--target", "es2022", "--lib", "es2022"]
    good = subprocess.run([tsc, *flags, "ts_uses.mts"], cwd=js_project, capture_output=True, text=True,
                          timeout=120)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = subprocess.run([tsc, *flags, "ts_misuse.mts"], cwd=js_project, capture_output=True, text=True,
                         timeout=120)
    lines = sorted({int(n) for n in re.findall(r"^ts_misuse\.mts\((\d+),\d+\): error", bad.stdout, re.M)})
    assert lines == [6, 7, 8, 9, 10], bad.stdout


def test_python_types_check_with_mypy(venv_python, tmp_path):
    """The installed package is typed (py.typed, TypedDict results): the
    documented uses check clean under mypy --strict, and each misuse in
    py_misuse.py is an error."""
    for name in ("py_uses.py", "py_misuse.py"):
        shutil.copy(os.path.join(JS_SCRIPTS, name), tmp_path)
    mypy = ["/usr/bin/python3", "-m", "mypy", "--strict", "--python-executable", str(venv_python),
            "--cache-dir", str(tmp_path / "cache")]
    assert subprocess.run(["/usr/bin/python3", "-c", "import mypy"]).returncode == 0, \
        "no mypy: apt-get install python3-mypy (deploy/setup.sh --test)"
    good = subprocess.run([*mypy, "py_uses.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = subprocess.run([*mypy, "py_misuse.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    lines = sorted({int(n) for n in re.findall(r"^py_misuse\.py:(\d+): error", bad.stdout, re.M)})
    assert lines == [6, 7, 8, 9, 10], bad.stdout


# -- the live service: blocking Python ---------------------------------------------------

def test_python_execute(isobox):
    box = isobox.Isobox(URL)
    r = box.execute("python", "import sys\nprint(sys.stdin.read(), sys.argv[1:])",
                    stdin="in", args=["a b"], limits={"wallTimeMs": 5000})
    assert r["run"]["stdout"] == "in ['a b']\n" and r["limits"]["wallTimeMs"] == 5000
    assert isobox.succeeded(r)


def test_python_files_and_runtimes_with_a_key(isobox):
    with tenants_file("tenants: {}\n"):
        key, _ = new_key("clients")
        reload_pool()
        box = isobox.Isobox(URL, api_key=key)
        r = box.execute("ruby", files=[{"name": "main.rb", "content": "require_relative 'l'\nputs X"},
                                       {"name": "l.rb", "content": "X = 9"}])
        assert r["run"]["stdout"] == "9\n"
        names = {x["language"] for x in box.runtimes()["runtimes"]}
        assert {"python", "go", "java"} <= names
        # The key is sent: a wrong one is refused, even from loopback.
        with pytest.raises(isobox.IsoboxError) as err:
            isobox.Isobox(URL, api_key=key[:-1] + ("0" if key[-1] != "0" else "1")).runtimes()
        assert err.value.status == 401 and err.value.code == "unauthorized"


def test_python_stream_yields_events_as_they_happen(isobox):
    box = isobox.Isobox(URL)
    seen = []
    start = time.monotonic()
    for ev in box.stream("python", code="import time, sys\nfor i in range(2):\n"
                                        "    print(i, flush=True); time.sleep(1)\n"
                                        "sys.stdout.buffer.write(b'\\xff')"):
        seen.append((time.monotonic() - start, ev["event"], ev["data"]))
    out, times = lines_when(seen)
    assert out == b"0\n1\n\xff" and 0.7 <= times[1] - times[0] <= 1.6
    assert {e for _, e, _ in seen[:-1]} == {"stdout"}
    assert seen[-1][1] == "result" and seen[-1][2]["run"]["exitCode"] == 0


def test_python_typed_errors(isobox):
    box = isobox.Isobox(URL)
    with pytest.raises(isobox.IsoboxError) as err:
        box.execute("nope", code="1")
    assert err.value.status == 404 and err.value.code == "unknown_language"
    assert err.value.retry_after is None and str(err.value).startswith("404 unknown_language: ")
    with pytest.raises(isobox.IsoboxError) as err:
        list(box.stream("python", code=""))
    assert err.value.status == 400 and err.value.code == "empty_code"


def test_js_client(js_project):
    got = node(js_project, "js_check.mjs", URL)
    assert got["execute"] == "in ['a b']\n"
    out, times = lines_when([(e["at"] / 1000, e["event"], bytes(e["data"]) if e["event"] == "stdout" else None)
                             for e in got["events"]])
    assert out == b"0\n1\n\xff" and 0.7 <= times[1] - times[0] <= 1.6
    assert got["events"][-1]["event"] == "result"
    assert "python" in got["runtimes"]
    assert got["error"] == [404, "unknown_language"]
    assert got["files"] == "7\n"
    # execute('python', code, options), as the Python client takes code.
    assert got["positional"] == ["pos ['x']\n", True]
    assert got["failed"] == [3, False]
    assert ["function", "execute", "object"] in got["tools"] and len(got["tools"]) >= 6
    assert got["called"] == [False, "42\n", "42\n"]
    assert got["wrong"] == [True, 3]
    assert got["refused"] == [400, "tool_call_refused", "no such tool (tools/list names them) (JSON-RPC -32602)"]
    assert got["runCode"] == "42" and got["killed"] == 404


def test_python_tools_for_agents(isobox):
    """The function-calling definitions, a tool called by name (MCP
    tools/call), and E2B's names on a session, blocking and asyncio."""
    box = isobox.Isobox(URL)
    tools = box.tools()
    names = [t["function"]["name"] for t in tools]
    assert "execute" in names and "session_exec" in names and all(t["type"] == "function" for t in tools)
    assert tools[names.index("execute")]["function"]["parameters"]["type"] == "object"
    r = box.call_tool("execute", {"language": "python", "code": "print(6 * 7)"})
    assert r["isError"] is False and r["structuredContent"]["run"]["stdout"] == "42\n"
    assert r["content"][0] == {"type": "text", "text": "42\n"}
    assert box.call_tool("execute", {"language": "python", "code": "raise SystemExit(3)"})["isError"] is True
    with pytest.raises(isobox.IsoboxError) as refused:
        box.call_tool("no_such_tool", {})
    assert refused.value.status == 400 and refused.value.code == "tool_call_refused"
    assert refused.value.message == "no such tool (tools/list names them) (JSON-RPC -32602)"
    with pytest.raises(TypeError):
        box.call_tool("execute", ["not", "a", "dict"])
    s = box.session("python", "kernel", idle_timeout_ms=IDLE)
    try:
        s.run_code("x = 41")
        assert s.run_code("x + 1")["kernel"]["value"] == "42"
    finally:
        s.kill()
    with pytest.raises(isobox.IsoboxError) as gone:
        s.refresh()
    assert gone.value.status == 404

    async def go():
        abox = isobox.AsyncIsobox(URL)
        assert [t["function"]["name"] for t in await abox.tools()] == names
        r = await abox.call_tool("execute", {"language": "python", "code": "print(7)"})
        assert r["structuredContent"]["run"]["stdout"] == "7\n"
        s = await abox.session("python", "kernel", idle_timeout_ms=IDLE)
        try:
            assert (await s.run_code("6 * 7"))["kernel"]["value"] == "42"
        finally:
            await s.kill()
    asyncio.run(go())


# -- sessions -----------------------------------------------------------------

# Every test deletes its sessions; should the service be unable to take the
# DELETE (restarting), they still end soon: idle for two minutes.
IDLE = 120000


def test_python_kernel_session_keeps_variables(isobox):
    box = isobox.Isobox(URL)
    with box.session("python", "kernel", idle_timeout_ms=IDLE) as s:
        assert re.fullmatch(INSTANCE + r"-[0-9a-f]{32}", s.id) and s.info["type"] == "kernel" and s.info["state"] == "idle"
        first = s.exec("x = 41\nprint('set')")
        assert first["run"]["stdout"] == "set\n" and first["kernel"]["value"] is None
        second = s.exec("x + 1")
        assert second["kernel"]["value"] == "42" and second["session"]["id"] == s.id
        failed = s.exec("y")
        assert failed["run"]["exitCode"] == 1 and failed["kernel"]["error"]["name"] == "NameError"
        assert s.refresh()["steps"] == 3 and s.info["steps"] == 3
        with pytest.raises(isobox.IsoboxError) as err:
            s.exec(files=[{"name": "main.py", "content": "1"}])
        assert err.value.status == 400 and err.value.code == "invalid_request"


def test_python_shell_session_files_are_byte_exact(isobox):
    box = isobox.Isobox(URL)
    data = bytes(range(256))
    name = "data/all bytes #?ü.bin"          # each needs percent-encoding
    with box.session("python", idle_timeout_ms=IDLE) as s:
        assert s.upload(name, data) == {"path": name, "size": 256}
        assert s.upload("data/text.txt", "héllo\n")["size"] == 7
        assert s.download(name) == data
        assert s.download("data/text.txt") == "héllo\n".encode()
        entries = {e["name"]: e for e in s.files("data")}
        assert set(entries) == {"all bytes #?ü.bin", "text.txt"}
        assert entries["all bytes #?ü.bin"]["type"] == "file" and entries["all bytes #?ü.bin"]["size"] == 256
        assert [(e["name"], e["type"]) for e in s.files()] == [("data", "directory")]
        # The step sees the same bytes, and what it writes comes back out.
        r = s.exec(f"d = open({name!r}, 'rb').read()\nprint(d == bytes(range(256)))\n"
                   "open('out.bin', 'wb').write(d[::-1])")
        assert r["run"]["stdout"] == "True\n", r
        assert s.download("out.bin") == data[::-1]
        s.remove("data/text.txt")
        assert [e["name"] for e in s.files("data")] == ["all bytes #?ü.bin"]
        with pytest.raises(isobox.IsoboxError) as err:
            s.download("data/text.txt")
        assert err.value.status == 404 and err.value.code == "file_not_found"
        s.remove("data")
        assert sorted(e["name"] for e in s.files()) == ["main.py", "out.bin"]


def test_python_session_background_commands(isobox):
    box = isobox.Isobox(URL)
    with box.session("python", idle_timeout_ms=IDLE) as s:
        c = s.start_command("echo one; sleep 0.3; echo two >&2; exit 4")
        assert c["running"] and c["args"] == ["sh", "-c", "echo one; sleep 0.3; echo two >&2; exit 4"]
        deadline = time.monotonic() + 10
        while s.command_output(c["id"])["running"] and time.monotonic() < deadline:
            time.sleep(0.1)
        out = s.command_output(c["id"])
        assert (out["exitCode"], out["stdout"], out["stderr"], out["stdoutNext"]) == (4, "one\n", "two\n", 4)
        assert s.command_output(c["id"], stdout_from=1, encoding="base64")["stdout"] == "bmUK"
        cat = s.start_command(args=["cat"], stdin_open=True)
        assert s.write_command_stdin(cat["id"], "hi", close=True) == {"written": 2, "closed": True}
        with pytest.raises(isobox.IsoboxError) as err:
            s.write_command_stdin(cat["id"], "more")
        assert err.value.status == 409 and err.value.code == "stdin_closed"
        sleeper = s.start_command(args=["sleep", "60"])
        s.signal_command(sleeper["id"], "SIGKILL")
        deadline = time.monotonic() + 10
        while s.command_output(sleeper["id"])["running"] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert s.command_output(sleeper["id"])["exitCode"] == 137
        assert [x["id"] for x in s.commands()] == [c["id"], cat["id"], sleeper["id"]]
        s.delete_command(c["id"])
        with pytest.raises(isobox.IsoboxError) as err:
            s.command_output(c["id"])
        assert err.value.status == 404 and err.value.code == "command_not_found"
        with pytest.raises(ValueError):
            s.start_command("x", args=["y"])


def test_python_session_stream_yields_stdout_then_result(isobox):
    box = isobox.Isobox(URL)
    with box.session("python", type="kernel", idle_timeout_ms=IDLE) as s:
        s.exec("n = 5")
        seen = []
        start = time.monotonic()
        for ev in s.stream("import time\nprint('a', flush=True)\ntime.sleep(1)\nprint('b')\nn * 2"):
            seen.append((time.monotonic() - start, ev["event"], ev["data"]))
        # Its output, then its value as it comes (a display), then the result.
        assert [e for _, e, _ in seen][-2:] == ["display", "result"] and \
            {e for _, e, _ in seen[:-2]} == {"stdout"}, seen
        assert seen[-2][2] == {"output_type": "execute_result", "data": {"text/plain": "10"}, "metadata": {}}, seen
        out, times = lines_when(seen)
        assert out == b"a\nb\n" and times[1] - times[0] >= 0.7     # the first came before the sleep
        result = seen[-1][2]
        assert result["kernel"]["value"] == "10" and result["session"]["id"] == s.id


def test_python_session_context_manager_deletes_it(isobox):
    box = isobox.Isobox(URL)
    with box.session("python", idle_timeout_ms=60000, limits={"memoryBytes": 128 << 20}) as s:
        sid = s.id
        assert s.info["idleTimeoutMs"] == 60000 and s.info["limits"]["memoryBytes"] == 128 << 20
        assert sid in {x["id"] for x in box.sessions()}
        assert box.attach(sid).info["id"] == sid
    status, _, body = request("GET", f"/v1/sessions/{sid}")
    assert status == 404 and body["error"]["code"] == "session_not_found"
    # ...even when the block raises.
    with pytest.raises(ZeroDivisionError):
        with box.session("python", idle_timeout_ms=IDLE) as s:
            sid = s.id
            1 / 0
    assert request("GET", f"/v1/sessions/{sid}")[0] == 404


def test_python_session_errors_are_typed(isobox):
    box = isobox.Isobox(URL)
    s = box.session("python", idle_timeout_ms=IDLE)
    try:
        # One request at a time: a second one while a step runs is refused at once.
        events = s.stream("import time\nprint('go', flush=True)\ntime.sleep(2)")
        assert next(events)["event"] == "stdout"
        with pytest.raises(isobox.IsoboxError) as err:
            s.exec("print(1)")
        assert err.value.status == 409 and err.value.code == "session_busy"
        assert [e["event"] for e in events] == ["result"]
    finally:
        s.close()
    s.close()                                   # closing twice is fine
    with pytest.raises(isobox.IsoboxError) as err:
        s.exec("print(1)")
    assert err.value.status == 404 and err.value.code == "session_not_found"
    with pytest.raises(isobox.IsoboxError) as err:
        s.upload("a", b"x")
    assert err.value.status == 404
    with pytest.raises(isobox.IsoboxError) as err:
        box.session("ruby", type="kernel").close()           # close: should it exist
    assert err.value.status == 400 and err.value.code == "invalid_value"
    with pytest.raises(isobox.IsoboxError) as err:
        box.session("python", limits={"wallTimeMs": 1000}).close()
    assert err.value.status == 400 and err.value.code == "invalid_request"


def test_js_signal_aborts_calls(js_project):
    """The JavaScript client's signal option: a call in flight (a run, a
    stream) or waiting to retry ends when the signal aborts, as IsoboxError
    code 'aborted' with the signal's reason; one aborted before sends
    nothing; the client without the signal goes on; a signal kept for many
    calls is left with no listeners."""
    with FakeServer(error(503, "busy", 5)) as busy:
        got = node(js_project, "js_abort.mjs", URL, busy.url)
        assert len(busy.requests) == 1, busy.requests  # the retry never went
    assert got["before"]["code"] == "aborted" and "no longer wanted" in got["before"]["message"], got
    assert got["before"]["took"] < 0.5
    assert got["execute"]["code"] == "aborted" and 0.9 <= got["execute"]["took"] < 3, got  # the run: 8 s
    assert got["after"] == "still here\n"
    assert got["stream"]["code"] == "aborted" and "seen enough" in got["stream"]["message"], got
    # A cold start is inside it: an abort that failed shows in the lines.
    assert got["streamLines"] == ["0\n"] and got["stream"]["took"] < 15, got
    assert got["retryWait"]["code"] == "aborted" and got["retryWait"]["took"] < 3, got
    assert got["listenersLeft"] == 0, got
    assert got["session"]["code"] == "aborted" and got["session"]["afterCreate"] < 7, got  # not the 8 s step
    assert got["sessionAfter"]["code"] == "session_not_found", got


def test_js_client_sessions(js_project):
    proc = subprocess.Popen(["node", "js_sessions.mjs", URL], cwd=js_project,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout = stderr = ""
    try:
        try:
            stdout, stderr = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        assert proc.returncode == 0, stdout + stderr
        ids = [line.split()[1] for line in stderr.splitlines() if line.startswith("session ")]
        got = json.loads(stdout)
        assert got["kernelInfo"]["type"] == "kernel" and got["kernelInfo"]["isSession"]
        assert got["kernel"] == {"stdout": "set\n", "value": "42", "session": got["kernelInfo"]["id"]}
        assert got["kernelError"] == "NameError"
        assert got["stream"][-2:] == ["display", "result"] and set(got["stream"][:-2]) == {"stdout"}
        assert got["streamStdout"] == "a\n"
        assert got["streamValue"] == "82"
        assert got["runningFirst"] == "stdout" and got["busy"] == [409, "session_busy"]
        assert got["runningLast"] == "result"
        assert got["upload"] == {"path": "data/all bytes #?.bin", "size": 256}
        assert got["download"] == {"isUint8Array": True, "exact": True}
        assert got["text"] == "héllo\n"
        assert got["files"] == [["all bytes #?.bin", "file", 256], ["text.txt", "file", 7]]
        assert got["top"] == [["data", "directory"]]
        assert got["seenInside"] == "True ['a']\n"
        assert got["afterRemove"] == ["all bytes #?.bin"]
        assert got["missing"] == [404, "file_not_found"]
        assert got["info"] == 1
        assert got["command"] == [0, "one\n", "two\n", 4] and got["commandFrom"] == "bmUK"
        assert got["wrote"] == {"written": 2, "closed": True} and got["stdinClosed"] == [409, "stdin_closed"]
        assert got["commands"] is True and got["commandGone"] == [404, "command_not_found"]
        assert got["bothOrNone"] == "TypeError"
        assert got["afterDispose"] == [404, "session_not_found"]
        assert got["execClosed"] == [404, "session_not_found"]
        assert got["closeTwice"] == "none"
        assert got["badKernel"] == [400, "invalid_value"]
        assert len(ids) == 2
        for sid in ids:
            assert request("GET", f"/v1/sessions/{sid}")[0] == 404, sid
    finally:
        # If the script died before its own clean-up: the ids it announced.
        for line in stderr.splitlines():
            if line.startswith("session "):
                request("DELETE", f"/v1/sessions/{line.split()[1]}")


# -- the live service: asyncio ---------------------------------------------------------

def test_async_execute_stream_and_errors(isobox):
    async def go():
        box = isobox.AsyncIsobox(URL)
        r = await box.execute("python", "import sys\nprint(sys.stdin.read(), sys.argv[1:])",
                              stdin="in", args=["a b"], limits={"wallTimeMs": 5000})
        assert r["run"]["stdout"] == "in ['a b']\n" and r["limits"]["wallTimeMs"] == 5000
        assert isobox.succeeded(r)
        compiled = await box.execute("c", files=[{"name": "main.c", "content":
                                                  "#include <stdio.h>\nint main(void){puts(\"c\");}"}])
        assert compiled["compile"]["exitCode"] == 0 and compiled["run"]["stdout"] == "c\n"
        assert "python" in {x["language"] for x in (await box.runtimes())["runtimes"]}
        # Events as they happen, bytes lossless; a second run meanwhile.
        seen = []
        start = time.monotonic()
        other = asyncio.ensure_future(box.execute("python", "print('other')"))
        async for ev in box.stream("python", "import time, sys\nfor i in range(2):\n"
                                             "    print(i, flush=True); time.sleep(1)\n"
                                             "sys.stdout.buffer.write(b'\\xff')"):
            seen.append((time.monotonic() - start, ev["event"], ev["data"]))
        out, times = lines_when(seen)
        assert out == b"0\n1\n\xff" and 0.7 <= times[1] - times[0] <= 1.6
        assert seen[-1][1] == "result" and seen[-1][2]["run"]["exitCode"] == 0
        assert (await other)["run"]["stdout"] == "other\n"
        with pytest.raises(isobox.IsoboxError) as err:
            await box.execute("nope", "1")
        assert err.value.status == 404 and err.value.code == "unknown_language"
        with pytest.raises(isobox.IsoboxError) as err:
            [e async for e in box.stream("python", "")]
        assert err.value.status == 400 and err.value.code == "empty_code"
    asyncio.run(go())


def test_async_sessions(isobox):
    async def go():
        box = isobox.AsyncIsobox(URL)
        async with box.session("python", "kernel", idle_timeout_ms=IDLE) as k:
            kernel_id = k.id
            assert isinstance(k, isobox.AsyncSession) and k.info["type"] == "kernel"
            await k.exec("x = 41")
            assert (await k.exec("x + 1"))["kernel"]["value"] == "42"
            assert not isobox.succeeded(await k.exec("1 / 0"))
            events = [ev async for ev in k.stream("import time\nprint('a', flush=True)\nx * 2")]
            assert [e["event"] for e in events][-1] == "result"
            assert b"".join(e["data"] for e in events[:-1] if e["event"] == "stdout") == b"a\n"
            assert events[-1]["data"]["kernel"]["value"] == "82"
            assert kernel_id in {s["id"] for s in await box.sessions()}
            assert (await box.attach(kernel_id)).id == kernel_id
        assert request("GET", f"/v1/sessions/{kernel_id}")[0] == 404
        s = await box.session("python", idle_timeout_ms=IDLE)
        try:
            data = bytes(range(256))
            name = "data/all bytes #?ü.bin"
            assert await s.upload(name, data) == {"path": name, "size": 256}
            assert await s.download(name) == data
            assert [(e["name"], e["size"]) for e in await s.files("data")] == [("all bytes #?ü.bin", 256)]
            r = await s.exec(f"print(open({name!r}, 'rb').read() == bytes(range(256)))")
            assert r["run"]["stdout"] == "True\n"
            # One request at a time: a second one while a step runs is 409.
            running = s.stream("import time\nprint('go', flush=True)\ntime.sleep(2)")
            assert (await running.__anext__())["event"] == "stdout"
            with pytest.raises(isobox.IsoboxError) as err:
                await s.exec("print(1)")
            assert err.value.status == 409 and err.value.code == "session_busy"
            assert [e["event"] async for e in running] == ["result"]
            await s.remove("data")
            with pytest.raises(isobox.IsoboxError) as err:
                await s.download(name)
            assert err.value.status == 404 and err.value.code == "file_not_found"
            assert (await s.refresh())["steps"] == 2
            c = await s.start_command(args=["sh", "-c", "echo bg"])
            while (await s.command_output(c["id"]))["running"]:
                await asyncio.sleep(0.1)
            assert (await s.command_output(c["id"]))["stdout"] == "bg\n"
            assert [x["id"] for x in await s.commands()] == [c["id"]]
            cat = await s.start_command(args=["cat"], stdin_open=True)
            assert (await s.write_command_stdin(cat["id"], "x"))["written"] == 1
            await s.signal_command(cat["id"])
            await s.delete_command(cat["id"])
            await s.delete_command(c["id"])
            assert await s.commands() == []
        finally:
            await s.close()
        await s.close()                          # closing twice is fine
        with pytest.raises(isobox.IsoboxError) as err:
            await s.exec("print(1)")
        assert err.value.status == 404 and err.value.code == "session_not_found"
    asyncio.run(go())


# -- memory and volumes ---------------------------------------------------------------------

def test_python_memory(isobox):
    """/v1/memory through the client: values of each kind, etags and their
    conditions, expiry, pages of keys; the same with asyncio."""
    box = isobox.Isobox(URL)
    prefix = f"clients-{os.getpid()}-{time.monotonic_ns()}/"
    try:
        item = box.memory.put(prefix + "plan", {"step": 2})
        assert item["key"] == prefix + "plan" and item["contentType"] == "application/json"
        got = box.memory.get(prefix + "plan")
        assert json.loads(got["value"]) == {"step": 2} and got["etag"] == item["etag"]
        assert box.memory.put(prefix + "raw", b"\x00\xff")["size"] == 2
        assert box.memory.get(prefix + "raw")["value"] == b"\x00\xff"
        text = box.memory.put(prefix + "text", "é", content_type="text/markdown")
        assert box.memory.get(prefix + "text") == {"key": prefix + "text", "value": "é".encode(),
                                                   "contentType": "text/markdown", "etag": text["etag"]}
        # Conditions: the etag read is good once; a new key only once.
        box.memory.put(prefix + "plan", {"step": 3}, if_match=got["etag"])
        with pytest.raises(isobox.IsoboxError) as err:
            box.memory.put(prefix + "plan", {"step": 4}, if_match=got["etag"])
        assert err.value.status == 412 and err.value.code == "precondition_failed"
        with pytest.raises(isobox.IsoboxError) as err:
            box.memory.put(prefix + "plan", 5, if_none_match=True)
        assert err.value.status == 412
        assert json.loads(box.memory.get(prefix + "plan")["value"]) == {"step": 3}
        assert box.memory.put(prefix + "brief", "soon", ttl_seconds=60)["expiresAt"] is not None
        # Pages: two at a time, every key once, in order.
        page = box.memory.list(prefix, limit=2)
        assert len(page["keys"]) == 2 and page["cursor"] == page["keys"][1]["key"]
        assert [i["key"] for i in box.memory.keys(prefix)] == \
            [prefix + k for k in ("brief", "plan", "raw", "text")]
        box.memory.delete(prefix + "raw")
        with pytest.raises(isobox.IsoboxError) as err:
            box.memory.get(prefix + "raw")
        assert err.value.status == 404 and err.value.code == "key_not_found"

        async def go():
            mem = isobox.AsyncIsobox(URL).memory
            item = await mem.put(prefix + "async", [1, 2])
            got = await mem.get(prefix + "async")
            assert json.loads(got["value"]) == [1, 2] and got["etag"] == item["etag"]
            await mem.delete(prefix + "async", if_match=item["etag"])
            return [i["key"] async for i in mem.keys(prefix)]
        assert asyncio.run(go()) == [prefix + k for k in ("brief", "plan", "text")]
    finally:
        for item in box.memory.keys(prefix):
            box.memory.delete(item["key"])
    assert box.memory.list(prefix)["keys"] == []


def test_python_volumes(isobox):
    """/v1/volumes through the client: made, files put and listed, used by
    a run at /memory, deleted; with asyncio too."""
    box = isobox.Isobox(URL)
    name = f"clients-{os.getpid()}"
    vol = box.create_volume(name, 16 << 20)
    try:
        assert isinstance(vol, isobox.Volume) and vol.info["state"] == "ready" and vol.name == name
        assert vol.upload("in/data.csv", "a,b\n1,2\n") == {"path": "in/data.csv", "size": 8}
        assert [(e["name"], e["type"]) for e in vol.files()] == [("in", "directory")]
        r = box.execute("python", "print(open('/memory/in/data.csv').read().split()[1])", volume=name)
        assert r["run"]["stdout"] == "1,2\n"
        assert vol.download("in/data.csv") == b"a,b\n1,2\n"
        assert name in {v["name"] for v in box.volumes()}
        assert box.volume(name).info["usedBytes"] > 0 and vol.refresh()["sizeBytes"] == 16 << 20
        vol.remove("in")
        assert vol.files() == []

        async def go():
            abox = isobox.AsyncIsobox(URL)
            avol = await abox.volume(name)
            assert isinstance(avol, isobox.AsyncVolume)
            await avol.upload("x.bin", bytes(range(256)))
            assert await avol.download("x.bin") == bytes(range(256))
            assert [e["name"] for e in await avol.files()] == ["x.bin"]
            await avol.remove("x.bin")
            assert name in {v["name"] for v in await abox.volumes()}
        asyncio.run(go())
    finally:
        vol.delete()
    with pytest.raises(isobox.IsoboxError) as err:
        box.volume(name)
    assert err.value.status == 404 and err.value.code == "volume_not_found"


def test_js_memory_volumes_and_options(js_project):
    prefix, name = f"clients-js-{os.getpid()}/", f"clients-js-{os.getpid()}"
    try:
        proc = subprocess.run(["node", "js_store.mjs", URL, prefix, name], cwd=js_project,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        got = json.loads(proc.stdout)
        assert got["isMemory"] and got["json"] == ["application/json", {"step": 2}, True]
        assert got["raw"] == [0, 255] and got["text"] == ["é", "text/markdown", True]
        assert got["stale"] == [412, "precondition_failed"] and got["created"] == [412, "precondition_failed"]
        assert got["badOption"].startswith("TypeError: memory.put(): unknown option")
        assert got["page"] == [2, True] and got["keys"] == ["plan", "raw", "text"]
        assert got["missing"] == [404, "key_not_found"]
        assert got["isVolume"] == [True, True, "ready"]
        assert got["upload"] == {"path": "in/data.csv", "size": 8} and got["top"] == [["in", "directory"]]
        assert got["run"] == "1,2\n" and got["download"] == "a,b\n1,2\n"
        assert got["listed"] and got["used"] and got["refresh"] == 16 << 20
        assert got["empty"] == [] and got["gone"] == [404, "volume_not_found"]
        assert got["options"] == [500, 0, 120000, 3] and got["timeout"] == [0, "timeout"]
        assert got["badWith"].startswith("TypeError: withOptions(): unknown option")
    finally:
        request("DELETE", f"/v1/volumes/{name}")
        status, _, body = request("GET", "/v1/memory?prefix=" + prefix)
        for item in body["keys"] if status == 200 else []:
            request("DELETE", "/v1/memory/" + item["key"])


def test_python_with_options_is_a_copy_for_one_call(isobox):
    box = isobox.Isobox(URL, timeout=30)
    quick = box.with_options(timeout=0.5, retries=0)
    assert (quick.timeout, quick.retries, box.timeout, box.retries) == (0.5, 0, 30, 3)
    with pytest.raises(isobox.IsoboxError) as err:
        quick.execute("python", "import time\ntime.sleep(3)")
    assert err.value.status == 0 and err.value.code == "timeout"
    assert box.execute("python", "print(1)")["run"]["stdout"] == "1\n"
    with pytest.raises(ValueError):
        box.with_options(timeout=0)
    assert asyncio.run(isobox.AsyncIsobox(URL).with_options(timeout=60).execute(
        "python", "print(2)"))["run"]["stdout"] == "2\n"


# -- succeeded() ------------------------------------------------------------------------------

def test_succeeded_says_whether_the_run_went_well(isobox, js_project):
    box = isobox.Isobox(URL)
    cases = {
        "ok": box.execute("python", "print(1)"),
        "exit 3": box.execute("python", "raise SystemExit(3)"),
        "timed out": box.execute("python", "while True: pass", limits={"wallTimeMs": 1000}),
        "oom": box.execute("python", "a = bytearray(200 * 1024 * 1024)", limits={"memoryBytes": 64 << 20}),
        "truncated": box.execute("python", "while True: print('x' * 40)", limits={"outputBytes": 100}),
        "compile failed": box.execute("c", "int main(void) { return x; }"),
        "compiled": box.execute("c", "int main(void) { return 0; }"),
    }
    with box.session("python", "kernel", idle_timeout_ms=IDLE) as k:
        cases["cell"] = k.exec("1 + 1")
        cases["cell raised"] = k.exec("{}['missing']")
        cases["stream result"] = [e for e in k.stream("print(2)")][-1]["data"]
    assert cases["timed out"]["run"]["timedOut"] and cases["oom"]["run"]["oomKilled"]
    assert cases["truncated"]["run"]["truncated"] and "run" not in cases["compile failed"]
    want = {"ok": True, "exit 3": False, "timed out": False, "oom": False, "truncated": False,
            "compile failed": False, "compiled": True, "cell": True, "cell raised": False,
            "stream result": True}
    assert {name: isobox.succeeded(r) for name, r in cases.items()} == want
    assert not isobox.succeeded(None) and not isobox.succeeded({})
    # The JavaScript client's succeeded() says the same of the same results.
    names = list(cases)
    got = call("js", isobox, js_project, URL, "succeeded", *[cases[n] for n in names], None, {})
    assert got["value"] == [want[n] for n in names] + [False, False]


# -- the two clients alike ---------------------------------------------------------------------

def test_unknown_options_are_refused_before_anything_is_sent(isobox, js_project):
    with FakeServer(answer(200, RESULT)) as fake:
        for make in (isobox.Isobox, isobox.AsyncIsobox):
            with pytest.raises(TypeError, match="timeot"):
                make(fake.url, timeot=5)
        box = isobox.Isobox(fake.url)
        with pytest.raises(TypeError, match="limit"):
            box.execute("python", "print(1)", limit={"wallTimeMs": 1})
        with pytest.raises(TypeError, match="idle_timeout"):
            box.session("python", idle_timeout=5)
        with pytest.raises(TypeError, match="memory"):
            isobox.Session(box, {"id": "main-x"}).exec("1", memory=1)
        with pytest.raises(TypeError):
            box.execute("python", "print(1)", code="print(2)")
        abox = isobox.AsyncIsobox(fake.url)
        with pytest.raises(TypeError, match="limit"):
            asyncio.run(abox.execute("python", "print(1)", limit={}))
        with pytest.raises(TypeError, match="stdn"):
            abox.stream("python", "1", stdn="")
        js = [("execute", "python", "print(1)", {"limit": {"wallTimeMs": 1}}),
              ("execute", "python", {"code": "print(1)", "limit": {}}),
              ("execute", "python", "print(1)", {"code": "print(2)"}),
              ("stream", "python", "print(1)", {"stdn": ""}),
              ("session", "python", {"idleTimeout": 5}),
              ("session", "python", "kernel", {"type": "shell"})]
        for method, *args in js:
            got = node(js_project, "js_call.mjs", json.dumps({"url": fake.url, "call": method, "args": args}))
            assert got["error"]["name"] == "TypeError", (method, args, got)
        got = node(js_project, "js_call.mjs", json.dumps({"url": fake.url, "options": {"timeout": 5},
                                                          "call": "runtimes", "args": []}))
        assert got["error"]["name"] == "TypeError" and "timeout" in got["error"]["message"]
        assert fake.requests == []


def test_both_clients_send_the_same_requests(isobox, js_project):
    """The same call in the blocking, the asyncio and the JavaScript client
    (the code positional, the rest as options of the same names) puts the
    same request on the wire."""
    execute = {"files": None, "stdin": "in", "args": ["a"], "limits": {"wallTimeMs": 1000},
               "network": False, "version": "3", "outputs": ["*.txt"], "volume": "v",
               "volume_read_only": True}
    session = {"version": "3", "limits": {"memoryBytes": 1 << 27}, "network": False,
               "idle_timeout_ms": 5000, "max_lifetime_ms": 60000, "volume": "v",
               "volume_read_only": False}
    step = {"stdin": "in", "args": ["a"], "limits": {"outputBytes": 100}}

    def camel(options):
        return {re.sub(r"_(.)", lambda m: m.group(1).upper(), k): v for k, v in options.items()}

    seen = {}
    for flavour in FLAVOURS:
        with FakeServer(answer(200, dict(RESULT, id="main-x"))) as fake:
            if flavour == "sync":
                box = isobox.Isobox(fake.url, api_key="k1")
                box.execute("python", "print(1)", **execute)
                box.session("python", "kernel", **session)
                isobox.Session(box, {"id": "main-x"}).exec("print(2)", **step)
            elif flavour == "async":
                async def go():
                    box = isobox.AsyncIsobox(fake.url, api_key="k1")
                    await box.execute("python", "print(1)", **execute)
                    await box.session("python", "kernel", **session)
                    await isobox.AsyncSession(box, {"id": "main-x"}).exec("print(2)", **step)
                asyncio.run(go())
            else:
                for method, args in (("execute", ["python", "print(1)", camel(execute)]),
                                     ("session", ["python", "kernel", camel(session)]),
                                     ("session.exec", ["print(2)", camel(step)])):
                    got = node(js_project, "js_call.mjs", json.dumps(
                        {"url": fake.url, "options": {"apiKey": "k1"}, "call": method, "args": args}))
                    assert "error" not in got, got
            seen[flavour] = [(method, path, json.loads(body), headers.get("authorization"),
                              headers.get("content-type"), headers.get("accept"))
                             for method, path, headers, body in fake.requests]
    assert seen["sync"][0][2] == {"language": "python", "code": "print(1)", "stdin": "in", "args": ["a"],
                                  "limits": {"wallTimeMs": 1000}, "network": False, "version": "3",
                                  "outputs": ["*.txt"], "volume": "v", "volumeReadOnly": True}
    assert seen["sync"][1][:3] == ("POST", "/v1/sessions", {
        "language": "python", "type": "kernel", "version": "3", "limits": {"memoryBytes": 1 << 27},
        "network": False, "idleTimeoutMs": 5000, "maxLifetimeMs": 60000, "volume": "v",
        "volumeReadOnly": False})
    assert seen["sync"][2][:2] == ("POST", "/v1/sessions/main-x/exec")
    assert seen["sync"][0][3:] == ("Bearer k1", "application/json", "application/json")
    assert seen["async"] == seen["sync"] and seen["js"] == seen["sync"]


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_connection_failures_are_the_clients_error(flavour, isobox, js_project):
    url = f"http://127.0.0.1:{free_port()}"
    got = call(flavour, isobox, js_project, url, "runtimes")
    assert got["error"]["status"] == 0 and got["error"]["code"] == "connection_failed", got
    assert got["error"]["message"].startswith(f"cannot reach {url}"), got
    # One request, not retried after its timeout. The fake server's thread
    # may read it after the client has given up (a loaded host: CI saw none
    # read when a 0.5 s client returned), so wait for it.
    with FakeServer({"hang": True}) as fake:
        got = call(flavour, isobox, js_project, fake.url, "execute", "python", "1", timeout=1.0)
        assert got["error"]["status"] == 0 and got["error"]["code"] == "timeout", got
        assert got["elapsed"] < 3 and wait_until(lambda: fake.requests, 5), (got, fake.requests)
        assert len(fake.requests) == 1, fake.requests
    # A stream cut short: the events before it, then the error.
    with FakeServer(sse(("stdout", {"data": "a\n"}), cut=True)) as fake:
        got = call(flavour, isobox, js_project, fake.url, "stream", "python", "1")
        assert got["error"]["status"] == 0 and got["error"]["code"] == "connection_failed", got
        assert "broke" in got["error"]["message"]


# -- retries ----------------------------------------------------------------------------------

def http_date(seconds_from_now):
    return email.utils.formatdate(time.time() + seconds_from_now, usegmt=True)


OK = answer(200, RESULT)
RETRIED = {   # the answers are made when the test runs (a date in them)
    # name: (answers, client options, (status, code) of the error or None, requests, least time)
    "503 busy, Retry-After 1": (lambda: [error(503, "busy", 1), OK], {}, None, 2, 0.9),
    "503 busy, no Retry-After: 1 s": (lambda: [error(503, "busy"), OK], {}, None, 2, 0.9),
    "429, Retry-After a date": (lambda: [error(429, "rate_limited", http_date(2)), OK], {}, None, 2, 0.5),
    "429 too_many_executions twice": (lambda: [error(429, "too_many_executions", 0)] * 2 + [OK], {},
                                      None, 3, 0),
    "at most `retries` times": (lambda: [error(429, "rate_limited", 0)], {"retries": 2},
                                (429, "rate_limited"), 3, 0),
    "retries=0: never": (lambda: [error(503, "busy", 0), OK], {"retries": 0}, (503, "busy"), 1, 0),
    "longer than max_retry_wait: at once": (lambda: [error(429, "rate_limited", 100), OK], {},
                                            (429, "rate_limited"), 1, 0),
    "past max_retry_wait in all": (lambda: [error(503, "busy", 1)] * 3 + [OK], {"max_retry_wait": 1.5},
                                   (503, "busy"), 2, 0.9),
}
NOT_RETRIED = [(503, "sandbox_failed"), (503, "service_unavailable"), (503, "worker_stopping"),
               (500, "internal"), (504, "gateway_timeout"), (409, "session_busy"),
               (429, "too_many_sessions"), (400, "invalid_request")]


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("case", list(RETRIED))
def test_retries_of_refused_requests(flavour, case, isobox, js_project):
    answers, options, failure, requests, least = RETRIED[case]
    with FakeServer(*answers()) as fake:
        got = call(flavour, isobox, js_project, fake.url, "execute", "python", "print(1)", **options)
        if failure:
            assert (got.get("error", {}).get("status"), got.get("error", {}).get("code")) == failure, got
        else:
            assert got.get("value") == RESULT, got
        assert len(fake.requests) == requests, (got, fake.requests)
        assert got["elapsed"] >= least, got
        assert len({(m, p, b) for m, p, _, b in fake.requests}) == 1      # the same request again
    if case == "longer than max_retry_wait: at once":
        assert got["error"]["retryAfter"] == 100 and got["elapsed"] < 5


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_other_errors_are_never_retried(flavour, isobox, js_project):
    for status, code in NOT_RETRIED:
        with FakeServer(error(status, code, 0), OK) as fake:
            got = call(flavour, isobox, js_project, fake.url, "execute", "python", "print(1)")
            assert (got["error"]["status"], got["error"]["code"]) == (status, code), got
            assert len(fake.requests) == 1, (status, code)
    # Not JSON (a proxy's page): the status and the text.
    with FakeServer(answer(502, b"<html>Bad Gateway</html>"), OK) as fake:
        got = call(flavour, isobox, js_project, fake.url, "execute", "python", "print(1)")
        assert got["error"]["status"] == 502 and got["error"]["code"] == "http_error"
        assert "Bad Gateway" in got["error"]["message"] and len(fake.requests) == 1


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_stream_is_retried_before_it_begins(flavour, isobox, js_project):
    with FakeServer(error(429, "rate_limited", 0), sse(("stdout", {"data": "hi\n"}), ("result", RESULT))) as fake:
        got = call(flavour, isobox, js_project, fake.url, "stream", "python", "print('hi')")
        assert got["value"] == [["stdout", "hi\n"], ["result", RESULT]], got
        assert len(fake.requests) == 2
        assert fake.requests[1][2]["accept"] == "text/event-stream"


TENANTS = """tenants:
  clients-rate:
    requestsPerMinute: 30
  clients-one:
    concurrentExecutions: 1
"""


def test_retries_on_the_real_rate_limit(isobox, js_project):
    """A tenant of 30 requests a minute (a burst of 30, then one every 2 s)
    gets real 429s with Retry-After: each client waits them out, or, told
    not to (retries=0, or a max_retry_wait shorter), says so at once."""
    with tenants_file(TENANTS):
        key, _ = new_key("clients-rate")
        reload_pool()

        def spend():
            for _ in range(200):
                status, headers, body = request("GET", "/runtimes", headers={"Authorization": f"Bearer {key}"})
                if status == 429:
                    assert body["error"]["code"] == "rate_limited" and int(headers["Retry-After"]) >= 1
                    return
                assert status == 200, body
            pytest.fail("no 429 after 200 requests")

        def refused(flavour, **options):
            """The call right after the share is spent: refused at once. (The
            share may come back in between, one every 2 s: then again.)"""
            for _ in range(5):
                spend()
                got = call(flavour, isobox, js_project, URL, "runtimes", api_key=key, **options)
                if "error" in got:
                    return got
            pytest.fail(f"{flavour}: never refused")

        def waited(flavour):
            """The call right after the share is spent: it waits, then passes."""
            for _ in range(5):
                spend()
                got = call(flavour, isobox, js_project, URL, "runtimes", api_key=key)
                assert "python" in {x["language"] for x in got["value"]["runtimes"]}, got
                if got["elapsed"] >= 0.5:
                    return
            pytest.fail(f"{flavour}: never waited")

        for flavour in FLAVOURS:
            got = refused(flavour, retries=0)
            assert got["error"]["status"] == 429 and got["error"]["code"] == "rate_limited", got
            assert 1 <= got["error"]["retryAfter"] <= 2, got
            got = refused(flavour, max_retry_wait=0.2)
            assert got["error"]["code"] == "rate_limited" and got["elapsed"] < 2, got
            waited(flavour)


def test_retries_while_the_tenant_runs_its_most_programs(isobox):
    """concurrentExecutions 1: while one program runs, another is refused
    429 too_many_executions (Retry-After 1) before it runs; the client
    sends it again until the first ends, at most `retries` times."""
    with tenants_file(TENANTS):
        key, _ = new_key("clients-one")
        reload_pool()
        running = threading.Event()
        first = []

        def run_first():
            box = isobox.Isobox(URL, api_key=key)
            for ev in box.stream("python", "import time\nprint('first', flush=True)\ntime.sleep(4)"):
                first.append(ev)
                running.set()

        runner = threading.Thread(target=run_first)
        runner.start()
        try:
            assert running.wait(60)
            with pytest.raises(isobox.IsoboxError) as err:
                isobox.Isobox(URL, api_key=key, retries=0).execute("python", "print(0)")
            assert err.value.status == 429 and err.value.code == "too_many_executions"
            assert err.value.retry_after == 1
            start = time.monotonic()
            with pytest.raises(isobox.IsoboxError) as err:
                isobox.Isobox(URL, api_key=key, retries=1).execute("python", "print(1)")
            assert err.value.code == "too_many_executions" and 0.9 <= time.monotonic() - start < 3
            start = time.monotonic()
            r = isobox.Isobox(URL, api_key=key, retries=20).execute("python", "print('second')")
            assert r["run"]["stdout"] == "second\n" and time.monotonic() - start >= 0.9
        finally:
            runner.join(60)
        assert first[0]["data"] == b"first\n" and first[-1]["data"]["run"]["exitCode"] == 0
