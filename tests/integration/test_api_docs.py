"""The API's own descriptions against the live service: docs/openapi.yaml
(linted, every example exchanged for real, in a fresh session for the
session routes, every live answer validated against its schema, every error
code in the C sources listed, every route described), docs/llms.txt and the
curl examples of docs/API.md, and how the embedded files are served.
"""
import contextlib
import json
import os
import re
import subprocess
import threading
from urllib.parse import urlparse

import jsonschema
import pytest
import yaml

import streaming
from conftest import PREFIX, URL, raw_request, wait_until

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC_PATH = os.path.join(ROOT, "docs", "openapi.yaml")
JS_DIR = os.path.join(ROOT, "tests", "integration", "js")
with open(SPEC_PATH, encoding="utf-8") as f:
    SPEC = yaml.safe_load(f)
VARYING = set(SPEC["info"]["x-varying"])   # compared by type only
EXAMPLE_SID = SPEC["info"]["x-session-id"]  # stands for the live session's id in examples


def send(method, path, headers=None, body=None, timeout=90):
    """One raw HTTP exchange: (status, headers, body bytes)."""
    return raw_request(method, path, body, headers, timeout=timeout)


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


def check_sse(example_text, live_text, schema, where):
    """The live events are the example's, each valid against the
    operation's x-events schema of its name."""
    want, got = sse_events(example_text), sse_events(live_text)
    assert [n for n, _ in got] == [n for n, _ in want], \
        f"{where}: events {[n for n, _ in got]}, example has {[n for n, _ in want]}"
    for i, ((name, w), (_, g)) in enumerate(zip(want, got)):
        same(w, g, f"{where} event {i} ({name})")
        validate(g, schema["x-events"][name], f"{where} event {i}")


def spec_path(path):
    """The spec's path template that a concrete path (query ignored) falls
    under: {path} takes the rest of the URL, any other parameter one part."""
    path = path.split("?")[0]
    if path in SPEC["paths"]:
        return path
    found = [t for t in SPEC["paths"] if "{" in t and re.fullmatch(
        re.sub(r"\\\{(\w+)\\\}", lambda m: ".+" if m.group(1) == "path" else "[^/]+", re.escape(t)),
        path)]
    assert len(found) == 1, f"{path} falls under {found} in the spec"
    return found[0]


def allowed(path):
    """The methods the spec gives the path, as a set of upper-case names."""
    return {m.upper() for m in SPEC["paths"][spec_path(path)] if m != "parameters"}


