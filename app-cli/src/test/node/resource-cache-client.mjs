// Reads a lab's counting resources and prompt through execache serve twice with the split TypeScript SDK client
// (@modelcontextprotocol/client, pinned), in one protocol era, to show what the cache does with them (over HTTP the
// second read is another client's).
// Usage: node resource-cache-client.mjs MODE TRANSPORT TARGET...
//   MODE: legacy | pinned (2026-07-28); TRANSPORT: http URL | stdio COMMAND [ARGS...]
// Prints one JSON line: each answer's contents, its cache status (_meta["dev.execache/cache"]) and, in the pinned
// era, its ttlMs and cacheScope. On stdio (the command lab, LAB_FEATURES=1) it then has the lab say that
// lab://counter/reads was updated, waits for that notification to reach it, and reads once more.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [mode, transportKind, ...target] = process.argv.slice(2);
const versionNegotiation = mode === "legacy" ? { mode: "legacy" } : { mode: { pin: "2026-07-28" } };
const transport = transportKind === "http" ? new StreamableHTTPClientTransport(new URL(target[0]))
  : new StdioClientTransport({ command: target[0], args: target.slice(1), env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "execache-resource-cache-it", version: "1" }, { versionNegotiation });
// over HTTP a second agent reads again: in the 2026-07-28 era the SDK's client keeps a read itself for its ttlMs, so
// the first client's own second read would not reach execache
const other = transportKind === "http" ? new Client({ name: "execache-resource-cache-it-2", version: "1" },
  { versionNegotiation }) : client;
const seen = (answer) => ({
  contents: answer.contents ?? answer.messages,
  cache: answer._meta?.["dev.execache/cache"] ?? null,
  ttlMs: answer.ttlMs ?? null,
  cacheScope: answer.cacheScope ?? null,
});
const read = async (uri, by = client) => seen(await by.readResource({ uri }));
const out = { mode, transport: transportKind };
try {
  let told;
  const updated = new Promise((resolve) => { told = resolve; });
  client.setNotificationHandler("notifications/resources/updated", (notification) => told(notification.params));
  await client.connect(transport);
  if (other !== client) {
    await other.connect(new StreamableHTTPClientTransport(new URL(target[0])));
  }
  out.era = client.getProtocolEra?.() ?? null;
  out.first = await read("lab://counter/reads");
  out.second = await read("lab://counter/reads", other);
  out.live = await read("lab://counter/live");
  out.liveAgain = await read("lab://counter/live", other);
  if (transportKind === "stdio") {
    const greet = () => client.getPrompt({ name: "lab__greet", arguments: { person: "Ada", style: "counted" } });
    out.prompt = seen(await greet());
    out.promptAgain = seen(await greet());
    await client.callTool({ name: "lab__resource_changed", arguments: { uri: "lab://counter/reads" } });
    out.updated = await Promise.race([updated,
      new Promise((resolve) => setTimeout(() => resolve("no notifications/resources/updated within 60 s"), 60_000))]);
    out.afterUpdate = await read("lab://counter/reads");
  }
} catch (error) {
  out.thrown = String(error?.stack ?? error);
}
process.stdout.write(JSON.stringify(out) + "\n");
await client.close().catch(() => {});
await other.close().catch(() => {});
process.exit(0);
