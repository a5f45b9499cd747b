// Types of the isobox client (isobox.mjs). The API they describe:
// docs/API.md and docs/openapi.yaml of the isobox repository.

/** Resource limits of a run, clamped by the server to its ceilings. */
export interface Limits {
  memoryBytes?: number;
  cpus?: number;
  pids?: number;
  outputBytes?: number;
  wallTimeMs?: number;
  compileTimeMs?: number;
}

/** A session's limits, fixed when it starts. */
export interface SessionLimits {
  memoryBytes?: number;
  cpus?: number;
  pids?: number;
}

/** A session step's limits. */
export interface StepLimits {
  wallTimeMs?: number;
  outputBytes?: number;
}

/** One file of a run; the first is the entry point. */
export interface FileSpec {
  name?: string;
  content: string;
  /** 'utf-8' (the default) or 'base64' for binary content. */
  encoding?: 'utf-8' | 'base64';
}

export interface ExecuteOptions {
  /** The program as one file; or files, not both. */
  code?: string | null;
  files?: FileSpec[] | null;
  stdin?: string | null;
  args?: string[] | null;
  limits?: Limits | null;
  /** true: firewalled egress to the public internet. */
  network?: boolean | null;
  /** A version pin: "3", "3.11", "3.11.2". */
  version?: string | null;
  /** Globs of files the program writes, returned in the result. */
  outputs?: string[] | null;
  /** One of the tenant's volumes, mounted at /memory. */
  volume?: string | null;
  volumeReadOnly?: boolean | null;
}

export interface StepOptions {
  code?: string | null;
  files?: FileSpec[] | null;
  stdin?: string | null;
  args?: string[] | null;
  limits?: StepLimits | null;
}

export type SessionType = 'shell' | 'kernel';

export interface SessionOptions {
  /** 'shell' (the default) or 'kernel' (python only). */
  type?: SessionType | null;
  version?: string | null;
  limits?: SessionLimits | null;
  network?: boolean | null;
  idleTimeoutMs?: number | null;
  maxLifetimeMs?: number | null;
  volume?: string | null;
  volumeReadOnly?: boolean | null;
}

/** What the client uses of an AbortSignal: a DOM or Node.js one fits. */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export interface ClientOptions {
  /** Sent as "Authorization: Bearer ..." (none needed from loopback). */
  apiKey?: string;
  /** How long the server may be silent: to connect, to answer, between stream events. 120000. */
  timeoutMs?: number;
  /** Retries of a request refused before it ran (429 but too_many_sessions, 503 busy). 3; 0: none. */
  retries?: number;
  /** The most time spent waiting between retries, in all. 30000. */
  maxRetryWaitMs?: number;
  /**
   * Aborts the calls: one in flight hangs up and rejects with IsoboxError code 'aborted', as does every call made
   * after. Usually for one call: box.withOptions({ signal }).
   */
  signal?: AbortSignalLike;
}

/** One phase (compile or run) of a program. */
export interface Phase {
  stdout: string;
  stderr: string;
  /** 128+N after signal N: 137 after a kill (the flags say which). */
  exitCode: number;
  /** The signal that ended it ("SIGSEGV"), from its wait status; null for an exit, exit(139) too. */
  signal: string | null;
  timedOut: boolean;
  oomKilled: boolean;
  /** The output reached outputBytes: the rest was dropped and the program killed. */
  truncated: boolean;
  durationMs: number;
  /** CPU time (ms) the host counted for the sandbox in the phase; null where not measured. */
  cpuTimeMs: number | null;
  /** The sandbox's memory high-water mark (bytes, at most memoryBytes); null in a session step. */
  peakMemoryBytes: number | null;
  [more: string]: unknown;
}

export interface OutputFile {
  name: string;
  size: number;
  encoding: 'utf-8' | 'base64';
  content: string;
}

export interface KernelResult {
  /** The repr of the cell's last bare expression, or null. */
  value: string | null;
  error: { name: string; value: string; traceback: string } | null;
  images: { type: string; data: string }[];
  /** The cell's outputs in order, as Jupyter's nbformat 4 keeps them. */
  outputs: KernelOutput[];
  restarted: boolean;
}

/** What Python printed, a display() or figure, or the last value. `data`
 * is a MIME bundle: text/plain always; text/html, image/png (base64),
 * image/svg+xml, text/markdown, text/latex, application/json where the
 * object offers them. */
export type KernelOutput =
  | { output_type: 'stream'; name: 'stdout' | 'stderr'; text: string }
  | { output_type: 'display_data' | 'execute_result'; data: Record<string, unknown>; metadata: Record<string, unknown> };

/** The result of a run (HTTP 200: the program ran, whatever it did). */
export interface Result {
  language: string;
  version: string;
  backend: string;
  warm?: boolean;
  /** Compiled languages only. */
  compile?: Phase;
  /** Absent when the compile failed. */
  run?: Phase;
  limits: Limits;
  outputs?: OutputFile[];
  outputsTruncated?: boolean;
  /** Session steps: the session, and `ended` when the step ended it. */
  session?: { id: string; type: SessionType; ended?: string };
  /** Kernel session steps. */
  kernel?: KernelResult;
  [more: string]: unknown;
}

