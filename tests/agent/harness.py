"""harness.py: drive an isobox-agent (sandbox/agent/agent.c) over its pipes.

Agent(argv) starts it and speaks the protocol of sandbox/frame.h: the
request helpers (run, cell, put, ...) write one request and return its tag;
answer(tag) reads frames until that request's end and gathers them. Every
read is bounded by a deadline, so a silent agent fails a test instead of
hanging it.

agent_argv() says how to start one: the binary on this host with its own
workspace; with AGENT_DOCKER_IMAGE=<image id>, inside the real sandbox
(docker, gVisor), the way the worker starts a session (its argv from the
installed isobox-fcgi --print-spec, under PREFIX, /opt/isobox); with
AGENT_RUNSC=/usr/bin/runsc, in gVisor without docker ("runsc do"; as uid
65534 with AGENT_RUNSC_NOBODY=1 too).
"""
import glob
import os
import secrets
import select
import shutil
import subprocess
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCES = sorted(glob.glob(os.path.join(REPO, "sandbox", "agent", "*.c")))  # as the Makefile's AGENT_SRC
KERNEL = os.path.join(REPO, "sandbox", "agent", "kernel.py")
DOCKER_IMAGE = os.environ.get("AGENT_DOCKER_IMAGE")
DOCKER_RUNTIME = os.environ.get("AGENT_DOCKER_RUNTIME")  # else the session's
PREFIX = os.environ.get("PREFIX", "/opt/isobox")
# Without docker: gVisor itself ("runsc do", the host's files, as root).
RUNSC = os.environ.get("AGENT_RUNSC")


def build(out_dir):
    """Builds the agent as the Makefile does (fails on any warning), or
    takes the one AGENT_BINARY names (bin/isobox-agent, a sanitizer build)."""
    binary = os.path.join(out_dir, "isobox-agent")
    if os.environ.get("AGENT_BINARY"):
        shutil.copy(os.environ["AGENT_BINARY"], binary)
    else:
        cmd = ["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-static", "-o", binary, *SOURCES]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and not done.stderr, done.stderr
    shutil.copy(KERNEL, os.path.join(out_dir, "kernel.py"))
    os.chmod(out_dir, 0o755)
    return binary


def agent_argv(agent_dir, mode, workspace, wrapper=None):
    """The command that starts an agent; mode "shell" or "kernel". wrapper:
    a file in agent_dir that python runs instead of kernel.py, given
    kernel.py's path as its argument."""
    if DOCKER_IMAGE:
        return session_argv(agent_dir, mode, wrapper)
    wrapped = [os.path.join(agent_dir, wrapper)] if wrapper else []
    kernel = ["kernel", "/usr/bin/python3", *wrapped, os.path.join(agent_dir, "kernel.py")]
    runsc = [RUNSC, "--platform=ptrace", "--network=none", "do"] if RUNSC else []
    if RUNSC and os.environ.get("AGENT_RUNSC_NOBODY"):  # as the sandbox's user
        os.chmod(workspace, 0o1777)
        runsc += ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    return [*runsc, os.path.join(agent_dir, "isobox-agent"), "--workspace", workspace,
            *(kernel if mode == "kernel" else ["shell"])]


def session_argv(agent_dir, mode, wrapper=None):
    """A session's `docker run` as the worker renders it (every hardening
    flag, the seccomp profile that lets threads start under runsc), with
    this test's agent dir, image and name, removed when it ends."""
    done = subprocess.run([os.path.join(PREFIX, "bin", "isobox-fcgi"), "--conf",
                           os.path.join(PREFIX, "conf", "isobox.yaml"), "--print-spec", "argv",
                           "kernel" if mode == "kernel" else "session", "python"],
                          capture_output=True, check=True, timeout=30)
    spec = [a.decode() for a in done.stdout.split(b"\0")[:-1]]
    image = spec.index("--entrypoint=") + 1
    name = "isobox-agent-test-" + secrets.token_hex(6)  # to find a leftover by
    argv = [spec[0], "run", "--rm", "--name=" + name]
    for a in spec[2:image - 1]:
        if a.startswith(("--name=", "--label=")):
            continue
        if a.startswith("--mount=") and ",dst=/isobox-agent," in a:
            a = "--mount=type=bind,src=%s,dst=/isobox-agent,readonly" % agent_dir
        if a.startswith("--runtime=") and DOCKER_RUNTIME:
            a = "--runtime=" + DOCKER_RUNTIME
        argv.append(a)
    agent = spec[image + 1:]
    if wrapper:
        at = agent.index("/isobox-agent/kernel.py")
        agent[at:at] = ["/isobox-agent/" + wrapper]
    return [*argv, "--entrypoint=", DOCKER_IMAGE, *agent]


class Answer:
    def __init__(self):
        self.out = b""
        self.err = b""
        self.data = b""
        self.code = None
        self.payload = b""
        self.disp = []    # a cell's displays, in order (their JSON)
        self.frames = []  # (kind, len) in order


