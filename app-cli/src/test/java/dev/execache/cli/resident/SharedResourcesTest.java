package dev.execache.cli.resident;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.core.MutableClock;
import dev.execache.core.StoreGuard;
import dev.execache.core.ToolResult;
import dev.execache.core.spi.CacheStore;
import dev.execache.core.spi.CatalogTool;
import dev.execache.core.spi.ToolCatalog;
import dev.execache.store.memory.MemoryCacheStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Downstream servers kept between commands: shared by identity, stopped when idle, heard only while leased. */
class SharedResourcesTest {
    private final MutableClock clock = new MutableClock();
    private final SharedResources resources = new SharedResources(clock);
    private final List<FakeCatalog> started = new ArrayList<>();

    @AfterEach
    void tearDown() {
        resources.close();
    }

    private ToolCatalog lease(String identity) {
        return resources.catalog(identity, () -> {
            FakeCatalog catalog = new FakeCatalog();
            started.add(catalog);
            return catalog;
        });
    }

    /** Each command builds its own executor: on a kept store they share its one guard, so an outage is one warning. */
    @Test
    void commandsOnAKeptStoreShareItsOneGuard() {
        CacheStore store = resources.store("memory:10", null, () -> new MemoryCacheStore(10, clock));
        CacheStore again = resources.store("memory:10", null, () -> {
            throw new AssertionError("a kept store was opened again");
        });
        StoreGuard guard = resources.guard(store);

        assertThat(again).isSameAs(store);
        assertThat(resources.guard(again)).isSameAs(guard);
        assertThat(guard.store()).isSameAs(store);
        assertThat(resources.guard(new MemoryCacheStore(10, clock))).as("a store not kept").isNotSameAs(guard);
    }

    @Test
    void commandsThatNameTheSameServersShareOneStartAndClosingALeaseLeavesThemRunning() {
        lease("a").close();
        lease("a").close();
        lease("b").close();

        assertThat(started).hasSize(2);
        assertThat(started).allSatisfy(catalog -> assertThat(catalog.closed).isZero());
    }

    @Test
    void serversNoCommandUsedForTheIdlePeriodAreStoppedAndThoseInUseAreNot() {
        ToolCatalog held = lease("held");
        lease("idle").close();
        clock.advance(SharedResources.CATALOG_IDLE.plus(Duration.ofSeconds(1)));

        resources.stopIdleCatalogs();

        assertThat(started.get(0).closed).as("still leased").isZero();
        assertThat(started.get(1).closed).as("idle").isEqualTo(1);
        held.close();
        lease("idle").close();
        assertThat(started).as("an idle set stopped is started again when named").hasSize(3);
    }

    @Test
    void aLeaseAnswersAsTheServersDo() {
        try (ToolCatalog lease = lease("a")) {
            assertThat(lease.identities()).isEqualTo(Map.of("lab", "4f2a"));
            assertThat(lease.call("lab__get", Map.of()).json()).isEqualTo("{\"answered\":true}");
        }
    }

    @Test
    void aLeaseHearsOfChangedToolsOnlyUntilItIsClosed() {
        AtomicInteger heard = new AtomicInteger();
        ToolCatalog first = lease("a");
        first.addListener(tools -> heard.incrementAndGet());
        started.get(0).changed();
        first.close();
        started.get(0).changed();

        assertThat(heard).hasValue(1);
    }

    @Test
    void pastTheLimitTheLeastRecentlyUsedSetIsStopped() {
        for (int i = 0; i <= SharedResources.MAX_CATALOGS; i++) {
            lease("set " + i).close();
        }

        assertThat(started.get(0).closed).isEqualTo(1);
        assertThat(started.subList(1, started.size())).allSatisfy(catalog -> assertThat(catalog.closed).isZero());
    }

    private static final class FakeCatalog implements ToolCatalog {
        private final List<Listener> listeners = new ArrayList<>();
        int closed;

        void changed() {
            listeners.forEach(listener -> listener.toolsChanged(List.of()));
        }

        @Override
        public List<CatalogTool> tools() {
            return List.of();
        }

        @Override
        public ToolResult call(String tool, Map<String, Object> args) {
            return ToolResult.ok("{\"answered\":true}");
        }

        @Override
        public Map<String, String> identities() {
            return Map.of("lab", "4f2a");
        }

        @Override
        public void addListener(Listener listener) {
            listeners.add(listener);
        }

        @Override
        public void close() {
            closed++;
        }
    }
}
