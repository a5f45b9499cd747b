"""One id per request (issue 32, item 2): X-Request-Id taken from the client
when it is sane, else made; returned in the answer's header and an error's
body; on the request's one line in isobox.log (logfmt, or JSON by
pool.requestLog); in the access logs of Caddy (the deployed one) and nginx;
and on the label of the sandbox that runs it."""
import json
import os
import re
import secrets
import subprocess
import threading
import time
import urllib.parse

import pytest

import webservers
from conftest import CONF, INSTANCE, LOG_DIR, URL, raw_request, reload_pool, wait_until

ISOBOX_LOG = os.path.join(LOG_DIR, "isobox.log")
CADDY_ACCESS_LOG = os.path.join(LOG_DIR, "caddy", "access.log")
MADE = re.compile(r"^[0-9a-f]{32}$")


def fresh_id(what):
    return f"test-{what}-{secrets.token_hex(6)}"


def run(code, rid=None, **extra):
    body = {"language": "python", "code": code, **extra}
    headers = {"Content-Type": "application/json"}
    if rid is not None:
        headers["X-Request-Id"] = rid
    status, headers, raw = raw_request("POST", "/execute", json.dumps(body), headers, timeout=90)
    return status, headers, json.loads(raw)


def request_line(rid, timeout=10):
    """The line isobox.log has for the request rid (it is written just
    after the answer: waited for), parsed: logfmt's fields, or the JSON."""
    found = {}

    def there():
        with open(ISOBOX_LOG, errors="replace") as f:
            for line in f:
                if f" id={rid} " in line or f'"id":"{rid}"' in line:
                    found["line"] = line.rstrip("\n")
        return "line" in found
    assert wait_until(there, timeout), f"no line for request {rid} in {ISOBOX_LOG}"
    rest = found["line"].split("]: ", 1)[1]
    if rest.startswith("{"):
        return json.loads(rest)
    assert rest.startswith("request "), rest
    return {k: v.strip('"') for k, v in re.findall(r' (\w+)=("(?:[^"\\]|\\.)*"|\S+)', rest)}


def test_every_answer_carries_an_id_it_made_when_the_client_sent_none():
    ids = set()
    for path in ("/runtimes", "/healthz", "/openapi.yaml", "/no-such-endpoint"):
        _, headers, _ = raw_request("GET", path)
        rid = headers["X-Request-Id"]
        assert MADE.match(rid), (path, rid)
        ids.add(rid)
    assert len(ids) == 4, ids


def test_a_sane_client_id_is_kept_and_any_other_replaced():
    for sane in ("0f9b6c1e-2d3a-4b5c-8d7e-6f5a4b3c2d1e", "01HQ3Z8K2V6W8Y0A1B2C3D4E5F", "trace:span.1_a", "a" * 64):
        _, headers, _ = raw_request("GET", "/runtimes", headers={"X-Request-Id": sane})
        assert headers["X-Request-Id"] == sane
    for insane in ("a" * 65, "two words", 'quote"d', "key=value", "caf\u00e9".encode().decode("latin-1"),
                   "../../etc", "<script>"):
        _, headers, _ = raw_request("GET", "/runtimes", headers={"X-Request-Id": insane})
        assert MADE.match(headers["X-Request-Id"]), (insane, headers["X-Request-Id"])
        assert headers.get_all("X-Request-Id") == [headers["X-Request-Id"]]


def test_an_error_says_its_id_in_the_body_too():
    rid = fresh_id("error")
    status, headers, raw = raw_request("POST", "/execute", b"{not json", {"Content-Type": "application/json",
                                                                          "X-Request-Id": rid})
    body = json.loads(raw)
    assert status == 400 and body["error"]["code"] == "bad_json", body
    assert body["error"]["requestId"] == rid == headers["X-Request-Id"]
    # Made by isobox: the same in both places.
    status, headers, raw = raw_request("GET", "/v1/sessions/nope")
    body = json.loads(raw)
    assert status == 404 and MADE.match(body["error"]["requestId"]), body
    assert body["error"]["requestId"] == headers["X-Request-Id"]
    # Piston's shape keeps its "message" beside it.
    status, headers, raw = raw_request("POST", "/api/v2/execute",
                                       json.dumps({"language": "intercal", "version": "*", "files": [{"content": ""}]}),
                                       {"Content-Type": "application/json"})
    body = json.loads(raw)
    assert status >= 400 and body["message"] and body["error"]["requestId"] == headers["X-Request-Id"], body