def send_json_or_bytes(method, path, body, headers=None, timeout=90):
    """send() with a dict body as JSON and a str body as raw bytes."""
    headers = dict(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        headers.setdefault("Content-Type", "application/json")
    elif isinstance(body, str):
        body = body.encode()
        headers.setdefault("Content-Type", "application/octet-stream")
    return send(method, path, headers, body, timeout)


def session_state(sid):
    status, _, raw = send("GET", f"/v1/sessions/{sid}")
    return json.loads(raw)["state"] if status == 200 else status


@contextlib.contextmanager
def example_session(xs):
    """The session an example's x-session describes: created, prepared with
    its `before` requests (`background` ones left running until the session
    is busy), waited on until it ended when `expire`; deleted afterwards."""
    status, _, raw = send_json_or_bytes("POST", "/v1/sessions", xs["create"])
    assert status == 201, raw[:500]
    sid = json.loads(raw)["id"]
    threads = []
    try:
        for r in xs.get("before", []):
            args = (r.get("method", "POST"), r["path"].replace("{id}", sid), r.get("body"), r.get("headers"))
            if r.get("background"):
                threads.append(threading.Thread(target=send_json_or_bytes, args=args, daemon=True))
                threads[-1].start()
                assert wait_until(lambda: session_state(sid) == "busy", 10), f"{sid} never got busy"
            else:
                status, _, raw = send_json_or_bytes(*args)
                assert status < 300, f"x-session before {args[:2]}: {status} {raw[:300]}"
        if xs.get("expire"):
            assert wait_until(lambda: session_state(sid) == 410, 20, 0.5), f"{sid} did not expire"
        yield sid
    finally:
        send("DELETE", f"/v1/sessions/{sid}")
        for t in threads:
            t.join(30)


def with_sid(example, sid):
    """The example with the live session's id for info.x-session-id."""
    if isinstance(example, str):
        return example.replace(EXAMPLE_SID, sid)
    return json.loads(json.dumps(example).replace(EXAMPLE_SID, sid))


def exchanges():
    """Every response example with the request that produces it."""
    out, seen = [], set()
    for path, item in SPEC["paths"].items():
        for method, op in item.items():
            if method == "parameters":
                continue
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
                        xs = ex.get("x-session")
                        assert "{" not in (p.replace("{id}", "") if xs else p), \
                            f"{method} {path} {status} example {name}: give a path (and x-session for {{id}})"
                        xb = {"before": ex.get("x-before", []), "after": ex.get("x-after", [])}
                        key = (m, p, body, status, json.dumps(ex["value"]), json.dumps(xs), json.dumps(xb))
                        if key in seen:
                            continue
                        seen.add(key)
                        out.append(pytest.param(m, p, headers, body, int(status), mt, ex["value"],
                                                media["schema"], xs, xb, id=f"{m} {p} {status} {name}"))
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


@pytest.mark.parametrize("method,path,headers,body,status,media_type,example,schema,xsession,before",
                         exchanges())
def test_example_is_what_the_service_answers(method, path, headers, body, status, media_type,
                                              example, schema, xsession, before):
    # x-before: requests that set the stage (memory keys, volumes), whatever
    # they answer; x-after: what clears it up.
    for r in before["before"]:
        send_json_or_bytes(r.get("method", "PUT"), r["path"], r.get("body"), r.get("headers"))
    with contextlib.ExitStack() as stack:
        for r in before["after"]:
            stack.callback(send_json_or_bytes, r.get("method", "DELETE"), r["path"], r.get("body"),
                           r.get("headers"))
        sid = None
        if xsession:
            sid = stack.enter_context(example_session(xsession))
            path = path.replace("{id}", sid)
        got_status, got_headers, raw = send(method, path, headers,
                                            body.encode() if body is not None else None)
        if (method, path, got_status) == ("POST", "/v1/sessions", 201):
            sid = json.loads(raw)["id"]
            stack.callback(send, "DELETE", f"/v1/sessions/{sid}")
        assert got_status == status, raw[:500]
        where = f"{method} {path} -> {status}"
        assert got_headers["Content-Type"], f"{where}: no Content-Type; the body begins {raw[:120]!r}"
        assert got_headers["Content-Type"].split(";")[0] == media_type.split(";")[0]
        if sid:
            example = with_sid(example, sid)
        if media_type == "text/event-stream":
            check_sse(example, raw.decode(), schema, where)
            return
        if media_type == "application/octet-stream":
            assert raw == example.encode() and int(got_headers["Content-Length"]) == len(raw)
            return
        live = json.loads(raw)
        if (method, spec_path(path)) == ("GET", "/v1/sessions"):
            # Every session on the server is listed: compare the test's own.
            live["sessions"] = [x for x in live["sessions"] if x["id"] == sid]
        if (method, spec_path(path)) in (("GET", "/runtimes"), ("GET", "/api/v2/runtimes")) and status == 200:
            # The registry's languages: the example shows the first of them.
            shown = example["runtimes"] if isinstance(example, dict) else example
            listed = live["runtimes"] if isinstance(live, dict) else live
            assert len(listed) >= len(shown) > 0, listed
            listed[len(shown):] = []
        same(example, live, where)
        validate(live, schema, where)
        if status == 405:
            assert set(got_headers["Allow"].split(", ")) == allowed(path), got_headers["Allow"]


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
    """Each route of fcgi/routes.c (pattern and method) is a path and an
    operation of the spec: a `*` part is {id}, `**` the rest, {path}."""
    with open(os.path.join(ROOT, "fcgi", "routes.c"), encoding="utf-8") as f:
        routes = set(re.findall(r'\{"(/[^"]*)", "(GET|POST|PUT|DELETE|PATCH)"', f.read()))
    assert len(routes) > 10, routes
    def template(path):  # the second `*` is named by the part before it: commands/* is {commandId}
        parts = path.split("/")
        stars = [i for i, p in enumerate(parts) if p == "*"]
        for n, i in enumerate(stars):
            parts[i] = "{id}" if n == 0 else "{%sId}" % parts[i - 1].rstrip("s")
        return "/".join(parts).replace("/**", "/{path}")
    described = {(template(path), method.lower()) for path, method in routes}
    in_spec = {(p, m) for p, item in SPEC["paths"].items() for m in item if m != "parameters"}
    assert described == in_spec, (described - in_spec, in_spec - described)


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
        list(s["Result"]["properties"]) + s["ErrorCode"]["enum"] + \
        list(s["SessionRequest"]["properties"]) + list(s["Session"]["properties"]) + \
        list(s["StepResult"]["allOf"][1]["properties"]) + \
        list(s["StepResult"]["allOf"][1]["properties"]["session"]["properties"]) + \
        list(s["KernelResult"]["properties"])
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
        # Exactly, but for each request's own id (made anew every time).
        def ids_out(text):
            return REQUEST_ID_VALUE.sub(r'\1"<id>"', text)
        assert ids_out(out.stdout) == ids_out(expected), out.stdout


REQUEST_ID_VALUE = re.compile(r'("requestId": ?)"[A-Za-z0-9._:-]{1,64}"')


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


class SpecClient:
    """Sends requests and checks each live answer against the spec: its
    status is documented for the operation, its Content-Type is one of the
    response's, a JSON body is valid against the schema, an error's code is
    one the response names (with the status of ErrorCode's x-status), a 405
    has the spec's methods in Allow, each event of a stream is valid against
    its x-events schema. Remembers (path, method, status) of each answer."""

    def __init__(self):
        self.seen = set()

    def __call__(self, method, path, body=None, headers=None, status=None):
        got, h, raw = send_json_or_bytes(method, path, body, headers)
        where = f"{method} {path} -> {got}"
        assert status is None or got == status, f"{where}: {raw[:500]}"
        template = spec_path(path)
        ops = {m: op for m, op in SPEC["paths"][template].items() if m != "parameters"}
        op = ops.get("get" if method == "HEAD" else method.lower())
        if op is None and got == 405:   # a method the path lacks: any of its operations says 405
            op = next(iter(ops.values()))
        assert op, f"{where}: {method} is not in the spec for {template}"
        response = deref(op["responses"].get(str(got)))
        assert response, f"{where}: {got} is not documented for {method} {template}"
        self.seen.add((template, method, got))
        content = response.get("content", {})
        if not content:
            assert raw == b"", f"{where}: a body the spec does not describe: {raw[:200]}"
            return None
        assert h["Content-Type"], f"{where}: no Content-Type; the body begins {raw[:120]!r}"
        media_type = h["Content-Type"].split(";")[0]
        assert media_type in content, f"{where}: {media_type} is not one of {list(content)}"
        schema = content[media_type]["schema"]
        if media_type == "text/event-stream":
            events = sse_events(raw.decode())
            for i, (name, data) in enumerate(events):
                validate(data, schema["x-events"][name], f"{where} event {i} ({name})")
            return events
        if media_type == "application/octet-stream":
            assert "Content-Length" in h and (raw == b"" if method == "HEAD" else
                                              int(h["Content-Length"]) == len(raw)), where
            return raw
        live = json.loads(raw)
        validate(live, schema, where)
        if got >= 400:
            code = live["error"]["code"]
            assert f"`{code}`" in response["description"], \
                f"{where}: {code} is not named in the spec's {got} response of {method} {template}"
            assert SPEC["components"]["schemas"]["ErrorCode"]["x-status"][code] == got, where
        if got == 405:
            assert set(h["Allow"].split(", ")) == allowed(path), f"{where}: Allow {h['Allow']}"
        return live


def test_session_answers_match_the_spec():
    """A shell and a kernel session driven through every session route,
    their errors included: every live answer is one the spec describes."""
    call = SpecClient()
    made = []

    def create(body, status=201):
        s = call("POST", "/v1/sessions", body, status=status)
        if status == 201:
            made.append(s["id"])
        return s

    try:
        # A shell session: steps, streamed steps, files in and out.
        s = create({"language": "python", "limits": {"pids": 64}, "idleTimeoutMs": 60000})
        sid, base = s["id"], f"/v1/sessions/{s['id']}"
        assert s["type"] == "shell" and s["limits"]["pids"] == 64 and s["state"] == "idle"
        assert s["createdAt"] <= s["lastUsedAt"] < s["expiresAt"]
        got = call("GET", base, status=200)
        assert got["id"] == sid and got["steps"] == 0
        assert sid in [x["id"] for x in call("GET", "/v1/sessions", status=200)["sessions"]]
        r = call("POST", base + "/exec", {"code": "open('out.txt', 'w').write('made')\nprint('ok')"},
                 status=200)
        assert r["run"]["stdout"] == "ok\n" and r["session"] == {"id": sid, "type": "shell"}
        assert "kernel" not in r and r["warm"] is False
        r = call("POST", base + "/exec", {"files": [{"name": "s.py", "content": "print(open('out.txt').read())"}]},
                 status=200)
        assert r["run"]["stdout"] == "made\n"
        data = bytes(range(256)) * 4
        assert call("PUT", base + "/files/in/data.bin", data, {"Content-Type": "application/octet-stream"},
                    status=201) == {"path": "in/data.bin", "size": len(data)}
        assert call("GET", base + "/files/in/data.bin", status=200) == data
        call("HEAD", base + "/files/in/data.bin", status=200)
        listing = call("GET", base + "/files", status=200)
        assert listing["path"] == "." and {"in", "out.txt", "main.py"} <= {e["name"] for e in listing["entries"]}
        listing = call("GET", base + "/files?path=in", status=200)
        assert [(e["name"], e["type"], e["size"]) for e in listing["entries"]] == [("data.bin", "file", len(data))]
        call("POST", base + "/exec", {"code": "import os\nos.symlink('/etc', 'etc')"}, status=200)
        assert [e["type"] for e in call("GET", base + "/files", status=200)["entries"] if e["name"] == "etc"] == ["link"]
        # Errors of the files routes.
        for method, path, body, code in [
                ("GET", "/files/in", None, "not_a_file"),
                ("GET", "/files/etc", None, "not_a_file"),
                ("PUT", "/files/etc/passwd", "x", "not_a_file"),
                ("GET", "/files?path=etc", None, "not_a_file"),
                ("PUT", "/files/-x", "x", "bad_file_name"),
                ("GET", "/files/a/@b", None, "bad_file_name"),
                ("GET", "/files?path=..", None, "bad_file_name"),
                ("GET", "/files/nope", None, "file_not_found"),
                ("GET", "/files?path=nope", None, "file_not_found"),
                ("DELETE", "/files/nope", None, "file_not_found"),
                ("POST", "/exec", {"code": "print(1)", "limits": {"memoryBytes": 2 ** 30}}, "invalid_request"),
                ("POST", "/exec", {"language": "python", "code": "print(1)"}, "unknown_field"),
                ("POST", "/exec", {}, "missing_field")]:
            assert call(method, base + path, body)["error"]["code"] == code, (method, path)
        assert call("POST", base + "/exec", "print(1)", {"Content-Type": "text/plain"},
                    status=415)["error"]["code"] == "unsupported_media_type"
        call("DELETE", base + "/files/in", status=204)
        assert call("GET", base + "/files/in/data.bin", status=404)["error"]["code"] == "file_not_found"
        # The wrong method on each path: 405 with the spec's methods.
        for method, path in [("PUT", "/v1/sessions"), ("POST", base), ("GET", base + "/exec"),
                             ("DELETE", base + "/files"), ("POST", base + "/files/x")]:
            call(method, path, status=405)
        # One request at a time: 409 while a step runs; the session itself still answers.
        slow = threading.Thread(target=send_json_or_bytes, daemon=True,
                                args=("POST", base + "/exec", {"code": "import time\ntime.sleep(3)"}))
        slow.start()
        assert wait_until(lambda: session_state(sid) == "busy", 10)
        for method, path, body in [("POST", "/exec", {"code": "print(1)"}), ("GET", "/files", None),
                                   ("GET", "/files/out.txt", None), ("PUT", "/files/x", "x"),
                                   ("DELETE", "/files/out.txt", None)]:
            assert call(method, base + path, body, status=409)["error"]["code"] == "session_busy"
        assert call("GET", base, status=200)["state"] == "busy"
        slow.join(30)
        assert call("GET", base, status=200)["steps"] == 4
        # Background commands: started, read, written to, signalled, listed, deleted.
        c = call("POST", base + "/commands", {"command": "cat; echo bye >&2", "stdinOpen": True}, status=201)
        assert c["running"] and c["exitCode"] is None and c["args"] == ["sh", "-c", "cat; echo bye >&2"]
        cmd = base + "/commands/" + c["id"]
        assert call("POST", cmd + "/stdin", {"data": "hi\n", "close": True}, status=200) == \
            {"written": 3, "closed": True}
        assert wait_until(lambda: not call("GET", cmd, status=200)["running"], 10)
        r = call("GET", cmd, status=200)
        assert (r["exitCode"], r["stdout"], r["stderr"], r["stdoutNext"]) == (0, "hi\n", "bye\n", 3), r
        r = call("GET", cmd + "?stdoutFrom=1&encoding=base64", status=200)
        assert (r["encoding"], r["stdout"], r["stdoutFrom"]) == ("base64", "aQo=", 1), r
        assert call("POST", cmd + "/stdin", {"data": "x"}, status=409)["error"]["code"] == "stdin_closed"
        s2 = call("POST", base + "/commands", {"args": ["sleep", "30"]}, status=201)
        call("POST", base + "/commands/" + s2["id"] + "/signal", {"signal": "SIGKILL"}, status=204)
        assert wait_until(lambda: call("GET", base + "/commands/" + s2["id"], status=200)["exitCode"] == 137, 10)
        assert call("POST", base + "/commands/" + s2["id"] + "/signal", {"signal": "SIGNOPE"},
                    status=400)["error"]["code"] == "invalid_value"
        listed = call("GET", base + "/commands", status=200)["commands"]
        assert [x["id"] for x in listed] == [c["id"], s2["id"]] and listed[0]["stdoutBytes"] == 3
        call("DELETE", cmd, status=204)
        assert call("GET", cmd, status=404)["error"]["code"] == "command_not_found"
        assert call("DELETE", base + "/commands/nothex", status=404)["error"]["code"] == "command_not_found"
        assert call("POST", base + "/commands", {"command": "x", "args": ["y"]},
                    status=400)["error"]["code"] == "invalid_request"
        assert call("POST", base + "/commands", {}, status=400)["error"]["code"] == "missing_field"
        assert call("GET", base + "/commands/" + s2["id"] + "?maxBytes=-1",
                    status=400)["error"]["code"] == "invalid_value"

        # Deleted: 404 on every route.
        call("DELETE", base, status=204)
        for method, path, body in [("GET", "", None), ("DELETE", "", None), ("POST", "/exec", {"code": "1"}),
                                   ("GET", "/files", None), ("GET", "/files/out.txt", None),
                                   ("PUT", "/files/x", "x"), ("DELETE", "/files/x", None),
                                   ("GET", "/commands", None), ("POST", "/commands", {"args": ["true"]})]:
            assert call(method, base + path, body, status=404)["error"]["code"] == "session_not_found"

        # A kernel session: values, errors, images, an interrupt.
        k = create({"language": "python", "type": "kernel", "limits": {"memoryBytes": 128 * 2 ** 20}})
        kid, base = k["id"], f"/v1/sessions/{k['id']}"
        assert k["type"] == "kernel" and k["limits"]["memoryBytes"] == 128 * 2 ** 20
        call("POST", base + "/exec", {"code": "x = 21"}, status=200)
        r = call("POST", base + "/exec", {"code": "x * 2"}, status=200)
        assert r["kernel"] == {"value": "42", "error": None, "images": [], "restarted": False, "outputs": [
            {"output_type": "execute_result", "data": {"text/plain": "42"}, "metadata": {}}]}
        assert r["session"] == {"id": kid, "type": "kernel"}
        r = call("POST", base + "/exec", {"code": "undefined_name"}, status=200)
        assert r["kernel"]["error"]["name"] == "NameError" and r["run"]["exitCode"] == 1
        r = call("POST", base + "/exec", {"code": "import matplotlib.pyplot as plt\n_ = plt.plot([1, 2])"},
                 status=200)
        assert len(r["kernel"]["images"]) == 1 and r["kernel"]["images"][0]["data"].startswith("iVBORw0KGgo")
        r = call("POST", base + "/exec", {"code": "import time\ntime.sleep(30)", "limits": {"wallTimeMs": 1000}},
                 status=200)
        assert r["run"]["timedOut"] and r["kernel"]["error"]["name"] == "KeyboardInterrupt"
        assert call("POST", base + "/exec", {"files": [{"name": "a.py", "content": "1"}]},
                    status=400)["error"]["code"] == "invalid_request"
        assert call("PUT", base + "/files/v.txt", "from a file", status=201)["size"] == 11
        r = call("POST", base + "/exec", {"code": "open('v.txt').read()"}, status=200)
        assert r["kernel"]["value"] == "'from a file'"
        # Out of memory: the step says the session ended; then 410 everywhere.
        r = call("POST", base + "/exec", {"code": "a = bytearray(200 * 1024 * 1024)"}, status=200)
        assert r["run"]["oomKilled"] and "memory" in r["session"]["ended"]
        for method, path, body in [("GET", "", None), ("POST", "/exec", {"code": "1"}), ("GET", "/files", None),
                                   ("GET", "/files/v.txt", None), ("PUT", "/files/x", "x"),
                                   ("DELETE", "/files/v.txt", None), ("DELETE", "", None)]:
            assert call(method, base + path, body, status=410)["error"]["code"] == "session_expired"

        # Expiry when idle, and what creating refuses.
        e = create({"language": "python", "idleTimeoutMs": 1000})
        assert wait_until(lambda: session_state(e["id"]) == 410, 20, 0.5)
        assert "idle" in call("GET", f"/v1/sessions/{e['id']}", status=410)["error"]["message"]
        for body, status, code in [({"language": "bash", "type": "kernel"}, 400, "invalid_value"),
                                   ({"language": "python", "limits": {"outputBytes": 10}}, 400, "invalid_request"),
                                   ({"language": "python", "maxLifetimeMs": 10 ** 9}, 400, "invalid_value"),
                                   ({"language": "python", "type": 1}, 400, "invalid_type"),
                                   ({"type": "kernel"}, 400, "missing_field"),
                                   ({"language": "intercal"}, 404, "unknown_language")]:
            assert create(body, status)["error"]["code"] == code, body
        assert call("POST", "/v1/sessions", '{"language": "python"}', {"Content-Type": "text/plain"},
                    status=415)["error"]["code"] == "unsupported_media_type"

        # Streamed steps, shell and kernel.
        for body, code, value in [({"language": "python"}, "print('out', flush=True)", None),
                                  ({"language": "python", "type": "kernel"}, "print('out', flush=True)\n6 * 7", "42")]:
            base = f"/v1/sessions/{create(body)['id']}"
            events = call("POST", base + "/exec", {"code": code}, {"Accept": "text/event-stream"}, status=200)
            told = ["stdout", "display", "result"] if value else ["stdout", "result"]  # a cell's value, as it comes
            assert [n for n, _ in events] == told and events[0][1] == {"data": "out\n"}, events
            assert events[-1][1].get("kernel", {}).get("value") == value
    finally:
        for sid in made:
            send("DELETE", f"/v1/sessions/{sid}")
    # Every operation of the session routes answered its success.
    for template, item in SPEC["paths"].items():
        for method, op in item.items():
            if template.startswith("/v1/sessions") and method != "parameters":
                ok = next(s for s in op["responses"] if s.startswith("2"))
                assert (template, method.upper(), int(ok)) in call.seen, (template, method, ok)
