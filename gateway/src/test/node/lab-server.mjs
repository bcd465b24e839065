// A small MCP server of the tests' own: it counts the calls it serves, so a test can tell a
// cached answer from a fresh one, and it can change a tool's description while it runs,
// with or without notifications/tools/list_changed. It records the calls it was told to cancel
// (notifications/cancelled). With LAB_HOLD_RESTART set to a file, it makes the file when it
// starts, and a start that finds the file never answers initialize: a server that is restarting.
// With LAB_LIST_GATE set to a file, tools/list answers only once the file exists: a server that has said who it is
// and is slow to list its tools.
// With LAB_CACHE_HINT set (no-cache or cache), get_count's results say so in _meta as SEP-2419's cache_hint.
import { existsSync, writeFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema, SetLevelRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { featureCapabilities, notifyFeature, offerFeatures, progressSteps } from "./lab-features.mjs";

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
  trace_context: { description: "The W3C trace context (traceparent, tracestate) its call carried in _meta.", inputSchema: object() },
  sleep: {
    description: "Answers after ms milliseconds, unless it is cancelled first.",
    inputSchema: object({ ms: { type: "number" } }),
    annotations: readOnly,
  },
  slow_write: {
    description: "Adds one to the writes after ms milliseconds, unless it is cancelled first.",
    inputSchema: object({ ms: { type: "number" } }),
    annotations: { readOnlyHint: false },
  },
  cancellations: {
    description: "The calls cancelled so far and the writes made, once one was cancelled or after wait_ms.",
    inputSchema: object({ wait_ms: { type: "number" } }),
  },
  log: {
    description: "Sends one log message (notifications/message) with the level, logger and data given.",
    inputSchema: object({ level: { type: "string" }, logger: { type: "string" }, data: {} }),
  },
  progress_steps: {
    description: "Reports steps progress notifications (progress 1..steps of total steps) under the call's progress token, then answers the token it got.",
    inputSchema: object({ steps: { type: "number" } }),
  },
  log_levels: { description: "The levels the client set with logging/setLevel, in order.", inputSchema: object() },
  set_description: {
    description: "Changes a tool's description; notify: send tools/list_changed.",
    inputSchema: object({ tool: { type: "string" }, description: { type: "string" }, notify: { type: "boolean" } }),
    annotations: { readOnlyHint: false },
  },
};
// LAB_SHELVES=1: three shelves whose answers change only when put_on_shelf writes one (reads a run can be
// revalidated on), and shelf_calls, which says how many reads of each it served and the most in flight at once
if (process.env.LAB_SHELVES === "1") {
  Object.assign(tools, {
    shelf_a: { description: "What shelf a holds, after ms milliseconds.", inputSchema: object({ ms: { type: "number" } }), annotations: readOnly },
    shelf_b: { description: "What shelf b holds, after ms milliseconds.", inputSchema: object({ ms: { type: "number" } }), annotations: readOnly },
    shelf_c: { description: "What shelf c holds, after ms milliseconds.", inputSchema: object({ ms: { type: "number" } }), annotations: readOnly },
    put_on_shelf: {
      description: "Puts value on shelf (a, b or c).",
      inputSchema: object({ shelf: { type: "string" }, value: {} }),
      annotations: { readOnlyHint: false },
    },
    shelf_calls: { description: "The shelf reads served, by shelf, and the most that were in flight at once.", inputSchema: object() },
    // a read by argument and its cheap validator (as a file's read and its info): how often the shelf was written
    read_shelf: { description: "What a shelf holds.", inputSchema: { ...object({ shelf: { type: "string" } }), required: ["shelf"] }, annotations: readOnly },
    shelf_info: { description: "How many times a shelf was written.", inputSchema: { ...object({ name: { type: "string" } }), required: ["name"] }, annotations: readOnly },
  });
}
// LAB_EXTRA_TOOL names one more read-only tool, which answers its own name: a test picks a name that collides
const extraTool = process.env.LAB_EXTRA_TOOL;
if (extraTool) {
  tools[extraTool] = { description: "A tool whose name the test chose.", inputSchema: object(), annotations: readOnly };
}
let counter = 0;
const shelves = { a: "apples", b: "bread", c: "cheese" };
const shelfReads = { a: 0, b: 0, c: 0 };
const shelfWrites = { a: 0, b: 0, c: 0 };
const shelfInfos = { a: 0, b: 0, c: 0 };
let shelvesInFlight = 0;
let mostShelvesAtOnce = 0;
let writes = 0;
const served = {};
const cancelled = [];
const levels = [];
let cancelledOne = () => {};
const oneCancelled = new Promise((resolve) => (cancelledOne = resolve));

/** Waits ms milliseconds: true, or false when the call was cancelled first (and records that). */
async function unlessCancelled(ms, signal, tool) {
  const done = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(true), ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  if (!done) {
    cancelled.push({ tool, reason: String(signal.reason ?? "") });
    cancelledOne();
  }
  return done;
}

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