export type StreamEvent =
  | { event: 'stdout' | 'stderr'; data: Uint8Array }
  | { event: 'compile'; data: Phase }
  /** A kernel cell's display or last value, as it happens (a session step). */
  | { event: 'display'; data: KernelOutput }
  | { event: 'result'; data: Result }
  | { event: 'error'; data: { error: { code: string; message: string } } };

export interface Runtime {
  language: string;
  version: string;
  aliases: string[];
  available?: boolean;
  limits?: Limits;
  /** the least memory a run of it gets (the compiled languages); absent: the server's floor */
  minMemoryBytes?: number;
  [more: string]: unknown;
}

export interface Runtimes {
  backend: string;
  runtimes: Runtime[];
  [more: string]: unknown;
}

/** A session as the API describes it (GET /v1/sessions/{id}). */
export interface SessionInfo {
  id: string;
  language: string;
  version: string;
  type: SessionType;
  limits: SessionLimits;
  network: boolean;
  volume?: string;
  volumeReadOnly?: boolean;
  state: 'idle' | 'busy';
  memoryUsedBytes: number | null;
  steps: number;
  idleTimeoutMs: number;
  maxLifetimeMs: number;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  [more: string]: unknown;
}

export interface FileEntry {
  name: string;
  type: 'file' | 'directory' | 'link' | 'other';
  size: number;
  mtime: string;
}

/** A value's record in the tenant's memory (/v1/memory). */
export interface MemoryItem {
  key: string;
  size: number;
  contentType: string;
  etag: string;
  updatedAt: string;
  /** null: kept until deleted */
  expiresAt: string | null;
}

/** What Memory.get resolves to: the value's bytes and what the server said of them. */
export interface MemoryValue {
  key: string;
  value: Uint8Array;
  contentType: string;
  etag: string;
}

export interface MemoryPage {
  keys: MemoryItem[];
  /** the last key of the page when more follow; null on the last page */
  cursor: string | null;
}

export interface MemoryPutOptions {
  /** default: text/plain for a string, application/octet-stream for bytes, application/json otherwise */
  contentType?: string;
  /** the key expires this many seconds after the write (1 to 315360000) */
  ttlSeconds?: number;
  /** write only if the value is still the one with this etag ('*': only over a key that is there) */
  ifMatch?: string;
  /** true: only create a key that is not there */
  ifNoneMatch?: boolean;
}

/** A volume's record (/v1/volumes). */
export interface VolumeInfo {
  name: string;
  sizeBytes: number;
  state: 'creating' | 'ready' | 'deleting';
  createdAt: string;
  host: string;
  /** what its files take, read now (GET /v1/volumes/{name} only; null when it cannot be read) */
  usedBytes?: number | null;
}

/**
 * The server refused the request (status, code, message as it said them;
 * retryAfter: the seconds of its Retry-After, else null), or could not be
 * reached: status 0, code 'connection_failed' or 'timeout', or its signal
 * aborted the call: status 0, code 'aborted'.
 */
/** A tool as function-calling APIs take it (GET /v1/tools). */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** What a tool call gives, as MCP's tools/call result. */
export interface ToolResult {
  content: Array<{ type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string }
    | { type: string; [key: string]: unknown }>;
  structuredContent?: Record<string, unknown>;
  isError: boolean;
}

export class IsoboxError extends Error {
  constructor(status: number, code: string, message: string, retryAfter?: number | null);
  readonly name: 'IsoboxError';
  status: number;
  code: string;
  message: string;
  retryAfter: number | null;
}

/**
 * Whether a run went well: `run` present (a compile, if any, succeeded),
 * exit code 0, no flag (timedOut, oomKilled, truncated), and for a kernel
 * step no exception.
 */
export function succeeded(result: Result | null | undefined): boolean;

export class Isobox {
  constructor(url: string, options?: ClientOptions);
  readonly url: string;
  apiKey: string | undefined;
  timeoutMs: number;
  retries: number;
  maxRetryWaitMs: number;
  signal: AbortSignalLike | undefined;

  execute(language: string, code: string, options?: Omit<ExecuteOptions, 'code'>): Promise<Result>;
  execute(language: string, options: ExecuteOptions): Promise<Result>;

  stream(language: string, code: string, options?: Omit<ExecuteOptions, 'code'>): AsyncGenerator<StreamEvent, void, undefined>;
  stream(language: string, options: ExecuteOptions): AsyncGenerator<StreamEvent, void, undefined>;

  runtimes(): Promise<Runtimes>;

  session(language: string, type?: SessionType, options?: Omit<SessionOptions, 'type'>): Promise<Session>;
  session(language: string, options: SessionOptions): Promise<Session>;

