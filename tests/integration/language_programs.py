"""The test programs of the languages kept as files: programs/NAME/ holds

  contract/       a program that prints "hello", its stdin's line and its
                  args, data.txt's first line, twice(21) from its second
                  file, then "oops" on stderr, and exits 3 (test_languages:
                  what the programs in its PROGRAMS do); the entry first
  spaced.EXT      three lines a second apart, never flushed by hand
  loop.EXT        runs until the wall time stops it
  hog.EXT         takes memory until the limit stops it
  error.EXT       ends with an uncaught runtime error
  compile_error.EXT   compiled languages: fails to compile
  checks.json     what to look for: "error" (in the error's stderr),
                  "errorExit" or "errorSignal" when not a non-zero exit,
                  "compileError", "memoryError" (a runtime that stops itself
                  at its own ceiling says this instead of being killed),
                  "notSpaced" (why a language cannot space its lines) and
                  "contract" (what differs from the contract above: a
                  language without argv or files says so here)

A language whose entry registry.yaml adds is tested when its folder is
here: test_languages fails for one that has neither a folder nor programs
of its own in the test modules."""
import json
import os

from conftest import request

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
CONTRACT = {"stdin": "from stdin\n", "args": ["a b", "c"], "stdout": "hello\nfrom stdin a b c\nfirst line\n42\n",
            "stderr": "oops\n", "exitCode": 3}


def languages():
    return sorted(n for n in os.listdir(HERE) if os.path.isdir(os.path.join(HERE, n)))


def checks(language):
    with open(os.path.join(HERE, language, "checks.json")) as f:
        return json.load(f)


def contract(language):
    """(files, expected): the contract program's files, the entry first,
    and what its run should show."""
    d = os.path.join(HERE, language, "contract")
    names = sorted(os.listdir(d), key=lambda n: (not n.lower().startswith("main."), n))
    files = []
    for n in names:
        with open(os.path.join(d, n)) as f:
            files.append((n, f.read()))
    return files, dict(CONTRACT, **checks(language).get("contract", {}))


def program(language, kind):
    """The text of programs/LANGUAGE/KIND.*, or None."""
    d = os.path.join(HERE, language)
    for n in os.listdir(d):
        if n.startswith(kind + ".") and os.path.isfile(os.path.join(d, n)):
            with open(os.path.join(d, n)) as f:
                return f.read()
    return None


LANGUAGES = languages()
COMPILED = {n for n in LANGUAGES if program(n, "compile_error") is not None}
_RUNTIMES = {}


def runtimes():
    """GET /runtimes by language (the defaults), and Piston's by our names."""
    if not _RUNTIMES:
        status, _, body = request("GET", "/runtimes")
        assert status == 200, body
        _RUNTIMES["ours"] = {r["language"]: r for r in body["runtimes"] if r["default"]}
        status, _, body = request("GET", "/api/v2/runtimes")
        assert status == 200, body
        _RUNTIMES["piston"] = {name: r["language"] for r in body for name in [r["language"], *r["aliases"]]}
    return _RUNTIMES


def assert_runtime_error(language, code, signal, err):
    """A phase's exit code, signal and stderr, as checks.json says: a
    non-zero exit (or the one it names) and the error on stderr, or a signal."""
    want = checks(language)
    if "errorSignal" in want:
        assert signal == want["errorSignal"], (language, code, signal, err)
        return
    assert code == want.get("errorExit", code) and (code != 0 or "errorExit" in want), (language, code, err)
    assert want["error"] in err, (language, err)
