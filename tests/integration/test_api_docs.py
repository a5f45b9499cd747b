"""The API's own descriptions against the live service: docs/openapi.yaml
(linted, every example exchanged for real, every live answer validated
against its schema, every error code in the C sources listed), docs/llms.txt
and the curl examples of docs/API.md, and how the embedded files are served.
"""
import http.client
import json
import os
import re
import subprocess
from urllib.parse import urlparse

import jsonschema
import pytest
import yaml

import streaming
from conftest import PREFIX, URL

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC_PATH = os.path.join(ROOT, "docs", "openapi.yaml")
JS_DIR = os.path.join(ROOT, "tests", "integration", "js")
with open(SPEC_PATH, encoding="utf-8") as f:
    SPEC = yaml.safe_load(f)
VARYING = set(SPEC["info"]["x-varying"])   # compared by type only


def send(method, path, headers=None, body=None, timeout=90):
    """One raw HTTP exchange: (status, headers, body bytes)."""
    u = urlparse(URL)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.headers, resp.read()
    finally:
        conn.close()


def resolve(ref):
    node = SPEC
    for part in ref.lstrip("#/").split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def deref(node):
    """Follow local $refs (JSON pointers into the spec)."""
    while isinstance(node, dict) and "$ref" in node:
        node = resolve(node["$ref"])
    return node


def validate(instance, schema, where):
    resolver = jsonschema.RefResolver.from_schema(SPEC)
    validator = jsonschema.Draft202012Validator(schema, resolver=resolver)
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
    assert not errors, f"{where}: live answer breaks the schema: " + \
        "; ".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def same(example, live, where="$"):
    """The live value matches the example: exactly, except VARYING keys
    (same JSON type only). Keys must be the same set on both sides."""
    if isinstance(example, dict):
        assert isinstance(live, dict), f"{where}: expected an object, got {live!r}"
        assert set(example) == set(live), \
            f"{where}: keys differ: example {sorted(example)}, live {sorted(live)}"
        for k, v in example.items():
            if k in VARYING:
                assert type(live[k]) is type(v), f"{where}.{k}: {live[k]!r} is not like {v!r}"
            else:
                same(v, live[k], f"{where}.{k}")
    elif isinstance(example, list):
        assert isinstance(live, list) and len(live) == len(example), \
            f"{where}: expected {len(example)} items, got {live!r}"
        for i, (a, b) in enumerate(zip(example, live)):
            same(a, b, f"{where}[{i}]")
    else:
        assert type(example) is type(live) and example == live, \
            f"{where}: example {example!r}, live {live!r}"


def sse_events(text):
    """[(event, parsed data)] of a text/event-stream body; comments skipped."""
    return [(name, json.loads(data)) for name, data in streaming.parse(text)[0]]


SSE_SCHEMAS = SPEC["paths"]["/execute"]["post"]["responses"]["200"]["content"][
    "text/event-stream"]["schema"]["x-events"]


def check_sse(example_text, live_text, where):
    want, got = sse_events(example_text), sse_events(live_text)
    assert [n for n, _ in got] == [n for n, _ in want], \
        f"{where}: events {[n for n, _ in got]}, example has {[n for n, _ in want]}"
    for i, ((name, w), (_, g)) in enumerate(zip(want, got)):
        same(w, g, f"{where} event {i} ({name})")
        validate(g, SSE_SCHEMAS[name], f"{where} event {i}")


def exchanges():
    """Every response example with the request that produces it."""
    out, seen = [], set()
    for path, item in SPEC["paths"].items():
        for method, op in item.items():
            req = deref(op.get("requestBody", {})).get("content", {}).get("application/json", {})
            req_examples = req.get("examples", {})
            used = set()
            for status, resp in op["responses"].items():
                for mt, media in deref(resp).get("content", {}).items():
                    for name, ex in media.get("examples", {}).items():
                        ex = deref(ex)
                        xr = ex.get("x-request")
                        if xr:
                            m, p = xr.get("method", method.upper()), xr.get("path", path)
                            body = xr.get("body")
                            headers = dict(xr.get("headers", {}))
                        else:
                            m, p, headers = method.upper(), path, {}
                            body = None
                            if req_examples:
                                assert name in req_examples, \
                                    f"{method} {path} {status} example {name} has no request example"
                                body = req_examples[name]["value"]
                                used.add(name)
                        if body is not None and not isinstance(body, str):
                            body = json.dumps(body)
                        if body is not None:
                            headers.setdefault("Content-Type", "application/json")
                        if mt == "text/event-stream":
                            headers["Accept"] = mt
                        key = (m, p, body, status, json.dumps(ex["value"]))
                        if key in seen:
                            continue
                        seen.add(key)
                        out.append(pytest.param(m, p, headers, body, int(status), mt, ex["value"],
                                                media["schema"], id=f"{m} {p} {status} {name}"))
            assert used == set(req_examples), \
                f"{method} {path}: request examples without a response: {set(req_examples) - used}"
    return out


