"""Files in and out of a stateless run: "outputs" globs return the files a
run made (text as text, anything else base64), capped; input files may
come base64-encoded, NUL and all."""
import base64
import hashlib

from conftest import containers, execute, wait_until

MAKE = """import os
os.makedirs('plots/deep', exist_ok=True)
open('table.csv', 'w').write('x,y\\n1,2\\n')
open('notes.txt', 'w').write('not asked for')
open('plots/a.png', 'wb').write(bytes(range(256)) * 3)
open('plots/deep/b.png', 'wb').write(b'deeper')
print('made')
"""


def outputs_of(result):
    return {o["name"]: o for o in result["outputs"]}


def content(o):
    return base64.b64decode(o["content"]) if o["encoding"] == "base64" else o["content"].encode()


def test_globs_return_the_files_a_run_made():
    status, result = execute({"language": "python", "code": MAKE, "outputs": ["*.csv", "plots/*.png"]})
    assert status == 200 and result["run"]["stdout"] == "made\n", result
    got = outputs_of(result)
    assert sorted(got) == ["plots/a.png", "table.csv"], got.keys()  # '*' stops at '/'
    assert got["table.csv"] == {"name": "table.csv", "size": 8, "encoding": "utf-8", "content": "x,y\n1,2\n"}
    assert got["plots/a.png"]["encoding"] == "base64" and content(got["plots/a.png"]) == bytes(range(256)) * 3
    assert result["outputsTruncated"] is False
    assert wait_until(lambda: containers() == [], 10)


def test_no_outputs_field_without_outputs():
    status, result = execute({"language": "python", "code": "print(1)"})
    assert status == 200 and "outputs" not in result and "outputsTruncated" not in result


def test_binary_input_files_are_exact():
    data = bytes(range(256)) * 1000
    code = "import hashlib\nprint(hashlib.sha256(open('in.bin', 'rb').read()).hexdigest())"
    status, result = execute({"language": "python", "files": [
        {"name": "main.py", "content": code},
        {"name": "in.bin", "content": base64.b64encode(data).decode(), "encoding": "base64"}]})
    assert status == 200 and result["run"]["stdout"].strip() == hashlib.sha256(data).hexdigest(), result
    # In and out again, through outputs.
    status, result = execute({"language": "python", "outputs": ["in.bin"], "files": [
        {"name": "main.py", "content": "pass"},
        {"name": "in.bin", "content": base64.b64encode(data).decode(), "encoding": "base64"}]})
    assert content(outputs_of(result)["in.bin"]) == data


def test_caps_on_outputs():
    code = "for i in range(30):\n    open(f'f{i:02}.txt', 'w').write('x')"
    status, result = execute({"language": "python", "code": code, "outputs": ["*.txt"]})
    assert status == 200 and len(result["outputs"]) == 20 and result["outputsTruncated"] is True
    code = "open('big.bin', 'wb').write(b'\\0' * (5 * 2**20))\nopen('small.txt', 'w').write('s')"
    status, result = execute({"language": "python", "code": code, "outputs": ["*"]})
    assert [o["name"] for o in result["outputs"]] == ["main.py", "small.txt"] and result["outputsTruncated"]


def test_outputs_of_a_run_that_timed_out_or_failed():
    code = "open('partial.txt', 'w').write('so far')\nimport time\ntime.sleep(30)"
    status, result = execute({"language": "python", "code": code, "outputs": ["*.txt"],
                              "limits": {"wallTimeMs": 5000}})  # python's start, loaded, then the file
    assert status == 200 and result["run"]["timedOut"], result
    assert outputs_of(result)["partial.txt"]["content"] == "so far"
    status, result = execute({"language": "c", "code": "int main(void) { return }", "outputs": ["*"]})
    assert status == 200 and result["compile"]["exitCode"] != 0 and "run" not in result


def test_bad_outputs_are_clear_errors():
    for outputs, code in [(["../x"], "bad_file_name"), (["/etc/*"], "bad_file_name"), ("*.csv", "invalid_type"),
                          ([1], "invalid_type"), (["*"] * 17, "too_many")]:
        status, result = execute({"language": "python", "code": "1", "outputs": outputs})
        assert status == 400 and result["error"]["code"] == code, (outputs, result)
    for encoding, code in [("hex", "invalid_value"), (1, "invalid_type")]:
        status, result = execute({"language": "python", "files": [{"content": "1", "encoding": encoding}]})
        assert status == 400 and result["error"]["code"] == code, (encoding, result)
    status, result = execute({"language": "python", "files": [{"content": "!!!", "encoding": "base64"}]})
    assert status == 400 and result["error"]["code"] == "invalid_value"
