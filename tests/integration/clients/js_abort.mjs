// The signal option against a live server; prints what each case got.
//   node js_abort.mjs URL BUSY_URL
// (BUSY_URL: a stand-in server that answers 503 busy, Retry-After 5.)
// Each case: the error's code, how long the call took (s), and what else
// the case looks at.
import { Isobox, IsoboxError } from 'isobox';

const box = new Isobox(process.argv[2]);
const out = {};

async function timed(call) {
  const start = performance.now();
  try {
    await call();
    return { code: 'none', took: (performance.now() - start) / 1000 };
  } catch (e) {
    return { code: e instanceof IsoboxError ? e.code : String(e), message: e.message,
      took: (performance.now() - start) / 1000 };
  }
}

// Aborted before: nothing is sent (a refused connection would say otherwise).
const gone = new AbortController();
gone.abort(new Error('no longer wanted'));
out.before = await timed(() => new Isobox('http://127.0.0.1:9', { signal: gone.signal }).execute('python', '1'));

// A run of 8 s, aborted after 1 s: the call ends then.
const one = new AbortController();
setTimeout(() => one.abort(), 1000);
out.execute = await timed(() => box.withOptions({ signal: one.signal }).execute('python',
  'import time\ntime.sleep(8)\nprint("finished")'));
// The client itself is unchanged: its next call runs.
out.after = (await box.execute('python', 'print("still here")')).run.stdout;

// A stream aborted after its first line.
const two = new AbortController();
const lines = [];
out.stream = await timed(async () => {
  for await (const ev of box.withOptions({ signal: two.signal }).stream('python',
    'import time\nfor i in range(8):\n    print(i, flush=True)\n    time.sleep(1)')) {
    if (ev.event === 'stdout') {
      lines.push(new TextDecoder().decode(ev.data));
      two.abort(new Error('seen enough'));
    }
  }
});
out.streamLines = lines;

// A wait between retries (503 busy, Retry-After 5) ends with the signal.
const three = new AbortController();
setTimeout(() => three.abort(), 500);
out.retryWait = await timed(() => new Isobox(process.argv[3], { signal: three.signal }).execute('python', '1'));

// One signal for many calls gathers no listeners: each call's goes with its answer.
const many = new AbortController();
let listeners = 0;
const counting = {
  get aborted() { return many.signal.aborted; },
  get reason() { return many.signal.reason; },
  addEventListener(...a) { listeners++; many.signal.addEventListener(...a); },
  removeEventListener(...a) { listeners--; many.signal.removeEventListener(...a); },
};
const kept = box.withOptions({ signal: counting });
for (let i = 0; i < 3; i++) await kept.runtimes();
await kept.execute('bash', 'echo 1');
out.listenersLeft = listeners;

// A session whose step was aborted is still closed on the way out of its
// block (close() does not follow the signal), and is gone from the server.
// (Node 20 has no `await using`; its dispose is this close().)
const four = new AbortController();
let sessionId, created;
out.session = await timed(async () => {
  const s = await box.withOptions({ signal: four.signal }).session('python');
  sessionId = s.id;
  created = performance.now();
  try {
    setTimeout(() => four.abort(), 500);
    await s.exec('import time\ntime.sleep(8)');
  } finally {
    await s.close();
  }
});
out.session.afterCreate = (performance.now() - created) / 1000; // the abort and close()
out.sessionAfter = await timed(() => box.attach(sessionId));
console.log(JSON.stringify(out));
