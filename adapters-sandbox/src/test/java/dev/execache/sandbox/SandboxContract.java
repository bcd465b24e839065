package dev.execache.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.execache.core.ErrorType;
import dev.execache.core.ExecutionError;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.Limits;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every behaviour of the sandbox, run against a real Deno once per path a request can take:
 * a process started for it ({@link ColdStartTest}) and one from the warm pool ({@link WarmPoolTest}).
 */
abstract class SandboxContract {

    /** Runs the request on the path under test. */
    abstract ExecutionResult execute(ExecutionRequest request);

    /** A new sandbox for this path with a cache directory of its own, for tests of many runs at once. */
    abstract DenoSandbox newSandbox(Path cacheDirectory);

    /** How many Deno processes of a sandbox may wait for work while nothing runs. */
    abstract int waitingRunnersAllowed();

    private static Path deno;

    /** The Deno every sandbox in the tests uses: found or installed as a user's would be. */
    static synchronized Path deno() {
        if (deno == null) {
            deno = new DenoLocator(DenoSandboxSettings.defaults()).locate();
        }
        return deno;
    }

    static DenoSandboxSettings.Builder settingsWith(Path cacheDirectory) {
        return DenoSandboxSettings.builder().denoExecutable(deno()).cacheDirectory(cacheDirectory);
    }

    /**
     * The Deno processes under this cache directory once at most {@code max} are left: a run's
     * process is killed before its result is returned but taken down by the kernel after.
     */
    static List<ProcessHandle> awaitProcessesOf(Path cacheDirectory, int max) {
        return await().alias("at most " + max + " Deno processes under " + cacheDirectory)
                .atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                .until(() -> processesOf(cacheDirectory), processes -> processes.size() <= max);
    }

    /** The Deno processes that run the runner script under this cache directory. */
    static List<ProcessHandle> processesOf(Path cacheDirectory) {
        return ProcessHandle.current().descendants()
                .filter(ProcessHandle::isAlive)
                .filter(process -> usesCache(process, cacheDirectory))
                .toList();
    }

    /**
     * Whether a process is a runner of a sandbox with this cache directory: its DENO_DIR lies
     * there (nothing on a runner's command line names the cache directory).
     */
    static boolean usesCache(ProcessHandle process, Path cacheDirectory) {
        try {
            String environment = Files.readString(Path.of("/proc", Long.toString(process.pid()), "environ"),
                    StandardCharsets.ISO_8859_1);
            return Stream.of(environment.split("\0")).anyMatch(variable -> variable.startsWith("DENO_DIR=" + cacheDirectory));
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private ExecutionResult run(String code) {
        return execute(ExecutionRequest.of(code, null));
    }

    private ExecutionResult run(String code, Object context) {
        return execute(ExecutionRequest.of(code, context));
    }

    private ExecutionResult run(String code, Limits limits) {
        return execute(new ExecutionRequest(code, null, Set.of(), limits));
    }

    private static ExecutionError errorOf(ExecutionResult result, ErrorType type) {
        assertThat(result.error()).as("error of a run with console %s", result.console()).isNotNull();
        assertThat(result.error().type()).as("%s", result.error()).isEqualTo(type);
        return result.error();
    }

    // --- results

    @Test
    void returnGivesTheResultAsJson() {
        ExecutionResult result = run("return {sum: 1 + 1, list: [1, 'a', null, true]}");

        assertThat(result.isSuccess()).as("%s", result.error()).isTrue();
        assertThat(result.value()).isEqualTo("{\"sum\":2,\"list\":[1,\"a\",null,true]}");
        assertThat(result.executionTime()).isPositive();
    }

    @Test
    void codeSeesTheContext() {
        ExecutionResult result = run("return context.items.map((x: number) => x * context.factor)",
                Map.of("items", List.of(1, 2, 3), "factor", 10));

        assertThat(result.value()).isEqualTo("[10,20,30]");
    }

    @Test
    void typeScriptAnnotationsWork() {
        ExecutionResult result = run("""
                interface Point { x: number; y: number }
                const p: Point = { x: 3, y: 4 };
                function length(q: Point): number { return Math.sqrt(q.x ** 2 + q.y ** 2); }
                return length(p) as number;
                """);

        assertThat(result.value()).isEqualTo("5");
    }

    @Test
    void undefinedBecomesNull() {
        assertThat(run("return undefined").value()).isEqualTo("null");
        assertThat(run("const x = 1;").value()).isEqualTo("null");
    }

    @Test
    void unicodeSurvivesTheRoundTrip() {
        ExecutionResult result = run("return context.s + ' ✓ 日本'", Map.of("s", "héllo 🎉"));

        assertThat(result.value()).isEqualTo("\"héllo 🎉 ✓ 日本\"");
    }

    @Test
    void consoleOutputIsReturnedApartFromTheResult() {
        ExecutionResult result = run("console.log('to stdout'); console.error('to stderr'); return 7");

        assertThat(result.value()).isEqualTo("7");
        assertThat(result.console()).contains("to stdout\n").contains("to stderr\n");
    }

    // --- permissions

    @Test
    void readingEtcPasswdFailsWithPermissionError() {
        ExecutionError error = errorOf(run("return Deno.readTextFileSync('/etc/passwd')"), ErrorType.PERMISSION_ERROR);

        assertThat(error.message()).contains("read access").contains("/etc/passwd");
    }

    @Test
    void readingTheProcessEnvironmentFailsWithPermissionError() {
        ExecutionError error = errorOf(run("return await Deno.readTextFile('/proc/self/environ')"),
                ErrorType.PERMISSION_ERROR);

        assertThat(error.message()).contains("read access");
    }

    @Test
    void writingToTmpFails(@TempDir Path directory) {
        Path target = directory.resolve("written.txt");

        ExecutionError error = errorOf(run("Deno.writeTextFileSync(context.path, 'x')", Map.of("path", target.toString())),
                ErrorType.PERMISSION_ERROR);

        assertThat(error.message()).contains("write access");
        assertThat(target).doesNotExist();
    }

    @Test
    void fetchToALocalServerFailsAndTheServerSeesNoConnection() throws IOException {
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            ExecutionResult result = run("return await (await fetch(`http://127.0.0.1:${context.port}/`)).text()",
                    Map.of("port", server.getLocalPort()));

            assertThat(errorOf(result, ErrorType.PERMISSION_ERROR).message()).contains("net access");
            assertNoConnection(server);
        }
    }

    @Test
    void importFromAnyHostIsClosedAndCarriesNothingOut() throws IOException {
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            ExecutionResult result = run("return await import(`http://127.0.0.1:${context.port}/x.js?secret=42`)",
                    Map.of("port", server.getLocalPort()));

            assertThat(result.isSuccess()).isFalse();
            assertNoConnection(server);
        }
        assertThat(run("return await import('https://esm.sh/lodash?' + 'data')").isSuccess()).isFalse();
        assertThat(run("return await import('jsr:@std/path')").isSuccess()).isFalse();
        assertThat(run("return await import('npm:left-pad')").isSuccess()).isFalse();
    }

