// The MCP SDK's own client against isobox's /mcp: connect (initialize and
// its notification), list the tools, then call them. Prints one JSON
// object for test_mcp.py to check.
//   node mcp_client.mjs execute|sessions http://127.0.0.1:8090 [bearer-key]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, base, key] = process.argv.slice(2);
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
const tool = (name) => (args) => client.callTool({ name, arguments: args });

if (mode === "execute") {
  const call = tool("execute");
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
  // With onprogress the SDK sends a progressToken: the output comes as
  // progress notifications while the program runs, then the result.
  const progress = [];
  out.streamed = await client.callTool(
    { name: "execute", arguments: { language: "python",
      code: "import sys, time\nfor i in range(3):\n    print('tick', i)\n    time.sleep(0.5)\nprint('done', file=sys.stderr)" } },
    undefined, { onprogress: (p) => progress.push({ ...p, at: Date.now() }) });
  out.streamedAt = Date.now();
  out.progress = progress;
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
    out.unknownTool = "no error";
  } catch (e) {
    out.unknownTool = { code: e.code, message: e.message };
  }
  out.ping = await client.ping();
} else {
  // A kernel session, driven through every session tool, then a shell one.
  const [create, exec, write, read, list, close] = ["session_create", "session_exec", "session_files_write",
    "session_files_read", "session_files_list", "session_close"].map(tool);
  out.kernel = await create({ language: "python", type: "kernel", idleTimeoutMs: 120000 });
  const session = out.kernel.structuredContent?.id;
  out.assign = await exec({ session, code: "x = 21" });
  out.value = await exec({ session, code: "x * 2" });
  out.figure = await exec({ session, code: "import matplotlib.pyplot as plt\nplt.plot([1, 2], [3, 4])\nprint('drawn')" });
  out.raised = await exec({ session, code: "undefined_name + 1" });
  out.write = await write({ session, path: "data/in.csv", content: "a,b\n1,2\n" });
  out.readBack = await exec({ session, code: "open('data/in.csv').read().count('\\n')" });
  out.writeBinary = await write({ session, path: "blob.bin", content: Buffer.from([0, 1, 2, 255, 254]).toString("base64"),
                                  encoding: "base64" });
  out.readText = await read({ session, path: "data/in.csv" });
  out.readBinary = await read({ session, path: "blob.bin" });
  out.listTop = await list({ session });
  out.listData = await list({ session, path: "data" });
  out.escape = await read({ session, path: "../../etc/passwd" });
  out.noSession = await exec({ session: "0000000000000000000000000000dead", code: "1" });
  out.missingSession = await exec({ code: "1" });
  out.close = await close({ session });
  out.afterClose = await exec({ session, code: "x" });
  out.shell = await create({ language: "python" });
  const shell = out.shell.structuredContent?.id;
  await write({ session: shell, path: "notes.txt", content: "kept" });
  out.shellStep = await exec({ session: shell, code: "import sys; print(open('notes.txt').read(), *sys.argv[1:])",
                               args: ["arg"] });
  out.shellFiles = await exec({ session: shell, files: [{ name: "run.py", content: "import lib; print(lib.K)" },
                                                        { name: "lib.py", content: "K = 7" }] });
  out.shellClose = await close({ session: shell });
}
await client.close();
console.log(JSON.stringify(out));
