// An MCP server of the tests' own over Streamable HTTP, on loopback: it counts the calls it serves
// (so a test can tell a cached answer from a fresh one) and can misbehave on request: end its
// sessions, close an answer's stream before answering, refuse credentials, ask to be left alone.
//   --era 2025   the official SDK's StreamableHTTPServerTransport, a session per client, answers
//                as SSE streams that can be resumed (an event store), or as JSON with --json
//   --era 2026   2026-07-28, stateless: server/discover, _meta on every request, ttlMs on tools/list
//                (written by hand: the SDK pinned here knows no 2026-07-28)
//   --features   (2025 era) resources, prompts and completion as the command lab's (lab-features.mjs), logging
//                (logging/setLevel recorded; tools log, log_levels) and progress (tool progress_steps);
//                (2026 era) its resources, read with ttlMs --read-ttl-ms (default 30000; lab://counter/live 0)
//                and cacheScope private, listed with ttlMs --ttl-ms and cacheScope public; logging: the tool log's
//                message comes on its call's SSE stream when the call's _meta asks for a level
//   --asks       tools that ask the client (ask_sampling, ask_elicitation, ask_roots): in the 2025 era a request on
//                the call's stream, in the 2026-07-28 era an input_required answer and the retry; sleep's start and
//                end (answered, cancelled, or its request closed) recorded for the tool sleeps; roots_changed counts
//                the notifications/roots/list_changed of the client's session (2025 era); a tool it does not list
//                (unlisted_echo) and one execache must leave out (bad_header: a header declared on an object
//                property), both answered when called; (2026 era) the prompt ask_name and the resource
//                lab://asks/name, each an input_required answer (elicitation) until the retry gives the name
//   --port N (0: any), --token T (requests must carry "Authorization: Bearer T"), --ttl-ms N,
//   --tls-key FILE --tls-cert FILE (https), --delay-ms N (every tools/call takes that much longer, for the benchmark),
//   --oauth ID:SECRET (it is its own authorization server too: RFC 9728 and RFC 8414 metadata, a
//   client credentials token endpoint; /mcp wants a token it issued), --token-lifetime SECONDS,
//   --close-reused-connections (a connection's second request is never answered: the connection closes as it
//   arrives, as a server's does whose keep-alive time ran out just as the client sent on it)
// Prints "listening PORT" on stdout once it listens.
import http from "node:http";
import https from "node:https";
import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { InMemoryEventStore } from "@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js";
import {
  CallToolRequestSchema, CreateMessageResultSchema, ElicitResultSchema, ListRootsResultSchema, ListToolsRequestSchema,
  RootsListChangedNotificationSchema, SetLevelRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { featureCapabilities, labResources, notifyFeature, offerFeatures, progressSteps, readLabResource } from "./lab-features.mjs";

const option = (name, otherwise) => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? otherwise : process.argv[at + 1];
};
const era = option("era", "2025");
const json = process.argv.includes("--json");
const features = process.argv.includes("--features");
const asks = process.argv.includes("--asks");
const token = option("token", null);
const ttlMs = Number(option("ttl-ms", "60000"));
const readTtlMs = Number(option("read-ttl-ms", "30000"));
const delayMs = Number(option("delay-ms", "0"));
const oauthClient = option("oauth", null);
const tokenLifetime = Number(option("token-lifetime", "3600"));
const closeReused = process.argv.includes("--close-reused-connections");
const issued = new Set();
const oauthLog = { issued: 0, methods: [], resources: [], scopes: [] };

