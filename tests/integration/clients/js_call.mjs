// One call of the installed client, for tests/integration/clients_util.py:
//   node js_call.mjs '{"url": ..., "options": {...}, "call": "execute", "args": [...]}'
// prints {"value": ...} or {"error": {name, isIsoboxError, status, code,
// message, retryAfter}}, and "elapsed" (seconds). A stream's value is its
// events as [event, data], stdout/stderr data as text; "succeeded" maps
// the package's succeeded() over the args; "session.METHOD" calls METHOD of
// a Session of the id "main-x".
import { Isobox, IsoboxError, Session, succeeded } from 'isobox';

const spec = JSON.parse(process.argv[2]);
const out = {};
const start = performance.now();
try {
  if (spec.call === 'succeeded') {
    out.value = spec.args.map(succeeded);
  } else {
    const box = new Isobox(spec.url, spec.options);
    const [target, method] = spec.call.startsWith('session.') ?
      [new Session(box, { id: 'main-x' }), spec.call.slice(8)] : [box, spec.call];
    if (method === 'stream') {
      out.value = [];
      for await (const ev of target.stream(...spec.args)) {
        out.value.push([ev.event, ev.data instanceof Uint8Array ? new TextDecoder().decode(ev.data) : ev.data]);
      }
    } else {
      out.value = await target[method](...spec.args);
      if (out.value instanceof Session) out.value = out.value.info;
    }
  }
} catch (e) {
  out.error = { name: e.name, isIsoboxError: e instanceof IsoboxError, status: e.status, code: e.code,
    message: e.message, retryAfter: e.retryAfter };
}
out.elapsed = (performance.now() - start) / 1000;
console.log(JSON.stringify(out));
