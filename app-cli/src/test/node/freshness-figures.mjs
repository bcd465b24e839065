// What a gateway hit costs an agent against calling the server directly, with the client agents use
// (the official TypeScript SDK, @modelcontextprotocol/sdk), in turns, on a fast tool (the lab's
// get_count) and a slow one (the lab's sleep, 20 ms): what caching a local tool saves. A benchmark, not a
// test: it prints medians and asserts nothing.
// Usage (in app-cli/target/node): node freshness-figures.mjs EXECACHE_JAR [ROUNDS]
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [jar, roundsArg] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 300);
const lab = join(import.meta.dirname, "lab-server.mjs");
const dir = mkdtempSync(join(tmpdir(), "execache-freshness-figures-"));
const config = join(dir, "execache.yaml");
// every tool cached, however fast: the figure is what a hit costs
writeFileSync(config, `servers:\n  lab:\n    command: node\n    args: ["${lab}"]\n    cache: true\n`);

const connect = async (command, args, env = {}) => {
  const client = new Client({ name: "freshness-figures", version: "1" });
  await client.connect(new StdioClientTransport({ command, args, env: { ...process.env, ...env }, stderr: "ignore" }));
  return client;
};
const direct = await connect("node", [lab]);
const gateway = await connect("java", ["-jar", jar, "serve", "--store", "memory", "--config", config],
  { EXECACHE_WARM_POOL: "0", XDG_CACHE_HOME: join(dir, "cache"), XDG_RUNTIME_DIR: join(dir, "run") });
while (!(await gateway.listTools()).tools.some((tool) => tool.name === "lab__sleep")) {
  await new Promise((resolve) => setTimeout(resolve, 100));
}

const timed = async (client, name, args, meta) => {
  const start = process.hrtime.bigint();
  const result = await client.callTool(meta ? { name, arguments: args, _meta: meta } : { name, arguments: args });
  const nanos = Number(process.hrtime.bigint() - start);
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result)}`);
  return { nanos, result };
};
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] / 1e6;
};
const figures = { directFast: [], hitFast: [], missFast: [], directSlow: [], hitSlow: [], missSlow: [] };
const statuses = new Set();
for (let i = 0; i < 50; i++) {
  await timed(direct, "get_count", { who: "warm" });
  await timed(gateway, "lab__get_count", { who: "warm" });
}
await timed(gateway, "lab__sleep", { ms: 20 });
for (let i = 0; i < rounds; i++) {
  figures.directFast.push((await timed(direct, "get_count", { who: "warm" })).nanos);
  const hit = await timed(gateway, "lab__get_count", { who: "warm" });
  figures.hitFast.push(hit.nanos);
  statuses.add(hit.result._meta?.["dev.execache/cache"]?.status);
  figures.missFast.push((await timed(gateway, "lab__get_count", { who: `m${i}` })).nanos);
  if (i % 10 === 0) {
    figures.directSlow.push((await timed(direct, "sleep", { ms: 20 })).nanos);
    figures.hitSlow.push((await timed(gateway, "lab__sleep", { ms: 20 })).nanos);
    figures.missSlow.push((await timed(gateway, "lab__sleep", { ms: 20 }, { "dev.execache/cache-control": "no-cache" })).nanos);
  }
}
const out = {};
for (const [name, values] of Object.entries(figures)) out[`${name}Ms`] = Number(median(values).toFixed(3));
out.rounds = rounds;
out.slowRounds = figures.directSlow.length;
out.hitStatuses = [...statuses];
process.stdout.write(JSON.stringify(out) + "\n");
await direct.close();
await gateway.close();
process.exit(0);
