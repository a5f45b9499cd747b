// isobox client: run untrusted code through an isobox server.
// No dependencies; Node.js 18+ and browsers (fetch, ReadableStream).
//
//   import { Isobox } from './isobox.mjs';
//   const box = new Isobox('http://127.0.0.1:8090');
//   const r = await box.execute('python', { code: 'print(40 + 2)' });
//   console.log(r.run.stdout); // 42
//   for await (const ev of box.stream('python', { code: 'print(1)' })) console.log(ev);
//
// Sessions keep a sandbox between steps (its /workspace; for a 'kernel'
// session, python, a live interpreter whose variables survive):
//
//   const s = await box.session('python', { type: 'kernel' });
//   try {
//     await s.exec({ code: 'x = 41' });
//     console.log((await s.exec({ code: 'x + 1' })).kernel.value); // 42
//     await s.upload('data/in.bin', new Uint8Array([0, 255]));
//     console.log(await s.download('data/in.bin'), await s.files('data'));
//   } finally {
//     await s.close();   // or: await using s = await box.session(...)
//   }
//
// Errors from the server reject with IsoboxError (status, code, message),
// e.g. 409 session_busy, 404 session_not_found, 410 session_expired.

export class IsoboxError extends Error {
  constructor(status, code, message) {
    super(`${status} ${code}: ${message}`);
    this.name = 'IsoboxError';
    this.status = status;
    this.code = code;
    this.message = message;
  }
}

const FIELDS = ['code', 'files', 'stdin', 'args', 'limits', 'network', 'version'];
const STEP_FIELDS = ['code', 'files', 'stdin', 'args', 'limits'];
const SESSION_FIELDS = ['version', 'limits', 'network', 'idleTimeoutMs', 'maxLifetimeMs'];
const asyncDispose = Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose');

function decodeBase64(text) {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function pick(fields, options, body = {}) {
  for (const key of fields) if (options[key] !== undefined) body[key] = options[key];
  return body;
}

// Percent-encode each segment of a path, keeping the '/' between them.
function quotePath(path) {
  return String(path).split('/').map(encodeURIComponent).join('/');
}

// One request; rejects with IsoboxError unless the answer is 2xx.
// json: a value sent as JSON; bytes: a raw body (Uint8Array or string).
async function request(box, method, path, { json, bytes, accept = 'application/json' } = {}) {
  const headers = { Accept: accept };
  let body;
  if (json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(json);
  } else if (bytes !== undefined) {
    headers['Content-Type'] = 'application/octet-stream';
    body = bytes;
  }
  if (box.apiKey) headers.Authorization = `Bearer ${box.apiKey}`;
  const resp = await fetch(box.url + path, {
    method,
    headers,
    body,
    signal: AbortSignal.timeout(box.timeoutMs),
  });
  if (!resp.ok) {
    const text = await resp.text();
    let err;
    try {
      err = JSON.parse(text).error;
    } catch {
      err = { code: 'http_error', message: text.slice(0, 200) };
    }
    throw new IsoboxError(resp.status, err.code, err.message);
  }
  return resp;
}

// The events of a text/event-stream answer: stdout/stderr data as Uint8Array.
async function* events(resp) {
  const decoder = new TextDecoder();
  let buffer = '';
  let name = 'message';
  let data = [];
  for await (const chunk of resp.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, '');
      buffer = buffer.slice(nl + 1);
      if (line === '') {
        if (data.length) {
          let value = JSON.parse(data.join('\n'));
          if (name === 'stdout' || name === 'stderr') {
            value = 'data' in value ? new TextEncoder().encode(value.data) : decodeBase64(value.base64);
          }
          yield { event: name, data: value };
        }
        name = 'message';
        data = [];
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') name = value;
        else if (field === 'data') data.push(value);
      }
    }
  }
}

export class Isobox {
  constructor(url, { apiKey, timeoutMs = 120000 } = {}) {
    this.url = url.replace(/\/+$/, '');
    this.apiKey = apiKey;
    this.timeoutMs = timeoutMs;
  }

  /** Run code; resolves to the result object ({ run: {...}, ... }). */
  async execute(language, options = {}) {
    const resp = await request(this, 'POST', '/execute', { json: pick(FIELDS, options, { language }) });
    return resp.json();
  }

  /**
   * Run code, yielding events as they happen: { event: 'stdout'|'stderr',
   * data: Uint8Array }, { event: 'compile', data: {...} }, and last
   * { event: 'result', data: {...} } (or 'error').
   */
  async *stream(language, options = {}) {
    const resp = await request(this, 'POST', '/execute',
      { json: pick(FIELDS, options, { language }), accept: 'text/event-stream' });
    yield* events(resp);
  }

