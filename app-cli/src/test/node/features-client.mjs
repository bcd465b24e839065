// Asks a server for its resources, resource templates, prompts and completions with the split TypeScript SDK
// client (@modelcontextprotocol/client, pinned), in one protocol era; the lab server (LAB_FEATURES=1) directly, or
// execache serve in front of it.
// Usage: node features-client.mjs MODE PROMPT TRANSPORT TARGET...
//   MODE: legacy | pinned (2026-07-28); PROMPT: the name the lab's prompt greet is offered under
//   TRANSPORT: http URL | stdio COMMAND [ARGS...]
// Prints one JSON line: the capabilities and every answer; the log messages of the lab's tool log (legacy: after
// logging/setLevel; 2026-07-28: the call asks for its level in _meta), the progress of its tool progress_steps (legacy)
// as the SDK handed it on and as it arrived, and the notifications the lab sends outside any answer (a tool's
// description changed, resources/updated of a subscribed resource, resources and prompts list_changed): legacy on the
// session, 2026-07-28 on a subscriptions/listen stream: over HTTP asked as a plain request, on stdio with the client's
// listen(), closed at the end (the tools' names PROMPT's prefix and theirs).
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
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What the lab sends outside any answer, as the client hears it: a tool's list changed, the subscribed readme updated,
 * the resources' and prompts' lists changed; then, unsubscribed, the lab sends no update (it says whether it sent one).
 */
async function notifications(tool) {
  const heard = { tools: 0, resources: 0, prompts: 0, updated: [] };
  const uri = "lab://notes/readme";
  let acknowledged = null;
  let subscription = null;
  if (out.era === "legacy") {
    await client.subscribeResource({ uri });
  } else if (transportKind === "stdio") {
    subscription = await client.listen({ toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true,
      resourceSubscriptions: [uri] });
    acknowledged = { notifications: subscription.honoredFilter };
  } else {
    client.setNotificationHandler("notifications/subscriptions/acknowledged", (notification) => {
      acknowledged = notification.params;
    });
    // the answer is the stream itself: it stays open until the client closes
    client.request({ method: "subscriptions/listen", params: { notifications: { toolsListChanged: true,
      promptsListChanged: true, resourcesListChanged: true, resourceSubscriptions: [uri] } } },
      { timeout: 300_000 }).catch(() => {});
    for (let i = 0; i < 600 && acknowledged === null; i++) {
      await pause(100);
    }
  }
  client.setNotificationHandler("notifications/tools/list_changed", () => { heard.tools++; });
  client.setNotificationHandler("notifications/resources/list_changed", () => { heard.resources++; });
  client.setNotificationHandler("notifications/prompts/list_changed", () => { heard.prompts++; });
  client.setNotificationHandler("notifications/resources/updated", (notification) => {
    const { _meta, ...params } = notification.params;
    heard.updated.push(params);
  });
  await client.callTool({ name: tool("set_description"), arguments: { tool: "get_count",
    description: `The counter, described at ${Date.now()}.`, notify: true } });
  const sent = {};
  for (const method of ["notifications/resources/updated", "notifications/resources/list_changed",
    "notifications/prompts/list_changed"]) {
    sent[method] = JSON.parse((await client.callTool({ name: tool("notify"), arguments: { method, uri } })).content[0].text).sent;
  }
  for (let i = 0; i < 600 && (heard.tools === 0 || heard.resources === 0 || heard.prompts === 0
      || heard.updated.length === 0); i++) {
    await pause(100);
  }
  let sentAfter = null;
  let closed = null;
  if (out.era === "legacy" || subscription !== null) {
    if (subscription !== null) {
      // notifications/cancelled for the listen's id: execache ends the stream and the lab's subscription
      await subscription.close();
      closed = await subscription.closed;
    } else {
      await client.unsubscribeResource({ uri });
    }
    sentAfter = JSON.parse((await client.callTool({ name: tool("notify"),
      arguments: { method: "notifications/resources/updated", uri } })).content[0].text).sent;
  }
  return { acknowledged: acknowledged?.notifications ?? null, sent, sentAfterUnsubscribe: sentAfter, closed,
    tools: heard.tools > 0, resources: heard.resources > 0, prompts: heard.prompts > 0, updated: heard.updated };
}
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
  const tool = (name) => prompt.slice(0, prompt.length - "greet".length) + name;
  const logs = [];
  client.setNotificationHandler("notifications/message", (notification) => { logs.push(notification.params); });
  const logged = { level: "warning", logger: "db", data: { rows: 3, table: "t" } };
  if (out.era === "legacy") {
    await client.setLoggingLevel("info");
    await client.callTool({ name: tool("log"), arguments: logged });
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
  } else {
    // a message below the call's level is not passed on; the other comes on the call's own stream
    await client.callTool({ name: tool("log"), arguments: { ...logged, level: "debug" },
      _meta: { "io.modelcontextprotocol/logLevel": "info" } });
    await client.callTool({ name: tool("log"), arguments: logged, _meta: { "io.modelcontextprotocol/logLevel": "info" } });
  }
  // the lab's messages, without what execache logs of the changes below
  out.logs = [...logs];
  out.notified = await notifications(tool);
  try {
    await client.readResource({ uri: "lab://nowhere" });
    out.missing = "answered";
  } catch (error) {
    out.missing = { code: error?.code ?? null, message: String(error?.message ?? error), data: error?.data ?? null };
  }
} catch (error) {
  out.thrown = String(error?.stack ?? error);
}
process.stdout.write(JSON.stringify(out) + "\n");
await client.close().catch(() => {});
process.exit(0);
