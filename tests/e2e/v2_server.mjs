// An MCP server on the TypeScript SDK v2 (@modelcontextprotocol/server) for the end-to-end tests:
// its tool "go" asks for input only through `inputRequired(...)` — a form elicitation ("confirm")
// and a sampling request ("draft") in one round — and answers with what it got back. Under
// 2026-07-28 the SDK returns them as an InputRequiredResult; under 2025-11-25 its legacy shim
// sends them to the client as elicitation/create and sampling/createMessage requests.
//
// Over HTTP, 2026-07-28 requests go to the SDK's per-request handler; 2025-era traffic goes to a
// sessionful Streamable HTTP transport (the SDK's documented routing with `isLegacyRequest`),
// since its default per-request legacy serving cannot send a request to the client.
//
//   node v2_server.mjs                 # stdio
//   node v2_server.mjs --http          # Streamable HTTP on 127.0.0.1, prints "listening on URL"
import { createServer } from "node:http";
import {
  acceptedContent,
  createMcpHandler,
  inputRequired,
  isLegacyRequest,
  McpServer,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";

const NOTE_SCHEMA = {
  type: "object",
  properties: { note: { type: "string", default: "from the person" } },
  required: ["note"],
};

function build() {
  const server = new McpServer({ name: "v2-e2e-server", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.registerTool("go", { description: "Asks a person and a model, then answers" }, async (ctx) => {
    const responses = ctx.mcpReq.inputResponses;
    const form = acceptedContent(responses, "confirm");
    const draft = responses?.draft;
    if (!form || !draft) {
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({ message: "Keep this note?", requestedSchema: NOTE_SCHEMA }),
          draft: inputRequired.createMessage({
            messages: [{ role: "user", content: { type: "text", text: "Say hello" } }],
            maxTokens: 10,
          }),
        },
      });
    }
    const text = Array.isArray(draft.content) ? draft.content[0]?.text : draft.content?.text;
    return { content: [{ type: "text", text: `note=${form.note} draft=${text} model=${draft.model}` }] };
  });
  return server;
}

// 2025-era sessions: one transport (and server instance) per Mcp-Session-Id.
const sessions = new Map();
async function legacy(request) {
  const known = sessions.get(request.headers.get("mcp-session-id") ?? "");
  if (known) return known.handleRequest(request);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
    onsessioninitialized: (id) => sessions.set(id, transport),
  });
  await build().connect(transport);
  return transport.handleRequest(request);
}

if (process.argv.includes("--http")) {
  const modern = createMcpHandler(build, { legacy: "reject" });
  const handler = { fetch: async (request) => ((await isLegacyRequest(request.clone())) ? legacy(request) : modern.fetch(request)) };
  const http = createServer(async (req, res) => {
    // node:http to the handler's web-standard fetch and back.
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
    }
    const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
    const hasBody = req.method !== "GET" && req.method !== "HEAD" && body !== undefined;
    const response = await handler.fetch(new Request(url, { method: req.method, headers, body: hasBody ? body : undefined }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) {
      for await (const chunk of response.body) res.write(chunk);
    }
    res.end();
  });
  http.listen(0, "127.0.0.1", () => {
    console.log(`listening on http://127.0.0.1:${http.address().port}/mcp`);
  });
} else {
  void serveStdio(build);
}
