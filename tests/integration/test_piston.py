"""The Piston-compatible API: Piston's request and response shapes."""
import base64

from conftest import request


def piston(body):
    status, _, got = request("POST", "/api/v2/execute", body)
    return status, got


def test_piston_execute_shape():
    status, got = piston({"language": "python", "version": "*",
                          "files": [{"name": "main.py", "content": "import sys\nprint(input())\nsys.exit(2)"}],
                          "stdin": "hello", "args": [], "run_timeout": 3000,
                          "compile_memory_limit": -1, "run_memory_limit": -1})
    assert status == 200, got
    assert got["language"] == "python" and got["version"].startswith("3.11")
    assert got["run"] == {"stdout": "hello\n", "stderr": "", "output": "hello\n", "code": 2, "signal": None}
    assert "compile" not in got


def test_piston_compiled_language_and_base64_files():
    src = base64.b64encode(b'#include <stdio.h>\nint main(void) { puts("b64"); return 0; }').decode()
    status, got = piston({"language": "c", "version": "12", "files": [{"content": src, "encoding": "base64"}]})
    assert status == 200, got
    assert got["compile"]["code"] == 0 and got["run"]["stdout"] == "b64\n"


def test_piston_compile_error_has_no_run():
    status, got = piston({"language": "c", "version": "*", "files": [{"content": "int main(void) { return x; }"}]})
    assert status == 200 and got["compile"]["code"] != 0 and "run" not in got
    assert "x" in got["compile"]["stderr"] and got["compile"]["output"] == got["compile"]["stderr"]


def test_piston_timeout_is_sigkill():
    status, got = piston({"language": "python", "version": "*", "files": [{"content": "while True: pass"}],
                          "run_timeout": 1000})
    assert status == 200 and got["run"]["signal"] == "SIGKILL" and got["run"]["code"] is None


def test_piston_runtimes_shape():
    status, _, got = request("GET", "/api/v2/runtimes")
    assert status == 200 and isinstance(got, list)
    py = [r for r in got if r["language"] == "python"][0]
    assert set(py) == {"language", "version", "aliases"} and "py" in py["aliases"]


def test_piston_errors_carry_message():
    status, got = piston({"language": "cobol", "version": "*", "files": [{"content": "x"}]})
    assert status == 400 and "unknown language" in got["message"]  # as Piston answers
    status, got = piston({"language": "python", "version": "*", "files": "nope"})
    assert status == 400 and got["error"]["code"] == "invalid_type"
    status, got = piston({"language": "python", "version": "*",
                          "files": [{"content": "1", "encoding": "hex"}]})
    assert status == 400 and "encoding" in got["message"]