    private static void assertNoConnection(ServerSocket server) throws IOException {
        server.setSoTimeout(200);
        try {
            server.accept().close();
            throw new AssertionError("the code reached the server");
        } catch (SocketTimeoutException expected) {
            // nothing connected
        }
    }

    @Test
    void startingAProcessFails() {
        ExecutionError error = errorOf(run("return new Deno.Command('/bin/sh', {args: ['-c', 'echo hi']}).outputSync()"),
                ErrorType.PERMISSION_ERROR);

        assertThat(error.message()).contains("run access");
    }

    @Test
    void readingTheEnvironmentFails() {
        ExecutionError error = errorOf(run("return Deno.env.get('HOME')"), ErrorType.PERMISSION_ERROR);

        assertThat(error.message()).contains("env access");
    }

    @Test
    void loadingANativeLibraryFails() {
        ExecutionError error = errorOf(run("return Deno.dlopen('/lib/x86_64-linux-gnu/libc.so.6', {})"),
                ErrorType.PERMISSION_ERROR);

        assertThat(error.message()).contains("ffi access");
    }

    @Test
    void readingSystemInformationFails() {
        ExecutionError error = errorOf(run("return Deno.osRelease()"), ErrorType.PERMISSION_ERROR);

        assertThat(error.message()).contains("sys access");
    }

    @Test
    void importingALocalFileFails() {
        ExecutionError error = errorOf(run("return await import('file:///etc/passwd')"), ErrorType.PERMISSION_ERROR);

        assertThat(error.message()).contains("read access");
    }

    @Test
    void aPathTheCallerAllowedCanBeRead(@TempDir Path directory) throws IOException {
        Path file = Files.writeString(directory.resolve("data.txt"), "allowed content");

        ExecutionResult result = execute(new ExecutionRequest("return Deno.readTextFileSync(context.path)",
                Map.of("path", file.toString()), Set.of(), Limits.DEFAULTS.withAllowRead(List.of(directory.toString()))));

        assertThat(result.value()).isEqualTo("\"allowed content\"");
        assertThat(errorOf(run("return Deno.readTextFileSync(context.path)", Map.of("path", file.toString())),
                ErrorType.PERMISSION_ERROR)).isNotNull();
    }

