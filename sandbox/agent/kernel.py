# kernel.py: the live Python interpreter of a kernel session.
#
# The session's agent (agent.c) starts it in the workspace and hands it
# cells, one at a time, on fd 0:
#
#   "CODELEN STDINLEN" LF, then CODE, then STDIN
#
# It runs each cell in one namespace that lives as long as it does, as
# IPython would: the value of a last expression is the cell's value, a line
# "!cmd args" runs a command, "%pip args" runs pip. The cell's output goes to
# fds 1 and 2 (the agent relays them); its result goes to fd 3 as
#
#   "CODE JSONLEN" LF, then {"value", "error", "images", "restarted"}
#
# CODE 1 if the cell raised. SIGINT (the worker's interrupt) raises
# KeyboardInterrupt in the cell; between cells it is ignored. The kernel
# keeps its own names out of the user's namespace and its frames out of
# tracebacks. Start-up must be fast: nothing heavy is imported here
# (subprocess and base64 only when a cell needs them).
import ast
import io
import json
import linecache
import os
import signal
import sys
import traceback
import types

KERNEL_FILE = __file__
MAX_TEXT = 64 * 1024  # a value, an error's value, a traceback
MAX_IMAGES = 8
MAX_IMAGE_BYTES = 16 << 20  # base64, all images of a cell together

running = False  # a cell runs: SIGINT becomes KeyboardInterrupt


def on_sigint(signum, frame):
    if running:
        raise KeyboardInterrupt


def read_exact(fd, n):
    parts = []
    while n > 0:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            sys.exit(0)  # the agent is gone
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def read_cell(fd):
    line = b""
    while not line.endswith(b"\n"):
        if len(line) > 64:
            raise SystemExit("kernel: a bad cell header")
        line += read_exact(fd, 1)
    code_len, stdin_len = (int(x) for x in line.split())
    return read_exact(fd, code_len), read_exact(fd, stdin_len)


def split_magics(source):
    """The source with "!" and "%pip" lines blanked (line numbers stay), and
    those lines by number. Only lines at column 0 are commands."""
    lines = source.splitlines(True)
    magics = {}
    for i, line in enumerate(lines):
        text = line.rstrip("\r\n")
        if text.startswith("!") or text == "%pip" or text.startswith(("%pip ", "%pip\t")):
            magics[i + 1] = text
            lines[i] = "\n"
    return "".join(lines), magics


