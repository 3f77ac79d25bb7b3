// A host on the official TypeScript SDK for the fail-closed tests: connects over stdio to the
// command in argv (after "--"), declares sampling and elicitation with handlers that only count
// their calls, calls the tool "go", and prints one JSON line:
// {"handlerCalls": N, "text": "<the tool result's first text>"}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const sep = process.argv.indexOf("--");
const [command, ...args] = process.argv.slice(sep + 1);
let handlerCalls = 0;
const client = new Client(
  { name: "ts-host-e2e", version: "0" },
  { capabilities: { sampling: {}, elicitation: {} } },
);
client.setRequestHandler(CreateMessageRequestSchema, async () => {
  handlerCalls += 1;
  return { role: "assistant", content: { type: "text", text: "answered by the host" }, model: "host" };
});
client.setRequestHandler(ElicitRequestSchema, async () => {
  handlerCalls += 1;
  return { action: "accept", content: {} };
});
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
await client.connect(transport);
const result = await client.callTool({ name: "go", arguments: {} });
// One more round trip: the server wrote its stray lines before the result, and stdio keeps
// order, so by the time this answer arrives the host has dispatched every one of them.
await client.listTools();
console.log(JSON.stringify({ handlerCalls, text: result.content?.[0]?.text ?? null }));
await client.close();
