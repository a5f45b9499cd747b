"""The in-sandbox agent (sandbox/agent/agent.c) and its Python kernel
(sandbox/agent/kernel.py), driven over their pipes as the worker drives them
(sandbox/frame.h).

    /usr/bin/python3 -m pytest tests/agent

runs them on this host, each agent with a workspace of its own. The same
tests run in gVisor: with AGENT_DOCKER_IMAGE=<image id> inside the real
sandbox (docker --runtime=runsc-untrusted, read-only rootfs, uid 65534),
with AGENT_RUNSC=/usr/bin/runsc (and AGENT_RUNSC_NOBODY=1) without docker.
AGENT_BINARY=<path> tests that binary instead of building one (a sanitizer
build, bin/isobox-agent). See harness.py.
"""
import base64
import errno
import hashlib
import json
import os
import shutil
import tempfile
import time

import pytest

from harness import Agent, agent_argv, build, parse_commands, parse_list, parse_output, workspace_dir

# How a process ended, as the agent says it (sandbox/agent_protocol.h): an
# exit status, or SIGNALLED + N after signal N.
SIGNALLED = 256
KILLED = SIGNALLED + 9


@pytest.fixture(scope="session")
def agent_dir():
    d = tempfile.mkdtemp(prefix="isobox-agent-bin-")
    build(d)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def start(agent_dir, mode, wrapper=None):
    ws = workspace_dir()
    try:
        a = Agent(agent_argv(agent_dir, mode, ws, wrapper))
    except Exception:
        shutil.rmtree(ws, ignore_errors=True)
        raise
    a.workspace = ws
    return a


@pytest.fixture
def shell(agent_dir):
    a = start(agent_dir, "shell")
    yield a
    a.close()
    shutil.rmtree(a.workspace, ignore_errors=True)


@pytest.fixture
def kernel(agent_dir):
    a = start(agent_dir, "kernel")
    yield a
    a.close()
    shutil.rmtree(a.workspace, ignore_errors=True)


def result(answer):
    return json.loads(answer.payload)


def cell(k, code, stdin=b"", timeout=20):
    a = k.do("cell", code, stdin=stdin, timeout=timeout)
    assert a.err.startswith(b"\036"), a.err
    a.err = a.err[1:]
    return a, result(a)


# --- run ---------------------------------------------------------------------

def test_run_files_args_stdin(shell):
    a = shell.do("run", ["sh", "main.sh", "one", "two words"],
                 files=[("main.sh", b'cat; echo "$#:$1:$2"; cat sub/dir/x; echo oops >&2; exit 3\n'),
                        ("sub/dir/x", b"deep\n")],
                 stdin=b"from stdin\n")
    assert a.code == 3
    assert a.out == b"from stdin\n2:one:two words\ndeep\n"
    assert a.err == b"oops\n"
    assert a.payload == b""


def test_run_stdin_empty_and_large(shell):
    a = shell.do("run", ["wc", "-c"], stdin=b"")
    assert (a.code, a.out.strip()) == (0, b"0")
    big = os.urandom(3 << 20)
    a = shell.do("run", ["sha256sum"], stdin=big)
    assert a.out.split()[0].decode() == hashlib.sha256(big).hexdigest()


def test_run_exit_codes_and_signals(shell):
    assert shell.do("run", ["true"]).code == 0
    assert shell.do("run", ["sh", "-c", "exit 42"]).code == 42
    assert shell.do("run", ["sh", "-c", "kill -9 $$"]).code == SIGNALLED + 9
    assert shell.do("run", ["sh", "-c", "kill -15 $$"]).code == SIGNALLED + 15
    assert shell.do("run", ["sh", "-c", "exit 137"]).code == 137  # not a signal: the wait status tells
    # SIGPIPE is the default again in the program, though the agent ignores it.
    assert shell.do("run", ["sh", "-c", "yes | head -c 10 >/dev/null; kill -0 $$"]).code == 0
    a = shell.do("run", ["python3", "-c", "import signal; print(signal.getsignal(signal.SIGPIPE))"])
    assert a.out.strip() in (b"Handlers.SIG_IGN", b"1")  # python ignores it itself
    a = shell.do("run", ["sh", "-c", "trap - PIPE; (sleep 0.2; yes) | true"])
    assert a.code == 0


def test_run_missing_program(shell):
    a = shell.do("run", ["no-such-program-here"])
    assert a.code == 127
    assert b"no-such-program-here" in a.err


def test_run_large_output_both_fds(shell):
    a = shell.do("run", ["sh", "-c", "head -c 300000 /dev/zero; head -c 200000 /dev/zero >&2"])
    assert a.code == 0
    assert a.out == b"\0" * 300000 and a.err == b"\0" * 200000
    assert all(n <= 65536 for _, n in a.frames)


def test_run_fds_closed_in_program(shell):
    probe = "import os\nfor fd in range(1024):\n    try: os.fstat(fd); print(fd)\n    except OSError: pass\n"
    a = shell.do("run", ["python3", "-c", probe])
    assert a.out.split() == [b"0", b"1", b"2"], (a.out, a.err)


def test_background_process_does_not_hold_the_step(shell):
    t = time.monotonic()
    a = shell.do("run", ["sh", "-c", "sleep 5 >/dev/null & echo hi"])
    assert (a.code, a.out) == (0, b"hi\n")
    assert time.monotonic() - t < 3
    # It keeps its pipes (stderr here) and writes later: nobody sees it.
    t = time.monotonic()
    a = shell.do("run", ["sh", "-c", "(sleep 0.3; echo late; echo late >&2) & echo now"])
    assert (a.code, a.out) == (0, b"now\n")
    time.sleep(0.6)
    a = shell.do("run", ["echo", "next"])
    assert (a.out, a.err) == (b"next\n", b"")


def test_int_kills_the_run(shell):
    tag = shell.run(["sh", "-c", "sleep 100 & sleep 100"])
    time.sleep(0.3)
    t = time.monotonic()
    shell.interrupt(tag)
    a = shell.answer(tag, timeout=5)
    assert a.code == KILLED
    assert time.monotonic() - t < 3


# A run that keeps forking, slowly (at most 64 processes, over 0.3 s), so
# that int comes while its group still grows; it prints its group first.
SPAWNER = ("import os, time\nprint(os.getpgid(0), flush=True)\n"
           "for _ in range(6):\n    time.sleep(0.05)\n    os.fork()\ntime.sleep(100)\n")
# The processes of a group, zombies included: the pgrp of /proc/*/stat.
GROUP_LEFT = ("import os, sys\nleft = 0\nfor p in os.listdir('/proc'):\n"
              "    try:\n        stat = open(f'/proc/{p}/stat').read()\n    except OSError:\n        continue\n"
              "    left += stat.rsplit(')', 1)[1].split()[2] == sys.argv[1]\nprint(left)\n")


def test_int_kills_the_whole_group_before_the_answer(shell):
    tag = shell.run(["python3", "-c", SPAWNER])
    kind, t, _, said = shell.frame()
    assert (kind, t) == ("out", tag), (kind, said)
    time.sleep(0.12)  # two or three rounds of forks in
    shell.interrupt(tag)
    a = shell.answer(tag, timeout=5)
    assert a.code == KILLED, a.err
    # Nothing of it is left, not even a zombie, when the next step starts.
    assert shell.do("run", ["python3", "-c", GROUP_LEFT, said.split()[0].decode()]).out == b"0\n"


