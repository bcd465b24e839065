// The official TypeScript SDK client (1.x) reaching serve --http that asks for OAuth: it starts
// with no token, and from the 401 onwards does what the SDK does (protected resource metadata,
// the authorization server's metadata, a token by client credentials for this resource), then
// lists the tools and calls cache_stats and execute_code. Prints one JSON line: the requests it
// made in order (method, URL without the query, status) and what the calls answered.
//   node oauth-client.mjs MCP_URL ISSUER CLIENT_ID CLIENT_SECRET SCOPE
// (SDK 1.32 asks its token endpoint for the scope the client is configured with, not the one the 401 names)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';

const [url, issuer, clientId, clientSecret, scope] = process.argv.slice(2);
const requests = [];
const recording = async (input, init) => {
  const response = await fetch(input, init);
  const target = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  requests.push({ method: (init?.method ?? 'GET').toUpperCase(), url: `${target.origin}${target.pathname}`,
    status: response.status });
  return response;
};

const result = { requests };
try {
  const authProvider = new ClientCredentialsProvider({ clientId, clientSecret, scope, expectedIssuer: issuer });
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider, fetch: recording });
  const client = new Client({ name: 'oauth-client', version: '1.0.0' });
  await client.connect(transport);
  result.tools = (await client.listTools()).tools.map((tool) => tool.name);
  const stats = await client.callTool({ name: 'cache_stats', arguments: {} });
  result.statsIsError = stats.isError === true;
  const run = await client.callTool({ name: 'execute_code', arguments: { code: 'return 6 * 7;' } });
  result.runIsError = run.isError === true;
  result.run = run.structuredContent ?? run.content;
  result.scope = authProvider.tokens()?.scope ?? null;
  await client.close();
} catch (error) {
  result.error = String(error?.stack ?? error);
}
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
