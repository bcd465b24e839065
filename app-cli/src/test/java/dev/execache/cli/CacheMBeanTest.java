package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.cli.output.CacheMBean;
import dev.execache.cli.output.StoreDescription;
import dev.execache.cli.resident.SharedResources;
import dev.execache.cli.settings.StoreKind;
import dev.execache.core.CacheStats;
import dev.execache.core.spi.Counter;
import dev.execache.store.memory.MemoryCacheStore;
import dev.execache.store.sqlite.SqliteCacheStore;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A long-running process's counters, read as a JMX client reads them: through the platform MBean server. */
class CacheMBeanTest {
    private final MBeanServer server = ManagementFactory.getPlatformMBeanServer();

    @TempDir
    Path dir;

    @Test
    void theCountersAreAttributesOfAnMBeanNamedForTheStore() throws Exception {
        MemoryCacheStore store = new MemoryCacheStore();
        store.counters().increment("read", Map.of(Counter.HITS, 3L, Counter.MISSES, 1L, Counter.FAILED, 1L,
                Counter.UNCACHEABLE_NONDETERMINISTIC, 2L, Counter.SAVED_NANOS, 2_000_000_000L, Counter.KEPT_OUT_BYTES, 900L));
        StoreDescription description = new StoreDescription(StoreKind.MEMORY, "this process only", 100, 1024L,
                Duration.ofMinutes(5));
        ObjectName name = new ObjectName("dev.execache:type=Cache,store=memory,location=\"this process only\"");

        try (AutoCloseable registration = CacheMBean.register(description, () -> CacheStats.of(store))) {
            assertThat(server.getAttribute(name, "Hits")).isEqualTo(3L);
            assertThat(server.getAttribute(name, "Misses")).isEqualTo(1L);
            assertThat(server.getAttribute(name, "Failed")).isEqualTo(1L);
            assertThat(server.getAttribute(name, "Uncacheable")).isEqualTo(2L);
            assertThat(server.getAttribute(name, "SavedMillis")).isEqualTo(2000L);
            assertThat(server.getAttribute(name, "KeptOutBytes")).isEqualTo(900L);
            assertThat(server.getAttribute(name, "HitRate")).isEqualTo(0.75);
            assertThat(server.getAttribute(name, "Store")).isEqualTo("memory");
            assertThat(server.getAttribute(name, "MaxEntries")).isEqualTo(100);
            assertThat(Instant.parse((String) server.getAttribute(name, "CountingSince"))).isBeforeOrEqualTo(Instant.now());
            TabularData byReason = (TabularData) server.getAttribute(name, "UncacheableByReason");
            CompositeData nondeterministic = byReason.get(new Object[] {"nondeterministic"});
            assertThat(nondeterministic.get("value")).isEqualTo(2L);

            store.counters().increment(Counter.HITS, 1);
            assertThat(server.getAttribute(name, "Hits")).as("read anew each time").isEqualTo(4L);

            try (AutoCloseable again = CacheMBean.register(description, () -> CacheStats.of(new MemoryCacheStore()))) {
                assertThat(server.getAttribute(name, "Hits")).as("the first registration stays").isEqualTo(4L);
            }
            assertThat(server.isRegistered(name)).isTrue();
        }
        assertThat(server.isRegistered(name)).isFalse();
    }

    @Test
    void theResidentServerPublishesTheStoresItKeepsOpenUntilItCloses() throws Exception {
        Path file = dir.resolve("cache.db");
        SharedResources resources = new SharedResources();
        var store = resources.store("sqlite " + file, file, () -> new SqliteCacheStore(file, 10, Clock.systemUTC()));
        store.counters().increment(Counter.MISSES, 2);
        StoreDescription description = new StoreDescription(StoreKind.SQLITE, file.toString(), 10, null, Duration.ofMinutes(5));

        resources.opened(store, description);
        resources.opened(store, description);

        ObjectName name = CacheMBean.name(description);
        assertThat(name.toString()).startsWith("dev.execache:type=Cache,store=sqlite,location=");
        assertThat(server.getAttribute(name, "Misses")).isEqualTo(2L);
        assertThat(server.getAttribute(name, "Entries")).isEqualTo(0L);

        resources.close();

        assertThat(server.isRegistered(name)).isFalse();
    }
}
