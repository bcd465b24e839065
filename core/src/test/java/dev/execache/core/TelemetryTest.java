package dev.execache.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.spi.CodeToolCall;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.Sandbox;
import dev.execache.core.spi.Telemetry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * What the policy reports through the {@link Telemetry} port: a span for the lookup, one for the
 * sandbox's run, one per tool call code makes (under the run, though it arrives on another thread),
 * and every count. The telemetry is a recorder that names each span's parent.
 */
class TelemetryTest {
    private final MutableClock clock = new MutableClock();
    private final SimpleStore store = new SimpleStore(clock);
    private final Recorder telemetry = new Recorder();

    private final CodeTools tools = new CodeTools() {
        @Override
        public Map<String, List<String>> reachable() {
            return Map.of("lab", List.of("read"));
        }

        @Override
        public Set<String> names() {
            return Set.of("lab__read");
        }

        @Override
        public CodeToolCall call(String server, String tool, String argumentsJson, String agent, Freshness freshness) {
            return new CodeToolCall(server + "__" + tool, "1", ToolResult.ok("\"x\""), true, CacheStatus.MISS, 3);
        }
    };

    /** Calls lab.read from a thread of its own, as the bridge's reader does, when the code says so. */
    private final Sandbox sandbox = (request, runTools) -> {
        if (request.code().contains("lab.read")) {
            CompletableFuture.runAsync(() -> runTools.call("lab", "read", "{}")).join();
        }
        return ExecutionResult.success("1", "", Duration.ofMillis(5));
    };

    @Test
    void aMissIsLookedUpThenRunAndAHitIsOnlyLookedUp() {
        CachedExecutor executor = CachedExecutor.builder(sandbox, store).clock(clock).telemetry(telemetry).build();

        try (Telemetry.Span request = telemetry.start("request", Telemetry.Kind.SERVER, Map.of())) {
            executor.execute(ExecutionRequest.of("return 1", Map.of()));
            executor.execute(ExecutionRequest.of("return 1", Map.of()));
        }

        assertThat(telemetry.spans).containsExactly("cache lookup < request [execache.cache.result=miss]",
                "deno run < request", "cache lookup < request [execache.cache.result=hit]", "request");
        assertThat(telemetry.counts).containsEntry(Counter.HITS, 1L).containsEntry(Counter.MISSES, 1L)
                .containsEntry(Counter.CALLS, 2L);
    }

    @Test
    void aToolCallOfCodeIsASpanUnderItsRunThoughItArrivesOnAnotherThread() {
        CachedExecutor executor = CachedExecutor.builder(sandbox, store).clock(clock).codeTools(tools).telemetry(telemetry)
                .build();

        executor.execute(ExecutionRequest.of("await tools.lab.read()", Map.of()));

        assertThat(telemetry.spans).contains("execute_tool lab__read < deno run"
                + " [gen_ai.operation.name=execute_tool, gen_ai.tool.name=lab__read]");
    }

    /** Spans as "NAME < PARENT [attributes]", in the order they ended; a parent passed as fields is named by them. */
    private static final class Recorder implements Telemetry {
        final List<String> spans = new CopyOnWriteArrayList<>();
        final Map<Counter, Long> counts = new ConcurrentHashMap<>();
        private final ThreadLocal<Deque<String>> current = ThreadLocal.withInitial(ArrayDeque::new);

        @Override
        public Span start(String name, Kind kind, Map<String, String> parent) {
            Deque<String> stack = current.get();
            String parentName = !parent.isEmpty() ? parent.get(TRACEPARENT) : stack.peek();
            stack.push(name);
            List<String> attributes = new CopyOnWriteArrayList<>();
            return new Span() {
                @Override
                public Span set(String attribute, String value) {
                    if (value != null) {
                        attributes.add(attribute + "=" + value);
                    }
                    return this;
                }

                @Override
                public void close() {
                    stack.pop();
                    spans.add(name + (parentName == null ? "" : " < " + parentName)
                            + (attributes.isEmpty() ? "" : " " + attributes));
                }
            };
        }

        @Override
        public Map<String, String> current() {
            String name = current.get().peek();
            return name == null ? Map.of() : Map.of(TRACEPARENT, name);
        }

        @Override
        public void counted(String tool, Map<Counter, Long> deltas) {
            deltas.forEach((counter, delta) -> counts.merge(counter, delta, Long::sum));
        }
    }
}