# Each way a process can leave its step's process group, session or
# parent; each is marked by its own sleep length, to be found in /proc.
ESCAPES = {
    "setsid": "(setsid sleep 400.1 >/dev/null 2>&1 &)",
    "subshell orphan": "(sleep 400.2 &)",
    "nohup": "nohup sleep 400.3 >/dev/null 2>&1 &",
    "disown": "sleep 400.4 & disown",
    "a new session leader that forks again": "setsid sh -c 'sleep 400.5 & sleep 400.6 & wait' >/dev/null 2>&1 &",
    "double fork through setsid": "(setsid sh -c '(sleep 400.7 &)' &)",
    "stopped": "sleep 400.8 & sleep 0.3; kill -STOP $!",  # after its exec
    "a python daemon (fork, setsid, fork, chdir /)":
        "python3 -c 'import os\nif os.fork() == 0:\n os.setsid()\n if os.fork() == 0:\n"
        "  os.chdir(\"/\"); os.execvp(\"sleep\", [\"sleep\", \"400.9\"])\n os._exit(0)' &",
}


def sleeping(*marks):
    """The pids of the sleeps with these marks (their argument), on this host."""
    found = {}
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if len(argv) >= 2 and argv[0].endswith(b"sleep") and argv[1].decode() in marks:
            found[argv[1].decode()] = int(entry)
    return found


def escape_marks():
    return [f"400.{i}" for i in range(1, 10)]


def test_int_takes_every_process_the_step_started(shell):
    """However it left its group (setsid, double fork, nohup, disown, a
    stopped one), nothing a stopped step started is left when it answers;
    what an earlier step left running, and its children, stay."""
    kept = shell.do("run", ["sh", "-c", "sleep 399.1 >/dev/null 2>&1 &"])
    assert kept.code == 0
    try:
        script = "\n".join(ESCAPES.values()) + "\nsleep 60"
        tag = shell.run(["bash", "-c", script])
        deadline = time.monotonic() + 10
        while len(sleeping(*escape_marks())) < 9 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sorted(sleeping(*escape_marks())) == escape_marks()
        shell.interrupt(tag)
        a = shell.answer(tag, timeout=10)
        assert a.code == KILLED
        assert sleeping(*escape_marks()) == {}, [k for k, v in ESCAPES.items()]
        assert "399.1" in sleeping("399.1")  # an earlier step's: the session's
    finally:
        for pid in sleeping("399.1").values():
            os.kill(pid, 9)


def test_a_new_run_takes_every_process_of_the_one_it_replaces(shell):
    shell.run(["bash", "-c", ESCAPES["setsid"] + "\n" + ESCAPES["disown"] + "\nsleep 60"])
    deadline = time.monotonic() + 10
    while len(sleeping("400.1", "400.4")) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(sleeping("400.1", "400.4")) == 2
    assert shell.do("run", ["echo", "new"]).out == b"new\n"
    assert sleeping("400.1", "400.4") == {}


def test_a_step_that_ends_by_itself_keeps_its_daemons(shell):
    a = shell.do("run", ["bash", "-c", ESCAPES["setsid"] + "\n" + ESCAPES["nohup"] + "\necho done"])
    try:
        assert (a.code, a.out) == (0, b"done\n")
        deadline = time.monotonic() + 5
        while len(sleeping("400.1", "400.3")) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(sleeping("400.1", "400.3")) == 2
        # A later step that is stopped does not take them either.
        tag = shell.run(["sleep", "60"])
        time.sleep(0.2)
        shell.interrupt(tag)
        assert shell.answer(tag).code == KILLED
        assert len(sleeping("400.1", "400.3")) == 2
    finally:
        for pid in sleeping("400.1", "400.3").values():
            os.kill(pid, 9)


def test_int_for_another_tag_is_ignored(shell):
    tag = shell.run(["sh", "-c", "sleep 0.5; echo done"])
    shell.interrupt("0123456789abcdef")
    a = shell.answer(tag)
    assert (a.code, a.out) == (0, b"done\n")
    shell.interrupt(tag)  # nothing runs any more
    assert shell.do("run", ["true"]).code == 0


def test_new_run_replaces_a_running_one(shell):
    old = shell.run(["sh", "-c", "echo started; sleep 100"])
    time.sleep(0.3)
    a = shell.do("run", ["echo", "new"])
    assert (a.code, a.out) == (0, b"new\n")
    old_answer = shell.answers.get(old)
    assert old_answer is None or old_answer.code is None  # the old one got no end


def test_files_persist_between_runs(shell):
    assert shell.do("run", ["sh", "-c", "echo 1 > made"], files=[("given", b"x")]).code == 0
    a = shell.do("run", ["cat", "made", "given"])
    assert a.out == b"1\nx"


def test_run_file_through_symlink_refused(shell):
    assert shell.do("run", ["ln", "-s", "/tmp", "d"]).code == 0
    a = shell.do("run", ["echo", "never"], files=[("d/x", b"1")])
    assert a.code == 126 and a.out == b""
    assert b"symbolic link" in a.err


# --- put, get, list, del ------------------------------------------------------

def test_put_get_all_bytes(shell):
    data = bytes(range(256)) * 3
    assert shell.do("put", "bin/all", data).code == 0
    a = shell.do("get", "bin/all")
    assert (a.code, a.data) == (0, data)
    assert shell.do("run", ["cmp", "bin/all", "-"], stdin=data).code == 0


def test_put_get_10_mib(shell):
    data = os.urandom(10 << 20)
    assert shell.do("put", "big", data, timeout=30).code == 0
    a = shell.do("get", "big", timeout=30)
    assert a.code == 0 and a.data == data
    assert all(n <= 65536 for _, n in a.frames)


def test_put_replaces(shell):
    shell.do("put", "f", b"long contents")
    shell.do("put", "f", b"short")
    assert shell.do("get", "f").data == b"short"


def test_get_limits_and_kinds(shell):
    shell.do("put", "f", b"12345")
    a = shell.do("get", "f", maxlen=4)
    assert a.code == errno.EFBIG and a.data == b""
    assert shell.do("get", "f", maxlen=5).data == b"12345"
    shell.do("put", "d/x", b"")
    assert shell.do("get", "d").code == errno.EISDIR
    assert shell.do("get", "nothing").code == errno.ENOENT
    assert shell.do("run", ["mkfifo", "fifo"]).code == 0
    assert shell.do("get", "fifo").code == errno.EINVAL  # does not hang on the FIFO
    assert shell.do("put", "fifo", b"x").code != 0
    assert shell.do("get", "d/x").data == b""


def test_list(shell):
    shell.do("put", "a.txt", b"hello")
    shell.do("put", "sub/b", b"12")
    shell.do("run", ["ln", "-s", "a.txt", "link"])
    shell.do("run", ["mkfifo", "pipe"])
    t = int(time.time())
    for path in ("", "."):
        a = shell.do("list", path)
        assert a.code == 0
        entries = parse_list(a.payload)
        assert set(entries) == {"a.txt", "sub", "link", "pipe"}
        assert entries["a.txt"][:2] == ("f", 5) and abs(entries["a.txt"][2] - t) < 60
        assert entries["sub"][0] == "d" and entries["link"][0] == "l" and entries["pipe"][0] == "o"
    a = shell.do("list", "sub")
    assert parse_list(a.payload) == {"b": ("f", 2, parse_list(a.payload)["b"][2])}
    assert shell.do("list", "a.txt").code == errno.ENOTDIR
    assert shell.do("list", "missing").code == errno.ENOENT


