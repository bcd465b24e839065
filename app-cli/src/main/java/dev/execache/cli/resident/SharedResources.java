package dev.execache.cli.resident;

import dev.execache.cli.output.CacheMBean;
import dev.execache.cli.output.StoreDescription;
import dev.execache.cli.session.Resources;
import dev.execache.cli.settings.Redaction;
import dev.execache.core.CacheStats;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.Sandbox;
import dev.execache.core.spi.SandboxTools;
import dev.execache.sandbox.DenoSandbox;
import dev.execache.sandbox.DenoSandboxSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The resident server's stores and sandboxes, open between commands: a command that finds its
 * store open and a warm pool of Deno runners waiting pays for neither.
 */
public final class SharedResources implements Resources {
    /** Runners started ahead of time for the commands, unless EXECACHE_WARM_POOL asks for more. */
    static final int WARM_POOL = 2;
    /** Sandboxes kept with a warm pool (one per set of limits); commands with more kinds of limits start cold. */
    static final int MAX_SANDBOXES = 4;

    private record OpenStore(CacheStore store, Object fileKey) {
    }

    private final Map<String, OpenStore> stores = new LinkedHashMap<>();
    /** The JMX registration of each kept store's counters, by the store's identity. */
    private final Map<String, AutoCloseable> published = new LinkedHashMap<>();
    private final Map<DenoSandboxSettings, DenoSandbox> sandboxes = new LinkedHashMap<>();
    private boolean closed;

    @Override
    public CacheStore store(String identity, Path file, Supplier<CacheStore> open) {
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the server is stopping");
            }
            OpenStore found = stores.get(identity);
            // A file removed or replaced since it was opened is opened again, as a one-shot command would.
            if (found != null && file != null && !Objects.equals(found.fileKey(), fileKey(file))) {
                stores.remove(identity);
                unpublish(identity);
                found.store().close();
                found = null;
            }
            if (found == null) {
                CacheStore store = open.get();
                found = new OpenStore(store, file == null ? null : fileKey(file));
                stores.put(identity, found);
            }
            return found.store();
        }
    }

    private static Object fileKey(Path file) {
        try {
            Object key = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
            return key == null ? "no file key" : key;
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    public synchronized void opened(CacheStore store, StoreDescription description) {
        for (var open : stores.entrySet()) {
            if (open.getValue().store() == store && !published.containsKey(open.getKey())) {
                published.put(open.getKey(), CacheMBean.register(description, () -> CacheStats.of(store)));
            }
        }
    }

    private void unpublish(String identity) {
        AutoCloseable registration = published.remove(identity);
        if (registration != null) {
            try {
                registration.close();
            } catch (Exception e) {
                // the server goes on; JMX shows what it last had
            }
        }
    }

    @Override
    public synchronized void release(CacheStore store) {
        for (OpenStore open : stores.values()) {
            if (open.store() == store) {
                return;
            }
        }
        store.close();
    }

    @Override
    public Sandbox sandbox(DenoSandboxSettings settings) {
        DenoSandboxSettings pooled = settings.toBuilder()
                .warmPoolSize(Math.max(settings.warmPoolSize(), WARM_POOL)).build();
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the server is stopping");
            }
            DenoSandbox sandbox = sandboxes.get(pooled);
            if (sandbox == null) {
                if (sandboxes.size() >= MAX_SANDBOXES) {
                    return new DenoSandbox(settings);
                }
                sandbox = new DenoSandbox(pooled);
                sandboxes.put(pooled, sandbox);
            }
            return new KeptOpen(sandbox);
        }
    }

    /** One line for each open store and sandbox, for {@code execache server status}. */
    synchronized List<String> describe() {
        List<String> lines = new ArrayList<>();
        for (var store : stores.entrySet()) {
            CacheStore open = store.getValue().store();
            String counters;
            try {
                var counted = open.counters();
                counters = counted.getOrDefault(Counter.HITS, 0L) + " hits, " + counted.getOrDefault(Counter.MISSES, 0L)
                        + " misses, " + open.size() + " entries";
            } catch (RuntimeException e) {
                counters = "unreadable: " + e.getMessage();
            }
            lines.add("store   " + Redaction.redactUrl(store.getKey()) + ": " + counters);
        }
        for (DenoSandboxSettings settings : sandboxes.keySet()) {
            lines.add("pool    " + settings.warmPoolSize() + " warm Deno runners (memory " + settings.warmPoolLimits().memoryMb()
                    + " MB, timeout " + settings.warmPoolLimits().timeout().toMillis() + " ms)");
        }
        if (lines.isEmpty()) {
            lines.add("store   none open yet");
        }
        return lines;
    }

    public synchronized void close() {
        closed = true;
        for (DenoSandbox sandbox : sandboxes.values()) {
            try {
                sandbox.close();
            } catch (RuntimeException e) {
                // the server is ending: the other resources still close
            }
        }
        for (OpenStore open : stores.values()) {
            try {
                open.store().close();
            } catch (RuntimeException e) {
                // as above
            }
        }
        sandboxes.clear();
        new ArrayList<>(published.keySet()).forEach(this::unpublish);
        stores.clear();
    }

    /** A shared sandbox a command uses and does not close. */
    private record KeptOpen(Sandbox sandbox) implements Sandbox {
        @Override
        public ExecutionResult execute(ExecutionRequest request, SandboxTools tools) {
            return sandbox.execute(request, tools);
        }

        @Override
        public void close() {
        }
    }
}