const readOnly = { readOnlyHint: true };
const object = (properties = {}) => ({ type: "object", properties });
const tools = {
  get_count: { description: "The counter.", inputSchema: object({ who: { type: "string" } }), annotations: readOnly },
  increment: { description: "Adds one to the counter.", inputSchema: object(), annotations: { readOnlyHint: false } },
  fail: { description: "Always fails.", inputSchema: object(), annotations: readOnly },
  sleep: { description: "Answers after ms milliseconds.", inputSchema: object({ ms: { type: "number" } }), annotations: readOnly },
  oauth_log: { description: "The tokens issued, and how the client authenticated.", inputSchema: object() },
  trace_context: { description: "The traceparent its call carried in _meta and in the HTTP headers.", inputSchema: object() },
  dropped_stream: { description: "Closes its answer's stream, then answers.", inputSchema: object({ who: { type: "string" } }), annotations: readOnly },
  end_sessions: { description: "Ends every session, as a restart would.", inputSchema: object(), annotations: { readOnlyHint: false } },
  refuse_next: {
    description: "Answers the next requests with an HTTP status (429, 503, 401) and Retry-After.",
    inputSchema: object({ status: { type: "number" }, count: { type: "number" }, retry_after: { type: "string" } }),
    annotations: { readOnlyHint: false },
  },
  set_description: {
    description: "Changes a tool's description; notify: send tools/list_changed.",
    inputSchema: object({ tool: { type: "string" }, description: { type: "string" }, notify: { type: "boolean" } }),
    annotations: { readOnlyHint: false },
  },
};
if (features) {
  Object.assign(tools, {
    log: {
      description: "Sends one log message (notifications/message) with the level, logger and data given.",
      inputSchema: object({ level: { type: "string" }, logger: { type: "string" }, data: {} }),
    },
    progress_steps: {
      description: "Reports steps progress notifications (progress 1..steps of total steps) under the call's progress token, then answers the token it got.",
      inputSchema: object({ steps: { type: "number" } }),
    },
    log_levels: { description: "The levels the client set with logging/setLevel, in order.", inputSchema: object() },
    notify: {
      description: "Sends the notification named to every session: notifications/resources/updated for uri (while it is subscribed to), notifications/resources/list_changed or notifications/prompts/list_changed; answers whether it sent it.",
      inputSchema: object({ method: { type: "string" }, uri: { type: "string" } }),
    },
  });
}
if (asks) {
  Object.assign(tools, {
    ask_sampling: { description: "Asks the client to sample a message for the prompt; answers what it sampled.",
      inputSchema: object({ prompt: { type: "string" } }), annotations: readOnly },
    ask_elicitation: { description: "Asks the client (a person) for a name; answers what they gave.",
      inputSchema: object(), annotations: readOnly },
    ask_roots: { description: "Asks the client for its roots; answers them.", inputSchema: object(), annotations: readOnly },
    sleeps: { description: "The sleeps begun and how each ended.", inputSchema: object() },
    roots_changed: { description: "How many notifications/roots/list_changed the client sent.", inputSchema: object() },
    bad_header: { description: "Declares a header on an object property, which the spec does not allow.",
      inputSchema: object({ v: { type: "object", "x-mcp-header": "V" } }), annotations: readOnly },
  });
}
// what the prompt ask_name and the resource lab://asks/name ask first (2026 era), and what they give with the answer
const askName = { method: "elicitation/create", params: { mode: "form", message: "Whose name?",
  requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } } };
const namedAfterAsking = (params, complete) => {
  const given = params.inputResponses?.ask_name;
  if (given === undefined || params.requestState !== "ask_name-state") {
    served.ask_name = (served.ask_name ?? 0) + 1;
    return { resultType: "input_required", inputRequests: { ask_name: askName }, requestState: "ask_name-state" };
  }
  return complete(`Hello, ${given.content?.name ?? "nobody"}`);
};
// what the lab asks the client for each asking tool, the same in both eras
const asked = {
  ask_sampling: (args) => ({ method: "sampling/createMessage", params: {
    messages: [{ role: "user", content: { type: "text", text: args.prompt ?? "Say hi" } }], maxTokens: 50 } }),
  ask_elicitation: () => ({ method: "elicitation/create", params: { mode: "form", message: "Who are you?",
    requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } } }),
  ask_roots: () => ({ method: "roots/list", params: {} }),
};
const answered = (name, result) => name === "ask_sampling" ? text({ sampled: result.content?.text ?? null, model: result.model })
  : name === "ask_elicitation" ? text({ action: result.action, content: result.content ?? null })
  : text({ roots: result.roots });
const sleeps = [];
const levels = [];
let counter = 0;
const served = {};
let refusing = { status: 0, count: 0, retryAfter: null };
const sessions = new Map();

const text = (value) => ({ content: [{ type: "text", text: JSON.stringify(value) }] });
const listTools = () => Object.entries(tools).map(([name, tool]) => ({ name, ...tool }));