  attach(id: string): Promise<Session>;
  sessions(): Promise<SessionInfo[]>;

  /** The tenant's key-value memory. */
  readonly memory: Memory;
  createVolume(name: string, sizeBytes: number): Promise<Volume>;
  volume(name: string): Promise<Volume>;
  volumes(): Promise<VolumeInfo[]>;

  /** isobox's tools as function-calling definitions (GET /v1/tools). */
  tools(): Promise<ToolDefinition[]>;
  /** Call a tool by name (MCP tools/call); a refused call rejects with 'tool_call_refused'. */
  callTool(name: string, args?: Record<string, unknown>): Promise<ToolResult>;

  /** A copy of this client with other options, for one call or a few. */
  withOptions(options: ClientOptions): Isobox;
}

export class Memory {
  constructor(box: Isobox);
  get(key: string): Promise<MemoryValue>;
  /** a string is sent as UTF-8 text, bytes as they are, anything else as JSON */
  put(key: string, value: Uint8Array | ArrayBuffer | string | unknown, options?: MemoryPutOptions): Promise<MemoryItem>;
  delete(key: string, options?: { ifMatch?: string }): Promise<void>;
  list(prefix?: string, options?: { limit?: number; cursor?: string }): Promise<MemoryPage>;
  keys(prefix?: string): AsyncGenerator<MemoryItem, void, undefined>;
}

export class Volume {
  constructor(box: Isobox, info: VolumeInfo);
  readonly box: Isobox;
  readonly name: string;
  readonly path: string;
  info: VolumeInfo;

  /** Files in the volume. */
  upload(path: string, data: Uint8Array | ArrayBuffer | string): Promise<{ path: string; size: number }>;
  download(path: string): Promise<Uint8Array>;
  files(path?: string): Promise<FileEntry[]>;
  remove(path: string): Promise<void>;
  refresh(): Promise<VolumeInfo>;
  delete(): Promise<void>;
}

export class Session {
  constructor(box: Isobox, info: SessionInfo);
  readonly box: Isobox;
  readonly id: string;
  readonly path: string;
  info: SessionInfo;

  exec(code: string, options?: Omit<StepOptions, 'code'>): Promise<Result>;
  exec(options: StepOptions): Promise<Result>;

  stream(code: string, options?: Omit<StepOptions, 'code'>): AsyncGenerator<StreamEvent, void, undefined>;
  stream(options: StepOptions): AsyncGenerator<StreamEvent, void, undefined>;

  /** Files under /workspace. */
  upload(path: string, data: Uint8Array | ArrayBuffer | string): Promise<{ path: string; size: number }>;
  download(path: string): Promise<Uint8Array>;
  files(path?: string): Promise<FileEntry[]>;
  remove(path: string): Promise<void>;
  refresh(): Promise<SessionInfo>;
  close(): Promise<void>;

  /** exec and close, by the names E2B's SDK gives them. */
  runCode(code: string, options?: Omit<StepOptions, 'code'>): Promise<Result>;
  kill(): Promise<void>;

  /** Background commands: answered at once, they run on in /workspace. */
  startCommand(command: string, options?: Omit<CommandOptions, 'command' | 'args'>): Promise<CommandInfo>;
  startCommand(options: CommandOptions): Promise<CommandInfo>;
  commands(): Promise<CommandInfo[]>;
  commandOutput(id: string, options?: CommandOutputOptions): Promise<CommandOutput>;
  writeCommandStdin(id: string, data?: string, options?: { close?: boolean }): Promise<{ written: number; closed: boolean }>;
  signalCommand(id: string, signal?: string): Promise<void>;
  deleteCommand(id: string): Promise<void>;
}

export interface CommandOptions {
  /** A line for the sandbox's sh -c (or args). */
  command?: string;
  /** A program found on PATH and its arguments (or command). */
  args?: string[];
  /** Its stdin, then end of file. */
  stdin?: string;
  /** Its stdin a pipe that writeCommandStdin writes to. */
  stdinOpen?: boolean;
}

/** A background command of a session. */
export interface CommandInfo {
  id: string;
  args: string[];
  running: boolean;
  /** null while it runs; 128 + N after signal N. */
  exitCode: number | null;
  /** The signal that ended it, from its wait status; else null. */
  signal: string | null;
  stdinOpen?: boolean;
  stdoutBytes?: number;
  stderrBytes?: number;
  [more: string]: unknown;
}

export interface CommandOutputOptions {
  stdoutFrom?: number;
  stderrFrom?: number;
  maxBytes?: number;
  encoding?: 'utf-8' | 'base64';
}

/** What a command wrote from the offsets asked for. */
export interface CommandOutput {
  id: string;
  running: boolean;
  exitCode: number | null;
  signal: string | null;
  encoding: 'utf-8' | 'base64';
  stdout: string;
  stdoutFrom: number;
  stdoutNext: number;
  stderr: string;
  stderrFrom: number;
  stderrNext: number;
}
