package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.execache.cli.session.ReopeningStore;
import dev.execache.core.MutableClock;
import dev.execache.core.spi.CacheStore;
import dev.execache.store.memory.MemoryCacheStore;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ReopeningStoreTest {
    private final MutableClock clock = new MutableClock();
    private final AtomicBoolean serverUp = new AtomicBoolean();
    private final AtomicInteger attempts = new AtomicInteger();

    private CacheStore open() {
        attempts.incrementAndGet();
        if (!serverUp.get()) {
            throw new IllegalStateException("cannot reach Redis at redis://cache:6379");
        }
        return new MemoryCacheStore(10, clock);
    }

    @Test
    void failsWithTheReasonUntilTheStoreOpensThenUsesIt() {
        ReopeningStore store = new ReopeningStore(this::open, "cannot use the redis store: down", clock, Duration.ofSeconds(10));

        assertThatThrownBy(store::size).hasMessage("cannot use the redis store: down");
        serverUp.set(true);
        assertThatThrownBy(store::size).as("no new attempt before the interval").isInstanceOf(IllegalStateException.class);
        assertThat(attempts).hasValue(0);

        clock.advance(Duration.ofSeconds(10));

        assertThat(store.size()).isZero();
        assertThat(store.size()).isZero();
        assertThat(attempts).hasValue(1);
    }

    @Test
    void aStoreThatIsNeverOpenedAlwaysFailsWithItsReason() {
        ReopeningStore store = ReopeningStore.never("caching is off");

        assertThatThrownBy(store::size).hasMessage("caching is off");
    }

    @Test
    void aFailedAttemptReportsTheNewReasonAndWaitsAgain() {
        ReopeningStore store = new ReopeningStore(this::open, "first reason", clock, Duration.ofSeconds(10));
        clock.advance(Duration.ofSeconds(10));

        assertThatThrownBy(store::size).hasMessage("cannot reach Redis at redis://cache:6379");
        assertThatThrownBy(store::size).isInstanceOf(IllegalStateException.class);
        assertThat(attempts).hasValue(1);
    }
}
