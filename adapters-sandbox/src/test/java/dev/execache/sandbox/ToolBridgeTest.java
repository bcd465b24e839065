package dev.execache.sandbox;

import dev.execache.core.Freshness;
import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.CacheStatus;
import dev.execache.core.ErrorType;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.Limits;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CodeToolCall;
import dev.execache.core.spi.CodeTools;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The bridge from code to tools, on both paths (a fresh Deno and the warm pool): what the code
 * sees of {@code tools}, what reaches the host, and that nothing the code does to globals,
 * prototypes or species forges a call or an answer. The tools are a recording double: the port
 * behind them is not under test here.
 */
class ToolBridgeTest {
    private static DenoSandbox cold;
    private static DenoSandbox warm;

    @BeforeAll
    static void start() {
        cold = new DenoSandbox(DenoSandboxSettings.builder().denoExecutable(SandboxContract.deno()).warmPoolSize(0).build());
        warm = new DenoSandbox(DenoSandboxSettings.builder().denoExecutable(SandboxContract.deno()).warmPoolSize(1).build());
    }

    @AfterAll
    static void stop() {
        cold.close();
        warm.close();
    }

    /** Answers {"echo": args, "n": call number}; "fail" answers an error; records every call. */
    static final class Recording implements CodeTools {
        final List<String> calls = new CopyOnWriteArrayList<>();
        /** How many earlier answers the code could have read at each call, as the runner said. */
        final List<Integer> seen = new CopyOnWriteArrayList<>();

        @Override
        public CodeToolCall callAfter(String server, String tool, String argumentsJson, int answersSeen) {
            seen.add(answersSeen);
            return call(server, tool, argumentsJson);
        }

        @Override
        public Map<String, List<String>> reachable() {
            return Map.of("mem", List.of("read", "fail"), "fs", List.of("list"));
        }

        @Override
        public CodeToolCall call(String server, String tool, String argumentsJson, String agent, Freshness freshness) {
            calls.add(server + "." + tool + " " + argumentsJson);
            ToolResult answer = tool.equals("fail") ? ToolResult.error("the tool says no")
                    : ToolResult.ok("{\"echo\":" + argumentsJson + ",\"n\":" + calls.size() + "}");
            return new CodeToolCall(server + "__" + tool, "1", answer, !answer.isError(), CacheStatus.MISS,
                    answer.json().length());
        }
    }

    private static ExecutionResult run(String path, String code, Recording tools) {
        DenoSandbox sandbox = path.equals("cold") ? cold : warm;
        return sandbox.execute(ExecutionRequest.of(code, null), tools);
    }

    @ParameterizedTest
    @ValueSource(strings = {"cold", "warm"})
    void eachCallSaysHowManyEarlierAnswersTheCodeCouldHaveReadWhenItMadeIt(String path) {
        Recording tools = new Recording();
        ExecutionResult result = run(path, """
                const [a, b, c] = await Promise.all([tools.mem.read({id: 1}), tools.mem.read({id: 2}), tools.fs.list({})]);
                const d = await tools.mem.read({after: a.n});
                const e = tools.mem.read({id: 5});
                const f = await tools.mem.read({id: 6});
                return [b.n, c.n, d.n, (await e).n, f.n];
                """, tools);

        assertThat(result.value()).isEqualTo("[2,3,4,5,6]");
        // three calls made together read nothing; d was made after the code read a, b and c; e after it read
        // d; f in the same turn as e, before e's answer could be read
        assertThat(tools.seen).containsExactly(0, 0, 0, 3, 4, 4);
    }

    @ParameterizedTest
    @ValueSource(strings = {"cold", "warm"})
    void codeCallsToolsAndGetsTheirValues(String path) {
        Recording tools = new Recording();
        ExecutionResult result = run(path, """
                const a = await tools.mem.read({id: 1});
                const [b, c] = await Promise.all([tools.fs.list({dir: "x"}), tools.mem.read()]);
                return [a, b, c];
                """, tools);

        assertThat(result.error()).isNull();
        assertThat(result.value()).isEqualTo(
                "[{\"echo\":{\"id\":1},\"n\":1},{\"echo\":{\"dir\":\"x\"},\"n\":2},{\"echo\":{},\"n\":3}]");
        assertThat(tools.calls).containsExactly("mem.read {\"id\":1}", "fs.list {\"dir\":\"x\"}", "mem.read {}");
    }

    @ParameterizedTest
    @ValueSource(strings = {"cold", "warm"})
    void aToolErrorRejectsWithAnErrorCarryingTheToolsMessage(String path) {
        ExecutionResult result = run(path, """
                try { await tools.mem.fail({}); return "no"; }
                catch (e) { return [e instanceof Error, e.message]; }
                """, new Recording());

        assertThat(result.value()).isEqualTo("[true,\"the tool says no\"]");
    }

