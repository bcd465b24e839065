// Drives `execache serve` with the split TypeScript SDK client (@modelcontextprotocol/client, pinned),
// in each way it negotiates the protocol era.
// Usage: node eras-client.mjs MODE TRANSPORT TARGET...
//   MODE: legacy | auto | pinned (2026-07-28) | cancel (pinned; aborts a running call when told to on stdin)
//   TRANSPORT: http URL [TOKEN] | stdio COMMAND [ARGS...]
// Prints one JSON line: what the client negotiated and what the calls answered.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createInterface } from "node:readline";

const [mode, transportKind, ...target] = process.argv.slice(2);
const print = (event) => process.stdout.write(JSON.stringify(event) + "\n");
const versionNegotiation = mode === "legacy" ? { mode: "legacy" } : mode === "auto" ? { mode: "auto" }
  : { mode: { pin: "2026-07-28" } };
const transport = transportKind === "http"
  ? new StreamableHTTPClientTransport(new URL(target[0]),
    target[1] ? { requestInit: { headers: { Authorization: `Bearer ${target[1]}` } } } : {})
  : new StdioClientTransport({ command: target[0], args: target.slice(1), env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "execache-eras-it", version: "1" }, { versionNegotiation });
const out = { mode, transport: transportKind };
if (mode === "cancel") {
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  await client.connect(transport);
  const abort = new AbortController();
  const running = client.callTool({ name: "execute_code", arguments: { code: "while (true) {}", timeout: 25 } },
    { timeout: 120000, signal: abort.signal })
    .then((result) => ({ answered: result }), (error) => ({ rejected: String(error?.message ?? error) }));
  print({ event: "calling" });
  await lines.next();
  abort.abort("the agent changed its mind");
  print({ event: "cancelled", how: await running });
  await lines.next();
  const stats = await client.callTool({ name: "cache_stats", arguments: {} });
  print({ event: "stats", stats: stats.structuredContent });
  await client.close();
  process.exit(0);
}
try {
  await client.connect(transport);
  out.protocolVersion = client.getNegotiatedProtocolVersion?.() ?? null;
  out.era = client.getProtocolEra?.() ?? null;
  const tools = await client.listTools();
  out.tools = tools.tools.map((tool) => tool.name).sort();
  out.listTtlMs = tools.ttlMs ?? null;
  out.listCacheScope = tools.cacheScope ?? null;
  const code = `return {sum: context.a + context.b, mode: ${JSON.stringify(mode)}}`;
  const progress = [];
  const first = await client.callTool({ name: "execute_code", arguments: { code, context: { a: 1, b: 2 } } },
    { timeout: 120000, onprogress: (update) => progress.push(update) });
  const second = await client.callTool({ name: "execute_code", arguments: { code, context: { b: 2, a: 1 } } },
    { timeout: 120000 });
  out.first = { isError: first.isError ?? false, structured: first.structuredContent ?? null };
  out.second = { isError: second.isError ?? false, structured: second.structuredContent ?? null };
  const slow = await client.callTool({ name: "execute_code", arguments: {
    code: `await new Promise((resolve) => setTimeout(resolve, 1600)); return ${JSON.stringify(mode)} + Date.now()` } },
  { timeout: 120000, onprogress: (update) => progress.push(update) });
  out.slow = { isError: slow.isError ?? false };
  out.progress = progress.length;
  if (out.era === "legacy") {
    await client.ping(); // ping is not a method of the 2026-07-28 era
  }
  out.done = true;
} catch (error) {
  out.thrown = String(error?.stack ?? error?.message ?? error);
} finally {
  await client.close().catch(() => {});
}
print(out);
process.exit(0);
