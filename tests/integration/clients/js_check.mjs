// Drive the installed client (npm package isobox) against a live server; print what it got.
//   node js_check.mjs URL
import { Isobox, IsoboxError, succeeded } from 'isobox';

const box = new Isobox(process.argv[2]);
const out = {};
const r = await box.execute('python', { code: 'import sys\nprint(sys.stdin.read(), sys.argv[1:])',
  stdin: 'in', args: ['a b'] });
out.execute = r.run.stdout;
const events = [];
const start = Date.now();
for await (const ev of box.stream('python',
  'import time, sys\nfor i in range(2):\n    print(i, flush=True); time.sleep(1)\nsys.stdout.buffer.write(b"\\xff")')) {
  events.push({ event: ev.event, at: Date.now() - start,
    data: ev.data instanceof Uint8Array ? Array.from(ev.data) : ev.data });
}
out.events = events;
out.runtimes = (await box.runtimes()).runtimes.map((x) => x.language);
try {
  await box.execute('nope', { code: '1' });
  out.error = 'none';
} catch (e) {
  out.error = e instanceof IsoboxError ? [e.status, e.code] : String(e);
}
const files = await box.execute('javascript', { files: [
  { name: 'main.js', content: "console.log(require('./lib').x)" },
  { name: 'lib.js', content: 'exports.x = 7' }] });
out.files = files.run.stdout;
// The code as the second argument, as the Python client takes it; options after.
const positional = await box.execute('python', 'import sys\nprint(sys.stdin.read(), sys.argv[1:])',
  { stdin: 'pos', args: ['x'] });
out.positional = [positional.run.stdout, succeeded(positional)];
const failed = await box.execute('python', 'raise SystemExit(3)');
out.failed = [failed.run.exitCode, succeeded(failed)];
// For an agent: the tools as function-calling definitions, a call by
// name (MCP tools/call), a refused one, and E2B's names on a session.
out.tools = (await box.tools()).map((t) => [t.type, t.function.name, typeof t.function.parameters]);
const called = await box.callTool('execute', { language: 'python', code: 'print(6 * 7)' });
out.called = [called.isError, called.structuredContent.run.stdout, called.content[0].text];
const wrong = await box.callTool('execute', { language: 'python', code: 'raise SystemExit(3)' });
out.wrong = [wrong.isError, wrong.structuredContent.run.exitCode];
try {
  await box.callTool('no_such_tool', {});
  out.refused = 'none';
} catch (e) {
  out.refused = e instanceof IsoboxError ? [e.status, e.code, e.message] : String(e);
}
const s = await box.session('python', 'kernel', { idleTimeoutMs: 120000 });
try {
  await s.runCode('x = 41');
  out.runCode = (await s.runCode('x + 1')).kernel.value;
} finally {
  await s.kill();
}
try {
  await s.refresh();
  out.killed = 'still there';
} catch (e) {
  out.killed = e instanceof IsoboxError ? e.status : String(e);
}
console.log(JSON.stringify(out));