def test_openapi_lints_clean():
    """redocly's recommended rules (examples are checked against the schemas
    too): no error and no warning."""
    out = subprocess.run([os.path.join(JS_DIR, "node_modules", ".bin", "redocly"), "lint",
                          "--format=json", SPEC_PATH],
                         capture_output=True, text=True, timeout=120, cwd=JS_DIR)
    report = json.loads(out.stdout)
    assert out.returncode == 0 and report["totals"]["errors"] == 0, report["problems"]
    assert report["totals"]["warnings"] == 0, report["problems"]


@pytest.mark.parametrize("method,path,headers,body,status,media_type,example,schema", exchanges())
def test_example_is_what_the_service_answers(method, path, headers, body, status, media_type,
                                              example, schema):
    got_status, got_headers, raw = send(method, path, headers,
                                        body.encode() if body is not None else None)
    assert got_status == status, raw[:500]
    assert got_headers["Content-Type"].split(";")[0] == media_type.split(";")[0]
    where = f"{method} {path} -> {status}"
    if media_type == "text/event-stream":
        check_sse(example, raw.decode(), where)
        return
    live = json.loads(raw)
    same(example, live, where)
    validate(live, schema, where)
    if status == 405:
        assert got_headers["Allow"] in ("GET", "POST")


def test_every_error_code_in_the_table_is_documented():
    """fcgi/errors.c is the one table of codes and statuses: the binary
    prints it, and the spec and API.md must say the same."""
    ec = SPEC["components"]["schemas"]["ErrorCode"]
    out = subprocess.run([os.path.join(PREFIX, "bin", "isobox-fcgi"), "--errors"],
                         check=True, capture_output=True, text=True).stdout
    table = {row["code"]: row["status"] for row in map(json.loads, out.splitlines())}
    assert len(table) > 30, table
    assert table == ec["x-status"], "fcgi/errors.c and the spec's x-status disagree"
    assert set(ec["enum"]) == set(ec["x-status"])
    table = dict((c, int(s)) for s, c in re.findall(r"\| (\d{3}) \| `(\w+)` \|", ec["description"]))
    assert table == ec["x-status"], "the ErrorCode table and x-status disagree"
    with open(API_MD, encoding="utf-8") as f:
        md_table = dict((c, int(s)) for s, c in re.findall(r"^\| (\d{3}) \| `(\w+)` \|", f.read(), re.M))
    assert md_table == ec["x-status"], "docs/API.md's error table and the spec disagree"


def test_every_endpoint_in_the_routes_is_described():
    with open(os.path.join(ROOT, "fcgi", "routes.c"), encoding="utf-8") as f:
        routes = set(re.findall(r'\{"(/[^"]*)", "(?:GET|POST)"', f.read()))
    assert routes and routes <= set(SPEC["paths"]), routes - set(SPEC["paths"])


ASSETS = [("/", "fcgi/www/index.html", "text/html"),
          ("/openapi.yaml", "docs/openapi.yaml", "application/yaml"),
          ("/llms.txt", "docs/llms.txt", "text/plain")]


@pytest.mark.parametrize("path,source,media_type", ASSETS)
def test_embedded_file_is_served(path, source, media_type):
    with open(os.path.join(ROOT, source), "rb") as f:
        want = f.read()
    status, headers, body = send("GET", path)
    assert status == 200 and body == want, f"{path} differs from {source}: rebuild and reinstall"
    assert headers["Content-Type"].startswith(media_type)
    assert media_type in deref(SPEC["paths"][path]["get"]["responses"]["200"])["content"]
    assert headers["Cache-Control"] == "no-cache"
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    etag = headers["ETag"]
    assert re.fullmatch(r'"[0-9a-f]{16}"', etag)
    status, h304, body = send("GET", path, {"If-None-Match": f'"x", {etag}'})
    assert status == 304 and body == b"" and h304["ETag"] == etag
    status, _, body = send("GET", path, {"If-None-Match": '"0000000000000000"'})
    assert status == 200 and body == want
    status, hhead, body = send("HEAD", path)
    assert status == 200 and body == b"" and int(hhead["Content-Length"]) == len(want)
    status, h405, body = send("POST", path, {"Content-Type": "application/json"}, b"{}")
    assert status == 405 and h405["Allow"] == "GET"
    assert json.loads(body)["error"]["code"] == "method_not_allowed"


