"""The playground (GET /) in a real browser: Debian's chromium, headless,
driven by playwright-core (tests/integration/js/playground.mjs)."""
import json
import os
import re
import signal
import subprocess

from conftest import URL, request
from tenants_util import new_key, reload_pool, tenants_file

JS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "js")


def drive(mode, env=None):
    """Run playground.mjs in `mode` ("once", "session" or "key") with `env`
    added to the environment; its JSON report."""
    proc = subprocess.Popen(["node", "playground.mjs", URL, mode], cwd=JS_DIR, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, **(env or {})})
    out = err = ""
    try:
        try:
            out, err = proc.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
    finally:
        # Whatever happened, leave no browser behind: the whole session goes.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        # ...and no isobox session: the script deletes those it saw, but not
        # if it was killed first; it names each on stderr as it sees it.
        for sid in set(re.findall(r"^session ([a-z0-9-]+-[0-9a-f]{32})$", err, re.M)):
            request("DELETE", f"/v1/sessions/{sid}")
    report = json.loads(out)
    assert proc.returncode == 0 and report["ok"], report.get("error", "") + "\n" + err[-2000:]
    return report


def test_playground_runs_code_and_streams_output():
    report = drive("once")
    names = {c["name"] for c in report["checks"] if c["ok"]}
    assert "first line visible while still running" in names
    assert "failing program shows its exit code" in names
    assert report["failing"]["exitCode"] == "3"
    assert report["progressive"]["done"]["exitCode"] == "0"
    # The first line came while the program still had seconds to run.
    assert report["progressive"]["early"]["state"] == "running"
    assert report["foreignRequests"] == [] and report["pageErrors"] == []


def test_playground_session_mode_notebook():
    """Session mode: cells share one kernel session; the second cell uses the
    first's variable and its value shows; End session deletes it."""
    report = drive("session")
    names = {c["name"] for c in report["checks"] if c["ok"]}
    assert {"a cell's output shows while it runs", "the second cell sees the first's variable and shows its value",
            "output is escaped and an error shows its traceback", "End session deletes it"} <= names
    sid = report["session"]["id"]
    assert report["session"]["second"]["value"] == "43"
    assert request("GET", f"/v1/sessions/{sid}")[0] == 404
    assert report["foreignRequests"] == [] and report["pageErrors"] == []


def test_playground_api_key_field():
    """The API key field: a wrong key typed in makes the listing and a run
    answer 401 and the page says a key is needed (from the operator,
    isobox-fcgi --new-key); a valid key lists and runs; the key stays in
    sessionStorage, never in localStorage or a URL."""
    with tenants_file("tenants: {}\n"):
        key, _ = new_key("playground")
        reload_pool()
        wrong = key[:-1] + ("0" if key[-1] != "0" else "1")
        report = drive("key", env={"ISOBOX_KEY": key, "ISOBOX_WRONG_KEY": wrong})
    names = {c["name"] for c in report["checks"] if c["ok"]}
    assert {"a wrong key is sent with GET runtimes and refused",
            "a refused listing shows the key message, the field focused",
            "a run with the wrong key answers 401", "the refused run shows the key message, the field focused",
            "the valid key lists the languages", "a run with the valid key prints its output"} <= names
    assert "isobox-fcgi --new-key" in report["refused"]["text"]
    assert report["ran"]["output"] == "hello with a key 42\n"
    # Every API call after the valid key was entered (until the field was
    # emptied) carried it; none carried the key in its URL.
    after = report["requests"][[r[2] for r in report["requests"]].index("good"):]
    api = [r for r in after if r[1] != "/"]
    assert api and all(r[2] == "good" for r in api[:-1]) and api[-1][2] == "none", api
    assert report["keyInUrl"] == [] and report["foreignRequests"] == [] and report["pageErrors"] == []


def test_playground_editor_tab_kept_code_and_layout():
    """Tab indents (Esc, Tab leaves), the code is kept per language across a
    reload, and a narrow window shows the output right under the editor."""
    report = drive("editor")
    names = {c["name"] for c in report["checks"] if c["ok"]}
    for name in ("Tab inserts an indent in the code box", "a reload keeps the language and its code",
                 "narrow: the output right under the editor, above the limits",
                 "wide: the output beside the editor", "Escape, then Tab, leaves the box"):
        assert name in names, (name, report["checks"])
    assert report["foreignRequests"] == [] and report["pageErrors"] == []
