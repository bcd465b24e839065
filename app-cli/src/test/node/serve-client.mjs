// Drives `execache serve` with the official TypeScript SDK client, the way agent hosts do.
// Usage: node serve-client.mjs SCENARIO COMMAND [ARGS...]
// Prints one JSON object per line on stdout ({"event": ...}); reads control lines on stdin.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { createInterface } from "node:readline";

const [scenario, command, ...args] = process.argv.slice(2);
const print = (event) => process.stdout.write(JSON.stringify(event) + "\n");
const control = createInterface({ input: process.stdin });
const lines = control[Symbol.asyncIterator]();
const nextControl = async () => (await lines.next()).value;

const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "execache-ts-it", version: "1" });
const errors = [];
client.onerror = (error) => errors.push(String(error?.message ?? error));
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => logs.push(notification.params));
const toolNames = async () => (await client.listTools()).tools.map((tool) => tool.name);
if (scenario === "late-servers") {
  // before connect: a server may come up right after initialize
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () =>
    print({ event: "list-changed", names: await toolNames() }));
}
await client.connect(transport);

const call = (code, extra = {}, options = {}) =>
  client.callTool({ name: "execute_code", arguments: { code, ...extra } }, undefined, { timeout: 120000, ...options });
const stats = async () => (await client.callTool({ name: "cache_stats", arguments: {} })).structuredContent;
const outcome = (result) => ({ isError: result.isError ?? false, structured: result.structuredContent ?? null,
  text: result.content?.[0]?.text ?? null });
const failure = (error) => ({ thrown: String(error?.message ?? error), code: error?.code ?? null });

try {
  switch (scenario) {
    case "errors": {
      for (const code of ["const x = 1;\nthrow new Error('boom');", "return 1 +", "while (true) {}", "return {ok: true}"]) {
        try {
          print({ event: "result", code, ...outcome(await call(code, { timeout: 2 })) });
        } catch (error) {
          print({ event: "result", code, ...failure(error) });
        }
      }
      break;
    }
    case "large": {
      for (const code of ["return 'x'.repeat(5 * 1024 * 1024)", "return 'still connected'"]) {
        try {
          print({ event: "result", code, ...outcome(await call(code)) });
        } catch (error) {
          print({ event: "result", code, ...failure(error) });
        }
      }
      break;
    }
    case "cancel": {
      const abort = new AbortController();
      const running = call("while (true) {}", { timeout: 25 }, { signal: abort.signal })
        .then((result) => ({ answered: outcome(result) }), (error) => ({ rejected: String(error?.message ?? error) }));
      print({ event: "calling", serverPid: transport.pid });
      await nextControl();
      abort.abort("the agent changed its mind");
      print({ event: "cancelled", how: await running });
      await nextControl();
      // a round trip after the cancellation: a late answer to the cancelled call would be seen by now
      const after = await stats();
      print({ event: "stats", stats: after, errors });
      break;
    }
    case "burst": {
      const results = await Promise.all(Array.from({ length: 20 }, () =>
        call("await new Promise((resolve) => setTimeout(resolve, 300)); return 'same'")));
      print({ event: "results", caches: results.map((result) => result.structuredContent.cache),
        errors: results.filter((result) => result.isError).length });
      print({ event: "stats", stats: await stats() });
      break;
    }
    case "spread": {
      // each run says when its code began and ended, on the clock all runs share
      const results = await Promise.all([1, 2, 3].map((n) =>
        call(`const began = Date.now(); await new Promise((resolve) => setTimeout(resolve, 1500)); `
          + `return { n: ${n}, began, ended: Date.now() }`)));
      print({ event: "results", values: results.map((result) => result.structuredContent?.result ?? null) });
      break;
    }
    case "progress": {
      const progress = [];
      const result = await call("await new Promise((resolve) => setTimeout(resolve, 2500)); return 'slow'", {},
        { onprogress: (update) => progress.push(update) });
      print({ event: "result", ...outcome(result), progress });
      break;
    }
    case "logging": {
      await client.setLoggingLevel("info");
      await client.callTool({ name: "invalidate_tool", arguments: { tool: "github" } });
      await client.ping();
      print({ event: "logs", logs });
      try {
        await client.request({ method: "logging/setLevel", params: { level: "loud" } },
          (await import("@modelcontextprotocol/sdk/types.js")).EmptyResultSchema);
        print({ event: "bogus-level", accepted: true });
      } catch (error) {
        print({ event: "bogus-level", ...failure(error) });
      }
      break;
    }
    case "agents": {
      // the client's name (clientInfo, "execache-ts-it") is the agent its calls are counted for
      await call("return 'counted'");
      await call("return 'counted'");
      print({ event: "stats", stats: await stats() });
      break;
    }
    case "deep": {
      const result = await call("let v = 'bottom'; for (let i = 0; i < 1500; i++) v = [v]; return {deep: v, lone: '\\ud800', pair: '\\ud83d\\ude00'}");
      print({ event: "result", isError: result.isError ?? false, text: result.isError ? result.content?.[0]?.text : null,
        result: JSON.stringify(result.structuredContent?.result ?? null) });
      break;
    }
    case "bench": {
      const rounds = Number(process.env.BENCH_ROUNDS ?? 50);
      const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
      const time = async (code) => { const start = performance.now(); await call(code); return performance.now() - start; };
      await call("return 1 + 1");
      const hits = [];
      for (let i = 0; i < rounds; i++) hits.push(await time("return 1 + 1"));
      const misses = [];
      for (let i = 0; i < rounds; i++) {
        await new Promise((resolve) => setTimeout(resolve, 150)); // lets the warm pool refill, as between agent turns
        misses.push(await time(`return 1 + 1 // ${i} ${Date.now()}`));
      }
      print({ event: "bench", rounds, hitMedianMs: median(hits), warmMissMedianMs: median(misses) });
      break;
    }
    case "late-servers": {
      // initialize is answered while some servers are still starting; a list asked then waits for them (a
      // client that lists once sees every tool), and their tools come by list_changed as well
      print({ event: "initialized", serverPid: transport.pid });
      const listed = toolNames();
      print({ event: "listing" });
      print({ event: "listed", names: await listed });
      await nextControl();
      const described = await client.callTool({ name: "describe_tools", arguments: {} });
      print({ event: "described", servers: described.structuredContent?.servers ?? null });
      print({ event: "called", ...outcome(await client.callTool({ name: "gated__get_count", arguments: {} })) });
      await nextControl();
      break;
    }
    default:
      throw new Error("unknown scenario " + scenario);
  }
} finally {
  await client.close();
  control.close();
}
