package dev.execache.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.execache.cli.settings.Durations;
import java.time.Duration;
import java.util.Locale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class DurationsTest {
    @Test
    void aDurationReadsInTheUnitItIsClosestTo() {
        assertThat(Durations.human(Duration.ofNanos(850_400))).isEqualTo("850 µs");
        assertThat(Durations.human(Duration.ofNanos(12_349_999))).isEqualTo("12.3 ms");
        assertThat(Durations.human(Duration.ofNanos(12_350_000))).isEqualTo("12.4 ms");
        assertThat(Durations.human(Duration.ofMillis(4_560))).isEqualTo("4.56 s");
        assertThat(Durations.human(Duration.ofMillis(4_005))).isEqualTo("4.01 s");
        assertThat(Durations.human(Duration.ofSeconds(450))).isEqualTo("7.5 min");
        assertThat(Durations.human(Duration.ofNanos(999_960_000))).isEqualTo("1000.0 ms");
    }

    /** Rounded as {@code String.format} rounds (half up), at every scale and on each boundary. */
    @Test
    void roundsAsTheFormatterDoes() {
        SplittableRandom random = new SplittableRandom(29);
        for (int i = 0; i < 20_000; i++) {
            long nanos = switch (i % 4) {
                case 0 -> random.nextLong(1_000_000);
                case 1 -> random.nextLong(1_000_000, 1_000_000_000);
                case 2 -> random.nextLong(1_000_000_000, 60_000_000_000L);
                default -> random.nextLong(60_000_000_000L, 86_400_000_000_000L);
            };
            assertThat(Durations.human(Duration.ofNanos(nanos))).as("%d ns", nanos).isEqualTo(formatted(nanos));
        }
        for (long boundary : new long[] {1_250_000, 1_050_000, 2_005_000_000L, 90_000_000_000L, 63_000_000_000L}) {
            assertThat(Durations.human(Duration.ofNanos(boundary))).isEqualTo(formatted(boundary));
        }
    }

    private static String formatted(long nanos) {
        if (nanos < 1_000_000) {
            return String.format(Locale.ROOT, "%d µs", nanos / 1_000);
        }
        if (nanos < 1_000_000_000) {
            return String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
        }
        if (nanos < 60_000_000_000L) {
            return String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
        }
        return String.format(Locale.ROOT, "%.1f min", nanos / 6e10);
    }
}
