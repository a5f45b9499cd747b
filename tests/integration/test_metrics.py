"""GET /metrics: Prometheus text, counted across every worker process of the
pool (dead and recycled ones included), and access lists for /metrics and
/healthz. Runs against the pool under test (ISOBOX_INSTANCE, PORT...)."""
import json
import os
import re
import signal
import subprocess
import threading

import pytest
import yaml

from conftest import (PREFIX, REPO, execute, reload_pool, request, run_ok, wait_until, workers)
from metrics_util import CONF, ConfEdit, deltas, scrape, value

EXEC = "isobox_executions_total"
HIST = "isobox_execution_duration_seconds_count"


def test_promtool_accepts_the_exposition():
    run_ok("print(1)")  # so that every family has samples, histogram included
    # ...session steps too, whose family shows only once a step ran.
    status, _, s = request("POST", "/v1/sessions", {"language": "python"})
    assert status == 201, s
    assert request("POST", f"/v1/sessions/{s['id']}/exec", {"code": "print(1)"})[0] == 200
    assert request("DELETE", f"/v1/sessions/{s['id']}")[0] == 204
    text, _ = scrape()
    check = subprocess.run(["promtool", "check", "metrics"], input=text, text=True,
                           capture_output=True)
    assert check.returncode == 0, check.stdout + check.stderr
    for family in ("isobox_workers", "isobox_workers_busy", "isobox_execution_slots",
                   "isobox_http_requests_total", EXEC, "isobox_rejected_requests_total",
                   "isobox_sandbox_failures_total", "isobox_worker_exits_total",
                   "isobox_execution_duration_seconds", "isobox_session_step_seconds_total",
                   "isobox_store_up", "isobox_cluster_host_up", "isobox_build_info",
                   "isobox_tenant_requests_total", "isobox_tenant_run_seconds_total"):
        assert f"# TYPE {family} " in text, family


