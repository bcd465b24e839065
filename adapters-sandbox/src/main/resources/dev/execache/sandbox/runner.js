// The execache runner: the main module of one Deno process, which runs exactly one piece of
// agent code and then exits. It is started as a data: URL from a neutral working directory, so
// nothing about it names a host path.
//
// The host writes to stdin 32 ASCII bytes of a per-run secret, then the decimal length of a JSON
// object {module, context, maxResultBytes, maxCallBytes, tools, workingDirectory?} and a newline, then the
// object (module is a data: URL, so the code needs no read permission; workingDirectory only when
// the code may read it). The runner answers on stdout, which it shares with the code, in frames
// the code cannot forge because it never learns the secret:
//
//   secret, kind (1 byte), payload length (decimal), "\n", payload, secret
//
// Kinds (FRAME below; FrameReader.Kind on the host, a test checks they agree): "a" acknowledges
// the request before the code runs, "v" carries the result as JSON text, "e" an error as
// length-prefixed fields, "n" the sources of non-determinism the code used (sent just before
// "v" or "e"), and "c" a tool call of the code: the server's and the tool's names and how many of
// the run's earlier calls the code could have read the answers of (decimal) as length-prefixed
// fields, then the arguments as JSON text. Everything else on stdout and stderr
// is the code's console output.
//
// Tool calls. `tools` (from the request: each server's name and its tools' names) is the only
// way the code reaches a tool. A call is made at once: the runner writes a "c" frame and reads
// the host's answer from stdin, which the host keeps open while the code runs, as
//
//   kind (1 byte: ANSWER below, FrameReader.Answer on the host), call number (decimal), ":",
//   payload length (decimal), "\n", payload
//
// "v" carries the tool's value as JSON text, "e" the message of its error. The code waits for
// its tools one call at a time; the promise it gets is settled when it gets it. The code can read
// an answer only in a later microtask, so each call queues one that marks its answer readable:
// calls made before it runs (Promise.all over calls, say) depend on no answer of each other's, and
// the host may ask them again at once to revalidate the run. A call whose
// payload would be over maxCallBytes is not sent: its promise rejects, and the run goes on.
//
// The rule that keeps frames unforgeable. The code runs in this isolate and can run as early
// as its module is evaluated, so everything this script uses after that was captured before,
// in a form that consults nothing the code can change:
// - functions are captured once and called through `uncurry`, never looked up at call time;
// - byte views are made with the captured constructor, `new U8(buffer, offset, length)`,
//   never with subarray, slice or map, which ask the array's constructor and Symbol.species
//   for the class of the new array (and so would hand it the frame's buffer);
// - no promise of this script is chained after the code started (then() asks the promise's
//   constructor and Symbol.species); the code's result is taken with `await`;
// - objects of this script get their properties by definition, never by assignment (which
//   runs a setter the code put on Object.prototype); values are tested with a captured
//   isPrototypeOf, never instanceof (which asks Symbol.hasInstance); event fields are read
//   with captured getters;
// - nothing of this script reaches the code but the context (parsed from JSON) and the
//   neutral stand-ins for APIs that would name host paths; values the code hands back (its
//   result, what it throws, their names, messages and stacks) are only read as data.
// The secret is only ever held in typed arrays, never in a string: a heap snapshot (node:v8,
// which needs no permission) shows every string but no typed array bytes.

