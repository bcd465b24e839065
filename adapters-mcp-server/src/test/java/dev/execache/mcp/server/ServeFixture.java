package dev.execache.mcp.server;

import dev.execache.core.CachedExecutor;
import dev.execache.core.Limits;
import dev.execache.core.MutableClock;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ScriptedSandbox;
import dev.execache.gateway.Json;
import dev.execache.gateway.ServeSettings;
import dev.execache.gateway.TestTools;
import dev.execache.store.memory.MemoryCacheStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * The policy over the memory store and a scripted sandbox, as {@code serve --store memory
 * --timeout 10s} builds it in {@code dir}, for tests of a transport in front of a real gateway.
 * The sandbox answers as {@link TestTools#answer}.
 */
public final class ServeFixture {
    public final MutableClock clock = new MutableClock();
    public final MemoryCacheStore store = new MemoryCacheStore(100, clock);
    public final MutableToolVersions versions;
    public final ServeSettings serveSettings;
    public final CachedExecutor executor;

    public ServeFixture(Path dir, Map<String, String> tools) {
        this.versions = new MutableToolVersions(tools);
        Limits limits = Limits.DEFAULTS.withTimeout(Duration.ofSeconds(10))
                .withWorkingDirectory(dir.toAbsolutePath().normalize().toString());
        this.serveSettings = new ServeSettings(limits, "execache.yaml", Json.MAPPER.createObjectNode().put("store", "memory"));
        this.executor = CachedExecutor.builder(new ScriptedSandbox(TestTools::answer), store).toolVersions(versions)
                .clock(clock).build();
    }
}