class Agent:
    def __init__(self, argv, start_timeout=30):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.buf = b""
        self.answers = {}  # tag -> Answer, for frames of requests not waited on yet
        line = self.line(time.monotonic() + start_timeout)
        assert line == b"ready", line

    # --- reading ---
    def _more(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the agent said nothing in time; stderr: %r" % self.stderr_now())
        ready, _, _ = select.select([self.proc.stdout], [], [], left)
        if not ready:
            raise TimeoutError("the agent said nothing in time; stderr: %r" % self.stderr_now())
        chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
        if not chunk:
            raise EOFError("the agent closed its stdout; stderr: %r" % self.stderr_now())
        self.buf += chunk

    def line(self, deadline):
        while b"\n" not in self.buf:
            assert len(self.buf) <= 512, self.buf[:600]
            self._more(deadline)
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def exact(self, n, deadline):
        while len(self.buf) < n:
            self._more(deadline)
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def frame(self, timeout=10):
        """The next frame: (kind, tag, code, payload)."""
        deadline = time.monotonic() + timeout
        words = self.line(deadline).decode("ascii").split(" ")
        kind, tag = words[0], words[1]
        assert len(tag) == 16 and all(c in "0123456789abcdef" for c in tag), words
        if kind == "end":
            assert len(words) == 4, words
            code, n = int(words[2]), int(words[3])
        elif kind == "disp":  # one whole display, as large as a cell's result may be
            assert len(words) == 3, words
            code, n = None, int(words[2])
        else:
            assert kind in ("out", "err", "data") and len(words) == 3, words
            code, n = None, int(words[2])
            assert n <= 65536
        return kind, tag, code, self.exact(n, deadline)

    def answer(self, tag, timeout=10):
        """Every frame until tag's end; frames of other tags are kept."""
        deadline = time.monotonic() + timeout
        while True:
            kind, t, code, payload = self.frame(max(0.01, deadline - time.monotonic()))
            a = self.answers.setdefault(t, Answer())
            a.frames.append((kind, len(payload)))
            if kind == "end":
                a.code, a.payload = code, payload
                if t == tag:
                    return self.answers.pop(t)
            elif kind == "disp":
                a.disp.append(payload)
            else:
                setattr(a, kind, getattr(a, kind) + payload)

    def stderr_now(self):
        if self.proc.poll() is None:
            return b"(running)"
        return self.proc.stderr.read()

    # --- requests ---
    def send(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, header, payload=b"", tag=None):
        tag = tag or secrets.token_hex(8)
        self.send(header.replace("TAG", tag).encode() + b"\n" + payload)
        return tag

    def run(self, argv, files=(), stdin=b""):
        body = b""
        for name, data in files:
            name = name.encode() if isinstance(name, str) else name
            body += b"%d %d\n" % (len(name), len(data)) + name + data
        for arg in argv:
            arg = arg.encode()
            body += b"%d\n" % len(arg) + arg
        return self.request("run TAG %d %d %d" % (len(files), len(argv), len(stdin)), body + stdin)

    def cell(self, code, stdin=b""):
        code = code.encode()
        return self.request("cell TAG %d %d" % (len(code), len(stdin)), code + stdin)

    def interrupt(self, tag):
        self.send(b"int %s\n" % tag.encode())

    def put(self, path, data):
        path = path.encode()
        return self.request("put TAG %d %d" % (len(path), len(data)), path + data)

    def get(self, path, maxlen=1 << 30):
        path = path.encode()
        return self.request("get TAG %d %d" % (maxlen, len(path)), path)

    def list(self, path=""):
        path = path.encode()
        return self.request("list TAG %d" % len(path), path)

    def delete(self, path):
        path = path.encode()
        return self.request("del TAG %d" % len(path), path)

    # --- background commands (agent_cmds.h) ---
    def bg(self, argv, stdin=b"", open_stdin=False):
        body = b"".join(b"%d\n" % len(a.encode()) + a.encode() for a in argv)
        return self.request("bg TAG %d %d %d" % (len(argv), len(stdin), int(open_stdin)), body + stdin)

    def bgin(self, cid, data):
        return self.request("bgin TAG %s %d" % (cid, len(data)), data)

    def bgout(self, cid, out_from=0, err_from=0, most=1 << 20):
        return self.request("bgout TAG %s %d %d %d" % (cid, out_from, err_from, most))

    def bgkill(self, cid, sig):
        return self.request("bgkill TAG %s %d" % (cid, sig))

    def bgdel(self, cid):
        return self.request("bgdel TAG %s" % cid)

    def bglist(self):
        return self.request("bglist TAG")

    # --- request and answer ---
    def do(self, method, *args, timeout=10, **kw):
        method = {"del": "delete"}.get(method, method)
        return self.answer(getattr(self, method)(*args, **kw), timeout)

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()  # the agent ends at end of file
                self.proc.wait(timeout=10)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdout, self.proc.stderr):
            f.close()


def parse_list(payload):
    """list's payload: {name: (type, size, mtime)}."""
    entries = {}
    while payload:
        header, payload = payload.split(b"\n", 1)
        kind, size, mtime, n = header.split(b" ")
        name, payload = payload[: int(n)], payload[int(n):]
        entries[name.decode()] = (kind.decode(), int(size), int(mtime))
    return entries


def workspace_dir():
    return tempfile.mkdtemp(prefix="isobox-agent-ws-")


def parse_output(payload):
    """bgout's payload: (running, code, (start, bytes, total) for stdout and stderr)."""
    header, rest = payload.split(b"\n", 1)
    r, code, os_, ol, ot, es, el, et = (int(x) for x in header.split(b" "))
    assert len(rest) == ol + el, (header, len(rest))
    return bool(r), code, (os_, rest[:ol], ot), (es, rest[ol:], et)


def parse_commands(payload):
    """bglist's payload: {id: (running, code, out_total, err_total, argv)}."""
    found = {}
    while payload:
        header, payload = payload.split(b"\n", 1)
        cid, r, code, ot, et, n = header.split(b" ")
        args, payload = payload[: int(n)], payload[int(n):]
        assert args.endswith(b"\0"), args
        found[cid.decode()] = (r == b"1", int(code), int(ot), int(et), [a.decode() for a in args[:-1].split(b"\0")])
    return found