const uncurry = Function.prototype.bind.bind(Function.prototype.call);
const U8 = Uint8Array;
const typedArrayPrototype = Object.getPrototypeOf(U8.prototype);
const u8Length = uncurry(Object.getOwnPropertyDescriptor(typedArrayPrototype, "length").get);
const u8Buffer = uncurry(Object.getOwnPropertyDescriptor(typedArrayPrototype, "buffer").get);
const u8Offset = uncurry(Object.getOwnPropertyDescriptor(typedArrayPrototype, "byteOffset").get);
const u8Set = uncurry(typedArrayPrototype.set);
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
const defineProperty = Object.defineProperty;
const createObject = Object.create;
const freeze = Object.freeze;
const hasOwn = Object.hasOwn;
const keysOf = Object.keys;
const ProxyType = Proxy;
const PromiseType = Promise;
const ErrorType = Error;
const TypeErrorType = TypeError;
const RangeErrorType = RangeError;
const reflectApply = Reflect.apply;
const queueTask = queueMicrotask;
const reflectConstruct = Reflect.construct;
const OriginalDate = Date;
const dateNow = Date.now;
const mathRandom = Math.random;
const performanceNow = uncurry(Performance.prototype.now);
const OriginalWorker = Worker;
const processDescriptor = Object.getOwnPropertyDescriptor(globalThis, "process");
const cryptoGetRandomValues = uncurry(Crypto.prototype.getRandomValues);
const cryptoRandomUUID = uncurry(Crypto.prototype.randomUUID);
const isPrototypeOf = uncurry(Object.prototype.isPrototypeOf);
const MapType = Map;
const mapGet = uncurry(Map.prototype.get);
const mapSet = uncurry(Map.prototype.set);
const then = uncurry(Promise.prototype.then);
const stringSlice = uncurry(String.prototype.slice);
const stringIndexOf = uncurry(String.prototype.indexOf);
const addListener = uncurry(EventTarget.prototype.addEventListener);
const preventDefault = uncurry(Event.prototype.preventDefault);
const errorOfEvent = uncurry(Object.getOwnPropertyDescriptor(ErrorEvent.prototype, "error").get);
const reasonOfEvent = uncurry(Object.getOwnPropertyDescriptor(PromiseRejectionEvent.prototype, "reason").get);
const ErrorPrototype = Error.prototype;
const NotCapablePrototype = Deno.errors.NotCapable.prototype;
const PermissionDeniedPrototype = Deno.errors.PermissionDenied.prototype;
const global = globalThis;

const SECRET_LENGTH = 32;
const MAX_TEXT = 65536;
const FRAME = { ACK: "a", VALUE: "v", ERROR: "e", NONDETERMINISM: "n", CALL: "c" };
const ANSWER = { VALUE: "v", ERROR: "e" };
const MAX_HEADER = 64;
// The last three are code that runs outside this realm, where the watch below does not reach.
const NONDETERMINISM_SOURCES = freeze(["Date.now", "new Date()", "Date()", "Math.random", "crypto.getRandomValues",
  "crypto.randomUUID", "performance.now", "Worker", "node:worker_threads", "node:vm"]);
// The global the host's import map stand-ins call (OtherRealms.HOOK on the host).
const REALMS_HOOK = "__execache_realms";

function view(bytes, from, to) {
  return new U8(u8Buffer(bytes), u8Offset(bytes) + from, to - from);
}

// What has been read from stdin and not yet taken: inBuffer[inStart, inEnd).
let inBuffer = new U8(65536);
let inStart = 0;
let inEnd = 0;

/** Reads more of stdin; false at its end. */
function fill() {
  if (inStart === inEnd) {
    inStart = 0;
    inEnd = 0;
  } else if (inEnd === u8Length(inBuffer) && inStart > 0) {
    u8Set(inBuffer, view(inBuffer, inStart, inEnd), 0);
    inEnd -= inStart;
    inStart = 0;
  }
  if (inEnd === u8Length(inBuffer)) {
    const bigger = new U8(inEnd * 2);
    u8Set(bigger, inBuffer);
    u8Fill(inBuffer, 0);
    inBuffer = bigger;
  }
  const n = readSync(stdin, view(inBuffer, inEnd, u8Length(inBuffer)));
  if (n === null || n === 0) return false;
  inEnd += n;
  return true;
}

/** The next n bytes of stdin, or undefined if it ends first. */
function takeBytes(n) {
  while (inEnd - inStart < n) {
    if (!fill()) return undefined;
  }
  const bytes = new U8(n);
  u8Set(bytes, view(inBuffer, inStart, inStart + n));
  u8Fill(inBuffer, 0, inStart, inStart + n);
  inStart += n;
  return bytes;
}

/** The next line of stdin (a short ASCII header), or undefined if it ends first or runs too long. */
function takeLine() {
  let line = "";
  for (;;) {
    while (inStart < inEnd) {
      const b = inBuffer[inStart];
      inStart++;
      if (b === 10) return line;
      if (line.length >= MAX_HEADER) return undefined;
      line += decode(decoder, new U8(u8Buffer(inBuffer), u8Offset(inBuffer) + inStart - 1, 1));
    }
    if (!fill()) return undefined;
  }
}

function readRequest() {
  const secret = takeBytes(SECRET_LENGTH);
  const length = secret === undefined ? undefined : takeLine();
  if (length === undefined) {
    // The host went away without handing over any code (a pooled runner it no longer needs).
    exit(0);
  }
  const body = takeBytes(+length);
  if (body === undefined) exit(0);
  const request = parseJson(decode(decoder, body));
  u8Fill(body, 0);
  return [secret, request];
}

