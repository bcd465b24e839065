// The official TypeScript SDK client (1.x) signing a person in to serve --http as an agent host
// does: from the 401 it discovers the authorization server, registers itself (dynamic client
// registration), and sends the person to the authorization endpoint with PKCE; here the "browser"
// is this script, which signs in as LOGIN at oidc-provider's development pages and consents, then
// hands the code back to the SDK (finishAuth), which exchanges it for a token for this resource.
// Then it lists the tools and calls execute_code. Prints one JSON line: the requests the SDK made
// (method, URL without the query, status), what the browser saw, and what the calls answered.
//   node oauth-login-client.mjs MCP_URL LOGIN
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { signIn } from './headless-browser.mjs';

const [url, login] = process.argv.slice(2);
const REDIRECT = 'http://127.0.0.1:1/callback';
const requests = [];
const recording = async (input, init) => {
  const response = await fetch(input, init);
  const target = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  requests.push({ method: (init?.method ?? 'GET').toUpperCase(), url: `${target.origin}${target.pathname}`,
    status: response.status });
  return response;
};

/** What an agent host keeps: the registration, the PKCE verifier, the tokens; it "opens" the URL it is given. */
class HostProvider {
  constructor() { this.authorizationUrl = null; }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return { client_name: 'oauth-login-client', redirect_uris: [REDIRECT], application_type: 'native',
      grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() { return this.client; }
  saveClientInformation(client) { this.client = client; }
  tokens() { return this.saved; }
  saveTokens(tokens) { this.saved = tokens; }
  redirectToAuthorization(authorizationUrl) { this.authorizationUrl = authorizationUrl; }
  saveCodeVerifier(verifier) { this.verifier = verifier; }
  codeVerifier() { return this.verifier; }
}

const result = { requests };
try {
  const provider = new HostProvider();
  let transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: recording });
  try {
    await new Client({ name: 'oauth-login-client', version: '1.0.0' }).connect(transport);
    throw new Error('connected without signing in');
  } catch (error) {
    if (!(error instanceof UnauthorizedError) || provider.authorizationUrl === null) throw error;
  }
  const authorization = provider.authorizationUrl;
  result.authorization = {
    codeChallengeMethod: authorization.searchParams.get('code_challenge_method'),
    resource: authorization.searchParams.get('resource'),
    scope: authorization.searchParams.get('scope'),
  };
  const { back, seen } = await signIn(authorization, login, (next) => next.href.startsWith(REDIRECT));
  const code = back.searchParams.get('code');
  result.browser = seen;
  await transport.finishAuth(code);
  transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: recording });
  const client = new Client({ name: 'oauth-login-client', version: '1.0.0' });
  await client.connect(transport);
  result.tools = (await client.listTools()).tools.map((tool) => tool.name);
  const run = await client.callTool({ name: 'execute_code', arguments: { code: 'return "signed in";' } });
  result.runIsError = run.isError === true;
  result.run = run.structuredContent ?? run.content;
  result.scope = provider.tokens()?.scope ?? null;
  await client.close();
} catch (error) {
  result.error = String(error?.stack ?? error);
}
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