async function callTool(name, args, extra, notify) {
  served[name] = (served[name] ?? 0) + 1;
  if (delayMs > 0) {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  switch (name) {
    case "get_count":
      return text({ counter, served: served[name], who: args.who ?? null, era });
    case "log": {
      const params = { level: args.level, data: args.data };
      if (args.logger !== undefined) {
        params.logger = args.logger;
      }
      await extra.sendNotification({ method: "notifications/message", params });
      return text({ logged: true });
    }
    case "progress_steps": {
      const token = extra?._meta?.progressToken;
      await progressSteps((notification) => extra.sendNotification(notification), token, args.steps);
      return text({ token: token ?? null });
    }
    case "log_levels":
      return text({ levels });
    case "notify":
      return text({ sent: await notifyFeature(async (notification) => {
        for (const session of sessions.values()) {
          await session.server.notification(notification).catch(() => {});
        }
      }, args.method, args.uri) });
    case "sleep": {
      const record = { ms: args.ms, state: "started" };
      sleeps.push(record);
      // ended early by a cancel (2025: notifications/cancelled aborts the signal) or by its request closing
      const ended = new Promise((resolve) => {
        extra?.signal?.addEventListener("abort", () => {
          record.reason = String(extra.signal.reason ?? "");
          resolve("cancelled");
        });
        extra?.closed?.then(() => resolve("closed"));
      });
      const why = await Promise.race([new Promise((resolve) => setTimeout(() => resolve("answered"), args.ms)), ended]);
      record.state = why;
      return text({ slept: args.ms });
    }
    case "sleeps":
      return text({ sleeps });
    case "unlisted_echo":
      return text({ unlisted: true, served: served[name], args });
    case "bad_header":
      return text({ called: name });
    case "roots_changed":
      return text({ rootsChanged: extra.session.rootsChanged });
    case "ask_sampling":
    case "ask_elicitation":
    case "ask_roots": {
      const request = asked[name](args);
      if (era === "2026") {
        // 2026-07-28: the answer comes with the retry, under the key the lab gave it
        const given = extra.inputResponses?.[name];
        if (given === undefined || extra.requestState !== `${name}-state`) {
          return { resultType: "input_required", inputRequests: { [name]: request }, requestState: `${name}-state` };
        }
        return answered(name, given);
      }
      const schema = { ask_sampling: CreateMessageResultSchema, ask_elicitation: ElicitResultSchema,
        ask_roots: ListRootsResultSchema }[name];
      const result = await extra.sendRequest(request, schema);
      return answered(name, result);
    }
    case "oauth_log":
      return text(oauthLog);
    case "trace_context":
      // the 2026-07-28 path hands in the request's _meta and headers; the SDK's extra carries them as _meta and requestInfo
      return text({ meta: (extra?.meta ?? extra?._meta)?.traceparent ?? null,
        header: (extra?.headers ?? extra?.requestInfo?.headers)?.traceparent ?? null });
    case "increment":
      counter += 1;
      return text({ counter });
    case "fail":
      return { ...text({ served: served[name] }), isError: true };
    case "dropped_stream":
      extra?.closeSSEStream?.();
      await new Promise((resolve) => setTimeout(resolve, 200));
      return text({ served: served[name], resumed: Boolean(extra?.closeSSEStream), who: args.who ?? null });
    case "end_sessions":
    {
      const ended = [...sessions.values()];
      sessions.clear();
      setTimeout(() => ended.forEach((session) => session.transport.close()), 100);
      return text({ ended: ended.length });
    }
    case "refuse_next":
      refusing = { status: args.status, count: args.count ?? 1, retryAfter: args.retry_after ?? null };
      return text({ refusing });
    case "set_description":
      tools[args.tool].description = args.description;
      if (args.notify) {
        await notify();
      }
      return text({ changed: args.tool });
    default:
      return { ...text({ unknown: name }), isError: true };
  }
}

function newSdkServer() {
  const server = new Server({ name: "http-lab", version: "1.0.0" }, { capabilities: { tools: { listChanged: true },
    ...(features ? { logging: {}, ...featureCapabilities } : {}) } });
  if (features) {
    offerFeatures(server);
    // recorded, and every message sent whatever the level: the test reads what its client was asked
    server.setRequestHandler(SetLevelRequestSchema, async (request) => {
      levels.push(request.params.level);
      return {};
    });
  }
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listTools() }));
  // counted per session: each client's own
  const session = { rootsChanged: 0 };
  server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
    session.rootsChanged += 1;
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) =>
    callTool(request.params.name, request.params.arguments ?? {}, { ...extra, session }, async () => {
      for (const session of sessions.values()) {
        await session.server.sendToolListChanged().catch(() => {});
      }
    }));
  return server;
}

const readBody = (req) => new Promise((resolve, reject) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    try {
      resolve(body ? JSON.parse(body) : undefined);
    } catch (e) {
      reject(e);
    }
  });
  req.on("error", reject);
});

const answer = (res, status, body, headers = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(body === undefined ? "" : JSON.stringify(body));
};