// What the code sees of the process says nothing about the host. Done while a pooled runner
// still waits for its request, so it costs a request nothing. node:process is set up only if
// the code uses it, from Deno.execPath() and Deno.cwd() as they are then: its execPath, argv
// and title say "deno" too (and Java starts Deno as plain "deno", for its argv0). The working
// directory is / or, when the code may read it, the caller's (below). The Cache API names its
// storage directory (in our cache folder) in its errors and has nowhere to keep anything
// anyway (see DenoRuntime): the code does not get it.
function neutralize(target, name, value) {
  defineProperty(target, name, { value, writable: true, enumerable: true, configurable: true });
}
neutralize(Deno, "execPath", function execPath() {
  return "deno";
});
delete global.caches;
delete global.CacheStorage;
delete global.Cache;

const [secret, request] = readRequest();
const codeModule = request.module;
const context = request.context;
const maxResultBytes = request.maxResultBytes;
const maxCallBytes = request.maxCallBytes;
const reachable = request.tools;
let settled = false;
let calls = 0;
// how many of the calls' answers the code could have read so far (see the note on tool calls above)
let readable = 0;
const used = createObject(null);
let anyUsed = false;

// Relative paths in the code resolve against the directory the caller ran from, when the code
// may read it; otherwise against the neutral directory the runner was started in.
if (typeof request.workingDirectory === "string") {
  try {
    Deno.chdir(request.workingDirectory);
  } catch {
    // no longer there or not readable: relative paths stay where they were
  }
}
neutralize(Deno, "mainModule", codeModule);

