package dev.execache.core;

import dev.execache.core.spi.Telemetry;
import dev.execache.core.spi.ToolVersionSource;
import java.time.Clock;
import java.util.Map;
import java.util.Objects;

/**
 * What both faces of the policy ({@link CachedExecutor}, {@link CachedTool}) are built with, set the
 * same way on both builders: the store, tool versions, time and telemetry. Every setting is checked
 * when it is set, and none can change once the face is built.
 *
 * @param <B> the face's own builder, returned by every setting so that the face's settings follow
 */
abstract class FaceBuilder<B extends FaceBuilder<B>> {
    private final StoreGuard store;
    private ToolVersionSource toolVersions = Map::of;
    private Clock clock = Clock.systemUTC();
    private Ticker ticker = Ticker.SYSTEM;
    private Telemetry telemetry = Telemetry.NONE;

    FaceBuilder(StoreGuard store) {
        this.store = Objects.requireNonNull(store, "store must not be null");
    }

    abstract B self();

    /** Where tool versions come from (default: none known); a change removes the entries made with the tool's old version. */
    public B toolVersions(ToolVersionSource source) {
        this.toolVersions = Objects.requireNonNull(source, "toolVersions must not be null");
        return self();
    }

    /** The clock times of day are read from: creation, age, expiry (default: the system's, UTC). */
    public B clock(Clock newClock) {
        this.clock = Objects.requireNonNull(newClock, "clock must not be null");
        return self();
    }

    /** Measures how long a run or call took and how much a hit saved (default: {@link System#nanoTime()}). */
    public B ticker(Ticker newTicker) {
        this.ticker = Objects.requireNonNull(newTicker, "ticker must not be null");
        return self();
    }

    /** Where the face's spans (lookup, flight wait, its runs or calls) and counts are reported (default: nowhere). */
    public B telemetry(Telemetry reportTo) {
        this.telemetry = Objects.requireNonNull(reportTo, "telemetry must not be null");
        return self();
    }

    /** The face's own loop: its view of the store (the guard's outage, this face's telemetry), clock and ticker. */
    PolicyLoop loop() {
        return new PolicyLoop(store.forFace(telemetry), clock, ticker);
    }

    ToolVersionSource toolVersions() {
        return toolVersions;
    }
}
