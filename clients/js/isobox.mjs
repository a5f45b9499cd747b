// isobox client: run untrusted code through an isobox server.
// No dependencies; Node.js 18+ and browsers (fetch, ReadableStream).
// Install: npm install /path/to/isobox/clients/js    (types: isobox.d.ts)
//
//   import { Isobox, succeeded } from 'isobox';
//   const box = new Isobox('http://127.0.0.1:8090');
//   const r = await box.execute('python', 'print(40 + 2)');
//   console.log(r.run.stdout, succeeded(r)); // 42 true
//   for await (const ev of box.stream('python', 'print(1)')) console.log(ev);
//
// Sessions keep a sandbox between steps (its /workspace; for a 'kernel'
// session, python, a live interpreter whose variables survive):
//
//   const s = await box.session('python', 'kernel');
//   try {
//     await s.exec('x = 41');
//     console.log((await s.exec('x + 1')).kernel.value); // 42
//     await s.upload('data/in.bin', new Uint8Array([0, 255]));
//     console.log(await s.download('data/in.bin'), await s.files('data'));
//   } finally {
//     await s.close();   // or: await using s = await box.session(...)
//   }
//
// Errors reject with IsoboxError (status, code, message, retryAfter): the
// server's (e.g. 409 session_busy, 404 session_not_found, 410
// session_expired), or status 0 with code 'connection_failed' or 'timeout'
// when the server could not be reached. A request refused before it ran
// (429, 503 busy) is sent again after the server's Retry-After, a bounded
// number of times (retries, maxRetryWaitMs; retries: 0 turns it off).
// An unknown option is a TypeError, before anything is sent.

export class IsoboxError extends Error {
  constructor(status, code, message, retryAfter = null) {
    super(status ? `${status} ${code}: ${message}` : `${code}: ${message}`);
    this.name = 'IsoboxError';
    this.status = status;
    this.code = code;
    this.message = message;
    this.retryAfter = retryAfter;
  }
}

/**
 * Whether a result (of execute(), a session step, or the data of a
 * stream's 'result' event) is a run that went well: the program ran (so a
 * compile, if any, succeeded), exited 0, and was not stopped at a limit
 * (timedOut, oomKilled, truncated); for a kernel step, the cell raised no
 * exception as well. outputsTruncated does not count.
 */
export function succeeded(result) {
  const run = result && typeof result === 'object' ? result.run : undefined;
  if (!run || typeof run !== 'object') return false;
  if (run.exitCode !== 0 || run.timedOut || run.oomKilled || run.truncated) return false;
  const kernel = result.kernel;
  return !(kernel && typeof kernel === 'object' && kernel.error);
}

const CLIENT_OPTIONS = ['apiKey', 'timeoutMs', 'retries', 'maxRetryWaitMs', 'signal'];
const EXECUTE_OPTIONS = ['code', 'files', 'stdin', 'args', 'limits', 'network', 'version', 'outputs',
  'volume', 'volumeReadOnly'];
const STEP_OPTIONS = ['code', 'files', 'stdin', 'args', 'limits'];
const COMMAND_OPTIONS = ['command', 'args', 'stdin', 'stdinOpen'];
const SESSION_OPTIONS = ['type', 'version', 'limits', 'network', 'idleTimeoutMs', 'maxLifetimeMs', 'volume',
  'volumeReadOnly'];
const DEFAULT_RETRY_DELAY_S = 1;
const asyncDispose = Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose');

function absent(value) {
  return value === undefined || value === null;
}

