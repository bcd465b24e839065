// The 2026-07-28 era's way for a server to ask the agent something: the split TypeScript SDK client
// (@modelcontextprotocol/client, pinned), pinned to 2026-07-28 and declaring sampling, elicitation and roots, calls the
// reference server's tools that ask through execache serve --http; the client answers each input_required result with
// its handlers and retries, as the SDK does by itself.
// Usage: node everything-modern-client.mjs URL
// Prints one JSON line: the answers and what the client was asked.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url] = process.argv.slice(2);
const client = new Client({ name: "execache-everything-modern-it", version: "1" },
  { versionNegotiation: { mode: { pin: "2026-07-28" } },
    capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } });
const out = { asked: { sampling: [], elicitation: [], roots: 0 } };
client.setRequestHandler("sampling/createMessage", async (request) => {
  out.asked.sampling.push(request.params);
  return { role: "assistant", model: "test-model", stopReason: "endTurn",
    content: { type: "text", text: `sampled ${out.asked.sampling.length}` } };
});
client.setRequestHandler("elicitation/create", async (request) => {
  out.asked.elicitation.push(request.params);
  return { action: "accept", content: { name: "Ada Lovelace", check: true, email: "ada@example.com" } };
});
client.setRequestHandler("roots/list", async () => {
  out.asked.roots++;
  return { roots: [{ uri: "file:///work/project", name: "project" }] };
});
const plain = ({ _meta, ...rest }) => rest;
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  out.era = client.getProtocolEra?.() ?? null;
  let tools = [];
  for (let i = 0; i < 600 && !tools.some((tool) => tool.name === "trigger-sampling-request"); i++) {
    tools = (await client.listTools()).tools;
    if (!tools.some((tool) => tool.name === "trigger-sampling-request")) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  out.sampling = plain(await client.callTool({ name: "trigger-sampling-request", arguments: { prompt: "Say hi", maxTokens: 20 } }));
  out.elicitation = plain(await client.callTool({ name: "trigger-elicitation-request", arguments: {} }));
  out.roots = plain(await client.callTool({ name: "get-roots-list", arguments: {} }));
  // code inside execute_code: its calls' progress comes under the run's token; it cannot ask the agent in this era,
  // so the server's request is refused at once, saying so
  const steps = [];
  const run = await client.callTool({ name: "execute_code", arguments: { code: `
    await tools.everything["trigger-long-running-operation"]({ duration: 0.1, steps: 2 });
    try {
      return await tools.everything["trigger-sampling-request"]({ prompt: "Asked from code", maxTokens: 20 });
    } catch (error) {
      return { refused: String(error.message) };
    }` } }, { timeout: 120000, onprogress: (step) => steps.push(step) });
  out.code = { isError: run.isError ?? false, run: run.structuredContent ?? run.content, progress: steps };
} catch (error) {
  out.thrown = String(error?.stack ?? error);
}
process.stdout.write(JSON.stringify(out) + "\n");
await client.close().catch(() => {});
process.exit(0);
