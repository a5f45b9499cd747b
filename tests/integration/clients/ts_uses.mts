// Type-checked (tsc --strict, not run) by test_clients.py against the
// installed package's isobox.d.ts: the documented uses must compile.
import { Isobox, IsoboxError, Memory, Session, Volume, succeeded } from 'isobox';
import type { AbortSignalLike, Result, StreamEvent, SessionInfo, FileEntry, Runtimes, MemoryItem, MemoryValue, MemoryPage, ToolDefinition, ToolResult, VolumeInfo, CommandInfo, CommandOutput } from 'isobox';

export async function uses(url: string): Promise<void> {
  const box = new Isobox(url, { apiKey: 'ibx_x', timeoutMs: 5000, retries: 0, maxRetryWaitMs: 1000 });
  const r: Result = await box.execute('python', 'print(1)', { stdin: 'x', limits: { wallTimeMs: 1000 } });
  const r2 = await box.execute('python', { files: [{ name: 'main.py', content: 'AA==', encoding: 'base64' }] });
  const ok: boolean = succeeded(r) && succeeded(r2);
  const out: string | undefined = r.run?.stdout;
  const flags: boolean[] = r.run ? [r.run.timedOut, r.run.oomKilled, r.run.truncated] : [];
  for await (const ev of box.stream('python', 'print(1)', { network: false })) {
    const e: StreamEvent = ev;
    if (ev.event === 'stdout' || ev.event === 'stderr') {
      const bytes: Uint8Array = ev.data;
    } else if (ev.event === 'result') {
      const code: number | undefined = ev.data.run?.exitCode;
    } else if (ev.event === 'error') {
      const code: string = ev.data.error.code;
    }
  }
  const rt: Runtimes = await box.runtimes();
  const names: string[] = rt.runtimes.map((x) => x.language);
  const s: Session = await box.session('python', 'kernel', { idleTimeoutMs: 60000 });
  const s2: Session = await box.session('python', { type: 'shell', limits: { memoryBytes: 1 << 27 } });
  const k = await s.exec('1 + 1');
  const value: string | null | undefined = k.kernel?.value;
  const k2 = await s2.exec({ code: 'print(1)', args: ['a'], limits: { outputBytes: 100 } });
  const written: { path: string; size: number } = await s.upload('a.bin', new Uint8Array([1, 2]));
  const back: Uint8Array = await s.download('a.bin');
  const entries: FileEntry[] = await s.files();
  const info: SessionInfo = await s.refresh();
  const all: SessionInfo[] = await box.sessions();
  const again: Session = await box.attach(s.id);
  await s.remove('a.bin');
  const started: CommandInfo = await s.startCommand('pip install x', { stdin: 'y' });
  const started2: CommandInfo = await s.startCommand({ args: ['cat'], stdinOpen: true });
  const read: CommandOutput = await s.commandOutput(started.id, { stdoutFrom: 0, encoding: 'base64' });
  const next: number = read.stdoutNext;
  const code: number | null = read.exitCode;
  const w: { written: number; closed: boolean } = await s.writeCommandStdin(started2.id, 'x', { close: true });
  await s.signalCommand(started2.id, 'SIGINT');
  const cmds: CommandInfo[] = await s.commands();
  await s.deleteCommand(started.id);
  await s.close();
  const mem: Memory = box.memory;
  const item: MemoryItem = await mem.put('notes/plan', { step: 2 }, { ttlSeconds: 60, ifNoneMatch: true });
  const got: MemoryValue = await mem.get('notes/plan');
  const bytes: Uint8Array = got.value;
  await mem.put('notes/plan', 'text', { ifMatch: got.etag, contentType: 'text/plain' });
  const page: MemoryPage = await mem.list('notes/', { limit: 10 });
  const cursor: string | null = page.cursor;
  for await (const i of mem.keys('notes/')) {
    const expires: string | null = i.expiresAt;
  }
  await mem.delete('notes/plan', { ifMatch: item.etag });
  const vol: Volume = await box.createVolume('data', 1 << 24);
  const vinfo: VolumeInfo = await vol.refresh();
  const used: number | null | undefined = (await box.volume('data')).info.usedBytes;
  const vols: VolumeInfo[] = await box.volumes();
  await vol.upload('a.csv', 'a,b');
  const vbytes: Uint8Array = await vol.download('a.csv');
  const ventries: FileEntry[] = await vol.files();
  await vol.remove('a.csv');
  await vol.delete();
  const slow: Isobox = box.withOptions({ timeoutMs: 600000 });
  // An AbortSignal (a DOM or Node.js one) is an AbortSignalLike.
  const signal: AbortSignalLike = { aborted: false, addEventListener() {}, removeEventListener() {} };
  const stoppable: Isobox = box.withOptions({ signal });
  void stoppable;
  const tools: ToolDefinition[] = await box.tools();
  const named: string = tools[0].function.name;
  const called: ToolResult = await box.callTool(named, { language: 'python', code: 'print(1)' });
  const failedCall: boolean = called.isError;
  const agentSession: Session = await box.session('python', 'kernel');
  const ran: Result = await agentSession.runCode('1 + 1');
  await agentSession.kill();
  try {
    await box.runtimes();
  } catch (e) {
    if (e instanceof IsoboxError) {
      const fields: [number, string, string, number | null] = [e.status, e.code, e.message, e.retryAfter];
    }
  }
}