def test_a_run_has_one_line_in_the_log_with_what_it_was_and_how_it_ended():
    rid = fresh_id("run")
    code = "print('x' * 1000)"
    status, headers, result = run(code, rid)
    assert status == 200 and headers["X-Request-Id"] == rid, result
    line = request_line(rid)
    assert line["method"] == "POST" and line["route"] == "/execute" and line["status"] == "200", line
    assert line["client"] == "127.0.0.1", line
    assert line["language"] == "python" and line["version"] == result["version"], line
    assert line["sandbox"] == "cold" and line["phase"] == "run" and line["exit"] == "0", line
    assert int(line["bytes_in"]) == len(json.dumps({"language": "python", "code": code})), line
    assert int(line["bytes_out"]) > 1000 and int(line["ms"]) >= result["run"]["durationMs"], line
    assert "timed_out" not in line and "oom" not in line and "error" not in line, line
    # What it used, as its result says it.
    assert (int(line["cpu_ms"]), int(line["peak_bytes"])) == \
        (result["run"]["cpuTimeMs"], result["run"]["peakMemoryBytes"]), (line, result["run"])
    # The flags say what ended a run; a refusal says its code.
    rid = fresh_id("timeout")
    status, _, result = run("while True: pass", rid, limits={"wallTimeMs": 500})
    assert status == 200 and result["run"]["timedOut"], result
    line = request_line(rid)
    assert line["timed_out"] == "true" and line["exit"] == str(result["run"]["exitCode"]), line
    rid = fresh_id("refused")
    status, _, _ = run("", rid, language="intercal")
    line = request_line(rid)
    assert status == 404 and line["status"] == "404" and line["error"] == "unknown_language", line
    assert "sandbox" not in line and "exit" not in line, line


def test_the_log_line_is_json_when_the_conf_says_so():
    with open(CONF) as f:
        shipped = f.read()
    json_conf, n = re.subn(r"(?m)^  requestLog: logfmt$", "  requestLog: json", shipped)
    assert n == 1, f"no pool.requestLog in {CONF}"
    try:
        with open(CONF, "w") as f:
            f.write(json_conf)
        reload_pool()
        rid = fresh_id("json")
        status, _, _ = run("print(1)", rid)
        line = request_line(rid)
        assert status == 200 and line["msg"] == "request" and line["id"] == rid, line
        assert line["status"] == 200 and line["exit"] == 0 and line["sandbox"] == "cold", line
    finally:
        with open(CONF, "w") as f:
            f.write(shipped)
        reload_pool()


def test_the_deployed_caddy_logs_the_id():
    rid = fresh_id("caddy")
    raw_request("GET", "/runtimes", headers={"X-Request-Id": rid})

    def logged():
        with open(CADDY_ACCESS_LOG, errors="replace") as f:
            return [json.loads(line) for line in f if rid in line]
    assert wait_until(logged, 10), f"no entry for {rid} in {CADDY_ACCESS_LOG}"
    entry = logged()[-1]
    assert entry["resp_headers"]["X-Request-Id"] == [rid] and entry["status"] == 200, entry


@pytest.mark.parametrize("name", ["nginx", "apache", "lighttpd"])
def test_the_shipped_web_servers_log_the_id(name):
    with webservers.start(name) as server:
        rid = fresh_id(name)
        u = urllib.parse.urlparse(server.url)
        status, headers, _ = raw_request("GET", u.path + "/runtimes", headers={"X-Request-Id": rid},
                                         url=f"http://{u.hostname}:{u.port}")
        assert status == 200 and headers["X-Request-Id"] == rid
        access = os.path.join(server.root, "access.log")

        def logged():
            with open(access, errors="replace") as f:
                return [line for line in f if line.rstrip("\n").endswith(" " + rid)]
        assert wait_until(logged, 10), f"no line ending in {rid} in {access}: {open(access).read()[-2000:]}"


def test_a_sandbox_is_labelled_with_the_request_it_serves():
    rid = fresh_id("label")
    answer = {}
    t = threading.Thread(target=lambda: answer.update(r=run("import time; time.sleep(5)", rid)))
    t.start()
    try:
        def labelled():
            out = subprocess.run(["docker", "ps", "--filter", f"label=isobox.request={rid}",
                                  "--format", "{{.Names}} {{.Label \"isobox.instance\"}}"],
                                 capture_output=True, text=True, check=True).stdout.split()
            return out
        assert wait_until(labelled, 30), f"no container labelled isobox.request={rid}"
        name, instance = labelled()
        assert name.startswith(f"isobox-{INSTANCE}-") and instance == INSTANCE
    finally:
        t.join(90)
    status, _, result = answer["r"]
    assert status == 200 and result["run"]["exitCode"] == 0, result
