package dev.execache.cli.resident;

import dev.execache.core.StoreGuard;
import dev.execache.cli.output.CacheMBean;
import dev.execache.cli.output.StoreDescription;
import dev.execache.cli.session.Resources;
import dev.execache.cli.settings.Redaction;
import dev.execache.core.CacheStats;
import dev.execache.core.ExecutionRequest;
import dev.execache.core.ExecutionResult;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.Counter;
import dev.execache.core.spi.Sandbox;
import dev.execache.core.spi.CodeTools;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.sandbox.DenoSandbox;
import dev.execache.sandbox.DenoSandboxSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The resident server's stores and sandboxes, open between commands: a command that finds its
 * store open and a warm pool of Deno runners waiting pays for neither.
 */
public final class SharedResources implements Resources {
    /** Runners started ahead of time for the commands, unless EXECACHE_WARM_POOL asks for more. */
    static final int WARM_POOL = 2;
    /** Sandboxes kept with a warm pool (one per set of limits); commands with more kinds of limits start cold. */
    static final int MAX_SANDBOXES = 4;

    /** Downstream servers kept running this long after the last command that used them. */
    static final Duration CATALOG_IDLE = Duration.ofMinutes(5);
    /** Sets of downstream servers kept running at once; one more stops the one used least recently. */
    static final int MAX_CATALOGS = 4;

    /** A kept store with its one guard: every command on it shares the store's outage. */
    private record OpenStore(CacheStore store, StoreGuard guard, Object fileKey) {
    }

    private final Map<String, OpenStore> stores = new LinkedHashMap<>();
    /** The JMX registration of each kept store's counters, by the store's identity. */
    private final Map<String, AutoCloseable> published = new LinkedHashMap<>();
    private final Map<DenoSandboxSettings, DenoSandbox> sandboxes = new LinkedHashMap<>();
    /** Kept downstream servers by identity, least recently used first. */
    private final LinkedHashMap<Object, KeptCatalog> catalogs = new LinkedHashMap<>(16, 0.75f, true);
    private final Clock clock;
    private final ScheduledExecutorService sweeper = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "execache-catalog-sweeper");
        thread.setDaemon(true);
        return thread;
    });
    private boolean closed;

    public SharedResources() {
        this(Clock.systemUTC());
    }

    SharedResources(Clock clock) {
        this.clock = clock;
        sweeper.scheduleWithFixedDelay(this::stopIdleCatalogs, 1, 1, TimeUnit.MINUTES);
    }

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
                found = new OpenStore(store, StoreGuard.of(store), file == null ? null : fileKey(file));
                stores.put(identity, found);
            }
            return found.store();
        }
    }

    @Override
    public synchronized StoreGuard guard(CacheStore store) {
        for (OpenStore open : stores.values()) {
            if (open.store() == store) {
                return open.guard();
            }
        }
        return StoreGuard.of(store);
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

    @Override
    public ToolCatalog catalog(Object identity, Supplier<ToolCatalog> start) {
        KeptCatalog kept;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the server is stopping");
            }
            kept = catalogs.get(identity);
            if (kept == null) {
                kept = new KeptCatalog(start.get(), clock);
                catalogs.put(identity, kept);
                if (catalogs.size() > MAX_CATALOGS) {
                    Iterator<KeptCatalog> eldest = catalogs.values().iterator();
                    eldest.next().stop();
                    eldest.remove();
                }
            }
            kept.lastUsed = clock.instant();
        }
        return kept.lease();
    }

    /** Stops the downstream servers no command has used for {@link #CATALOG_IDLE}. */
    synchronized void stopIdleCatalogs() {
        Instant idleSince = clock.instant().minus(CATALOG_IDLE);
        for (Iterator<KeptCatalog> kept = catalogs.values().iterator(); kept.hasNext(); ) {
            KeptCatalog catalog = kept.next();
            if (catalog.leases.get() == 0 && catalog.lastUsed.isBefore(idleSince)) {
                catalog.stop();
                kept.remove();
            }
        }
    }

    /** One line for each open store and sandbox, for {@code execache server status}. */
    synchronized List<String> describe() {
        List<String> lines = new ArrayList<>();
        for (var store : stores.entrySet()) {
            CacheStore open = store.getValue().store();
            String counters;
            try {
                var counted = open.counters().totals();
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
        for (KeptCatalog kept : catalogs.values()) {
            lines.add("servers " + kept.catalog.tools().stream().map(CatalogTool::server).distinct().sorted()
                    .collect(Collectors.joining(", ")) + ": " + kept.catalog.tools().size() + " tools, last used "
                    + kept.lastUsed);
        }
        if (lines.isEmpty()) {
            lines.add("store   none open yet");
        }
        return lines;
    }

    public synchronized void close() {
        closed = true;
        sweeper.shutdownNow();
        catalogs.values().forEach(KeptCatalog::stop);
        catalogs.clear();
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

    /**
     * Downstream servers kept running between commands. Each command gets a lease: what it adds as
     * a listener is heard only while it holds the lease, and closing the lease leaves the servers
     * running.
     */
    private static final class KeptCatalog {
        final ToolCatalog catalog;
        final List<ToolCatalog.Listener> listeners = new CopyOnWriteArrayList<>();
        final AtomicInteger leases = new AtomicInteger();
        final Clock clock;
        volatile Instant lastUsed = Instant.EPOCH;

        KeptCatalog(ToolCatalog catalog, Clock clock) {
            this.catalog = catalog;
            this.clock = clock;
            catalog.addListener(tools -> listeners.forEach(listener -> listener.toolsChanged(tools)));
        }

        ToolCatalog lease() {
            leases.incrementAndGet();
            return new ToolCatalog() {
                private final List<Listener> own = new CopyOnWriteArrayList<>();
                private final AtomicBoolean closed = new AtomicBoolean();

                @Override
                public List<CatalogTool> tools() {
                    return catalog.tools();
                }

                @Override
                public ToolResult call(String tool, Map<String, Object> args) {
                    return catalog.call(tool, args);
                }

                @Override
                public Map<String, String> identities() {
                    return catalog.identities();
                }

                @Override
                public List<ServerStatus> servers() {
                    return catalog.servers();
                }

                @Override
                public void awaitStart(String server) throws InterruptedException {
                    catalog.awaitStart(server);
                }

                @Override
                public void addListener(Listener listener) {
                    own.add(listener);
                    listeners.add(listener);
                }

                @Override
                public void close() {
                    if (closed.compareAndSet(false, true)) {
                        listeners.removeAll(own);
                        lastUsed = clock.instant();
                        leases.decrementAndGet();
                    }
                }
            };
        }

        void stop() {
            try {
                catalog.close();
            } catch (RuntimeException e) {
                // the servers are being stopped anyway; the others still stop
            }
        }
    }

    /** A shared sandbox a command uses and does not close. */
    private record KeptOpen(Sandbox sandbox) implements Sandbox {
        @Override
        public ExecutionResult execute(ExecutionRequest request, CodeTools tools) {
            return sandbox.execute(request, tools);
        }

        @Override
        public void close() {
        }
    }
}