async function legacy(req, res) {
  const sessionId = req.headers["mcp-session-id"];
  const body = req.method === "POST" ? await readBody(req) : undefined;
  if (sessionId) {
    const session = sessions.get(sessionId);
    if (!session) {
      return answer(res, 404, { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null });
    }
    return session.transport.handleRequest(req, res, body);
  }
  if (req.method !== "POST" || body?.method !== "initialize") {
    return answer(res, 400, { jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: no session" }, id: null });
  }
  const server = newSdkServer();
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: json,
    eventStore: json ? undefined : new InMemoryEventStore(),
    retryInterval: 50,
    onsessioninitialized: (id) => sessions.set(id, { server, transport }),
    onsessionclosed: (id) => sessions.delete(id),
  });
  await server.connect(transport);
  return transport.handleRequest(req, res, body);
}

const META = "io.modelcontextprotocol/";
const listeners = new Set();
const notifyListeners = async () => {
  for (const listener of listeners) {
    listener.res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/tools/list_changed",
      params: { _meta: { [`${META}subscriptionId`]: listener.id } } })}\n\n`);
  }
};
async function modern(req, res) {
  if (req.method !== "POST") {
    return answer(res, 405, { jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed" }, id: null });
  }
  const message = await readBody(req);
  const meta = message?.params?._meta ?? {};
  if (req.headers["mcp-protocol-version"] !== "2026-07-28" || meta[`${META}protocolVersion`] !== "2026-07-28"
      || !meta[`${META}clientCapabilities`]) {
    return answer(res, 400, { jsonrpc: "2.0", id: message?.id ?? null,
      error: { code: -32602, message: "2026-07-28 needs MCP-Protocol-Version and _meta on every request" } });
  }
  const ok = (result) => answer(res, 200, { jsonrpc: "2.0", id: message.id, result: { resultType: "complete", ...result } });
  switch (message.method) {
    case "server/discover":
      return ok({ supportedVersions: ["2026-07-28"], capabilities: { tools: { listChanged: true },
        ...(features || asks ? { resources: {} } : {}), ...(features ? { logging: {} } : {}),
        ...(asks ? { prompts: {} } : {}) },
        serverInfo: { name: "http-lab-2026", version: "1.0.0" }, instructions: "The HTTP lab of the 2026-07-28 era.",
        ttlMs: ttlMs, cacheScope: "public" });
    case "tools/list":
      return ok({ tools: listTools(), ttlMs, cacheScope: "public" });
    case "resources/list":
      if (features || asks) {
        return ok({ resources: [...(features ? labResources : []),
          ...(asks ? [{ uri: "lab://asks/name", name: "name", mimeType: "text/plain" }] : [])], ttlMs, cacheScope: "public" });
      }
      break;
    case "prompts/list":
      if (asks) {
        return ok({ prompts: [{ name: "ask_name", description: "Greets whoever the client names." }], ttlMs,
          cacheScope: "public" });
      }
      break;
    case "prompts/get":
      if (asks && message.params.name === "ask_name") {
        const result = namedAfterAsking(message.params, (greeting) => ({
          messages: [{ role: "user", content: { type: "text", text: greeting } }] }));
        return result.resultType ? answer(res, 200, { jsonrpc: "2.0", id: message.id, result }) : ok(result);
      }
      break;
    case "resources/read":
      if (asks && message.params.uri === "lab://asks/name") {
        const result = namedAfterAsking(message.params, (greeting) => ({
          contents: [{ uri: "lab://asks/name", mimeType: "text/plain", text: greeting }], ttlMs: 60000, cacheScope: "public" }));
        return result.resultType ? answer(res, 200, { jsonrpc: "2.0", id: message.id, result }) : ok(result);
      }
      if (features) {
        try {
          const uri = message.params.uri;
          return ok({ ...readLabResource(uri), ttlMs: uri === "lab://counter/live" ? 0 : readTtlMs, cacheScope: "private" });
        } catch (e) {
          return answer(res, 200, { jsonrpc: "2.0", id: message.id, error: { code: e.code ?? -32603, message: e.message } });
        }
      }
      break;
    case "tools/call": {
      const closed = new Promise((resolve) => res.on("close", () => resolve()));
      // a log message only for a call that asked for a level (the spec: none without it), on the call's own stream
      const sent = [];
      const sendNotification = async (notification) => {
        if (notification.method !== "notifications/message" || meta[`${META}logLevel`] !== undefined) {
          sent.push(notification);
        }
      };
      const result = await callTool(message.params.name, message.params.arguments ?? {}, { meta, headers: req.headers,
        inputResponses: message.params.inputResponses, requestState: message.params.requestState, closed,
        sendNotification }, notifyListeners);
      if (result.resultType === "input_required") {
        return answer(res, 200, { jsonrpc: "2.0", id: message.id, result });
      }
      if (sent.length === 0) {
        return ok(result);
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (const notification of sent) {
        res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", ...notification })}\n\n`);
      }
      res.end(`data: ${JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { resultType: "complete", ...result } })}\n\n`);
      return undefined;
    }
    case "subscriptions/listen": {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const listener = { id: message.id, res };
      listeners.add(listener);
      res.on("close", () => listeners.delete(listener));
      res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/subscriptions/acknowledged",
        params: { notifications: message.params.notifications, _meta: { [`${META}subscriptionId`]: message.id } } })}\n\n`);
      return undefined;
    }
  }
  return answer(res, 200, { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: `no method ${message.method}` } });
}

const readForm = (req) => new Promise((resolve) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => resolve(new URLSearchParams(Buffer.concat(chunks).toString("utf8"))));
});

async function authorization(req, res, origin) {
  const path = new URL(req.url, origin).pathname;
  if (path.startsWith("/.well-known/oauth-protected-resource")) {
    return answer(res, 200, { resource: `${origin}/mcp`, authorization_servers: [origin] });
  }
  if (path === "/.well-known/oauth-authorization-server") {
    return answer(res, 200, { issuer: origin, token_endpoint: `${origin}/token`, grant_types_supported: ["client_credentials"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"] });
  }
  if (path === "/token") {
    const form = await readForm(req);
    const [id, secret] = oauthClient.split(":");
    let method = null;
    if (req.headers.authorization?.startsWith("Basic ")) {
      const [user, password] = Buffer.from(req.headers.authorization.slice(6), "base64").toString("utf8").split(":")
        .map(decodeURIComponent);
      method = user === id && password === secret ? "client_secret_basic" : null;
    } else if (form.get("client_id") === id && form.get("client_secret") === secret) {
      method = "client_secret_post";
    }
    if (form.get("grant_type") !== "client_credentials" || method === null) {
      return answer(res, 401, { error: "invalid_client" });
    }
    const token = `at-${randomUUID()}`;
    issued.add(token);
    oauthLog.issued += 1;
    oauthLog.methods.push(method);
    oauthLog.resources.push(form.get("resource"));
    oauthLog.scopes.push(form.get("scope"));
    return answer(res, 200, { access_token: token, token_type: "Bearer", expires_in: tokenLifetime });
  }
  const bearer = req.headers.authorization?.startsWith("Bearer ") ? req.headers.authorization.slice(7) : null;
  if (!issued.has(bearer)) {
    return answer(res, 401, { error: "invalid_token" },
      { "www-authenticate": `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"` });
  }
  return null;
}

