// isobox client: run untrusted code through an isobox server.
// No dependencies; Node.js 18+ and browsers (fetch, ReadableStream).
//
//   import { Isobox } from './isobox.mjs';
//   const box = new Isobox('http://127.0.0.1:8090');
//   const r = await box.execute('python', { code: 'print(40 + 2)' });
//   console.log(r.run.stdout); // 42
//   for await (const ev of box.stream('python', { code: 'print(1)' })) console.log(ev);
//
// Errors from the server reject with IsoboxError (status, code, message).

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

function decodeBase64(text) {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export class Isobox {
  constructor(url, { apiKey, timeoutMs = 120000 } = {}) {
    this.url = url.replace(/\/+$/, '');
    this.apiKey = apiKey;
    this.timeoutMs = timeoutMs;
  }

  /** Run code; resolves to the result object ({ run: {...}, ... }). */
  async execute(language, options = {}) {
    const resp = await this.#request('POST', '/execute', this.#body(language, options));
    return resp.json();
  }

  /**
   * Run code, yielding events as they happen: { event: 'stdout'|'stderr',
   * data: Uint8Array }, { event: 'compile', data: {...} }, and last
   * { event: 'result', data: {...} } (or 'error').
   */
  async *stream(language, options = {}) {
    const resp = await this.#request('POST', '/execute', this.#body(language, options),
      'text/event-stream');
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

  /** The languages, versions and aliases the server offers. */
  async runtimes() {
    const resp = await this.#request('GET', '/runtimes');
    return resp.json();
  }

  #body(language, options) {
    const body = { language };
    for (const key of FIELDS) if (options[key] !== undefined) body[key] = options[key];
    return body;
  }

  async #request(method, path, body, accept = 'application/json') {
    const headers = { Accept: accept };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (this.apiKey) headers.Authorization = `Bearer ${this.apiKey}`;
    const resp = await fetch(this.url + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
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
}
