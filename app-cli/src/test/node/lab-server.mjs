// A small MCP server of the tests' own: it counts the calls it serves, so a test can tell a
// cached answer from a fresh one, and it can change a tool's description while it runs,
// with or without notifications/tools/list_changed.
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
  set_description: {
    description: "Changes a tool's description; notify: send tools/list_changed.",
    inputSchema: object({ tool: { type: "string" }, description: { type: "string" }, notify: { type: "boolean" } }),
    annotations: { readOnlyHint: false },
  },
};
let counter = 0;
const served = {};

const server = new Server({ name: "lab", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: Object.entries(tools).map(([name, tool]) => ({ name, ...tool })),
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const name = request.params.name;
  const args = request.params.arguments ?? {};
  served[name] = (served[name] ?? 0) + 1;
  const text = (value) => ({ content: [{ type: "text", text: JSON.stringify(value) }] });
  switch (name) {
    case "get_count":
      return text({ counter, served: served[name], who: args.who ?? null });
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
