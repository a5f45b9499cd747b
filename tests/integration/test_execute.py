"""POST /execute through Caddy, the FastCGI pool and gVisor: the contract."""
import concurrent.futures
import json
import os
import subprocess

from conftest import LOG_DIR, POOL, execute, request, run_ok


def test_contract_example():
    status, result = execute({"language": "python", "code": "print(sum(range(100)))"})
    assert status == 200
    assert result["language"] == "python"
    assert result["backend"] == "gvisor"
    assert result["version"].startswith("3.13.")
    run = result["run"]
    assert run["stdout"] == "4950\n"
    assert run["stderr"] == ""
    assert run["exitCode"] == 0
    assert run["timedOut"] is False
    assert run["oomKilled"] is False
    assert run["truncated"] is False
    assert 0 <= run["durationMs"] < 10000


def test_alias_and_version_pin():
    status, result = execute({"language": "py3", "version": "3.13", "code": "print(1)"})
    assert status == 200 and result["language"] == "python"
    assert result["run"]["stdout"] == "1\n"


def test_python_slim_runs_and_lacks_the_batteries():
    run = run_ok("import sys\nprint(sys.version_info[:2])\nimport pandas", language="python-slim")
    assert run["stdout"] == "(3, 13)\n"
    assert run["exitCode"] == 1
    assert "No module named 'pandas'" in run["stderr"]


def test_batteries_included():
    code = ("import requests, httpx, bs4, lxml, pandas, numpy\n"
            "df = pandas.DataFrame({'a': numpy.arange(4)})\n"
            "print(int(df.a.sum()), bs4.BeautifulSoup('<p>hi</p>', 'lxml').p.text)")
    run = run_ok(code, limits={"wallTimeMs": 20000})  # six imports, cold, on a loaded host
    assert run["stdout"] == "6 hi\n", run


def test_batteries_for_science_tables_and_images():
    """What agents reach for beyond pandas, each doing real work: a fit
    (scikit-learn), an integral (sympy), a root (scipy), a workbook written
    and read back (openpyxl), a table (tabulate), a figure (plotly) and a
    PNG (pillow)."""
    code = ("import io, sklearn.linear_model as lm, sympy, scipy.optimize, openpyxl, tabulate, plotly.graph_objects as go\n"
            "from PIL import Image\n"
            "m = lm.LinearRegression().fit([[0], [1], [2]], [1, 3, 5])\n"
            "x = sympy.symbols('x')\n"
            "root = scipy.optimize.brentq(lambda v: v * v - 2, 0, 2)\n"
            "wb = openpyxl.Workbook(); wb.active['A1'] = 'cell'; buf = io.BytesIO(); wb.save(buf)\n"
            "back = openpyxl.load_workbook(io.BytesIO(buf.getvalue())).active['A1'].value\n"
            "fig = go.Figure(go.Bar(x=['a'], y=[1]))\n"
            "png = io.BytesIO(); Image.new('RGB', (4, 4), 'red').save(png, 'PNG')\n"
            "print(round(float(m.coef_[0]), 3), sympy.integrate(x**2, (x, 0, 3)), round(root, 4), back,\n"
            "      tabulate.tabulate([[1, 2]], tablefmt='plain'), fig.data[0].type, png.getvalue()[:4] == b'\\x89PNG')")
    run = run_ok(code, limits={"wallTimeMs": 20000})
    assert run["stdout"] == "2.0 9 1.4142 cell 1  2 bar True\n", run


def test_stdin():
    run = run_ok("import sys\ndata = sys.stdin.read()\nprint(len(data), data.upper(), end='')",
                 stdin="hello\nworld\n")
    assert run["stdout"] == "12 HELLO\nWORLD\n"


def test_large_stdin_is_delivered_whole():
    payload = "x" * 500000 + "\n"
    run = run_ok("import sys\nprint(len(sys.stdin.read()))", stdin=payload)
    assert run["stdout"] == "500001\n"


