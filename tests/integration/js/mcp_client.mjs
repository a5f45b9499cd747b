// The MCP SDK's own client against isobox's /mcp: connect (initialize and
// its notification), list the tools, call execute a few ways. Prints one
// JSON object for test_mcp.py to check.
//   node mcp_client.mjs http://127.0.0.1:8090 [bearer-key]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [base, key] = process.argv.slice(2);
const headers = key ? { Authorization: `Bearer ${key}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(base + "/mcp"), { requestInit: { headers } });
const client = new Client({ name: "isobox-test", version: "1.0.0" });
await client.connect(transport);

const out = {
  server: client.getServerVersion(),
  capabilities: client.getServerCapabilities(),
  sessionId: transport.sessionId ?? null,
  tools: (await client.listTools()).tools,
};
const call = (args) => client.callTool({ name: "execute", arguments: args });
out.hello = await call({ language: "python", code: "print(6 * 7)" });
out.stdinArgs = await call({ language: "python", code: "import sys; print(sys.stdin.read().strip(), *sys.argv[1:])",
                             stdin: "in", args: ["a", "b"] });
out.compileError = await call({ language: "c", code: "int main(void) { return undefined_name; }" });
out.unknownLanguage = await call({ language: "cobol-85", code: "x" });
out.unknownField = await call({ language: "python", code: "1", colour: "red" });
out.plot = await call({
  language: "python", outputs: ["*.png"],
  code: "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n" +
        "plt.plot([1, 2, 3], [1, 4, 9])\nplt.savefig('plot.png')\nprint('saved')",
});
try {
  await client.callTool({ name: "no_such_tool", arguments: {} });
  out.unknownTool = "no error";
} catch (e) {
  out.unknownTool = { code: e.code, message: e.message };
}
out.ping = await client.ping();
await client.close();
console.log(JSON.stringify(out));