def test_list_odd_names(shell):
    names = ["with space", "new\nline", "ü"]
    for n in names:
        assert shell.do("put", n, b"x").code == 0
    assert set(parse_list(shell.do("list").payload)) == set(names)


def test_del_file_and_tree(shell):
    shell.do("put", "f", b"1")
    shell.do("run", ["sh", "-c", "mkdir -p t/a/b t/c && touch t/a/b/x t/c/y t/z && ln -s /etc t/etc"])
    assert shell.do("del", "f").code == 0
    assert shell.do("del", "t").code == 0
    assert parse_list(shell.do("list").payload) == {}
    assert shell.do("del", "f").code == errno.ENOENT
    assert shell.do("del", "").code == errno.EINVAL
    assert shell.do("del", ".").code == errno.EINVAL


def test_del_tree_with_many_entries(shell):
    shell.do("run", ["sh", "-c", "mkdir many && cd many && i=0; while [ $i -lt 500 ]; do touch f$i; i=$((i+1)); done"],
             timeout=30)
    assert shell.do("del", "many").code == 0
    assert parse_list(shell.do("list").payload) == {}


def test_symlinks_are_never_followed(shell):
    assert shell.do("run", ["sh", "-c", "ln -s /etc/passwd link && ln -s /etc dirlink && mkdir d && ln -s /etc d/up"]).code == 0
    for a in (shell.do("get", "link"), shell.do("put", "link", b"x"),
              shell.do("list", "dirlink"), shell.do("get", "dirlink/passwd"),
              shell.do("put", "dirlink/new", b"x"), shell.do("del", "dirlink/passwd"),
              shell.do("list", "d/up"), shell.do("get", "d/up/passwd"), shell.do("del", "d/up/hostname")):
        assert a.code == errno.ELOOP, (a.code, a.payload)
        assert b"symbolic link" in a.payload
    # del of the link itself removes the link, not what it points to.
    assert shell.do("del", "link").code == 0
    entries = parse_list(shell.do("list").payload)
    assert "link" not in entries and entries["dirlink"][0] == "l"
    assert os.path.exists("/etc/passwd")
    a = shell.do("run", ["head", "-c", "4", "/etc/passwd"])
    assert a.out == b"root"
    # A tree holding a link to a directory: the link goes, not its target.
    assert shell.do("del", "d").code == 0
    assert shell.do("run", ["test", "-d", "/etc"]).code == 0


def test_dangling_symlink_not_written_through(shell):
    assert shell.do("run", ["ln", "-s", "/tmp/made-through-link", "dangling"]).code == 0
    a = shell.do("put", "dangling", b"x")
    assert a.code == errno.ELOOP, (a.code, a.payload)
    a = shell.do("run", ["echo", "x"], files=[("dangling", b"x")])
    assert a.code == 126
    assert shell.do("run", ["test", "-e", "/tmp/made-through-link"]).code == 1


def test_bad_paths_refused(shell):
    for path in ("..", "../x", "a/../b", "/etc/passwd", "a//b", "a/", "./a", "a/."):
        a = shell.do("get", path)
        assert a.code == errno.EINVAL, (path, a.code, a.payload)
        assert shell.do("put", path, b"x").code == errno.EINVAL
        assert shell.do("del", path).code == errno.EINVAL
    assert shell.do("get", "a\0b").code == errno.EINVAL


# --- special files: FIFOs, sockets, devices ------------------------------------

# What an unprivileged program can make: FIFOs and sockets, and hard links
# to them; devices too where mknod is let through (gVisor lets uid 65534
# make them in a tmpfs; here, as root, too). Only harmless ones: /dev/null's
# number, /dev/ptmx's (its open fails with ENXIO in gVisor) and a block
# device of no driver. It prints what it made.
MAKE_SPECIALS = r"""
import os, socket, stat
def make(name, f):
    try:
        f()
        print(name)
    except OSError:
        pass
make("fifo", lambda: os.mkfifo("fifo"))
make("fifo-link", lambda: os.link("fifo", "fifo-link"))
make("sock", lambda: socket.socket(socket.AF_UNIX).bind("sock"))
make("sock-link", lambda: os.link("sock", "sock-link"))
make("null", lambda: os.mknod("null", stat.S_IFCHR | 0o666, os.makedev(1, 3)))
make("ptmx", lambda: os.mknod("ptmx", stat.S_IFCHR | 0o666, os.makedev(5, 2)))
make("blk", lambda: os.mknod("blk", stat.S_IFBLK | 0o666, os.makedev(0, 0)))
"""
KINDS = {"fifo": b"a named pipe (FIFO)", "fifo-link": b"a named pipe (FIFO)", "sock": b"a socket", "sock-link": b"a socket",
         "null": b"a character device", "ptmx": b"a character device", "blk": b"a block device"}


def make_specials(agent):
    a = agent.do("run", ["python3", "-c", MAKE_SPECIALS], timeout=20)
    made = a.out.decode().split()
    assert a.code == 0 and {"fifo", "fifo-link", "sock"} <= set(made), (a.out, a.err)
    return made


def test_special_files_are_not_files(shell):
    made = make_specials(shell)
    before = parse_list(shell.do("list").payload)
    assert {before[name][0] for name in made} == {"o"}, before
    for name in made:
        for op, args in (("get", (name,)), ("put", (name, b"x")), ("put", (name, b""))):
            a = shell.do(op, *args)
            assert a.code == errno.EINVAL, (name, op, a.code, a.payload)
            assert KINDS[name] + b", not a regular file" in a.payload, a.payload
        for op, args in (("list", (name,)), ("get", (name + "/x",)), ("put", (name + "/x", b"x")),
                         ("del", (name + "/x",))):
            a = shell.do(op, *args)
            assert a.code == errno.ENOTDIR, (name, op, a.code, a.payload)
            assert KINDS[name] + b", not a directory" in a.payload, a.payload
    # A put did not replace one, nor write into it.
    assert parse_list(shell.do("list").payload) == before
    # Nor does a step's file: the step does not start.
    a = shell.do("run", ["echo", "never"], files=[("fifo", b"x")])
    assert (a.code, a.out) == (126, b"") and b"a named pipe" in a.err
    # del removes the name, as rm does, and opens nothing.
    for name in made:
        assert shell.do("del", name).code == 0, name
    assert parse_list(shell.do("list").payload) == {}
    # And in a tree.
    shell.do("put", "t/x", b"1")
    assert shell.do("run", ["sh", "-c", "mkdir t/u && mkfifo t/fifo t/u/fifo"]).code == 0
    assert shell.do("del", "t").code == 0
    assert parse_list(shell.do("list").payload) == {}
    assert shell.do("run", ["echo", "still here"]).out == b"still here\n"


# Two children wait in a blocking open of a FIFO each, one to read, one to
# write: an open of the other end by the agent would let one go on.
FIFO_WAITERS = r"""
import os, sys, time
os.mkfifo("r")
os.mkfifo("w")
kids = []
for name, mode in (("r", os.O_RDONLY), ("w", os.O_WRONLY)):
    pid = os.fork()
    if pid == 0:
        os.open(name, mode)
        os.write(1, b"opened " + name.encode() + b"\n")
        os._exit(0)
    kids.append(pid)
time.sleep(0.3)
print("ready", flush=True)
time.sleep(float(sys.argv[1]))
for pid in kids:
    os.kill(pid, 9)
print("end", flush=True)
"""