const tls = option("tls-cert", null) === null ? null
  : { key: readFileSync(option("tls-key")), cert: readFileSync(option("tls-cert")) };
const handler = async (req, res) => {
  if (closeReused) {
    req.socket.requestsSeen = (req.socket.requestsSeen ?? 0) + 1;
    if (req.socket.requestsSeen > 1) {
      req.socket.destroy();
      return undefined;
    }
  }
  try {
    if (oauthClient !== null) {
      const handled = await authorization(req, res, `http://127.0.0.1:${httpServer.address().port}`);
      if (handled !== null) {
        return handled;
      }
    }
    if (token !== null && req.headers.authorization !== `Bearer ${token}`) {
      return answer(res, 401, { error: "invalid_token" }, { "www-authenticate": 'Bearer error="invalid_token"' });
    }
    if (refusing.count > 0 && req.method === "POST") {
      refusing.count -= 1;
      return answer(res, refusing.status, { error: "refused" },
        refusing.retryAfter === null ? {} : { "retry-after": refusing.retryAfter });
    }
    return await (era === "2026" ? modern(req, res) : legacy(req, res));
  } catch (e) {
    console.error(e);
    if (!res.headersSent) {
      answer(res, 500, { error: String(e) });
    }
  }
};
const httpServer = tls === null ? http.createServer(handler) : https.createServer(tls, handler);
httpServer.listen(Number(option("port", "0")), "127.0.0.1", () => {
  console.log(`listening ${httpServer.address().port}`);
});
process.on("SIGTERM", () => process.exit(0));
