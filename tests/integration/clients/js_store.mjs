// Drive the memory and volumes of the installed client (npm package isobox)
// against a live server; print what it got as JSON. Everything it makes
// (keys under argv[3], the volume argv[4]) is removed here in a finally, and
// by the pytest wrapper if this script dies first.
//   node js_store.mjs URL PREFIX VOLUME
import { Isobox, IsoboxError, Memory, Volume } from 'isobox';

const [url, prefix, volumeName] = process.argv.slice(2);
const box = new Isobox(url);
const out = {};

async function error(promise) {
  try {
    await promise;
    return 'none';
  } catch (e) {
    return e instanceof IsoboxError ? [e.status, e.code] : String(e);
  }
}

const text = (bytes) => new TextDecoder().decode(bytes);

try {
  const mem = box.memory;
  out.isMemory = mem instanceof Memory;
  const item = await mem.put(prefix + 'plan', { step: 2 });
  const got = await mem.get(prefix + 'plan');
  out.json = [item.contentType, JSON.parse(text(got.value)), got.etag === item.etag];
  await mem.put(prefix + 'raw', new Uint8Array([0, 255]));
  out.raw = Array.from((await mem.get(prefix + 'raw')).value);
  const t = await mem.put(prefix + 'text', 'é', { contentType: 'text/markdown', ttlSeconds: 60 });
  out.text = [text((await mem.get(prefix + 'text')).value), (await mem.get(prefix + 'text')).contentType,
    t.expiresAt !== null];
  await mem.put(prefix + 'plan', { step: 3 }, { ifMatch: got.etag });
  out.stale = await error(mem.put(prefix + 'plan', { step: 4 }, { ifMatch: got.etag }));
  out.created = await error(mem.put(prefix + 'plan', 5, { ifNoneMatch: true }));
  out.badOption = await error(mem.put(prefix + 'x', 1, { ttl: 5 }));
  const page = await mem.list(prefix, { limit: 2 });
  out.page = [page.keys.length, page.cursor === page.keys[1].key];
  out.keys = [];
  for await (const i of mem.keys(prefix)) out.keys.push(i.key.slice(prefix.length));
  await mem.delete(prefix + 'raw');
  out.missing = await error(mem.get(prefix + 'raw'));

  const vol = await box.createVolume(volumeName, 16 << 20);
  out.isVolume = [vol instanceof Volume, vol.name === volumeName, vol.info.state];
  out.upload = await vol.upload('in/data.csv', 'a,b\n1,2\n');
  out.top = (await vol.files()).map((e) => [e.name, e.type]);
  const r = await box.execute('python', "print(open('/memory/in/data.csv').read().split()[1])", { volume: volumeName });
  out.run = r.run.stdout;
  out.download = text(await vol.download('in/data.csv'));
  out.listed = (await box.volumes()).some((v) => v.name === volumeName);
  out.used = (await box.volume(volumeName)).info.usedBytes > 0;
  out.refresh = (await vol.refresh()).sizeBytes;
  await vol.remove('in');
  out.empty = await vol.files();
  await vol.delete();
  out.gone = await error(box.volume(volumeName));

  const quick = box.withOptions({ timeoutMs: 500, retries: 0 });
  out.options = [quick.timeoutMs, quick.retries, box.timeoutMs, box.retries];
  out.timeout = await error(quick.execute('python', 'import time\ntime.sleep(3)'));
  out.badWith = await error(Promise.resolve().then(() => box.withOptions({ timeout: 1 })));
} finally {
  for await (const i of box.memory.keys(prefix)) await box.memory.delete(i.key).catch(() => {});
  await box.volume(volumeName).then((v) => v.delete()).catch(() => {});
}
process.stdout.write(JSON.stringify(out));