def test_llms_txt_names_every_endpoint_field_and_error():
    with open(os.path.join(ROOT, "docs", "llms.txt"), encoding="utf-8") as f:
        text = f.read()
    assert text.startswith("# isobox\n")
    s = SPEC["components"]["schemas"]
    names = list(SPEC["paths"]) + list(s["ExecuteRequest"]["properties"]) + \
        list(s["Limits"]["properties"]) + list(s["Phase"]["properties"]) + \
        list(s["Result"]["properties"]) + s["ErrorCode"]["enum"]
    missing = [n for n in names if n not in text]
    assert not missing, f"docs/llms.txt does not mention {missing}"


# docs/API.md: each ```sh block is run (the documented host replaced by the
# service under test) and checked against the fenced block right after it:
# ```json (the body, compared like the spec's examples), ```sse (the event
# stream) or ```text (stdout, exactly).
API_MD = os.path.join(ROOT, "docs", "API.md")
DOC_HOST = "localhost:8090"


def api_md_pairs():
    with open(API_MD, encoding="utf-8") as f:
        text = f.read()
    blocks = [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1)
              for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.S | re.M)]
    pairs = []
    for i, (lang, code, line) in enumerate(blocks):
        if lang != "sh" or "curl" not in code:
            continue
        assert i + 1 < len(blocks) and blocks[i + 1][0] in ("json", "sse", "text"), \
            f"docs/API.md line {line}: a curl block without an expected-output block after it"
        pairs.append(pytest.param(code, blocks[i + 1][0], blocks[i + 1][1], id=f"API.md:{line}"))
    return pairs


@pytest.mark.parametrize("command,kind,expected", api_md_pairs())
def test_api_md_example(command, kind, expected):
    u = urlparse(URL)
    command = command.replace(DOC_HOST, f"{u.hostname}:{u.port}")
    out = subprocess.run(["bash", "-ec", command], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    if kind == "json":
        same(json.loads(expected), json.loads(out.stdout))
    elif kind == "sse":
        want, got = sse_events(expected), sse_events(out.stdout)
        assert [n for n, _ in got] == [n for n, _ in want], out.stdout
        for (_, w), (_, g) in zip(want, got):
            same(w, g)
    else:
        assert out.stdout == expected, out.stdout


def test_api_md_limits_table_matches_the_shipped_settings():
    """The floors and ceilings in docs/API.md are conf/isobox.yaml's."""
    with open(os.path.join(ROOT, "conf", "isobox.yaml"), encoding="utf-8") as f:
        conf = yaml.safe_load(f)
    with open(API_MD, encoding="utf-8") as f:
        rows = re.findall(r"^\| `(\w+)` \|[^|]*\|[^|]*\| ([^|]+) \| ([^|]+) \|$", f.read(), re.M)
    units = {"KiB": 1024, "MiB": 1024 ** 2}

    def value(text):
        number, _, unit = text.strip().partition(" ")
        return float(number) * units.get(unit, 1)

    table = {name: (value(lo), value(hi)) for name, lo, hi in rows if name in conf["ceilings"]}
    assert set(table) == set(conf["ceilings"]), table
    for name, (lo, hi) in table.items():
        assert (lo, hi) == (conf["floors"][name], conf["ceilings"][name]), name


@pytest.mark.parametrize("body,code", [
    ({"language": "python", "code": "#" * (1024 * 1024 + 1)}, "file_too_large"),
    ({"language": "python", "code": "print(1)", "stdin": "x" * (1024 * 1024 + 1)}, "stdin_too_large"),
    ({"language": "python", "code": "print(1)", "args": ["x"] * 10, "files": "#" * (4 * 1024 * 1024)},
     "body_too_large"),
], ids=["file_too_large", "stdin_too_large", "body_too_large"])
def test_errors_too_big_for_an_example_match_the_spec(body, code):
    """413s need bodies too big to print in the spec: checked here instead."""
    status, headers, raw = send("POST", "/execute", {"Content-Type": "application/json"},
                                json.dumps(body).encode())
    response = deref(SPEC["paths"]["/execute"]["post"]["responses"][str(status)])
    assert status == 413 and f"`{code}`" in response["description"]
    live = json.loads(raw)
    assert live["error"]["code"] == code
    validate(live, response["content"]["application/json"]["schema"], code)
