// node.js: the agent of a warm JavaScript sandbox (sandbox/warm.c).
//
// It runs as the sandbox's first process, requires what the registry lists
// (argv: idle seconds, then module names), says "\036ready\n" on stderr and
// waits for one job on stdin. The job is python.py's (warm_job_frame in sandbox/warm.c
// writes it):
//
//   <nonce>\n   of the end marks (decoder.h), handed to the sandbox's first
//               process, the reporter (sandbox/agent/agent_reap.c), which
//               writes them once this process has ended: a program's 'exit'
//               listeners run after any of ours, and their output comes first.
//   <files>\n   then for each file: <name bytes> <data bytes>\n<name><data>
//   <args>\n    then for each arg:  <bytes>\n<arg>
//
// and whatever follows on stdin is the program's stdin. The agent writes the
// files into /box, says "\036" on stderr (the program starts: decoder.h) and
// runs the entry file as the main module of this Node.js, which has already
// paid for its start and the requires. It serves one job: the sandbox is
// never reused.
//
// A program must not tell this from `node main.js args` except by speed:
// process.argv, require.main (a fresh module with id "."), __filename,
// process.mainModule, the exit code of a throw or of process.exit(n), the
// message of an uncaught exception, and stdin (the same pipe, blocking as
// the agent found it, read from where the job ends) are what the cold run
// gives, because Node's own entry point, Module.runMain, loads it.
//
// Every read of the job is an exact-size fs.readSync on fd 0, never
// process.stdin: a stream would read ahead and take the program's stdin.
// The wait for the job must end after the idle time, which a blocking
// readSync cannot do and a read on the thread pool cannot either (exit then
// joins the pool's threads, one of them stuck in read(2)). So the wait is
// an event-loop watch on fd 0 with a zero-byte buffer: libuv finds no room
// for the data, reads nothing and reports ENOBUFS, which here means "fd 0
// is readable" (a job or EOF). Then the readSyncs.
//
// What a program can still see, none of it cheap to hide:
//  - stack traces through the entry file's load lack the cold run's last
//    frame, "at node:internal/main/run_main_module:28:49": the frames end
//    at "Function.executeUserEntryPoint [as runMain]", which libuv calls
//    from C++ (a handle's close callback), so none of the agent's frames is
//    there either. Error.prepareStackTrace is left alone: the program
//    could observe it.
//  - the main module runs in that callback, not during bootstrap: the
//    async_hooks ids at its top level differ (executionAsyncId() is not 1).
//  - require.cache holds the preloaded modules (the point of preloading),
//    and their module.parent is this agent's module object (id ".",
//    filename /isobox-agent/node.js), which is gone from require.cache.
//  - process.uptime(), performance.now() and process.moduleLoadList count
//    from the sandbox's start, not from the job's.
'use strict';

const fs = require('fs');
const path = require('path');
const Module = require('module');

const O_NOFOLLOW = fs.constants.O_NOFOLLOW;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

// Nothing of the program has run: no handler of its to honour.
function quit(code) {
	process.exit(code);
}

// One exact read of n bytes from fd 0 (several syscalls if short).
function readExact(n) {
	const buf = Buffer.allocUnsafe(n);
	let off = 0;
	let nap = 1;
	while (off < n) {
		let got;
		try {
			got = fs.readSync(0, buf, off, Math.min(n - off, 1 << 20), null);
		} catch (err) {
			if (err.code === 'EAGAIN' || err.code === 'EWOULDBLOCK') {
				// A non-blocking fd 0 not yet filled: nap briefly, no busy loop.
				Atomics.wait(sleeper, 0, 0, nap);
				nap = Math.min(nap * 2, 50);
				continue;
			}
			if (err.code === 'EINTR')
				continue;
			throw err;
		}
		if (got === 0)
			quit(0); // the worker went away before a whole job: nothing ran
		off += got;
		nap = 1;
	}
	return buf;
}

// A line of at most limit bytes, without its LF.
function readLine(limit) {
	let line = '';
	for (;;) {
		const c = readExact(1)[0];
		if (c === 0x0a)
			return line;
		if (line.length >= limit)
			quit(125);
		line += String.fromCharCode(c);
	}
}

// A decimal line, at most 40 bytes; "a b" lines give two numbers.
function readNumbers(count) {
	const words = readLine(40).split(' ');
	if (words.length !== count || !words.every((w) => /^[0-9]{1,15}$/.test(w)))
		quit(125);
	return words.map(Number);
}

// The reporter's way to the nonce: fd 3, a pipe it made (anything else
// there is not ours to touch), closed before the program runs so that the
// program never holds it.
function tellReporter(nonce) {
	try {
		if (fs.fstatSync(3).isFIFO()) {
			fs.writeSync(3, nonce + '\n');
			fs.closeSync(3);
		}
	} catch {}
}