def run_magic(text):
    """"!cmd args" or "%pip args", split as a shell would; no shell runs."""
    import shlex
    import subprocess

    if text.startswith("!"):
        argv = shlex.split(text[1:])
    else:
        argv = [sys.executable, "-m", "pip", *shlex.split(text[4:])]
        if "install" in argv and not has_network():
            print("pip: this session has no network: create it with \"network\": true "
                  "to install packages", file=sys.stderr)
            return
    for f in (sys.stdout, sys.stderr):
        f.flush()
    try:
        if argv:
            subprocess.run(argv, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        print("%s: command not found" % argv[0], file=sys.stderr)


def has_network():
    """Has the sandbox an interface besides loopback ("network": true)?"""
    import socket

    return any(name != "lo" for _, name in socket.if_nameindex())


def see_new_packages():
    """Packages installed into the user site (pip install --user: HOME is
    /workspace) since the kernel started: importable from the next line on."""
    import importlib
    import site

    user_site = site.getusersitepackages()
    if os.path.isdir(user_site) and user_site not in sys.path:
        site.addsitedir(user_site)
    importlib.invalidate_caches()


def execute(source, filename, ns):
    """Runs the cell; returns the value of its last expression (or None)."""
    code, magics = split_magics(source)
    try:
        tree = ast.parse(code, filename, "exec")
    except SyntaxError as exc:
        raise exc.with_traceback(None)  # not ast.py's frames: the cell's error
    # Statements and commands, in the order of their lines.
    items = [(s.lineno, s) for s in tree.body] + sorted(magics.items())
    items.sort(key=lambda item: item[0])
    last_expr = bool(items) and isinstance(items[-1][1], ast.Expr)
    pending = []

    def flush():
        if pending:
            module = ast.Module(body=pending[:], type_ignores=[])
            exec(compile(module, filename, "exec", dont_inherit=True), ns)
            pending.clear()

    for i, (_, item) in enumerate(items):
        if isinstance(item, str):
            flush()
            run_magic(item)
            see_new_packages()
        elif last_expr and i == len(items) - 1:
            flush()
            expr = ast.Expression(body=item.value)
            return eval(compile(expr, filename, "eval", dont_inherit=True), ns)
        else:
            pending.append(item)
    flush()
    return None


def capped(text):
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "..."


def error_of(exc):
    # The cell's frames only: not the kernel's calls into it, nor on_sigint.
    kept, tb = [], exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename != KERNEL_FILE:
            kept.append(tb)
        tb = tb.tb_next
    for outer, inner in zip(kept, kept[1:] + [None]):
        outer.tb_next = inner
    tb = kept[0] if kept else None
    try:
        value = str(exc)
    except Exception:
        value = "<unprintable %s>" % type(exc).__name__
    text = "".join(traceback.format_exception(type(exc), exc, tb))
    return {"name": type(exc).__name__, "value": capped(value), "traceback": capped(text)}


def images():
    """Every open matplotlib figure as PNG, if the cells use matplotlib."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    import base64

    out, total = [], 0
    try:
        for num in plt.get_fignums()[:MAX_IMAGES]:
            buf = io.BytesIO()
            plt.figure(num).savefig(buf, format="png")
            data = base64.b64encode(buf.getvalue()).decode("ascii")
            total += len(data)
            if total > MAX_IMAGE_BYTES:
                print("kernel: figures over %d bytes were left out" % MAX_IMAGE_BYTES, file=sys.stderr)
                break
            out.append({"type": "image/png", "data": data})
    except Exception as exc:
        print("kernel: cannot save a figure: %r" % exc, file=sys.stderr)
    finally:
        plt.close("all")
    return out


def run_cell(number, code, stdin, ns):
    global running
    filename = "<cell-%d>" % number
    source = code.decode("utf-8", "replace")
    # mtime None: linecache.checkcache keeps it, so tracebacks show the lines.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8", errors="replace")
    value = error = None
    try:
        running = True  # first and last: a SIGINT raises only inside the try
        result = execute(source, filename, ns)
        running = False
        see_new_packages()  # a cell that ran pip itself (subprocess)
        if result is not None:
            ns["_"] = result
            value = capped(repr(result))
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the kernel goes on
        running = False
        error = error_of(exc)
    sys.stdin = io.StringIO()
    return {"value": value, "error": error, "images": images(), "restarted": False}


def write_result(fd, result):
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass
    body = json.dumps(result, ensure_ascii=True).encode("ascii")
    data = b"%d %d\n" % (1 if result["error"] else 0, len(body)) + body
    while data:
        data = data[os.write(fd, data):]


def main():
    signal.signal(signal.SIGINT, on_sigint)
    os.environ["MPLBACKEND"] = "Agg"  # before any cell imports matplotlib
    # Its cache in /tmp, not in the workspace (HOME) the user lists.
    os.environ.setdefault("MPLCONFIGDIR", "/tmp/.matplotlib")
    # The cells and results move to private fds; fd 0 becomes /dev/null, so
    # that neither a cell nor a command it runs can read the next cell.
    cells, results = os.dup(0), os.dup(3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.close(3)
    sys.stdout.reconfigure(line_buffering=True)
    sys.stderr.reconfigure(line_buffering=True)
    sys.argv = [""]
    sys.path[0] = ""  # the workspace, as in an interactive python
    main_module = types.ModuleType("__main__")
    main_module.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = main_module
    number = 0
    while True:
        code, stdin = read_cell(cells)
        number += 1
        write_result(results, run_cell(number, code, stdin, main_module.__dict__))


if __name__ == "__main__":
    main()
