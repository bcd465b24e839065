package dev.execache.cli.session;

import dev.execache.core.StoreGuard;
import dev.execache.cli.settings.Environment;
import dev.execache.cli.settings.Settings;
import dev.execache.core.CachedExecutor;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.Sandbox;
import dev.execache.core.spi.Telemetry;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.core.spi.ToolVersionSource;
import jakarta.inject.Inject;
import jakarta.inject.Provider;

/**
 * Everything one command uses, built from its settings by {@link AppModule}. The sandbox
 * starts only when code first runs, so commands that only read the store never need Deno.
 */
public final class Session implements AutoCloseable {
    private final Settings settings;
    private static final System.Logger LOG = System.getLogger("dev.execache.cli");

    private final CacheStore store;
    private final StoreGuard guard;
    private final LazySandbox sandbox;
    private final CachedExecutorFactory executors;
    private CachedExecutor executor;
    private final ToolVersionSource toolVersions;
    private final Resources resources;
    private final String versionScope;

    @Inject
    Session(Settings settings, CacheStore store, StoreGuard guard, Provider<Sandbox> sandboxes,
            CachedExecutorFactory executors, ToolVersionSource toolVersions, Resources resources) {
        this.settings = settings;
        this.guard = guard;
        this.resources = resources;
        this.store = store;
        this.toolVersions = toolVersions;
        this.sandbox = new LazySandbox(sandboxes);
        this.executors = executors;
        this.versionScope = executors.versionScope();
    }

    /** Whose last-seen tool versions this session's runs compare against (see {@link CachedExecutorFactory}). */
    public String versionScope() {
        return versionScope;
    }

    public Settings settings() {
        return settings;
    }

    /** The executor of this session's runs; built on first use, with no tools for code, unless {@link #buildExecutor} came first. */
    public synchronized CachedExecutor executor() {
        if (executor == null) {
            executor = executors.create(sandbox, CodeTools.NONE, Telemetry.NONE);
        }
        return executor;
    }

    /** As {@link #buildExecutor(CodeTools, Telemetry)}, its spans reported nowhere. */
    public CachedExecutor buildExecutor(CodeTools codeTools) {
        return buildExecutor(codeTools, Telemetry.NONE);
    }

    /**
     * Builds this session's executor with the tools its code may call and where its spans go; once, before
     * {@link #executor()} is first used: a second executor would hear every change of the session's tools again.
     */
    public synchronized CachedExecutor buildExecutor(CodeTools codeTools, Telemetry telemetry) {
        if (executor != null) {
            throw new IllegalStateException("this session's executor is already built");
        }
        executor = executors.create(sandbox, codeTools, telemetry);
        return executor;
    }

    public CacheStore store() {
        return store;
    }

    /** The guard of {@link #store()} the executor was built with: give it to every other face on the store. */
    public StoreGuard guard() {
        return guard;
    }

    public ToolVersionSource toolVersions() {
        return toolVersions;
    }

    /** The gateway's downstream servers for this command, started for it or kept running since an earlier one. */
    public ToolCatalog gatewayCatalog(Environment command) {
        return gatewayCatalog(command, false);
    }

    /** As {@link #gatewayCatalog(Environment)}; the servers' stderr on this command's when {@code logsHere}. */
    public ToolCatalog gatewayCatalog(Environment command, boolean logsHere) {
        return GatewayCatalog.open(settings, command, resources, logsHere);
    }

    /** Opens the store on a thread of its own now, where {@link SessionFactory#openWithStoreLater} left it closed. */
    public void openStoreSoon() {
        if (store instanceof OpeningStore opening) {
            opening.openInBackground();
        }
    }

    /** Starts the sandbox before the first run needs it, for a process that will run code. */
    public void startSandbox() {
        sandbox.start();
    }

    /**
     * A store that cannot write what it kept pending (a full disk) must not turn a run that
     * succeeded into a failure: its error is logged, never thrown.
     */
    @Override
    public void close() {
        try {
            sandbox.close();
        } finally {
            try {
                resources.release(store);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "cache store could not save its last counts and hit times on close"
                        + " (results are unaffected): " + rootMessage(e));
            }
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() == null ? e.getMessage() : root.getMessage();
    }
}
