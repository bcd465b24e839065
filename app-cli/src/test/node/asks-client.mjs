// A url server that asks the agent, through execache serve: the split TypeScript SDK client
// (@modelcontextprotocol/client, pinned) in one protocol era, declaring sampling, elicitation and roots, calls the HTTP
// lab's (http-lab-server.mjs --asks) tools that ask, answering with its handlers (in the 2026-07-28 era the SDK answers
// input_required results and retries by itself); then it cancels a long sleep at the lab once the lab has begun it.
// Usage: node asks-client.mjs MODE SERVER SLEEP_MS TRANSPORT TARGET...
//   MODE: legacy | pinned (2026-07-28); SERVER: the lab's name under servers:; SLEEP_MS: the cancelled sleep's ms,
//   which names it at the lab; TRANSPORT: http URL | stdio COMMAND [ARGS...]
// Prints one JSON line: the answers, their cache status, what the client was asked, the lab's record of the sleeps
// and what execache keeps of a finished and of the cancelled sleep; in the legacy era at the 2026-07-28 lab, its prompt
// and resource that ask first; in every run, a tool the lab does not list and one execache leaves out.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [mode, server, sleepMs, transportKind, ...target] = process.argv.slice(2);
const versionNegotiation = mode === "legacy" ? { mode: "legacy" } : { mode: { pin: "2026-07-28" } };
const transport = transportKind === "http" ? new StreamableHTTPClientTransport(new URL(target[0]))
  : new StdioClientTransport({ command: target[0], args: target.slice(1), env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "execache-asks-it", version: "1" },
  { versionNegotiation, capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } });
const out = { mode, asked: { sampling: [], elicitation: [], roots: 0 }, cache: {} };
client.setRequestHandler("sampling/createMessage", async (request) => {
  out.asked.sampling.push(request.params);
  return { role: "assistant", model: "test-model", stopReason: "endTurn",
    content: { type: "text", text: `sampled ${out.asked.sampling.length}` } };
});
client.setRequestHandler("elicitation/create", async (request) => {
  out.asked.elicitation.push(request.params);
  return { action: "accept", content: { name: "Ada Lovelace" } };
});
client.setRequestHandler("roots/list", async () => {
  out.asked.roots++;
  return { roots: [{ uri: "file:///work/project", name: "project" }] };
});
const tool = (name) => `${server}__${name}`;
const parsed = (answer) => JSON.parse(answer.content[0].text);
const call = async (key, name, args = {}) => {
  const answer = await client.callTool({ name: tool(name), arguments: args });
  out.cache[key] = answer?._meta?.["dev.execache/cache"]?.status ?? null;
  out[key] = parsed(answer);
};
const callParsed = async (name) => parsed(await client.callTool({ name: tool(name), arguments: {} }));
const inspected = async (args) => (await client.callTool({ name: "inspect_tool_call",
  arguments: { tool: tool("sleep"), arguments: args } })).structuredContent;
const sleeps = async () => parsed(await client.callTool({ name: tool("sleeps"), arguments: {} })).sleeps
  .filter((sleep) => sleep.ms === Number(sleepMs));
const until = async (done) => {
  for (let i = 0; i < 1200; i++) {
    const now = await sleeps();
    if (done(now)) {
      return now;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the lab's sleeps never came to that: ${JSON.stringify(await sleeps())}`);
};
try {
  await client.connect(transport);
  out.era = client.getProtocolEra?.() ?? null;
  // the lab may still be joining serve (stdio): its tools come with list_changed
  for (let i = 0; i < 600 && !(await client.listTools()).tools.some((each) => each.name === tool("ask_sampling")); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await call("sampling", "ask_sampling", { prompt: "Say hi" });
  await call("samplingAgain", "ask_sampling", { prompt: "Say hi" });
  await call("elicitation", "ask_elicitation");
  await call("roots", "ask_roots");
  out.rootsAsked = out.asked.roots;
  if (mode === "legacy" && server === "modern") {
    // a prompt and a resource the 2026-07-28 lab answers input_required: asked as this era's own requests
    const before = out.asked.elicitation.length;
    out.prompt = (await client.getPrompt({ name: tool("ask_name"), arguments: {} })).messages[0].content.text;
    out.promptAgain = (await client.getPrompt({ name: tool("ask_name"), arguments: {} })).messages[0].content.text;
    out.read = (await client.readResource({ uri: "lab://asks/name" })).contents[0].text;
    out.readsAsked = out.asked.elicitation.length - before;
  }
  // a tool the lab does not list, called as directly; one it lists with a header declared wrongly stays out
  const unlisted = await client.callTool({ name: tool("unlisted_echo"), arguments: { say: "hi" } });
  out.cache.unlisted = unlisted?._meta?.["dev.execache/cache"]?.status ?? null;
  out.unlisted = parsed(unlisted);
  out.badHeader = await client.callTool({ name: tool("bad_header"), arguments: {} })
    .then((answer) => `answered ${JSON.stringify(answer)}`, (error) => `rejected: ${error?.message ?? error}`);
  if (mode === "legacy" && transportKind === "stdio" && server === "lab") {
    // the agent's roots change: a url server of a session is told (a 2026-07-28 one has no such notification)
    const before = (await callParsed("roots_changed")).rootsChanged;
    await client.sendRootsListChanged();
    for (let i = 0; i < 600 && (await callParsed("roots_changed")).rootsChanged === before; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    out.rootsChangedBy = (await callParsed("roots_changed")).rootsChanged - before;
  }
  // a short sleep is answered and kept (the lab marks sleep read-only): what a cancelled one must not be
  await call("slept", "sleep", { ms: 50 + Number(sleepMs) % 1000 });
  out.finished = await inspected({ ms: 50 + Number(sleepMs) % 1000 });
  const stop = new AbortController();
  const cancelled = client.callTool({ name: tool("sleep"), arguments: { ms: Number(sleepMs) } }, { signal: stop.signal })
    .then(() => "answered", (error) => `rejected: ${error?.message ?? error}`);
  await until((now) => now.length === 1);
  stop.abort("the test cancels it");
  out.cancelledCall = await cancelled;
  out.sleeps = await until((now) => now.length === 1 && now[0].state !== "started");
  out.cancelled = await inspected({ ms: Number(sleepMs) });
} catch (error) {
  out.thrown = String(error?.stack ?? error);
}
process.stdout.write(JSON.stringify(out) + "\n");
await client.close().catch(() => {});
process.exit(0);
