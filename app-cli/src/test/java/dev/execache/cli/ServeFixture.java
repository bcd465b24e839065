package dev.execache.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.execache.cli.output.StoreDescription;
import dev.execache.cli.settings.ConfigFile;
import dev.execache.cli.settings.Settings;
import dev.execache.core.CachePolicy;
import dev.execache.core.CachedExecutor;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.MutableClock;
import dev.execache.core.MutableToolVersions;
import dev.execache.core.ScriptedSandbox;
import dev.execache.gateway.Json;
import dev.execache.gateway.ServeSettings;
import dev.execache.gateway.TestTools;
import dev.execache.store.memory.MemoryCacheStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The policy over the memory store and a scripted sandbox, as {@code serve} builds it, for
 * tests of the server's parts with app-cli's settings. The sandbox answers as the MCP server's
 * own tests' does ({@link TestTools#answer}).
 */
final class ServeFixture {
    static final String TWO = TestTools.TWO;
    static final String BOOM = TestTools.BOOM;
    static final String RANDOM = TestTools.RANDOM;
    static final Duration RAN_FOR = TestTools.RAN_FOR;

    final MutableClock clock = new MutableClock();
    final MemoryCacheStore store = new MemoryCacheStore(100, clock);
    final MutableToolVersions versions;
    final List<ExecutionRequest> requests = new CopyOnWriteArrayList<>();
    final ScriptedSandbox sandbox = new ScriptedSandbox(this::run);
    final Settings settings;
    final ServeSettings serveSettings;
    final CachedExecutor executor;

    ServeFixture(Path dir, Map<String, String> tools) {
        this.versions = new MutableToolVersions(tools);
        this.settings = Settings.resolve(new Settings.Flags(null, "memory", null, null, false, null, null, null,
                "10s", null, List.of(), List.of(), null), Map.of(), dir);
        ObjectNode described = Json.MAPPER.createObjectNode();
        StoreDescription.of(settings).putInto(described);
        this.serveSettings = new ServeSettings(settings.limits(), ConfigFile.DEFAULT_NAME, described);
        this.executor = CachedExecutor.builder(sandbox, store).toolVersions(versions).clock(clock).build();
    }

    private ExecutionResult run(ExecutionRequest request) {
        requests.add(request);
        return TestTools.answer(request);
    }
}
