// Drives `execache serve` (with the lab server behind it, lab__get_count cached by a rule) with an
// official TypeScript SDK client and prints, as one JSON line, the _meta["dev.execache/cache"] of a
// miss, a hit, a call asked fresh, a bypass, and of two identical runs at once (one shared, the second
// asked while the first reports progress), so a test
// can check what each says and that the client accepted every result (it validates them).
// Usage: node freshness-client.mjs CLIENT TRANSPORT TARGET...
//   CLIENT: sdk1 (@modelcontextprotocol/sdk, the 2025-11-25 era) | sdk2 (@modelcontextprotocol/client,
//           pinned to 2026-07-28)
//   TRANSPORT: http URL TOKEN | stdio COMMAND [ARGS...]
import { Client as Client1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as Stdio1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as Http1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as Client2, StreamableHTTPClientTransport as Http2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as Stdio2 } from "@modelcontextprotocol/client/stdio";

const [clientKind, transportKind, ...target] = process.argv.slice(2);
const sdk1 = clientKind === "sdk1";
const headers = { requestInit: { headers: { Authorization: `Bearer ${target[1]}` } } };
const transport = transportKind === "http"
  ? (sdk1 ? new Http1(new URL(target[0]), headers) : new Http2(new URL(target[0]), headers))
  : (sdk1 ? new Stdio1({ command: target[0], args: target.slice(1), env: { ...process.env }, stderr: "inherit" })
    : new Stdio2({ command: target[0], args: target.slice(1), env: { ...process.env }, stderr: "inherit" }));
const info = { name: "execache-freshness-it", version: "1" };
const client = sdk1 ? new Client1(info) : new Client2(info, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
const out = { client: clientKind, transport: transportKind };
const meta = (result) => result._meta?.["dev.execache/cache"] ?? null;
const call = (name, args, requestMeta, onprogress) => {
  const params = requestMeta ? { name, arguments: args, _meta: requestMeta } : { name, arguments: args };
  const options = onprogress ? { timeout: 120000, onprogress } : { timeout: 120000 };
  // 1.x takes a result schema before the options; 2.x the options only
  return sdk1 ? client.callTool(params, undefined, options) : client.callTool(params, options);
};
try {
  await client.connect(transport);
  out.era = client.getProtocolEra?.() ?? "legacy";
  // the lab joins serve as it comes up: wait for its tools, at most a minute
  for (const deadline = Date.now() + 60000;
    !(await client.listTools()).tools.some((tool) => tool.name === "lab__get_count");) {
    if (Date.now() > deadline) throw new Error("the lab's tools never arrived through serve");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const who = `${clientKind}-${transportKind}`;
  const miss = await call("lab__get_count", { who });
  const hit = await call("lab__get_count", { who });
  const fresh = await call("lab__get_count", { who }, { "dev.execache/cache-control": "no-cache" });
  const bypass = await call("lab__increment", {});
  // two identical runs at once: the second is asked once the first reports progress (every second
  // of a run), so it meets the first still running unless this machine held the second back for the
  // rest of the run; then it is a hit, which is right too, and the pair is tried again with another
  // context (at most three times), each attempt's timings kept for the test's message
  const code = `await new Promise((resolve) => setTimeout(resolve, 6000)); return "run " + context.who`;
  out.attempts = [];
  let one, two, runWho;
  for (let attempt = 1; attempt <= 3; attempt++) {
    runWho = attempt === 1 ? who : `${who}-${attempt}`;
    const start = Date.now();
    const timings = {};
    let second;
    const askSecond = () => {
      if (second) return;
      timings.secondAskedMs = Date.now() - start;
      second = call("execute_code", { code, context: { who: runWho } })
        .then((result) => { timings.secondDoneMs = Date.now() - start; return result; });
    };
    one = await call("execute_code", { code, context: { who: runWho } }, undefined, askSecond);
    timings.firstDoneMs = Date.now() - start;
    askSecond();
    two = await second;
    out.attempts.push({ statuses: [meta(one)?.status, meta(two)?.status], ...timings });
    if (meta(two)?.status !== "hit") break;
  }
  const again = await call("execute_code", { code, context: { who: runWho } });
  const refused = await call("lab__get_count", { who }, { "dev.execache/cache-control": "soon" });
  out.miss = meta(miss);
  out.hit = meta(hit);
  out.fresh = meta(fresh);
  out.bypass = meta(bypass);
  out.runs = [meta(one), meta(two)];
  out.runAgain = meta(again);
  out.sameContent = JSON.stringify(hit.content) === JSON.stringify(miss.content);
  out.freshText = fresh.content[0].text;
  out.runResult = again.structuredContent?.result ?? null;
  out.runWho = runWho;
  out.refused = { isError: refused.isError ?? false, text: refused.content[0].text };
  out.done = true;
} catch (error) {
  out.thrown = String(error?.stack ?? error);
}
process.stdout.write(JSON.stringify(out) + "\n");
await client.close().catch(() => {});
process.exit(0);
