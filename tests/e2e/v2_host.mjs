// A host on the TypeScript SDK v2 (@modelcontextprotocol/client) for the end-to-end tests:
// connects over stdio to the command after "--" (the proxy, or the server itself in the control
// run), negotiating as --mode says (`legacy`, the SDK's default, or `auto`: server/discover
// first, 2026-07-28 when the server speaks it), declares sampling and elicitation with handlers
// that only count their calls, calls the tool "go", and prints one JSON line:
// {"handlerCalls": N, "protocolVersion": "…", "text": "<the tool result's first text>"}.
// With mcp-consent in between, a handler call is the boundary leaking.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const sep = process.argv.indexOf("--");
const options = process.argv.slice(2, sep);
const mode = options[options.indexOf("--mode") + 1] ?? "legacy";
const [command, ...args] = process.argv.slice(sep + 1);
let handlerCalls = 0;
const client = new Client(
  { name: "v2-e2e-host", version: "1.0.0" },
  {
    capabilities: { sampling: {}, elicitation: { form: {} } },
    versionNegotiation: { mode },
  },
);
client.setRequestHandler("sampling/createMessage", async () => {
  handlerCalls += 1;
  return { role: "assistant", content: { type: "text", text: "answered by the host" }, model: "host" };
});
client.setRequestHandler("elicitation/create", async () => {
  handlerCalls += 1;
  return { action: "accept", content: { note: "answered by the host" } };
});
await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
const result = await client.callTool({ name: "go", arguments: {} });
console.log(
  JSON.stringify({
    handlerCalls,
    protocolVersion: client.getNegotiatedProtocolVersion() ?? null,
    text: result.content?.[0]?.text ?? null,
  }),
);
await client.close();