def test_a_fifo_is_never_opened(shell):
    tag = shell.run(["python3", "-c", FIFO_WAITERS, "2"])
    out = b""
    while out != b"ready\n":
        kind, t, _, payload = shell.frame(timeout=30)
        assert (kind, t) == ("out", tag) and len(out + payload) <= 6, (kind, out + payload)
        out += payload
    for name in ("r", "w"):
        for op, args in (("get", (name,)), ("put", (name, b"x")), ("list", (name,)), ("put", (name + "/x", b"x"))):
            assert shell.do(op, *args).code in (errno.EINVAL, errno.ENOTDIR), (name, op)
    a = shell.answer(tag, timeout=30)
    assert (a.code, a.out) == (0, b"end\n"), (a.out, a.err)


# Swaps f between a FIFO, with a reader (so that an O_WRONLY open of it
# succeeds), and a regular file, as fast as it can. It prints how many bytes
# it found in its FIFOs.
FIFO_SWAPPER = r"""
import os, sys, time
end = time.monotonic() + float(sys.argv[1])
got = swaps = 0
def unlink():
    try:
        os.unlink("f")
    except FileNotFoundError:
        pass
while time.monotonic() < end:
    unlink()
    try:
        os.mkfifo("f")
    except FileExistsError:  # the agent made it meanwhile
        continue
    r = os.open("f", os.O_RDONLY | os.O_NONBLOCK)
    for _ in range(3):
        try:
            got += len(os.read(r, 1 << 16))
        except BlockingIOError:
            pass
        time.sleep(0.0005)
    os.close(r)
    unlink()
    with open("f", "wb") as out:
        out.write(b"regular")
    swaps += 1
print(got, swaps)
"""


def test_a_fifo_swapped_in_is_neither_written_nor_waited_on(shell):
    tag = shell.run(["python3", "-c", FIFO_SWAPPER, "2"])
    end, codes, n = time.monotonic() + 1.5, set(), 0
    while time.monotonic() < end:
        codes.add(shell.do("put", "f", b"from the agent").code)
        codes.add(shell.do("get", "f").code)
        n += 1
    a = shell.answer(tag, timeout=30)
    got, swaps = map(int, a.out.split())
    assert got == 0 and swaps > 10 and n > 10, (got, swaps, n)
    assert codes <= {0, errno.EINVAL, errno.ENOENT}, codes


# --- the request stream --------------------------------------------------------

@pytest.mark.parametrize("garbage", [
    b"hello\n", b"run 0123456789abcdef\n", b"get 0123456789ABCDEF 10 1\nx",
    b"get 0123456789abcdef 010 1\nx", b"list  0123456789abcdef 1\nx",
    b"run 0123456789abcdef 1001 1 0\n", b"put 0123456789abcdef 1 67108865\n",
    b"run 0123456789abcdef 0 4097 0\n", b"int 0123456789abcdef \n", b"x" * 600 + b"\n",
])
def test_garbage_ends_the_agent(agent_dir, garbage):
    a = start(agent_dir, "shell")
    try:
        a.send(garbage)
        assert a.proc.wait(timeout=10) != 0
    finally:
        a.close()
        shutil.rmtree(a.workspace, ignore_errors=True)


def test_requests_in_one_write(shell):
    """The worker may write more than one request at once (an int after its
    run); a file request is served while a run goes on."""
    run = b"run 0000000000000001 0 3 0\n2\nsh2\n-c15\nsleep 0.3; echo"
    stray = b"int 00000000000000ff\n"
    put = b"put 0000000000000002 1 2\nfab"
    shell.send(run + stray + put)
    a = shell.answer("0000000000000002")
    assert a.code == 0
    assert "0000000000000001" not in shell.answers
    a = shell.answer("0000000000000001")
    assert (a.code, a.out) == (0, b"\n")
    assert shell.do("get", "f").data == b"ab"


def test_end_of_requests_ends_the_agent(agent_dir):
    a = start(agent_dir, "shell")
    try:
        a.proc.stdin.close()
        assert a.proc.wait(timeout=10) == 0
    finally:
        a.close()
        shutil.rmtree(a.workspace, ignore_errors=True)


def test_a_cells_displays_come_as_they_happen_in_order(kernel):
    a, r = cell(kernel, "print('a')\ndisplay(1)\nprint('b')\ndisplay({'text/html': '<i>2</i>'}, raw=True)\n3")
    # Each display after the output printed before it; then the value, then the end.
    # A print's bytes may come in more than one frame (as the kernel's relay
    # reads them: "a", then "\n", on a busy host): the order is the promise.
    told = [k for k, _ in a.frames if k != "err"]  # stderr: the start mark only
    told = [k for i, k in enumerate(told) if not (k == "out" and i and told[i - 1] == "out")]
    assert told == ["out", "disp", "out", "disp", "disp", "end"], a.frames
    assert a.out == b"a\nb\n"
    assert [json.loads(d) for d in a.disp] == [
        {"output_type": "display_data", "data": {"text/plain": "1"}, "metadata": {}},
        {"output_type": "display_data", "data": {"text/html": "<i>2</i>"}, "metadata": {}},
        {"output_type": "execute_result", "data": {"text/plain": "3"}, "metadata": {}}]
    assert [o for o in r["outputs"] if o["output_type"] != "stream"] == [json.loads(d) for d in a.disp], r
    # The next cell has its own.
    a, r = cell(kernel, "'next'")
    assert r["value"] == "'next'" and len(a.disp) == 1, a.frames


def test_cell_in_a_shell_session(shell):
    a = shell.do("cell", "1+1")
    assert a.code == 2 and b"no kernel" in a.err
    assert shell.do("run", ["true"]).code == 0


# --- kernel --------------------------------------------------------------------

def test_kernel_state_and_values(kernel):
    a, r = cell(kernel, "x = 41\nprint('hi')")
    assert (a.code, a.out, r["value"], r["error"], r["restarted"]) == (0, b"hi\n", None, None, False)
    a, r = cell(kernel, "x + 1")
    assert (a.code, r["value"]) == (0, "42")
    a, r = cell(kernel, "_ * 2")
    assert r["value"] == "84"
    a, r = cell(kernel, "'a' * 3")
    assert r["value"] == "'aaa'"
    a, r = cell(kernel, "None")
    assert r["value"] is None
    a, r = cell(kernel, "for i in range(2):\n    print(i)\nx")
    assert (a.out, r["value"]) == (b"0\n1\n", "41")
    a, r = cell(kernel, "'z' * 100000")
    assert len(r["value"]) <= 65536 + 10
    a, r = cell(kernel, "raise ValueError('v' * 10**7)")
    assert 65536 <= len(r["error"]["value"]) <= 65536 + 10 and len(r["error"]["traceback"]) <= 65536 + 10
    a, r = cell(kernel, "import sys\nprint(__name__, sys.modules['__main__'].x, sorted(k for k in globals() if not k.startswith('__')))")
    assert a.out.split(b" ", 2)[:2] == [b"__main__", b"41"]
    assert sorted(eval(a.out.split(b" ", 2)[2])) == ["_", "i", "sys", "x"]


