"""POST /mcp: the Model Context Protocol, driven by the official TypeScript
SDK's client (from npm, in tests/integration/js), and by hand for what it
does not send. (The protocol's conformance suite, @modelcontextprotocol/
conformance 0.1.16, needs Node.js 22's fs.globSync; this host's is 20.)"""
import base64
import json
import os
import subprocess

import pytest

from conftest import URL, raw_request
from tenants_util import call, new_key, reload_pool, tenants_file

JS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "js")
ACCEPT = "application/json, text/event-stream"


def rpc(body, headers=None):
    """One POST /mcp: (status, headers, parsed body or None)."""
    h = {"Content-Type": "application/json", "Accept": ACCEPT, **(headers or {})}
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    status, got, raw = raw_request("POST", "/mcp", data, h)
    return status, got, json.loads(raw) if raw else None


def test_the_sdk_client_connects_lists_and_calls_execute():
    out = subprocess.run(["node", "mcp_client.mjs", URL], cwd=JS_DIR, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["server"]["name"] == "isobox" and r["capabilities"]["tools"] == {"listChanged": False}, r
    assert r["sessionId"] is None  # stateless
    [tool] = r["tools"]
    assert tool["name"] == "execute" and tool["inputSchema"]["required"] == ["language"], tool
    assert "python" in tool["description"] and "code" in tool["inputSchema"]["properties"]

    hello = r["hello"]
    assert hello["content"] == [{"type": "text", "text": "42\n"}] and hello["isError"] is False, hello
    assert hello["structuredContent"]["run"]["stdout"] == "42\n"
    assert r["stdinArgs"]["content"][0]["text"] == "in a b\n", r["stdinArgs"]

    bad = r["compileError"]
    assert bad["isError"] is True and "run" not in bad["structuredContent"], bad
    assert "[compile stderr]" in bad["content"][0]["text"] and "undefined_name" in bad["content"][0]["text"]

    for name, code in (("unknownLanguage", "unknown_language"), ("unknownField", "unknown_field")):
        refused = r[name]
        assert refused["isError"] is True, refused
        assert refused["structuredContent"]["error"]["code"] == code, refused
        assert refused["content"][0]["text"].startswith(code + ": "), refused

    plot = r["plot"]
    assert plot["isError"] is False and plot["content"][0]["text"] == "saved\n", plot
    images = [c for c in plot["content"] if c["type"] == "image"]
    assert len(images) == 1 and images[0]["mimeType"] == "image/png", plot["content"]
    assert base64.b64decode(images[0]["data"]).startswith(b"\x89PNG\r\n\x1a\n")

    assert r["unknownTool"]["code"] == -32602, r["unknownTool"]
    assert r["ping"] == {}


def test_the_tools_as_function_definitions():
    """GET /v1/tools: the MCP tool in the OpenAI-style shape; its arguments,
    posted to /execute as they are, run."""
    status, _, body = rpc({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    mcp_tool = body["result"]["tools"][0]
    status, _, raw = raw_request("GET", "/v1/tools")
    tools = json.loads(raw)["tools"]
    assert status == 200 and tools == [{"type": "function", "function": {
        "name": "execute", "description": mcp_tool["description"], "parameters": mcp_tool["inputSchema"]}}], tools
    arguments = {"language": "python", "code": "print('called')"}  # what a model would send
    status, _, raw = raw_request("POST", "/execute", json.dumps(arguments), {"Content-Type": "application/json"})
    assert status == 200 and json.loads(raw)["run"]["stdout"] == "called\n"


def test_the_protocol_by_hand():
    status, headers, body = rpc({"jsonrpc": "2.0", "id": "a", "method": "initialize",
                                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                            "clientInfo": {"name": "t", "version": "1"}}})
    assert status == 200 and headers["Content-Type"].startswith("application/json"), body
    assert body["id"] == "a" and body["result"]["protocolVersion"] == "2025-06-18", body
    assert "Mcp-Session-Id" not in headers
    # A version it does not speak: it offers its newest.
    _, _, body = rpc({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "1999-01-01", "capabilities": {},
                                 "clientInfo": {"name": "t", "version": "1"}}})
    assert body["result"]["protocolVersion"] == "2025-11-25", body
    # A notification: 202, no body.
    status, _, body = rpc({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert status == 202 and body is None
    # Not JSON, not JSON-RPC, a batch, no method, an unknown method.
    status, _, body = rpc(b"{not json")
    assert status == 400 and body["error"]["code"] == -32700 and body["id"] is None, body
    assert body["error"]["data"]["code"] == "bad_json" and body["error"]["data"]["requestId"]
    status, _, body = rpc({"id": 1, "method": "ping"})
    assert status == 400 and body["error"]["code"] == -32600, body
    status, _, body = rpc([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    assert status == 400 and body["error"]["code"] == -32600 and "batch" in body["error"]["message"], body
    status, _, body = rpc({"jsonrpc": "2.0", "id": 1, "method": "resources/list"})
    assert status == 200 and body["id"] == 1 and body["error"]["code"] == -32601, body
    status, _, body = rpc({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "execute", "arguments": "print(1)"}})
    assert status == 200 and body["error"]["code"] == -32602, body
    status, _, body = rpc({"jsonrpc": "2.0", "id": None, "method": "ping"})
    assert status == 400 and body["error"]["code"] == -32600, body
    # The transport: a version header it does not speak, a form, a GET.
    status, _, body = rpc({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"MCP-Protocol-Version": "2099-01-01"})
    assert status == 400 and body["error"]["code"] == -32600, body
    status, _, body = rpc(b"x=1", {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 415 and body["error"]["data"]["code"] == "unsupported_media_type", body
    status, headers, _ = raw_request("GET", "/mcp", None, {"Accept": "text/event-stream"})
    assert status == 405 and headers["Allow"] == "POST", headers


# Attacks, to be listed in docs/AUDIT.md (@attack) at the next run of all
# three passes: a web page (DNS rebinding or a cross-site Origin) driving
# /mcp on the user's machine; a caller without a key, or asking for what
# its tenant may not have.
def test_a_page_elsewhere_cannot_drive_mcp():
    call_ = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
             "params": {"name": "execute", "arguments": {"language": "python", "code": "print('ran')"}}}
    status, _, body = rpc(call_, {"Origin": "http://evil.example"})
    assert status == 403 and body["error"]["data"]["code"] == "forbidden", body
    status, _, body = rpc(call_, {"Host": "evil.example:8090"})
    assert status == 421 and "ran" not in json.dumps(body), body


@pytest.fixture(scope="module")
def key():
    with tenants_file("tenants:\n  agent:\n    requestsPerMinute: 0\n    network: false\n"):
        k, _ = new_key("agent")
        reload_pool()
        yield k


def test_mcp_is_held_to_the_same_keys_and_tenants(key):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "execute", "arguments": {"language": "python", "code": "print('ran')"}}}
    h = {"Accept": ACCEPT}
    status, headers, answer = call("POST", "/mcp", body, headers=h)
    assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer"), answer
    status, _, answer = call("POST", "/mcp", body, key=key, headers=h)
    assert status == 200 and answer["result"]["content"][0]["text"] == "ran\n", answer
    body["params"]["arguments"]["network"] = True
    status, _, answer = call("POST", "/mcp", body, key=key, headers=h)
    assert status == 200 and answer["result"]["isError"] is True, answer
    assert answer["result"]["structuredContent"]["error"]["code"] == "network_disabled", answer
