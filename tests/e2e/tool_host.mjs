// A host on the TypeScript SDK v2 (@modelcontextprotocol/client) that a test drives line by line,
// for the tool-call consent matrix (test_tool_matrix.py; tool_host.py is the same on the Python
// SDK, and documents the line protocol):
//
//   node tool_host.mjs --mode legacy|auto -- COMMAND [ARGS...]   (the proxy, over stdio)
//
// Prints {"ready": true, "protocolVersion": "…"} once connected and the tools are listed; then
// {"call": N, "name", "arguments"} calls a tool (without waiting for earlier calls) and prints
// {"call": N, "result": {…}} or {"call": N, "error": "…"}; {"cancel": N} aborts call N (the SDK
// sends notifications/cancelled) and prints {"cancelled": N}. Stdin closing ends the session.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const sep = process.argv.indexOf("--");
const options = process.argv.slice(2, sep);
const mode = options[options.indexOf("--mode") + 1] ?? "legacy";
const [command, ...args] = process.argv.slice(sep + 1);
const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

const client = new Client({ name: "tool-matrix-host", version: "1.0.0" }, { capabilities: {}, versionNegotiation: { mode } });
await client.connect(new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" }));
await client.listTools();
say({ ready: true, protocolVersion: client.getNegotiatedProtocolVersion() ?? null });

const calls = new Map();
const pending = new Set();
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  if (command.call !== undefined) {
    const abort = new AbortController();
    calls.set(command.call, abort);
    const done = client
      .callTool({ name: command.name, arguments: command.arguments ?? {} }, { signal: abort.signal, timeout: 120_000 })
      .then(
        (result) => say({ call: command.call, result }),
        (error) => say(abort.signal.aborted ? { cancelled: command.call } : { call: command.call, error: String(error) }),
      );
    pending.add(done);
    done.finally(() => pending.delete(done));
  } else if (command.cancel !== undefined) {
    calls.get(command.cancel)?.abort("cancelled by the test");
  }
}
await Promise.allSettled([...pending]);
await client.close();
