// An agent on stdio, the official TypeScript SDK client (@modelcontextprotocol/sdk, pinned in package.json), driving
// `execache serve` with the conformance suite's scenario server as a url server (prefix: false): execache is the client
// the scenario tests. The suite runs it as `--command "node conformance-agent.mjs JAVA [JVM OPTION...] JAR"` and appends the
// server's URL; the
// scenario's name is in MCP_CONFORMANCE_SCENARIO, its context (tool arguments, client credentials) in
// MCP_CONFORMANCE_CONTEXT.
// The agent does what a scenario needs of a client: it lists and calls every tool (with the context's arguments, else
// arguments made from the schema), lists and reads every resource, lists and gets every prompt. It answers an
// elicitation by accepting with the required fields filled and the others left out (execache applies the schema's
// defaults), sampling with a fixed message, roots with one root. Asked to open a URL (a URL-mode elicitation: execache
// asks its person to sign in to a server), it accepts and opens it as a browser would (headless-browser.mjs, following
// the redirects back to execache). Its person configures what any of them would: the client the context names, else a
// client ID metadata document URL, used where the authorization server takes one. Exits 1 when a request failed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { signIn } from "./headless-browser.mjs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const args = process.argv.slice(2);
const java = args[0];
const jvmOptions = args.slice(1, -2);
const jar = args[args.length - 2];
const url = args[args.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
// execache's own tools; every other tool is the scenario server's
const SERVE_OWN_TOOLS = new Set(["execute_code", "cache_stats", "clear_cache", "describe_tools", "inspect_tool_call",
  "invalidate_tool", "search_tools"]);
const log = (line) => process.stderr.write(`agent: ${line}\n`);

const home = mkdtempSync(join(tmpdir(), "execache-conformance-"));
const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_CACHE_HOME: join(home, ".cache"),
  XDG_DATA_HOME: join(home, ".local/share"), EXECACHE_WARM_POOL: "0" };
delete env.EXECACHE_STORE;
let config = `servers:\n  conformance:\n    url: ${JSON.stringify(url)}\n    prefix: false\n`;
if (context.client_id && context.client_secret) {
  env.CONFORMANCE_SECRET = context.client_secret;
  config += `    oauth:\n      client_id: ${JSON.stringify(context.client_id)}\n      client_secret: "\${CONFORMANCE_SECRET}"\n`
    + (context.scope ? `      scope: ${JSON.stringify(context.scope)}\n` : "")
    + `      auth_method: ${scenario.endsWith("-post") ? "client_secret_post" : "client_secret_basic"}\n`;
} else {
  // the URL of this client's metadata document (it need not be reachable here: only the suite's authorization server
  // reads it, and does not fetch it)
  config += `    oauth:\n      client_id: "https://conformance-test.local/client-metadata.json"\n`;
}
const configFile = join(home, "execache.yaml");
writeFileSync(configFile, config);

const transport = new StdioClientTransport({ command: java, args: [...jvmOptions, "-jar", jar, "serve", "--store", "memory", "--config",
  configFile], env, stderr: "pipe" });
let reached;
const reachedOrNot = new Promise((resolve) => { reached = resolve; });
transport.stderr?.on("data", (chunk) => {
  const text = chunk.toString();
  process.stderr.write(text);
  const connected = /server conformance: connected .*, (\d+) tools?/.exec(text);
  if (connected) {
    reached(Number(connected[1]));
  } else if (/server conformance.*(trying again in|the server is unavailable)/.test(text) && !/sign in/.test(text)
      || /no sign-in through the agent/.test(text)) {
    // a server that asks for a sign-in is reached once this agent's person signed in, unless that failed
    reached(false);
  }
});

const client = new Client({ name: "execache-conformance-agent", version: "1" },
  { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } });
