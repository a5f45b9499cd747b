// Drives the playground (GET /) in Debian's chromium, headless, and prints
// what it saw as JSON. Usage: node playground.mjs http://127.0.0.1:8090
// Exit status 0 only if every check passed; the pytest wrapper
// (tests/integration/test_playground.py) asserts on the JSON as well.
import { chromium } from "playwright-core";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const base = process.argv[2].replace(/\/$/, "");
const report = { checks: [], foreignRequests: [], pageErrors: [] };
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

  await page.goto(base + "/");
  await page.waitForSelector("#language:not([disabled]) option[value=python]", { state: "attached" });
  const languages = await page.$$eval("#language option", (os) => os.map((o) => o.value));
  check("languages come from GET /runtimes", languages.includes("python") && languages.includes("c"), languages);
  check("python is chosen with a sample", (await page.inputValue("#code")).includes("print"),
        await page.inputValue("#code"));

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

  check("nothing loaded from elsewhere", report.foreignRequests.length === 0, report.foreignRequests);
  check("no script errors", report.pageErrors.length === 0, report.pageErrors);
  report.ok = true;
} catch (e) {
  report.ok = false;
  report.error = String(e && e.stack || e);
} finally {
  if (context) await context.close().catch(() => {});
  fs.rmSync(profile, { recursive: true, force: true });
}
console.log(JSON.stringify(report, null, 1));
process.exit(report.ok ? 0 : 1);
