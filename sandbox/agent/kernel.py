# kernel.py: the live Python interpreter of a kernel session.
#
# The session's agent (agent.c) starts it in the workspace and hands it
# cells, one at a time, on fd 0:
#
#   "CODELEN STDINLEN" LF, then CODE, then STDIN
#
# It runs each cell in one namespace that lives as long as it does, as
# IPython would: the value of a last expression is the cell's value, a line
# "!cmd args" runs a command, "%pip args" runs pip, a top-level `await`
# runs on the kernel's event loop, and display() shows objects as their
# MIME bundles (text/plain and whatever _repr_html_, _repr_png_... give;
# IPython.display's HTML, Markdown, Image... where IPython is not
# installed). The cell's output goes to fds 1 and 2 (the agent relays
# them); its result goes to fd 3 as
#
#   "CODE JSONLEN" LF, then {"value", "error", "images", "outputs", "restarted"}
#
# "outputs" is the cell's outputs as a notebook keeps them (nbformat 4):
# what Python printed ("stream"), displays ("display_data") and the last
# value ("execute_result"), in order.
#
# First, as the cell begins (its SIGINT handler set: main), the line
#
#   "start 0" LF
#
# after which, not before, the agent may interrupt the cell: a kernel still
# starting would die of a SIGINT, or drop it between cells. Then each
# display and the last value, as they happen, as
#
#   "disp JSONLEN" LF, then one of those outputs
#
# once its stdout and stderr are flushed and the agent has read them (so
# that it relays them in the order the cell made them); the session's
# stream shows them live.
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
MAX_TEXT = 64 * 1024  # a value, an error's value, a traceback; a cell's printed text in outputs
MAX_IMAGES = 8
MAX_IMAGE_BYTES = 16 << 20  # base64, all images of a cell together
MAX_OUTPUTS = 64  # displays of a cell
MAX_DISPLAY_BYTES = 16 << 20  # all the displays of a cell together
CO_COROUTINE = 0x80  # inspect.CO_COROUTINE: code with a top-level await

results_fd = None  # where results and displays go (main)
running = False  # a cell runs: SIGINT becomes KeyboardInterrupt
loop = None  # the event loop of top-level awaits, made at the first


class Outputs:
    """The running cell's outputs, in order, bounded."""

    def __init__(self):
        self.reset()

    def reset(self):
        """For the next cell: nothing yet."""
        self.items, self.text, self.size, self.dropped = [], 0, 0, False

    def stream(self, name, text):
        if self.text >= MAX_TEXT or not text:
            return
        text = text[:MAX_TEXT - self.text]
        self.text += len(text)
        last = self.items[-1] if self.items else None
        if last and last["output_type"] == "stream" and last["name"] == name:
            last["text"] += text
        else:
            self.items.append({"output_type": "stream", "name": name, "text": text})

    def add(self, kind, data):
        size = sum(len(v) if isinstance(v, str) else len(json.dumps(v)) for v in data.values())
        if len(self.items) >= MAX_OUTPUTS or self.size + size > MAX_DISPLAY_BYTES:
            if not self.dropped:
                print("kernel: displays past %d or %d bytes were left out" % (MAX_OUTPUTS, MAX_DISPLAY_BYTES),
                      file=sys.__stderr__)
            self.dropped = True
            return
        self.size += size
        item = {"output_type": kind, "data": data, "metadata": {}}
        self.items.append(item)
        if results_fd is not None:
            flush_output()
            relayed()
            body = json.dumps(item, ensure_ascii=True).encode("ascii")
            # Whole or not at all: an interrupt (KeyboardInterrupt) in the
            # middle would leave the agent half a record.
            held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                write_all(results_fd, b"disp %d\n" % len(body) + body)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)


outputs = Outputs()


class Tee:
    """sys.stdout or sys.stderr: writes go to the fd as before and are kept
    in the cell's outputs too (what a subprocess writes goes to the fd only)."""

    def __init__(self, inner, name):
        self._inner, self._name = inner, name

    def write(self, text):
        n = self._inner.write(text)
        if isinstance(text, str):
            outputs.stream(self._name, text)
        return n

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self._inner, name)


# What display() asks an object for, as IPython's formatters do.
REPR_METHODS = (("text/html", "_repr_html_"), ("text/markdown", "_repr_markdown_"),
                ("image/svg+xml", "_repr_svg_"), ("image/png", "_repr_png_"), ("image/jpeg", "_repr_jpeg_"),
                ("application/json", "_repr_json_"), ("text/latex", "_repr_latex_"))