  /** The languages, versions and aliases the server offers. */
  async runtimes() {
    const resp = await request(this, 'GET', '/runtimes');
    return resp.json();
  }

  /**
   * Create a session (POST /v1/sessions); resolves to a Session. options:
   * type ('shell', the default, or 'kernel': python only), version,
   * limits ({ memoryBytes, cpus, pids }), network, idleTimeoutMs, maxLifetimeMs.
   */
  async session(language, options = {}) {
    const body = pick(SESSION_FIELDS, options, { language, type: options.type ?? 'shell' });
    const resp = await request(this, 'POST', '/v1/sessions', { json: body });
    return new Session(this, await resp.json());
  }

  /** The Session of an existing session id (GET /v1/sessions/{id}). */
  async attach(id) {
    const resp = await request(this, 'GET', `/v1/sessions/${encodeURIComponent(id)}`);
    return new Session(this, await resp.json());
  }

  /** The live sessions, as Session objects of the API (plain JSON). */
  async sessions() {
    const resp = await request(this, 'GET', '/v1/sessions');
    return (await resp.json()).sessions;
  }
}

/**
 * A session on the server: one sandbox kept between steps. Made by
 * Isobox.session(); close() (or `await using`) deletes it.
 */
export class Session {
  constructor(box, info) {
    this.box = box;
    this.info = info;
    this.id = info.id;
    this.path = `/v1/sessions/${encodeURIComponent(info.id)}`;
  }

  /**
   * Run one step: options { code, files, stdin, args, limits: { wallTimeMs,
   * outputBytes } } or just the code. Resolves to the result object, with
   * `session` and, for a kernel, `kernel: { value, error, images, restarted }`.
   */
  async exec(options = {}) {
    const resp = await request(this.box, 'POST', `${this.path}/exec`, { json: this.#step(options) });
    return resp.json();
  }

  /** Run one step, yielding events as Isobox.stream does. */
  async *stream(options = {}) {
    const resp = await request(this.box, 'POST', `${this.path}/exec`,
      { json: this.#step(options), accept: 'text/event-stream' });
    yield* events(resp);
  }

  /** Write a file (Uint8Array, ArrayBuffer, or string as UTF-8) under /workspace; resolves to { path, size }. */
  async upload(path, data) {
    const bytes = typeof data === 'string' ? new TextEncoder().encode(data) :
      data instanceof ArrayBuffer ? new Uint8Array(data) : data;
    const resp = await request(this.box, 'PUT', this.#file(path), { bytes });
    return resp.json();
  }

  /** The bytes of a file under /workspace, as a Uint8Array. */
  async download(path) {
    const resp = await request(this.box, 'GET', this.#file(path), { accept: 'application/octet-stream' });
    return new Uint8Array(await resp.arrayBuffer());
  }

  /** The entries of a directory under /workspace (default: itself): [{ name, type, size, mtime }]. */
  async files(path) {
    const query = path === undefined ? '' : `?path=${encodeURIComponent(path)}`;
    const resp = await request(this.box, 'GET', `${this.path}/files${query}`);
    return (await resp.json()).entries;
  }

  /** Delete a file, a link, or a directory with all it holds. */
  async remove(path) {
    await request(this.box, 'DELETE', this.#file(path));
  }

  /** Fetch the session's state again; resolves to (and keeps) this.info. */
  async refresh() {
    const resp = await request(this.box, 'GET', this.path);
    this.info = await resp.json();
    return this.info;
  }

  /**
   * Delete the session and its sandbox; a session already gone (404, 410) is
   * fine. A passing failure (no answer, 502, 503, 504) is tried again twice.
   */
  async close() {
    for (let attempt = 0; ; attempt++) {
      try {
        await request(this.box, 'DELETE', this.path);
        return;
      } catch (e) {
        const typed = e instanceof IsoboxError;
        if (typed && (e.status === 404 || e.status === 410)) return;
        if ((typed && ![502, 503, 504].includes(e.status)) || attempt === 2) throw e;
      }
      await new Promise((resolve) => setTimeout(resolve, 500 * (attempt + 1)));
    }
  }

  [asyncDispose]() {
    return this.close();
  }

  #step(options) {
    return pick(STEP_FIELDS, typeof options === 'string' ? { code: options } : options);
  }

  #file(path) {
    return `${this.path}/files/${quotePath(path)}`;
  }
}
