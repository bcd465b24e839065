package dev.execache.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** The budget of one wait for Redis counts the time this process could run, on a clock the test moves. */
class BudgetTest {
    private static final Duration BUDGET = Duration.ofSeconds(2);
    private long now = 1_000_000_000L;

    /** Waits slice after slice, each ending {@code late} after it should have; returns the total wait allowed. */
    private Duration waitUntilSpent(Duration late) {
        Budget budget = new Budget(BUDGET, () -> now);
        long start = now;
        for (long wait = budget.nextWait(); wait > 0; wait = budget.nextWait()) {
            assertThat(wait).isLessThanOrEqualTo(Budget.SLICE.toNanos());
            now += wait + late.toNanos();
        }
        return Duration.ofNanos(now - start);
    }

    @Test
    void aProcessThatWakesOnTimeWaitsOneBudget() {
        assertThat(waitUntilSpent(Duration.ZERO)).isEqualTo(BUDGET);
    }

    @Test
    void ordinaryTimerSlackIsNotAStall() {
        Duration waited = waitUntilSpent(Budget.SLACK);

        assertThat(waited).isLessThan(BUDGET.plus(Budget.SLICE).plus(Budget.SLACK));
    }

    @Test
    void aStalledProcessGetsTheTimeItLostBack() {
        // each 50 ms slice ends 50 ms late: half the time the process could not run
        Duration waited = waitUntilSpent(Duration.ofMillis(50));

        assertThat(waited).isGreaterThan(BUDGET.multipliedBy(3).dividedBy(2))
                .isLessThanOrEqualTo(BUDGET.multipliedBy(2).plus(Budget.SLICE));
    }

    /**
     * A process that has just started on a busy machine loads and compiles the code that reads the
     * reply: the CPU time it used is given back, as the time it could not run is. One that waited idle
     * and on time had no such time: one budget.
     */
    @Test
    void aProcessBusyWithItsOwnWorkGetsThatTimeBackAsOneThatCouldNotRunDoes() {
        long[] cpu = {0};
        Budget busy = new Budget(BUDGET, () -> now, () -> cpu[0]);
        long start = now;
        for (long wait = busy.nextWait(); wait > 0; wait = busy.nextWait()) {
            now += wait;
            cpu[0] += wait * 3 / 4;
        }
        // three quarters of each slice but the first given back, up to four budgets in all
        assertThat(Duration.ofNanos(now - start)).isGreaterThan(BUDGET.multipliedBy(3))
                .isLessThanOrEqualTo(BUDGET.multipliedBy(Budget.MAX_STRETCH));

        Budget starved = new Budget(BUDGET, () -> now, () -> cpu[0]);
        Duration late = Duration.ofMillis(50);
        for (long wait = starved.nextWait(); wait > 0; wait = starved.nextWait()) {
            now += wait + late.toNanos();
            cpu[0] += Duration.ofMillis(1).toNanos();
        }
        assertThat(starved.stalled()).isGreaterThan(BUDGET.dividedBy(2));

        Budget idle = new Budget(BUDGET, () -> now, () -> cpu[0]);
        start = now;
        for (long wait = idle.nextWait(); wait > 0; wait = idle.nextWait()) {
            now += wait;
        }
        assertThat(idle.stalled()).isZero();
        assertThat(Duration.ofNanos(now - start)).isEqualTo(BUDGET);
    }

    @Test
    void noStallStretchesTheWaitPastFourBudgets() {
        Duration waited = waitUntilSpent(Duration.ofSeconds(1));

        assertThat(waited).isLessThanOrEqualTo(Budget.longest(BUDGET).plus(Duration.ofSeconds(1)).plus(Budget.SLICE));
        assertThat(Budget.longest(BUDGET)).isEqualTo(BUDGET.multipliedBy(Budget.MAX_STRETCH));
    }

    @Test
    void aReplyThatCameIsReturnedAndOneThatNeverComesTimesOut() throws Exception {
        assertThat(Budget.await(CompletableFuture.completedFuture("ok"), BUDGET)).isEqualTo("ok");
        assertThatThrownBy(() -> Budget.await(new CompletableFuture<>(), Duration.ofMillis(120)))
                .isInstanceOf(TimeoutException.class);
    }
}