function writeAll(bytes) {
  const total = u8Length(bytes);
  let offset = 0;
  while (offset < total) {
    offset += writeSync(stdout, view(bytes, offset, total));
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
  if (anyUsed) {
    let names = "";
    for (let i = 0; i < NONDETERMINISM_SOURCES.length; i++) {
      const name = NONDETERMINISM_SOURCES[i];
      if (used[name] === true) names = names === "" ? name : names + "," + name;
    }
    frame(FRAME.NONDETERMINISM, encode(encoder, names));
  }
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

function isObject(value) {
  return (typeof value === "object" && value !== null) || typeof value === "function";
}

// phase: import | run | uncaught | pending | serialize | result-limit
function fail(phase, error, fallbackMessage) {
  let name = "";
  let message = "";
  let stack = "";
  let permission = false;
  let isError = false;
  try {
    isError = isObject(error) && isPrototypeOf(ErrorPrototype, error);
    permission = isError && (isPrototypeOf(NotCapablePrototype, error) || isPrototypeOf(PermissionDeniedPrototype, error));
  } catch {
    // an odd value (a proxy that throws); described below as well as it can be
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
  finish(FRAME.ERROR, encode(encoder,
      field(phase) + field(name) + field(message) + field(stack) + field(permission ? "1" : "0")));
}

class SerializationProblem {
  #message;
  constructor(message) {
    this.#message = message;
  }
  static messageOf(problem) {
    return #message in problem ? problem.#message : undefined;
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
    const known = isObject(problem) ? SerializationProblem.messageOf(problem) : undefined;
    if (known !== undefined) {
      return fail("serialize", undefined, known);
    }
    let message = "";
    try { message = isObject(problem) ? text(problem.message) : ""; } catch { /* keep empty */ }
    return fail("serialize", undefined, "the result cannot be turned into JSON: " + message);
  }
  if (json.length > maxResultBytes) {
    return fail("result-limit", undefined, "the result is over the limit of " + maxResultBytes + " bytes");
  }
  const bytes = encode(encoder, json);
  if (u8Length(bytes) > maxResultBytes) {
    return fail("result-limit", undefined,
        "the result is " + u8Length(bytes) + " bytes, over the limit of " + maxResultBytes + " bytes");
  }
  finish(FRAME.VALUE, bytes);
}

// Sources of non-determinism are marked when the code uses them, and only then: the runner
// never calls them itself, and Deno's own code uses its own copies.
function mark(name) {
  used[name] = true;
  anyUsed = true;
}
function replace(target, name, value) {
  defineProperty(target, name, { value, writable: true, enumerable: false, configurable: true });
}
replace(OriginalDate, "now", function now() {
  mark("Date.now");
  return dateNow();
});
const DateWatched = new ProxyType(OriginalDate, {
  __proto__: null,
  construct(target, args, newTarget) {
    if (args.length === 0) mark("new Date()");
    return reflectConstruct(target, args, newTarget);
  },
  apply(target, self, args) {
    mark("Date()");
    return reflectApply(target, self, args);
  },
});
replace(OriginalDate.prototype, "constructor", DateWatched);
replace(global, "Date", DateWatched);
replace(Math, "random", function random() {
  mark("Math.random");
  return mathRandom();
});
replace(Performance.prototype, "now", function now() {
  mark("performance.now");
  return performanceNow(this);
});
replace(Crypto.prototype, "getRandomValues", function getRandomValues(array) {
  mark("crypto.getRandomValues");
  return cryptoGetRandomValues(this, array);
});
replace(Crypto.prototype, "randomUUID", function randomUUID() {
  mark("crypto.randomUUID");
  return cryptoRandomUUID(this);
});

// Code outside this realm (a Worker, a node:vm context) has its own Date and Math: what it uses
// is not seen, so using one is marked instead. A Worker is marked when it is made; node:vm and
// node:worker_threads when imported, through the host's import map, or when asked of require or
// process.getBuiltinModule. The watched functions cannot be replaced again by the code.
const WorkerWatched = new ProxyType(OriginalWorker, {
  __proto__: null,
  construct(target, args, newTarget) {
    mark("Worker");
    return reflectConstruct(target, args, newTarget);
  },
});
replace(OriginalWorker.prototype, "constructor", WorkerWatched);
replace(global, "Worker", WorkerWatched);
const MARKING_MODULES = freeze({ __proto__: null, "node:vm": "node:vm", vm: "node:vm",
  "node:worker_threads": "node:worker_threads", worker_threads: "node:worker_threads" });
const MODULE_MODULES = freeze({ __proto__: null, "node:module": true, module: true });
const PROCESS_MODULES = freeze({ __proto__: null, "node:process": true, process: true });
function markModule(id) {
  if (typeof id !== "string") return;
  const name = MARKING_MODULES[id];
  if (name !== undefined) mark(name);
}
// Called after the code started: the descriptor has no prototype, so nothing the code put on
// Object.prototype (a "get", say) makes it invalid and leaves a watch undone.
function lock(target, name, value) {
  defineProperty(target, name, { __proto__: null, value, writable: false, enumerable: true, configurable: false });
}
let watchedModule;
function watchModule(Module) {
  if (!isObject(Module) || Module === watchedModule) return;
  watchedModule = Module;
  const load = Module._load;
  if (typeof load !== "function") return;
  lock(Module, "_load", function _load(request) {
    markModule(request);
    const module = reflectApply(load, this, arguments);
    if (typeof request === "string" && PROCESS_MODULES[request] === true) watchProcess(module);
    return module;
  });
}
let watchedProcess;
function watchProcess(process) {
  if (!isObject(process) || process === watchedProcess) return;
  // watched first: a read below that comes back here must not watch twice
  watchedProcess = process;
  const original = process.getBuiltinModule;
  if (typeof original !== "function") return;
  lock(process, "getBuiltinModule", function getBuiltinModule(id) {
    markModule(id);
    const module = reflectApply(original, this, arguments);
    if (typeof id === "string" && MODULE_MODULES[id] === true) watchModule(module);
    return module;
  });
}
if (processDescriptor !== undefined && typeof processDescriptor.get === "function") {
  // node's process is made the first time the code asks for it, not before: it costs milliseconds
  const processGetter = processDescriptor.get;
  defineProperty(global, "process", {
    get() {
      const process = reflectApply(processGetter, this, []);
      watchProcess(process);
      return process;
    },
    set: processDescriptor.set,
    enumerable: processDescriptor.enumerable,
    configurable: true,
  });
}
defineProperty(global, REALMS_HOOK, { value: freeze({
  __proto__: null,
  mark(name) {
    if (name === "node:vm" || name === "node:worker_threads") mark(name);
  },
  watchModule,
  watchProcess,
}), writable: false, enumerable: false, configurable: false });

/** The host's answer to call number n: [kind, text], or undefined when it cannot be read. */
function readAnswer(n) {
  const header = takeLine();
  if (header === undefined || header.length < 4) return undefined;
  const kind = header[0];
  const colon = stringIndexOf(header, ":");
  if ((kind !== ANSWER.VALUE && kind !== ANSWER.ERROR) || colon < 0) return undefined;
  if (stringSlice(header, 1, colon) !== "" + n) return undefined;
  const body = takeBytes(+stringSlice(header, colon + 1));
  return body === undefined ? undefined : [kind, decode(decoder, body)];
}

function settledPromise(ok, value) {
  return new PromiseType((resolve, reject) => (ok ? resolve(value) : reject(value)));
}

function callTool(server, name, args) {
  if (settled) return new PromiseType(() => {});
  let json;
  try {
    json = args === undefined ? "{}" : stringify(args);
  } catch {
    json = undefined;
  }
  if (typeof json !== "string" || json[0] !== "{") {
    return settledPromise(false, new TypeErrorType("tools." + server + "." + name
        + ": the arguments must be an object that can be turned into JSON"));
  }
  const payload = encode(encoder, field(server) + field(name) + field("" + readable) + json);
  if (u8Length(payload) > maxCallBytes) {
    return settledPromise(false, new RangeErrorType("tools." + server + "." + name + ": the call is "
        + u8Length(payload) + " bytes (its arguments as JSON), over the limit of " + maxCallBytes
        + " bytes that one tool call may have; send less (a part, or a reference to the data)"));
  }
  calls++;
  frame(FRAME.CALL, payload);
  const answer = readAnswer(calls);
  const made = calls;
  queueTask(() => {
    if (readable < made) readable = made;
  });
  if (answer === undefined) {
    fail("tool", undefined, "the answer to the call of tools." + server + "." + name + " could not be read");
    return new PromiseType(() => {});
  }
  if (answer[0] === ANSWER.ERROR) return settledPromise(false, new ErrorType(answer[1]));
  return settledPromise(true, parseJson(answer[1]));
}

function describe(names) {
  return names.length === 0 ? "none" : names.join(", ");
}

// tools.SERVER.TOOL(args): frozen objects without prototypes, behind proxies whose handlers have
// no prototype either, so a name that does not exist is a clear error and nothing the code
// changes on Object.prototype is consulted.
function serverTools(server, names) {
  const target = createObject(null);
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    defineProperty(target, name, { value: (args) => callTool(server, name, args), enumerable: true });
  }
  freeze(target);
  const known = describe(keysOf(target));
  return new ProxyType(target, {
    __proto__: null,
    get(t, key) {
      if (typeof key !== "string" || hasOwn(t, key)) return t[key];
      if (key === "then" || key === "toJSON" || key === "constructor") return undefined;
      throw new ErrorType("tools." + server + " has no tool '" + key + "' that code can call (its tools: "
          + known + ")");
    },
  });
}
const toolsTarget = createObject(null);
const servers = keysOf(reachable === undefined || reachable === null ? {} : reachable);
for (let i = 0; i < servers.length; i++) {
  defineProperty(toolsTarget, servers[i], { value: serverTools(servers[i], reachable[servers[i]]), enumerable: true });
}
freeze(toolsTarget);
const knownServers = describe(servers);
replace(global, "tools", new ProxyType(toolsTarget, {
  __proto__: null,
  get(t, key) {
    if (typeof key !== "string" || hasOwn(t, key)) return t[key];
    if (key === "then" || key === "toJSON" || key === "constructor") return undefined;
    throw new ErrorType("no server '" + key + "' can be called from code (servers: " + knownServers + ")");
  },
}));

addListener(global, "error", (event) => {
  preventDefault(event);
  fail("uncaught", errorOfEvent(event));
});
addListener(global, "unhandledrejection", (event) => {
  preventDefault(event);
  fail("uncaught", reasonOfEvent(event));
});
// Deno dispatches beforeunload when nothing is left to run: the code's promise can never settle.
addListener(global, "beforeunload", () => {
  if (!settled) fail("pending", undefined, "the code's promise never settled and nothing was left to wait for");
});

async function run(module) {
  const code = module.default;
  if (typeof code !== "function") {
    return fail("run", undefined, "the code's module has no default function");
  }
  let value;
  try {
    value = await code(context);
  } catch (error) {
    return fail("run", error);
  }
  succeed(value);
}

frame(FRAME.ACK, new U8(0));
// Chained now, before the code's module is evaluated: nothing of it can have changed yet.
then(import(codeModule), (module) => { run(module); }, (error) => fail("import", error));
