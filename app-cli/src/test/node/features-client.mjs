// Asks a server for its resources, resource templates, prompts and completions with the split TypeScript SDK
// client (@modelcontextprotocol/client, pinned), in one protocol era; the lab server (LAB_FEATURES=1) directly, or
// execache serve in front of it.
// Usage: node features-client.mjs MODE PROMPT TRANSPORT TARGET...
//   MODE: legacy | pinned (2026-07-28); PROMPT: the name the lab's prompt greet is offered under
//   TRANSPORT: http URL | stdio COMMAND [ARGS...]
// Prints one JSON line: the capabilities and every answer; in the legacy era also the log messages of the lab's tool
// log after logging/setLevel, and the progress of its tool progress_steps as the SDK handed it on and as it arrived
// (the tools' names PROMPT's prefix and theirs).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [mode, prompt, transportKind, ...target] = process.argv.slice(2);
const versionNegotiation = mode === "legacy" ? { mode: "legacy" } : { mode: { pin: "2026-07-28" } };
const transport = transportKind === "http" ? new StreamableHTTPClientTransport(new URL(target[0]))
  : new StdioClientTransport({ command: target[0], args: target.slice(1), env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "execache-features-it", version: "1" }, { versionNegotiation });
// the answer without what only one era or one server adds
const plain = ({ _meta, resultType, ttlMs, cacheScope, ...rest }) => rest;
const out = { mode, transport: transportKind, cache: {} };
// execache's word on where a read came from, kept apart from the answer
const read = (name, answer) => { out.cache[name] = answer?._meta?.["dev.execache/cache"]?.status ?? null; return plain(answer); };
try {
  await client.connect(transport);
  out.era = client.getProtocolEra?.() ?? null;
  const capabilities = client.getServerCapabilities();
  out.capabilities = { resources: !!capabilities?.resources, prompts: !!capabilities?.prompts,
    completions: !!capabilities?.completions };
  out.resources = plain(await client.listResources());
  out.templates = plain(await client.listResourceTemplates());
  out.text = read("text", await client.readResource({ uri: "lab://notes/readme" }));
  out.blob = read("blob", await client.readResource({ uri: "lab://images/dot.png" }));
  out.room = read("room", await client.readResource({ uri: "lab://rooms/kiln" }));
  out.prompts = plain(await client.listPrompts());
  out.prompt = read("prompt", await client.getPrompt({ name: prompt, arguments: { person: "Ada", style: "formal" } }));
  out.rooms = plain(await client.complete({ ref: { type: "ref/resource", uri: "lab://rooms/{room}" },
    argument: { name: "room", value: "ki" } }));
  out.styles = plain(await client.complete({ ref: { type: "ref/prompt", name: prompt },
    argument: { name: "style", value: "f" } }));
  if (out.era === "legacy") {
    const tool = (name) => prompt.slice(0, prompt.length - "greet".length) + name;
    const logs = [];
    client.setNotificationHandler("notifications/message", (notification) => { logs.push(notification.params); });
    await client.setLoggingLevel("info");
    await client.callTool({ name: tool("log"), arguments: { level: "warning", logger: "db", data: { rows: 3, table: "t" } } });
    const steps = [];
    // what arrives, in the order it arrives: the SDK hands a progress step to onprogress a microtask later than it
    // settles an answer read in the same chunk, and drops a step it finds after the answer (typescript-sdk #2580)
    const wire = [];
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (message.method === "notifications/progress") {
        const { progressToken, ...step } = message.params;
        wire.push(step);
      } else if (message.method === undefined) {
        wire.push("answer");
      }
      deliver(message, extra);
    };
    await client.callTool({ name: tool("progress_steps"), arguments: { steps: 3 } },
      { onprogress: (step) => steps.push(step) });
    transport.onmessage = deliver;
    out.progress = steps;
    out.progressOnWire = wire;
    out.logs = logs;
  }
  try {
    await client.readResource({ uri: "lab://nowhere" });
    out.missing = "answered";
  } catch (error) {
    out.missing = { code: error?.code ?? null, message: String(error?.message ?? error) };
  }
} catch (error) {
  out.thrown = String(error?.stack ?? error);
}
process.stdout.write(JSON.stringify(out) + "\n");
await client.close().catch(() => {});
process.exit(0);