function takeJob() {
	tellReporter(readLine(64));
	const files = [];
	for (let i = readNumbers(1)[0]; i > 0; i--) {
		const [nameLen, dataLen] = readNumbers(2);
		const name = readExact(nameLen);
		files.push([name, readExact(dataLen)]);
	}
	const args = [];
	for (let i = readNumbers(1)[0]; i > 0; i--)
		args.push(readExact(readNumbers(1)[0]).toString());
	if (files.length === 0)
		quit(125);
	return { files, args };
}

// Names were checked by the worker (relative, no "..", no leading "-" or
// "@"); the box is empty and only this process writes it yet. Names stay
// bytes, as the worker sent them.
function writeFile(name, data) {
	const slash = name.lastIndexOf(0x2f);
	if (slash > 0)
		fs.mkdirSync(name.subarray(0, slash), { recursive: true, mode: 0o755 });
	const fd = fs.openSync(name, fs.constants.O_WRONLY | fs.constants.O_CREAT |
		fs.constants.O_EXCL | O_NOFOLLOW, 0o644);
	try {
		for (let off = 0; off < data.length;)
			off += fs.writeSync(fd, data, off, data.length - off);
	} finally {
		fs.closeSync(fd);
	}
}

// Whether fd 0 came non-blocking; a cold run leaves it as it found it.
function stdinNonBlocking() {
	try {
		const m = /^flags:\s*([0-7]+)/m.exec(fs.readFileSync('/proc/self/fdinfo/0', 'latin1'));
		return m !== null && (parseInt(m[1], 8) & fs.constants.O_NONBLOCK) !== 0;
	} catch {
		return false;
	}
}

// Once fd 0 is readable, take the job (prepare() returns the program's
// start) and start it; exit 0 if nothing comes within idleSeconds.
//
// The watch is a bare libuv pipe handle, not a net.Socket: destroying a
// socket touches process.stderr, which would create it and leave fd 2
// non-blocking for the program and its children. libuv makes fd 0
// non-blocking when it opens it; having no buffer it never reads it, so fd
// 0 goes back to what it was at once (blocking, as a cold run has it).
function serve(idleSeconds, prepare) {
	let pipe = false;
	try {
		const st = fs.fstatSync(0);
		pipe = st.isFIFO() || st.isSocket();
	} catch {}
	if (!pipe) {
		// A file or a terminal: nothing to watch, just read.
		process.nextTick(prepare());
		return;
	}
	const nonBlocking = stdinNonBlocking();
	const { Pipe, constants } = process.binding('pipe_wrap');
	const watch = new Pipe(constants.SOCKET);
	let err = watch.open(0);
	if (!err)
		err = watch.setBlocking(!nonBlocking);
	if (err)
		quit(125);
	watch.useUserBuffer(Buffer.alloc(0));
	const timer = setTimeout(() => quit(0), Math.min(idleSeconds * 1000, 0x7fffffff));
	watch.onread = () => { // ENOBUFS: fd 0 is readable (a job or EOF)
		watch.readStop();
		clearTimeout(timer);
		// uv_close leaves fd 0 open (stdio) and calls the start from C++
		// in the loop turn's last phase: nothing of the agent is on the
		// stack, and the next turn starts with the timers as a cold run's
		// first does (setTimeout(f, 0) runs before setImmediate(g)).
		watch.close(prepare());
	};
	err = watch.readStart();
	if (err)
		quit(125);
}

function prepareJob() {
	const { files, args } = takeJob();
	for (const [name, data] of files)
		writeFile(name, data);
	const entry = path.resolve(files[0][0].toString());

	// What `node main.js args` would have: argv[1] resolved (not real-pathed)
	// by Node's pre-execution, this agent's traces out of the module caches.
	process.argv.splice(0, process.argv.length, process.execPath, entry, ...args);
	delete Module._cache[__filename];
	const agentDir = path.dirname(__filename);
	for (const key of Object.keys(Module._pathCache))
		if (key.includes(agentDir))
			delete Module._pathCache[key];

	fs.writeSync(2, '\x1e');
	// Node's own entry point, as run_main_module calls it (the bound
	// receiver makes the frame "Function.executeUserEntryPoint [as runMain]").
	return Module.runMain.bind(Module, entry);
}

function main() {
	const idleSeconds = Number(process.argv[2]);
	if (!(idleSeconds >= 0))
		quit(125);
	for (const name of process.argv.slice(3))
		require(name);
	fs.writeSync(2, Buffer.from('\x1eready\n'));
	serve(idleSeconds, prepareJob);
}

main();