def test_build_info_says_the_version_and_runtime_that_healthz_says():
    text, _ = scrape()
    status, _, health = request("GET", "/healthz")
    assert status == 200, health
    lines = [line for line in text.splitlines() if line.startswith("isobox_build_info{")]
    assert len(lines) == 1 and lines[0].endswith("} 1"), lines
    version = health["isoboxVersion"]
    assert re.fullmatch(r"\d{8}-[0-9a-f]{7,}(-dirty)?", version), version
    assert lines[0] == (f'isobox_build_info{{version="{version}",backend="{health["backend"]}",'
                        f'runtime="{health["runtime"]["program"]}",'
                        f'runtime_version="{health["runtime"]["version"]}"}} 1'), lines[0]
    out = subprocess.run([f"{PREFIX}/bin/isobox-fcgi", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout == f"isobox-fcgi {version}\n"


def test_tenants_requests_and_run_time_are_counted():
    """Loopback callers without a key are the tenant "local" (tenants.yaml's
    anonymous addresses): their requests by status, their runs' time."""
    _, before = scrape()
    assert run_ok("import time; time.sleep(0.3)")["exitCode"] == 0
    assert execute({"language": "python", "code": 1})[0] == 400
    _, after = scrape()
    delta = deltas(before, after)
    assert delta("isobox_tenant_requests_total", tenant="local", status="200") >= 1
    assert delta("isobox_tenant_requests_total", tenant="local", status="400") >= 1
    assert delta("isobox_tenant_run_seconds_total", tenant="local") >= 0.3


def test_counters_move_by_outcome():
    _, before = scrape()
    assert run_ok("print('hi')")["exitCode"] == 0
    assert run_ok("import sys; sys.exit(3)")["exitCode"] == 3
    assert run_ok("import time; time.sleep(5)", limits={"wallTimeMs": 500})["timedOut"]
    assert run_ok("x = bytearray(200 << 20); print(len(x))",
                  limits={"memoryBytes": 64 << 20})["oomKilled"]
    assert run_ok("print('x' * 100000)", limits={"outputBytes": 1000})["truncated"]
    assert execute({"language": "c", "code": "int main(void) { return nope; }"})[1]["compile"][
        "exitCode"] != 0
    status, bad = execute({"language": "python", "code": 1})
    assert status == 400, bad
    status, unknown = execute({"language": "no-such-language", "code": "x"})
    assert status == 404, unknown
    delta = deltas(before, scrape()[1])
    assert delta(EXEC, language="python", outcome="ok") == 1
    assert delta(EXEC, language="python", outcome="error") == 1
    assert delta(EXEC, language="python", outcome="timeout") == 1
    assert delta(EXEC, language="python", outcome="oom") == 1
    assert delta(EXEC, language="python", outcome="truncated") == 1
    assert delta(EXEC, language="c", outcome="error") == 1, "a failed compile is an error"
    assert delta(HIST, language="python") == 5
    assert delta(HIST, language="c") == 1
    assert delta("isobox_execution_duration_seconds_sum", language="python") >= 0.5
    assert delta("isobox_http_requests_total", route="/execute", status="200") == 6
    assert delta("isobox_http_requests_total", route="/execute", status="400") == 1
    assert delta("isobox_rejected_requests_total", code=bad["error"]["code"], status="400") == 1
    assert delta("isobox_rejected_requests_total", code=unknown["error"]["code"], status="404") == 1
    assert delta("isobox_http_requests_total", route="/metrics", status="200") == 1


def test_unknown_paths_share_one_label():
    _, before = scrape()
    for path in ("/nope", "/nope2", "/a/b/c"):
        assert request("GET", path)[0] == 404
    _, after = scrape()
    key = ("isobox_http_requests_total", frozenset({("route", "other"), ("status", "404")}))
    assert after.get(key, 0) - before.get(key, 0) == 3
    assert not any('nope' in str(k) for k in after), "request paths must not become labels"


def test_busy_gauge_sees_a_running_program():
    done = []
    t = threading.Thread(target=lambda: done.append(
        run_ok("import time; time.sleep(4)", limits={"wallTimeMs": 10000})))
    t.start()
    try:
        assert wait_until(lambda: value(scrape()[1], "isobox_workers_busy") >= 1, 20)
    finally:
        t.join(60)
    assert done and done[0]["exitCode"] == 0
    assert wait_until(lambda: value(scrape()[1], "isobox_workers_busy") == 0, 10)


def test_counts_survive_killed_workers():
    count = lambda: value(scrape()[1], EXEC, language="python", outcome="ok")  # noqa: E731
    n = count()
    run_ok("print(1)")
    # A run is counted just after its answer is sent: wait for it, so
    # that `before` holds every run there was.
    assert wait_until(lambda: count() == n + 1, 10)
    _, before = scrape()
    old = set(workers())
    status = len(workers("isobox-status"))  # the status socket's worker counts too
    assert status == 1 and len(old) + status == int(value(before, "isobox_workers"))
    # Kill every worker: whichever served the run above is among them.
    for pid in old:
        os.kill(pid, signal.SIGKILL)
    assert wait_until(lambda: len(set(workers()) - old) == len(old), 30), "workers not replaced"
    assert wait_until(lambda: value(scrape()[1], "isobox_workers") == len(old) + status, 10)
    _, after = scrape()
    for key, v in before.items():
        if key[0].endswith("_total") or key[0].endswith("_count") or key[0].endswith("_bucket"):
            assert after.get(key, 0) >= v, f"{key} went down from {v} to {after.get(key)}"
    assert value(after, EXEC, language="python", outcome="ok") == \
        value(before, EXEC, language="python", outcome="ok")
    assert deltas(before, after)("isobox_worker_exits_total", reason="killed") == len(old)


@pytest.fixture
def conf_edit():
    edit = ConfEdit()
    try:
        yield edit
    finally:
        edit.restore()
        reload_pool(then_healthy=False)  # every worker reloads before its next request
        assert wait_until(lambda: request("GET", "/metrics")[0] == 200, 20)


def reload_until(status, path):
    reload_pool(then_healthy=False)
    # Each worker reloads before its next request: ask until all have.
    return wait_until(lambda: all(request("GET", path)[0] == status for _ in range(8)), 20)


def test_access_lists(conf_edit):
    assert request("GET", "/metrics")[0] == 200, "the default lets loopback read /metrics"
    conf_edit.apply(('metrics: ["127.0.0.0/8", "::1/128"]',
                     'metrics: ["10.0.0.0/8", "fd00::/8"]\n  healthz: ["192.0.2.0/24"]'))
    assert reload_until(403, "/metrics"), "a list without loopback must refuse us"
    status, _, body = request("GET", "/metrics")
    assert status == 403 and body["error"]["code"] == "forbidden", body
    status, _, body = request("GET", "/healthz")
    assert status == 403 and body["error"]["code"] == "forbidden", body
    assert request("GET", "/runtimes")[0] == 200, "other endpoints are not affected"
    conf_edit.apply(('metrics: ["127.0.0.0/8", "::1/128"]',
                     'metrics: ["10.0.0.0/8", "127.0.0.1/32"]'))
    assert reload_until(200, "/metrics")
    assert reload_until(200, "/healthz"), "healthz is open when not listed"


def test_bad_access_list_is_refused(conf_edit):
    conf_edit.apply(('metrics: ["127.0.0.0/8", "::1/128"]', 'metrics: ["127.0.0.0/33"]'))
    check = subprocess.run([f"{PREFIX}/bin/isobox-fcgi", "--conf", CONF, "--check"],
                           capture_output=True, text=True)
    assert check.returncode != 0 and "127.0.0.0/33" in check.stderr, check.stderr
    reload_pool()
    # A broken reload keeps the previous settings: loopback may still read.
    assert request("GET", "/metrics")[0] == 200
    assert "reloadError" in request("GET", "/healthz")[2]


def test_cgi_has_no_metrics():
    env = {"GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "GET", "PATH_INFO": "/metrics",
           "REMOTE_ADDR": "127.0.0.1", "SERVER_PROTOCOL": "HTTP/1.1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(["setpriv", "--reuid=isobox", "--regid=isobox", "--init-groups", "--",
                          f"{PREFIX}/bin/isobox-fcgi", "--conf", CONF],
                         env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.startswith("Status: 404"), out.stdout + out.stderr
    assert "FastCGI pool" in out.stdout


PROMETHEUS_DIR = os.path.join(REPO, "deploy", "prometheus")
ALERTS = os.path.join(PROMETHEUS_DIR, "isobox-alerts.yml")
DASHBOARD = os.path.join(REPO, "deploy", "grafana", "isobox-dashboard.json")


def test_alert_rules_check_and_fire_on_their_series():
    """The shipped alert rules load, and each fires on the series it is
    about and not on a healthy host's (isobox-alerts.test.yml)."""
    for args in (["check", "rules", "isobox-alerts.yml"], ["test", "rules", "isobox-alerts.test.yml"]):
        done = subprocess.run(["promtool", *args], cwd=PROMETHEUS_DIR, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr


def test_dashboard_and_alerts_ask_only_for_what_isobox_exports(tmp_path):
    families = set(re.findall(r'"(isobox_\w+)"', open(os.path.join(REPO, "fcgi", "metrics.c")).read()))
    dashboard = json.load(open(DASHBOARD))
    assert dashboard["__inputs"][0]["pluginId"] == "prometheus"  # importable: asks for its data source
    panel_exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    rule_exprs = [r["expr"] for g in yaml.safe_load(open(ALERTS))["groups"] for r in g["rules"]]
    for expr in panel_exprs + rule_exprs:
        for name in re.findall(r"\bisobox_\w+", expr):
            assert re.sub(r"_(bucket|count|sum)$", "", name) in families, (name, expr)
    # The panels' PromQL parses: promtool reads them as recording rules
    # (Grafana's variables given values).
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"isobox:panel_{i}", "expr": e.replace("$__rate_interval", "5m").replace("$instance", ".+")}
        for i, e in enumerate(panel_exprs)]}]}
    path = tmp_path / "panels.yml"
    path.write_text(yaml.safe_dump(rules))
    done = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