def mime_bundle(obj):
    """obj as {mime: content}: text/plain always; images base64."""
    data = {}
    # An object that answers every attribute (a proxy, a mock) is not asked.
    if getattr(obj, "_ipython_canary_method_should_not_exist_", None) is None and not isinstance(obj, type):
        asked = getattr(obj, "_repr_mimebundle_", None)
        if callable(asked):
            try:
                try:
                    got = asked(include=None, exclude=None)
                except TypeError:  # an older signature, without the arguments
                    got = asked()
            except Exception:
                got = None
            if isinstance(got, tuple):
                got = got[0]
            if isinstance(got, dict):
                data.update((k, v) for k, v in got.items() if isinstance(k, str))
        for mime, name in REPR_METHODS:
            method = getattr(obj, name, None)
            if mime in data or not callable(method):
                continue
            try:
                got = method()
            except Exception:
                continue
            if isinstance(got, tuple):
                got = got[0]
            if got is not None:
                data[mime] = got
        if "image/png" not in data and type(obj).__module__.startswith("matplotlib.figure"):
            buf = io.BytesIO()
            try:
                obj.savefig(buf, format="png")
                data["image/png"] = buf.getvalue()
            except Exception:
                pass
    if "text/plain" not in data:
        try:
            data["text/plain"] = repr(obj)
        except Exception:
            data["text/plain"] = "<unprintable %s>" % type(obj).__name__
    out = {}
    for mime, value in data.items():
        if isinstance(value, (bytes, bytearray)):
            import base64

            value = base64.b64encode(value).decode("ascii")
        elif mime == "application/json":
            try:
                json.dumps(value)
            except (TypeError, ValueError):
                continue
        elif not isinstance(value, str):
            continue
        out[mime] = capped(value) if mime == "text/plain" else value
    return out


def display(*objs, raw=False, **kwargs):
    """Shows each object in the cell's outputs; raw: each is a bundle."""
    for obj in objs:
        if raw and isinstance(obj, dict):
            outputs.add("display_data", {k: v for k, v in obj.items() if isinstance(k, str)})
        else:
            outputs.add("display_data", mime_bundle(obj))


class DisplayObject:
    """IPython.display's objects, for a kernel without IPython."""

    def __init__(self, data=None, url=None, filename=None, metadata=None, **kwargs):
        if filename is not None:
            with open(filename, "rb" if self._binary else "r") as f:
                data = f.read()
        self.data, self.url, self.metadata = data, url, metadata

    _binary = False

    def __repr__(self):
        return "<%s object>" % type(self).__name__


def shows(name, method):
    """A DisplayObject class whose data is its one MIME type."""
    return type(name, (DisplayObject,), {method: lambda self: self.data})


HTML, Markdown, Latex, SVG, JSON = (shows(n, m) for n, m in (
    ("HTML", "_repr_html_"), ("Markdown", "_repr_markdown_"), ("Latex", "_repr_latex_"),
    ("SVG", "_repr_svg_"), ("JSON", "_repr_json_")))


class Image(DisplayObject):
    _binary = True

    def __init__(self, data=None, url=None, filename=None, format=None, **kwargs):
        super().__init__(data, url, filename)
        name = (filename or "").lower()
        self.format = format or ("jpeg" if name.endswith((".jpg", ".jpeg")) else "png")

    def _repr_png_(self):
        return self.data if self.format == "png" else None

    def _repr_jpeg_(self):
        return self.data if self.format in ("jpeg", "jpg") else None


class ShimFinder:
    """Finds IPython and IPython.display, as our small stand-ins, for a cell
    that imports them where IPython is not installed. Only on import: until
    a cell imports them, a library that looks for IPython in sys.modules
    (matplotlib) finds none; after, get_ipython() says there is no shell."""

    names = ("IPython", "IPython.display")

    def find_spec(self, name, path=None, target=None):
        import importlib.machinery

        if name not in self.names:
            return None
        sys.meta_path.remove(self)  # is there a real one?
        try:
            real = importlib.machinery.PathFinder.find_spec(name.split(".")[0])
        finally:
            sys.meta_path.append(self)
        return None if real else importlib.machinery.ModuleSpec(name, self, is_package=name == "IPython")

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        if module.__name__ == "IPython":
            # What libraries ask an IPython they find in sys.modules: no
            # shell; and a version new enough that matplotlib (< 3.11)
            # leaves it alone instead of patching its GUI hooks.
            module.get_ipython = lambda: None
            module.version_info = (8, 24, 0, "isobox")
            return
        for name, value in (("display", display), ("DisplayObject", DisplayObject), ("HTML", HTML),
                            ("Markdown", Markdown), ("Latex", Latex), ("SVG", SVG), ("JSON", JSON),
                            ("Image", Image)):
            setattr(module, name, value)


