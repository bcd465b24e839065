package dev.execache.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ListChangeNoticesTest {
    private final ManualTimer timer = new ManualTimer();
    private final AtomicInteger notices = new AtomicInteger();
    private final ListChangeNotices changes = new ListChangeNotices(notices::incrementAndGet, Duration.ofMillis(150),
            Duration.ofSeconds(1), () -> timer.now, timer);

    @Test
    void aBurstOfChangesIsOneNoticeWhenItIsOver() {
        for (int tool = 0; tool < 83; tool++) {
            changes.changed();
            timer.advance(Duration.ofMillis(5));
        }
        assertThat(notices.get()).isZero();

        timer.advance(Duration.ofMillis(150));

        assertThat(notices.get()).isEqualTo(1);
    }

    @Test
    void changesWithoutPauseAreHeardByTheMaximumDelayAndAgainAfterIt() {
        for (int step = 0; step < 10; step++) {
            changes.changed();
            timer.advance(Duration.ofMillis(100));
        }
        assertThat(notices.get()).isEqualTo(1);

        for (int step = 0; step < 5; step++) {
            changes.changed();
            timer.advance(Duration.ofMillis(100));
        }
        timer.advance(Duration.ofMillis(150));

        assertThat(notices.get()).isEqualTo(2);
    }

    @Test
    void twoBurstsApartAreTwoNotices() {
        changes.changed();
        changes.changed();
        timer.advance(Duration.ofSeconds(2));
        changes.changed();
        timer.advance(Duration.ofSeconds(2));

        assertThat(notices.get()).isEqualTo(2);
    }

    @Test
    void noChangeNoNotice() {
        timer.advance(Duration.ofSeconds(5));

        assertThat(notices.get()).isZero();
    }
}
