// The official TypeScript SDK 2.x server (@modelcontextprotocol/server, pinned) over node:http,
// stateless (createMcpHandler), offering one trivial tool: the baseline the HTTP benchmark
// compares serve --http's cache hits with. Usage: node ts-http-server.mjs PORT (0: any);
// prints "listening PORT" once it listens.
import { createServer } from "node:http";
import { McpServer, createMcpHandler } from "@modelcontextprotocol/server";

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "ts-baseline", version: "1" });
  server.registerTool("trivial", { description: "Answers at once." },
    async () => ({ content: [{ type: "text", text: "{\"result\":2}" }], structuredContent: { result: 2 } }));
  return server;
});

const http = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
  }
  const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers,
    body: req.method === "GET" || req.method === "HEAD" ? undefined : Buffer.concat(chunks) });
  const response = await handler.fetch(request);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
});
http.keepAliveTimeout = 60000;
http.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => console.log(`listening ${http.address().port}`));