def test_kernel_stdin_and_stderr(kernel):
    a, r = cell(kernel, "import sys\nprint(input().upper())\nprint('e', file=sys.stderr)\nsys.stdin.read()",
                stdin=b"abc\nrest")
    assert (a.out, a.err, r["value"]) == (b"ABC\n", b"e\n", "'rest'")
    a, r = cell(kernel, "import os, subprocess\nprint('p', flush=True)\nsubprocess.run(['echo', 'child'])\nos.write(2, b'raw')\nNone")
    assert (a.out, a.err) == (b"p\nchild\n", b"raw")


def test_kernel_exception(kernel):
    cell(kernel, "def f():\n    return 1 / 0\n")
    a, r = cell(kernel, "y = 1\nf()")
    assert a.code == 1
    e = r["error"]
    assert (e["name"], e["value"]) == ("ZeroDivisionError", "division by zero")
    tb = e["traceback"]
    assert "f()" in tb and "return 1 / 0" in tb and "<cell-2>" in tb and "<cell-1>" in tb
    assert "kernel.py" not in tb
    a, r = cell(kernel, "y")
    assert r["value"] == "1"  # what ran before the error stays
    a, r = cell(kernel, "x = (")
    assert a.code == 1 and r["error"]["name"] == "SyntaxError"
    assert "kernel.py" not in r["error"]["traceback"] and "ast.py" not in r["error"]["traceback"]
    a, r = cell(kernel, "raise SystemExit(3)")
    assert (a.code, r["error"]["name"], r["error"]["value"]) == (1, "SystemExit", "3")
    a, r = cell(kernel, "import sys; sys.exit()")
    assert r["error"]["name"] == "SystemExit"
    a, r = cell(kernel, "y + 1")
    assert (a.code, r["value"]) == (0, "2")


def test_kernel_interrupt_keeps_state(kernel):
    cell(kernel, "kept = 'yes'")
    tag = kernel.cell("while True: pass")
    time.sleep(0.5)
    kernel.interrupt(tag)
    a = kernel.answer(tag, timeout=5)
    r = result(a)
    assert (a.code, r["error"]["name"], r["restarted"]) == (1, "KeyboardInterrupt", False)
    assert "kernel.py" not in r["error"]["traceback"]
    a, r = cell(kernel, "kept")
    assert r["value"] == "'yes'"
    tag = kernel.cell("import time\ntime.sleep(100)")
    time.sleep(0.5)
    kernel.interrupt(tag)
    r = result(kernel.answer(tag, timeout=5))
    assert r["error"]["name"] == "KeyboardInterrupt"
    tag = kernel.cell("!sleep 100")  # the command gets the SIGINT too
    time.sleep(0.5)
    kernel.interrupt(tag)
    r = result(kernel.answer(tag, timeout=5))
    assert (r["error"]["name"], r["restarted"]) == ("KeyboardInterrupt", False)
    assert cell(kernel, "kept")[1]["value"] == "'yes'"


# A kernel slow to start, as on a loaded host: python's own SIGINT handler
# is set (a SIGINT now raises KeyboardInterrupt here and ends the kernel).
SLOW_KERNEL = ("import runpy, sys, time\n"
               "time.sleep(2)\n"
               "runpy.run_path(sys.argv[1], run_name='__main__')\n")


def test_a_cell_interrupted_before_its_kernel_started_is_interrupted_as_it_begins(agent_dir):
    """The session's first cell, its wall time over before the kernel has
    started: the interrupt waits for the cell to begin (kernel.py's
    "start"), then the cell stops as any interrupted cell, and the kernel
    lives on; it used to die of the SIGINT (KernelDied, 130)."""
    with open(os.path.join(agent_dir, "slow_kernel.py"), "w") as f:
        f.write(SLOW_KERNEL)
    k = start(agent_dir, "kernel", "slow_kernel.py")
    try:
        tag = k.cell("n = 0\nwhile True: n += 1")
        time.sleep(0.5)
        k.interrupt(tag)
        a = k.answer(tag, timeout=10)
        r = result(a)
        assert (a.code, r["error"]["name"], r["restarted"]) == (1, "KeyboardInterrupt", False), r
        # The SIGINT can land before `n = 0` ran; what matters is that the
        # same kernel goes on: state set now is there in the next cell.
        assert cell(k, "kept = 41")[1]["error"] is None
        a, r = cell(k, "kept + 1")
        assert (r["error"], r["value"], r["restarted"]) == (None, "42", False), r
    finally:
        k.close()
        shutil.rmtree(k.workspace, ignore_errors=True)


def interrupted(kernel, code):
    """Run code as a cell, interrupt it half a second in: (answer, result,
    seconds from the interrupt to the answer)."""
    tag = kernel.cell(code)
    time.sleep(0.5)
    t = time.monotonic()
    kernel.interrupt(tag)
    a = kernel.answer(tag, timeout=10)
    return a, result(a), time.monotonic() - t


def test_kernel_interrupt_in_c(kernel):
    cell(kernel, "kept = 1")
    a, r, took = interrupted(kernel, "sum(range(10**12))")
    assert took < 5
    if r["error"]["name"] == "KernelRestarted":
        assert (a.code, r["restarted"]) == (KILLED, True)
        assert cell(kernel, "'kept' in globals()")[1]["value"] == "False"
    else:
        assert r["error"]["name"] == "KeyboardInterrupt"
        assert cell(kernel, "kept")[1]["value"] == "1"


KERNEL_ESCAPE = ("import subprocess\n"
                 "subprocess.Popen(['sleep', '401.1'], start_new_session=True)\n"
                 "subprocess.Popen(['bash', '-c', '(setsid sleep 401.2 >/dev/null 2>&1 &)'])\n")


def test_kernel_interrupt_takes_what_the_cell_started(kernel):
    # Out of the kernel's group, which gets the interrupt's SIGINT.
    a, r = cell(kernel, "import subprocess\nbg = subprocess.Popen(['sleep', '401.3'], start_new_session=True)")
    assert r["error"] is None, r
    try:
        tag = kernel.cell(KERNEL_ESCAPE + "import time\nwhile True: time.sleep(0.01)")
        deadline = time.monotonic() + 10
        while len(sleeping("401.1", "401.2")) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(sleeping("401.1", "401.2")) == 2
        kernel.interrupt(tag)
        a = kernel.answer(tag, timeout=10)
        assert result(a)["error"]["name"] == "KeyboardInterrupt"
        assert sleeping("401.1", "401.2") == {}
        assert "401.3" in sleeping("401.3")  # an earlier cell's
        a, r = cell(kernel, "bg.poll() is None")
        assert r["value"] == "True", r
    finally:
        for pid in sleeping("401.3").values():
            os.kill(pid, 9)


