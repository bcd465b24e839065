// Drives an installed `execache serve` with the official TypeScript SDK client, as an agent host does:
// initialize, tools/list, then the same execute_code call twice (a miss, then a hit).
// Usage: node drive-serve.mjs COMMAND [ARGS...]; prints one JSON object on stdout.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "execache-release-it", version: "1" });
await client.connect(transport, { timeout: 300000 });
const tools = (await client.listTools()).tools.map((tool) => tool.name);
const call = () => client.callTool({ name: "execute_code", arguments: {
  code: "return { sum: context.a + context.b }", context: { a: 2, b: 40 } } }, undefined, { timeout: 300000 });
const first = await call();
const second = await call();
const outcome = (result) => ({ isError: result.isError ?? false, result: result.structuredContent?.result ?? null,
  cache: result.structuredContent?.cache ?? null, text: result.content?.[0]?.text ?? null });
process.stdout.write(JSON.stringify({ server: client.getServerVersion(), tools, first: outcome(first),
  second: outcome(second) }) + "\n");
await client.close();
