// Does what an agent does with the official reference server (@modelcontextprotocol/server-everything, pinned), with
// the official TypeScript SDK client 1.x declaring sampling, elicitation and roots: the server directly, or execache
// serve in front of it (the server under its own names, prefix: false).
// Usage: node everything-client.mjs TRANSPORT TARGET...
//   TRANSPORT: http URL | stdio COMMAND [ARGS...]
//   EVERYTHING_CODE=1 (execache serve only): code inside execute_code calls the server's tools too
// Prints one JSON line: every answer, what the server asked the client, a subscribed resource's update, the server's
// log messages and its tasks (the client's experimental tasks of the 2025-11-25 era).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, CreateTaskResultSchema, ElicitRequestSchema, ListRootsRequestSchema,
  LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [transportKind, ...target] = process.argv.slice(2);
const transport = transportKind === "http" ? new StreamableHTTPClientTransport(new URL(target[0]))
  : new StdioClientTransport({ command: target[0], args: target.slice(1), env: { ...process.env }, stderr: process.env.CLIENT_STDERR ? "inherit" : "ignore" });
const client = new Client({ name: "execache-everything-it", version: "1" },
  { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } });
const out = { transport: transportKind, asked: { sampling: [], elicitation: [], roots: 0, fromCode: [] }, cache: {}, logs: [] };
// who the server's sampling requests come for: a call of the agent's, or code inside execute_code (through execache)
let askedFor = "agent";
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  if (askedFor === "code") {
    out.asked.fromCode.push(request.params);
    return { role: "assistant", model: "test-model", stopReason: "endTurn",
      content: { type: "text", text: "sampled for code" } };
  }
  out.asked.sampling.push(request.params);
  return { role: "assistant", model: "test-model", stopReason: "endTurn",
    content: { type: "text", text: `sampled ${out.asked.sampling.length}` } };
});
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  out.asked.elicitation.push(request.params);
  return { action: "accept", content: { name: "Ada Lovelace", check: true, email: "ada@example.com" } };
});
client.setRequestHandler(ListRootsRequestSchema, async () => {
  out.asked.roots++;
  return { roots: [{ uri: "file:///work/project", name: "project" }] };
});
client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
  out.logs.push(notification.params);
});
const updated = [];
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
  updated.push(notification.params);
});
// the answer without what only execache adds
const plain = ({ _meta, ...rest }) => rest;
const call = async (name, key, args, options) => {
  out.step = name;
  const answer = await client.callTool({ name, arguments: args }, undefined, options);
  out.cache[key] = answer?._meta?.["dev.execache/cache"]?.status ?? null;
  return plain(answer);
};
try {
  await client.connect(transport);
  // a server behind execache joins a moment after initialize: wait for its tools (at most a minute)
  let tools = [];
  for (let i = 0; i < 600; i++) {
    tools = (await client.listTools()).tools;
    if (tools.some((tool) => tool.name === "echo") && tools.some((tool) => tool.name === "trigger-sampling-request")) {
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const own = new Set(["execute_code", "cache_stats", "invalidate_tool", "clear_cache", "search_tools", "describe_tools",
    "inspect_tool_call"]);
  out.tools = tools.filter((tool) => !own.has(tool.name)).map(({ _meta, ...tool }) => tool)
    .sort((a, b) => a.name.localeCompare(b.name));
  out.sampling = await call("trigger-sampling-request", "sampling", { prompt: "Say hi", maxTokens: 20 });
  out.samplingAgain = await call("trigger-sampling-request", "samplingAgain", { prompt: "Say hi", maxTokens: 20 });
  out.elicitation = await call("trigger-elicitation-request", "elicitation", {});
  out.roots = await call("get-roots-list", "roots", {});
  const steps = [];
  out.progressResult = await call("trigger-long-running-operation", "progress", { duration: 1, steps: 3 },
    { onprogress: (step) => steps.push(step) });
  out.progress = steps;
  out.echo = await call("echo", "echo", { message: "hello" });
  if (process.env.EVERYTHING_CODE === "1") {
    // through execache: code calls the server's tools; the second call of the long operation is answered from the
    // cache, and the server asks the agent during the last
    out.step = "execute_code";
    askedFor = "code";
    const steps = [];
    const run = await client.callTool({ name: "execute_code", arguments: { code: `
      const operation = tools.everything["trigger-long-running-operation"];
      const first = await operation({ duration: 0.2, steps: 2 });
      const again = await operation({ duration: 0.2, steps: 2 });
      const sampled = await tools.everything["trigger-sampling-request"]({ prompt: "Asked from code", maxTokens: 20 });
      return { first, again, sampled };` } }, undefined, { onprogress: (step) => steps.push(step), timeout: 120000 });
    askedFor = "agent";
    out.code = { isError: run.isError ?? false, run: run.structuredContent ?? run.content, progress: steps };
  }
  // a tool that must be called as a task (execution.taskSupport: required): the client's task stream polls tasks/get
  // and ends with tasks/result
  out.step = "tasks";
  const research = async (topic) => {
    const seen = [];
    for await (const message of client.experimental.tasks.callToolStream({ name: "simulate-research-query",
      arguments: { topic } })) {
      seen.push(message.type === "result" ? { type: "result", result: plain(message.result) }
        : message.task ? { type: message.type, status: message.task.status, taskId: message.task.taskId }
        : { type: message.type, error: String(message.error?.message ?? message.error) });
    }
    return seen;
  };
  const researched = await research("owls");
  const taskId = researched[0]?.taskId;
  out.tasks = {
    created: researched[0]?.status ?? null,
    last: researched.at(-1),
    oneId: researched.filter((message) => message.taskId).every((message) => message.taskId === taskId),
    listed: (await client.experimental.tasks.listTasks()).tasks.some((task) => task.taskId === taskId),
  };
  // the same call again (through execache a rule caches the tool's answers)
  const again = await research("owls");
  out.tasks.again = { created: again[0]?.status ?? null, last: again.at(-1) };
  const { task } = await client.request({ method: "tools/call", params: { name: "simulate-research-query",
    arguments: { topic: "gnats" }, task: { ttl: 60000 } } }, CreateTaskResultSchema);
  await client.experimental.tasks.cancelTask(task.taskId);
  out.tasks.cancelled = (await client.experimental.tasks.getTask(task.taskId)).status;
  if (transportKind === "http") {
    // another agent (its own session) is not told of this agent's tasks
    const other = new Client({ name: "execache-everything-it-other", version: "1" }, { capabilities: {} });
    await other.connect(new StreamableHTTPClientTransport(new URL(target[0])));
    out.tasks.other = {
      get: await other.experimental.tasks.getTask(taskId).then(() => "seen", (error) => String(error?.message)),
      listed: (await other.experimental.tasks.listTasks()).tasks.length,
    };
    await other.close();
  }
  out.step = "prompts";
  out.prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name).sort();
  out.prompt = plain(await client.getPrompt({ name: "args-prompt", arguments: { city: "Paris", state: "TX" } }));
  out.completion = plain(await client.complete({ ref: { type: "ref/prompt", name: "completable-prompt" },
    argument: { name: "department", value: "E" } }));
  out.resource = plain(await client.readResource({ uri: "demo://resource/dynamic/text/1" }));
  // a subscribed resource's updates: the server sends one at once when its simulated updates are turned on
  out.step = "subscribe";
  out.subscribed = plain(await client.subscribeResource({ uri: "demo://resource/dynamic/text/1" }));
  await call("toggle-subscriber-updates", "updatesOn", {});
  for (let i = 0; i < 300 && updated.length === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  out.updated = updated[0] ?? null;
  await call("toggle-subscriber-updates", "updatesOff", {});
  out.unsubscribed = plain(await client.unsubscribeResource({ uri: "demo://resource/dynamic/text/1" }));
  // log messages at the level the client set: the server sends one at once when its simulated logging is turned on
  out.step = "logging";
  await client.setLoggingLevel("debug");
  await call("toggle-simulated-logging", "loggingOn", {});
  const simulated = () => out.logs.some((log) => /(-level message|level-message)( - SessionId .*)?$/.test(String(log.data)));
  for (let i = 0; i < 300 && !simulated(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await call("toggle-simulated-logging", "loggingOff", {});
} catch (error) {
  out.thrown = `${transportKind} ${out.step ?? "connect"}: ${String(error?.stack ?? error)}`;
}
process.stdout.write(JSON.stringify(out) + "\n");
await client.close().catch(() => {});
process.exit(0);
