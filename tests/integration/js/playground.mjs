// Drives the playground (GET /) in Debian's chromium, headless, and prints
// what it saw as JSON. Usage: node playground.mjs http://127.0.0.1:8090 [once|session|key]
// "once" (the default) checks the Run once mode, "demo" the public demo's
// Turnstile challenge (the server's demo: on), "editor" the code box (Tab,
// kept code, the layout at two widths), "session" the notebook of
// session mode, "key" the API key field (the keys in ISOBOX_KEY, a valid one,
// and ISOBOX_WRONG_KEY; they never go into the report); every session the
// page starts is deleted at the end, even when a check fails. Exit status 0 only if every check passed; the pytest
// wrapper (tests/integration/test_playground.py) asserts on the JSON as well.
import { chromium } from "playwright-core";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const base = process.argv[2].replace(/\/$/, "");
const mode = process.argv[3] || "once";
const report = { mode, checks: [], foreignRequests: [], pageErrors: [], sessions: [] };
const good = process.env.ISOBOX_KEY, wrong = process.env.ISOBOX_WRONG_KEY;
// The demo mode's stand-in of Turnstile's script (demoChecks).
const TURNSTILE_JS = "https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit";
const TURNSTILE_STUB = `window.turnstile = {
  rendered: [], resets: 0,
  render(el, opts) { this.rendered.push(opts.sitekey); window.solve = (t) => opts.callback(t); return "w0"; },
  reset(id) { if (id === "w0") this.resets++; },
};`;
// Keys never go into the report: only which one a request carried.
const which = (auth) => auth === undefined ? "none" : auth === `Bearer ${good}` ? "good" :
  auth === `Bearer ${wrong}` ? "wrong" : "other";
const sent = (response) => which(response.request().headers()["authorization"]);
const redact = (text) => mode === "key" ? text.replaceAll(good, "GOOD").replaceAll(wrong, "WRONG") : text;
function check(name, cond, detail) {
  report.checks.push({ name, ok: !!cond, detail });
  if (!cond) throw new Error(`${name}: ${JSON.stringify(detail)}`);
}

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
  page.on("request", (r) => { if (!r.url().startsWith(base + "/")) report.foreignRequests.push(r.url()); });
  page.on("pageerror", (e) => report.pageErrors.push(String(e)));
  page.setDefaultTimeout(60000);

  if (mode === "key") {
    await keyChecks(page);
  } else if (mode === "demo") {
    await demoChecks(page);
  } else {
    await page.goto(base + "/");
    await page.waitForSelector("#language:not([disabled]) option[value=python]", { state: "attached" });
    const languages = await page.$$eval("#language option", (os) => os.map((o) => o.value));
    check("languages come from GET /runtimes", languages.includes("python") && languages.includes("c"), languages);
    check("python is chosen with a sample", (await page.inputValue("#code")).includes("print"),
          await page.inputValue("#code"));
    if (mode === "session") await sessionChecks(page);
    else if (mode === "editor") await editorChecks(page);
    else await onceChecks(page);
  }

  // The demo's page asks Cloudflare for Turnstile's script (answered here
  // by a stand-in: nothing leaves this host); nothing else comes from elsewhere.
  const foreign = report.foreignRequests.filter((u) => !(mode === "demo" && u === TURNSTILE_JS));
  check("nothing loaded from elsewhere", foreign.length === 0, report.foreignRequests);
  check("no script errors", report.pageErrors.length === 0, report.pageErrors);
  report.ok = true;
} catch (e) {
  report.ok = false;
  report.error = redact(String(e && e.stack || e));
} finally {
  if (context) await context.close().catch(() => {});
  fs.rmSync(profile, { recursive: true, force: true });
  // Whatever happened, no session of ours stays: DELETE each (404: gone already).
  for (const id of report.sessions) {
    const r = await fetch(`${base}/v1/sessions/${id}`, { method: "DELETE" }).catch((e) => ({ status: String(e) }));
    report.sessionCleanup = (report.sessionCleanup || []).concat([[id, r.status]]);
  }
}
console.log(JSON.stringify(report, null, 1));
process.exit(report.ok ? 0 : 1);

