package dev.execache.cli.session;

import dev.execache.core.StoreGuard;
import dev.execache.cli.output.StoreDescription;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Sandbox;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.sandbox.DenoSandbox;
import dev.execache.sandbox.DenoSandboxSettings;
import java.nio.file.Path;
import java.util.function.Supplier;

/**
 * Where a command gets its store and sandbox: opened for it and closed after it in a one-shot
 * process ({@link #PER_COMMAND}), or kept open between commands by the resident server.
 */
public interface Resources {
    Resources PER_COMMAND = new Resources() {
        @Override
        public CacheStore store(String identity, Path file, Supplier<CacheStore> open) {
            return open.get();
        }

        @Override
        public Sandbox sandbox(DenoSandboxSettings settings) {
            return new DenoSandbox(settings);
        }

        @Override
        public void release(CacheStore store) {
            store.close();
        }
    };

    /**
     * The store a command uses.
     *
     * @param identity what the store is (kind, place, bound): commands that name the same one may share it
     * @param file the store's file, if it has one: a file removed or replaced since is opened again
     */
    CacheStore store(String identity, Path file, Supplier<CacheStore> open);

    Sandbox sandbox(DenoSandboxSettings settings);

    /**
     * The guard of a store {@link #store} gave: one per store, shared by every face built on it
     * (a command's executor, serve's tool cache), so that an outage is one warning however many use it.
     * A process that keeps stores between commands keeps their guards with them.
     */
    default StoreGuard guard(CacheStore store) {
        return StoreGuard.of(store);
    }

    /**
     * The gateway's downstream servers for a command; the command closes what it gets when it is
     * done. A one-shot process starts them for the command; the resident server keeps them
     * running between commands that name the same servers (same commands, arguments, environment
     * and directory), so a command finds their tools known.
     *
     * @param identity what the servers are: commands that give equal ones may share them
     */
    default ToolCatalog catalog(Object identity, Supplier<ToolCatalog> start) {
        return start.get();
    }

    /**
     * The store the command got from {@link #store} is {@code description}: a process that keeps
     * stores open publishes their counters (in JMX).
     */
    default void opened(CacheStore store, StoreDescription description) {
    }

    /** The command is done with its store. */
    void release(CacheStore store);
}
