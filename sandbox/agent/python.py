# python.py: the agent of a warm Python sandbox (sandbox/warm.c).
#
# It runs as the sandbox's first process, imports what the registry lists
# (argv: idle seconds, then module names), says "\036ready\n" on stderr and
# waits for one job on stdin. The job (warm_job_frame in sandbox/warm.c writes it):
#
#   <nonce>\n   of the end marks, handed to the reporter (below)
#   <files>\n   then for each file: <name bytes> <data bytes>\n<name><data>
#   <args>\n    then for each arg:  <bytes>\n<arg>
#
# and whatever follows on stdin is the program's stdin. The agent writes the
# files into /box, says "\036" on stderr (the program starts: decoder.h) and
# runs the entry file as __main__ in this interpreter, which has already
# paid for the imports. When the program is done, after everything that a
# cold interpreter runs at its exit, it exits with the program's status.
# The sandbox's first process, the reporter (sandbox/agent/agent_reap.c),
# then says so on both pipes with the job's nonce (decoder.h), so that the
# worker answers before the sandbox's teardown, and how: a program that
# dies by a signal takes this interpreter with it, and the reporter reads
# the signal from the wait status. It serves one job: the sandbox is never
# reused.
#
# A program must not tell this from `python3 main.py args` except by speed:
# sys.argv, sys.orig_argv, sys.path[0], __main__ (a fresh module), __file__,
# tracebacks (without the agent's frame), exit codes and stdin (the same
# pipe, read from where the job ends) are what the cold run gives.
#
# Every read is os.read on fd 0, never sys.stdin: a buffered reader would
# take the program's stdin too.
import os
import select
import sys


def read_exact(n):
    parts = []
    while n > 0:
        chunk = os.read(0, min(n, 1 << 20))
        if not chunk:
            os._exit(0)  # the worker went away before a whole job: nothing ran
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def read_line(limit=40):
    line = b""
    while not line.endswith(b"\n"):
        if len(line) > limit:
            os._exit(125)
        line += read_exact(1)
    return line[:-1]


def write_file(name, data):
    # Names were checked by the worker (relative, no "..", no leading "-"
    # or "@"); the box is empty and only this process writes it yet.
    parent = os.path.dirname(name)
    if parent:
        os.makedirs(parent, exist_ok=True)
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def wait_for_job(idle_seconds):
    # A warm sandbox nobody takes ends by itself, master or not.
    ready, _, _ = select.select([0], [], [], idle_seconds)
    if not ready:
        os._exit(0)


def take_job():
    nonce = read_line(64)
    files = []
    for _ in range(int(read_line())):
        name_len, data_len = (int(x) for x in read_line().split(b" "))
        name = os.fsdecode(read_exact(name_len))
        files.append((name, read_exact(data_len)))
    args = [os.fsdecode(read_exact(int(read_line()))) for _ in range(int(read_line()))]
    return nonce, files, args


def main():
    for module in sys.argv[2:]:
        __import__(module)
    import gc
    gc.collect()
    gc.freeze()  # the preloaded objects: no collection walks them again (the exit's either)
    os.write(2, b"\036ready\n")
    wait_for_job(float(sys.argv[1]))
    nonce, files, args = take_job()
    tell_reporter(nonce)
    for name, data in files:
        write_file(name, data)
    entry = files[0][0]
    path = os.path.join(os.getcwd(), entry)

    import types
    from importlib.machinery import SourceFileLoader
    main_module = types.ModuleType("__main__")
    main_module.__file__ = path
    main_module.__cached__ = None
    main_module.__annotations__ = {}
    main_module.__loader__ = SourceFileLoader("__main__", path)
    main_module.__builtins__ = __builtins__
    sys.modules["__main__"] = main_module
    sys.argv = [entry] + args
    sys.orig_argv = [sys.orig_argv[0], entry] + args
    sys.path[0] = os.path.dirname(path)

    os.write(2, b"\036")
    try:
        with open(path, "rb") as f:
            source = f.read()
        code = compile(source, path, "exec", dont_inherit=True)
        del files, args, source
        exec(code, main_module.__dict__)
        status = 0
    except SystemExit as e:
        status = exit_status(e.code)
    except BaseException:
        kind, value, tb = sys.exc_info()
        value.__traceback__ = tb.tb_next  # without the agent's frame
        del tb
        sys.excepthook(kind, value, value.__traceback__)
        status = 1
    finish(main_module, status)


def tell_reporter(nonce):
    """The reporter's way to the nonce: our fd 3, a pipe it made (anything
    else there is not ours to touch), closed before the program runs so
    that the program never holds it."""
    import stat
    try:
        if stat.S_ISFIFO(os.fstat(3).st_mode):
            os.write(3, nonce + b"\n")
            os.close(3)
    except OSError:
        pass


def exit_status(code):
    """What the interpreter makes of SystemExit(code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(str(code) + "\n")
    except Exception:
        pass
    return 1


def finish(main_module, status):
    """
    The interpreter's exit, in its order (threads, atexit, the program's
    objects, the std streams), without tearing down the modules imported
    ahead: that costs a warm sandbox tens of milliseconds and the program
    sees none of it. Then _exit, so that nothing runs twice; the reporter
    writes the end marks.
    """
    import atexit
    import gc
    import threading
    try:
        threading._shutdown()  # join the threads that are not daemons
    except BaseException:
        pass
    atexit._run_exitfuncs()
    main_module.__dict__.clear()  # __del__ of the program's globals, as at exit
    gc.collect()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            status = 120  # what python3 exits with when its stdout cannot be flushed
    os._exit(status)

main()
