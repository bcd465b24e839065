package dev.execache.mcp.server;

import dev.execache.core.CachePolicy;
import dev.execache.core.CachedExecutor;
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
 * server's own parts (what the sandbox or the store does is tested in their modules).
 */
final class TestTools {
    private TestTools() {
    }

    static ServeTools over(Function<ExecutionRequest, ExecutionResult> script) {
        MutableClock clock = new MutableClock();
        CachedExecutor executor = new CachedExecutor(new ScriptedSandbox(script), new SimpleStore(clock),
                new MutableToolVersions(Map.of()), CachePolicy.DEFAULTS, clock);
        return new ServeTools(executor, new ServeSettings(Limits.DEFAULTS, "execache.yaml",
                Json.MAPPER.createObjectNode().put("kind", "memory")));
    }

    /** On loopback, any free port, no token; at most {@code atOnce} requests answered at once. */
    static HttpServeSettings http(int atOnce, Duration idleTimeout, Duration drainLimit) {
        return new HttpServeSettings(InetAddress.getLoopbackAddress(), 0, List.of(), Set.of(),
                HttpServeSettings.DEFAULT_MAX_BODY_BYTES, atOnce, idleTimeout, drainLimit);
    }
}