def test_kernel_restart_takes_what_the_cell_started(kernel):
    tag = kernel.cell(KERNEL_ESCAPE + "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                      "while True: pass")
    deadline = time.monotonic() + 10
    while len(sleeping("401.1", "401.2")) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(sleeping("401.1", "401.2")) == 2
    kernel.interrupt(tag)
    a = kernel.answer(tag, timeout=10)
    assert result(a)["restarted"] is True
    assert sleeping("401.1", "401.2") == {}
    a, r = cell(kernel, "1 + 1")  # the new kernel is there
    assert r["value"] == "2", r


def test_kernel_restarted_when_sigint_ignored(kernel):
    cell(kernel, "old = 1")
    a, r, took = interrupted(kernel, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                             "print('ignoring', flush=True)\nwhile True: pass")
    assert 0.9 < took < 5
    assert a.out == b"ignoring\n"
    assert (a.code, r["error"]["name"], r["restarted"]) == (KILLED, "KernelRestarted", True)
    a, r = cell(kernel, "'old' in globals()")
    assert (a.code, r["value"]) == (0, "False")


def test_kernel_died(kernel):
    cell(kernel, "old = 1")
    a, r = cell(kernel, "import os\nprint('bye', flush=True)\nos._exit(3)")
    assert (a.code, a.out, r["error"]["name"], r["restarted"]) == (3, b"bye\n", "KernelDied", True)
    assert "exit 3" in r["error"]["value"]
    a, r = cell(kernel, "'old' in globals()")
    assert r["value"] == "False"
    a, r = cell(kernel, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    assert (a.code, r["error"]["name"]) == (KILLED, "KernelDied") and "signal 9" in r["error"]["value"]
    assert cell(kernel, "2 + 2")[1]["value"] == "4"


def test_kernel_dies_between_cells(kernel):
    cell(kernel, "import os, subprocess\nsubprocess.Popen(['sh', '-c', 'sleep 0.3; kill -9 %d' % os.getpid()])")
    time.sleep(1.5)
    a, r = cell(kernel, "'os' in globals()")
    assert (a.code, r["value"]) == (0, "False")


def test_kernel_new_cell_replaces_running_one(kernel):
    old = kernel.cell("print('old', flush=True)\nimport time\ntime.sleep(100)")
    time.sleep(0.5)
    a, r = cell(kernel, "40 + 2")
    assert r["value"] == "42"
    assert old not in kernel.answers or kernel.answers[old].code is None


def test_kernel_output_between_cells_dropped(kernel):
    cell(kernel, "import subprocess\nsubprocess.Popen(['sh', '-c', 'sleep 0.3; echo late; echo late >&2'])")
    time.sleep(1.5)
    a, r = cell(kernel, "print('now')")
    assert (a.out, a.err) == (b"now\n", b"")


def test_kernel_magics(kernel):
    a, r = cell(kernel, "x = 5\n!echo hello 'two words'\nprint(x)\nx + 1")
    assert (a.out, r["value"]) == (b"hello two words\n5\n", "6")
    a, r = cell(kernel, "%pip --version")
    assert a.out.startswith(b"pip ") or b"No module named pip" in a.err, (a.out, a.err)
    a, r = cell(kernel, "!cat")  # a command's stdin is not the kernel's
    assert (a.code, a.out) == (0, b"")


def test_kernel_run_in_a_kernel_session(kernel):
    a = kernel.do("run", ["sh", "-c", "echo shell"])
    assert (a.code, a.out) == (0, b"shell\n")
    a, r = cell(kernel, "open('f', 'w').write('made')\nimport os; sorted(os.listdir('.'))")
    assert r["value"] == "['f']"
    assert kernel.do("get", "f").data == b"made"


def test_kernel_sees_workspace_files_as_modules(kernel):
    kernel.do("put", "helper.py", b"VALUE = 7\n")
    assert cell(kernel, "import helper\nhelper.VALUE")[1]["value"] == "7"


FAKE_PYPLOT = b"""
figures = {}
class Figure:
    def __init__(self, num):
        self.num = num
    def savefig(self, out, format):
        assert format == "png"
        out.write(b"\\x89PNG fake %d" % self.num)
def figure(num=None):
    num = num if num is not None else max(figures, default=0) + 1
    return figures.setdefault(num, Figure(num))
def get_fignums():
    return sorted(figures)
def close(which):
    assert which == "all"
    figures.clear()
"""


def test_kernel_figures(kernel):
    """The kernel's side of figures, with a stand-in for matplotlib.pyplot
    (the sandbox's python image has none): at most 8 per cell, then closed."""
    kernel.do("put", "matplotlib/__init__.py", b"")
    kernel.do("put", "matplotlib/pyplot.py", FAKE_PYPLOT)
    a, r = cell(kernel, "import os\nos.environ['MPLBACKEND']")
    assert (r["value"], r["images"]) == ("'Agg'", [])  # set at start, not imported by the kernel
    a, r = cell(kernel, "import matplotlib.pyplot as plt\nfor i in range(10):\n    plt.figure()\n")
    assert a.code == 0, r
    assert [base64.b64decode(i["data"]) for i in r["images"]] == [b"\x89PNG fake %d" % i for i in range(1, 9)]
    assert all(i["type"] == "image/png" for i in r["images"])
    a, r = cell(kernel, "plt.get_fignums()")
    assert (r["value"], r["images"]) == ("[]", [])


def test_kernel_large_output(kernel):
    a, r = cell(kernel, "print('x' * 300000)\nimport sys\nsys.stderr.write('y' * 100000)\nNone")
    assert a.out == b"x" * 300000 + b"\n" and a.err == b"y" * 100000
    assert all(n <= 65536 for kind, n in a.frames if kind != "end")  # the result is one frame
    # The outputs keep what Python printed, bounded.
    [out] = r["outputs"]  # the budget is the cell's: stdout took it all
    assert (out["output_type"], out["name"], out["text"]) == ("stream", "stdout", "x" * 65536)
    assert r["value"] is None


def test_kernel_outputs_like_a_notebook(kernel):
    """display(), rich MIME bundles, and print in order with them, as a
    notebook's cell outputs (nbformat 4)."""
    a, r = cell(kernel, "class T:\n"
                        "    def _repr_html_(self): return '<b>t</b>'\n"
                        "    def _repr_markdown_(self): return None\n"
                        "    def _repr_json_(self): return {'k': [1, 2]}\n"
                        "    def __repr__(self): return 'T()'\n"
                        "print('before')\ndisplay(T(), 3)\nprint('after')\nT()")
    assert (a.code, a.out, r["value"]) == (0, b"before\nafter\n", "T()"), r
    assert r["outputs"] == [
        {"output_type": "stream", "name": "stdout", "text": "before\n"},
        {"output_type": "display_data", "metadata": {},
         "data": {"text/html": "<b>t</b>", "application/json": {"k": [1, 2]}, "text/plain": "T()"}},
        {"output_type": "display_data", "metadata": {}, "data": {"text/plain": "3"}},
        {"output_type": "stream", "name": "stdout", "text": "after\n"},
        {"output_type": "execute_result", "metadata": {},
         "data": {"text/html": "<b>t</b>", "application/json": {"k": [1, 2]}, "text/plain": "T()"}},
    ], r["outputs"]
    # IPython.display's objects, without IPython; bytes as base64.
    a, r = cell(kernel, "from IPython.display import display, HTML, Markdown, Image, SVG, Latex, JSON\n"
                        "import IPython\n"
                        "display(HTML('<i>h</i>'), Markdown('# m'), Image(data=b'\\x89PNG', format='png'),\n"
                        "        SVG('<svg/>'), Latex('$x$'), JSON({'a': 1}))\nIPython.get_ipython()")
    assert a.code == 0 and r["value"] is None, r
    assert [o["data"] for o in r["outputs"]] == [
        {"text/html": "<i>h</i>", "text/plain": "<HTML object>"},
        {"text/markdown": "# m", "text/plain": "<Markdown object>"},
        {"image/png": "iVBORw==", "text/plain": "<Image object>"},
        {"image/svg+xml": "<svg/>", "text/plain": "<SVG object>"},
        {"text/latex": "$x$", "text/plain": "<Latex object>"},
        {"application/json": {"a": 1}, "text/plain": "<JSON object>"}], r["outputs"]
    # Nothing of it in the user's names; a proxy that answers every
    # attribute is shown by its repr only; a failing _repr_html_ is skipped.
    a, r = cell(kernel, "class P:\n    def __getattr__(self, n): return lambda *a, **k: 'x'\n"
                        "    def __repr__(self): return 'P()'\n"
                        "class F:\n    def _repr_html_(self): raise ValueError\n"
                        "    def _repr_mimebundle_(self): raise RuntimeError\n    def __repr__(self): return 'F()'\n"
                        "display(P(), F())\nsorted(k for k in globals() if not k.startswith('__'))")
    assert [o["data"] for o in r["outputs"][:2]] == [{"text/plain": "P()"}, {"text/plain": "F()"}], r
    assert eval(r["value"]) == ["F", "HTML", "IPython", "Image", "JSON", "Latex", "Markdown", "P", "SVG", "T", "_",
                                "display"], r  # display: the one imported by the cell before


def test_kernel_top_level_await(kernel):
    a, r = cell(kernel, "import asyncio\nasync def f(x):\n    await asyncio.sleep(0.01)\n    return x * 2\n"
                        "y = await f(20)\nawait f(y) + 1")
    assert (a.code, r["value"]) == (0, "81"), r
    # What a cell starts on the loop goes on in the next.
    a, r = cell(kernel, "task = asyncio.ensure_future(f(5))\nawait asyncio.sleep(0.05)\ntask.done()")
    assert r["value"] == "True", r
    a, r = cell(kernel, "async def g():\n    raise KeyError('k')\nawait g()")
    e = r["error"]
    assert a.code == 1 and e["name"] == "KeyError", r
    assert "<cell-3>" in e["traceback"] and "asyncio" not in e["traceback"], e["traceback"]
    a, r = cell(kernel, "asyncio.run(f(1))")  # no loop runs between awaits: asyncio.run works
    assert r["value"] == "2", r


def test_kernel_matplotlib(kernel):
    a, r = cell(kernel, "import importlib.util\nimportlib.util.find_spec('matplotlib') is not None")
    if r["value"] != "True":
        pytest.fail("no matplotlib on this host: deploy/setup.sh installs python3-matplotlib")
    a, r = cell(kernel, "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.figure()\nplt.plot([3, 1])\nNone",
                timeout=60)
    assert a.code == 0, r
    assert len(r["images"]) == 2 and r["images"][0]["type"] == "image/png"
    assert base64.b64decode(r["images"][0]["data"]).startswith(b"\x89PNG")
    a, r = cell(kernel, "1")
    assert r["images"] == []


def test_kernel_sigint_between_cells(kernel):
    """A SIGINT that comes while the kernel waits for a cell does not hurt
    it; nor does a late int (its cell ended meanwhile)."""
    tag = kernel.cell("1")
    kernel.answer(tag)
    kernel.interrupt(tag)
    a, r = cell(kernel, "import os, subprocess\nsubprocess.Popen(['sh', '-c', 'sleep 0.3; kill -INT -%d' % os.getpgid(0)])\nos.getpid()")
    pid = r["value"]
    time.sleep(1.5)
    a, r = cell(kernel, "os.getpid()")
    assert (a.code, r["value"], r["restarted"]) == (0, pid, False)


# --- background commands (agent_cmds.h) ----------------------------------------

def wait_ended(a, cid, timeout=10):
    """bgout until the command has ended: its last answer, parsed."""
    deadline = time.monotonic() + timeout
    while True:
        got = parse_output(a.do("bgout", cid).payload)
        if not got[0] or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def started(a, argv, **kw):
    tag = a.bg(argv, **kw)
    ans = a.answer(tag)
    assert (ans.code, ans.payload) == (0, b""), ans.payload
    return tag


def test_a_command_answers_at_once_and_keeps_its_output(shell):
    t0 = time.monotonic()
    cid = started(shell, ["sh", "-c", "echo out; echo err >&2; sleep 0.5; echo more; exit 3"])
    assert time.monotonic() - t0 < 0.4  # not held until it ends
    running, code, out, err = parse_output(shell.do("bgout", cid).payload)
    assert running and code == -1
    running, code, out, err = wait_ended(shell, cid)
    assert (running, code) == (False, 3)
    assert out == (0, b"out\nmore\n", 9) and err == (0, b"err\n", 4)
    # From an offset on, and at most so many bytes.
    assert parse_output(shell.do("bgout", cid, 4, 4).payload)[2:] == ((4, b"more\n", 9), (4, b"", 4))
    assert parse_output(shell.do("bgout", cid, 0, 0, 3).payload)[2] == (0, b"out", 9)
    assert parse_output(shell.do("bgout", cid, 99, 0).payload)[2] == (9, b"", 9)


def test_a_command_runs_in_the_workspace_and_outlives_steps(shell):
    cid = started(shell, ["sh", "-c", "pwd; sleep 2; echo still"])
    assert shell.do("run", ["echo", "a step"]).out == b"a step\n"
    tag = shell.run(["sleep", "30"])  # a step that is stopped takes its own processes only
    time.sleep(0.2)
    shell.interrupt(tag)
    assert shell.answer(tag).code == KILLED
    running, code, out, _ = wait_ended(shell, cid)
    assert (running, code) == (False, 0)
    assert out[1] == os.path.realpath(shell.workspace).encode() + b"\nstill\n", out


def test_a_command_stdin_given_or_written(shell):
    cid = started(shell, ["cat"], stdin=b"given\x00bytes")
    assert wait_ended(shell, cid)[2][1] == b"given\x00bytes"
    ans = shell.do("bgin", cid, b"more")
    assert ans.code == errno.EPIPE, ans.payload  # a given stdin is closed
    cid = started(shell, ["cat"], open_stdin=True)
    ans = shell.do("bgin", cid, b"hello ")
    assert (ans.code, ans.payload) == (0, b"6")
    assert shell.do("bgin", cid, b"world").payload == b"5"
    assert parse_output(shell.do("bgout", cid).payload)[0]  # cat waits for more
    assert shell.do("bgin", cid, b"").code == 0  # end of its stdin
    running, code, out, _ = wait_ended(shell, cid)
    assert (running, code, out[1]) == (False, 0, b"hello world")


def test_a_full_stdin_pipe_never_blocks_the_agent(shell):
    cid = started(shell, ["sleep", "30"], open_stdin=True)
    written = 0
    for _ in range(4):  # more than a pipe holds: short writes, then none
        ans = shell.do("bgin", cid, b"x" * 65536)
        assert ans.code == 0
        written += int(ans.payload)
    assert 0 < written < 4 * 65536
    assert shell.do("run", ["echo", "alive"]).out == b"alive\n"
    assert shell.do("bgdel", cid).code == 0


def test_a_command_is_signalled_and_deleted(shell):
    cid = started(shell, ["sh", "-c", "trap 'echo bye; exit 7' TERM; echo up; while :; do sleep 0.1; done"])
    deadline = time.monotonic() + 5
    while parse_output(shell.do("bgout", cid).payload)[2][1] != b"up\n" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert shell.do("bgkill", cid, 15).code == 0
    running, code, out, _ = wait_ended(shell, cid)
    assert (running, code, out[1]) == (False, 7, b"up\nbye\n")
    cid2 = started(shell, ["sleep", "60"])
    assert shell.do("bgkill", cid2, 9).code == 0
    assert wait_ended(shell, cid2)[:2] == (False, KILLED)
    # Deleted: killed if it runs, and forgotten.
    cid3 = started(shell, ["sh", "-c", "echo $$; exec sleep 60"])
    deadline = time.monotonic() + 5
    while not parse_output(shell.do("bgout", cid3).payload)[2][1] and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(parse_output(shell.do("bgout", cid3).payload)[2][1])
    assert set(parse_commands(shell.do("bglist").payload)) == {cid, cid2, cid3}
    assert shell.do("bgdel", cid3).code == 0
    assert set(parse_commands(shell.do("bglist").payload)) == {cid, cid2}
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        shell.do("run", ["true"])  # the agent reaps it as it goes
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}")
    for gone in (cid3, "0123456789abcdef"):
        for req in (("bgout", gone), ("bgin", gone, b"x"), ("bgkill", gone, 15), ("bgdel", gone)):
            assert shell.do(*req).code == errno.ESRCH, req


def test_commands_are_listed_with_their_args(shell):
    cid = started(shell, ["sh", "-c", "printf 'a\\nb'; exit 2", "name with spaces", ""])
    wait_ended(shell, cid)
    listed = parse_commands(shell.do("bglist").payload)
    assert listed == {cid: (False, 2, 3, 0, ["sh", "-c", "printf 'a\\nb'; exit 2", "name with spaces", ""])}


def test_a_command_keeps_the_last_mib_of_its_output(shell):
    cid = started(shell, ["head", "-c", "3000000", "/dev/zero"])
    running, code, out, err = wait_ended(shell, cid)
    assert (running, code, out[2]) == (False, 0, 3000000)
    assert out[0] == 3000000 - (1 << 20) and len(out[1]) == 1 << 20  # the first bytes are gone
    assert parse_output(shell.do("bgout", cid, 5, 0, 10).payload)[2] == (3000000 - (1 << 20), b"\0" * 10, 3000000)


def test_a_command_that_writes_without_end_never_holds_the_agent(shell):
    cid = started(shell, ["yes", "spam"])
    totals = []
    for _ in range(5):  # each answered in time (do() waits 10 s at most), while it still writes
        running, _, out, _ = parse_output(shell.do("bgout", cid, 0, 0, 16).payload)
        assert running
        totals.append(out[2])
        time.sleep(0.1)
    assert totals[-1] > 0, totals
    assert shell.do("run", ["echo", "alive"]).out == b"alive\n"
    assert shell.do("bgdel", cid).code == 0


def test_at_most_16_commands_are_kept(shell):
    ids = [started(shell, ["true"]) for _ in range(16)]
    ans = shell.do("bg", ["true"])
    assert ans.code == errno.EBUSY and b"16 commands" in ans.payload, ans.payload
    assert shell.do("bgdel", ids[0]).code == 0
    started(shell, ["true"])


def test_a_missing_program_ends_at_once(shell):
    cid = started(shell, ["no-such-program-here"])
    running, code, _, err = wait_ended(shell, cid)
    assert (running, code) == (False, 127) and b"cannot run no-such-program-here" in err[1]


@pytest.mark.parametrize("garbage", [b"bg TAG 0 0 0\n", b"bg TAG 1 3 1\n1\nx", b"bgout TAG xyz 0 0 1\n",
                                     b"bgin TAG 0123456789abcdef 70000\n", b"bgkill TAG 0123456789abcdef 65\n"])
def test_a_broken_command_request_ends_the_agent(agent_dir, garbage):
    a = start(agent_dir, "shell")
    try:
        a.send(garbage.replace(b"TAG", b"0123456789abcdef"))
        a.proc.wait(timeout=10)
        assert a.proc.returncode == 2
    finally:
        a.close()
        shutil.rmtree(a.workspace, ignore_errors=True)



# --- the reporter: `isobox-agent reap` (sandbox/agent/agent_reap.c) --------

def reap(agent_dir, nonce, script, pass_fds=(), **kw):
    """Runs `isobox-agent reap NONCE sh -c SCRIPT`: (exit code, stdout, stderr)."""
    import subprocess
    done = subprocess.run([os.path.join(agent_dir, "isobox-agent"), "reap", nonce, "sh", "-c", script],
                          capture_output=True, timeout=20, pass_fds=pass_fds, **kw)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("script,end,code", [
    ("exit 0", 0, 0), ("exit 3", 3, 3), ("exit 139", 139, 139), ("exit 137", 137, 137),
    ("kill -SEGV $$", SIGNALLED + 11, 139), ("kill -KILL $$", KILLED, 137), ("kill -ABRT $$", SIGNALLED + 6, 134),
])
def test_the_reporter_tells_a_signal_from_an_exit(agent_dir, script, end, code):
    rc, out, err = reap(agent_dir, "ab12", "echo out; echo err >&2; " + script)
    assert (rc, out, err) == (code, b"out\n\036ab12\n", b"err\n\036ab12 %d\n" % end)


def test_the_reporter_takes_a_warm_agents_nonce_from_fd_3(agent_dir):
    """NONCE "-": the child writes the nonce on its fd 3 and closes it, and
    the program it runs then holds no such fd."""
    rc, out, err = reap(agent_dir, "-", "echo 00ff >&3; exec 3>&-; [ -e /proc/$$/fd/3 ] || echo none; kill -TERM $$")
    assert (rc, out, err) == (143, b"none\n\03600ff\n", b"\03600ff %d\n" % (SIGNALLED + 15))
    # An agent that ends without a nonce (its idle time ran out): no marks.
    assert reap(agent_dir, "-", "exit 0") == (0, b"", b"")
    # A nonce that is not hex is no nonce.
    assert reap(agent_dir, "-", "echo 'x y' >&3; exit 5") == (5, b"", b"")
    assert reap(agent_dir, "nothex!", "exit 6") == (6, b"", b"")


def test_the_reporter_writes_a_compiles_end_to_a_file(agent_dir):
    """NONCE "=FD": the end status on FD, which the compile does not hold."""
    with tempfile.TemporaryFile() as f:
        fd = f.fileno()
        rc, out, err = reap(agent_dir, "=%d" % fd, "[ -e /proc/$$/fd/%d ] || echo none; kill -SEGV $$" % fd,
                            pass_fds=(fd,))
        f.seek(0)
        assert (rc, out, err, f.read()) == (139, b"none\n", b"", b"%d\n" % (SIGNALLED + 11))


def test_the_reporter_passes_a_stop_on_and_reaps_orphans(agent_dir):
    """SIGTERM to the reporter (docker stop's) is the program's; an orphan's
    end does not pass for the program's."""
    import subprocess
    p = subprocess.Popen([os.path.join(agent_dir, "isobox-agent"), "reap", "ab12", "sh", "-c",
                          "(sleep 0.1; exit 9) & trap 'echo term; exit 4' TERM; echo up; while :; do sleep 0.05; done"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout.readline() == b"up\n"
    time.sleep(0.4)
    p.terminate()
    out, err = p.communicate(timeout=10)
    assert (p.returncode, out, err) == (4, b"term\n\036ab12\n", b"\036ab12 4\n")
