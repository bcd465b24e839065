// A url server that acts as a person, as a code host or a tracker does: the official TypeScript SDK
// (1.x, pinned) over node:http, stateless, that takes only access tokens issued by the authorization
// server ISSUER for its own URL (RFC 8707 audience), checked against the issuer's published keys. A
// request without one is answered 401 naming its protected-resource metadata (RFC 9728). Its read-only
// tool whoami answers who the token names (sub) and how many calls that person made, so a test sees
// whose answer it got and whether it came from the server or a cache.
//   node person-server.mjs ISSUER SCOPE   prints {"url": "http://127.0.0.1:PORT/mcp"} once it listens
// Test-only endpoints: POST /test/hold {"seconds": N} refuses the next request without a token at once and
// holds every later one N seconds before refusing it, as a slow server does (0: no more holding);
// GET /test/held says how many are held now ({"held": n}).
import http from 'node:http';
import crypto from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

const [issuer, scope] = process.argv.slice(2);
const calls = new Map();
const refusals = [];
let url;
let metadataUrl;

async function keys() {
  const metadata = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
  return (await (await fetch(metadata.jwks_uri)).json()).keys;
}

/** The token's claims when it is signed by the issuer, for this server, and not expired; else why not. */
async function check(token) {
  const [head, body, signature] = token.split('.');
  if (!signature) return { why: 'not a JWT' };
  const header = JSON.parse(Buffer.from(head, 'base64url'));
  const jwk = (await keys()).find((key) => key.kid === header.kid);
  if (!jwk || header.alg !== 'RS256') return { why: 'unknown key' };
  const good = crypto.verify('sha256', Buffer.from(`${head}.${body}`), crypto.createPublicKey({ key: jwk, format: 'jwk' }),
    Buffer.from(signature, 'base64url'));
  if (!good) return { why: 'bad signature' };
  const claims = JSON.parse(Buffer.from(body, 'base64url'));
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (claims.iss !== issuer) return { why: `issuer ${claims.iss}` };
  if (!audiences.includes(url)) return { why: `audience ${claims.aud}` };
  if (claims.exp * 1000 < Date.now()) return { why: 'expired' };
  return { claims };
}

function mcpServer(claims) {
  const server = new McpServer({ name: 'person-server', version: '1.0.0' });
  server.registerTool('whoami', {
    description: 'Who the access token names, and how many calls that person made.',
    annotations: { readOnlyHint: true },
  }, async () => {
    const count = (calls.get(claims.sub) ?? 0) + 1;
    calls.set(claims.sub, count);
    return { content: [{ type: 'text', text: JSON.stringify({ sub: claims.sub, calls: count, aud: claims.aud }) }] };
  });
  server.registerTool('refusals', { description: 'Why tokens were refused.', annotations: { readOnlyHint: false } },
    async () => ({ content: [{ type: 'text', text: JSON.stringify(refusals) }] }));
  return server;
}

const hold = { seconds: 0, refusedAtOnce: false, held: 0 };

const listener = http.createServer(async (req, res) => {
  if (req.method === 'POST' && req.url === '/test/hold') {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    Object.assign(hold, { seconds: JSON.parse(Buffer.concat(chunks).toString('utf8')).seconds, refusedAtOnce: false });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    return;
  }
  if (req.method === 'GET' && req.url === '/test/held') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ held: hold.held }));
    return;
  }
  if (req.method === 'GET' && req.url.startsWith('/.well-known/oauth-protected-resource')) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
      resource: url, authorization_servers: [issuer], scopes_supported: scope.split(' '),
      bearer_methods_supported: ['header'] }));
    return;
  }
  if (!req.url.startsWith('/mcp')) {
    res.writeHead(404).end();
    return;
  }
  const authorization = req.headers.authorization ?? '';
  const checked = authorization.startsWith('Bearer ') ? await check(authorization.slice(7)) : { why: 'no token' };
  if (!checked.claims) {
    if (hold.seconds > 0 && checked.why === 'no token') {
      if (hold.refusedAtOnce) {
        hold.held += 1;
        await new Promise((resolve) => setTimeout(resolve, hold.seconds * 1000));
        hold.held -= 1;
      }
      hold.refusedAtOnce = true;
    }
    refusals.push(checked.why);
    res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${metadataUrl}", scope="${scope}"`,
      'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_token' }));
    return;
  }
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  const server = mcpServer(checked.claims);
  res.on('close', () => { transport.close(); server.close(); });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
});

listener.listen(0, '127.0.0.1', () => {
  url = `http://127.0.0.1:${listener.address().port}/mcp`;
  metadataUrl = `http://127.0.0.1:${listener.address().port}/.well-known/oauth-protected-resource/mcp`;
  process.stdout.write(`${JSON.stringify({ url })}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