    @ParameterizedTest
    @ValueSource(strings = {"cold", "warm"})
    void aCallOverTheBoundIsAnErrorTheCodeCatchesAndTheRunGoesOn(String path) {
        Recording tools = new Recording();
        Limits limits = new Limits(Limits.DEFAULT_TIMEOUT, Limits.DEFAULT_MEMORY_MB, List.of(),
                Limits.DEFAULT_MAX_OUTPUT_BYTES, 1024 * 1024);
        ExecutionResult result = (path.equals("cold") ? cold : warm).execute(new ExecutionRequest("""
                let caught;
                try { await tools.mem.read({key: "z".repeat(2 * 1024 * 1024)}); }
                catch (e) { caught = [e.name, e.message]; }
                return [caught, await tools.mem.read({key: "small"})];
                """, null, Set.of(), limits), tools);

        assertThat(result.error()).isNull();
        assertThat(result.value()).isEqualTo("[[\"RangeError\",\"tools.mem.read: the call is 2097176 bytes (its"
                + " arguments as JSON), over the limit of 1048576 bytes that one tool call may have; send less (a part,"
                + " or a reference to the data)\"],{\"echo\":{\"key\":\"small\"},\"n\":1}]");
        assertThat(tools.calls).containsExactly("mem.read {\"key\":\"small\"}");
    }