def install_display():
    """display() for every cell, and IPython.display where IPython is not
    installed (a real IPython is left alone: its objects work with display
    through their _repr_*_ methods)."""
    import builtins

    builtins.display = display
    sys.meta_path.append(ShimFinder())


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


def run(code, ns):
    """eval code; with a top-level await, on the kernel's event loop (one
    for the kernel's life, so that what a cell starts goes on in the next)."""
    global loop
    if not code.co_flags & CO_COROUTINE:
        return eval(code, ns)
    if loop is None:
        import asyncio

        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
    return loop.run_until_complete(eval(code, ns))


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
            run(compile(module, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True), ns)
            pending.clear()

    for i, (_, item) in enumerate(items):
        if isinstance(item, str):
            flush()
            run_magic(item)
            see_new_packages()
        elif last_expr and i == len(items) - 1:
            flush()
            expr = ast.Expression(body=item.value)
            return run(compile(expr, filename, "eval", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True), ns)
        else:
            pending.append(item)
    flush()
    return None


def capped(text):
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "..."


def error_of(exc):
    # The cell's frames only: not the kernel's calls into it, nor on_sigint.
    # (and before the first cell frame, the event loop's: a top-level await).
    kept, tb = [], exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename != KERNEL_FILE:
            kept.append(tb)
        tb = tb.tb_next
    first = next((i for i, t in enumerate(kept) if t.tb_frame.f_code.co_filename.startswith("<cell-")), 0)
    kept = kept[first:]
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
            outputs.add("display_data", {"image/png": data, "text/plain": "<Figure %d>" % num})
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
    outputs.reset()
    value = error = None
    try:
        running = True  # first and last: a SIGINT raises only inside the try
        write_all(results_fd, b"start 0\n")  # the agent may interrupt from now on
        result = execute(source, filename, ns)
        running = False
        see_new_packages()  # a cell that ran pip itself (subprocess)
        if result is not None:
            ns["_"] = result
            value = capped(repr(result))
            outputs.add("execute_result", mime_bundle(result))
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the kernel goes on
        running = False
        error = error_of(exc)
    sys.stdin = io.StringIO()
    figures = images()
    return {"value": value, "error": error, "images": figures, "outputs": outputs.items, "restarted": False}


def relayed(fds=(1, 2), bound=1.0):
    """Waits (at most bound seconds) until the agent has read all that was
    printed: the display written next then comes after it, as the agent
    reads fd 3 before the output pipes."""
    import fcntl
    import termios
    import time
    end = time.monotonic() + bound
    for fd in fds:
        while time.monotonic() < end:
            try:
                left = int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), sys.byteorder)
            except OSError:
                break  # not a pipe
            if not left:
                break
            time.sleep(0.001)


def flush_output():
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass


def write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]


def write_result(fd, result):
    flush_output()
    body = json.dumps(result, ensure_ascii=True).encode("ascii")
    write_all(fd, b"%d %d\n" % (1 if result["error"] else 0, len(body)) + body)


def main():
    signal.signal(signal.SIGINT, on_sigint)
    os.environ["MPLBACKEND"] = "Agg"  # before any cell imports matplotlib
    # Its cache in /tmp, not in the workspace (HOME) the user lists.
    os.environ.setdefault("MPLCONFIGDIR", "/tmp/.matplotlib")
    # The cells and results move to private fds; fd 0 becomes /dev/null, so
    # that neither a cell nor a command it runs can read the next cell.
    global results_fd
    cells, results = os.dup(0), os.dup(3)
    results_fd = results
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.close(3)
    sys.stdout.reconfigure(line_buffering=True)
    sys.stderr.reconfigure(line_buffering=True)
    sys.stdout, sys.stderr = Tee(sys.stdout, "stdout"), Tee(sys.stderr, "stderr")
    install_display()
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
