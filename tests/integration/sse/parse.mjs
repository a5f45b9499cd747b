// Read an isobox event stream with the npm package eventsource-parser and
// print what it parsed, as JSON: [{event, data, at}] (at: ms since start).
//   node parse.mjs URL REQUEST_JSON
import { createParser } from 'eventsource-parser';

const [url, body] = process.argv.slice(2);
const start = Date.now();
const events = [];
const parser = createParser({
  onEvent(ev) {
    events.push({ event: ev.event ?? 'message', data: ev.data, at: Date.now() - start });
  },
});
const resp = await fetch(url + '/execute', {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
  body,
});
const decoder = new TextDecoder();
for await (const chunk of resp.body) parser.feed(decoder.decode(chunk, { stream: true }));
console.log(JSON.stringify({ status: resp.status, type: resp.headers.get('content-type'), events }));
