"""The playground (GET /) in a real browser: Debian's chromium, headless,
driven by playwright-core (tests/integration/js/playground.mjs, and the
API key script below)."""
import json
import os
import re
import signal
import subprocess

from conftest import URL, request
from tenants_util import new_key, reload_pool, tenants_file

JS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "js")


def drive(mode=None, script=None, env=None):
    """Run playground.mjs in `mode` ("once" or "session"), or `script` (an ES
    module, fed to node on stdin in JS_DIR, so that it finds playwright-core)
    with `env` added to the environment; its JSON report."""
    argv = ["node", "playground.mjs", URL, mode] if script is None else ["node", "--input-type=module", "-"]
    proc = subprocess.Popen(argv, cwd=JS_DIR, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, **(env or {})})
    out = err = ""
    try:
        try:
            out, err = proc.communicate(input=script or "", timeout=240)
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
        for sid in set(re.findall(r"^session ([0-9a-f]{32})$", err, re.M)):
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


# Drives the page's API key field. The browser loads the page from 127.0.0.1,
# which is in auth.anonymous, so no key is needed to list or run; but a key
# that is sent is checked, from there too: a wrong one is refused (401), a
# valid one is its tenant's. Prints a JSON report like playground.mjs.
KEY_SCRIPT = r"""
import { chromium } from "playwright-core";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const base = process.env.ISOBOX_URL.replace(/\/$/, "");
const good = process.env.ISOBOX_KEY, wrong = process.env.ISOBOX_WRONG_KEY;
const report = { checks: [], foreignRequests: [], pageErrors: [], keyInUrl: [], requests: [] };
function check(name, cond, detail) {
  report.checks.push({ name, ok: !!cond, detail });
  if (!cond) throw new Error(`${name}: ${JSON.stringify(detail)}`);
}
// Keys never go into the report: only which one a request carried.
const which = (auth) => auth === undefined ? "none" : auth === `Bearer ${good}` ? "good" :
  auth === `Bearer ${wrong}` ? "wrong" : "other";
const sent = (response) => which(response.request().headers()["authorization"]);

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "isobox-playground-"));
let context;
try {
  context = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = context.pages()[0] || await context.newPage();
  page.on("request", (r) => {
    const url = r.url();
    if (!url.startsWith(base + "/")) report.foreignRequests.push(url);
    if (url.includes(good) || url.includes(wrong))
      report.keyInUrl.push(url.replaceAll(good, "GOOD").replaceAll(wrong, "WRONG"));
    report.requests.push([r.method(), url.slice(base.length), which(r.headers()["authorization"])]);
  });
  page.on("pageerror", (e) => report.pageErrors.push(String(e)));
  page.setDefaultTimeout(60000);
  const answer = (p) => page.waitForResponse((r) => r.url() === base + "/" + p);
  const status = () => page.evaluate(() => {
    const s = document.getElementById("status");
    return { text: s.textContent, state: s.dataset.state, output: document.getElementById("output").textContent,
             focused: document.activeElement ? document.activeElement.id : null,
             stored: sessionStorage.getItem("isobox.apiKey") === null ? "none" : "some",
             localItems: localStorage.length, href: location.href.slice(location.origin.length) };
  });
  const keyText = (t) => t.includes("API key") && t.includes("isobox-fcgi --new-key");

  // Keyless from 127.0.0.1 (anonymous): the languages are listed.
  const first = answer("runtimes");
  await page.goto(base + "/");
  check("keyless listing from an anonymous address", (await first).status() === 200 && sent(await first) === "none",
        (await first).status());
  await page.waitForSelector("#language:not([disabled]) option[value=python]", { state: "attached" });
  const field = await page.$eval("#api-key", (f) => ({ type: f.type, autocomplete: f.getAttribute("autocomplete"),
                                                       value: f.value }));
  check("the key field is an empty password field, autocomplete off", field.type === "password" &&
        field.autocomplete === "off" && field.value === "", field);

  // (a) A wrong key, entered: the runtimes call sends it and answers 401; the
  // page says a key is needed, and where from, and gives the field focus.
  let r = answer("runtimes");
  await page.fill("#api-key", wrong);
  await page.press("#api-key", "Enter");
  r = await r;
  check("a wrong key is sent with GET runtimes and refused", r.status() === 401 && sent(r) === "wrong",
        [r.status(), sent(r)]);
  await page.waitForFunction(() => document.getElementById("status").dataset.state === "error");
  let s = await status();
  check("a refused listing shows the key message, the field focused", keyText(s.text) && s.text.includes("refused") &&
        s.focused === "api-key", s);
  check("the key is kept in sessionStorage only, never in the URL", s.stored === "some" && s.localItems === 0 &&
        s.href === "/", s);

  //     ...and so does a run: POST execute answers 401, nothing runs.
  await page.selectOption("#language", "python");   // still listed from the keyless load
  await page.fill("#code", "print('never runs')\n");
  r = answer("execute");
  await page.click("#run");
  r = await r;
  await page.waitForFunction(() => document.getElementById("status").dataset.state !== "running");
  s = await status();
  check("a run with the wrong key answers 401", r.status() === 401 && sent(r) === "wrong", [r.status(), sent(r)]);
  check("the refused run shows the key message, the field focused", s.state === "error" && keyText(s.text) &&
        s.output === "" && s.focused === "api-key", s);
  report.refused = s;

  // (b) The valid key: the languages are listed again with it, the message
  // goes, and a run prints its output.
  r = answer("runtimes");
  await page.fill("#api-key", good);
  await page.press("#api-key", "Enter");
  r = await r;
  check("the valid key lists the languages", r.status() === 200 && sent(r) === "good", [r.status(), sent(r)]);
  await page.waitForFunction(() => document.getElementById("status").dataset.state === "idle");
  await page.fill("#code", "print('hello with a key', 6 * 7)\n");
  r = answer("execute");
  await page.click("#run");
  r = await r;
  await page.waitForFunction(() => document.getElementById("status").dataset.state !== "running");
  s = await status();
  check("a run with the valid key prints its output", r.status() === 200 && sent(r) === "good" && s.state === "ok" &&
        s.output === "hello with a key 42\n", { status: r.status(), sent: sent(r), s });
  report.ran = s;

  // The key lasts as long as the tab: a reload puts it back and uses it at once.
  r = answer("runtimes");
  await page.reload();
  r = await r;
  const kept = await page.$eval("#api-key", (f) => f.value !== "" &&
                                f.value === sessionStorage.getItem("isobox.apiKey"));
  check("after a reload the key is back from sessionStorage and sent", kept && r.status() === 200 && sent(r) === "good",
        [kept, r.status(), sent(r)]);

  // An emptied field: no key kept, none sent.
  await page.waitForSelector("#language:not([disabled]) option[value=python]", { state: "attached" });
  r = answer("runtimes");
  await page.fill("#api-key", "");
  await page.press("#api-key", "Enter");
  r = await r;
  s = await status();
  check("an emptied field sends no key and keeps none", r.status() === 200 && sent(r) === "none" &&
        s.stored === "none" && s.localItems === 0, [r.status(), sent(r), s]);

  check("no key in any URL", report.keyInUrl.length === 0, report.keyInUrl);
  check("nothing loaded from elsewhere", report.foreignRequests.length === 0, report.foreignRequests);
  check("no script errors", report.pageErrors.length === 0, report.pageErrors);
  report.ok = true;
} catch (e) {
  report.ok = false;
  report.error = String(e && e.stack || e).replaceAll(good, "GOOD").replaceAll(wrong, "WRONG");
} finally {
  if (context) await context.close().catch(() => {});
  fs.rmSync(profile, { recursive: true, force: true });
}
console.log(JSON.stringify(report, null, 1));
process.exit(report.ok ? 0 : 1);
"""


def test_playground_api_key_field():
    """The API key field: a wrong key typed in makes the listing and a run
    answer 401 and the page says a key is needed (from the operator,
    isobox-fcgi --new-key); a valid key lists and runs; the key stays in
    sessionStorage, never in localStorage or a URL."""
    with tenants_file("tenants: {}\n"):
        key, _ = new_key("playground")
        reload_pool()
        wrong = key[:-1] + ("0" if key[-1] != "0" else "1")
        report = drive(script=KEY_SCRIPT, env={"ISOBOX_URL": URL, "ISOBOX_KEY": key, "ISOBOX_WRONG_KEY": wrong})
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
