// An agent on stdio whose person signs in when a server asks: the split TypeScript SDK client
// (@modelcontextprotocol/client, pinned) in the 2025-11-25 era, declaring URL-mode elicitation, starts
// execache serve and calls a tool of a url server that waits for a person's sign-in. Asked to open a
// URL (elicitation/create, mode url), it accepts and lets the headless browser sign in there as LOGIN
// (headless-browser.mjs), which comes back to execache's loopback listener. Prints one JSON line: what
// it was asked (without the URL), where the URL led, the pages the browser saw, and the call's answer.
//   node sign-in-agent.mjs LOGIN TOOL COMMAND [ARGS...]
// With HELD_URL set (person-server.mjs's /test/held), the person opens the link only once the server holds a
// request of execache's, so that they sign in while execache is reaching the server without their sign-in.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { signIn } from './headless-browser.mjs';

const [login, tool, command, ...args] = process.argv.slice(2);
const out = { asked: [] };
const client = new Client({ name: 'execache-sign-in-agent', version: '1' },
  { versionNegotiation: { mode: 'legacy' }, capabilities: { elicitation: { url: {} } } });
let browsing = Promise.resolve();
client.setRequestHandler('elicitation/create', async (request) => {
  const { url, ...rest } = request.params;
  out.asked.push(rest);
  if (rest.mode !== 'url') return { action: 'decline' };
  const start = new URL(url);
  out.opened = { origin: start.origin, path: start.pathname, codeChallengeMethod: start.searchParams.get('code_challenge_method'),
    resource: start.searchParams.get('resource') };
  // the person opens the link after the agent accepted, as a host shows it
  browsing = (async () => {
    for (let waited = 0; process.env.HELD_URL && waited < 600; waited += 1) {
      if ((await (await fetch(process.env.HELD_URL)).json()).held > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const { back, seen } = await signIn(start, login, (next) => next.origin !== start.origin);
    out.browser = seen;
    out.callback = (await fetch(back)).status;
  })().catch((error) => { out.browserError = String(error); });
  return { action: 'accept' };
});
try {
  await client.connect(new StdioClientTransport({ command, args, env: { ...process.env }, stderr: 'inherit' }));
  const answer = await client.callTool({ name: tool, arguments: {} }, undefined, { timeout: 120000 });
  await browsing;
  out.isError = answer.isError === true;
  out.answer = answer.content?.[0]?.text ?? null;
  const again = await client.callTool({ name: tool, arguments: {} });
  out.again = again.content?.[0]?.text ?? null;
  out.askedAgain = out.asked.length;
  await client.close();
} catch (error) {
  out.thrown = String(error?.stack ?? error);
}
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0);