// LAB_FEATURES=1: it offers resources (a text one, a binary one, counters, a template), a prompt with arguments and
// completion, and the tools notify and resource_changed, which send notifications/resources/updated or .../list_changed
const features = process.env.LAB_FEATURES === "1";
const server = new Server({ name: "lab", version: "1.0.0" }, {
  capabilities: { tools: { listChanged: true }, logging: {}, ...(features ? featureCapabilities : {}) },
  instructions: "The lab counts the calls it serves.",
});
if (features) {
  offerFeatures(server);
  tools.notify = {
    description: "Sends the notification named: notifications/resources/updated for uri (while it is subscribed to), notifications/resources/list_changed or notifications/prompts/list_changed; answers whether it sent it.",
    inputSchema: object({ method: { type: "string" }, uri: { type: "string" } }),
  };
  tools.resource_changed = {
    description: "Says a resource changed: with uri, notifications/resources/updated for it; else notifications/resources/list_changed.",
    inputSchema: object({ uri: { type: "string" } }),
  };
}
// recorded, and every message sent whatever the level: the test reads what its client was asked
server.setRequestHandler(SetLevelRequestSchema, async (request) => {
  levels.push(request.params.level);
  return {};
});
server.setRequestHandler(ListToolsRequestSchema, async () => {
  const gate = process.env.LAB_LIST_GATE;
  while (gate && !existsSync(gate)) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { tools: Object.entries(tools).map(([name, tool]) => ({ name, ...tool })) };
});
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
    case "shelf_a":
    case "shelf_b":
    case "shelf_c": {
      const shelf = name.slice("shelf_".length);
      shelfReads[shelf] += 1;
      shelvesInFlight += 1;
      mostShelvesAtOnce = Math.max(mostShelvesAtOnce, shelvesInFlight);
      await new Promise((resolve) => setTimeout(resolve, args.ms ?? 0));
      shelvesInFlight -= 1;
      return text({ shelf, holds: shelves[shelf] });
    }
    case "put_on_shelf":
      shelves[args.shelf] = args.value;
      shelfWrites[args.shelf] += 1;
      return text({ put: args.shelf });
    case "read_shelf":
      shelfReads[args.shelf] += 1;
      return text({ shelf: args.shelf, holds: shelves[args.shelf] });
    case "shelf_info":
      shelfInfos[args.name] += 1;
      return text({ shelf: args.name, writes: shelfWrites[args.name] });
    case "shelf_calls": {
      const answer = text({ reads: shelfReads, infos: shelfInfos, mostAtOnce: mostShelvesAtOnce });
      mostShelvesAtOnce = 0;
      return answer;
    }
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
    case "sleep": {
      console.error(`sleeping ${args.ms} ms`);
      if (!(await unlessCancelled(args.ms, extra.signal, name))) {
        return text({ cancelled: true });
      }
      return text({ slept: args.ms, pid: process.pid });
    }
    case "slow_write": {
      console.error(`writing in ${args.ms} ms`);
      if (!(await unlessCancelled(args.ms, extra.signal, name))) {
        return text({ cancelled: true });
      }
      writes += 1;
      return text({ writes });
    }
    case "cancellations":
      await Promise.race([oneCancelled, new Promise((resolve) => setTimeout(resolve, args.wait_ms ?? 0))]);
      return text({ cancelled, writes });
    case "log": {
      const params = { level: args.level, data: args.data };
      if (args.logger !== undefined) {
        params.logger = args.logger;
      }
      await server.notification({ method: "notifications/message", params });
      return text({ logged: true });
    }
    case "progress_steps": {
      const token = request.params._meta?.progressToken;
      await progressSteps((notification) => extra.sendNotification(notification), token, args.steps);
      return text({ token: token ?? null });
    }
    case "log_levels":
      return text({ levels });
    case "notify":
      return text({ sent: await notifyFeature((notification) => server.notification(notification), args.method, args.uri) });
    case "pid":
      return text({ pid: process.pid });
    case "trace_context":
      return text({ traceparent: request.params._meta?.traceparent ?? null, tracestate: request.params._meta?.tracestate ?? null });
    case "resource_changed":
      await server.notification(args.uri === undefined ? { method: "notifications/resources/list_changed" }
        : { method: "notifications/resources/updated", params: { uri: args.uri } });
      return text({ told: args.uri ?? "list" });
    case "set_description":
      tools[args.tool].description = args.description;
      if (args.notify) {
        await server.sendToolListChanged();
      }
      return text({ changed: args.tool });
    default:
      if (name === extraTool) {
        return text({ extra: name });
      }
      return { ...text({ unknown: name }), isError: true };
  }
});
console.error("lab server ready");
await server.connect(new StdioServerTransport());
