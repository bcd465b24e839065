// The lab servers' resources (a text one, a binary one, a template), prompt with arguments and completion, the same
// for the command lab (lab-server.mjs, LAB_FEATURES=1) and the url lab (http-lab-server.mjs --features), so that a
// test can compare either's answers with the other's.
import {
  CompleteRequestSchema, GetPromptRequestSchema, ListPromptsRequestSchema, ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema, ReadResourceRequestSchema, McpError, SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

/** The capabilities a server that offers these declares, beside its own. */
export const featureCapabilities = { resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true },
  completions: {} };

/** The URIs a client subscribed to (resources/subscribe) and has not unsubscribed from. */
const subscribed = new Set();

/**
 * Sends (with send) one notification of the features: notifications/resources/updated for uri (only while it is subscribed to, so
 * that a test sees the subscription reached the server), or notifications/resources/list_changed or
 * notifications/prompts/list_changed. Answers whether it sent it.
 */
export async function notifyFeature(send, method, uri) {
  if (method === "notifications/resources/updated") {
    if (!subscribed.has(uri)) {
      return false;
    }
    await send({ method, params: { uri } });
    return true;
  }
  await send({ method });
  return true;
}

/** The resources listed (the counters count the reads they served, so that a test tells a cached read from a fresh one). */
export const labResources = [
  { uri: "lab://notes/readme", name: "readme", title: "The lab's notes", mimeType: "text/plain" },
  { uri: "lab://images/dot.png", name: "dot", mimeType: "image/png", description: "A one-pixel image." },
  { uri: "lab://counter/reads", name: "reads", mimeType: "text/plain", description: "How many times it was read." },
  { uri: "lab://counter/live", name: "live", mimeType: "text/plain", description: "As reads, never to be kept (2026-07-28 lab: ttlMs 0)." },
];
// bytes that are not UTF-8, so that a blob changed on the way shows
const dot = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe, 0x80]).toString("base64");
const counted = {};
// the prompt's gets served, by person: a get through a cache that counts as before was not asked again
const greeted = {};

/**
 * The result of resources/read of uri; an unknown URI throws -32002, lab://counter/broken -32603. (On an SDK server,
 * a read of lab://counter/changing also sends notifications/resources/updated for it before its answer.)
 */
export function readLabResource(uri) {
  if (uri === "lab://notes/readme") {
    return { contents: [{ uri, mimeType: "text/plain", text: "The lab's notes: ünïcode and \"quotes\"." }] };
  }
  if (uri === "lab://images/dot.png") {
    return { contents: [{ uri, mimeType: "image/png", blob: dot }] };
  }
  if (uri.startsWith("lab://counter/")) {
    counted[uri] = (counted[uri] ?? 0) + 1;
    if (uri === "lab://counter/broken") {
      throw new McpError(-32603, `broken, read ${counted[uri]} times`);
    }
    return { contents: [{ uri, mimeType: "text/plain", text: `read ${counted[uri]} times` }] };
  }
  const room = /^lab:\/\/rooms\/([^/]+)$/.exec(uri);
  if (room) {
    return { contents: [{ uri, mimeType: "text/plain", text: `room ${room[1]}` }] };
  }
  throw new McpError(-32002, `Resource not found: ${uri}`);
}

/** The result of prompts/get; a prompt other than greet throws -32602. */
export function getLabPrompt(name, args = {}) {
  if (name !== "greet") {
    throw new McpError(-32602, `Unknown prompt: ${name}`);
  }
  const text = `Greet ${args.person} in a ${args.style ?? "plain"} way.`;
  if (args.style === "counted") {
    greeted[args.person] = (greeted[args.person] ?? 0) + 1;
    return { description: "A greeting", messages: [{ role: "user", content: { type: "text", text: `${text} (get ${greeted[args.person]})` } }] };
  }
  return { description: "A greeting", messages: [{ role: "user", content: { type: "text", text } }] };
}

/** Answers resources/*, prompts/* and completion/complete on an SDK server. */
export function offerFeatures(server) {
  const rooms = ["kitchen", "kiln", "lobby"];
  const styles = ["formal", "friendly", "funny"];
  const prefixed = (values, value) => values.filter((each) => each.startsWith(value));
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: labResources }));
  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    subscribed.add(request.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscribed.delete(request.params.uri);
    return {};
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [{ uriTemplate: "lab://rooms/{room}", name: "room", mimeType: "text/plain" },
      { uriTemplate: "lab://counter/{name}", name: "counter", mimeType: "text/plain", description: "Counts its reads (broken: fails)." }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const result = readLabResource(request.params.uri);
    if (request.params.uri === "lab://counter/changing") {
      // it changed while it was read: the notice goes out before the answer, which holds what was read before
      await server.notification({ method: "notifications/resources/updated", params: { uri: request.params.uri } });
    }
    return result;
  });
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [{
      name: "greet", title: "Greet someone", description: "A greeting for a person.",
      arguments: [{ name: "person", required: true }, { name: "style", description: "How to greet." }],
    }],
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) =>
    getLabPrompt(request.params.name, request.params.arguments ?? {}));
  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const { ref, argument } = request.params;
    const values = ref.type === "ref/prompt" && ref.name === "greet" && argument.name === "style" ? styles
      : ref.type === "ref/resource" && ref.uri === "lab://rooms/{room}" && argument.name === "room" ? rooms : [];
    const found = prefixed(values, argument.value);
    return { completion: { values: found, total: found.length, hasMore: false } };
  });
}

/** Reports steps 1..steps of a call's progress under the caller's token (none without a token), one notification each. */
export async function progressSteps(send, token, steps) {
  for (let step = 1; token !== undefined && step <= steps; step++) {
    await send({
      method: "notifications/progress",
      params: { progressToken: token, progress: step, total: steps, message: `step ${step}` },
    });
  }
}
