// A real authorization server for the tests of serve --http as an OAuth resource server:
// oidc-provider (pinned in package.json) on loopback, issuing JWT access tokens for any loopback
// resource (RFC 8707 resource indicators) by client credentials, and by authorization code with
// PKCE to clients that register themselves, after a sign-in at its development pages, and by token
// exchange (RFC 8693) to the client execache-gateway: a gateway that holds a person's access token gets one
// meant for another resource, naming the same person. Prints one line, {"issuer": "http://127.0.0.1:PORT"},
// once it listens.
//
// Beside the provider, test-only endpoints:
//   GET  /test/exchanges  the token exchanges made so far ({subject, resource} each)
//   POST /test/rotate  the provider signs with a new key from now on (and publishes only that one)
//   POST /test/mint    {"claims": {...}, "header": {...}, "key": "current"|"other"|"none"|"hmac-public"}
//                      a token signed as asked, to show what serve refuses (expired, another audience,
//                      another issuer, unsigned, signed with another key under the current key's kid,
//                      HMAC with the public key as its secret)
import http from 'node:http';
import crypto from 'node:crypto';
import Provider, { errors } from 'oidc-provider';

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

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

let key = newKey();
let provider;
let issuer;

function resourceServerInfo(resource) {
  const url = new URL(resource);
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') {
    throw new Error(`not a loopback resource: ${resource}`);
  }
  return { scope: SCOPES.join(' '), audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 600,
    jwt: { sign: { alg: 'RS256' } } };
}

/** An oidc-provider error that tells the client why (its own description stays generic otherwise). */
function refusal(Kind, description) {
  const error = new Kind(description);
  error.error_description = description;
  return error;
}

/**
 * The claims of an access token this provider signed, not expired (strictly: no leeway, as the provider's policy);
 * else invalid_grant. A subject whose name starts with "refused-" may not reach other resources: the provider's
 * policy refuses the exchange, as a real one may for a person without access.
 */
function subjectClaims(token) {
  const [head, body, signature] = String(token ?? '').split('.');
  if (!signature) throw refusal(errors.InvalidGrant, 'subject_token is not a JWT');
  const good = crypto.verify('sha256', Buffer.from(`${head}.${body}`), key.publicKey, Buffer.from(signature, 'base64url'));
  if (!good) throw refusal(errors.InvalidGrant, 'subject_token is not signed by this provider');
  const claims = JSON.parse(Buffer.from(body, 'base64url'));
  if (claims.iss !== issuer) throw refusal(errors.InvalidGrant, 'subject_token was not issued here');
  if (!(claims.exp * 1000 > Date.now())) throw refusal(errors.InvalidGrant, 'subject_token has expired');
  if (String(claims.sub).startsWith('refused-')) throw refusal(errors.InvalidGrant, 'the subject may not reach that resource');
  return claims;
}

// the RFC 8693 grant, through oidc-provider's extension point for grant types: the subject token must be an
// access token of this provider; the token issued names the same subject, for the one resource asked
async function tokenExchange(ctx) {
  const { params, client } = ctx.oidc;
  if (params.subject_token_type !== ACCESS_TOKEN_TYPE) {
    throw refusal(errors.InvalidRequest, `subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
  }
  const claims = subjectClaims(params.subject_token);
  const resource = params.resource ?? params.audience;
  if (!resource || (params.audience && params.resource && params.audience !== params.resource)) {
    throw refusal(errors.InvalidTarget, 'name one resource (resource, audience)');
  }
  const info = resourceServerInfo(resource);
  const asked = params.scope ? params.scope.split(' ') : (claims.scope ?? '').split(' ');
  const token = new ctx.oidc.provider.AccessToken({
    accountId: claims.sub,
    client,
    gty: 'token-exchange',
    scope: asked.filter((scope) => SCOPES.includes(scope)).join(' ') || undefined,
    extra: { act: { sub: client.clientId } },
  });
  token.resourceServer = { ...info, identifier: () => resource, get scopes() { return new Set(info.scope.split(' ')); } };
  exchanges.push({ subject: claims.sub, resource });
  const value = await token.save();
  ctx.body = { access_token: value, issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer',
    expires_in: token.expiration, scope: token.scope };
}

const exchanges = [];

function makeProvider() {
  const made = new Provider(issuer, {
    clients: [...CLIENTS.map(([id, scope]) => ({
      client_id: id,
      client_secret: `${id}-secret-0123456789`,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope,
    })), {
      client_id: 'execache-gateway',
      client_secret: 'execache-gateway-secret-0123456789',
      grant_types: ['client_credentials', TOKEN_EXCHANGE],
      redirect_uris: [],
      response_types: [],
      scope: SCOPES.join(' '),
    }],
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
        getResourceServerInfo: (ctx, resource) => resourceServerInfo(resource),
      },
    },
  });
  made.registerGrantType(TOKEN_EXCHANGE, tokenExchange,
    ['subject_token', 'subject_token_type', 'requested_token_type', 'resource', 'audience', 'scope']);
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
  if (req.method === 'GET' && req.url === '/test/exchanges') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(exchanges));
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