def test_args_are_passed_verbatim():
    args = ["a b", "$(id)", "; rm -rf /", "'\"", "--help", ""]
    run = run_ok("import sys, json\nprint(json.dumps(sys.argv[1:]))", args=args)
    assert json.loads(run["stdout"]) == args


def test_multi_file_import_and_data_file():
    files = [
        {"name": "main.py", "content": "import helper\nfrom pkg import mod\n"
                                       "print(helper.twice(21), mod.NAME, open('data/in.txt').read())"},
        {"name": "helper.py", "content": "def twice(x):\n    return 2 * x\n"},
        {"name": "pkg/__init__.py", "content": ""},
        {"name": "pkg/mod.py", "content": "NAME = 'mod'\n"},
        {"name": "data/in.txt", "content": "payload"},
    ]
    status, result = execute({"language": "python", "files": files})
    assert status == 200, result
    assert result["run"]["stdout"] == "42 mod payload\n"


def test_first_file_is_the_entry_point():
    files = [{"name": "b.py", "content": "print('b is main')"},
             {"name": "a.py", "content": "print('a is not')"}]
    status, result = execute({"language": "python", "files": files})
    assert status == 200 and result["run"]["stdout"] == "b is main\n"


def test_work_dir_is_writable_and_code_is_a_copy():
    run = run_ok("import os\nopen('out.txt', 'w').write('x')\n"
                 "os.remove('main.py')\nprint(sorted(os.listdir('.')), os.getcwd())")
    assert run["stdout"] == "['out.txt'] /box\n"


def test_nonzero_exit_and_stderr():
    run = run_ok("import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)")
    assert run["exitCode"] == 3
    assert run["stdout"] == "out\n"
    assert run["stderr"] == "err\n"
    assert not run["timedOut"] and not run["oomKilled"]


def test_stdout_and_stderr_interleaved_keep_only_program_bytes():
    """Output on stdout from the first instant must not let isobox's start
    mark (a byte on stderr) slip into stderr."""
    code = ("import sys\n"
            "for i in range(20):\n"
            "    sys.stdout.write('a' * 5000); sys.stdout.flush()\n"
            "    sys.stderr.write('e'); sys.stderr.flush()\n")
    run = run_ok(code, limits={"outputBytes": 200000})
    assert run["truncated"] is False
    assert run["stderr"] == "e" * 20
    assert run["stdout"] == "a" * 100000


def test_uncaught_exception():
    run = run_ok("raise ValueError('boom')")
    assert run["exitCode"] == 1
    assert "ValueError: boom" in run["stderr"]


def test_infinite_loop_times_out_near_the_wall_time():
    run = run_ok("while True:\n    pass", limits={"wallTimeMs": 1000})
    assert run["timedOut"] is True
    assert run["oomKilled"] is False
    assert run["exitCode"] != 0
    assert 900 <= run["durationMs"] <= 2500, run["durationMs"]


def test_sleep_times_out_too():
    run = run_ok("import time\nprint('start', flush=True)\ntime.sleep(60)",
                 limits={"wallTimeMs": 1500})
    assert run["timedOut"] is True
    assert run["stdout"] == "start\n"
    assert 1400 <= run["durationMs"] <= 3000


def test_memory_hog_is_oom_killed():
    code = "chunks = []\nwhile True:\n    chunks.append(bytearray(8 * 1024 * 1024))"
    run = run_ok(code, limits={"memoryBytes": 64 * 1024 * 1024, "wallTimeMs": 15000})
    assert run["oomKilled"] is True, run
    assert run["timedOut"] is False
    assert run["exitCode"] == 137


def test_output_flood_is_truncated_at_output_bytes():
    code = "import sys\nwhile True:\n    sys.stdout.write('x' * 4096)"
    status, result = execute({"language": "python", "code": code,
                              "limits": {"outputBytes": 10000, "wallTimeMs": 10000}})
    assert status == 200
    run = result["run"]
    assert run["truncated"] is True
    assert run["timedOut"] is False, "the run must be killed at the cap, not at wall time"
    assert len(run["stdout"]) + len(run["stderr"]) <= 10000
    assert len(run["stdout"]) == 10000
    assert set(run["stdout"]) == {"x"}
    assert result["limits"]["outputBytes"] == 10000


