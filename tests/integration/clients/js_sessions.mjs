// Drive the sessions of the installed client (npm package isobox) against a live server; print
// what it got as JSON. Every session it creates is named on stderr at once
// ("session <id>"), so that the pytest wrapper can delete it even if this
// script dies, and is closed here in a finally.
//   node js_sessions.mjs URL
import { Isobox, IsoboxError, Session } from 'isobox';

const box = new Isobox(process.argv[2]);
const out = {};
const open = [];

async function session(language, type) {
  // Short-lived if the server could not take our DELETE: idle for two minutes.
  const s = await box.session(language, type, { idleTimeoutMs: 120000 });
  process.stderr.write(`session ${s.id}\n`);
  open.push(s);
  return s;
}

async function error(promise) {
  try {
    await promise;
    return 'none';
  } catch (e) {
    return e instanceof IsoboxError ? [e.status, e.code] : String(e);
  }
}

try {
  // A kernel: variables survive between cells; the last expression is the value.
  const k = await session('python', 'kernel');
  out.kernelInfo = { type: k.info.type, isSession: k instanceof Session, id: k.id };
  const first = await k.exec({ code: 'x = 41\nprint("set")' });
  const second = await k.exec('x + 1');
  out.kernel = { stdout: first.run.stdout, value: second.kernel.value, session: second.session.id };
  const failed = await k.exec('y');
  out.kernelError = failed.kernel.error && failed.kernel.error.name;
  const events = [];
  for await (const ev of k.stream('import time\nprint("a", flush=True)\ntime.sleep(0.3)\nx * 2')) {
    events.push({ event: ev.event, data: ev.data instanceof Uint8Array ? new TextDecoder().decode(ev.data) : ev.data });
  }
  out.stream = events.map((e) => e.event);
  out.streamStdout = events.filter((e) => e.event === 'stdout').map((e) => e.data).join('');
  out.streamValue = events.at(-1).data.kernel.value;
  // One request at a time: a second one while a step runs is refused at once.
  const running = k.stream({ code: 'import time\nprint("go", flush=True)\ntime.sleep(2)' });
  out.runningFirst = (await running.next()).value.event;
  out.busy = await error(k.exec('1'));
  for await (const ev of running) out.runningLast = ev.event;

  // A shell session: files in and out, byte-exact.
  const s = await session('python');
  const all = new Uint8Array(256).map((_, i) => i);
  out.upload = await s.upload('data/all bytes #?.bin', all);
  await s.upload('data/text.txt', 'héllo\n');
  const back = await s.download('data/all bytes #?.bin');
  out.download = { isUint8Array: back instanceof Uint8Array, exact: back.length === 256 && back.every((b, i) => b === i) };
  out.text = new TextDecoder().decode(await s.download('data/text.txt'));
  out.files = (await s.files('data')).map((e) => [e.name, e.type, e.size]).sort();
  out.top = (await s.files()).map((e) => [e.name, e.type]);
  const seen = await s.exec("import sys\nd = open('data/all bytes #?.bin', 'rb').read()\nprint(d == bytes(range(256)), sys.argv[1:])",
    { args: ['a'] });
  out.seenInside = seen.run.stdout;
  await s.remove('data/text.txt');
  out.afterRemove = (await s.files('data')).map((e) => e.name);
  out.missing = await error(s.download('data/text.txt'));
  out.info = (await s.refresh()).steps;

  // Background commands: started at once, read from an offset, written to, signalled, deleted.
  const c = await s.startCommand('echo one; echo two >&2');
  let o = await s.commandOutput(c.id);
  for (let i = 0; o.running && i < 100; i++) {
    await new Promise((r) => setTimeout(r, 100));
    o = await s.commandOutput(c.id);
  }
  out.command = [o.exitCode, o.stdout, o.stderr, o.stdoutNext];
  out.commandFrom = (await s.commandOutput(c.id, { stdoutFrom: 1, encoding: 'base64' })).stdout;
  const cat = await s.startCommand({ args: ['cat'], stdinOpen: true });
  out.wrote = await s.writeCommandStdin(cat.id, 'hi', { close: true });
  out.stdinClosed = await error(s.writeCommandStdin(cat.id, 'more'));
  await s.signalCommand(cat.id, 'SIGKILL');
  out.commands = (await s.commands()).map((x) => x.id).join() === [c.id, cat.id].join();
  await s.deleteCommand(c.id);
  out.commandGone = await error(s.commandOutput(c.id));
  out.bothOrNone = await s.startCommand({}).then(() => 'started', (e) => e.constructor.name);

  // Asynchronous disposal deletes it; then its requests are typed errors.
  await s[Symbol.asyncDispose]();
  out.afterDispose = await error(s.refresh());
  out.execClosed = await error(s.exec('print(1)'));
  out.closeTwice = await error(s.close());
  out.badKernel = await error(box.session('ruby', { type: 'kernel' }).then((k) => k.close()));
} catch (e) {
  out.failure = String(e && e.stack || e);
} finally {
  for (const s of open) await s.close().catch(() => {});
}
console.log(JSON.stringify(out));
process.exit(out.failure ? 1 : 0);