// The API key field. The browser loads the page from 127.0.0.1, which is in
// auth.anonymous, so no key is needed to list or run; but a key that is
// sent is checked, from there too: a wrong one is refused (401), a valid one
// is its tenant's.
async function keyChecks(page) {
  report.keyInUrl = [];
  report.requests = [];
  page.on("request", (r) => {
    const url = r.url();
    if (url.includes(good) || url.includes(wrong)) report.keyInUrl.push(redact(url));
    report.requests.push([r.method(), url.slice(base.length), which(r.headers()["authorization"])]);
  });
  const answer = (p) => page.waitForResponse((r) => r.url() === base + "/" + p);
  const status = () => page.evaluate((key) => {
    const s = document.getElementById("status");
    return { text: s.textContent, state: s.dataset.state, output: document.getElementById("output").textContent,
             focused: document.activeElement ? document.activeElement.id : null,
             stored: sessionStorage.getItem("isobox.apiKey") === null ? "none" : "some",
             // localStorage keeps code and the language, never the key.
             localItems: Object.keys(localStorage).filter((k) => !/^isobox\.(code\.[a-z0-9+#._-]+|language)$/.test(k) ||
               (key && localStorage.getItem(k).includes(key))).length,
             href: location.href.slice(location.origin.length) };
  }, good || wrong);
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
}

async function editorChecks(page) {
  const code = () => page.inputValue("#code");
  const focused = () => page.evaluate(() => document.activeElement && document.activeElement.id);
  // 1. Tab indents in the code box; the text does not land in stdin.
  await page.selectOption("#language", "python");
  await page.fill("#code", "if True:\n");
  await page.focus("#code");
  await page.evaluate(() => { const c = document.getElementById("code"); c.selectionStart = c.selectionEnd = c.value.length; });
  await page.keyboard.press("Tab");
  await page.keyboard.type("print(1)");
  check("Tab inserts an indent in the code box", await code() === "if True:\n    print(1)" &&
        await focused() === "code" && await page.inputValue("#stdin") === "", [await code(), await focused()]);
  await page.keyboard.press("Shift+Tab");
  check("Shift+Tab takes the indent back", await code() === "if True:\nprint(1)", await code());
  await page.evaluate(() => document.getElementById("code").select());
  await page.keyboard.press("Tab");
  check("Tab indents every selected line", await code() === "    if True:\n    print(1)", await code());
  await page.keyboard.press("Escape");
  await page.keyboard.press("Tab");
  check("Escape, then Tab, leaves the box", await focused() !== "code" &&
        await code() === "    if True:\n    print(1)", [await focused(), await code()]);
  // 2. The code is kept per language, across a reload.
  await page.fill("#code", "print('kept for python')\n");
  await page.selectOption("#language", "ruby");
  check("another language shows its own sample", (await code()).includes("puts"), await code());
  await page.fill("#code", "puts 'kept for ruby'\n");
  await page.reload();
  await page.waitForSelector("#language:not([disabled]) option[value=python]", { state: "attached" });
  check("a reload keeps the language and its code", await page.inputValue("#language") === "ruby" &&
        await code() === "puts 'kept for ruby'\n", [await page.inputValue("#language"), await code()]);
  await page.selectOption("#language", "python");
  check("...and each language's own code", await code() === "print('kept for python')\n", await code());
  await page.selectOption("#language", "c");
  await page.fill("#code", "int main(void)\n{\n}\n");
  await page.evaluate(() => { const c = document.getElementById("code"); c.selectionStart = c.selectionEnd = 15; });
  await page.keyboard.press("Tab");
  check("C indents with a tab", await code() === "int main(void)\n\t{\n}\n", await code());
  // 3. Where the output sits: beside the editor when wide; right under it
  // (above the limits) when narrow.
  const boxes = () => page.evaluate(() => Object.fromEntries(["code", "output"].map((id) => {
    const r = document.getElementById(id).getBoundingClientRect();
    return [id, { left: r.left, top: r.top, bottom: r.bottom }];
  }).concat([["limits", (() => { const r = document.querySelector(".limits-box").getBoundingClientRect();
    return { left: r.left, top: r.top, bottom: r.bottom }; })()]])));
  await page.setViewportSize({ width: 1280, height: 900 });
  let b = await boxes();
  check("wide: the output beside the editor", b.output.left > b.code.left + 300 && b.output.top < b.code.bottom, b);
  await page.setViewportSize({ width: 800, height: 900 });
  b = await boxes();
  check("narrow: the output right under the editor, above the limits",
        b.output.top >= b.code.bottom && b.output.top < b.limits.top && Math.abs(b.output.left - b.code.left) < 40, b);
  report.layout = b;
}

async function onceChecks(page) {
  // 1. Output appears as it happens: the first line before the run ends.
  await page.selectOption("#language", "python");
  await page.fill("#code", "import time\nfor i in range(4):\n    print('line', i, flush=True)\n    time.sleep(1)\n");
  const t0 = Date.now();
  await page.click("#run");
  await page.waitForFunction(() => document.getElementById("output").textContent.includes("line 0"));
  const firstLineMs = Date.now() - t0;
  const early = await page.evaluate(() => ({
    state: document.getElementById("status").dataset.state,
    output: document.getElementById("output").textContent,
    resultShown: !document.getElementById("result").hidden,
  }));
  check("first line visible while still running", early.state === "running" && !early.resultShown &&
        !early.output.includes("line 3"), early);
  await page.waitForFunction(() => document.getElementById("status").dataset.state !== "running");
  const endMs = Date.now() - t0;
  const done = await page.evaluate(() => ({
    state: document.getElementById("status").dataset.state,
    output: document.getElementById("output").textContent,
    exitCode: document.getElementById("exitCode").textContent,
    timedOut: document.getElementById("timedOut").textContent,
    oomKilled: document.getElementById("oomKilled").textContent,
    truncated: document.getElementById("truncated").textContent,
    durationMs: document.getElementById("durationMs").textContent,
  }));
  check("run ends with exit code 0 shown", done.state === "ok" && done.exitCode === "0" &&
        done.timedOut === "false" && done.oomKilled === "false" && done.truncated === "false", done);
  check("all output shown", done.output === "line 0\nline 1\nline 2\nline 3\n", done.output);
  check("duration shown", Number(done.durationMs) >= 3000, done.durationMs);
  report.progressive = { firstLineMs, endMs, early, done };

  // 2. A failing program: its nonzero exit code, stderr, and bytes that are
  // not UTF-8 (sent as base64 chunks) shown as U+FFFD.
  await page.fill("#stdin", "from stdin");
  await page.fill("#args", "a1\na2");
  await page.fill("#code", "import sys\nsys.stdout.buffer.write(b'caf\\xc3\\xa9 \\xff\\n')\nsys.stdout.flush()\n" +
                  "print(sys.stdin.read(), sys.argv[1:], flush=True)\nsys.exit(3)\n");
  await page.click("#run");
  await page.waitForFunction(() => document.getElementById("status").dataset.state !== "running");
  const failed = await page.evaluate(() => ({
    state: document.getElementById("status").dataset.state,
    status: document.getElementById("status").textContent,
    output: document.getElementById("output").textContent,
    exitCode: document.getElementById("exitCode").textContent,
  }));
  check("failing program shows its exit code", failed.state === "failed" && failed.exitCode === "3" &&
        failed.status.includes("exit code 3"), failed);
  check("stdin, args and raw bytes shown", failed.output === "café \ufffd\nfrom stdin ['a1', 'a2']\n", failed.output);
  report.failing = failed;

  // 3. Limits from the form: a wall time that the program outlives.
  await page.fill("#stdin", "");
  await page.fill("#args", "");
  await page.fill("#wallTimeMs", "1500");
  await page.fill("#code", "import time\nprint('start', flush=True)\ntime.sleep(30)\n");
  await page.click("#run");
  await page.waitForFunction(() => document.getElementById("status").dataset.state !== "running");
  const timeout = await page.evaluate(() => ({
    status: document.getElementById("status").textContent,
    output: document.getElementById("output").textContent,
    exitCode: document.getElementById("exitCode").textContent,
    timedOut: document.getElementById("timedOut").textContent,
    limits: document.getElementById("limits").textContent,
  }));
  check("a limit set in the form applies and timedOut is shown", timeout.timedOut === "true" &&
        timeout.exitCode === "137" && timeout.output === "start\n" && timeout.status.includes("timed out") &&
        timeout.limits.includes("wallTimeMs 1500"), timeout);
  await page.fill("#wallTimeMs", "");

  // 4. Stop: the request is cancelled and the page says so.
  await page.fill("#code", "import time\nprint('waiting', flush=True)\ntime.sleep(15)\n");
  await page.click("#run");
  await page.waitForFunction(() => document.getElementById("output").textContent.includes("waiting"));
  await page.click("#stop");
  await page.waitForFunction(() => document.getElementById("status").dataset.state !== "running");
  const stopped = await page.evaluate(() => ({
    status: document.getElementById("status").textContent,
    runEnabled: !document.getElementById("run").disabled,
  }));
  check("stop cancels the run", stopped.status === "stopped" && stopped.runEnabled, stopped);

  // 5. A compile error in C: the compile result, and no run.
  await page.selectOption("#language", "c");
  await page.fill("#code", "int main(void) { return x; }\n");
  await page.click("#run");
  await page.waitForFunction(() => document.getElementById("status").dataset.state !== "running");
  const compile = await page.evaluate(() => ({
    state: document.getElementById("status").dataset.state,
    status: document.getElementById("status").textContent,
    compileResult: document.getElementById("compileResult").textContent,
    compileOutput: document.getElementById("compile-output").textContent,
  }));
  check("compile failure shown", compile.status === "compile failed" &&
        compile.compileResult.startsWith("failed: exit 1") && compile.compileOutput.includes("undeclared"), compile);

  // 6. An error before the run (a limit of the wrong kind) is shown, not swallowed.
  await page.fill("#code", "int main(void) { return 0; }\n");
  await page.fill("#cpus", "0");
  await page.click("#run");
  await page.waitForFunction(() => document.getElementById("status").dataset.state !== "running");
  const error = await page.evaluate(() => document.getElementById("status").textContent);
  check("request errors shown", error.startsWith("error invalid_value:"), error);
}

// The public demo (the server's demo: on, and auth.anonymous empty, so
// that this browser on 127.0.0.1 is a stranger). Turnstile's script is a
// stand-in, served by intercepting its URL: render() keeps the options, and
// window.solve(token) plays the visitor who solves the challenge.
async function demoChecks(page) {
  report.tokens = [];
  page.on("request", (r) => {
    if (r.url() === base + "/execute") report.tokens.push(r.headers()["x-turnstile-token"] || "none");
  });
  await page.route(TURNSTILE_JS, (route) => route.fulfill({ contentType: "text/javascript", body: TURNSTILE_STUB }));
  await page.goto(base + "/");
  await page.waitForSelector("#language:not([disabled]) option[value=python]", { state: "attached" });
  await page.waitForFunction(() => window.turnstile && window.turnstile.rendered.length === 1);
  const shown = await page.evaluate(() => ({
    box: !document.getElementById("demo").hidden,
    sitekey: window.turnstile.rendered[0],
    sessionMode: !document.getElementById("mode-session").disabled,
    wallTitle: document.getElementById("wallTimeMs").title,
  }));
  check("the demo shows Turnstile's widget with the site key, no session mode", shown.box &&
        shown.sitekey === process.env.ISOBOX_SITE_KEY && !shown.sessionMode, shown);
  check("the limits show the demo's ceilings", shown.wallTitle === "ceiling: 2000", shown.wallTitle);

  const settled = () => page.waitForFunction(() => document.getElementById("status").dataset.state !== "running");
  const status = () => page.evaluate(() => ({ state: document.getElementById("status").dataset.state,
    text: document.getElementById("status").textContent, output: document.getElementById("output").textContent }));
  await page.selectOption("#language", "python");
  await page.fill("#code", "print(6 * 7)\n");
  // Run before the challenge is solved: the page says so, nothing is sent.
  await page.click("#run");
  await settled();
  let s = await status();
  check("a run before the challenge asks for it, and sends nothing", s.state === "error" &&
        s.text.includes("solve the challenge") && report.tokens.length === 0, s);
  // Solved: the run carries the token, runs, and the widget is reset for the next.
  await page.evaluate((t) => window.solve(t), process.env.ISOBOX_TOKEN);
  await page.click("#run");
  await settled();
  s = await status();
  check("a solved challenge runs the program once", s.state === "ok" && s.output === "42\n" &&
        report.tokens.length === 1 && report.tokens[0] === process.env.ISOBOX_TOKEN, [s, report.tokens.length]);
  check("the widget is reset: a token works once", await page.evaluate(() => window.turnstile.resets) === 1, "");
  await page.click("#run");
  await settled();
  s = await status();
  check("the next run asks again", s.state === "error" && s.text.includes("solve the challenge") &&
        report.tokens.length === 1, s);
  report.tokens = report.tokens.map((t) => t === process.env.ISOBOX_TOKEN ? "the token" : t);
}

// A session the page made: named on stderr at once (the pytest wrapper
// deletes it should this script be killed), deleted by this script at the end.
function noteSession(id) {
  if (report.sessions.includes(id)) return;
  report.sessions.push(id);
  process.stderr.write(`session ${id}\n`);
}

// Session mode: a notebook whose cells are steps of one kernel session.
async function sessionChecks(page) {
  // Note every session the page creates, as soon as it answers, for the clean-up.
  page.on("response", async (r) => {
    if (r.request().method() === "POST" && r.url() === base + "/v1/sessions" && r.status() === 201) {
      try { noteSession((await r.json()).id); } catch { /* the page went away */ }
    }
  });
  const cell = (n) => `#cells .cell:nth-child(${n})`;
  const cellState = (n) => page.evaluate((sel) => {
    const c = document.querySelector(sel);
    const text = (cls) => { const e = c.querySelector("." + cls); return e ? e.textContent : null; };
    return {
      state: c.dataset.state, count: text("cell-count"), stream: text("cell-stream"), value: text("cell-value"),
      error: text("cell-error"), meta: text("cell-meta"),
      images: Array.from(c.querySelectorAll(".cell-images img"), (i) => ({ src: i.src.slice(0, 22), w: i.naturalWidth })),
      elements: Array.from(c.querySelectorAll(".cell-output *"), (e) => e.tagName.toLowerCase()),
    };
  }, cell(n));
  const cellDone = (n) => page.waitForFunction((sel) => {
    const s = document.querySelector(sel).dataset.state;
    return s !== "running" && s !== "idle";
  }, cell(n));
  const sessionStatus = () => page.evaluate(() => {
    const s = document.getElementById("session-status");
    return { text: s.textContent, state: s.dataset.state, id: s.dataset.id,
             languageLocked: document.getElementById("language").disabled,
             endEnabled: !document.getElementById("session-end").disabled };
  });

  await page.selectOption("#language", "python");
  await page.check("#mode-session");
  const shown = await page.evaluate(() => ({
    notebook: !document.getElementById("notebook").hidden,
    onceCode: document.getElementById("code").offsetParent !== null,
    onceOutput: document.getElementById("output").offsetParent !== null,
    cells: document.querySelectorAll("#cells .cell").length,
  }));
  check("session mode shows the notebook instead of the single run", shown.notebook && !shown.onceCode &&
        !shown.onceOutput && shown.cells === 1, shown);
  check("no session before the first run", (await sessionStatus()).state === "none", await sessionStatus());

  // 1. The first cell starts a kernel session and sets a variable; its
  // output shows as it comes (streamed), before the cell ends.
  await page.fill(`${cell(1)} .cell-code`, "import time\nx = 6 * 7\nprint('x is', x, flush=True)\ntime.sleep(2)\n");
  await page.click(`${cell(1)} .cell-run`);
  await page.waitForFunction((sel) => document.querySelector(sel).dataset.state !== "running" ||
                             (document.querySelector(sel + " .cell-stream") || {}).textContent === "x is 42\n", cell(1));
  const early = await cellState(1);
  check("a cell's output shows while it runs", early.state === "running" && early.count === "[*]", early);
  await cellDone(1);
  const first = await cellState(1);
  const live = await sessionStatus();
  if (live.id) noteSession(live.id);
  check("the first cell runs in a new kernel session", first.state === "ok" && first.stream === "x is 42\n" &&
        first.value === null && first.count === "[1]", first);
  check("the session is shown live, its language locked", live.state === "live" && /^[a-z0-9-]+-[0-9a-f]{32}$/.test(live.id) &&
        live.text.includes("python") && live.text.includes("kernel") && live.languageLocked && live.endEnabled, live);
  await page.waitForFunction(() => true);   // let the response handler note the id
  check("the page created one session", report.sessions.length === 1, report.sessions);

  // 2. A second cell uses the first's variable: its value shows.
  await page.click("#add-cell");
  await page.fill(`${cell(2)} .cell-code`, "x + 1");
  await page.click(`${cell(2)} .cell-run`);
  await cellDone(2);
  const second = await cellState(2);
  check("the second cell sees the first's variable and shows its value", second.state === "ok" &&
        second.value === "43" && second.count === "[2]" && second.stream === null, second);

  // 3. Untrusted output is text, never markup; an error shows its traceback.
  await page.click("#add-cell");
  await page.fill(`${cell(3)} .cell-code`, "print('<b>bold</b><img src=x onerror=alert(1)>')\n" +
                  "s = '<i>v</i>'\nundefined_name");
  await page.click(`${cell(3)} .cell-run`);
  await cellDone(3);
  const third = await cellState(3);
  check("output is escaped and an error shows its traceback", third.state === "failed" &&
        third.stream === "<b>bold</b><img src=x onerror=alert(1)>\n" && third.error.includes("NameError") &&
        third.error.includes("undefined_name") && !third.elements.includes("b") && !third.elements.includes("img"), third);

  // 4. A matplotlib figure comes back as an image.
  await page.click("#add-cell");
  await page.fill(`${cell(4)} .cell-code`, "import matplotlib\nmatplotlib.use('Agg')\n" +
                  "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\ns");
  await page.click(`${cell(4)} .cell-run`);
  await cellDone(4);
  await page.waitForFunction((sel) => Array.from(document.querySelectorAll(sel + " .cell-images img")).every((i) => i.complete),
                             cell(4));
  const fourth = await cellState(4);
  check("a figure shows as an image, the value as text", fourth.state === "ok" && fourth.value === "'<i>v</i>'" &&
        fourth.images.length === 1 && fourth.images[0].src === "data:image/png;base64," && fourth.images[0].w > 0 &&
        !fourth.elements.includes("i"), fourth);

  // 5. End session: deleted on the server; the cells stay.
  await page.click("#session-end");
  await page.waitForFunction(() => document.getElementById("session-status").dataset.state === "ended");
  const ended = await sessionStatus();
  const after = await fetch(`${base}/v1/sessions/${live.id}`);
  check("End session deletes it", ended.state === "ended" && !ended.endEnabled && !ended.languageLocked &&
        after.status === 404, { ended, status: after.status });
  check("the cells stay", (await cellState(2)).value === "43", await cellState(2));
  report.session = { id: live.id, first, second, third, fourth, ended };
}