    @Test
    void aWorkerAskingForMorePermissionsFailsCleanly() {
        ExecutionResult result = run("""
                const worker = new Worker('data:application/javascript,postMessage(1)',
                    {type: 'module', deno: {permissions: {net: true, read: true}}});
                return 'started';
                """);

        assertThat(errorOf(result, ErrorType.PERMISSION_ERROR).message()).contains("permissions");
    }

    @Test
    void stateDoesNotCarryOverFromOneRunToTheNext() {
        run("try { localStorage.setItem('k', 'v') } catch {} try { globalThis.leak = 1 } catch {}");

        ExecutionResult result = run("let stored = null; try { stored = localStorage.getItem('k') } catch {} "
                + "return [stored, typeof globalThis.leak]");

        assertThat(result.value()).isEqualTo("[null,\"undefined\"]");
    }

    // --- limits

    @Test
    void anInfiniteLoopEndsWithTimeoutErrorNearTheLimit() {
        Duration limit = Duration.ofSeconds(1);

        ExecutionResult result = run("while (true) {}", Limits.DEFAULTS.withTimeout(limit));

        assertThat(errorOf(result, ErrorType.TIMEOUT_ERROR).message()).contains("1 s");
        assertThat(result.executionTime()).isBetween(limit, limit.plusSeconds(5));
    }

    @Test
    void anAllocationLoopEndsWithMemoryError() {
        ExecutionResult result = run("const keep = []; while (true) keep.push(new Array(100000).fill(1.5));",
                Limits.DEFAULTS.withMemoryMb(64));

        errorOf(result, ErrorType.MEMORY_ERROR);
        assertThat(result.console()).doesNotContain("Last few GCs");
    }

    @Test
    void anArrayBufferLoopEndsWithMemoryError() {
        ExecutionResult result = run("const keep = []; for (let i = 0; i < 8; i++) keep.push(new Uint8Array(256 * 1024 * 1024).fill(1)); return keep.length",
                Limits.DEFAULTS.withMemoryMb(64));

        errorOf(result, ErrorType.MEMORY_ERROR);
    }

    @Test
    void aPromiseThatCanNeverSettleEndsAtOnce() {
        ExecutionResult result = run("await new Promise(() => {})");

        assertThat(errorOf(result, ErrorType.RUNTIME_ERROR).message()).contains("never settled");
        assertThat(result.executionTime()).isLessThan(Limits.DEFAULT_TIMEOUT.dividedBy(3));
    }

    @Test
    void aPendingIntervalAfterReturnDoesNotDelayTheResult() {
        ExecutionResult result = run("setInterval(() => console.log('tick'), 60000); return 'done'");

        assertThat(result.value()).isEqualTo("\"done\"");
        assertThat(result.executionTime()).isLessThan(Limits.DEFAULT_TIMEOUT.dividedBy(3));
    }

    @Test
    void printingAHundredMegabytesEndsWithOutputLimitErrorWithoutBufferingIt() {
        long allocatedBefore = allocatedBytesOfAllThreads();

        ExecutionResult result = run("const line = 'x'.repeat(1023) + '\\n'; for (let i = 0; i < 100 * 1024; i++) console.log(line);");

        long allocated = allocatedBytesOfAllThreads() - allocatedBefore;
        errorOf(result, ErrorType.OUTPUT_LIMIT_ERROR);
        assertThat(result.console().length()).isLessThanOrEqualTo((int) Limits.DEFAULT_MAX_OUTPUT_BYTES);
        assertThat(allocated).as("bytes allocated by the JVM while the code printed 100 MB")
                .isLessThan(40L * 1024 * 1024);
    }