// The options object of a call, checked: an unknown name is a TypeError.
function checked(what, known, options) {
  if (absent(options)) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${what}: the options must be an object`);
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new TypeError(`${what}: unknown option "${key}" (known: ${known.join(', ')})`);
  }
  return options;
}

// f(x, first, options) or f(x, options): `first` (code, or a session's
// type) as a string, or in the options; never both.
function withFirst(what, known, name, first, options) {
  if (!absent(first) && typeof first === 'object' && options === undefined) {
    options = first;
    first = undefined;
  }
  const opts = { ...checked(what, known, options) };
  if (!absent(first)) {
    if (typeof first !== 'string') throw new TypeError(`${what}: ${name} must be a string`);
    if (!absent(opts[name])) throw new TypeError(`${what}: ${name} given twice`);
    opts[name] = first;
  }
  return opts;
}

// A JSON body of the options that are set (null and undefined: absent).
function pick(fields, options, body = {}) {
  for (const key of fields) if (!absent(options[key])) body[key] = options[key];
  return body;
}

function decodeBase64(text) {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// Percent-encode each segment of a path, keeping the '/' between them.
function quotePath(path) {
  return String(path).split('/').map(encodeURIComponent).join('/');
}

// Retry-After as seconds from now (delta-seconds or an HTTP date), or null.
function parseRetryAfter(value) {
  if (absent(value)) return null;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  const when = Date.parse(text);
  return Number.isNaN(when) ? null : Math.max(0, (when - Date.now()) / 1000);
}

// Answers that say the request was refused before anything ran, and that a
// later try may pass: 429 (but too_many_sessions, which waits on a session's
// end) and 503 busy. Nothing else is retried.
function retryable(err) {
  if (err.status === 429) return err.code !== 'too_many_sessions';
  return err.status === 503 && err.code === 'busy';
}

// The IsoboxError of a call that the caller's signal (the signal option)
// aborted.
function aborted(box, when) {
  const reason = box.signal.reason;
  const why = reason instanceof Error ? reason.message : reason === undefined ? '' : String(reason);
  return new IsoboxError(0, 'aborted', `the call was aborted${when ? ` ${when}` : ''}${why ? `: ${why}` : ''}`);
}

// Wait ms, or until the caller's signal aborts (then reject, as aborted).
function pause(box, ms) {
  const signal = box.signal;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted(box, 'while waiting to try again'));
    const stop = () => {
      clearTimeout(handle);
      reject(aborted(box, 'while waiting to try again'));
    };
    const handle = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    signal?.addEventListener('abort', stop, { once: true });
  });
}

// One request's controller follows the caller's signal until its answer is
// read; the listener goes then (the returned function), so that a signal
// kept for many calls gathers none.
function follow(signal, controller) {
  if (!signal) return () => {};
  const abort = () => controller.abort();
  signal.addEventListener('abort', abort, { once: true });
  return () => signal.removeEventListener('abort', abort);
}

// The IsoboxError (status 0) of a failure to talk to the server.
function unreachable(box, e, timer, when) {
  if (e instanceof IsoboxError) return e;
  if (box.signal?.aborted) return aborted(box, when);
  const during = when ? ` ${when}` : '';
  if ((timer && timer.fired) || (e && e.name === 'TimeoutError')) {
    return new IsoboxError(0, 'timeout', `no answer from ${box.url} within ${box.timeoutMs} ms${during}`);
  }
  const cause = e && e.cause;
  const reason = (cause && (cause.message || cause.code)) || (e && e.message) || String(e);
  return new IsoboxError(0, 'connection_failed',
    when ? `the connection to ${box.url} broke${during}: ${reason}` : `cannot reach ${box.url}: ${reason}`);
}

// Aborts the request when the server is silent for timeoutMs: armed while
// the client waits for it (to connect and answer, for each piece of the
// body), never while the caller holds an event.
function idleTimer(ms, controller) {
  let handle;
  const timer = {
    fired: false,
    arm() {
      clearTimeout(handle);
      handle = setTimeout(() => {
        timer.fired = true;
        controller.abort();
      }, ms);
    },
    done() {
      clearTimeout(handle);
    },
  };
  return timer;
}

// A 2xx answer, read once: json(), bytes(), or events().
class Answer {
  constructor(box, resp, timer, unfollow) {
    this.box = box;
    this.resp = resp;
    this.timer = timer;
    this.unfollow = unfollow;
  }

  async #read(how) {
    this.timer.arm();
    try {
      return await this.resp[how]();
    } catch (e) {
      throw unreachable(this.box, e, this.timer, 'while reading the answer');
    } finally {
      this.timer.done();
      this.unfollow();
    }
  }

  async json() {
    return JSON.parse(new TextDecoder().decode(await this.#read('arrayBuffer')));
  }

  async bytes() {
    return new Uint8Array(await this.#read('arrayBuffer'));
  }

  // The events of a text/event-stream answer: stdout/stderr data as Uint8Array.
  async *events() {
    const decoder = new TextDecoder();
    const reader = this.resp.body.getReader();
    let buffer = '';
    let name = 'message';
    let data = [];
    let finished = false;
    let ended = false; // the last event came: 'result' or 'error'
    try {
      for (;;) {
        let chunk;
        this.timer.arm();
        try {
          chunk = await reader.read();
        } catch (e) {
          throw unreachable(this.box, e, this.timer, 'during the stream');
        } finally {
          this.timer.done();
        }
        if (chunk.done) {
          finished = true;
          if (!ended) {
            throw new IsoboxError(0, 'connection_failed',
              `the connection to ${this.box.url} broke during the stream: it ended before its result`);
          }
          return;
        }
        buffer += decoder.decode(chunk.value, { stream: true });
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
              ended = name === 'result' || name === 'error';
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
    } finally {
      this.timer.done();
      this.unfollow();
      // Left early (break, an exception): hang up, so that the server stops the run.
      if (!finished) await reader.cancel().catch(() => {});
    }
  }
}

// One request; resolves to the Answer of a 2xx, sent again on a refusal the
// retry rule allows, else rejects with IsoboxError.
// json: a value sent as JSON; bytes: a raw body (Uint8Array or string).
async function request(box, method, path, { json, bytes, accept = 'application/json', contentType, headers: extra } = {}) {
  const headers = { Accept: accept, ...extra };
  let body;
  if (json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(json);
  } else if (bytes !== undefined) {
    headers['Content-Type'] = contentType ?? 'application/octet-stream';
    body = bytes;
  }
  if (box.apiKey) headers.Authorization = `Bearer ${box.apiKey}`;
  let retriesLeft = box.retries;
  let waitLeftMs = box.maxRetryWaitMs;
  for (;;) {
    if (box.signal?.aborted) throw aborted(box, 'before it was sent');
    const controller = new AbortController();
    const timer = idleTimer(box.timeoutMs, controller);
    const unfollow = follow(box.signal, controller);
    let resp;
    timer.arm();
    try {
      resp = await fetch(box.url + path, { method, headers, body, signal: controller.signal });
    } catch (e) {
      unfollow();
      throw unreachable(box, e, timer);
    } finally {
      timer.done();
    }
    if (resp.ok) return new Answer(box, resp, timer, unfollow);
    let text = '';
    timer.arm();
    try {
      text = await resp.text();
    } catch {
      // the error's body is lost; its status says enough
    } finally {
      timer.done();
      unfollow();
    }
    // An abort while the error's body was read: the abort is the answer.
    if (box.signal?.aborted) throw aborted(box, 'while its answer was read');
    const retryAfter = parseRetryAfter(resp.headers.get('Retry-After'));
    let err;
    try {
      err = JSON.parse(text).error;
      err = new IsoboxError(resp.status, err.code ?? 'error', err.message ?? '', retryAfter);
    } catch {
      err = new IsoboxError(resp.status, 'http_error', text.slice(0, 200), retryAfter);
    }
    const delayMs = Math.max(50, 1000 * (retryAfter ?? DEFAULT_RETRY_DELAY_S));
    if (retriesLeft <= 0 || !retryable(err) || delayMs > waitLeftMs) throw err;
    retriesLeft -= 1;
    waitLeftMs -= delayMs;
    await pause(box, delayMs);
  }
}

export class Isobox {
  /**
   * url: where the server answers (with any path prefix). options: apiKey
   * (sent as a Bearer token), timeoutMs (120000: to connect, for an answer,
   * and between the events of a stream), retries (3) and maxRetryWaitMs
   * (30000): a request refused before it ran (429 but too_many_sessions,
   * 503 busy) is sent again after the Retry-After the server asks for (1 s
   * without one), at most `retries` times and `maxRetryWaitMs` of waiting in
   * all. retries: 0 never retries. signal: an AbortSignal; when it aborts,
   * a call in flight (a stream or a session step too) hangs up and rejects
   * with IsoboxError code 'aborted', as does every call made after (usually
   * given for one call or a few: box.withOptions({ signal })).
   */
  constructor(url, options = {}) {
    const { apiKey, timeoutMs = 120000, retries = 3, maxRetryWaitMs = 30000, signal } =
      checked('new Isobox()', CLIENT_OPTIONS, options);
    // A string: in a browser, '' or '/prefix' (the page's own server) is fine too.
    if (typeof url !== 'string') throw new TypeError('new Isobox(): url must be a string');
    if (typeof timeoutMs !== 'number' || !(timeoutMs > 0)) throw new RangeError('timeoutMs must be a number above 0');
    if (!Number.isInteger(retries) || retries < 0) throw new RangeError('retries must be a whole number from 0');
    if (typeof maxRetryWaitMs !== 'number' || !(maxRetryWaitMs >= 0)) {
      throw new RangeError('maxRetryWaitMs must be a number from 0');
    }
    this.url = url.replace(/\/+$/, '');
    this.apiKey = apiKey;
    this.timeoutMs = timeoutMs;
    this.retries = retries;
    this.maxRetryWaitMs = maxRetryWaitMs;
    if (signal !== undefined &&
        (typeof signal?.aborted !== 'boolean' || typeof signal.addEventListener !== 'function')) {
      throw new TypeError('signal must be an AbortSignal');
    }
    this.signal = signal;
  }

  /**
   * Run code: execute(language, code, options) or execute(language,
   * { code or files, stdin, args, limits, network, version, outputs,
   * volume, volumeReadOnly }). Resolves to the result object ({ run: {...}, ... }).
   */
  async execute(language, code, options) {
    const opts = withFirst('execute()', EXECUTE_OPTIONS, 'code', code, options);
    return (await request(this, 'POST', '/execute', { json: pick(EXECUTE_OPTIONS, opts, { language }) })).json();
  }

  /**
   * Run code (arguments as execute), yielding events as they happen:
   * { event: 'stdout'|'stderr', data: Uint8Array }, { event: 'compile',
   * data: {...} }, and last { event: 'result', data: {...} } (or 'error').
   */
  async *stream(language, code, options) {
    const opts = withFirst('stream()', EXECUTE_OPTIONS, 'code', code, options);
    const answer = await request(this, 'POST', '/execute',
      { json: pick(EXECUTE_OPTIONS, opts, { language }), accept: 'text/event-stream' });
    yield* answer.events();
  }

  /** The languages, versions and aliases the server offers. */
  async runtimes() {
    return (await request(this, 'GET', '/runtimes')).json();
  }

  /**
   * Create a session (POST /v1/sessions); resolves to a Session.
   * session(language, type, options) or session(language, options); type
   * 'shell' (the default) or 'kernel' (python only); options: version,
   * limits ({ memoryBytes, cpus, pids }), network, idleTimeoutMs,
   * maxLifetimeMs, volume, volumeReadOnly.
   */
  async session(language, type, options) {
    const opts = withFirst('session()', SESSION_OPTIONS, 'type', type, options);
    const body = pick(SESSION_OPTIONS, opts, { language, type: opts.type ?? 'shell' });
    return new Session(this, await (await request(this, 'POST', '/v1/sessions', { json: body })).json());
  }

  /** The Session of an existing session id (GET /v1/sessions/{id}). */
  async attach(id) {
    return new Session(this, await (await request(this, 'GET', `/v1/sessions/${encodeURIComponent(id)}`)).json());
  }

  /** The live sessions, as Session objects of the API (plain JSON). */
  async sessions() {
    return (await (await request(this, 'GET', '/v1/sessions')).json()).sessions;
  }

  /** The tenant's key-value memory (/v1/memory): get, put, delete, list, keys. */
  get memory() {
    return new Memory(this);
  }

  /** Make a volume (POST /v1/volumes); resolves to a Volume. */
  async createVolume(name, sizeBytes) {
    return new Volume(this, await (await request(this, 'POST', '/v1/volumes', { json: { name, sizeBytes } })).json());
  }

  /** The Volume of an existing volume (GET /v1/volumes/{name}, with usedBytes). */
  async volume(name) {
    return new Volume(this, await (await request(this, 'GET', volumePath(name))).json());
  }

  /** The tenant's volumes, as the API's JSON, by name. */
  async volumes() {
    return (await (await request(this, 'GET', '/v1/volumes')).json()).volumes;
  }

  /**
   * isobox's tools as function-calling definitions, in the shape
   * OpenAI-style chat APIs take (GET /v1/tools): hand them to a model, then
   * pass its call's name and arguments to callTool().
   */
  async tools() {
    return (await (await request(this, 'GET', '/v1/tools')).json()).tools;
  }

  /**
   * Call one of isobox's tools by name (MCP tools/call on POST /mcp; the
   * server keeps no MCP session): resolves to { content, structuredContent,
   * isError } as an MCP client gets it. isError is a run that went wrong; a
   * refused call (an unknown tool, bad arguments) rejects with IsoboxError
   * 400 'tool_call_refused'.
   */
  async callTool(name, args = {}) {
    if (typeof name !== 'string' || !name) throw new TypeError("callTool(): name must be a tool's name");
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      throw new TypeError('callTool(): arguments must be an object');
    }
    const answer = await (await request(this, 'POST', '/mcp', { json: {
      jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } } })).json();
    if (answer?.error !== undefined || answer?.result === undefined) {
      const e = answer?.error;
      throw new IsoboxError(400, 'tool_call_refused',
        `${e?.message ?? 'no result in the answer'} (JSON-RPC ${e?.code ?? null})`);
    }
    return answer.result;
  }

  /**
   * A copy of this client with other options (apiKey, timeoutMs, retries,
   * maxRetryWaitMs), for one call or a few: box.withOptions({ timeoutMs: 600000 }).execute(...).
   */
  withOptions(options) {
    const opts = checked('withOptions()', CLIENT_OPTIONS, options);
    return new Isobox(this.url, { apiKey: this.apiKey, timeoutMs: this.timeoutMs, retries: this.retries,
      maxRetryWaitMs: this.maxRetryWaitMs, signal: this.signal, ...opts });
  }
}

function volumePath(name) {
  if (typeof name !== 'string' || !name) throw new TypeError('a volume name is a non-empty string');
  return `/v1/volumes/${encodeURIComponent(name)}`;
}

function memoryPath(key) {
  if (typeof key !== 'string' || !key) throw new TypeError('a memory key is a non-empty string');
  return `/v1/memory/${quotePath(key)}`;
}

// An etag as items carry it, or quoted as ETag headers do: quoted.
const quoteEtag = (etag) => (etag.startsWith('"') ? etag : `"${etag}"`);

const PUT_OPTIONS = ['contentType', 'ttlSeconds', 'ifMatch', 'ifNoneMatch'];

/** The tenant's memory (/v1/memory): values under keys, kept across runs. Made by Isobox.memory. */
export class Memory {
  constructor(box) {
    this.box = box;
  }

  /** { key, value: Uint8Array, contentType, etag }; IsoboxError 404 key_not_found when absent. */
  async get(key) {
    const answer = await request(this.box, 'GET', memoryPath(key), { accept: '*/*' });
    const value = await answer.bytes();
    const h = answer.resp.headers;
    return { key, value, contentType: h.get('content-type') ?? 'application/octet-stream',
      etag: (h.get('etag') ?? '').replace(/"/g, '') };
  }

  /**
   * Store value (Uint8Array, ArrayBuffer; a string as UTF-8 text/plain; else
   * JSON) under key; resolves to the item { key, size, contentType, etag,
   * updatedAt, expiresAt }. options: contentType, ttlSeconds, ifMatch (an
   * etag read before, or '*'), ifNoneMatch (true: only a new key).
   */
  async put(key, value, options) {
    const { contentType, ttlSeconds, ifMatch, ifNoneMatch } = checked('memory.put()', PUT_OPTIONS, options);
    let bytes;
    let kind;
    if (typeof value === 'string') [bytes, kind] = [new TextEncoder().encode(value), 'text/plain; charset=utf-8'];
    else if (value instanceof Uint8Array) [bytes, kind] = [value, 'application/octet-stream'];
    else if (value instanceof ArrayBuffer) [bytes, kind] = [new Uint8Array(value), 'application/octet-stream'];
    else [bytes, kind] = [new TextEncoder().encode(JSON.stringify(value)), 'application/json'];
    const headers = {};
    if (!absent(ifMatch)) headers['If-Match'] = ifMatch === '*' ? '*' : quoteEtag(ifMatch);
    if (ifNoneMatch) headers['If-None-Match'] = '*';
    const query = absent(ttlSeconds) ? '' : `?ttlSeconds=${encodeURIComponent(ttlSeconds)}`;
    return (await request(this.box, 'PUT', memoryPath(key) + query,
      { bytes, contentType: contentType ?? kind, headers })).json();
  }

  /** Delete key; options: ifMatch. */
  async delete(key, options) {
    const { ifMatch } = checked('memory.delete()', ['ifMatch'], options);
    const headers = absent(ifMatch) ? {} : { 'If-Match': quoteEtag(ifMatch) };
    await (await request(this.box, 'DELETE', memoryPath(key), { headers })).bytes();
  }

  /** One page of the keys that start with prefix: { keys: [item, ...], cursor } (cursor null on the last page). */
  async list(prefix, options) {
    const { limit, cursor } = checked('memory.list()', ['limit', 'cursor'], options);
    const query = new URLSearchParams(pick(['prefix', 'limit', 'cursor'], { prefix, limit, cursor }));
    return (await request(this.box, 'GET', `/v1/memory?${query}`)).json();
  }

  /** Every item whose key starts with prefix, page after page. */
  async *keys(prefix) {
    let cursor;
    do {
      const page = await this.list(prefix, { cursor });
      yield* page.keys;
      cursor = page.cursor;
    } while (cursor);
  }
}

// What has files on the server (a session's /workspace, a volume): this.path's files.
class Place {
  /** Write a file (Uint8Array, ArrayBuffer, or string as UTF-8), making its directories; resolves to { path, size }. */
  async upload(path, data) {
    const bytes = typeof data === 'string' ? new TextEncoder().encode(data) :
      data instanceof ArrayBuffer ? new Uint8Array(data) : data;
    return (await request(this.box, 'PUT', this.#file(path), { bytes })).json();
  }

  /** The bytes of a file, as a Uint8Array. */
  async download(path) {
    return (await request(this.box, 'GET', this.#file(path), { accept: 'application/octet-stream' })).bytes();
  }

  /** The entries of a directory (default: the top): [{ name, type, size, mtime }]. */
  async files(path) {
    const query = absent(path) ? '' : `?path=${encodeURIComponent(path)}`;
    return (await (await request(this.box, 'GET', `${this.path}/files${query}`)).json()).entries;
  }

  /** Delete a file, a link, or a directory with all it holds. */
  async remove(path) {
    await (await request(this.box, 'DELETE', this.#file(path))).bytes();
  }

  /** Fetch the record again; resolves to (and keeps) this.info. */
  async refresh() {
    this.info = await (await request(this.box, 'GET', this.path)).json();
    return this.info;
  }

  #file(path) {
    return `${this.path}/files/${quotePath(path)}`;
  }
}

/**
 * A volume on the server: a filesystem of the tenant's that outlives runs;
 * a run or a session given { volume: its name } finds it at /memory. Made
 * by Isobox.createVolume() or Isobox.volume(); files under its top.
 */
export class Volume extends Place {
  constructor(box, info) {
    super();
    this.box = box;
    this.info = info;
    this.name = info.name;
    this.path = volumePath(info.name);
  }

  /** Delete the volume and every file in it (IsoboxError 409 volume_busy while something uses it). */
  async delete() {
    await (await request(this.box, 'DELETE', this.path)).bytes();
  }
}

/**
 * A session on the server: one sandbox kept between steps. Made by
 * Isobox.session(); close() (or `await using`) deletes it. Its files
 * (upload, download, files, remove) are under /workspace.
 */
export class Session extends Place {
  constructor(box, info) {
    super();
    this.box = box;
    this.info = info;
    this.id = info.id;
    this.path = `/v1/sessions/${encodeURIComponent(info.id)}`;
  }

  /**
   * Run one step: exec(code, options) or exec({ code or files, stdin, args,
   * limits: { wallTimeMs, outputBytes } }). Resolves to the result object,
   * with `session` and, for a kernel, `kernel: { value, error, images, outputs, restarted }`.
   */
  async exec(code, options) {
    const body = pick(STEP_OPTIONS, withFirst('exec()', STEP_OPTIONS, 'code', code, options));
    return (await request(this.box, 'POST', `${this.path}/exec`, { json: body })).json();
  }

  /** exec(code, options), by the name E2B's SDK gives it. */
  runCode(code, options) {
    return this.exec(code, options);
  }

  /** close(), by the name E2B's SDK gives it. */
  kill() {
    return this.close();
  }

  /**
   * Start a background command, answered at once while it runs on in
   * /workspace: startCommand('a shell line', options) or startCommand({
   * args: [program, ...args], stdin, stdinOpen }). Resolves to { id, args, running, exitCode, stdinOpen }.
   */
  async startCommand(command, options) {
    const body = withFirst('startCommand()', COMMAND_OPTIONS, 'command', command, options);
    if (absent(body.command) === absent(body.args)) {
      throw new TypeError('startCommand(): give command (a shell line) or args (a program and its arguments), one of them');
    }
    return (await request(this.box, 'POST', `${this.path}/commands`, { json: pick(COMMAND_OPTIONS, body) })).json();
  }

  /** The session's commands, running or ended. */
  async commands() {
    return (await (await request(this.box, 'GET', `${this.path}/commands`)).json()).commands;
  }

  /**
   * What a command wrote from byte offsets { stdoutFrom, stderrFrom } (at most
   * maxBytes of each; encoding 'base64' for exact bytes): { stdout, stdoutNext,
   * stderr, stderrNext, running, exitCode, ... }; read again from the Next offsets.
   */
  async commandOutput(id, options) {
    const query = new URLSearchParams(pick(['stdoutFrom', 'stderrFrom', 'maxBytes', 'encoding'],
      checked('commandOutput()', ['stdoutFrom', 'stderrFrom', 'maxBytes', 'encoding'], options)));
    const tail = query.toString() ? `?${query}` : '';
    return (await request(this.box, 'GET', `${this.#command(id)}${tail}`)).json();
  }

  /** Write to its stdin (started with stdinOpen): { written, closed }; send the rest again. */
  async writeCommandStdin(id, data = '', options) {
    const { close = false } = checked('writeCommandStdin()', ['close'], options);
    return (await request(this.box, 'POST', `${this.#command(id)}/stdin`, { json: { data, close } })).json();
  }

  /** Signal its process group ('SIGTERM' unless another is named). */
  async signalCommand(id, signal = 'SIGTERM') {
    await (await request(this.box, 'POST', `${this.#command(id)}/signal`, { json: { signal } })).bytes();
  }

  /** Kill it if it runs, and forget it with its output. */
  async deleteCommand(id) {
    await (await request(this.box, 'DELETE', this.#command(id))).bytes();
  }

  #command(id) {
    return `${this.path}/commands/${encodeURIComponent(id)}`;
  }

  /** Run one step (arguments as exec), yielding events as Isobox.stream does. */
  async *stream(code, options) {
    const body = pick(STEP_OPTIONS, withFirst('stream()', STEP_OPTIONS, 'code', code, options));
    const answer = await request(this.box, 'POST', `${this.path}/exec`, { json: body, accept: 'text/event-stream' });
    yield* answer.events();
  }

  /**
   * Delete the session and its sandbox; a session already gone (404, 410) is
   * fine. A passing failure (no answer, 502, 503, 504) is tried again twice.
   * It does not follow the client's signal: `await using` closes a session
   * on the way out of a block that an abort ended, and the sandbox should
   * not be left to its idle timeout.
   */
  async close() {
    const box = this.box.signal ? this.box.withOptions({ signal: undefined }) : this.box;
    for (let attempt = 0; ; attempt++) {
      try {
        await (await request(box, 'DELETE', this.path)).bytes();
        return;
      } catch (e) {
        if (!(e instanceof IsoboxError)) throw e;
        if (e.status === 404 || e.status === 410) return;
        if (![0, 502, 503, 504].includes(e.status) || attempt === 2) throw e;
      }
      await pause(box, 500 * (attempt + 1));
    }
  }

  [asyncDispose]() {
    return this.close();
  }
}
