package dev.execache.gateway;

import dev.execache.core.CachePolicy;
import dev.execache.core.CachedExecutor;
import dev.execache.core.CanonicalJson;
import dev.execache.core.ErrorType;
import dev.execache.core.ExecutionError;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.Limits;
import dev.execache.core.MutableClock;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ScriptedSandbox;
import dev.execache.core.SimpleStore;
import dev.execache.core.StoreGuard;
import dev.execache.core.spi.ToolCatalog;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * The tools {@code serve} offers over a scripted sandbox and core's map store, for tests of the
 * server's own parts (what the sandbox or the store does is tested in their modules); runs are
 * limited to 10 s. Unless given a script, the sandbox answers by {@link #answer}.
 */
public final class TestTools {
    public static final String TWO = "return 1 + 1";
    public static final String BOOM = "throw new Error(\"boom\")";
    /** As the sandbox reports code that used Math.random. */
    public static final String RANDOM = "return Math.random() < 2";
    public static final Duration RAN_FOR = Duration.ofMillis(40);

    public final MutableToolVersions versions;
    public final List<ExecutionRequest> requests = new CopyOnWriteArrayList<>();
    public final ScriptedSandbox sandbox;
    public final ServeTools tools;

    /** With the tool versions github v1 and jira j1. */
    public TestTools() {
        this(TestTools::answer);
    }

    public TestTools(Function<ExecutionRequest, ExecutionResult> script) {
        this(script, null);
    }

    /** With the gateway tools of {@code catalog}'s servers (named in {@code servers}), cached in a store of their own. */
    public TestTools(ToolCatalog catalog, List<String> servers) {
        this(TestTools::answer, catalog == null ? null : Gateway.builder(catalog,
                StoreGuard.of(new SimpleStore(new MutableClock())), new MutableToolVersions(),
                new GatewayPolicy(servers.stream()
                        .map(name -> new GatewayPolicy.Server(name, true, true)).toList(), List.of()),
                                CachePolicy.DEFAULTS).clock(new MutableClock()).build());
    }

    private TestTools(Function<ExecutionRequest, ExecutionResult> script, Gateway gateway) {
        MutableClock clock = new MutableClock();
        this.versions = new MutableToolVersions(Map.of("github", "v1", "jira", "j1"));
        this.sandbox = new ScriptedSandbox(request -> {
            requests.add(request);
            return script.apply(request);
        });
        CachedExecutor executor = CachedExecutor.builder(sandbox, new SimpleStore(clock)).toolVersions(versions)
                .clock(clock).build();
        Limits limits = new Limits(Duration.ofSeconds(10), Limits.DEFAULT_MEMORY_MB, List.of(),
                Limits.DEFAULT_MAX_OUTPUT_BYTES, Limits.DEFAULT_MAX_RESULT_BYTES, "");
        this.tools = ServeTools.builder(executor, new ServeSettings(limits, "execache.yaml",
                Json.MAPPER.createObjectNode().put("store", "memory"))).gateway(gateway).build();
    }

    /**
     * The scripted sandbox's answer to three programs: {@link #TWO}, {@link #BOOM}, {@link #RANDOM};
     * anything else returns its context.
     */
    public static ExecutionResult answer(ExecutionRequest request) {
        return switch (request.code()) {
            case TWO -> ExecutionResult.success("2", "", RAN_FOR);
            case RANDOM -> ExecutionResult.success("true", "", RAN_FOR).withNondeterminism(Set.of("Math.random"));
            case BOOM -> ExecutionResult.failure(new ExecutionError(ErrorType.RUNTIME_ERROR, "boom",
                    "Error: boom\n    at <code>:1:7", 1, 7), "about to fail\n", RAN_FOR);
            default -> ExecutionResult.success(CanonicalJson.write(request.context(), "context"), "echoed\n", RAN_FOR);
        };
    }

    public static ServeTools over(Function<ExecutionRequest, ExecutionResult> script) {
        return new TestTools(script).tools;
    }
}
