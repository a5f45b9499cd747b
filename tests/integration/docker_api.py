"""The few dockerd questions the tests ask often, through its API socket
rather than the docker CLI. The tests poll these (wait_until, every test's
quiet_host): a `docker ps` starts a Go binary each time, about 51 ms of the host's
CPU, which on a 2-core host with three shards at once was the suite's own
tax on every sandbox it waited for. The same list from the API: 0.6 ms."""
import http.client
import json
import socket
import urllib.parse

SOCKET = "/var/run/docker.sock"


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, timeout):
        super().__init__("localhost", timeout=timeout)

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(SOCKET)


def get(path, query=None, timeout=30):
    """GET an API path; its JSON answer, or RuntimeError on any other status."""
    if query:
        path += "?" + urllib.parse.urlencode(query)
    conn = _UnixConnection(timeout)
    try:
        conn.request("GET", path)
        answer = conn.getresponse()
        body = answer.read()
    finally:
        conn.close()
    if answer.status != 200:
        raise RuntimeError(f"dockerd: GET {path}: {answer.status} {body[:200]!r}")
    return json.loads(body)


def containers(*labels, running=False):
    """The containers carrying every label ("key=value" or "key"), newest
    first as `docker ps` lists them: dicts with id (12 hex digits, as the
    CLI prints it), name, state and labels."""
    query = {"filters": json.dumps({"label": list(labels)})}
    if not running:
        query["all"] = "1"
    return [{"id": c["Id"][:12], "name": c["Names"][0].lstrip("/") if c.get("Names") else "",
             "state": c.get("State", ""), "labels": c.get("Labels") or {}}
            for c in get("/containers/json", query)]
