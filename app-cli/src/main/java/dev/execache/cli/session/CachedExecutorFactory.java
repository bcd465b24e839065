package dev.execache.cli.session;

import dev.execache.core.StoreGuard;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Settings;
import dev.execache.core.CachedExecutor;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.Sandbox;
import dev.execache.core.spi.Telemetry;
import dev.execache.core.spi.ToolVersionSource;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;

/** Builds the policy around a sandbox, with the session's store, tool versions and clock. */
final class CachedExecutorFactory {
    private final StoreGuard store;
    private final ToolVersionSource toolVersions;
    private final Settings settings;
    private final Clock clock;
    private final String versionScope;

    @Inject
    CachedExecutorFactory(StoreGuard store, ToolVersionSource toolVersions, Settings settings, Clock clock,
            Environment environment) {
        this.store = store;
        this.toolVersions = toolVersions;
        this.settings = settings;
        this.clock = clock;
        this.versionScope = versionScope(settings, environment);
    }

    CachedExecutor create(Sandbox sandbox, CodeTools codeTools, Telemetry telemetry) {
        return CachedExecutor.builder(sandbox, store).toolVersions(toolVersions).cachePolicy(settings.policy()).clock(clock)
                .versionScope(versionScope).codeTools(codeTools).telemetry(telemetry).build();
    }

    /**
     * Whose last-seen tool versions a run compares against: the config file's (its real path),
     * else the working directory's. Projects that share a cache file then never invalidate each
     * other's results by using different versions of a tool.
     */
    String versionScope() {
        return versionScope;
    }

    private static String versionScope(Settings settings, Environment environment) {
        Path where = settings.configPath() != null ? settings.configPath() : environment.workingDir();
        try {
            return where.toRealPath().toString();
        } catch (IOException | SecurityException e) {
            return where.toAbsolutePath().normalize().toString();
        }
    }
}