    private static long allocatedBytesOfAllThreads() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long total = 0;
        for (long allocated : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
            total += Math.max(0, allocated);
        }
        return total;
    }

    @Test
    void aResultOverItsLimitEndsWithOutputLimitError() {
        ExecutionResult result = run("return 'x'.repeat(2000)", Limits.DEFAULTS.withMaxResultBytes(1000));

        assertThat(errorOf(result, ErrorType.OUTPUT_LIMIT_ERROR).message()).contains("1000");
    }

    // --- errors

    @Test
    void aSyntaxErrorGivesItsLineAndColumn() {
        ExecutionError error = errorOf(run("const a = 1;\nlet b = ;\nreturn a"), ErrorType.SYNTAX_ERROR);

        assertThat(error.line()).isEqualTo(2);
        assertThat(error.column()).isEqualTo(9);
        assertThat(error.message()).contains("Expression expected").doesNotContain("data:");
    }

    @Test
    void aSyntaxErrorFoundByV8GivesItsLineAndColumn() {
        ExecutionError error = errorOf(run("let a = 1;\nlet a = 2;"), ErrorType.SYNTAX_ERROR);

        assertThat(error.message()).contains("already been declared").doesNotContain("data:");
        assertThat(error.line()).isEqualTo(2);
    }

    @Test
    void aThrownErrorGivesItsMessageStackAndLine() {
        ExecutionError error = errorOf(run("const a = 1;\nthrow new TypeError('bad input');"), ErrorType.RUNTIME_ERROR);

        assertThat(error.message()).isEqualTo("TypeError: bad input");
        assertThat(error.line()).isEqualTo(2);
        assertThat(error.column()).isEqualTo(7);
        assertThat(error.stack()).contains("TypeError: bad input").contains("code:2:7")
                .doesNotContain("data:").doesNotContain("runner").doesNotContain("file://");
    }

    @Test
    void aThrownNonErrorIsReported() {
        assertThat(errorOf(run("throw {code: 42}"), ErrorType.RUNTIME_ERROR).message()).contains("{\"code\":42}");
        assertThat(errorOf(run("throw 'plain'"), ErrorType.RUNTIME_ERROR).message()).contains("plain");
    }

    @Test
    void aRejectedPromiseIsARuntimeError() {
        ExecutionError error = errorOf(run("await Promise.reject(new RangeError('nope'))"), ErrorType.RUNTIME_ERROR);

        assertThat(error.message()).isEqualTo("RangeError: nope");
    }

    @Test
    void anErrorThrownLaterFromATimerIsARuntimeError() {
        ExecutionError error = errorOf(run("setTimeout(() => { throw new Error('late') }, 1); await new Promise(r => setTimeout(r, 50000))"),
                ErrorType.RUNTIME_ERROR);

        assertThat(error.message()).contains("late");
    }

    @Test
    void hostPathsNeverAppearInErrorsOrStacks() {
        String home = System.getProperty("user.home");
        for (String code : List.of("throw new Error('x')", "return Deno.readTextFileSync('/etc/shadow')",
                "null.f()", "await new Promise(() => {})", "return [() => 1]")) {
            ExecutionResult result = run(code);
            String text = result.error() + "\n" + result.error().stack() + "\n" + result.console();
            assertThat(text).as(code).doesNotContain(home + "/").doesNotContain(".cache/execache").doesNotContain("runner-");
        }
    }

    @Test
    void theCodeEndingTheProcessIsARuntimeError() {
        ExecutionError error = errorOf(run("Deno.exit(3)"), ErrorType.RUNTIME_ERROR);

        assertThat(error.message()).contains("exit code 3");
    }

    // --- serialization

    @Test
    void aFunctionInTheResultIsASerializationErrorNamingWhere() {
        ExecutionError error = errorOf(run("return {a: {b: [1, () => 2]}}"), ErrorType.SERIALIZATION_ERROR);

        assertThat(error.message()).contains("function").contains("result.a.b[1]");
    }

    @Test
    void aSymbolInTheResultIsASerializationError() {
        assertThat(errorOf(run("return {s: Symbol('x')}"), ErrorType.SERIALIZATION_ERROR).message())
                .contains("symbol").contains("result.s");
        assertThat(errorOf(run("return Symbol('x')"), ErrorType.SERIALIZATION_ERROR).message()).contains("symbol");
    }

    @Test
    void aBigIntInTheResultIsASerializationError() {
        assertThat(errorOf(run("return {n: 10n}"), ErrorType.SERIALIZATION_ERROR).message())
                .contains("BigInt").contains("result.n");
    }

    @Test
    void aCyclicResultIsASerializationError() {
        assertThat(errorOf(run("const a: any = {}; a.self = a; return a"), ErrorType.SERIALIZATION_ERROR).message())
                .contains("circular");
    }

    @Test
    void aFunctionReturnedAloneIsASerializationError() {
        assertThat(errorOf(run("return () => 1"), ErrorType.SERIALIZATION_ERROR).message()).contains("function");
    }

    @Test
    void datesAndNonFiniteNumbersFollowJsonStringify() {
        assertThat(run("return [new Date(0), NaN, Infinity]").value())
                .isEqualTo("[\"1970-01-01T00:00:00.000Z\",null,null]");
    }

    // --- the result channel

    @Test
    void aForgedResultMarkerIsConsoleOutputNotAResult() {
        ExecutionResult result = run("""
                const fake = 'a'.repeat(32);
                Deno.stdout.writeSync(new TextEncoder().encode(fake + 'v2\\n42' + fake + '\\n'));
                console.log('__RESULT__ {"value": 42}');
                const { writeSync } = await import('node:fs');
                writeSync(1, fake + 'v2\\n43' + fake);
                JSON.stringify = () => '"forged"';
                Uint8Array.prototype.set = function () { throw new Error('patched'); };
                Deno.stdout.writeSync = () => 0;
                return 'real';
                """);

        assertThat(result.value()).isEqualTo("\"real\"");
        assertThat(result.console()).contains("__RESULT__").contains("v2\n42");
    }

    @Test
    void aForgedErrorFrameIsConsoleOutput() {
        ExecutionResult result = run("console.log('0123456789abcdef0123456789abcdefe5\\n3:run'); return 1");

        assertThat(result.value()).isEqualTo("1");
        assertThat(result.console()).contains("e5");
    }

    // --- the result channel against a hostile environment

    /** Forges a value frame as soon as anyone hands it a buffer that starts with a secret. */
    private static final String SPECIES_THIEF = """
            let forged = false;
            class Thief extends Uint8Array {
              constructor(...args: any[]) {
                super(...args);
                if (!forged && args[0] instanceof ArrayBuffer) {
                  forged = true;
                  const bytes = new Uint8Array(args[0]);
                  let secret = '';
                  for (let i = 0; i < 32; i++) secret += String.fromCharCode(bytes[i]);
                  const payload = '"forged"';
                  Deno.stdout.writeSync(new TextEncoder().encode(secret + 'v' + payload.length + '\\n' + payload + secret));
                }
              }
            }
            """;

    @Test
    void aTypedArraySpeciesNeverReceivesTheFrame() {
        ExecutionResult bySpecies = run(SPECIES_THIEF + """
                Object.defineProperty(Uint8Array, Symbol.species, { value: Thief, configurable: true });
                return 'real';
                """);
        ExecutionResult byConstructor = run(SPECIES_THIEF + """
                Object.defineProperty(Uint8Array.prototype, 'constructor', { value: { [Symbol.species]: Thief } });
                return 'real';
                """);
        ExecutionResult onError = run(SPECIES_THIEF + """
                Object.defineProperty(Uint8Array, Symbol.species, { value: Thief, configurable: true });
                throw new Error('real failure');
                """);

        assertThat(bySpecies.value()).as("%s", bySpecies.error()).isEqualTo("\"real\"");
        assertThat(byConstructor.value()).as("%s", byConstructor.error()).isEqualTo("\"real\"");
        assertThat(errorOf(onError, ErrorType.RUNTIME_ERROR).message()).isEqualTo("Error: real failure");
    }

    @Test
    void aPromiseSpeciesOrThenSetBeforeTheCodeStartsIsNeverConsulted() {
        // the code closes its function and runs at the top of its module, before the runner
        // has called it
        ExecutionResult result = run("""
                return 'real';
                }
                Object.defineProperty(Promise, Symbol.species, {
                  get() { console.log('species consulted'); return Promise; }, configurable: true });
                const originalThen = Promise.prototype.then;
                Promise.prototype.then = function (...args: any[]) {
                  console.log('then consulted');
                  return originalThen.apply(this, args);
                };
                function unused() {
                """);

        assertThat(result.value()).as("%s", result.error()).isEqualTo("\"real\"");
        assertThat(result.console()).doesNotContain("species consulted");
    }

    @Test
    void prototypeSettersAndReplacedChecksDoNotChangeWhatTheRunnerReports() {
        ExecutionResult serialization = run("""
                Object.defineProperty(Object.prototype, 'message', {
                  set(value) {}, get() { return 'forged message'; }, configurable: true });
                return {a: () => 1};
                """);
        ExecutionResult thrown = run("""
                Object.defineProperty(Error, Symbol.hasInstance, { value: () => false });
                Object.prototype.isPrototypeOf = () => false;
                throw new TypeError('bad input');
                """);

        assertThat(errorOf(serialization, ErrorType.SERIALIZATION_ERROR).message()).contains("function").contains("result.a");
        assertThat(errorOf(thrown, ErrorType.RUNTIME_ERROR).message()).isEqualTo("TypeError: bad input");
    }

    @Test
    void replacedGlobalsChangeNothingOfTheResultOrItsFrame() {
        ExecutionResult result = run("""
                TextEncoder.prototype.encode = () => new Uint8Array([52, 50]);
                Uint8Array.prototype.subarray = function () { throw new Error('patched'); };
                Object.getPrototypeOf(Uint8Array.prototype).set = function () { throw new Error('patched'); };
                (globalThis as any).Uint8Array = function () { throw new Error('patched'); };
                Map.prototype.get = () => 'forged path';
                Array.isArray = () => { throw new Error('patched'); };
                Object.defineProperty = () => { throw new Error('patched'); };
                Function.prototype.call = function () { throw new Error('patched'); };
                Deno.exit = () => {};
                return {list: [1, 2], text: 'real'};
                """);

        assertThat(result.value()).as("%s", result.error()).isEqualTo("{\"list\":[1,2],\"text\":\"real\"}");
    }

    // --- host paths

    @Test
    void noRuntimeApiTellsTheCodeAHostPath() {
        ExecutionResult result = run("""
                const values: Record<string, string> = {};
                const grab = (name: string, f: () => unknown) => {
                  try { values[name] = String(f()); } catch (e) { values[name] = 'threw ' + (e as Error).message; }
                };
                const nodeProcess = (await import('node:process')).default;
                const path = await import('node:path');
                grab('Deno.cwd', () => Deno.cwd());
                grab('Deno.cwd transformed', () => Deno.cwd().replaceAll('/', '|'));
                grab('Deno.execPath', () => Deno.execPath());
                grab('Deno.mainModule', () => Deno.mainModule);
                grab('import.meta.url', () => import.meta.url);
                grab('import.meta.filename', () => import.meta.filename);
                grab('import.meta.dirname', () => import.meta.dirname);
                grab('import.meta.resolve', () => import.meta.resolve('./x.js'));
                grab('process.argv', () => JSON.stringify(nodeProcess.argv));
                grab('process.argv0', () => nodeProcess.argv0);
                grab('process.execPath', () => nodeProcess.execPath);
                grab('process.title', () => nodeProcess.title);
                grab('process.cwd', () => nodeProcess.cwd());
                grab('globalThis.process', () => JSON.stringify([process.argv, process.execPath]));
                grab('path.resolve', () => path.resolve('x'));
                grab('stack', () => new Error('x').stack);
                grab('realPath', () => Deno.realPathSync('.'));
                try { await caches.open('x'); values.caches = 'opened'; } catch (e) { values.caches = 'threw ' + (e as Error).message; }
                try { localStorage.setItem('k', 'v'); values.localStorage = 'set'; } catch (e) { values.localStorage = 'threw ' + (e as Error).message; }
                try { await import('./relative.js'); } catch (e) { values.relativeImport = 'threw ' + (e as Error).message; }
                return values;
                """);

        assertThat(result.isSuccess()).as("%s", result.error()).isTrue();
        String seen = result.value() + result.console();
        for (String hostPath : hostPaths()) {
            assertThat(seen).as("what the code saw, against %s", hostPath).doesNotContain(hostPath)
                    .doesNotContain(hostPath.replace("/", "|"));
        }
        assertThat(result.value()).contains("\"Deno.execPath\":\"deno\"").contains("\"process.cwd\":\"/\"")
                .contains("\"Deno.cwd\":\"/\"").contains("\"process.execPath\":\"deno\"");
    }

    @Test
    void aHeapSnapshotHoldsNeitherDenosPathNorTheHostsWorkingDirectory() {
        // the paths come in halves and are joined only after the snapshot, so that the
        // snapshot cannot find them in the context. (Deno itself keeps its DENO_DIR, under
        // the cache directory, in the heap: not checked here, see the README.)
        List<List<String>> halves = new ArrayList<>();
        for (String path : List.of(deno().toString(), System.getProperty("user.dir"))) {
            halves.add(List.of(path.substring(0, path.length() / 2), path.substring(path.length() / 2)));
        }

        ExecutionResult result = run("""
                const v8 = await import('node:v8');
                const chunks: string[] = [];
                for await (const chunk of v8.getHeapSnapshot()) {
                  chunks.push(typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk));
                }
                const snapshot = chunks.join('');
                return context.filter((pair: string[]) => snapshot.includes(pair[0] + pair[1]))
                    .map((pair: string[]) => pair[0] + pair[1]);
                """, halves);

        assertThat(result.value()).as("%s", result.error()).isEqualTo("[]");
    }

    /** Paths of this machine the code must never see: home, working directory, Deno, the caches. */
    private static List<String> hostPaths() {
        List<String> paths = new ArrayList<>(List.of(System.getProperty("user.home"), System.getProperty("user.dir"),
                deno().toString(), deno().getParent().toString(), DenoSandboxSettings.defaultCacheDirectory().toString(),
                System.getProperty("java.io.tmpdir"), "execache", "runner-", "deno-dir", "location_data"));
        paths.removeIf(path -> path.length() < 2);
        return paths;
    }

    // --- Deno's advice

    @Test
    void deniedAccessNamesExecachesOptionNotDenosFlags() {
        ExecutionError read = errorOf(run("return Deno.readTextFileSync('/etc/passwd')"), ErrorType.PERMISSION_ERROR);
        ExecutionError env = errorOf(run("return Deno.env.get('HOME')"), ErrorType.PERMISSION_ERROR);

        assertThat(read.message()).contains("/etc/passwd").contains("execache's --allow-read").doesNotContain("run again");
        assertThat(read.stack()).doesNotContain("run again");
        assertThat(env.message()).contains("env access").doesNotContain("--allow-env").doesNotContain("run again");
    }

    // --- reading through links

    @Test
    void aFileLinkLeadingOutOfTheAllowedPathIsRefused(@TempDir Path workspace, @TempDir Path elsewhere) throws IOException {
        Path secret = Files.writeString(elsewhere.resolve("secret.txt"), "the secret");
        Files.createSymbolicLink(workspace.resolve("innocent.txt"), secret);

        ExecutionResult result = execute(new ExecutionRequest("return Deno.readTextFileSync(context.path)",
                Map.of("path", workspace.resolve("innocent.txt").toString()), Set.of(), allowRead(workspace)));

        assertThat(errorOf(result, ErrorType.PERMISSION_ERROR).message()).contains("innocent.txt").contains("symbolic link");
        assertThat(result.value() + result.console()).doesNotContain("the secret");
    }

    @Test
    void aDirectoryLinkLeadingOutOfTheAllowedPathIsRefused(@TempDir Path workspace, @TempDir Path elsewhere) throws IOException {
        Files.writeString(elsewhere.resolve("secret.txt"), "the secret");
        Files.createDirectories(workspace.resolve("deep/er"));
        Files.createSymbolicLink(workspace.resolve("deep/er/door"), elsewhere);
        Files.createSymbolicLink(workspace.resolve("alias"), workspace.resolve("deep"));

        ExecutionResult result = execute(new ExecutionRequest("return Deno.readTextFileSync(context.path)",
                Map.of("path", workspace.resolve("alias/er/door/secret.txt").toString()), Set.of(), allowRead(workspace)));

        assertThat(errorOf(result, ErrorType.PERMISSION_ERROR).message()).contains("door");
        assertThat(result.value() + result.console()).doesNotContain("the secret");
    }

    @Test
    void linksThatStayInsideTheAllowedPathsAndALinkedRootCanBeRead(@TempDir Path directory) throws IOException {
        Path workspace = Files.createDirectories(directory.resolve("workspace"));
        Files.createDirectories(workspace.resolve("data"));
        Files.writeString(workspace.resolve("data/file.txt"), "inside");
        Files.createSymbolicLink(workspace.resolve("alias"), workspace.resolve("data"));
        Path linkedRoot = Files.createSymbolicLink(directory.resolve("root-link"), workspace);

        ExecutionResult result = execute(new ExecutionRequest(
                "return [Deno.readTextFileSync(context.viaAlias), Deno.readTextFileSync(context.real)]",
                Map.of("viaAlias", workspace.resolve("alias/file.txt").toString(),
                        "real", workspace.resolve("data/file.txt").toString()),
                Set.of(), allowRead(linkedRoot)));

        assertThat(result.value()).as("%s", result.error()).isEqualTo("[\"inside\",\"inside\"]");
    }

    @Test
    void aLinkIntoProcIsRefusedEvenInsideABroadAllowedPath(@TempDir Path workspace) throws IOException {
        Files.createSymbolicLink(workspace.resolve("me"), Path.of("/proc/self"));

        ExecutionResult result = execute(new ExecutionRequest("return Deno.readTextFileSync(context.path)",
                Map.of("path", workspace.resolve("me/cmdline").toString()), Set.of(), allowRead(workspace)));

        assertThat(errorOf(result, ErrorType.PERMISSION_ERROR).message()).contains("symbolic link");
    }

    @Test
    void relativePathsResolveInTheCallersDirectoryOnlyAsFarAsReadingIsAllowed(@TempDir Path directory)
            throws IOException {
        Path workspace = Files.createDirectories(directory.resolve("workspace"));
        Files.writeString(workspace.resolve("data.txt"), "relative content");
        String code = "return [Deno.readTextFileSync('data.txt'), Deno.cwd() === context.real]";
        Map<String, Object> context = Map.of("real", workspace.toRealPath().toString());

        ExecutionResult allowed = execute(new ExecutionRequest(code, context, Set.of(),
                allowRead(workspace).withWorkingDirectory(workspace.toString())));
        ExecutionResult notAllowed = execute(new ExecutionRequest("return Deno.readTextFileSync('data.txt')", null,
                Set.of(), Limits.DEFAULTS.withWorkingDirectory(workspace.toString())));
        ExecutionResult cwdNotAllowed = execute(new ExecutionRequest(
                "return [Deno.cwd(), (await import('node:process')).default.cwd()]", null,
                Set.of(), Limits.DEFAULTS.withWorkingDirectory(workspace.toString())));

        assertThat(allowed.value()).as("%s", allowed.error()).isEqualTo("[\"relative content\",true]");
        assertThat(errorOf(notAllowed, ErrorType.PERMISSION_ERROR).message()).contains("data.txt")
                .doesNotContain(workspace.toString());
        assertThat(cwdNotAllowed.value()).as("%s", cwdNotAllowed.error()).isEqualTo("[\"/\",\"/\"]");
    }

    private static Limits allowRead(Path... paths) {
        return Limits.DEFAULTS.withAllowRead(Stream.of(paths).map(Path::toString).toList());
    }

    // --- many runs

    @Test
    void sixteenConcurrentRunsAreIndependent(@TempDir Path cache) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(16);
        try (DenoSandbox sandbox = newSandbox(cache)) {
            List<Future<ExecutionResult>> results = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                int n = i;
                results.add(threads.submit(() -> sandbox.execute(ExecutionRequest.of(
                        "globalThis.mine = context.n; await new Promise(r => setTimeout(r, 20)); return globalThis.mine * 2",
                        Map.of("n", n)))));
            }
            for (int i = 0; i < 16; i++) {
                assertThat(results.get(i).get().value()).isEqualTo(Integer.toString(i * 2));
            }
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void nothingIsLeftBehindAfterTwoHundredRuns(@TempDir Path cache) throws Exception {
        DenoSandbox sandbox = newSandbox(cache);
        sandbox.execute(ExecutionRequest.of("return 1", null));
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        List<Path> tmpBefore = ours(tmp);
        List<Path> cacheBefore = list(cache);
        Limits shortTimeout = Limits.DEFAULTS.withTimeout(Duration.ofMillis(300));
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            List<Future<ExecutionResult>> results = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                int n = i;
                results.add(threads.submit(() -> {
                    if (n % 40 == 0) {
                        return sandbox.execute(new ExecutionRequest("while (true) {}", null, Set.of(), shortTimeout));
                    }
                    if (n % 40 == 1) {
                        return sandbox.execute(new ExecutionRequest(
                                "const k = []; while (true) k.push(new Uint8Array(64 * 1024 * 1024).fill(1));",
                                null, Set.of(), Limits.DEFAULTS.withMemoryMb(32)));
                    }
                    if (n % 40 == 2) {
                        return sandbox.execute(new ExecutionRequest(
                                "setInterval(() => {}, 1000); await new Promise(() => {})", null, Set.of(), shortTimeout));
                    }
                    if (n % 40 == 3) {
                        return sandbox.execute(ExecutionRequest.of("console.log('x'.repeat(4096).repeat(1024))", null));
                    }
                    return sandbox.execute(ExecutionRequest.of("console.log(context.n); return context.n", Map.of("n", n)));
                }));
            }
            for (Future<ExecutionResult> result : results) {
                assertThat(result.get().executionTime()).isPositive();
            }
        } finally {
            threads.shutdownNow();
        }

        assertThat(awaitProcessesOf(cache, waitingRunnersAllowed())).as("Deno processes while nothing runs")
                .hasSizeLessThanOrEqualTo(waitingRunnersAllowed());
        sandbox.close();
        assertThat(processesOf(cache)).as("Deno processes after close").isEmpty();
        assertThat(ours(tmp)).containsExactlyInAnyOrderElementsOf(tmpBefore);
        assertThat(list(cache)).as("the sandbox's own directory, Deno's included").containsExactlyInAnyOrderElementsOf(cacheBefore);
    }

    /** Entries of the shared temp directory (other programs use it meanwhile) that Deno could have made. */
    private static List<Path> ours(Path tmp) throws IOException {
        try (Stream<Path> paths = Files.list(tmp)) {
            return paths.filter(path -> path.getFileName().toString().toLowerCase(Locale.ROOT).contains("deno"))
                    .toList();
        }
    }

    private static List<Path> list(Path directory) throws IOException {
        try (Stream<Path> paths = Files.walk(directory)) {
            return paths.toList();
        }
    }
}
