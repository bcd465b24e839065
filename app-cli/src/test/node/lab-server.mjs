// A small MCP server of the tests' own: it counts the calls it serves, so a test can tell a
// cached answer from a fresh one, and it can change a tool's description while it runs,
// with or without notifications/tools/list_changed. It records the calls it was told to cancel
// (notifications/cancelled). With LAB_HOLD_RESTART set to a file, it makes the file when it
// starts, and a start that finds the file never answers initialize: a server that is restarting.
// With LAB_CACHE_HINT set (no-cache or cache), get_count's results say so in _meta as SEP-2419's cache_hint.
import { existsSync, writeFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const readOnly = { readOnlyHint: true };
const object = (properties = {}) => ({ type: "object", properties });
const tools = {
  get_count: { description: "The counter.", inputSchema: object({ who: { type: "string" } }), annotations: readOnly },
  get_other: { description: "Another read.", inputSchema: object(), annotations: readOnly },
  private_items: { description: "The items of the account its environment names (LAB_ACCOUNT).", inputSchema: object(), annotations: readOnly },
  increment: { description: "Adds one to the counter.", inputSchema: object(), annotations: { readOnlyHint: false } },
  fail: { description: "Always fails.", inputSchema: object(), annotations: readOnly },
  crash: { description: "Dies in the middle of the call.", inputSchema: object(), annotations: readOnly },
  pid: { description: "This process's id.", inputSchema: object() },
  sleep: { description: "Answers after ms milliseconds.", inputSchema: object({ ms: { type: "number" } }), annotations: readOnly },
  slow_write: {
    description: "Adds one to the writes after ms milliseconds, unless it is cancelled first.",
    inputSchema: object({ ms: { type: "number" } }),
    annotations: { readOnlyHint: false },
  },
  cancellations: {
    description: "The calls cancelled so far and the writes made, once one was cancelled or after wait_ms.",
    inputSchema: object({ wait_ms: { type: "number" } }),
  },
  set_description: {
    description: "Changes a tool's description; notify: send tools/list_changed.",
    inputSchema: object({ tool: { type: "string" }, description: { type: "string" }, notify: { type: "boolean" } }),
    annotations: { readOnlyHint: false },
  },
};
let counter = 0;
let writes = 0;
const served = {};
const cancelled = [];
let cancelledOne = () => {};
const oneCancelled = new Promise((resolve) => (cancelledOne = resolve));

const hold = process.env.LAB_HOLD_RESTART;
if (hold) {
  if (existsSync(hold)) {
    console.error("lab server holding its start");
    // it ends with its client, as a connected server does
    process.stdin.on("end", () => process.exit(0));
    process.stdin.resume();
    await new Promise(() => {});
  }
  writeFileSync(hold, "started once");
}

const server = new Server({ name: "lab", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: Object.entries(tools).map(([name, tool]) => ({ name, ...tool })),
}));
server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const name = request.params.name;
  const args = request.params.arguments ?? {};
  served[name] = (served[name] ?? 0) + 1;
  const text = (value) => ({ content: [{ type: "text", text: JSON.stringify(value) }] });
  switch (name) {
    case "get_count": {
      const answer = text({ counter, served: served[name], who: args.who ?? null });
      return process.env.LAB_CACHE_HINT ? { ...answer, _meta: { cache_hint: process.env.LAB_CACHE_HINT } } : answer;
    }
    case "get_other":
      return text({ served: served[name] });
    case "private_items":
      return text({ account: process.env.LAB_ACCOUNT ?? null, items: [`${process.env.LAB_ACCOUNT}'s item`], served: served[name], pid: process.pid });
    case "increment":
      counter += 1;
      return text({ counter });
    case "fail":
      return { ...text({ served: served[name] }), isError: true };
    case "crash":
      process.kill(process.pid, "SIGKILL");
      return new Promise(() => {});
    case "sleep":
      console.error(`sleeping ${args.ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, args.ms));
      return text({ slept: args.ms, pid: process.pid });
    case "slow_write": {
      console.error(`writing in ${args.ms} ms`);
      const done = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(true), args.ms);
        extra.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve(false);
        });
      });
      if (!done) {
        cancelled.push({ tool: name, reason: String(extra.signal.reason ?? "") });
        cancelledOne();
        return text({ cancelled: true });
      }
      writes += 1;
      return text({ writes });
    }
    case "cancellations":
      await Promise.race([oneCancelled, new Promise((resolve) => setTimeout(resolve, args.wait_ms ?? 0))]);
      return text({ cancelled, writes });
    case "pid":
      return text({ pid: process.pid });
    case "set_description":
      tools[args.tool].description = args.description;
      if (args.notify) {
        await server.sendToolListChanged();
      }
      return text({ changed: args.tool });
    default:
      return { ...text({ unknown: name }), isError: true };
  }
});
console.error("lab server ready");
await server.connect(new StdioServerTransport());