    @ParameterizedTest
    @ValueSource(strings = {"cold", "warm"})
    void toolsThatDoNotExistAreClearErrors(String path) {
        Recording tools = new Recording();
        ExecutionResult server = run(path, "return tools.github.list({})", tools);
        ExecutionResult tool = run(path, "return tools.mem.write({})", tools);
        ExecutionResult args = run(path, "return await tools.mem.read(5)", tools);

        assertThat(server.error().message()).contains("no server 'github' can be called from code (servers: fs, mem)");
        assertThat(tool.error().message()).contains("tools.mem has no tool 'write' that code can call (its tools: read, fail)");
        assertThat(args.error().message()).contains("tools.mem.read: the arguments must be an object");
        assertThat(tools.calls).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"cold", "warm"})
    void withoutToolsTheCodeSeesNoServers(String path) {
        ExecutionResult result = (path.equals("cold") ? cold : warm).execute(ExecutionRequest.of(
                "return tools.mem.read({})", null));

        assertThat(result.error().type()).isEqualTo(ErrorType.RUNTIME_ERROR);
        assertThat(result.error().message()).contains("no server 'mem' can be called from code (servers: none)");
    }

    @ParameterizedTest
    @ValueSource(strings = {"cold", "warm"})
    void aCallFrameThatTheCodePrintsIsOnlyConsoleOutput(String path) {
        Recording tools = new Recording();
        ExecutionResult result = run(path, """
                const fake = "0".repeat(32) + "c" + "12\\n3:mem4:read{}" + "0".repeat(32);
                console.log(fake);
                await Deno.stdout.write(new TextEncoder().encode(fake));
                return "done";
                """, tools);

        assertThat(result.value()).isEqualTo("\"done\"");
        assertThat(tools.calls).isEmpty();
        assertThat(result.console()).contains("3:mem4:read{}");
    }

    @ParameterizedTest
    @ValueSource(strings = {"cold", "warm"})
    void nothingTheCodeChangesForgesACallOrAnAnswer(String path) {
        Recording tools = new Recording();
        ExecutionResult result = run(path, """
                let seen = [];
                class Spy extends Uint8Array {
                  constructor(...a) { super(...a); seen.push(this); }
                }
                Object.defineProperty(Uint8Array, Symbol.species, { get() { return Spy; } });
                Object.defineProperty(Promise, Symbol.species, { get() { return Promise; } });
                const then = Promise.prototype.then;
                Promise.prototype.then = function (ok, ko) { return then.call(this, (v) => ok && ok({forged: true}), ko); };
                JSON.parse = () => ({forged: true});
                JSON.stringify = () => '{"forged":true}';
                String.prototype.indexOf = () => 1;
                String.prototype.slice = () => "1";
                TextEncoder.prototype.encode = () => new Uint8Array(0);
                TextDecoder.prototype.decode = () => '{"forged":true}';
                Object.defineProperty(Object.prototype, "value", { set(v) { seen.push(v); }, configurable: true });
                Uint8Array.prototype.set = function () { seen.push(this); };
                Promise.prototype.then = then;
                const a = await tools.mem.read({id: 7});
                return {a, leaked: seen.length};
                """, tools);

        assertThat(result.error()).isNull();
        assertThat(tools.calls).containsExactly("mem.read {\"id\":7}");
        assertThat(result.value()).isEqualTo("{\"a\":{\"echo\":{\"id\":7},\"n\":1},\"leaked\":0}");
    }

    @ParameterizedTest
    @ValueSource(strings = {"cold", "warm"})
    void sourcesOfNondeterminismTheCodeUsedAreMarked(String path) {
        ExecutionResult none = run(path, "const d = new Date(0); return [d.getTime(), Date.UTC(2020, 0), typeof tools];",
                new Recording());
        ExecutionResult all = run(path, """
                Date.now(); new Date(); Date(); Math.random(); performance.now();
                const bytes = crypto.getRandomValues(new Uint8Array(4)); const id = crypto.randomUUID();
                return [bytes.length, id.length];
                """, new Recording());
        ExecutionResult subclass = run(path, "class D extends Date {} ; return new D() instanceof Date", new Recording());
        ExecutionResult failed = run(path, "Math.random(); throw new Error('x')", new Recording());
        ExecutionResult runnerOnly = run(path, """
                const a = await tools.mem.read({id: 1});
                console.log("logged", a);
                await new Promise((resolve) => setTimeout(resolve, 1));
                await Promise.all([tools.mem.read({id: 2}), tools.mem.read({id: 3})]);
                return JSON.stringify(structuredClone({a}));
                """, new Recording());

        assertThat(none.value()).isEqualTo("[0,1577836800000,\"object\"]");
        assertThat(none.nondeterminism()).isEmpty();
        assertThat(all.value()).isEqualTo("[4,36]");
        assertThat(all.nondeterminism()).containsExactlyInAnyOrder("Date.now", "new Date()", "Date()", "Math.random",
                "performance.now", "crypto.getRandomValues", "crypto.randomUUID");
        assertThat(subclass.value()).isEqualTo("true");
        assertThat(subclass.nondeterminism()).containsExactly("new Date()");
        assertThat(failed.nondeterminism()).containsExactly("Math.random");
        assertThat(runnerOnly.error()).isNull();
        assertThat(runnerOnly.nondeterminism()).as("tool calls, console, timers and the runner's own work mark nothing")
                .isEmpty();
    }
    @ParameterizedTest
    @ValueSource(strings = {"cold", "warm"})
    void codeThatRunsOutsideTheMainRealmIsMarked(String path) {
        ExecutionResult worker = run(path, """
                const source = "self.postMessage([Date.now(), Math.random()]);";
                const worker = new Worker("data:text/javascript," + encodeURIComponent(source), {type: "module"});
                const values = await new Promise((resolve) => { worker.onmessage = (e) => resolve(e.data); });
                worker.terminate();
                return values.length;
                """, new Recording());
        ExecutionResult workerThroughItsPrototype = run(path, """
                const worker = new Worker.prototype.constructor("data:text/javascript,close()", {type: "module"});
                worker.terminate();
                return 1;
                """, new Recording());
        ExecutionResult vm = run(path, "return (await import(\"node:\" + \"vm\")).runInNewContext(\"typeof Date.now()\")",
                new Recording());
        ExecutionResult builtin = run(path, "return typeof process.getBuiltinModule(\"node:worker_threads\").Worker",
                new Recording());
        ExecutionResult required = run(path, """
                const { createRequire } = await import("node:module");
                return typeof createRequire("file:///code.js")("vm").createContext;
                """, new Recording());
        ExecutionResult processImported = run(path, """
                const { getBuiltinModule } = await import("node:process");
                return typeof getBuiltinModule("vm").runInNewContext;
                """, new Recording());
        ExecutionResult hookUntouchable = run(path, """
                try { globalThis.__execache_realms = {mark() {}}; } catch { /* it cannot be replaced */ }
                try { Object.defineProperty(globalThis, "__execache_realms", {value: {mark() {}}}); } catch { /* nor redefined */ }
                try { process.getBuiltinModule = () => undefined; } catch { /* nor the watched function */ }
                return typeof (await import("node:vm")).runInNewContext;
                """, new Recording());
        ExecutionResult polluted = run(path, """
                Object.defineProperty(Object.prototype, "get", {value: () => undefined, configurable: true});
                try { process.env; } catch { /* a watch that failed here would be skipped below */ }
                delete Object.prototype.get;
                return typeof process.getBuiltinModule("vm").runInNewContext;
                """, new Recording());
        ExecutionResult plainNode = run(path, "return typeof (await import(\"node:path\")).join + typeof process.env",
                new Recording());

        assertThat(worker.value()).isEqualTo("2");
        assertThat(worker.nondeterminism()).containsExactly("Worker");
        assertThat(workerThroughItsPrototype.nondeterminism()).containsExactly("Worker");
        assertThat(vm.value()).isEqualTo("\"number\"");
        assertThat(vm.nondeterminism()).containsExactly("node:vm");
        assertThat(builtin.error()).isNull();
        assertThat(builtin.value()).isEqualTo("\"function\"");
        assertThat(builtin.nondeterminism()).containsExactly("node:worker_threads");
        assertThat(required.value()).isEqualTo("\"function\"");
        assertThat(required.nondeterminism()).containsExactly("node:vm");
        assertThat(processImported.value()).isEqualTo("\"function\"");
        assertThat(processImported.nondeterminism()).containsExactly("node:vm");
        assertThat(hookUntouchable.value()).isEqualTo("\"function\"");
        assertThat(hookUntouchable.nondeterminism()).containsExactly("node:vm");
        assertThat(polluted.value()).isEqualTo("\"function\"");
        assertThat(polluted.nondeterminism()).containsExactly("node:vm");
        assertThat(plainNode.error()).isNull();
        assertThat(plainNode.nondeterminism()).isEmpty();
    }
}
