package dev.execache.cli;

import dev.execache.core.CacheStore;
import dev.execache.core.CachedExecutor;
import dev.execache.core.Sandbox;
import dev.execache.core.ToolVersionSource;
import jakarta.inject.Inject;
import java.time.Clock;

/** Builds the policy around a sandbox, with the session's store, tool versions and clock. */
final class CachedExecutorFactory {
    private final CacheStore store;
    private final ToolVersionSource toolVersions;
    private final Settings settings;
    private final Clock clock;

    @Inject
    CachedExecutorFactory(CacheStore store, ToolVersionSource toolVersions, Settings settings, Clock clock) {
        this.store = store;
        this.toolVersions = toolVersions;
        this.settings = settings;
        this.clock = clock;
    }

    CachedExecutor create(Sandbox sandbox) {
        return new CachedExecutor(sandbox, store, toolVersions, settings.policy(), clock);
    }
}
