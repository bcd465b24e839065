// The execache runner: the main module of one Deno process, which runs exactly one piece of
// agent code and then exits.
//
// The host writes to stdin 32 ASCII bytes of a per-run secret, then a JSON object
// {module, context, maxResultBytes} (module is a data: URL, so the code needs no read
// permission), then closes stdin. The runner answers on stdout, which it shares with the code,
// in frames the code cannot forge because it never learns the secret:
//
//   secret, kind (1 byte), payload length (decimal), "\n", payload, secret
//
// Kinds: "a" acknowledges the request before the code runs, "v" carries the result as JSON
// text, "e" an error as length-prefixed fields. Everything else on stdout and stderr is the
// code's console output.
//
// The code runs in this isolate, after this module has taken everything it needs from the
// globals, so replacing JSON.stringify, typed array methods or Deno.stdout afterwards changes
// nothing here. The secret is only ever held in typed arrays, never in a string: a heap
// snapshot (node:v8, which needs no permission) shows every string but no typed array bytes.

const uncurry = Function.prototype.bind.bind(Function.prototype.call);
const U8 = Uint8Array;
const typedArrayPrototype = Object.getPrototypeOf(U8.prototype);
const u8Length = uncurry(Object.getOwnPropertyDescriptor(typedArrayPrototype, "length").get);
const u8Set = uncurry(typedArrayPrototype.set);
const u8Subarray = uncurry(typedArrayPrototype.subarray);
const u8Fill = uncurry(typedArrayPrototype.fill);
const encoder = new TextEncoder();
const encode = uncurry(TextEncoder.prototype.encode);
const decoder = new TextDecoder();
const decode = uncurry(TextDecoder.prototype.decode);
const stdin = Deno.stdin;
const readSync = uncurry(stdin.readSync);
const stdout = Deno.stdout;
const writeSync = uncurry(stdout.writeSync);
const exit = Deno.exit;
const stringify = JSON.stringify;
const parseJson = JSON.parse;
const isArray = Array.isArray;
const MapType = Map;
const mapGet = uncurry(Map.prototype.get);
const mapSet = uncurry(Map.prototype.set);
const then = uncurry(Promise.prototype.then);
const PromiseResolve = Promise.resolve.bind(Promise);
const stringSlice = uncurry(String.prototype.slice);
const addListener = uncurry(EventTarget.prototype.addEventListener);
const preventDefault = uncurry(Event.prototype.preventDefault);
const ErrorType = Error;
const NotCapable = Deno.errors.NotCapable;
const PermissionDenied = Deno.errors.PermissionDenied;
const global = globalThis;

const SECRET_LENGTH = 32;
const MAX_TEXT = 65536;

function readRequest() {
  let buffer = new U8(65536);
  let length = 0;
  for (;;) {
    if (length === u8Length(buffer)) {
      const bigger = new U8(length * 2);
      u8Set(bigger, buffer);
      buffer = bigger;
    }
    const n = readSync(stdin, u8Subarray(buffer, length));
    if (n === null) break;
    length += n;
  }
  if (length <= SECRET_LENGTH) {
    // The host went away without handing over any code (a pooled runner it no longer needs).
    exit(0);
  }
  const secret = new U8(SECRET_LENGTH);
  u8Set(secret, u8Subarray(buffer, 0, SECRET_LENGTH));
  const request = parseJson(decode(decoder, u8Subarray(buffer, SECRET_LENGTH, length)));
  u8Fill(buffer, 0);
  return { secret, request };
}

const { secret, request } = readRequest();
let settled = false;

function writeAll(bytes) {
  const total = u8Length(bytes);
  let offset = 0;
  while (offset < total) {
    offset += writeSync(stdout, u8Subarray(bytes, offset));
  }
}

function frame(kind, payload) {
  const header = encode(encoder, kind + u8Length(payload) + "\n");
  const headerLength = u8Length(header);
  const payloadLength = u8Length(payload);
  const out = new U8(SECRET_LENGTH + headerLength + payloadLength + SECRET_LENGTH);
  u8Set(out, secret, 0);
  u8Set(out, header, SECRET_LENGTH);
  u8Set(out, payload, SECRET_LENGTH + headerLength);
  u8Set(out, secret, SECRET_LENGTH + headerLength + payloadLength);
  writeAll(out);
}

