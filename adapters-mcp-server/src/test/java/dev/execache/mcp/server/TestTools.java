package dev.execache.mcp.server;

import dev.execache.core.CachePolicy;
import dev.execache.core.CachedExecutor;
import dev.execache.core.CanonicalJson;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.Limits;
import dev.execache.core.MutableClock;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ScriptedSandbox;
import dev.execache.core.SimpleStore;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The tools {@code serve} offers over a scripted sandbox and core's map store, for tests of the
 * server's own parts (what the sandbox or the store does is tested in their modules). Unless
 * given a script, the sandbox understands {@code return 1 + 1}, and returns the context of
 * anything else.
 */
final class TestTools {
    static final String TWO = "return 1 + 1";

    final ScriptedSandbox sandbox;
    final ServeTools tools;

    TestTools() {
        this(request -> TWO.equals(request.code()) ? ExecutionResult.success("2", "", Duration.ofMillis(40))
                : ExecutionResult.success(CanonicalJson.write(request.context(), "context"), "", Duration.ofMillis(40)));
    }

    TestTools(Function<ExecutionRequest, ExecutionResult> script) {
        MutableClock clock = new MutableClock();
        this.sandbox = new ScriptedSandbox(script);
        CachedExecutor executor = CachedExecutor.builder(sandbox, new SimpleStore(clock)).toolVersions(new MutableToolVersions(Map.of("github", "v1"))).clock(clock).build();
        this.tools = new ServeTools(executor, new ServeSettings(Limits.DEFAULTS, "execache.yaml",
                Json.MAPPER.createObjectNode().put("kind", "memory")));
    }

    static ServeTools over(Function<ExecutionRequest, ExecutionResult> script) {
        return new TestTools(script).tools;
    }

    /** On loopback, any free port, no token; at most {@code atOnce} requests answered at once. */
    static HttpServeSettings http(int atOnce, Duration idleTimeout, Duration drainLimit) {
        return new HttpServeSettings(InetAddress.getLoopbackAddress(), 0, List.of(), Set.of(),
                HttpServeSettings.DEFAULT_MAX_BODY_BYTES, atOnce, idleTimeout, drainLimit);
    }
}