const browsing = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  if (request.params.mode === "url") {
    // the person opens the link once the agent accepted, as a host shows it
    const start = new URL(request.params.url);
    log(`elicitation: opening ${start.origin}${start.pathname}`);
    browsing.push((async () => {
      const { back } = await signIn(start, "conformance", (next) => next.origin !== start.origin);
      log(`the browser came back: ${(await fetch(back)).status}`);
    })().catch((error) => log(`the browser failed: ${error}`)));
    return { action: "accept" };
  }
  const schema = request.params.requestedSchema ?? {};
  const content = {};
  for (const name of schema.required ?? []) {
    content[name] = valueOf(schema.properties?.[name] ?? {});
  }
  log(`elicitation: accepting with ${JSON.stringify(content)}`);
  return { action: "accept", content };
});
client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: "assistant", model: "conformance-agent",
  stopReason: "endTurn", content: { type: "text", text: "sampled" } }));
client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///work", name: "work" }] }));

function valueOf(schema) {
  if (schema.default !== undefined) {
    return schema.default;
  }
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum[0];
  }
  switch (schema.type) {
    case "integer":
    case "number":
      return 1;
    case "boolean":
      return true;
    case "object":
      return {};
    case "array":
      return [];
    default:
      return "conformance";
  }
}

function argumentsFor(tool, tools) {
  const given = (context.toolCalls ?? []).find((call) => call.name === tool.name);
  if (given) {
    return given.arguments;
  }
  if (tool.name === "add_numbers") {
    return { a: 5, b: 3 };
  }
  if (tool.name === "json_schema_echo") {
    // the scenario asks for the other tool's schema back, as the client received it
    const other = tools.find((each) => each.name !== tool.name && !SERVE_OWN_TOOLS.has(each.name));
    return { schema: other?.inputSchema ?? {} };
  }
  const made = {};
  for (const name of tool.inputSchema?.required ?? []) {
    made[name] = valueOf(tool.inputSchema.properties?.[name] ?? {});
  }
  return made;
}

let failed = 0;
async function attempt(what, request) {
  try {
    const answer = await request();
    log(`${what}: ${JSON.stringify(answer).slice(0, 300)}`);
    return answer;
  } catch (error) {
    failed++;
    log(`${what} failed: ${error?.message ?? error}`);
    return null;
  }
}

try {
  await client.connect(transport);
  const wait = setTimeout(() => reached(false), 60000);
  const offered = await reachedOrNot;
  clearTimeout(wait);
  log(offered === false ? "the server was not reached" : `the server was reached, offering ${offered} tools`);
  // serve offers a server's tools a moment after it says it reached the server
  let tools = [];
  for (let tries = 0; tries < 100; tries++) {
    tools = (await client.listTools()).tools;
    if (offered === false || tools.filter((tool) => !SERVE_OWN_TOOLS.has(tool.name)).length >= offered) {
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  log(`tools: ${tools.map((tool) => tool.name).join(", ")}`);
  const capabilities = client.getServerCapabilities() ?? {};
  for (const tool of tools) {
    if (!SERVE_OWN_TOOLS.has(tool.name)) {
      await attempt(`tools/call ${tool.name}`, () => client.callTool({ name: tool.name,
        arguments: argumentsFor(tool, tools) }, undefined, { timeout: 20000 }));
    }
  }
  for (const call of (context.toolCalls ?? []).filter((call) => !tools.some((tool) => tool.name === call.name))) {
    log(`the context names tool ${call.name}, which execache does not list`);
  }
  if (capabilities.resources) {
    const resources = (await attempt("resources/list", () => client.listResources()))?.resources ?? [];
    for (const resource of resources) {
      await attempt(`resources/read ${resource.uri}`, () => client.readResource({ uri: resource.uri }));
    }
  }
  if (capabilities.prompts) {
    const prompts = (await attempt("prompts/list", () => client.listPrompts()))?.prompts ?? [];
    for (const prompt of prompts) {
      await attempt(`prompts/get ${prompt.name}`, () => client.getPrompt({ name: prompt.name, arguments: {} }));
    }
  }
} catch (error) {
  failed++;
  log(`failed: ${error?.stack ?? error}`);
}
await client.close().catch(() => {});
process.exit(failed === 0 ? 0 : 1);