def test_output_under_the_cap_is_not_truncated():
    run = run_ok("print('y' * 999)", limits={"outputBytes": 1000})
    assert run["truncated"] is False and run["stdout"] == "y" * 999 + "\n"


def test_binary_output_comes_back_as_valid_json():
    code = "import sys\nsys.stdout.buffer.write(bytes(range(256)))"
    run = run_ok(code)
    out = run["stdout"]
    assert out[:32] == "".join(chr(i) for i in range(32)), "control bytes kept"
    assert out[32:128] == "".join(chr(i) for i in range(32, 128))
    assert out[128:] == "\ufffd" * 128, "invalid UTF-8 replaced byte by byte"


def test_limits_above_ceilings_are_clamped_and_visible_inside():
    code = ("import os, resource\n"
            "mem = [l for l in open('/proc/meminfo') if l.startswith('MemTotal')][0].split()[1]\n"
            "print(mem, resource.getrlimit(resource.RLIMIT_NPROC)[0])")
    status, result = execute({"language": "python", "code": code,
                              "limits": {"memoryBytes": 4 << 30, "pids": 100000,
                                         "cpus": 16, "wallTimeMs": 600000,
                                         "outputBytes": 1 << 30}})
    assert status == 200, result
    assert result["limits"] == {"memoryBytes": 512 << 20, "cpus": 2, "pids": 256,
                                "outputBytes": 256 << 10, "wallTimeMs": 20000}
    mem_kb, nproc = result["run"]["stdout"].split()
    assert int(mem_kb) == 512 * 1024, "sandbox sees the clamped memory limit"
    assert int(nproc) == 256


def test_requested_limits_below_ceiling_apply():
    code = ("import resource\n"
            "mem = [l for l in open('/proc/meminfo') if l.startswith('MemTotal')][0].split()[1]\n"
            "print(mem, resource.getrlimit(resource.RLIMIT_NPROC)[0])")
    run = run_ok(code, limits={"memoryBytes": 96 << 20, "pids": 20})
    assert run["stdout"].split() == [str(96 * 1024), "20"]


def test_process_limit_stops_a_fork_loop():
    code = ("import os, time\nn = 0\n"
            "try:\n"
            "    while n < 500:\n"
            "        if os.fork() == 0:\n"
            "            time.sleep(5); os._exit(0)\n"
            "        n += 1\n"
            "except OSError as e:\n"
            "    print('stopped', n, e.errno)\n")
    run = run_ok(code, limits={"pids": 16, "wallTimeMs": 8000})
    words = run["stdout"].split()
    assert words[0] == "stopped", run
    assert int(words[1]) < 16 and words[2] == "11"  # EAGAIN


def test_concurrent_requests_up_to_pool_size():
    def one(i):
        return execute({"language": "python",
                        "code": f"import time\ntime.sleep(1)\nprint({i} * 2)"})

    with concurrent.futures.ThreadPoolExecutor(max_workers=POOL) as ex:
        results = list(ex.map(one, range(POOL)))
    for i, (status, result) in enumerate(results):
        assert status == 200, result
        assert result["run"]["stdout"] == f"{i * 2}\n"


def test_runtimes_lists_languages_versions_aliases():
    status, _, body = request("GET", "/runtimes")
    assert status == 200
    assert body["backend"] == "gvisor"
    by_name = {r["language"]: r for r in body["runtimes"] if r["default"]}  # one per language
    assert {"python", "python-slim"} <= set(by_name)
    assert {"py", "py3", "python3"} <= set(by_name["python"]["aliases"])
    assert by_name["python"]["version"].startswith("3.13.")
    assert by_name["python"]["available"] is True
    assert body["ceilings"]["memoryBytes"] == 512 << 20