function finish(kind, payload) {
  if (settled) return;
  settled = true;
  frame(kind, payload);
  // Exit at once: a pending timer or interval of the code must not delay the result.
  exit(0);
}

function text(value) {
  if (typeof value !== "string") return "";
  return value.length > MAX_TEXT ? stringSlice(value, 0, MAX_TEXT) + "..." : value;
}

function field(value) {
  return value.length + ":" + value;
}

// phase: import | run | uncaught | pending | serialize | result-limit
function fail(phase, error, fallbackMessage) {
  let name = "";
  let message = "";
  let stack = "";
  let permission = false;
  let isError = false;
  try {
    isError = error instanceof ErrorType;
    permission = error instanceof NotCapable || error instanceof PermissionDenied;
  } catch {
    // an odd value; described below as well as it can be
  }
  if (isError) {
    try { name = text(error.name); } catch { /* keep empty */ }
    try { message = text(error.message); } catch { /* keep empty */ }
    try { stack = text(error.stack); } catch { /* keep empty */ }
  } else if (fallbackMessage !== undefined) {
    message = fallbackMessage;
  } else {
    try {
      message = text(typeof error === "string" ? error : stringify(error));
    } catch {
      message = "";
    }
    if (message === "") {
      try { message = text("" + error); } catch { message = "a value that cannot be shown"; }
    }
  }
  finish("e", encode(encoder,
      field(phase) + field(name) + field(message) + field(stack) + field(permission ? "1" : "0")));
}

class SerializationProblem {
  constructor(message) {
    this.message = message;
  }
}

function pathOf(parentPath, holder, key) {
  if (parentPath === undefined) return "result";
  if (isArray(holder)) return parentPath + "[" + key + "]";
  let plain = key.length > 0;
  for (let i = 0; i < key.length && plain; i++) {
    const c = key[i];
    plain = (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c === "_" || c === "$"
        || (i > 0 && c >= "0" && c <= "9");
  }
  return plain ? parentPath + "." + key : parentPath + "[" + stringify(key) + "]";
}

function serialize(value) {
  if (value === undefined) return "null";
  const paths = new MapType();
  const replacer = function (key, current) {
    const path = pathOf(mapGet(paths, this), this, key);
    const type = typeof current;
    if (type === "function") throw new SerializationProblem("the result holds a function at " + path);
    if (type === "symbol") throw new SerializationProblem("the result holds a symbol at " + path);
    if (type === "bigint") throw new SerializationProblem("the result holds a BigInt at " + path);
    if (type === "object" && current !== null) mapSet(paths, current, path);
    return current;
  };
  const json = stringify(value, replacer);
  return json === undefined ? "null" : json;
}

function succeed(value) {
  if (settled) return;
  let json;
  try {
    json = serialize(value);
  } catch (problem) {
    if (problem instanceof SerializationProblem) {
      return fail("serialize", undefined, problem.message);
    }
    let message = "";
    try { message = text(problem.message); } catch { /* keep empty */ }
    return fail("serialize", undefined, "the result cannot be turned into JSON: " + message);
  }
  const limit = request.maxResultBytes;
  if (json.length > limit) {
    return fail("result-limit", undefined, "the result is over the limit of " + limit + " bytes");
  }
  const bytes = encode(encoder, json);
  if (u8Length(bytes) > limit) {
    return fail("result-limit", undefined,
        "the result is " + u8Length(bytes) + " bytes, over the limit of " + limit + " bytes");
  }
  finish("v", bytes);
}

addListener(global, "error", (event) => {
  preventDefault(event);
  fail("uncaught", event.error);
});
addListener(global, "unhandledrejection", (event) => {
  preventDefault(event);
  fail("uncaught", event.reason);
});
// Deno dispatches beforeunload when nothing is left to run: the code's promise can never settle.
addListener(global, "beforeunload", () => {
  if (!settled) fail("pending", undefined, "the code's promise never settled and nothing was left to wait for");
});

frame("a", new U8(0));
then(import(request.module), (module) => {
  const code = module.default;
  if (typeof code !== "function") {
    return fail("run", undefined, "the code's module has no default function");
  }
  // The promise job calls the code itself, so no frame of this script (and no host path) is on
  // the code's stack.
  const returned = then(PromiseResolve(request.context), code);
  then(returned, succeed, (error) => fail("run", error));
}, (error) => fail("import", error));
