// A real authorization server for the tests of serve --http as an OAuth resource server:
// oidc-provider (pinned in package.json) on loopback, issuing JWT access tokens for any loopback
// resource (RFC 8707 resource indicators) by client credentials, and by authorization code with
// PKCE to clients that register themselves, after a sign-in at its development pages. Prints one line,
// {"issuer": "http://127.0.0.1:PORT"}, once it listens.
//
// Beside the provider, two test-only endpoints:
//   POST /test/rotate  the provider signs with a new key from now on (and publishes only that one)
//   POST /test/mint    {"claims": {...}, "header": {...}, "key": "current"|"other"|"none"|"hmac-public"}
//                      a token signed as asked, to show what serve refuses (expired, another audience,
//                      another issuer, unsigned, signed with another key under the current key's kid,
//                      HMAC with the public key as its secret)
import http from 'node:http';
import crypto from 'node:crypto';
import Provider from 'oidc-provider';

const SCOPES = ['execache:read', 'execache:run', 'execache:admin'];
const CLIENTS = [
  ['agent-full', 'execache:read execache:run execache:admin'],
  ['agent-runner', 'execache:read execache:run'],
  ['agent-reader', 'execache:read'],
];

function newKey() {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = crypto.randomUUID();
  return { privateKey, publicKey, kid, jwk: { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' } };
}

let key = newKey();
let provider;
let issuer;

function makeProvider() {
  const made = new Provider(issuer, {
    clients: CLIENTS.map(([id, scope]) => ({
      client_id: id,
      client_secret: `${id}-secret-0123456789`,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope,
    })),
    jwks: { keys: [key.jwk] },
    // a client that may refresh gets a refresh token with its code (by default only with offline_access)
    issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
    scopes: SCOPES,
    features: {
      clientCredentials: { enabled: true },
      // a person signs in at the provider's own development pages (any login and password), which
      // the SDK client's test drives headlessly; clients may register themselves (RFC 7591)
      devInteractions: { enabled: true },
      registration: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (ctx, client, oneOf) => oneOf,
        getResourceServerInfo: (ctx, resource) => {
          const url = new URL(resource);
          if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') {
            throw new Error(`not a loopback resource: ${resource}`);
          }
          return { scope: SCOPES.join(' '), audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 600,
            jwt: { sign: { alg: 'RS256' } } };
        },
      },
    },
  });
  made.proxy = false;
  return made.callback();
}

const b64 = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

function mint({ claims, header = {}, key: how = 'current' }) {
  if (how === 'none') {
    return `${b64({ alg: 'none', typ: 'at+jwt', ...header })}.${b64(claims)}.`;
  }
  if (how === 'hmac-public') {
    const head = b64({ alg: 'HS256', typ: 'at+jwt', kid: key.kid, ...header });
    const body = b64(claims);
    const secret = key.publicKey.export({ format: 'pem', type: 'spki' });
    const signature = crypto.createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
    return `${head}.${body}.${signature}`;
  }
  // "other": a key the provider never published, under the current key's kid
  const signer = how === 'other' ? newKey().privateKey : key.privateKey;
  const head = b64({ alg: 'RS256', typ: 'at+jwt', kid: key.kid, ...header });
  const body = b64(claims);
  const signature = crypto.sign('sha256', Buffer.from(`${head}.${body}`), signer).toString('base64url');
  return `${head}.${body}.${signature}`;
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
}

const server = http.createServer(async (req, res) => {
  if (req.method === 'POST' && req.url === '/test/rotate') {
    key = newKey();
    provider = makeProvider();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kid: key.kid }));
    return;
  }
  if (req.method === 'POST' && req.url === '/test/mint') {
    const token = mint(await readJson(req));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token }));
    return;
  }
  provider(req, res);
});

server.listen(0, '127.0.0.1', () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  provider = makeProvider();
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