def test_healthz():
    status, _, body = request("GET", "/healthz")
    assert status == 200 and body["status"] == "ok", body
    # A word for each part a run needs; this host has all of them.
    checks = body["checks"]
    assert checks["dockerd"] == {"ok": True} and checks["images"] == {"ok": True, "missing": []}, checks
    assert checks["egress"]["ok"] is True and checks["egress"]["mode"], checks  # network.enabled
    assert checks["volumes"]["ok"] is True and checks["volumes"]["freeBytes"] > 16 << 20, checks


def test_healthz_and_runtimes_say_which_runsc_runs_them():
    """The runtime as dockerd has it registered: runsc's own --version and
    the platform in its runtime's arguments (setup measured and chose it),
    in /healthz, /runtimes and the pool's log."""
    version = subprocess.run(["runsc", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    platform = open("/var/lib/isobox/platform").read().split("\n")[0]
    want = {"program": "runsc", "version": version.removeprefix("runsc version "), "platform": platform}
    assert want["version"].startswith("0.0~20240729"), want
    for path in ("/healthz", "/runtimes"):
        status, _, body = request("GET", path)
        assert status == 200 and body["runtime"] == want, (path, body)
    with open(os.path.join(LOG_DIR, "isobox.log")) as f:
        said = [line for line in f if "sandbox runtime: " in line]
    assert said and said[-1].rstrip().endswith(f"runsc {want['version']}, platform {platform}"), said[-3:]


def test_null_is_absent_for_every_optional_field():
    """Typed clients (pydantic, TypeScript) send null for the fields they
    leave out: /execute and /v1/sessions take null as absent."""
    status, r = execute({"language": "python", "version": None, "code": None,
                         "files": [{"name": None, "content": "import sys; print(sys.argv[1:], sys.stdin.read())",
                                    "encoding": None}],
                         "stdin": None, "args": None, "network": None, "outputs": None,
                         "volume": None, "volumeReadOnly": None,
                         "limits": {"cpus": None, "memoryBytes": None, "wallTimeMs": 5000}})
    assert status == 200, r
    assert r["run"]["stdout"] == "[] \n" and r["limits"]["wallTimeMs"] == 5000 and r["limits"]["cpus"] == 1, r
    status, _, s = request("POST", "/v1/sessions", {"language": "python", "type": None, "version": None,
                                                     "limits": None, "network": None, "idleTimeoutMs": None,
                                                     "maxLifetimeMs": None, "volume": None,
                                                     "volumeReadOnly": None})
    assert status == 201, s
    try:
        status, _, step = request("POST", f"/v1/sessions/{s['id']}/exec",
                                  {"code": "print('in a session')", "files": None, "stdin": None,
                                   "args": None, "limits": None})
        assert status == 200 and step["run"]["stdout"] == "in a session\n", step
    finally:
        assert request("DELETE", f"/v1/sessions/{s['id']}")[0] in (200, 204)


def test_each_phase_has_its_cpu_time_and_peak_memory():
    """The host's counts (the sandbox's cgroup): a compile's and a run's
    apart; a session step has its CPU time, and no peak of its own (the
    session's sandbox holds its whole life's)."""
    status, r = execute({"language": "c", "code": "int main(void) { return 0; }"})
    assert status == 200, r
    for phase in ("compile", "run"):
        got = r[phase]
        assert isinstance(got["cpuTimeMs"], int) and got["cpuTimeMs"] >= 0, r
        assert 0 < got["peakMemoryBytes"] <= r["limits"]["memoryBytes"], r
    assert r["compile"]["cpuTimeMs"] > r["run"]["cpuTimeMs"], "cc does more than an empty main"
    status, _, s = request("POST", "/v1/sessions", {"language": "python"})
    assert status == 201, s
    try:
        status, _, step = request("POST", f"/v1/sessions/{s['id']}/exec",
                                  {"code": "import time\nt = time.process_time()\n"
                                           "while time.process_time() - t < 0.5:\n    pass\n"})
        assert status == 200, step
        assert step["run"]["cpuTimeMs"] >= 400 and step["run"]["peakMemoryBytes"] is None, step
    finally:
        request("DELETE", f"/v1/sessions/{s['id']}")
