// The official TypeScript SDK server (@modelcontextprotocol/sdk 1.x McpServer, pinned) over stdio,
// offering one trivial tool: the baseline SpeedReport compares serve's stdio hits with.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "ts-baseline", version: "1" });
server.registerTool("trivial", { description: "Answers at once." },
  async () => ({ content: [{ type: "text", text: "{\"result\":2}" }], structuredContent: { result: 2 } }));
await server.connect(new StdioServerTransport());
