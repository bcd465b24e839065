package dev.execache.mcp.server.http;

import dev.execache.mcp.server.http.FigureHistory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.mcp.server.http.FigureHistory.Step;
import dev.execache.mcp.server.http.FigureHistory.Totals;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The dashboard's history: steps as differences of the store's totals, a fixed number kept. */
class FigureHistoryTest {
    private static final Instant START = Instant.parse("2026-11-24T12:00:00Z");

    private static Totals hits(long hits, long misses) {
        return new Totals(hits, misses, 0, 0, hits * 1_000_000);
    }

    @Test
    void aStepIsWhatTheTotalsGainedOverIt() {
        FigureHistory history = new FigureHistory(Duration.ofSeconds(10), 5);

        history.observe(START, hits(100, 40));
        history.observe(START.plusSeconds(4), hits(103, 40));
        history.observe(START.plusSeconds(10), hits(107, 41));
        Step since = history.sinceLast(START.plusSeconds(12), hits(109, 41));

        List<Step> steps = history.steps();
        assertThat(steps).singleElement().satisfies(step -> {
            assertThat(step.start()).isEqualTo(START);
            assertThat(step.seconds()).isEqualTo(10.0);
            assertThat(step.counted()).isEqualTo(new Totals(7, 1, 0, 0, 7_000_000));
        });
        assertThat(since.counted().hits()).isEqualTo(2);
        assertThat(since.seconds()).isEqualTo(2.0);
    }

    @Test
    void atMostCapacityStepsAreKeptTheNewest() {
        FigureHistory history = new FigureHistory(Duration.ofSeconds(10), 3);

        for (int i = 0; i <= 100; i++) {
            history.observe(START.plusSeconds(10L * i), hits(i * i, 0));
        }

        assertThat(history.steps()).hasSize(3).extracting(step -> step.counted().hits())
                .containsExactly(98L * 98 - 97 * 97, 99L * 99 - 98 * 98, 100L * 100 - 99 * 99);
    }

    @Test
    void countersSetToZeroStartAfreshInsteadOfCountingBackwards() {
        FigureHistory history = new FigureHistory(Duration.ofSeconds(10), 5);

        history.observe(START, hits(100, 40));
        history.observe(START.plusSeconds(10), hits(2, 1));
        history.observe(START.plusSeconds(20), hits(5, 1));

        assertThat(history.steps()).singleElement().satisfies(step -> {
            assertThat(step.start()).isEqualTo(START.plusSeconds(10));
            assertThat(step.counted().hits()).isEqualTo(3);
        });
        assertThat(history.sinceLast(START.plusSeconds(25), hits(1, 0))).isNull();
    }
}
