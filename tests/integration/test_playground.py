"""The playground (GET /) in a real browser: Debian's chromium, headless,
driven by playwright-core (tests/integration/js/playground.mjs)."""
import json
import os
import signal
import subprocess

from conftest import URL

JS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "js")


def test_playground_runs_code_and_streams_output():
    proc = subprocess.Popen(["node", "playground.mjs", URL], cwd=JS_DIR, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=240)
    finally:
        # Whatever happened, leave no browser behind: the whole session goes.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    report = json.loads(out)
    assert proc.returncode == 0 and report["ok"], report.get("error", "") + "\n" + err[-2000:]
    names = {c["name"] for c in report["checks"] if c["ok"]}
    assert "first line visible while still running" in names
    assert "failing program shows its exit code" in names
    assert report["failing"]["exitCode"] == "3"
    assert report["progressive"]["done"]["exitCode"] == "0"
    # The first line came while the program still had seconds to run.
    assert report["progressive"]["early"]["state"] == "running"
    assert report["foreignRequests"] == [] and report["pageErrors"] == []
