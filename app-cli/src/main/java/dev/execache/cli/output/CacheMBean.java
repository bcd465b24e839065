package dev.execache.cli.output;

import dev.execache.core.CacheStats;
import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.function.Supplier;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * A store's counters in the platform MBean server, so that jconsole, VisualVM or a JMX exporter
 * read them from a long-running process. Every attribute read asks the store (fleet-wide
 * figures on Redis).
 */
public final class CacheMBean implements CacheCountersMXBean {
    private static final System.Logger LOG = System.getLogger("dev.execache.cli");

    private final StoreDescription store;
    private final Supplier<CacheStats> stats;

    private CacheMBean(StoreDescription store, Supplier<CacheStats> stats) {
        this.store = store;
        this.stats = stats;
    }

    /** {@code dev.execache:type=Cache,store=sqlite,location="/home/me/.cache/execache/cache.db"}. */
    public static ObjectName name(StoreDescription store) {
        try {
            return new ObjectName("dev.execache:type=Cache,store=" + store.kind() + ",location="
                    + ObjectName.quote(store.location()));
        } catch (JMException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Registers the counters of {@code store}; closing the result unregisters them. When the
     * name is taken already (another user of the same store in this process), that one stays and
     * closing does nothing.
     */
    public static AutoCloseable register(StoreDescription store, Supplier<CacheStats> stats) {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = name(store);
        try {
            server.registerMBean(new CacheMBean(store, stats), name);
        } catch (InstanceAlreadyExistsException e) {
            return () -> { };
        } catch (JMException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "the counters are not in JMX: " + e.getMessage());
            return () -> { };
        }
        return () -> {
            try {
                server.unregisterMBean(name);
            } catch (InstanceNotFoundException e) {
                // unregistered already
            }
        };
    }

    @Override public String getStore() { return store.kind().toString(); }
    @Override public String getLocation() { return store.location(); }
    @Override public int getMaxEntries() { return store.maxEntries(); }
    @Override public long getDefaultTtlSeconds() { return store.defaultTtl().toSeconds(); }

    @Override
    public String getCountingSince() {
        CacheStats now = stats.get();
        return now.countingSince() == null ? "" : now.countingSince().toString();
    }

    @Override public long getHits() { return stats.get().hits(); }
    @Override public long getMisses() { return stats.get().misses(); }
    @Override public long getShared() { return stats.get().shared(); }
    @Override public long getFailed() { return stats.get().failed(); }
    @Override public long getBypassed() { return stats.get().bypassed(); }
    @Override public long getUncacheable() { return stats.get().uncacheableTotal(); }
    @Override public Map<String, Long> getUncacheableByReason() { return stats.get().uncacheable(); }
    @Override public double getHitRate() { return stats.get().hitRate(); }
    @Override public long getSavedMillis() { return stats.get().totalSaved().toMillis(); }
    @Override public long getEvictions() { return stats.get().evictions(); }
    @Override public long getExpirations() { return stats.get().expirations(); }
    @Override public long getInvalidations() { return stats.get().invalidations(); }
    @Override public long getStoreErrors() { return stats.get().storeErrors(); }
    @Override public long getDamaged() { return stats.get().damaged(); }
    @Override public long getEntries() { return stats.get().entries(); }
    @Override public long getEstimatedBytes() { return stats.get().estimatedBytes(); }
    @Override public long getKeptOutBytes() { return stats.get().keptOutBytes(); }
}
