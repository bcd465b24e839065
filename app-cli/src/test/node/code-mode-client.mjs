// Code mode through `execache serve`, driven by the official TypeScript SDK client as agent hosts do.
// Usage: node code-mode-client.mjs SCENARIO COMMAND [ARGS...]; prints one JSON line with its findings.
//   list:  what tools/list holds (names and bytes) once the code in CODE has run
//   code:  opens LAB_GATE so that the gated server joins late, finds its tool with search_tools, calls it from
//          code, describes it with describe_tools and type-checks that declaration with `deno check` (DENO);
//          also calls a server's tool by its name directly
//   burst: in all mode, opens LAB_GATE and counts the notifications/tools/list_changed the late server's join sends
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [scenario, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "execache-code-mode-it", version: "1" });
let listChanged = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, async () => { listChanged++; });
await client.connect(transport);

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const listed = async () => {
  const tools = (await client.listTools()).tools;
  return { names: tools.map((tool) => tool.name), bytes: Buffer.byteLength(JSON.stringify({ tools }), "utf8") };
};
const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
const outcome = (result) => ({ isError: result.isError ?? false, structured: result.structuredContent ?? null,
  text: result.content?.[0]?.text ?? null });
/** Waits for what a late server brings: an event, not a time (at most a minute). */
const until = async (found) => {
  for (let i = 0; i < 600; i++) {
    const value = await found();
    if (value) return value;
    await pause(100);
  }
  return null;
};

let findings;
try {
  switch (scenario) {
    case "list": {
      // the code names every server, so the run waits until each has joined (and proves it reaches them)
      const ran = outcome(await call("execute_code", { code: process.env.CODE }));
      const searched = (await call("search_tools", { query: "counter" })).structuredContent.tools;
      findings = { ran, searched, listed: await listed() };
      break;
    }
    case "code": {
      const before = await listed();
      writeFileSync(process.env.LAB_GATE, "");
      const match = await until(async () => (await call("search_tools", { query: "get count", limit: 10 }))
        .structuredContent.matches.find((each) => each.name.startsWith("gated__")));
      const called = outcome(await call("execute_code", { code: `return await ${match.call}({ who: "ts" })` }));
      const described = (await call("describe_tools", { names: [match.name] })).structuredContent;
      const dir = mkdtempSync(join(tmpdir(), "execache-declarations-"));
      const file = join(dir, "check.ts");
      writeFileSync(file, described.typescript + `\nexport async function use(): Promise<unknown> {\n`
        + `  return await ${match.call}({ who: "x" });\n}\n`);
      const checked = spawnSync(process.env.DENO, ["check", "--quiet", file], { encoding: "utf8" });
      const direct = outcome(await call("lab__get_count", { who: "direct" }));
      findings = { before, after: await listed(), match, called, described, direct,
        check: { status: checked.status, output: (checked.stdout ?? "") + (checked.stderr ?? "") } };
      break;
    }
    case "burst": {
      // asked while the late server is still starting: the list waits for it
      const listing = listed();
      writeFileSync(process.env.LAB_GATE, "");
      const first = await listing;
      const after = await until(async () => {
        const now = await listed();
        return now.names.includes("gated__get_count") && listChanged > 0 ? now : null;
      });
      // round trips after the notice: any other notice of the same join would have come by now
      await call("execute_code", { code: "return 1" });
      await call("describe_tools", {});
      await listed();
      findings = { first, after, listChanged };
      break;
    }
    default:
      throw new Error("unknown scenario " + scenario);
  }
} catch (error) {
  findings = { thrown: String(error?.stack ?? error) };
} finally {
  process.stdout.write(JSON.stringify(findings) + "\n");
  await client.close();
}
